#!/usr/bin/env bash
# `make build`: the Lambda artefacts (bootstrap of the MCP function and of the
# worker) with cargo-lambda, for arm64; x86_64 when the arm64 target cannot be
# added. Output: target/lambda/{kobana-inbox-mcp,worker}/bootstrap(.zip).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(scripts/tools.sh build)
export PATH="$BIN:$PATH"
ARCH=--arm64
if ! rustup target list --installed | grep -q '^aarch64-unknown-linux-gnu$'; then
  if ! rustup target add aarch64-unknown-linux-gnu >/dev/null 2>&1; then
    echo "NOTE: the aarch64 target cannot be added here; building x86_64 artefacts instead." >&2
    echo "      Set Architectures: [x86_64] in template.yaml to deploy them." >&2
    ARCH=--x86-64
  fi
fi
cargo lambda build --release $ARCH --bin kobana-inbox-mcp --bin worker --output-format zip
cargo lambda build --release $ARCH --bin kobana-inbox-mcp --bin worker
for f in kobana-inbox-mcp worker; do
  ls -l "target/lambda/$f/bootstrap" "target/lambda/$f/bootstrap.zip"
done
