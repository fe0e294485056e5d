#!/usr/bin/env bash
# Installs deployment tools into .local/tools on first use and prints the
# directory to put on PATH.
#   scripts/tools.sh lint    cfn-lint and the SAM CLI
#   scripts/tools.sh build   cargo-lambda (with zig, for arm64 cross-builds)
#   scripts/tools.sh api     openapi-spec-validator and schemathesis (the OpenAPI checks)
#   scripts/tools.sh security checkov (security lint of template.yaml)
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS=.local/tools
case "${1:-lint}" in
  lint) wanted=(cfn-lint aws-sam-cli); check=(cfn-lint sam) ;;
  build) wanted=(cargo-lambda ziglang); check=(cargo-lambda) ;;
  # A venv of its own: its pins must not move the deployment tools' dependencies.
  api) wanted=(openapi-spec-validator schemathesis); check=(openapi-spec-validator st); TOOLS=.local/tools-api ;;
  security) wanted=(checkov); check=(checkov); TOOLS=.local/tools-checkov ;;
  *) echo "usage: $0 lint|build|api|security" >&2; exit 2 ;;
esac
missing=0
for b in "${check[@]}"; do [ -x "$TOOLS/bin/$b" ] || missing=1; done
if [ "$missing" = 1 ]; then
  echo "installing ${wanted[*]} into $TOOLS ..." >&2
  [ -x "$TOOLS/bin/pip" ] || python3 -m venv "$TOOLS"
  pins=()
  for w in "${wanted[@]}"; do pins+=("$(grep -i "^$w==" scripts/tools-requirements.txt)"); done
  "$TOOLS/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}" >&2
fi
echo "$PWD/$TOOLS/bin"
