#!/usr/bin/env bash
# `make run`: local database, table, demo data (or the data of the last run),
# development issuer, local webhook receiver, server.
#
# - Data lives on: at exit the table is saved to .local/data/$TABLE_NAME.jsonl
#   and the next run restores it (`make reset` starts over from the demo data).
# - A database someone else started (another checkout, a test run) is not
#   used unless REUSE_DB=1; its table is then used as it is, never re-seeded.
# - The ports and table chosen are written to .local/runs/$PORT.env, which
#   `make token` reads, so its tokens are for this server. Two runs in one
#   checkout (other ports) each have their own; on one database they share
#   its table, and the database stops with the last of them.
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
# Where the ports are written for `make token`, one file per run (a test keeps its own elsewhere).
RUN_ENV="$RUN_DIR/$PORT.env"
# Present while a database this script started runs: whichever run stops last stops it.
DB_OWNED="$RUN_DIR/db-$DYNAMODB_PORT.started"
mkdir -p .local/data "$RUN_DIR"
# The saved table holds every record (e-mails, webhook secrets): private to you.
chmod 700 .local/data

for port in "$PORT" "$DEV_ISSUER_PORT" "$RECEIVER_PORT"; do
  if answering "$port"; then
    echo "make run: port $port is taken (another make run?). Choose others: PORT=… DEV_ISSUER_PORT=… RECEIVER_PORT=…" >&2
    exit 1
  fi
done
# live_runs [EXCEPT] — the ports of the other make runs of this checkout that still answer
# and use this database.
live_runs() {
  local f
  for f in $(live_run_files); do
    if [ "$f" != "${1:-}" ] && [ "$(sed -n 's/^DYNAMODB_PORT=//p' "$f")" = "$DYNAMODB_PORT" ]; then
      sed -n 's/^PORT=//p' "$f"
    fi
  done
}
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
  # The database goes when the last run on it goes (and only one a make run started).
  if [ -f "$DB_OWNED" ] && [ -z "$(live_runs "$RUN_ENV")" ]; then
    rm -f "$DB_OWNED"
    scripts/db.sh stop || true
  elif [ -f "$DB_OWNED" ]; then
    echo "make run: the local database keeps running for the make run on port $(live_runs "$RUN_ENV" | head -1)" >&2
  fi
  exit "$status"
}
trap finish EXIT
trap 'exit 130' INT TERM
ensure_db
if [ "$started_db" = 1 ]; then : >"$DB_OWNED"; fi
sharing=$(live_runs)

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
elif [ -n "$sharing" ]; then
  data="table $TABLE_NAME, shared with the make run on port $(echo "$sharing" | head -1)"
else
  data="table $TABLE_NAME as it was on this database (not re-seeded; make reset starts over)"
fi
# Who is in the table: the demo people when this run or an earlier one seeded it.
if [ -z "$sharing" ] && [ "${REUSE_DB:-}" = 1 ] && ! ours_db; then
  people="whoever table $TABLE_NAME of that database holds (REUSE_DB=1: not seeded by make run;
                   the token below is for usr_admin in org_demo, which it may not know)"
else
  people="usr_admin, usr_operator, usr_viewer in org_demo (ws_main, ws_ops); see docs/development.md"
fi
if [ -n "${AUTO_APPROVE:-}" ]; then
  login="and logins are approved as $AUTO_APPROVE without a page (AUTO_APPROVE is set); or send the token above as"
else
  login="and log in when it asks (a page where you pick a demo person), or send the token above as"
fi
if [ "$PORT" = 3000 ]; then mint='make -s token'; else mint="PORT=$PORT make -s token"; fi
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
  People:          $people

  Development token (usr_admin, every person scope, 24 h; another with '$mint'):

$TOKEN

  Try it (in another terminal, in this directory):
    TOKEN=\$($mint)
    curl -s http://127.0.0.1:$PORT/mcp -H "authorization: Bearer \$TOKEN" \\
      -H 'content-type: application/json' -H 'mcp-protocol-version: 2026-07-28' \\
      -H 'mcp-method: server/discover' \\
      -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

  Send a sample bill e-mail (a raw message with a PDF boleto and a Pix code) as the mail pipeline would:
    make mail
  and its signed email.processed delivery is printed here.

  Connect an MCP client (Streamable HTTP) to http://127.0.0.1:$PORT/mcp with the header
    X-Workspace-Id: ws_main
  $login
    Authorization: Bearer <token>
  e.g. Claude Code:
    claude mcp add --transport http kobana-inbox http://127.0.0.1:$PORT/mcp --header "X-Workspace-Id: ws_main"

INFO
"$BIN" serve
