#!/usr/bin/env bash
# Validates the OpenAPI 3.1 document of /api/v1 (as the server generates it)
# with openapi-spec-validator (pinned in scripts/tools-requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(scripts/tools.sh api)
mkdir -p .local
cargo build --quiet --bin kobana-inbox-mcp
./target/debug/kobana-inbox-mcp openapi >.local/openapi.json
"$BIN/openapi-spec-validator" .local/openapi.json
