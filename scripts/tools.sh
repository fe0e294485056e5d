#!/usr/bin/env bash
# Installs the deployment tools (cfn-lint, the SAM CLI, cargo-lambda with zig)
# into .local/tools on first use and prints the directory to put on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS=.local/tools
if [ ! -x "$TOOLS/bin/cfn-lint" ] || [ ! -x "$TOOLS/bin/sam" ] || [ ! -x "$TOOLS/bin/cargo-lambda" ]; then
  echo "installing cfn-lint, aws-sam-cli and cargo-lambda into $TOOLS ..." >&2
  python3 -m venv "$TOOLS"
  "$TOOLS/bin/pip" install --quiet --disable-pip-version-check -r scripts/tools-requirements.txt
fi
echo "$PWD/$TOOLS/bin"
