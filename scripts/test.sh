#!/usr/bin/env bash
# `make test`: start the local database if needed, run every test against it
# (cargo tests, the SDK interop tests of scripts/interop.sh, then the
# property-based API tests of scripts/api-check.sh), stop it again if this
# script started it.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib.sh
trap stop_db EXIT
ensure_db
scripts/db.sh install

cargo test --all-targets "$@"

# Interop with the official MCP SDK clients (Python, TypeScript), against the
# server started as `make run` starts it, on the database started above.
cargo build --quiet --bin kobana-inbox-mcp
scripts/interop.sh

# Property-based tests of /api/v1 from its OpenAPI document (schemathesis).
scripts/api-check.sh
