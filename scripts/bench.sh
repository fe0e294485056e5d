#!/usr/bin/env bash
# `make bench`: builds the release server, the ceiling server and the rmcp
# peer (bench/rmcp-peer, its own package and target directory), then runs
# scripts/bench.py (bounded: a few seconds per scenario, under 6 minutes of
# measuring) and writes bench/results.md. Loopback only.
# BENCH_ONLY=peers measures the ceiling and the rmcp peer alone (see bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "installing wrk (the load generator) ..." >&2; apt-get install -y wrk >/dev/null; }
command -v zip >/dev/null || apt-get install -y zip >/dev/null
target="${CARGO_TARGET_DIR:-target}"
CARGO_TARGET_DIR="$target/rmcp-peer" cargo build --release --manifest-path bench/rmcp-peer/Cargo.toml
if [ "${BENCH_ONLY:-}" = peers ]; then
  cargo build --release --example ceiling
  exec python3 scripts/bench.py
fi
. scripts/lib.sh
trap stop_db EXIT
ensure_db
cargo build --release --bin kobana-inbox-mcp --example ceiling
python3 scripts/bench.py
