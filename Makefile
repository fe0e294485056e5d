# Kobana Autonomous Inbox — MCP server. `make run` and `make test` are all a
# newcomer needs; everything they use is installed and started by them.

SHELL := /bin/bash
PORT ?= 3000
CARGO ?= cargo

.PHONY: run test lint build fmt clean db db-stop token

## Local database, demo data, development issuer, then the server on 127.0.0.1:$(PORT).
run:
	PORT=$(PORT) scripts/run.sh

## Lint, then every test (unit, integration, event replay) against the local database.
test: lint
	scripts/test.sh

## Formatting and clippy exactly as CI runs them.
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

## Release build of the server.
build:
	$(CARGO) build --release

## Start / stop the local DynamoDB-compatible server (moto) on 127.0.0.1:8000.
db:
	scripts/db.sh start
db-stop:
	scripts/db.sh stop

## Print a development token: SUB, ORG, SCOPES, AUD (mcp|api|both), TTL_SECS pick its contents.
token:
	@$(CARGO) build --quiet --bin kobana-inbox-mcp
	@DEV_ISSUER_KEY=$${DEV_ISSUER_KEY:-.local/dev-issuer.key} SUB="$(SUB)" ORG="$(ORG)" SCOPES="$(SCOPES)" AUD="$(AUD)" \
		./target/debug/kobana-inbox-mcp dev-token

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
