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
//! local mode: worker::poll runs the same worker::run in-process
//! ```
//!
//! Dependencies point one way, layer by layer (`scripts/check-layers.py`,
//! run by `make lint`, keeps it so): `app` (composition root) → `edge` →
//! `mcp` | `config` → `api` | `worker` → `store` | `auth` | `outbound` | `secrets` → `sys` |
//! `tls` | `json` → `domain` (pure). `app` builds each layer's narrow
//! context once per container (`edge::Edge`, `api::Services`,
//! `worker::Runner`); only `store` talks to DynamoDB and names keys; only
//! `edge` and the binaries see `lambda_http` or `hyper`.
//!
//! `dev` builds also have `conformance`: the official conformance runner's
//! fixture catalogue, served through the same pipeline by `src/bin/conformance.rs`.

pub mod api;
pub mod app;
pub mod auth;
pub mod cli;
pub mod config;
#[cfg(feature = "dev")]
pub mod conformance;
#[cfg(feature = "dev")]
pub mod dev;
pub mod domain;
pub mod edge;
pub mod expiring;
pub mod gate;
pub mod json;
pub mod keyfile;
pub mod mcp;
pub mod outbound;
pub mod secret_store;
pub mod secrets;
#[cfg(feature = "dev")]
pub mod seed;
pub mod store;
pub mod sys;
pub mod telemetry;
pub mod tls;
pub mod worker;

pub use app::App;
pub use config::Config;
