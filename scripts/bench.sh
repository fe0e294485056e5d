#!/usr/bin/env bash
# `make bench`: builds the release server, the ceiling server and the rmcp
# peer (bench/rmcp-peer, its own package and target directory), then runs
# scripts/bench.py (bounded: a few seconds per scenario, under 6 minutes of
# measuring) and writes .local/bench/results.md (bench/results.md, the
# committed figures, with BENCH_UPDATE=1). Loopback only, on free ports.
# BENCH_ONLY=peers measures the ceiling and the rmcp peer alone (see bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."
# wrk (the load generator) and zip: installed here only when running as
# root (a CI machine); otherwise say how to get them.
for tool in wrk zip; do
  if ! command -v "$tool" >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
      echo "installing $tool ..." >&2
      apt-get install -y "$tool" >/dev/null
    else
      echo "make bench needs $tool: sudo apt-get install $tool (Debian, Ubuntu) or brew install $tool (macOS)" >&2
      exit 1
    fi
  fi
done
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
