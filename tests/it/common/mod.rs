//! Test harness: builds the real `App` and calls the real handler in-process,
//! with request builders for the MCP endpoint in both eras.

pub mod proxy;
pub mod shapes;
pub mod third_party;

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use inbox::app::Serving;
use inbox::dev::DevIssuer;
use inbox::mcp::era::encode_name;
use inbox::{App, Config};
use lambda_http::Body;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::OnceCell;

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

/// A JWKS endpoint on loopback whose answer a test can change.
pub struct JwksServer {
    pub url: String,
    pub document: Arc<RwLock<String>>,
    pub hits: Arc<AtomicU64>,
    /// 0 = serve the document, 1 = garbage, 2 = hang, 3 = HTTP 500, 4 = a redirect.
    pub mode: Arc<AtomicU8>,
}

impl JwksServer {
    pub async fn start(document: String) -> JwksServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind JWKS listener");
        let url = format!("http://{}/jwks.json", listener.local_addr().expect("addr"));
        let document = Arc::new(RwLock::new(document));
        let hits = Arc::new(AtomicU64::new(0));
        let mode = Arc::new(AtomicU8::new(0));
        let (d, h, m) = (Arc::clone(&document), Arc::clone(&hits), Arc::clone(&mode));
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let (d, h, m) = (Arc::clone(&d), Arc::clone(&h), Arc::clone(&m));
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |_req: http::Request<hyper::body::Incoming>| {
                        let (d, h, m) = (Arc::clone(&d), Arc::clone(&h), Arc::clone(&m));
                        async move {
                            h.fetch_add(1, Ordering::SeqCst);
                            let (status, body) = match m.load(Ordering::SeqCst) {
                                0 => (200, d.read().expect("lock").clone()),
                                1 => (200, "<html>not json".to_owned()),
                                2 => {
                                    tokio::time::sleep(Duration::from_secs(30)).await;
                                    (200, String::new())
                                }
                                4 => (302, String::new()),
                                _ => (500, String::new()),
                            };
                            let mut response = http::Response::new(http_body_util::Full::new(bytes::Bytes::from(body)));
                            *response.status_mut() = http::StatusCode::from_u16(status).expect("status");
                            if status == 302 {
                                response
                                    .headers_mut()
                                    .insert("location", http::HeaderValue::from_static("http://127.0.0.1:1/elsewhere"));
                            }
                            Ok::<_, std::convert::Infallible>(response)
                        }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        });
        JwksServer { url, document, hits, mode }
    }

    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::SeqCst)
    }

    pub fn set_mode(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
    }

    pub fn set_document(&self, document: String) {
        *self.document.write().expect("lock") = document;
    }
}

/// The local DynamoDB-compatible server `make test` starts.
pub fn dynamodb_endpoint() -> String {
    std::env::var("DYNAMODB_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:8000".into())
}

/// A table name no other test uses.
pub fn unique_table() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("t-{}-{nanos}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst))
}

pub const ISSUER: &str = "https://auth.example.com";
pub const MCP_RESOURCE: &str = "http://127.0.0.1:3000/mcp";
pub const API_AUDIENCE: &str = "http://127.0.0.1:3000/api/v1";

/// A test environment: its own table (seeded with the demo data), its own
/// JWKS server and signing key, and the real `App` built from them. Built on
/// first use, inside the test's runtime.
pub struct Harness {
    pub issuer: DevIssuer,
    pub table: String,
    config_hook: Box<dyn Fn(&mut Config) + Send + Sync>,
    built: OnceCell<(Arc<App>, Arc<JwksServer>)>,
    /// Seeded with the demo data (an empty table otherwise).
    seeded: bool,
    /// What the server serves besides its configuration (the product's catalogue by default).
    serving: fn() -> Serving,
}

impl Harness {
    pub fn new() -> Self {
        Self::with_config(|_| {})
    }

    /// A harness whose configuration `hook` adjusts before the app is built.
    pub fn with_config(hook: impl Fn(&mut Config) + Send + Sync + 'static) -> Self {
        Self {
            issuer: DevIssuer::generate().expect("test signing key"),
            table: unique_table(),
            config_hook: Box::new(hook),
            built: OnceCell::new(),
            seeded: true,
            serving: Serving::default,
        }
    }

    /// A harness whose server serves the conformance fixture catalogue
    /// through the same pipeline, and runs its tool jobs (the extension job
    /// kind it registers): `inbox_conformance::serving`.
    pub fn fixtures() -> Self {
        Self { serving: inbox_conformance::serving, ..Self::new() }
    }

    /// A harness on an empty table: no organization, workspace or person.
    pub fn empty() -> Self {
        Self { seeded: false, ..Self::new() }
    }

    /// The configuration every harness starts from.
    pub fn base_config(table: &str, jwks_url: &str) -> Config {
        let mut config = Config::local(PORT);
        config.auth.issuer = ISSUER.into();
        config.auth.jwks_url = jwks_url.into();
        config.auth.api_audience = API_AUDIENCE.into();
        config.store.table = table.into();
        config.store.endpoint = Some(dynamodb_endpoint());
        config
    }

