#!/usr/bin/env bash
# `make test`: start the local database if needed, run every test against it
# (cargo tests, then the SDK interop tests of scripts/interop.sh),
# stop it again if this script started it.
set -euo pipefail
cd "$(dirname "$0")/.."

export DYNAMODB_PORT="${DYNAMODB_PORT:-8000}"
export DYNAMODB_ENDPOINT="${DYNAMODB_ENDPOINT:-http://127.0.0.1:$DYNAMODB_PORT}"

started_db=0
if ! (exec 3<>"/dev/tcp/127.0.0.1/$DYNAMODB_PORT") 2>/dev/null; then
  scripts/db.sh start
  started_db=1
fi
# `if`, not `[ ] &&`: the trap's last status would otherwise become the exit
# status of the script (1 whenever the database was already running).
cleanup() { if [ "$started_db" = 1 ]; then scripts/db.sh stop; fi; }
trap cleanup EXIT

cargo test --all-targets "$@"

# Interop with the official MCP SDK clients (Python, TypeScript), against the
# server started as `make run` starts it, on the database started above.
cargo build --quiet --bin kobana-inbox-mcp
scripts/interop.sh
