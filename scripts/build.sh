#!/usr/bin/env bash
# The Lambda artefacts, with cargo-lambda, for arm64 (x86_64 when the arm64
# target cannot be added), always without the `dev` feature: no development
# issuer, demo data or development subcommands ship.
#
#   scripts/build.sh                      (`make build`) both functions:
#                                         <target>/lambda/{kobana-inbox-mcp,worker}/bootstrap(.zip)
#   scripts/build.sh function BIN DIR     one function's bootstrap into DIR:
#                                         what `sam build` runs (BuildMethod: makefile)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
BIN=$(scripts/tools.sh build)
export PATH="$BIN:$PATH"
ARCH=--arm64
if ! rustup target list --installed | grep -q '^aarch64-unknown-linux-gnu$'; then
  echo "scripts/build.sh: adding the aarch64-unknown-linux-gnu target to your rustup toolchain (once: the arm64 standard library)" >&2
  if ! rustup target add aarch64-unknown-linux-gnu >/dev/null 2>&1; then
    echo "NOTE: the aarch64 target cannot be added here; building x86_64 artefacts instead." >&2
    echo "      Set Architectures: [x86_64] in template.yaml to deploy them." >&2
    ARCH=--x86-64
  fi
fi
target=$(target_dir)
# LAMBDA_PROFILE: `release` (what ships), or `lambda-check` (make test's check of the deploy path).
PROFILE="${LAMBDA_PROFILE:-release}"
# `-p`: the product's package alone, so no other package's features reach it (Cargo.toml,
# default-members).
lambda() { cargo lambda build -p kobana-inbox-mcp --profile "$PROFILE" "$ARCH" --no-default-features "$@"; }

if [ "${1:-}" = function ]; then
  bin=${2:?usage: scripts/build.sh function BIN DIR}
  dir=${3:?usage: scripts/build.sh function BIN DIR}
  lambda --bin "$bin"
  mkdir -p "$dir"
  cp "$target/lambda/$bin/bootstrap" "$dir/bootstrap"
  exit 0
fi
lambda --bin kobana-inbox-mcp --bin worker --output-format zip
lambda --bin kobana-inbox-mcp --bin worker
for f in kobana-inbox-mcp worker; do
  ls -l "$target/lambda/$f/bootstrap" "$target/lambda/$f/bootstrap.zip"
done
