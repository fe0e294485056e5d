//! Kobana Autonomous Inbox: the remote MCP server and the `/api/v1` REST API
//! it mirrors, as one AWS Lambda behind API Gateway, plus the worker Lambda
//! that runs long operations.
//!
//! ```text
//! API Gateway event ─┐
//! local HTTP port  ──┴─► edge::handle(&Edge, Request) ─┬─► /mcp ─► gate ─► mcp::prepare ─► admit ─► mcp::answer ─► tool row ─┐
//!                                                      ├─► /api/v1 ─► gate ─► admit ─► tenancy ─► api::authorize ─► dispatch ◄┘
//!                                                      └─► /.well-known/…, /health              (in-process, one permit each)
//! admit = bearer JWT against the cached JWKS, then the shared rate limit
//! DynamoDB stream (new jobs) ─► bin/worker ─► worker::stream ─► worker::run ─► effects (boleto, webhooks)
//! SES receipt (S3 + Lambda)   ─► bin/worker ─► inbound ─► api::invoke(INGEST), as the mail pipeline
//! local mode: worker::poll runs the same worker::run in-process
//! ```
//!
//! Dependencies point one way, layer by layer, and each layer is a crate of
//! the workspace (a wrong-way import does not compile; `tests/it/layers.rs`
//! refuses a wrong-way dependency): this package (`app`, the composition
//! root, → `edge` → `config`, `cli`, `dev`, `seed`) → `inbox-mcp` →
//! `inbox-api` | `inbox-worker` → `inbox-store` | `inbox-auth` |
//! `inbox-outbound` → `inbox-support` → `inbox-domain` (pure). `app` builds
//! each layer's narrow context once per container (`edge::Edge`,
//! `api::Services`, `worker::Runner`); only `store` talks to DynamoDB and
//! names keys; only `edge` and the binaries see `lambda_http` or `hyper`.
//!
//! The official conformance runner's fixture catalogue is a crate of its own
//! (`inbox-conformance`) over this one's public API; nothing here depends on it.

// The layers below this crate, under the names the code and the tests use for them.
pub use inbox_api as api;
pub use inbox_auth as auth;
pub use inbox_domain as domain;
pub use inbox_mail as mail;
pub use inbox_mcp as mcp;
pub use inbox_outbound as outbound;
pub use inbox_store as store;
pub use inbox_support::{expiring, gate, json, keyfile, secret_store, secrets, sys, telemetry, tls};
pub use inbox_worker as worker;

pub mod app;
pub mod cli;
pub mod config;
#[cfg(feature = "dev")]
pub mod dev;
pub mod edge;
pub mod inbound;
#[cfg(feature = "dev")]
pub mod seed;

pub use app::App;
pub use config::Config;
