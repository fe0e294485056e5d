//! The behaviour tests, one binary: each module exercises one surface through
//! the real handler (`http::handle`, or the local port) against the local
//! database that `make test` starts. `common` is the harness they share.

mod common;

mod auth;
mod events_replay;
mod jobs_and_webhooks;
mod local_server;
mod mcp_conformance;
mod mcp_tools;
mod rest_api;
