#!/usr/bin/env bash
# `make token`: a development token for the server `make run` is running —
# its issuer and audiences follow that server's ports (.local/runs/<PORT>.env),
# not this shell's. With several runs, PORT picks one; a PORT on which a server
# answers wins; with none running, for the defaults. SUB, ORG, SCOPES, AUD
# (mcp|api|both) and TTL_SECS pick its contents; an unknown scope is refused.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
use() {
  set -a
  . "$1"
  set +a
  echo "make token: for the server running on 127.0.0.1:$PORT ($1)" >&2
}
if [ -n "${PORT:-}" ] && answering "$PORT"; then
  # A server answers on the PORT this shell names: mint for it, with its run's ports if it is a make run.
  if [ -f "$RUN_DIR/$PORT.env" ]; then use "$RUN_DIR/$PORT.env"; fi
else
  mapfile -t running < <(live_run_files)
  if [ "${#running[@]}" = 1 ]; then
    use "${running[0]}"
  elif [ "${#running[@]}" -gt 1 ]; then
    ports=$(for f in "${running[@]}"; do sed -n 's/^PORT=//p' "$f"; done | paste -sd, -)
    echo "make token: several make runs are running (ports $ports): say which, e.g. PORT=${ports%%,*} make -s token" >&2
    exit 2
  fi
fi
export DEV_ISSUER_KEY="${DEV_ISSUER_KEY:-.local/dev-issuer.key}"
build_server
exec "$(bin_path)" dev-token
