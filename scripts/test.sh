#!/usr/bin/env bash
# `make test`: every check, as CI runs it, with the time of each stage:
#   formatting, clippy and the test build (one build: see
#   `build_and_lint`), the SAM template (cfn-lint, sam validate --lint,
#   checkov) and the OpenAPI document (openapi-spec-validator), the cargo
#   tests (unit, integration, event replay) against the local database, the
#   SDK interop clients (scripts/interop.sh), the property-based API tests
#   (scripts/api-check.sh) and the official conformance runner
#   (scripts/conformance.sh); at the end, what ran, counted from each stage's
#   own output (scripts/test-counts.py). Checks that need no Rust build (the template lint,
#   tool installs) run in the background while Rust compiles; interop and the
#   API check run beside the cargo tests, on a database of their own. Arguments are
#   passed to the cargo test run (`make test T=<filter>` runs a subset and
#   skips interop and the API check).
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib.sh
mkdir -p .local

# clippy-driver compiles the workspace's own crates: one build both lints
# them (as `cargo clippy --all-targets -- -D warnings` does) and makes the
# test binaries, where clippy alone would type-check every dependency a
# second time. Exported, so every cargo call of this run (the scripts'
# `cargo build` too) reuses that build instead of starting another.
export RUSTC_WORKSPACE_WRAPPER=clippy-driver
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
export KOBANA_TEST_BUILD=1

started=$SECONDS
times=()
# stage NAME COMMAND... — runs it, remembering how long it took.
stage() {
  local name=$1 t=$SECONDS s=0
  shift
  echo "== $name" >&2
  "$@" || s=$?
  times+=("$(printf '  %-34s %5d s%s' "$name" $((SECONDS - t)) "$([ "$s" = 0 ] || echo "  FAILED ($s)")")")
  return "$s"
}
report() {
  local status=$?
  stop_db
  echo >&2
  echo "make test: stage times (total $((SECONDS - started)) s)" >&2
  printf '%s\n' "${times[@]}" >&2
  python3 scripts/test-counts.py || true
  if [ "$status" != 0 ]; then echo "make test: FAILED (exit $status)" >&2; fi
  exit "$status"
}
trap report EXIT

filter=("$@")
# The counts printed at the end are this run's only.
rm -f .local/cargo-tests.log .local/{interop,api-check,doc-examples,run-check,conformance,deploy-check}.log .local/test-counts.md

# In the background from the start: the template lint (its tools install on
# first use) and the installs the later stages need.
(
  t=$SECONDS
  if scripts/lint-template.sh >.local/lint-template.log 2>&1; then s=0; else s=$?; fi
  echo "$((SECONDS - t))" >.local/lint-template.secs
  exit "$s"
) &
template_pid=$!
(scripts/tools.sh api >/dev/null && scripts/interop.sh install && scripts/conformance.sh install) >.local/installs.log 2>&1 &
installs_pid=$!

stage "fmt" cargo fmt --all -- --check
stage "local database" ensure_db
stage "clippy + test build" cargo test --workspace --all-targets --no-run --quiet
# The Lambda artefacts are built without the `dev` feature: that build must
# compile and pass clippy too (a check: it replaces no binary the tests use).
# The conformance fixtures' crate needs `dev` and is no part of it.
stage "clippy without dev (Lambda)" cargo check --workspace --exclude inbox-conformance --no-default-features --lib --bins --quiet

installs() {
  local s=0
  wait "$installs_pid" || s=$?
  if [ "$s" != 0 ]; then cat .local/installs.log >&2; fi
  return "$s"
}
stage "tool installs (wait)" installs
stage "OpenAPI lint" scripts/lint-openapi.sh
template() {
  local s=0
  wait "$template_pid" || s=$?
  cat .local/lint-template.log >&2
  echo "(the template lint ran $(cat .local/lint-template.secs 2>/dev/null || echo '?') s in the background)" >&2
  return "$s"
}
stage "template lint (wait)" template

if [ "${#filter[@]}" -gt 0 ]; then
  stage "cargo tests" cargo test --workspace --all-targets "${filter[@]}"
  echo "a filtered run: interop, the API check and the doc examples are skipped" >&2
  exit 0
fi


# background NAME COMMAND... — runs it with its output in .local/NAME.log, and its
# seconds and exit status in .local/NAME.result.
background() {
  local name=$1 t=$SECONDS s=0
  shift
  "$@" >".local/$name.log" 2>&1 || s=$?
  echo "$((SECONDS - t)) $s" >".local/$name.result"
  return "$s"
}

# The deploy path (scripts/deploy-check.sh: `sam build` of the template into arm64
# artefacts, and `sam deploy --guided` up to the credentials step), in the
# background: it builds the Lambda binaries for arm64, which no other stage needs.
background deploy-check scripts/deploy-check.sh &
deploy_pid=$!

# The SDK interop clients (Python, TypeScript: scripts/interop.sh) and the
# property-based API tests (schemathesis: scripts/api-check.sh) run beside the
# cargo tests, each against a server started as `make run` starts it, on a
# local database of their own (port 8001): the cargo tests keep theirs busy,
# and each local database uses one core.
(
  export DYNAMODB_PORT=8001 DYNAMODB_ENDPOINT=http://127.0.0.1:8001
  s=0
  background interop scripts/interop.sh || s=1
  background api-check scripts/api-check.sh || s=1
  # The README's and docs/' shell examples, on a database of their own (8042).
  background doc-examples scripts/doc-examples.sh || s=1
  # `make run`, `make token`, `make invoke`, `make openapi` as a newcomer
  # uses them, with its own ports and database (8044).
  background run-check scripts/run-check.sh || s=1
  # The official conformance runner, on its own ports and database (3350, 3351, 8035).
  background conformance scripts/conformance.sh || s=1
  exit "$s"
) &
beside_pid=$!

# Kept for the counts printed at the end (scripts/test-counts.py).
cargo_tests() { cargo test --workspace --all-targets 2>&1 | tee .local/cargo-tests.log; }
stage "cargo tests" cargo_tests
# docs/capacity.md's generated tables are what the capacity tests just measured.
stage "capacity doc" python3 scripts/capacity.py --check
beside() {
  # `local`: bash scopes dynamically, and `stage` (the caller) has a `name` too.
  local s=0 name secs status
  wait "$beside_pid" || s=$?
  for name in interop api-check doc-examples run-check conformance; do
    echo "-- $name" >&2
    cat ".local/$name.log" >&2
    if [ -f ".local/$name.result" ]; then
      read -r secs status <".local/$name.result"
      times+=("$(printf '  %-34s %5d s%s' "$name (beside the cargo tests)" "$secs" "$([ "$status" = 0 ] || echo "  FAILED ($status)")")")
    fi
  done
  return "$s"
}
stage "interop, API check, docs, make run, conformance (wait)" beside
deployed() {
  local s=0 secs status
  wait "$deploy_pid" || s=$?
  cat .local/deploy-check.log >&2
  if [ -f .local/deploy-check.result ]; then
    read -r secs status <.local/deploy-check.result
    echo "(the deploy check ran $secs s in the background)" >&2
  fi
  return "$s"
}
stage "deploy check: sam build, guided deploy (wait)" deployed
