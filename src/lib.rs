//! Kobana Autonomous Inbox: the remote MCP server and the `/api/v1` REST API
//! it mirrors, as one AWS Lambda behind API Gateway.
//!
//! ```text
//! API Gateway event ─┐
//! local HTTP port  ──┴─► http::handle(&App, Request) ─► /mcp ─► mcp (both protocol eras)
//!                                                    └─► /health
//! ```
//!
//! Dependencies point one way: `http` → `mcp`; `mcp` knows no HTTP framework
//! types beyond the shared `http` header map.

pub mod app;
pub mod config;
pub mod http;
pub mod mcp;
pub mod telemetry;

pub use app::App;
pub use config::Config;
