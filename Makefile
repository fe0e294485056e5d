# Kobana Autonomous Inbox — MCP server. `make run` and `make test` are all a
# newcomer needs; everything they use is installed and started by them.

SHELL := /bin/bash
PORT ?= 3000
CARGO ?= cargo

.PHONY: help run reset test conformance lint build build-McpFunction build-WorkerFunction deploy release invoke bench profile fmt clean db db-stop token openapi fuzz mail

## What each target does (this list; the default).
help:
	@awk '/^## /{doc = doc (doc ? " " : "") substr($$0, 4); next} \
	     /^[a-zA-Z-]+:/{name = substr($$1, 1, length($$1) - 1); if (doc) printf "  make %-10s %s\n", name, doc; doc = ""; next} \
	     /^[A-Z_]+ \?=/{next} {doc = ""}' $(MAKEFILE_LIST)

## Local database, demo data (or the last run's data), development issuer, webhook receiver, then the server on 127.0.0.1:$(PORT).
run:
	PORT=$(PORT) scripts/run.sh

## Forget the local data `make run` keeps between runs (.local/data): the next run starts from the demo data.
reset:
	@. scripts/lib.sh && if [ -n "$$(live_run_files)" ]; then echo "make reset: stop make run first (Ctrl-C), then reset" >&2; exit 1; fi
	rm -rf .local/data
	@echo "make reset: the next make run starts from the demo data"

## Every check CI runs — lint, unit, integration, event replay, SDK interop, API properties —
## with each stage's time; `make test T=<filter>` runs the cargo tests matching a filter only.
test:
	scripts/test.sh $(T)

## The official MCP conformance runner: the fixture server with the 2026-07-28 and 2025-11-25 sets, the product with the generic scenarios (docs/conformance.md).
conformance:
	scripts/conformance.sh

## Formatting, clippy, the SAM template (cfn-lint, sam validate --lint, checkov), the deploy workflow (schema, zizmor) and the OpenAPI document, as CI runs them.
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	scripts/lint-template.sh
	scripts/lint-openapi.sh

## Write the OpenAPI 3.1 document of /api/v1 to $(OUT) (default openapi.json), for publishing.
OUT ?= openapi.json
openapi:
	@. scripts/lib.sh && build_server && "$$(bin_path)" openapi >$(OUT)
	@echo "wrote $(OUT)"


## Lambda artefacts for arm64 (x86_64 when the target cannot be added), with cargo-lambda, without the dev feature.
build:
	scripts/build.sh

# What `sam build` runs for each function (template.yaml: BuildMethod: makefile).
build-McpFunction:
	scripts/build.sh function kobana-inbox-mcp "$(ARTIFACTS_DIR)"
build-WorkerFunction:
	scripts/build.sh function worker "$(ARTIFACTS_DIR)"

## The operator's CLI (admin, openapi) for Linux x86_64 and arm64, versioned, without the dev feature: dist/*.tar.gz and SHA256SUMS.
release:
	scripts/release.sh

## Build with SAM and deploy, asking the questions of docs/operations.md "The first deploy" (needs AWS credentials).
deploy:
	PATH="$$(scripts/tools.sh lint):$$(scripts/tools.sh build):$$PATH" sam build --build-in-source && PATH="$$(scripts/tools.sh lint):$$PATH" sam deploy --guided

## Run one recorded API Gateway event through the Lambda conversion path: make invoke EVENT=events/….json
invoke:
	@test -n "$(EVENT)" || (echo "usage: make invoke EVENT=events/<name>.json" >&2; exit 2)
	scripts/invoke.sh "$(EVENT)"

## Every fuzz target for FUZZ_SECS seconds each (default 60); fails on a crash or a broken invariant.
fuzz:
	scripts/fuzz.sh

## Side-by-side performance measurements (BENCH_BASELINE=<rev> adds the server at that commit; BENCH_ONLY=mail: only the bill corpus read against a Python peer, and a 10 MiB message's peak memory); writes .local/bench/results.md (BENCH_UPDATE=1: bench/results.md).
bench:
	scripts/bench.sh

## Instruction counts per request under callgrind: tools/call emails_get beside the bare-SDK peer's GetItem (PROFILE_BASELINE=<rev>: and before/after, with the build BENCH_BASELINE kept).
profile:
	scripts/profile.sh

## Start the local DynamoDB-compatible server (moto) on 127.0.0.1, port DYNAMODB_PORT (default 8000).
db:
	scripts/db.sh start
## Stop the local database `make db` started.
db-stop:
	scripts/db.sh stop

## Print a development token for the running server (its ports, from .local/runs/<PORT>.env; PORT picks one of several): SUB, ORG, SCOPES, AUD (mcp|api|both), TTL_SECS pick its contents.
token:
	@scripts/token.sh

## Send a sample bill (a raw message: boleto and Pix code) to the running server as the mail pipeline does; MESSAGE=<file.eml> INBOX=<id> send another.
mail:
	@scripts/mail.sh

## Format the code.
fmt:
	$(CARGO) fmt --all

## Remove the build directory.
clean:
	$(CARGO) clean
