//! Test harness: builds the real `App` and calls the real handler in-process,
//! with request builders for the MCP endpoint in both eras.

#![allow(dead_code, reason = "each test binary uses a different part of the harness")]

use std::sync::Arc;

use inbox::mcp::era::encode_name;
use inbox::{App, Config};
use lambda_http::Body;
use serde_json::{Value, json};

pub const PORT: u16 = 3000;
pub const HOST: &str = "127.0.0.1:3000";
pub const STATELESS: &str = "2026-07-28";

/// The valid 2026-07-28 envelope with the given client capabilities.
pub fn envelope_with(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "1.0.0"},
    })
}

pub fn envelope() -> Value {
    envelope_with(json!({}))
}

pub struct Harness {
    pub app: Arc<App>,
}

impl Harness {
    pub fn new() -> Self {
        Self::with_config(Config::local(PORT))
    }

    pub fn with_config(config: Config) -> Self {
        Self { app: Arc::new(App::new(config)) }
    }

    /// A POST to /mcp with the headers every client sends and no routing headers.
    pub fn post(&self) -> Req<'_> {
        Req::new(self, "POST", "/mcp")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
    }

    pub fn request(&self, method: &str, path: &str) -> Req<'_> {
        Req::new(self, method, path)
    }

    /// A complete stateless request: envelope merged into `params`, and the
    /// routing headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`).
    pub fn stateless(&self, id: Value, method: &str, params: Value) -> Req<'_> {
        self.stateless_with(id, method, params, envelope())
    }

    pub fn stateless_with(&self, id: Value, method: &str, mut params: Value, env: Value) -> Req<'_> {
        params["_meta"] = env;
        let mirrored = match method {
            "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str).map(str::to_owned),
            "resources/read" => params.get("uri").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        let mut req = self
            .post()
            .header("mcp-protocol-version", STATELESS)
            .header("mcp-method", method)
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        if let Some(name) = mirrored {
            req = req.header("mcp-name", &encode_name(&name));
        }
        req
    }

    /// A handshake-era request; `version` None sends no version header (2025-03-26).
    pub fn handshake(&self, id: Value, method: &str, params: Value, version: Option<&str>) -> Req<'_> {
        let mut req = self.post().json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        if let Some(v) = version {
            req = req.header("mcp-protocol-version", v);
        }
        req
    }
}

pub struct Req<'a> {
    harness: &'a Harness,
    method: String,
    path: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Body,
}

impl<'a> Req<'a> {
    fn new(harness: &'a Harness, method: &str, path: &str) -> Self {
        Req {
            harness,
            method: method.into(),
            path: path.into(),
            headers: vec![("host".into(), HOST.as_bytes().to_vec())],
            body: Body::Empty,
        }
    }

    /// Set a header, replacing any earlier value of the same name.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.as_bytes().to_vec()));
        self
    }

    /// Add a header line without removing earlier ones.
    pub fn append_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.as_bytes().to_vec()));
        self
    }

    /// Set a header to raw bytes (for non-ASCII values).
    pub fn header_bytes(mut self, name: &str, value: &[u8]) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_vec()));
        self
    }

    pub fn without(mut self, name: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    pub fn json(mut self, value: &Value) -> Self {
        self.body = Body::Text(value.to_string());
        self
    }

    pub fn raw(mut self, bytes: &[u8]) -> Self {
        self.body = Body::Binary(bytes.to_vec());
        self
    }

    pub fn text(mut self, text: &str) -> Self {
        self.body = Body::Text(text.to_owned());
        self
    }

    pub fn build(self) -> lambda_http::Request {
        let mut builder = http::Request::builder().method(self.method.as_str()).uri(self.path.as_str());
        for (name, value) in &self.headers {
            builder = builder.header(name.as_str(), http::HeaderValue::from_bytes(value).expect("test header value"));
        }
        builder.body(self.body).expect("test request")
    }

    pub async fn send(self) -> Resp {
        let app = Arc::clone(&self.harness.app);
        let response = inbox::http::handle(&app, self.build()).await;
        Resp::from(response)
    }
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

impl From<lambda_http::Response<Body>> for Resp {
    fn from(response: lambda_http::Response<Body>) -> Self {
        let (parts, body) = response.into_parts();
        let body = match body {
            Body::Text(t) => t.into_bytes(),
            Body::Binary(b) => b,
            _ => Vec::new(),
        };
        Resp { status: parts.status.as_u16(), headers: parts.headers, body }
    }
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The JSON-RPC error code of an error response.
    pub fn code(&self) -> i64 {
        self.json()["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error response: {}", self.json()))
    }

    pub fn result(&self) -> Value {
        let body = self.json();
        assert!(body.get("error").is_none(), "expected a result, got {body}");
        body["result"].clone()
    }

    /// Assert a JSON-RPC error with this status and code, echoing `id`.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: i64, id: Value) {
        let body = self.json();
        assert_eq!(self.status, status, "status; body {body}");
        assert_eq!(body["error"]["code"], code, "code; body {body}");
        assert_eq!(body["id"], id, "id; body {body}");
        assert_eq!(body["jsonrpc"], "2.0");
        assert_eq!(self.header("content-type"), Some("application/json"));
        assert_eq!(self.header("cache-control"), Some("no-store"));
    }

    /// Assert a decorated stateless success.
    #[track_caller]
    pub fn assert_stateless_ok(&self, id: Value) -> Value {
        let body = self.json();
        assert_eq!(self.status, 200, "body {body}");
        assert_eq!(body["id"], id);
        let result = self.result();
        assert_eq!(result["resultType"], "complete", "result {result}");
        let info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
        assert_eq!(info["name"], "kobana-autonomous-inbox");
        assert!(info["version"].is_string());
        assert_eq!(self.header("cache-control"), Some("no-store"));
        assert_eq!(self.header("mcp-protocol-version"), Some(STATELESS));
        assert!(self.header("mcp-session-id").is_none());
        result
    }
}
