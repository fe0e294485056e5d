#!/usr/bin/env bash
# `make invoke EVENT=…`: local database and demo data, then one recorded event
# through lambda_http's conversion and the handler; prints the API Gateway
# response. (With `cargo lambda watch` running, `cargo lambda invoke
# --data-file EVENT` does the same through the emulated runtime.)
set -euo pipefail
cd "$(dirname "$0")/.."
EVENT=$1
. scripts/lib.sh
export DEV_ISSUER_KEY="${DEV_ISSUER_KEY:-.local/dev-issuer.key}"
export DEV_ISSUER_PORT="${DEV_ISSUER_PORT:-3002}"
# A table of its own: the events never touch the data of `make run`.
export TABLE_NAME="${TABLE_NAME:-kobana-inbox-invoke}"
export RUST_LOG="${RUST_LOG:-warn}"
trap stop_db EXIT
ensure_db
build_server
BIN=$(bin_path)
"$BIN" create-table
"$BIN" seed
"$BIN" invoke "$EVENT"
