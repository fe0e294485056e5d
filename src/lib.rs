//! Kobana Autonomous Inbox: the remote MCP server and the `/api/v1` REST API
//! it mirrors, as one AWS Lambda behind API Gateway, plus the worker Lambda
//! that runs long operations.
//!
//! ```text
//! API Gateway event ─┐
//! local HTTP port  ──┴─► http::handle(&App, Request) ─► /mcp ─► mcp (both eras) ─► tool row ─┐
//!                                                    ├─► /api/v1 ─► api::rest ─► api::dispatch ◄┘ in-process
//!                                                    └─► /.well-known/…, /health
//! every protected request: auth (JWT, cached JWKS) → rate limit → tenancy → handler → store
//! DynamoDB stream (new jobs) ─► bin/worker ─► jobs::run ─► effects (boleto, webhooks)
//! local mode: jobs::poll runs the same jobs::run in-process
//! ```
//!
//! Dependencies point one way: `http` → `mcp` → `api` → `store` → `domain`;
//! `jobs` → `store`, `webhooks`; `auth` knows nothing of MCP or storage; only
//! `store` talks to DynamoDB; only `http` and the binaries see `lambda_http`.

pub mod api;
pub mod app;
pub mod auth;
pub mod config;
pub mod dev;
pub mod domain;
pub mod edge;
pub mod jobs;
pub mod json;
pub mod mcp;
pub mod outbound;
pub mod secrets;
pub mod seed;
pub mod store;
pub mod sys;
pub mod telemetry;

pub use app::App;
pub use config::Config;
