# Shared by the scripts (sourced, from the repository root): the local
# database, loopback port checks, and a local server on its own table.
export DYNAMODB_PORT="${DYNAMODB_PORT:-8000}"
export DYNAMODB_ENDPOINT="${DYNAMODB_ENDPOINT:-http://127.0.0.1:$DYNAMODB_PORT}"

# Builds the debug binary. Inside `make test` (KOBANA_TEST_BUILD set) it
# comes from the test build: a plain `cargo build --bin` there would
# compile tokio and everything above it again, without the features the
# dev-dependencies add, only to replace the binary the tests already made.
# `build_server --progress` shows cargo's progress (the first build takes minutes).
build_server() {
  local quiet=(--quiet)
  if [ "${1:-}" = --progress ]; then quiet=(); fi
  if [ -n "${KOBANA_TEST_BUILD:-}" ]; then
    cargo test --workspace --all-targets --no-run "${quiet[@]}"
  else
    cargo build "${quiet[@]}" --bin kobana-inbox-mcp
  fi
}

# Where cargo puts what it builds (CARGO_TARGET_DIR, build.target-dir).
target_dir() {
  cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}

# The debug binary.
bin_path() {
  echo "$(target_dir)/debug/kobana-inbox-mcp"
}

answering() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Each `make run` writes its ports to $RUN_DIR/<PORT>.env while it runs.
RUN_DIR="${RUN_DIR:-.local/runs}"
# live_run_files — the run files of this checkout's make runs whose server still
# answers (a run killed outright leaves a file behind that names nothing).
live_run_files() {
  local f port
  for f in "$RUN_DIR"/*.env; do
    [ -f "$f" ] || continue
    port=$(sed -n 's/^PORT=//p' "$f")
    if [ -n "$port" ] && answering "$port"; then echo "$f"; fi
  done
}

# Whether the database answering on $DYNAMODB_PORT is one this checkout
# started (scripts/db.sh keeps its PID in .local/moto-$DYNAMODB_PORT.pid).
ours_db() {
  local pidfile=".local/moto-$DYNAMODB_PORT.pid"
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

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

# ports_free PORT... — true when nothing answers on any of them (says which does).
ports_free() {
  local port
  for port in "$@"; do
    if answering "$port"; then
      echo "port $port is taken" >&2
      return 1
    fi
  done
}

# wait_healthy PID LOG — waits (20 s at most) for /health on $PORT while PID
# lives; on failure prints LOG.
wait_healthy() {
  local pid=$1 log=$2
  for _ in $(seq 1 200); do
    if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "the server exited; see $log" >&2
      cat "$log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "no /health; see $log" >&2
  return 1
}

server_pid=
# Starts the server as `make run` starts it, on $PORT with the development
# issuer on $DEV_ISSUER_PORT and its own $TABLE_NAME (created and seeded),
# logging to $1; waits for /health. Refuses ports that are taken.
start_server() {
  local log=$1 bin
  bin=$(bin_path)
  ports_free "$PORT" "$DEV_ISSUER_PORT" || return 1
  "$bin" create-table
  "$bin" seed
  "$bin" serve >"$log" 2>&1 &
  server_pid=$!
  wait_healthy "$server_pid" "$log"
}
# Stops the server start_server started (call from the EXIT trap).
stop_server() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
}

# For a test script: the database (unless one answers), a fresh build, then
# start_server logging to $1; the server and a database started here are
# stopped again when the script exits.
serve_for_tests() {
  trap 'stop_server; stop_db' EXIT
  ensure_db && build_server && start_server "$1"
}
