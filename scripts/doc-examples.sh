#!/usr/bin/env bash
# The documentation's examples against a real server (part of `make test`):
# every ```sh / ```bash / ```console block of README.md and docs/*.md runs,
# unless it is marked `<!-- doc-examples: skip (reason) -->` (see
# scripts/doc-examples.py). The server is started as `make run` starts it, on
# ports of its own (3420, issuer 3421) with a fresh table and the demo data, on
# a local database of its own (8042), so it runs beside everything else; what
# it started is stopped again at the end, by PID. Each block gets BASE (the
# server's URL) and TOKEN (the demo admin with every person scope).
set -euo pipefail
cd "$(dirname "$0")/.."

# Before lib.sh, which only fills them in when unset: this run's own database.
export DYNAMODB_PORT="${DOC_EXAMPLES_DB_PORT:-8042}"
export DYNAMODB_ENDPOINT="http://127.0.0.1:$DYNAMODB_PORT"
. scripts/lib.sh
export PORT="${DOC_EXAMPLES_PORT:-3420}"
export DEV_ISSUER_PORT="${DOC_EXAMPLES_ISSUER_PORT:-3421}"
export DEV_ISSUER_KEY=.local/doc-examples-issuer.key
export TABLE_NAME="doc-examples-$$"
export RUST_LOG="${RUST_LOG:-warn}"
export WEBHOOK_ALLOW_LOOPBACK="${WEBHOOK_ALLOW_LOOPBACK:-1}"  # as scripts/run.sh
unset MCP_RESOURCE API_AUDIENCE OAUTH_ISSUER JWKS_URL AUTO_APPROVE
OUT=.local/doc-examples
mkdir -p "$OUT"
start=$SECONDS

# What needs no server first: a broken link or block fails here in a second.
python3 scripts/doc-examples.py --check

serve_for_tests "$OUT/server.log" || { echo "doc-examples: no server (log: $OUT/server.log)" >&2; exit 1; }
TOKEN=$("$(bin_path)" dev-token)

# The blocks run with the environment of this script (PORT, DEV_ISSUER_PORT and
# DEV_ISSUER_KEY of this server, so `make -s token` in a block mints for it).
# `make token` builds nothing new: the binary is built already (inside `make
# test`, KOBANA_TEST_BUILD makes it reuse the test build). MAKEFLAGS and
# MAKELEVEL of an enclosing make stay out.
status=0
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS BASE="http://127.0.0.1:$PORT" TOKEN="$TOKEN" \
  python3 scripts/doc-examples.py || status=$?
echo "doc-examples: took $((SECONDS - start)) s (server log $OUT/server.log)" >&2
exit "$status"
