# Kobana Autonomous Inbox — MCP server. `make run` and `make test` are all a
# newcomer needs; everything they use is installed and started by them.

SHELL := /bin/bash
PORT ?= 3000
CARGO ?= cargo

.PHONY: run test lint build fmt clean

## Build and start the local server on 127.0.0.1:$(PORT).
run:
	$(CARGO) build --bin kobana-inbox-mcp
	@echo ""
	@echo "MCP endpoint: http://127.0.0.1:$(PORT)/mcp"
	@echo "Try:  curl -s http://127.0.0.1:$(PORT)/mcp -H 'content-type: application/json' \\"
	@echo "        -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: server/discover' \\"
	@echo "        -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}'"
	@echo ""
	PORT=$(PORT) ./target/debug/kobana-inbox-mcp

## Lint, then every test (unit, integration, event replay).
test: lint
	$(CARGO) test --all-targets

## Formatting and clippy exactly as CI runs them.
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

## Release build of the server.
build:
	$(CARGO) build --release

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
