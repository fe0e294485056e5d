#!/usr/bin/env bash
# `make mail`: sends a sample bill to the server `make run` is running, as the
# mail pipeline would: the raw message (`Content-Type: message/rfc822`) with
# the pipeline's token. The sample is a bill of the corpus (tests/bills/): an
# electricity bill whose boleto and Pix code are in its PDF attachment, sent
# to the demo inbox `inb_receipts` (which takes mail from anyone); its
# processing follows at once (the PDF kept, its text read), and `make run`'s
# terminal prints the signed `email.processed` delivery. MESSAGE=<file.eml> and INBOX=<inbox id> send
# another; PORT picks one of several runs (as for `make token`). Each send
# gets a fresh Message-ID (KEEP_ID=1 keeps the file's).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
MESSAGE=${MESSAGE:-tests/bills/plain-utf8-qp.eml}
INBOX=${INBOX:-inb_receipts}
token=$(SUB=svc_mailpipe SCOPES=emails:ingest AUD=api scripts/token.sh)
# token.sh said which run it minted for; the same run file gives the port.
if [ -z "${PORT:-}" ] || ! answering "$PORT"; then
  mapfile -t running < <(live_run_files)
  PORT=$(sed -n 's/^PORT=//p' "${running[0]:-/dev/null}")
fi
echo "make mail: $MESSAGE → inbox $INBOX on 127.0.0.1:${PORT:?no make run is running}" >&2
# A fresh Message-ID each time (KEEP_ID=1 keeps the file's): one Message-ID
# is one e-mail per inbox, so the same file sent again would name the first.
body=$(mktemp)
trap 'rm -f "$body"' EXIT
if [ "${KEEP_ID:-}" = 1 ]; then
  cp "$MESSAGE" "$body"
else
  sed "0,/^Message-ID:/I s/^Message-ID:[^\r]*/Message-ID: <make-mail-$(date +%s%N)@kobana.local>/I" "$MESSAGE" >"$body"
fi
curl -sS -X POST "http://127.0.0.1:$PORT/api/v1/inboxes/$INBOX/emails" \
  -H "authorization: Bearer $token" -H 'x-workspace-id: ws_main' -H 'content-type: message/rfc822' \
  --data-binary "@$body"
echo
