#!/usr/bin/env bash
# The release binaries with the `dev` feature (what local runs use) and
# without it (what the Lambda artefacts are: scripts/build.sh), side by side
# in one run; writes bench/artefacts.md, which `make bench` includes in
# bench/results.md. Two release builds: minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
size() { stat -c %s "$target/release/$1"; }
cargo build -p kobana-inbox-mcp --release --quiet --bins
with_mcp=$(size kobana-inbox-mcp) with_worker=$(size worker)
cargo build -p kobana-inbox-mcp --release --quiet --no-default-features --bins
without_mcp=$(size kobana-inbox-mcp) without_worker=$(size worker)
{
  echo "| Release binary (x86_64, this machine) | with dev (local builds) | without dev (Lambda artefacts) | saved |"
  echo "|---|---:|---:|---:|"
  for pair in "kobana-inbox-mcp $with_mcp $without_mcp" "worker $with_worker $without_worker"; do
    set -- $pair
    echo "| \`$1\` | $2 B | $3 B | $(( $2 - $3 )) B |"
  done
} >bench/artefacts.md
cat bench/artefacts.md
