# Kobana Autonomous Inbox — MCP server. `make run` and `make test` are all a
# newcomer needs; everything they use is installed and started by them.

SHELL := /bin/bash
PORT ?= 3000
CARGO ?= cargo

.PHONY: run test conformance lint build build-McpFunction build-WorkerFunction deploy invoke bench fmt clean db db-stop token openapi fuzz

## Local database, demo data, development issuer, then the server on 127.0.0.1:$(PORT).
run:
	PORT=$(PORT) scripts/run.sh

## Every check CI runs — lint, unit, integration, event replay, SDK interop, API properties —
## with each stage's time; `make test T=<filter>` runs the cargo tests matching a filter only.
test:
	scripts/test.sh $(T)

## The official MCP conformance runner: the fixture server with the 2026-07-28 and 2025-11-25 sets, the product with the generic scenarios (docs/conformance.md).
conformance:
	scripts/conformance.sh

## Formatting, clippy, one-way module layers, the SAM template (cfn-lint, sam validate --lint) and the OpenAPI document (openapi-spec-validator), as CI runs them.
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings
	python3 scripts/check-layers.py
	scripts/lint-template.sh
	scripts/lint-openapi.sh

## Write the OpenAPI 3.1 document of /api/v1 to $(OUT) (default openapi.json), for publishing.
OUT ?= openapi.json
openapi:
	@$(CARGO) build --quiet --bin kobana-inbox-mcp
	@. scripts/lib.sh && "$$(bin_path)" openapi >$(OUT)
	@echo "wrote $(OUT)"


## Lambda artefacts for arm64 (x86_64 when the target cannot be added), with cargo-lambda, without the dev feature.
build:
	scripts/build.sh

# What `sam build` runs for each function (template.yaml: BuildMethod: makefile).
build-McpFunction:
	scripts/build.sh function kobana-inbox-mcp "$(ARTEFACTS_DIR)"
build-WorkerFunction:
	scripts/build.sh function worker "$(ARTEFACTS_DIR)"

## Build with SAM and deploy, asking for the parameters (needs AWS credentials).
deploy:
	PATH="$$(scripts/tools.sh lint):$$(scripts/tools.sh build):$$PATH" sam build --build-in-source && PATH="$$(scripts/tools.sh lint):$$PATH" sam deploy --guided

## Run one recorded API Gateway event through the Lambda conversion path: make invoke EVENT=events/….json
invoke:
	@test -n "$(EVENT)" || (echo "usage: make invoke EVENT=events/<name>.json" >&2; exit 2)
	scripts/invoke.sh "$(EVENT)"

## Every fuzz target for FUZZ_SECS seconds each (default 60); fails on a crash or a broken invariant.
fuzz:
	scripts/fuzz.sh

## Side-by-side performance measurements; writes bench/results.md.
bench:
	scripts/bench.sh

## Start / stop the local DynamoDB-compatible server (moto) on 127.0.0.1:8000.
db:
	scripts/db.sh start
db-stop:
	scripts/db.sh stop

## Print a development token: SUB, ORG, SCOPES, AUD (mcp|api|both), TTL_SECS pick its contents.
token:
	@$(CARGO) build --quiet --bin kobana-inbox-mcp
	@DEV_ISSUER_KEY=$${DEV_ISSUER_KEY:-.local/dev-issuer.key} SUB="$(SUB)" ORG="$(ORG)" SCOPES="$(SCOPES)" AUD="$(AUD)" \
		"$$(. scripts/lib.sh && bin_path)" dev-token

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
