#!/usr/bin/env bash
# The first hour, as a newcomer lives it (part of `make test`): `make run` on
# ports other than the defaults, then, from a shell that knows none of them,
# `make token` mints a token the server accepts; an ingested bill is processed
# and the local receiver prints the demo webhook's signed delivery; `make
# invoke` runs an event on a table of its own; `make openapi` writes the
# document; `make token` refuses a misspelt scope; the binary answers
# `--help`. Stopped (as Ctrl-C stops it) and started again, `make run` still
# has the e-mail; and it will not take a database someone else started. With
# CARGO_TARGET_DIR set (as CI sets it), every script finds the binary.
# Everything on loopback, on ports of its own; only what it starts is stopped.
# (`grep -c … >/dev/null` after a pipe, not `grep -q`: -q stops reading, and
# under pipefail the writer's SIGPIPE would fail the check.)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

DIR=.local/run-check
rm -rf "$DIR"
mkdir -p "$DIR"
export RUN_DIR="$DIR/runs"
RUN_ENV="$RUN_DIR/3440.env"
TABLE="run-check-$$"
# The ports `make run` is started on, and no other shell variable: the checks
# below run with none of them set, as a second terminal would.
RUN_VARS=(PORT=3440 DEV_ISSUER_PORT=3441 RECEIVER_PORT=3442 DYNAMODB_PORT=8044 DYNAMODB_ENDPOINT=http://127.0.0.1:8044
          TABLE_NAME="$TABLE" RUST_LOG=info)
unset PORT DEV_ISSUER_PORT RECEIVER_PORT TABLE_NAME
BASE=http://127.0.0.1:3440
failed=0
check() {
  local name=$1
  shift
  if "$@"; then echo "  ok   $name"; else echo "  FAIL $name"; failed=1; fi
}

run_pid=
start_run() {
  # Its own session, so that stopping it reaches the whole `make run` as Ctrl-C would.
  env "${RUN_VARS[@]}" setsid scripts/run.sh >"$DIR/run-$1.log" 2>&1 &
  run_pid=$!
  for _ in $(seq 1 600); do
    if curl -sf "$BASE/health" >/dev/null && [ -f "$RUN_ENV" ]; then return 0; fi
    if ! kill -0 "$run_pid" 2>/dev/null; then cat "$DIR/run-$1.log" >&2; return 1; fi
    sleep 0.5
  done
  return 1
}
stop_run() {
  if [ -n "$run_pid" ] && kill -0 "$run_pid" 2>/dev/null; then
    kill -INT -- "-$run_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  run_pid=
}
other_db_pid=
cleanup() {
  if [ -n "${second_pid:-}" ]; then kill -INT -- "-$second_pid" 2>/dev/null || true; fi
  stop_run
  if [ -n "$other_db_pid" ]; then kill "$other_db_pid" 2>/dev/null || true; fi
  rm -f ".local/data/$TABLE.jsonl"
}
trap cleanup EXIT

start_run first || { echo "run-check: make run did not start" >&2; exit 1; }

TOKEN=$(make -s token 2>"$DIR/token.err")
discover() {
  curl -fsS "$BASE/mcp" -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \
    -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: server/discover' \
    -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
    | grep -c '"capabilities"' >/dev/null
}
check "make token (from a shell without PORT) mints a token the server on 3440 accepts" discover

PIPE=$(SUB=svc_mailpipe SCOPES=emails:ingest AUD=api make -s token 2>"$DIR/pipe-token.err") || {
  echo "run-check: make token for the mail pipe failed:" >&2
  cat "$DIR/pipe-token.err" >&2
  exit 1
}
EMAIL=$(curl -fsS -X POST "$BASE/api/v1/inboxes/inb_bills/emails" \
  -H "authorization: Bearer $PIPE" -H 'x-workspace-id: ws_main' -H 'content-type: application/json' \
  -d '{"from":"contas@energia.example.com","to":"contas@demo.inbox.kobana.com.br","subject":"Conta de dezembro","text":"Linha: 00190.00009 02345.678904 12345.678176 6 16610000048750"}' \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["email"]["id"])')
