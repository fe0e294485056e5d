#!/usr/bin/env bash
# `make bench`: builds the release server and the ceiling server, then runs
# scripts/bench.py (bounded: a few seconds per scenario, under 5 minutes of
# measuring) and writes bench/results.md. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "installing wrk (the load generator) ..." >&2; apt-get install -y wrk >/dev/null; }
command -v zip >/dev/null || apt-get install -y zip >/dev/null
export DYNAMODB_PORT="${DYNAMODB_PORT:-8000}"
export DYNAMODB_ENDPOINT="http://127.0.0.1:$DYNAMODB_PORT"
started_db=0
if ! (exec 3<>"/dev/tcp/127.0.0.1/$DYNAMODB_PORT") 2>/dev/null; then
  scripts/db.sh start
  started_db=1
fi
cleanup() { if [ "$started_db" = 1 ]; then scripts/db.sh stop; fi; }
trap cleanup EXIT
cargo build --release --bin kobana-inbox-mcp --example ceiling
python3 scripts/bench.py
