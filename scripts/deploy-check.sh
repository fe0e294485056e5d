#!/usr/bin/env bash
# The deploy path under test (part of `make test`), offline and without credentials:
#   1. `sam build --build-in-source` on template.yaml, as `make deploy` runs it (SAM's
#      makefile builder → the Makefile's build-<Function> targets → scripts/build.sh →
#      cargo-lambda, arm64 cross-linked with zig), in the `lambda-check` profile (the
#      release profile's minutes of optimisation left out: LAMBDA_PROFILE=release checks
#      those too). Both artefacts must be arm64 executables without the dev feature;
#      their sizes are printed.
#   2. `sam deploy --guided` against the template, answered as docs/operations.md's
#      "The first deploy" says, up to the credentials step: it must ask exactly the
#      documented questions (no "has no authentication" prompt, no parameter without a
#      default but OAuthIssuer and JwksUrl), QUESTIONS of them, and stop at the missing
#      credentials. SES receiving (InboundMailDomain) is off by default, so the guided
#      deploy never needs a domain; the worker artefact serves it (no third function).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.local/deploy-check
rm -rf "$DIR"
mkdir -p "$DIR"
export SAM_CLI_TELEMETRY=0
LINT=$(scripts/tools.sh lint)
BUILD=$(scripts/tools.sh build)
failed=0
fail() { echo "  FAIL $*"; failed=1; }
# Stack name and region, the 21 template parameters (docs/operations.md's table, with
# AttachmentRetentionDays, InboundMailDomain and ContentPolicyCap), then SAM's six own questions.
QUESTIONS=29

# 1. The build.
if ! LAMBDA_PROFILE="${LAMBDA_PROFILE:-lambda-check}" PATH="$LINT:$BUILD:$PATH" \
  "$LINT/sam" build --build-in-source --build-dir "$DIR/build" --cache-dir "$DIR/cache" >"$DIR/build.log" 2>&1; then
  cat "$DIR/build.log" >&2
  echo "deploy-check: sam build failed" >&2
  exit 1
fi
grep -q "Build Succeeded" "$DIR/build.log" || fail "sam build did not say Build Succeeded"
for function in McpFunction WorkerFunction; do
  artefact="$DIR/build/$function/bootstrap"
  if [ ! -x "$artefact" ]; then fail "$function: no executable bootstrap"; continue; fi
  # ELF, 64-bit, little-endian, e_machine 183 (AArch64): what provided.al2023 on arm64 runs.
  header=$(od -An -tu1 -N20 "$artefact" | tr -s ' \n' ' ')
  case "$header" in
    " 127 69 76 70 2 1 "*" 183 0 "*) ;;
    *) fail "$function: not an arm64 ELF executable ($header)" ;;
  esac
  # The development subcommands are the dev feature's: their help text must be absent.
  if grep -q "Print a development token" "$artefact"; then fail "$function: built with the dev feature"; fi
  echo "  ok   $function: $artefact, $(stat -c %s "$artefact") bytes, arm64, no dev feature"
done
grep -q "McpFunction" "$DIR/build/template.yaml" || fail "the built template names no McpFunction"

# 2. The guided deploy, up to the credentials step, in a copy (it writes samconfig.toml).
mkdir -p "$DIR/guided"
cp template.yaml samconfig.toml "$DIR/guided/"
answers=(
  "" ""                                   # stack name, region: samconfig.toml's
  "https://issuer.example.com/"           # OAuthIssuer
  "https://issuer.example.com/jwks.json"  # JwksUrl
)
for _ in $(seq 1 30); do answers+=(""); done # every other question: its default
(
  cd "$DIR/guided"
  printf '%s\n' "${answers[@]}" | env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN \
    -u AWS_PROFILE -u AWS_CONTAINER_CREDENTIALS_FULL_URI -u AWS_CONTAINER_CREDENTIALS_RELATIVE_URI \
    -u AWS_WEB_IDENTITY_TOKEN_FILE AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null \
    AWS_EC2_METADATA_DISABLED=true timeout 120 "$LINT/sam" deploy --guided -t template.yaml
) >"$DIR/guided.log" 2>&1 || true
# Each question is printed as "\t<question> [<default>]: ".
asked=$(python3 -c 'import re, sys; print("\n".join(re.findall(r"\t([A-Z][^\t\n\[]*?) \[[^\]\n]*\]: ", open(sys.argv[1]).read())))' "$DIR/guided.log")
parameters=$(python3 -c '
import re
names = re.findall(r"^  (\w+):\n    Type:", open("template.yaml").read().split("\nConditions:")[0], re.M)
print("\n".join("Parameter " + n for n in names))')
expected=$(printf '%s\n' "Stack Name" "AWS Region" "$parameters" "Confirm changes before deploy" \
  "Allow SAM CLI IAM role creation" "Disable rollback" "Save arguments to configuration file" \
  "SAM configuration file" "SAM configuration environment")
if [ "$(echo "$expected" | wc -l)" != "$QUESTIONS" ]; then
  fail "the template now makes $(echo "$expected" | wc -l) questions, not $QUESTIONS: update docs/operations.md's table and QUESTIONS"
fi
if [ "$asked" = "$expected" ]; then
  echo "  ok   sam deploy --guided asks the documented questions only ($(echo "$asked" | wc -l))"
else
  fail "sam deploy --guided asked other questions:"
  diff <(echo "$expected") <(echo "$asked") | sed 's/^/         /' || true
fi
if grep -q "has no authentication" "$DIR/guided.log"; then fail "sam deploy --guided asks about authentication"; fi
if grep -q "Unable to locate credentials" "$DIR/guided.log"; then
  echo "  ok   sam deploy --guided stops at the credentials step"
else
  fail "sam deploy --guided did not reach the credentials step (log: $DIR/guided.log)"
fi

if [ "$failed" = 0 ]; then echo "deploy-check: passed"; else echo "deploy-check: FAILED (logs in $DIR)"; fi
exit "$failed"
