#!/usr/bin/env bash
# `make token`: a development token for the server `make run` is running —
# its issuer and audiences follow that server's ports (.local/run.env), not
# this shell's — unless PORT (with DEV_ISSUER_PORT) names another server
# that answers; with none running, for the defaults. SUB, ORG, SCOPES, AUD (mcp|api|both) and
# TTL_SECS pick its contents; an unknown scope is refused.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
RUN_ENV="${RUN_ENV:-.local/run.env}"
if [ -n "${PORT:-}" ] && answering "$PORT"; then
  : # A server answers on the PORT this shell names: mint for it, as asked.
elif [ -f "$RUN_ENV" ]; then
  running_port=$(sed -n 's/^PORT=//p' "$RUN_ENV")
  if [ -n "$running_port" ] && answering "$running_port"; then
    set -a
    . "$RUN_ENV"
    set +a
    echo "make token: for the server running on 127.0.0.1:$PORT ($RUN_ENV)" >&2
  fi
fi
export DEV_ISSUER_KEY="${DEV_ISSUER_KEY:-.local/dev-issuer.key}"
build_server
exec "$(bin_path)" dev-token
