#!/usr/bin/env bash
# Validates the OpenAPI 3.1 document of /api/v1 (as the server generates it)
# with openapi-spec-validator (pinned in scripts/tools-requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(scripts/tools.sh api)
mkdir -p .local
. scripts/lib.sh
build_server
"$(bin_path)" openapi >.local/openapi.json
"$BIN/openapi-spec-validator" .local/openapi.json
