#!/usr/bin/env bash
# `make release`: the operator's CLI (`kobana-inbox-mcp`: admin, openapi, serve) for
# Linux x86_64 and arm64, without the dev feature, versioned: the same program as the
# Lambda artefacts, built the same way (cargo-lambda, cross-linked by zig, release
# profile). Writes dist/kobana-inbox-mcp-<version>-linux-<arch>.tar.gz (the binary,
# LICENSE, CHANGELOG.md) and dist/SHA256SUMS. docs/operations.md, "The operator's CLI".
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
BIN=$(scripts/tools.sh build)
export PATH="$BIN:$PATH"
version=$(cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "kobana-inbox-mcp"))')
target=$(target_dir)
if ! grep -q "^## \[$version\]" CHANGELOG.md; then
  echo "make release: CHANGELOG.md has no entry for $version" >&2
  exit 1
fi
for triple in aarch64-unknown-linux-gnu x86_64-unknown-linux-gnu; do
  if ! rustup target list --installed | grep -q "^$triple\$"; then
    echo "make release: adding the $triple target to your rustup toolchain (once)" >&2
    rustup target add "$triple"
  fi
done
rm -rf dist
mkdir -p dist
for arch in arm64 x86_64; do
  flag=--arm64
  if [ "$arch" = x86_64 ]; then flag=--x86-64; fi
  echo "make release: building kobana-inbox-mcp $version for linux-$arch (minutes)…" >&2
  cargo lambda build -p kobana-inbox-mcp --release "$flag" --no-default-features --bin kobana-inbox-mcp
  name="kobana-inbox-mcp-$version-linux-$arch"
  stage="dist/$name"
  mkdir -p "$stage"
  cp "$target/lambda/kobana-inbox-mcp/bootstrap" "$stage/kobana-inbox-mcp"
  cp LICENSE CHANGELOG.md "$stage/"
  tar -czf "dist/$name.tar.gz" -C "$stage" kobana-inbox-mcp LICENSE CHANGELOG.md
  rm -rf "$stage"
done
(cd dist && sha256sum ./*.tar.gz >SHA256SUMS)
ls -l dist
cat dist/SHA256SUMS