# delivered ID — the receiver printed the signed email.processed delivery of e-mail ID (10 s at most).
delivered() {
  for _ in $(seq 1 40); do
    if grep -q "webhook received: \"email.processed\" delivery \"dlv_.*\" — signature ok — \"email.processed\" \"$1\"" "$DIR/run-first.log"; then
      return 0
    fi
    sleep 0.25
  done
  return 1
}
check "an ingested bill is processed and the receiver prints its signed delivery" delivered "$EMAIL"
MAILED=$(make -s mail 2>"$DIR/mail.err" | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["email"]["id"])') || {
  echo "run-check: make mail failed:" >&2
  cat "$DIR/mail.err" >&2
  exit 1
}
check "make mail sends the sample bill (a raw message) and the receiver prints its signed delivery" delivered "$MAILED"
# The sample's boleto and Pix code are in its PDF: the e-mail names the attachment as their source.
from_pdf() {
  curl -fsS "$BASE/api/v1/emails/$MAILED" -H "authorization: Bearer $TOKEN" -H 'x-workspace-id: ws_main' \
    | python3 -c 'import json, sys
e = json.load(sys.stdin)["data"]["extracted"]
assert e["source"] == "attachment:0" and e["barcode"] == "34191165600001599901092026110101234567897000", e
assert e["pix"]["key"] == "financeiro@luz.example.com", e'
}
check "the mailed bill's boleto and Pix code were read from its PDF attachment" from_pdf
logged_tool() {
  curl -fsS "$BASE/mcp" -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -H 'x-workspace-id: ws_main' \
    -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/call' -H 'mcp-name: emails_get' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"emails_get\",\"arguments\":{\"id\":\"$EMAIL\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}" \
    | grep -c '"isError":false' >/dev/null && sleep 0.3 && grep -q 'operation="\?emails_get' "$DIR/run-first.log"
}
check "a tools/call's log line names the tool" logged_tool
misspelt() { ! SCOPES=emails:reed make -s token >/dev/null 2>"$DIR/misspelt.err" && grep -q "unknown emails:reed" "$DIR/misspelt.err"; }
check "make token refuses a misspelt scope" misspelt
invoked() {
  env DYNAMODB_PORT=8044 DYNAMODB_ENDPOINT=http://127.0.0.1:8044 make -s invoke EVENT=events/mcp-2025-06-18-tools-list.json \
    >"$DIR/invoke.out" 2>&1 && grep -q '"statusCode": 200' "$DIR/invoke.out"
}
check "make invoke answers a recorded event (on a table of its own)" invoked
openapi() { make -s openapi OUT="$DIR/openapi.json" >/dev/null && python3 -c "import json; json.load(open('$DIR/openapi.json'))"; }
check "make openapi writes the document" openapi
helped() { "$(bin_path)" --help | grep -q "Usage: kobana-inbox-mcp" && "$(bin_path)" snapshot --help | grep -q "Usage: kobana-inbox-mcp snapshot"; }
check "the binary answers --help and <command> --help" helped

# A second make run in this checkout, on other ports and the same database: each has its
# own run file; with two, make token asks which; stopping the second leaves the first whole.
second_pid=
second_run() {
  env "${RUN_VARS[@]}" PORT=3446 DEV_ISSUER_PORT=3447 RECEIVER_PORT=3448 setsid scripts/run.sh >"$DIR/run-second-port.log" 2>&1 &
  second_pid=$!
  for _ in $(seq 1 600); do
    if curl -sf http://127.0.0.1:3446/health >/dev/null && [ -f "$RUN_DIR/3446.env" ]; then return 0; fi
    if ! kill -0 "$second_pid" 2>/dev/null; then cat "$DIR/run-second-port.log" >&2; return 1; fi
    sleep 0.5
  done
  return 1
}
two_runs() {
  second_run && grep -q "shared with the make run on port 3440" "$DIR/run-second-port.log" \
    && ! make -s token >/dev/null 2>"$DIR/two.err" && grep -q "several make runs are running (ports 3440,3446)" "$DIR/two.err" \
    && [ -n "$(PORT=3446 make -s token 2>/dev/null)" ] || return 1
  kill -INT -- "-$second_pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$second_pid" 2>/dev/null || break; sleep 0.1; done
  second_pid=
  [ -f "$RUN_ENV" ] && [ ! -f "$RUN_DIR/3446.env" ] && answering 8044 && TOKEN=$(make -s token 2>/dev/null) && discover
}
check "a second make run (other ports, same database) stops without taking the first's run file or database" two_runs

stop_run
saved() { [ -s ".local/data/$TABLE.jsonl" ] && [ ! -f "$RUN_ENV" ]; }
check "stopped, make run saved its table and removed its run file" saved
start_run second || { echo "run-check: make run did not start again" >&2; exit 1; }
TOKEN=$(make -s token 2>/dev/null)
kept() {
  curl -fsS "$BASE/api/v1/emails/$EMAIL" -H "authorization: Bearer $TOKEN" -H 'x-workspace-id: ws_main' \
    | grep -c '"status":"processed"' >/dev/null && grep -q "restored" "$DIR/run-second.log"
}
check "started again, the e-mail of the first run is still there" kept
stop_run

# A database this checkout did not start (no PID file of ours) is refused.
.local/venv/bin/python scripts/moto_server.py 127.0.0.1 8045 >"$DIR/other-db.log" 2>&1 &
other_db_pid=$!
for _ in $(seq 1 100); do answering 8045 && break; sleep 0.1; done
refused() {
  ! env "${RUN_VARS[@]}" DYNAMODB_PORT=8045 DYNAMODB_ENDPOINT=http://127.0.0.1:8045 scripts/run.sh >"$DIR/refused.log" 2>&1 \
    && grep -q "REUSE_DB=1" "$DIR/refused.log"
}
check "make run will not re-seed a database someone else started" refused

if [ "$failed" = 0 ]; then echo "run-check: passed"; else echo "run-check: FAILED (logs in $DIR)"; fi
exit "$failed"
