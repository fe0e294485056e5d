#!/usr/bin/env bash
# Property-based tests of `/api/v1` from its own OpenAPI document (part of
# `make test`): schemathesis (pinned in scripts/tools-requirements.txt) against
# the server started as `make run` starts it, on its own ports and table, with
# a person's token for every scope. Every operation is exercised, with valid
# and invalid input; the run fails on any 5xx and on any answer outside the
# document (status, content type, headers, body schema). Bounded: a number of
# examples per operation and a time budget for the whole run.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib.sh
export PORT="${API_CHECK_PORT:-3320}"
export DEV_ISSUER_PORT="${API_CHECK_ISSUER_PORT:-3321}"
export DEV_ISSUER_KEY=.local/api-check-issuer.key
export TABLE_NAME="api-check-$$"
export RUST_LOG="${RUST_LOG:-warn}"
export RATE_LIMIT_PER_MINUTE=0
# Generous storage bounds: the local DynamoDB stalls now and then under a
# fuzzer's load, and a 503 here would say nothing about the API's shapes
# (answers under storage trouble are the fault tests' subject).
export DYNAMODB_ATTEMPT_TIMEOUT_MS=10000 DYNAMODB_OPERATION_TIMEOUT_MS=20000 REQUEST_TIMEOUT_MS=25000
unset MCP_RESOURCE API_AUDIENCE OAUTH_ISSUER JWKS_URL
EXAMPLES="${API_CHECK_EXAMPLES:-50}"
BUDGET="${API_CHECK_SECONDS:-300}"
TOOLS=$(scripts/tools.sh api)
OUT=.local/api-check
mkdir -p "$OUT"

serve_for_tests "$OUT/server.log"
# The demo admin (who also holds org_admin in org_demo) with every person
# scope and organization administration: every route is reachable.
TOKEN=$(SCOPES="inboxes:read inboxes:write emails:read emails:write webhooks:read webhooks:write audit:read org:admin" \
  "$(bin_path)" dev-token)

start=$SECONDS
status=0
timeout "$BUDGET" "$TOOLS/st" --config-file scripts/api-check/schemathesis.toml run "http://127.0.0.1:$PORT/api/v1/openapi.json" \
  --url "http://127.0.0.1:$PORT/api/v1" \
  -H "Authorization: Bearer $TOKEN" -H "X-Workspace-Id: ws_main" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,negative_data_rejection \
  --phases examples,coverage,fuzzing \
  --max-examples "$EXAMPLES" --seed 20261204 --workers 1 \
  --generation-database none --no-color \
  --report junit --report-junit-path "$OUT/junit.xml" >"$OUT/run.txt" 2>&1 || status=$?
tail -n 40 "$OUT/run.txt"
echo "api-check: took $((SECONDS - start)) s (report $OUT/run.txt, server log $OUT/server.log)" >&2
exit "$status"
