#!/usr/bin/env bash
# Installs deployment and test tools on first use (into the per-user cache,
# linked under .local/) and prints the directory to put on PATH.
#   scripts/tools.sh lint    cfn-lint and the SAM CLI
#   scripts/tools.sh workflow check-jsonschema and zizmor (the deploy workflow)
#   scripts/tools.sh build   cargo-lambda (with zig, for arm64 cross-builds)
#   scripts/tools.sh api     openapi-spec-validator and schemathesis (the OpenAPI checks)
#   scripts/tools.sh security checkov (security lint of template.yaml)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/cache.sh
# Each kind has an environment of its own (its pins must not move another's
# dependencies), kept in the per-user cache (scripts/cache.sh) and linked here.
case "${1:-lint}" in
  lint) wanted=(cfn-lint aws-sam-cli); link=.local/tools ;;
  workflow) wanted=(check-jsonschema zizmor); link=.local/tools-workflow ;;
  build) wanted=(cargo-lambda ziglang); link=.local/tools-build ;;
  api) wanted=(openapi-spec-validator schemathesis); link=.local/tools-api ;;
  security) wanted=(checkov); link=.local/tools-checkov ;;
  *) echo "usage: $0 lint|workflow|build|api|security" >&2; exit 2 ;;
esac
pins=()
for w in "${wanted[@]}"; do pins+=("$(grep -i "^$w==" scripts/tools-requirements.txt)"); done
cached_venv "$link" "tools-$1" "${pins[@]}"
echo "$PWD/$link/bin"