    async fn built(&self) -> &(Arc<App>, Arc<JwksServer>) {
        self.built
            .get_or_init(|| async {
                let jwks = Arc::new(JwksServer::start(self.issuer.jwks().to_string()).await);
                let mut config = Self::base_config(&self.table, &jwks.url);
                (self.config_hook)(&mut config);
                let app = App::build_with(config, (self.serving)()).await.expect("app builds");
                app.store.create_table().await.unwrap_or_else(|e| {
                    panic!("cannot create a table at {} ({e}); start it with `make db`", dynamodb_endpoint())
                });
                if self.seeded {
                    inbox::seed::seed(&app.store, &app.secrets).await.expect("seed");
                }
                (Arc::new(app), jwks)
            })
            .await
    }

    pub async fn app(&self) -> Arc<App> {
        Arc::clone(&self.built().await.0)
    }

    pub async fn jwks(&self) -> Arc<JwksServer> {
        Arc::clone(&self.built().await.1)
    }

    /// A token from this harness's issuer.
    pub fn token_for(&self, sub: &str, org: &str, scopes: &str) -> String {
        self.issuer.mint(ISSUER, &[MCP_RESOURCE.into(), API_AUDIENCE.into()], sub, org, scopes, 3600).expect("mint")
    }

    /// The demo admin with every scope.
    pub fn admin_token(&self) -> String {
        self.token_for("usr_admin", "org_demo", ADMIN_SCOPES)
    }

    /// Signs arbitrary claims with this harness's key.
    pub fn sign(&self, claims: &Value) -> String {
        self.issuer.sign(claims).expect("sign")
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

    /// A REST call to `/api/v1{path}` as the demo admin on `ws_main`.
    pub fn api(&self, method: &str, path: &str) -> Req<'_> {
        Req::new(self, method, &format!("/api/v1{path}")).header("content-type", "application/json")
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
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                params.get("taskId").and_then(Value::as_str).map(str::to_owned)
            }
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

/// Every scope the server knows, space-separated, in `Scope::ALL`'s order
/// (a test keeps the two the same).
pub const ALL_SCOPES: &str = "inboxes:read inboxes:write emails:read emails:write webhooks:read webhooks:write audit:read emails:ingest org:admin";

/// The scopes the demo admin's tokens carry in most tests: every scope but
/// `audit:read` and `org:admin`, so the trail's and the administration's
/// own tests say when a token has them.
pub const ADMIN_SCOPES: &str =
    "inboxes:read inboxes:write emails:read emails:write webhooks:read webhooks:write emails:ingest";

#[test]
fn all_scopes_are_every_scope_the_server_knows_and_the_admins_all_but_audit() {
    let known: Vec<&str> = inbox::domain::Scope::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(ALL_SCOPES, known.join(" "));
    let admin: Vec<&str> = known.into_iter().filter(|s| !["audit:read", "org:admin"].contains(s)).collect();
    assert_eq!(ADMIN_SCOPES, admin.join(" "));
}

pub struct Req<'a> {
    harness: &'a Harness,
    method: String,
    path: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Body,
}

impl<'a> Req<'a> {
    /// Every request starts as the demo admin acting on `ws_main`; tests
    /// remove or replace these headers to exercise the failures.
    fn new(harness: &'a Harness, method: &str, path: &str) -> Self {
        let token = format!("Bearer {}", harness.admin_token());
        Req {
            harness,
            method: method.into(),
            path: path.into(),
            headers: vec![
                ("host".into(), HOST.as_bytes().to_vec()),
                ("authorization".into(), token.into_bytes()),
                ("x-workspace-id".into(), b"ws_main".to_vec()),
            ],
            body: Body::Empty,
        }
    }

    /// Change the request path (and query).
    pub fn path(mut self, path: &str) -> Self {
        self.path = path.to_owned();
        self
    }

