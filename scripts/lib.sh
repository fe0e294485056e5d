# Shared by the scripts (sourced, from the repository root): the local
# database and loopback port checks.
export DYNAMODB_PORT="${DYNAMODB_PORT:-8000}"
export DYNAMODB_ENDPOINT="${DYNAMODB_ENDPOINT:-http://127.0.0.1:$DYNAMODB_PORT}"

answering() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

started_db=0
# Starts the local database unless something already answers on its port.
ensure_db() {
  if ! answering "$DYNAMODB_PORT"; then
    scripts/db.sh start
    started_db=1
  fi
}
# Stops it again only if ensure_db started it (call from the EXIT trap).
# `if`, not `[ ] &&`: a trap's last status would become the script's.
stop_db() {
  if [ "$started_db" = 1 ]; then scripts/db.sh stop; fi
}
