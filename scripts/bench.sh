#!/usr/bin/env bash
# `make bench`: builds the release server, the ceiling server, the bare-SDK
# peer (examples/) and the rmcp peer (bench/rmcp-peer, its own package and
# target directory), then runs scripts/bench.py (bounded: a few seconds per
# scenario, under 8 minutes of measuring) and writes .local/bench/results.md
# (bench/results.md, the committed figures, with BENCH_UPDATE=1). Loopback
# only, on free ports. BENCH_ONLY=peers measures the ceiling and the rmcp
# peer alone (see bench.py). BENCH_ONLY=mail builds only the mail
# benchmark's reader (examples/mail_bench.rs; a cold build still compiles the
# package's dependencies, but links no server and needs no database and no
# wrk) and runs it beside its Python peer; its section of the results file
# replaces the last one, the rest kept. Every full run measures it too.
#
# BENCH_BASELINE=<rev> also measures the server as it was at that commit, in
# the same run: its sources are checked out into a worktree and built with
# today's Cargo.toml and Cargo.lock (the same dependencies, features and
# profile, so only the server's own code differs, and only it is compiled),
# then kept in $target/bench-baseline/<rev>/.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
# The mail benchmark's Python peer (scripts/bench_mail_peer.py): pypdf, pinned
# in scripts/tools-requirements.txt, in an environment of its own in the
# per-user cache (scripts/cache.sh), linked at .local/tools-bench.
mail_peer() {
  . scripts/cache.sh
  cached_venv .local/tools-bench tools-bench "$(grep -i '^pypdf==' scripts/tools-requirements.txt)"
  export BENCH_MAIL_PYTHON="$PWD/.local/tools-bench/bin/python"
}
if [ "${BENCH_ONLY:-}" = mail ]; then
  mail_peer
  cargo build --release --example mail_bench
  CARGO_TARGET_DIR="$target" exec python3 scripts/bench.py
fi
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
CARGO_TARGET_DIR="$target/rmcp-peer" cargo build --release --manifest-path bench/rmcp-peer/Cargo.toml
if [ "${BENCH_ONLY:-}" = peers ]; then
  cargo build --release --example ceiling
  exec python3 scripts/bench.py
fi
if [ -n "${BENCH_BASELINE:-}" ]; then
  rev=$(git rev-parse --short "$BENCH_BASELINE")
  keep="$target/bench-baseline/$rev"
  if [ ! -x "$keep/kobana-inbox-mcp" ]; then
    src=.local/bench/baseline-src
    git worktree remove --force "$src" 2>/dev/null || rm -rf "$src"
    git worktree add --detach "$src" "$rev" >/dev/null
    # The binary renamed, so that it does not replace today's in the shared
    # target directory (whose dependencies are the ones built below).
    sed -e '/^\[\[bin\]\]$/{n;s/^name = "kobana-inbox-mcp"$/name = "bench-baseline"/}' \
      -e 's/^default-run = .*$/default-run = "bench-baseline"/' Cargo.toml >"$src/Cargo.toml"
    cp Cargo.lock "$src/"
    cp examples/*.rs "$src/examples/"
    (cd "$src" && CARGO_TARGET_DIR="$target" cargo build --release --bin bench-baseline --example ceiling --example sdk_peer)
    mkdir -p "$keep"
    cp "$target/release/bench-baseline" "$keep/kobana-inbox-mcp"
    git worktree remove --force "$src"
    # The baseline's library went into the shared directory under today's
    # name (same package, same manifest): rebuild today's from its sources.
    cargo clean --release -p kobana-inbox-mcp
  fi
  export BENCH_BASELINE_BIN="$keep/kobana-inbox-mcp" BENCH_BASELINE_REV="$rev"
fi
. scripts/lib.sh
trap stop_db EXIT
ensure_db
mail_peer
cargo build --release --bin kobana-inbox-mcp --example ceiling --example sdk_peer --example mail_bench
CARGO_TARGET_DIR="$target" python3 scripts/bench.py
