#!/usr/bin/env bash
# `make profile`: instruction counts per request under callgrind — this
# server's `tools/call emails_get` beside the bare-SDK peer's `GetItem`
# (scripts/profile.py). Builds both release binaries with their symbols
# (`--profile profiling`: release, symbols kept) and starts the
# local database when none answers.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "make profile needs valgrind: sudo apt-get install valgrind" >&2; exit 1; }
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
. scripts/lib.sh
trap stop_db EXIT
ensure_db
cargo build --profile profiling --bin kobana-inbox-mcp --example ceiling --example sdk_peer
# PROFILE_BASELINE=<rev>: the baseline `BENCH_BASELINE=<rev> make bench` built and kept.
if [ -n "${PROFILE_BASELINE:-}" ]; then
  rev=$(git rev-parse --short "$PROFILE_BASELINE")
  export PROFILE_BASELINE_BIN="$target/bench-baseline/$rev/kobana-inbox-mcp"
  [ -x "$PROFILE_BASELINE_BIN" ] || { echo "make profile: run BENCH_BASELINE=$rev make bench first (it builds $PROFILE_BASELINE_BIN)" >&2; exit 1; }
fi
CARGO_TARGET_DIR="$target" python3 scripts/profile.py
