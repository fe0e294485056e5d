#!/usr/bin/env bash
# Interop tests with the official MCP SDK clients (part of `make test`):
#   - Python `mcp` (interop/requirements.txt), default `auto` mode → 2026-07-28;
#   - TypeScript `@modelcontextprotocol/client` (interop/package-lock.json),
#     once pinned to 2026-07-28 and once in legacy mode (initialize, 2025-06-18).
#   - both again with no token, logging in through the development
#     authorization server with their OAuth client providers (PKCE, approval by
#     AUTO_APPROVE, refresh): Python with a Client ID Metadata Document it
#     serves over https on loopback (a test authority made here, which the
#     server trusts through DEV_CLIENT_DOCUMENT_CA), TypeScript by dynamic
#     registration: interop/python_oauth.py, interop/ts_oauth.mjs.
#   - the official tasks client (`@modelcontextprotocol/ext-tasks`): a long tool
#     through the confirmation settled to its result, a second one cancelled
#     while queued (LOCAL_JOB_HOLD_MS): interop/ts_tasks.mjs.
#   - the consent page in headless Chromium (Debian's package, installed here
#     when missing): render, approve, decline: interop/consent_browser.mjs.
#   - the MCP Apps views in the same browser under a minimal host page: the
#     boleto card, a confirmation approved and one declined: interop/apps_views.mjs.
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
# Access tokens of those logins live 3 s, so the clients are seen refreshing.
export DEV_ACCESS_TOKEN_SECS=3
# Jobs wait 1.5 s in the queue before the local runner takes them, so the
# tasks client can cancel one while it is queued.
export LOCAL_JOB_HOLD_MS=1500
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
# The browser of the consent page test: Debian's Chromium (no browser download).
CHROMIUM=$(command -v chromium || true)
if [ -z "$CHROMIUM" ]; then
  as_root=()
  if [ "$(id -u)" != 0 ]; then as_root=(sudo -n); fi
  echo "interop: installing chromium (Debian package) for the consent page test" >&2
  "${as_root[@]}" apt-get install -y -q chromium >.local/interop/apt.log 2>&1 \
    || { "${as_root[@]}" apt-get update -q >>.local/interop/apt.log 2>&1 \
         && "${as_root[@]}" apt-get install -y -q chromium >>.local/interop/apt.log 2>&1; } \
    || { echo "interop: cannot install chromium (see .local/interop/apt.log); install the Debian package chromium" >&2; exit 1; }
  CHROMIUM=$(command -v chromium)
fi
export CHROMIUM
if [ "${1:-}" = install ]; then exit 0; fi

# --- a test certificate authority and a loopback certificate ----------------------
# For the client document the Python client serves over https; the server
# trusts this authority for client documents only (DEV_CLIENT_DOCUMENT_CA).
TLS=.local/interop/tls
mkdir -p "$TLS"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=kobana-interop-ca \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
  -keyout "$TLS/ca.key" -out "$TLS/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
  -keyout "$TLS/leaf.key" -out "$TLS/leaf.csr" 2>/dev/null
openssl x509 -req -in "$TLS/leaf.csr" -CA "$TLS/ca.pem" -CAkey "$TLS/ca.key" -CAcreateserial -days 1 \
  -extfile <(printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n') \
  -out "$TLS/leaf.pem" 2>/dev/null
export DEV_CLIENT_DOCUMENT_CA="$TLS/ca.pem" CLIENT_DOCUMENT_CERT="$TLS/leaf.pem" CLIENT_DOCUMENT_KEY="$TLS/leaf.key"

# --- database, binary, server ----------------------------------------------------
serve_for_tests "$LOG" || { echo "interop: no server" >&2; exit 1; }

export MCP_URL="http://127.0.0.1:$PORT/mcp" ISSUER_URL="http://127.0.0.1:$DEV_ISSUER_PORT"
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
node interop/ts_tasks.mjs | tee -a "$OUT" || failed=1
node interop/consent_browser.mjs | tee -a "$OUT" || failed=1
node interop/apps_views.mjs | tee -a "$OUT" || failed=1

echo "interop: took $((SECONDS - start)) s (server log: $LOG)" >&2
# One closing line for the eight runs (each printed its own `... N passed, N failed`).
awk '/^interop .*: [0-9]+ passed, [0-9]+ failed$/ { p += $(NF-3); f += $(NF-1); n++ }
     END { if (n != 8) f++; printf "interop: %d passed, %d failed\n", p, f }' "$OUT"
exit "$failed"
