#!/usr/bin/env bash
# `make conformance` (and a stage of `make test`): the official MCP
# conformance runner (`@modelcontextprotocol/conformance`, pinned in
# conformance/package-lock.json with the Node 22 it needs, the npm package
# `node`: nothing is downloaded outside the registry) against
#   - the conformance fixture server (crates/conformance/src/main.rs: this crate's
#     pipeline serving the runner's fixture catalogue), with the full
#     2026-07-28 requirement set (scored, plus the tasks-* extension and
#     pending scenarios it runs unscored) and the 2025-11-25 set;
#   - the same binary serving the product's own catalogue, with the generic
#     scenarios of both sets (those that call no fixture by name).
# Each run has an expected-failures baseline (conformance/expected-failures-*.yml)
# listing only what does not apply here, each with its reason; anything else
# that fails, or a baseline entry that now passes, fails this script.
# The server runs on its own ports (3350, issuer 3351) and its own local
# database (8035), is started and stopped by PID, and listens on 127.0.0.1 only.
# The runner sends no token: the server's front adds a development token to
# requests without one (see crates/conformance/src/main.rs).
#   scripts/conformance.sh install   install the runner only
set -euo pipefail
cd "$(dirname "$0")/.."

# Its own database, whatever the caller exported (make test exports 8001).
export DYNAMODB_PORT="${CONFORMANCE_DB_PORT:-8035}"
export DYNAMODB_ENDPOINT="http://127.0.0.1:$DYNAMODB_PORT"
. scripts/lib.sh
export PORT="${CONFORMANCE_PORT:-3350}"
export DEV_ISSUER_PORT="${CONFORMANCE_ISSUER_PORT:-3351}"
export DEV_ISSUER_KEY=.local/conformance-issuer.key
export RUST_LOG="${RUST_LOG:-warn}"
# The runner sends a few hundred requests a minute as one person.
export RATE_LIMIT_PER_MINUTE=0
export WEBHOOK_ALLOW_LOOPBACK=1
unset MCP_RESOURCE API_AUDIENCE OAUTH_ISSUER JWKS_URL
OUT=.local/conformance
start=$SECONDS

# --- the runner and Node 22, in the per-user cache (scripts/cache.sh) ---------
mkdir -p "$OUT"
. scripts/cache.sh
cached_node_modules conformance
export PATH="$PWD/conformance/node_modules/.bin:$PATH"
if [ "${1:-}" = install ]; then exit 0; fi

# --- the binary --------------------------------------------------------------------
# Inside `make test` (KOBANA_TEST_BUILD) it comes from the test build, as the
# other scripts' binaries do.
if [ -n "${KOBANA_TEST_BUILD:-}" ]; then
  cargo test --workspace --all-targets --no-run --quiet
fi
# The test build compiles the fixture server only as a test harness (no
# integration test of its package asks for the binary): the binary itself is
# this build's, reusing the test build's compiled crates.
cargo build --quiet -p inbox-conformance --bin conformance
BIN="$(dirname "$(bin_path)")/conformance"

# --- database and server -------------------------------------------------------------
fixture_pid=
stop_fixture() {
  if [ -n "$fixture_pid" ]; then
    kill "$fixture_pid" 2>/dev/null || true
    wait "$fixture_pid" 2>/dev/null || true
    fixture_pid=
  fi
}
trap 'stop_fixture; stop_db' EXIT
ensure_db

# serve CATALOGUE — the binary with `fixtures` or `product`, on a fresh table.
serve() {
  local catalogue=$1 log="$OUT/server-$1.log"
  ports_free "$PORT" "$DEV_ISSUER_PORT" || return 1
  TABLE_NAME="conformance-$$-$catalogue" "$BIN" "$catalogue" >"$log" 2>&1 &
  fixture_pid=$!
  wait_healthy "$fixture_pid" "$log"
}

URL="http://127.0.0.1:$PORT/mcp"
failed=0
summaries=()

# summarise LABEL DIR BASELINE RUNNER_STATUS — one line per scenario, a closing line.
summarise() {
  local label=$1 dir=$2 baseline=$3 status=$4 line
  line=$(python3 conformance/summary.py "$label" "$dir" "$baseline" | tee "$dir.summary" | tail -1) || failed=1
  sed '$d' "$dir.summary"
  summaries+=("$line")
  if [ "$status" != 0 ]; then
    echo "conformance: the runner reported unexpected results for $label (exit $status); see $dir.log" >&2
    failed=1
  fi
}

# requirements WIRE — the fixture server against the whole requirement set.
requirements() {
  local wire=$1 dir="$OUT/fixtures-$1" status=0
  rm -rf "$dir"
  echo "conformance: fixture server, requirement set $wire" >&2
  conformance server --url "$URL" --requirements "$wire" \
    --expected-failures "conformance/expected-failures-$wire.yml" -o "$dir" >"$dir.log" 2>&1 || status=$?
  summarise "fixtures $wire" "$dir" "conformance/expected-failures-$wire.yml" "$status"
}

serve fixtures
requirements 2026-07-28
requirements 2025-11-25
stop_fixture

# The generic scenarios: those of both requirement sets that call no fixture
# by name, each at its set's wire version (server-sse-polling stops at its
# first check on a server without sessions, before its fixture).
GENERIC_2026="server-stateless tools-list resources-list prompts-list server-sse-multiple-streams
  sep-2164-resource-not-found dns-rebinding-protection caching input-required-result-unsupported-methods
  http-header-validation"
GENERIC_2025="server-initialize logging-set-level ping tools-list resources-list prompts-list
  server-sse-multiple-streams dns-rebinding-protection server-session-lifecycle server-sse-polling"
serve product
dir="$OUT/product"
rm -rf "$dir"
mkdir -p "$dir"
status=0
echo "conformance: the product's catalogue, generic scenarios" >&2
for wire in 2026-07-28 2025-11-25; do
  scenarios=$GENERIC_2026
  if [ "$wire" = 2025-11-25 ]; then scenarios=$GENERIC_2025; fi
  for scenario in $scenarios; do
    conformance server --url "$URL" --scenario "$scenario" --spec-version "$wire" \
      --expected-failures conformance/expected-failures-product.yml -o "$dir/$wire" >>"$dir.log" 2>&1 || status=$?
  done
done
summarise "product generic" "$dir" conformance/expected-failures-product.yml "$status"
stop_fixture

echo "conformance: took $((SECONDS - start)) s (logs and results: $OUT)" >&2
# One closing line for the three runs.
printf 'conformance: %s\n' "$(IFS=';'; echo "${summaries[*]}" | sed 's/;/; /g')"
exit "$failed"
