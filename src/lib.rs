//! Kobana Autonomous Inbox: the remote MCP server and the `/api/v1` REST API
//! it mirrors, as one AWS Lambda behind API Gateway.
//!
//! ```text
//! API Gateway event ─┐
//! local HTTP port  ──┴─► http::handle(&App, Request) ─► /mcp ─► mcp (both protocol eras)
//!                                                    ├─► /.well-known/oauth-protected-resource[/mcp]
//!                                                    └─► /health
//! every protected request: auth (JWT against the cached JWKS) → rate limit → tenancy → …
//! ```
//!
//! Dependencies point one way: `http` → `mcp` → `tenancy` → `store` → `domain`;
//! `auth` knows nothing of MCP or storage; only `store` talks to DynamoDB.

pub mod api;
pub mod app;
pub mod auth;
pub mod config;
pub mod dev;
pub mod domain;
pub mod http;
pub mod jobs;
pub mod mcp;
pub mod net;
pub mod secrets;
pub mod seed;
pub mod store;
pub mod telemetry;
pub mod tenancy;
pub mod webhooks;

pub use app::App;
pub use config::Config;
