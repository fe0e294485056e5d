//! Benchmark peer for `make bench`: the official Rust MCP SDK (rmcp) serving
//! MCP Streamable HTTP at `POST /mcp` on 127.0.0.1:$PORT, stateless, with
//! JSON (not SSE) responses, 21 tools (the same count as our server), behind a
//! static bearer check (`Authorization: Bearer $BEARER`, else 401). Our server
//! verifies a real JWT instead, so the comparison favours this peer a little.
//!
//! Built on its own (not part of the main package):
//! `CARGO_TARGET_DIR=target/rmcp-peer cargo build --release --manifest-path bench/rmcp-peer/Cargo.toml`

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// Free-text query.
    query: String,
    /// Maximum number of results (1-100).
    limit: Option<u32>,
    /// Opaque cursor from a previous page.
    cursor: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct GetArgs {
    /// Identifier of the item.
    id: String,
    /// Workspace the item belongs to.
    workspace_id: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ListArgs {
    /// Workspace to list from.
    workspace_id: String,
    /// Page size (1-100).
    page_size: Option<u32>,
    /// Only items created before this RFC 3339 instant.
    before: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct UpdateArgs {
    /// Identifier of the item.
    id: String,
    /// New status.
    status: String,
    /// Optional note kept with the change.
    note: Option<String>,
    /// Priority, 0 (lowest) to 5.
    priority: Option<i32>,
}

fn found(kind: &str, a: &GetArgs) -> String {
    json!({"kind": kind, "id": a.id, "workspace_id": a.workspace_id, "status": "open",
           "amount_cents": 12990, "due": "2026-12-10"})
    .to_string()
}

fn page(kind: &str, scope: &str, size: Option<u32>, after: Option<&str>) -> String {
    json!({"kind": kind, "scope": scope, "items": [{"id": format!("{kind}_1")}, {"id": format!("{kind}_2")}],
           "page_size": size.unwrap_or(20), "after": after, "next_cursor": null})
    .to_string()
}

fn updated(kind: &str, a: &UpdateArgs) -> String {
    json!({"kind": kind, "id": a.id, "status": a.status, "note": a.note, "priority": a.priority.unwrap_or(0)})
        .to_string()
}

#[derive(Clone)]
struct Peer {
    tool_router: Arc<ToolRouter<Peer>>,
}

#[tool_router]
impl Peer {
    #[tool(description = "Search emails by free text")]
    fn tool_01(&self, Parameters(a): Parameters<SearchArgs>) -> String {
        page("email", &a.query, a.limit, a.cursor.as_deref())
    }
    #[tool(description = "Get one email")]
    fn tool_02(&self, Parameters(a): Parameters<GetArgs>) -> String {
        found("email", &a)
    }
    #[tool(description = "List emails in a workspace")]
    fn tool_03(&self, Parameters(a): Parameters<ListArgs>) -> String {
        page("email", &a.workspace_id, a.page_size, a.before.as_deref())
    }
    #[tool(description = "Update an email's triage status")]
    fn tool_04(&self, Parameters(a): Parameters<UpdateArgs>) -> String {
        updated("email", &a)
    }
    #[tool(description = "Search bank slips")]
    fn tool_05(&self, Parameters(a): Parameters<SearchArgs>) -> String {
        page("bank_slip", &a.query, a.limit, a.cursor.as_deref())
    }
    #[tool(description = "Get one bank slip")]
    fn tool_06(&self, Parameters(a): Parameters<GetArgs>) -> String {
        found("bank_slip", &a)
    }
    #[tool(description = "List bank slips in a workspace")]
    fn tool_07(&self, Parameters(a): Parameters<ListArgs>) -> String {
        page("bank_slip", &a.workspace_id, a.page_size, a.before.as_deref())
    }
    #[tool(description = "Update a bank slip")]
    fn tool_08(&self, Parameters(a): Parameters<UpdateArgs>) -> String {
        updated("bank_slip", &a)
    }
    #[tool(description = "Search Pix charges")]
    fn tool_09(&self, Parameters(a): Parameters<SearchArgs>) -> String {
        page("pix", &a.query, a.limit, a.cursor.as_deref())
    }
    #[tool(description = "Get one Pix charge")]
    fn tool_10(&self, Parameters(a): Parameters<GetArgs>) -> String {
        found("pix", &a)
    }
    #[tool(description = "List Pix charges in a workspace")]
    fn tool_11(&self, Parameters(a): Parameters<ListArgs>) -> String {
        page("pix", &a.workspace_id, a.page_size, a.before.as_deref())
    }
    #[tool(description = "Update a Pix charge")]
    fn tool_12(&self, Parameters(a): Parameters<UpdateArgs>) -> String {
        updated("pix", &a)
    }
    #[tool(description = "Search payees")]
    fn tool_13(&self, Parameters(a): Parameters<SearchArgs>) -> String {
        page("payee", &a.query, a.limit, a.cursor.as_deref())
    }
    #[tool(description = "Get one payee")]
    fn tool_14(&self, Parameters(a): Parameters<GetArgs>) -> String {
        found("payee", &a)
    }
    #[tool(description = "List payees in a workspace")]
    fn tool_15(&self, Parameters(a): Parameters<ListArgs>) -> String {
        page("payee", &a.workspace_id, a.page_size, a.before.as_deref())
    }
    #[tool(description = "Update a payee")]
    fn tool_16(&self, Parameters(a): Parameters<UpdateArgs>) -> String {
        updated("payee", &a)
    }
    #[tool(description = "Search tasks")]
    fn tool_17(&self, Parameters(a): Parameters<SearchArgs>) -> String {
        page("task", &a.query, a.limit, a.cursor.as_deref())
    }
    #[tool(description = "Get one task")]
    fn tool_18(&self, Parameters(a): Parameters<GetArgs>) -> String {
        found("task", &a)
    }
    #[tool(description = "List tasks in a workspace")]
    fn tool_19(&self, Parameters(a): Parameters<ListArgs>) -> String {
        page("task", &a.workspace_id, a.page_size, a.before.as_deref())
    }
    #[tool(description = "Update a task")]
    fn tool_20(&self, Parameters(a): Parameters<UpdateArgs>) -> String {
        updated("task", &a)
    }
    #[tool(description = "Get the workspace summary")]
    fn tool_21(&self, Parameters(a): Parameters<GetArgs>) -> String {
        found("workspace", &a)
    }
}

// The router is built once and shared: rmcp's stateless mode calls the
// service factory for every request.
#[tool_handler(router = self.tool_router)]
impl ServerHandler for Peer {}

type Body = BoxBody<Bytes, Infallible>;
type Mcp = StreamableHttpService<Peer, NeverSessionManager>;

/// `POST /mcp` with the right bearer goes to rmcp; anything else is 404 / 401.
#[derive(Clone)]
struct Gate {
    inner: Mcp,
    expected: Arc<[u8]>,
}

fn plain(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = status;
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, http::HeaderValue::from_static("Bearer"));
    }
    response
}

impl tower_service::Service<Request<Incoming>> for Gate {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Incoming>) -> Self::Future {
        if req.uri().path() != "/mcp" {
            return Box::pin(std::future::ready(Ok(plain(StatusCode::NOT_FOUND))));
        }
        let authorized =
            req.headers().get(header::AUTHORIZATION).is_some_and(|value| value.as_bytes() == &*self.expected);
        if !authorized {
            return Box::pin(std::future::ready(Ok(plain(StatusCode::UNAUTHORIZED))));
        }
        self.inner.call(req)
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(3403);
    let bearer = std::env::var("BEARER").unwrap_or_default();
    if bearer.is_empty() {
        eprintln!("BEARER must be set");
        std::process::exit(2);
    }
    let peer = Peer { tool_router: Arc::new(Peer::tool_router()) };
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let mcp: Mcp =
        StreamableHttpService::new(move || Ok(peer.clone()), Arc::new(NeverSessionManager::default()), config);
    let gate = Gate { inner: mcp, expected: format!("Bearer {bearer}").into_bytes().into() };

    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        let service = TowerToHyperService::new(gate.clone());
        tokio::spawn(async move {
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}
