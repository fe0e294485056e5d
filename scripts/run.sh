#!/usr/bin/env bash
# `make run`: local database, table, demo data, development issuer, server.
set -euo pipefail
cd "$(dirname "$0")/.."

export PORT="${PORT:-3000}"
. scripts/lib.sh
export DEV_ISSUER_KEY="${DEV_ISSUER_KEY:-.local/dev-issuer.key}"
export DEV_ISSUER_PORT="${DEV_ISSUER_PORT:-3001}"
# Webhook receivers on this machine are allowed in local runs (refused on Lambda).
export WEBHOOK_ALLOW_LOOPBACK="${WEBHOOK_ALLOW_LOOPBACK:-1}"
BIN=$(bin_path)

trap stop_db EXIT
ensure_db

cargo build --quiet --bin kobana-inbox-mcp
"$BIN" create-table
"$BIN" seed
TOKEN=$("$BIN" dev-token)

cat <<INFO

  Kobana Autonomous Inbox — local server
  MCP endpoint:    http://127.0.0.1:$PORT/mcp
  Metadata:        http://127.0.0.1:$PORT/.well-known/oauth-protected-resource/mcp
  Dev issuer JWKS: http://127.0.0.1:$DEV_ISSUER_PORT/jwks.json
  Demo data:       org_demo (ws_main, ws_ops), org_other (ws_other) — see README

  Development token (usr_admin, every person scope, 24 h; more with 'make -s token'):

$TOKEN

  Try it:
    curl -s http://127.0.0.1:$PORT/mcp -H "authorization: Bearer \$TOKEN" \\
      -H 'content-type: application/json' -H 'mcp-protocol-version: 2026-07-28' \\
      -H 'mcp-method: server/discover' \\
      -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

  Connect an MCP client (Streamable HTTP) to http://127.0.0.1:$PORT/mcp with the header
    X-Workspace-Id: ws_main
  and log in when it asks (the development authorization server on 127.0.0.1:$DEV_ISSUER_PORT
  shows a page where you pick a demo person), or send the token above as
    Authorization: Bearer <token>
  e.g. Claude Code:
    claude mcp add --transport http kobana-inbox http://127.0.0.1:$PORT/mcp --header "X-Workspace-Id: ws_main"

INFO
"$BIN" serve
