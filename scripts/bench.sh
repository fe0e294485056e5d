#!/usr/bin/env bash
# `make bench`: builds the release server and the ceiling server, then runs
# scripts/bench.py (bounded: a few seconds per scenario, under 5 minutes of
# measuring) and writes bench/results.md. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "installing wrk (the load generator) ..." >&2; apt-get install -y wrk >/dev/null; }
command -v zip >/dev/null || apt-get install -y zip >/dev/null
. scripts/lib.sh
trap stop_db EXIT
ensure_db
cargo build --release --bin kobana-inbox-mcp --example ceiling
python3 scripts/bench.py
