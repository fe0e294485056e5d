#!/usr/bin/env bash
# Interop tests with the official MCP SDK clients (part of `make test`):
#   - Python `mcp` (interop/requirements.txt), default `auto` mode → 2026-07-28;
#   - TypeScript `@modelcontextprotocol/client` (interop/package-lock.json),
#     once pinned to 2026-07-28 and once in legacy mode (initialize, 2025-06-18).
#   - both again with no token, logging in through the development
#     authorization server with their OAuth client providers (registration,
#     PKCE, approval by AUTO_APPROVE): interop/python_oauth.py, interop/ts_oauth.mjs.
# The server is started as `make run` starts it, on its own ports and its own
# table, and stopped again at the end. Everything is bound to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib.sh
export PORT="${INTEROP_PORT:-3310}"
export DEV_ISSUER_PORT="${INTEROP_ISSUER_PORT:-3311}"
export DEV_ISSUER_KEY=.local/interop-issuer.key
export TABLE_NAME="interop-$$"
export RUST_LOG="${RUST_LOG:-warn}"
export WEBHOOK_ALLOW_LOOPBACK="${WEBHOOK_ALLOW_LOOPBACK:-1}"  # as scripts/run.sh
# Logins through the development authorization server are approved as the
# demo admin without its consent page (the page has its own tests).
export AUTO_APPROVE=usr_admin
unset MCP_RESOURCE API_AUDIENCE OAUTH_ISSUER JWKS_URL
BIN=$(bin_path)
VENV=.local/interop/venv
LOG=.local/interop/server.log
start=$SECONDS

# --- clients: install on first use (pinned versions) -------------------------
mkdir -p .local/interop
# Both clients are installed once per pin set, in the per-user cache
# (`scripts/interop.sh install` does only this: make test runs it early).
. scripts/cache.sh
cached_venv "$VENV" interop-python "-r interop/requirements.txt"
cached_node_modules interop
if [ "${1:-}" = install ]; then exit 0; fi

# --- database, binary, server ----------------------------------------------------
serve_for_tests "$LOG" || { echo "interop: no server" >&2; exit 1; }

export MCP_URL="http://127.0.0.1:$PORT/mcp"
MCP_TOKEN=$("$BIN" dev-token)
export MCP_TOKEN

# --- the clients ------------------------------------------------------------------
OUT=.local/interop/clients.out
: >"$OUT"
failed=0
"$VENV/bin/python" interop/python_client.py | tee -a "$OUT" || failed=1
"$VENV/bin/python" interop/python_oauth.py | tee -a "$OUT" || failed=1
node interop/ts_client.mjs 2026-07-28 | tee -a "$OUT" || failed=1
node interop/ts_client.mjs legacy | tee -a "$OUT" || failed=1
node interop/ts_oauth.mjs | tee -a "$OUT" || failed=1

echo "interop: took $((SECONDS - start)) s (server log: $LOG)" >&2
# One closing line for the five runs (each printed its own `... N passed, N failed`).
awk '/^interop .*: [0-9]+ passed, [0-9]+ failed$/ { p += $(NF-3); f += $(NF-1); n++ }
     END { if (n != 5) f++; printf "interop: %d passed, %d failed\n", p, f }' "$OUT"
exit "$failed"
