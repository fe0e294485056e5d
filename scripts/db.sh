#!/usr/bin/env bash
# The local DynamoDB-compatible server (moto in server mode, started by
# scripts/moto_server.py so that every action is atomic), installed on first
# use (into the per-user cache, linked at .local/venv) and bound to 127.0.0.1 only.
#   scripts/db.sh start   start it unless something already answers on the port
#   scripts/db.sh stop    stop the server this script started (by its PID)
#   scripts/db.sh install install it only (the fault tests start their own servers)
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${DYNAMODB_PORT:-8000}"
VENV=.local/venv
PIDFILE=".local/moto-$PORT.pid"
LOG=".local/moto-$PORT.log"

answering() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

# Pinned: scripts/moto_server.py adjusts moto's transaction internals and
# how its item answers are written.
MOTO_VERSION=5.2.5

# In the per-user cache (scripts/cache.sh), linked at $VENV.
install() {
  . scripts/cache.sh
  cached_venv "$VENV" moto "moto[server]==$MOTO_VERSION"
}

case "${1:-start}" in
  start)
    if answering; then
      echo "local DynamoDB already answering on 127.0.0.1:$PORT" >&2
      exit 0
    fi
    install
    mkdir -p .local
    nohup "$VENV/bin/python" scripts/moto_server.py 127.0.0.1 "$PORT" >"$LOG" 2>&1 &
    echo $! >"$PIDFILE"
    for _ in $(seq 1 100); do
      if answering; then
        echo "local DynamoDB started on 127.0.0.1:$PORT (pid $(cat "$PIDFILE"))" >&2
        exit 0
      fi
      sleep 0.1
    done
    echo "local DynamoDB did not start; see $LOG" >&2
    exit 1
    ;;
  install)
    # The fault tests start servers of their own from this install.
    install
    ;;
  stop)
    if [ -f "$PIDFILE" ]; then
      kill "$(cat "$PIDFILE")" 2>/dev/null || true
      rm -f "$PIDFILE"
    fi
    ;;
  *)
    echo "usage: $0 start|stop|install" >&2
    exit 2
    ;;
esac