    /// Send as someone else: replaces the bearer token.
    pub fn token(self, token: &str) -> Self {
        self.header("authorization", &format!("Bearer {token}"))
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

    /// Sends through the real handler, then checks the answer's shape
    /// against the published schemas (`shapes`).
    pub async fn send(self) -> Resp {
        let app = self.harness.app().await;
        let (method, path) = (self.method.clone(), self.path.clone());
        let request: Option<Value> = match &self.body {
            Body::Text(text) => serde_json::from_str(text).ok(),
            _ => None,
        };
        let resp = Resp::from(inbox::edge::handle(&app.edge, self.build()).await);
        if let Some(rest) = path.strip_prefix("/api/v1") {
            shapes::check_rest(&method, rest, resp.status, &resp.body);
        } else if let (true, Some(request)) = (path == "/mcp", request) {
            shapes::check_mcp(&request, &resp.body);
        }
        resp
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
    /// A 2xx answer.
    pub fn is_ok_status(&self) -> bool {
        (200..300).contains(&self.status)
    }

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
        self.assert_stateless_result(id, "complete")
    }

    /// A successful stateless answer whose `resultType` is `result_type`.
    #[track_caller]
    pub fn assert_stateless_result(&self, id: Value, result_type: &str) -> Value {
        let body = self.json();
        assert_eq!(self.status, 200, "body {body}");
        assert_eq!(body["id"], id);
        let result = self.result();
        assert_eq!(result["resultType"], result_type, "result {result}");
        let info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
        assert_eq!(info["name"], "kobana-autonomous-inbox");
        assert!(info["version"].is_string());
        assert_eq!(self.header("cache-control"), Some("no-store"));
        assert_eq!(self.header("mcp-protocol-version"), Some(STATELESS));
        assert!(self.header("mcp-session-id").is_none());
        result
    }
}

/// A client of its own for the local DynamoDB: the table as anyone with
/// access to it sees it, outside the server's store.
pub fn dynamodb_client() -> aws_sdk_dynamodb::Client {
    use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(dynamodb_endpoint())
        .credentials_provider(Credentials::new("local", "local", None, None, "test"))
        .build();
    aws_sdk_dynamodb::Client::from_conf(config)
}

/// Every item of `table` as text (attribute names and values), read with a
/// client of its own: what anyone with read access to the table would see.
pub async fn table_dump(table: &str) -> Vec<String> {
    let client = dynamodb_client();
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let out = client.scan().table_name(table).set_exclusive_start_key(start).send().await.expect("scan the table");
        items.extend(out.items.unwrap_or_default().iter().map(|item| format!("{item:?}")));
        match out.last_evaluated_key {
            Some(key) => start = Some(key),
            None => return items,
        }
    }
}

/// `table_dump` with every map's keys in order (nested ones too), so two
/// dumps of the same content compare equal.
pub async fn table_dump_sorted(table: &str) -> Vec<String> {
    use aws_sdk_dynamodb::types::AttributeValue;
    fn canonical(value: &AttributeValue) -> String {
        match value {
            AttributeValue::M(map) => {
                let sorted: std::collections::BTreeMap<_, _> = map.iter().map(|(k, v)| (k, canonical(v))).collect();
                format!("M{sorted:?}")
            }
            AttributeValue::L(list) => format!("L{:?}", list.iter().map(canonical).collect::<Vec<_>>()),
            other => format!("{other:?}"),
        }
    }
    let client = dynamodb_client();
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let out = client.scan().table_name(table).set_exclusive_start_key(start).send().await.expect("scan the table");
        for item in out.items.unwrap_or_default() {
            items.push(canonical(&AttributeValue::M(item)));
        }
        match out.last_evaluated_key {
            Some(key) => start = Some(key),
            None => return items,
        }
    }
}

thread_local! {
    /// The log lines of the test running on this thread, while it captures them.
    static CAPTURED: std::cell::RefCell<Option<Vec<u8>>> = const { std::cell::RefCell::new(None) };
}

/// Writes a log line into this thread's capture, if it has one.
struct ThreadCapture;

impl std::io::Write for ThreadCapture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        CAPTURED.with(|c| {
            if let Some(buffer) = c.borrow_mut().as_mut() {
                buffer.extend_from_slice(bytes);
            }
        });
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Everything logged at `info` and above while `run` runs on this thread
/// (the tests' runtime runs every task on it), as the JSON lines Lambda
/// ships: the request span's fields included. One subscriber serves the
/// whole test binary (a subscriber per test would race with the others over
/// tracing's per-callsite cache); it keeps only the lines of threads that
/// capture.
pub async fn capture_logs(run: impl std::future::Future<Output = ()>) -> String {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let subscriber = tracing_subscriber::fmt()
            .fmt_fields(inbox::telemetry::JsonSpanFields)
            .event_format(inbox::telemetry::JsonLine)
            .with_max_level(tracing::Level::INFO)
            .with_writer(|| ThreadCapture)
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber in the tests");
    });
    CAPTURED.with(|c| *c.borrow_mut() = Some(Vec::new()));
    run.await;
    let bytes = CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Sends with the request's future on the heap (the handler's future is
/// large in debug builds).
pub async fn send(req: Req<'_>) -> Resp {
    Box::pin(req.send()).await
}

/// A REST call as the demo admin on `ws_main`: status and JSON body.
pub async fn rest(h: &Harness, method: &str, path: &str) -> (u16, Value) {
    let resp = send(h.api(method, path)).await;
    (resp.status, resp.json())
}

/// A REST GET that must succeed: the whole body.
pub async fn get(h: &Harness, path: &str) -> Value {
    let (status, body) = rest(h, "GET", path).await;
    assert_eq!(status, 200, "GET {path}: {body}");
    body
}

/// Every scope of `ADMIN_SCOPES` but `scope`.
pub fn scopes_without(scope: &str) -> String {
    ADMIN_SCOPES.split(' ').filter(|s| *s != scope).collect::<Vec<_>>().join(" ")
}
