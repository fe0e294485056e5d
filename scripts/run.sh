#!/usr/bin/env bash
# `make run`: local database, table, demo data (or the data of the last run),
# development issuer, local webhook receiver, server.
#
# - Data lives on: at exit the table is saved to .local/data/$TABLE_NAME.jsonl
#   and the next run restores it (`make reset` starts over from the demo data).
# - A database someone else started (another checkout, a test run) is not
#   used unless REUSE_DB=1; its table is then used as it is, never re-seeded.
# - The ports and table chosen are written to .local/run.env, which
#   `make token` reads, so its tokens are for this server.
set -euo pipefail
cd "$(dirname "$0")/.."

export PORT="${PORT:-3000}"
. scripts/lib.sh
export DEV_ISSUER_KEY="${DEV_ISSUER_KEY:-.local/dev-issuer.key}"
export DEV_ISSUER_PORT="${DEV_ISSUER_PORT:-3001}"
export RECEIVER_PORT="${RECEIVER_PORT:-3002}"
export TABLE_NAME="${TABLE_NAME:-kobana-inbox}"
# Webhook receivers on this machine are allowed in local runs (refused on Lambda).
export WEBHOOK_ALLOW_LOOPBACK="${WEBHOOK_ALLOW_LOOPBACK:-1}"
# The demo webhook delivers to the local receiver started below.
export DEMO_WEBHOOK_URL="${DEMO_WEBHOOK_URL:-http://127.0.0.1:$RECEIVER_PORT/kobana}"
DATA=".local/data/$TABLE_NAME.jsonl"
# Where the ports are written for `make token` (a test runs its own elsewhere).
RUN_ENV="${RUN_ENV:-.local/run.env}"
mkdir -p .local/data "$(dirname "$RUN_ENV")"
# The saved table holds every record (e-mails, webhook secrets): private to you.
chmod 700 .local/data

for port in "$PORT" "$DEV_ISSUER_PORT" "$RECEIVER_PORT"; do
  if answering "$port"; then
    echo "make run: port $port is taken (another make run?). Choose others: PORT=… DEV_ISSUER_PORT=… RECEIVER_PORT=…" >&2
    exit 1
  fi
done
if answering "$DYNAMODB_PORT" && ! ours_db && [ "${REUSE_DB:-}" != 1 ]; then
  cat >&2 <<MSG
make run: something this checkout did not start answers on 127.0.0.1:$DYNAMODB_PORT
(another checkout's make run, a test run, or your own database). Either choose another
port (DYNAMODB_PORT=8010 make run) or use it as it is (REUSE_DB=1 make run: its table
$TABLE_NAME is used as it is, never re-seeded).
MSG
  exit 1
fi

receiver_pid=
finish() {
  local status=$?
  trap - EXIT INT TERM
  if [ -n "$receiver_pid" ]; then kill "$receiver_pid" 2>/dev/null || true; fi
  if [ -n "${BIN:-}" ] && answering "$DYNAMODB_PORT"; then
    "$BIN" snapshot save "$DATA" >&2 || echo "make run: the table could not be saved to $DATA" >&2
  fi
  rm -f "$RUN_ENV"
  stop_db
  exit "$status"
}
trap finish EXIT
trap 'exit 130' INT TERM
ensure_db

echo "make run: building the server (the first build takes a few minutes)…" >&2
build_server --progress
BIN=$(bin_path)
if [ "$("$BIN" create-table)" = created ]; then
  if [ -f "$DATA" ]; then
    "$BIN" snapshot restore "$DATA" >&2
    data="the data of the last run (restored from $DATA; make reset starts over)"
  else
    "$BIN" seed
    data="the demo data, just seeded (saved to $DATA when you stop)"
  fi
else
  data="table $TABLE_NAME as it was on this database (not re-seeded; make reset starts over)"
fi
TOKEN=$("$BIN" dev-token)
cat >"$RUN_ENV" <<ENV
PORT=$PORT
DEV_ISSUER_PORT=$DEV_ISSUER_PORT
DEV_ISSUER_KEY=$DEV_ISSUER_KEY
RECEIVER_PORT=$RECEIVER_PORT
TABLE_NAME=$TABLE_NAME
DYNAMODB_PORT=$DYNAMODB_PORT
DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT
ENV

"$BIN" receiver &
receiver_pid=$!

cat <<INFO

  Kobana Autonomous Inbox — local server
  MCP endpoint:    http://127.0.0.1:$PORT/mcp
  REST API:        http://127.0.0.1:$PORT/api/v1
  Dev issuer:      http://127.0.0.1:$DEV_ISSUER_PORT (OAuth login, JWKS)
  Webhooks:        the demo webhook delivers to http://127.0.0.1:$RECEIVER_PORT/kobana (printed below)
  Data:            $data
  Demo people:     usr_admin, usr_operator, usr_viewer in org_demo (ws_main, ws_ops); see docs/development.md

  Development token (usr_admin, every person scope, 24 h; another with 'make -s token'):

$TOKEN

  Try it:
    curl -s http://127.0.0.1:$PORT/mcp -H "authorization: Bearer \$TOKEN" \\
      -H 'content-type: application/json' -H 'mcp-protocol-version: 2026-07-28' \\
      -H 'mcp-method: server/discover' \\
      -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

  Connect an MCP client (Streamable HTTP) to http://127.0.0.1:$PORT/mcp with the header
    X-Workspace-Id: ws_main
  and log in when it asks (a page where you pick a demo person), or send the token above as
    Authorization: Bearer <token>
  e.g. Claude Code:
    claude mcp add --transport http kobana-inbox http://127.0.0.1:$PORT/mcp --header "X-Workspace-Id: ws_main"

INFO
"$BIN" serve
