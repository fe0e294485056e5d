//! The local port serves the same handler as Lambda: real TCP on loopback.

use crate::common;

use std::time::{Duration, Instant};

use inbox::edge::local::ReadTimeouts;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// Serves a fresh harness's app on an ephemeral loopback port; returns the
/// base URL, a token, and the sender that stops the server when dropped.
async fn start() -> (String, String, tokio::sync::oneshot::Sender<()>) {
    let (base, token, stop, _) = start_with(ReadTimeouts::default()).await;
    (base, token, stop)
}

async fn start_with(timeouts: ReadTimeouts) -> (String, String, tokio::sync::oneshot::Sender<()>, common::Harness) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let port = listener.local_addr().expect("addr").port();
    let harness = common::Harness::with_config(move |c| c.port = port);
    let app = harness.app().await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async {
        let _ = stopped.await;
    };
    tokio::spawn(inbox::edge::local::serve_with(listener, std::sync::Arc::clone(&app.edge), shutdown, timeouts));
    let token = harness.admin_token();
    (format!("http://127.0.0.1:{port}"), token, stop, harness)
}

/// Writes `request` on a fresh connection, half-closes it when `close` is
/// set, and reads the whole answer (bounded by `wait`).
async fn raw_exchange(base: &str, request: &[u8], close: bool, wait: Duration) -> String {
    let addr = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("write");
    if close {
        stream.shutdown().await.expect("half-close");
    }
    let mut answer = Vec::new();
    match tokio::time::timeout(wait, stream.read_to_end(&mut answer)).await {
        Ok(read) => {
            read.expect("read");
        }
        Err(_) => panic!("no answer within {wait:?}; got {:?}", String::from_utf8_lossy(&answer)),
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// The JSON body of a raw HTTP/1.1 answer.
fn raw_body(answer: &str) -> Value {
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("body is not JSON ({e}): {answer}"))
}

/// The inboxes of ws_main with `slug`, read through the handler.
async fn inboxes_with_slug(h: &common::Harness, slug: &str) -> usize {
    let resp = h.api("GET", "/inboxes?limit=100").send().await;
    let body = resp.json();
    body["data"].as_array().expect("list").iter().filter(|i| i["slug"] == slug).count()
}

fn head(method: &str, path: &str, addr: &str, token: &str, extra: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nX-Workspace-Id: ws_main\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}\r\n"
    )
}

fn discover() -> Value {
    json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})
}

#[tokio::test]
async fn local_port_answers_server_discover_with_all_three_versions() {
    let (base, token, _stop) = start().await;
    let response = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .body(discover().to_string())
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(response.headers()["mcp-protocol-version"], "2026-07-28");
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["result"]["supportedVersions"], json!(["2026-07-28", "2025-06-18", "2025-03-26"]));
}

#[tokio::test]
async fn local_port_answers_initialize_with_2025_06_18() {
    let (base, token, _stop) = start().await;
    let body = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}});
    let response = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("mcp-session-id").is_none());
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
}

#[tokio::test]
async fn local_port_refuses_a_chunked_body_over_the_limit_with_413() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (base, token, _stop) = start().await;
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    // No Content-Length: the server must count while it reads.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.expect("write head");
    let body = vec![b' '; inbox::gate::MAX_BODY_BYTES + 1];
    for chunk in body.chunks(64 * 1024) {
        let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
        stream.write_all(&framed).await.expect("write chunk");
    }
    stream.write_all(b"0\r\n\r\n").await.expect("write end");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "answer: {answer}");
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
    let body: Value = serde_json::from_str(body).expect("json body");
    assert_eq!(body["error"]["code"], -32600);
    assert_eq!(body["id"], Value::Null);
}

#[tokio::test]
async fn local_port_refuses_a_foreign_host_header() {
    let (base, token, _stop) = start().await;
    let response = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .bearer_auth(&token)
        .header("host", "attacker.example:3000")
        .header("content-type", "application/json")
        .body(discover().to_string())
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn a_body_cut_off_before_its_content_length_is_400_and_creates_nothing() {
    let (base, token, _stop, h) = start_with(ReadTimeouts::default()).await;
    let addr = base.trim_start_matches("http://").to_owned();
    let body = json!({"slug": "cut-off", "name": "Cut off"}).to_string();
    // REST: Content-Length larger than what is sent, then a half-close.
    let request = head("PUT", "/api/v1/inboxes", &addr, &token, &format!("Content-Length: {}\r\n", body.len() + 10));
    let answer = raw_exchange(&base, format!("{request}{body}").as_bytes(), true, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert_eq!(raw_body(&answer)["error"]["code"], "invalid_body", "{answer}");
    // MCP: the same upsert as a tool call.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "inboxes_upsert",
        "arguments": {"slug": "cut-off", "name": "Cut off"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let extra = format!(
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: inboxes_upsert\r\nContent-Length: {}\r\n",
        call.len() + 10
    );
    let request = head("POST", "/mcp", &addr, &token, &extra);
    let answer = raw_exchange(&base, format!("{request}{call}").as_bytes(), true, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let rpc = raw_body(&answer);
    assert_eq!((&rpc["error"]["code"], &rpc["id"]), (&json!(-32700), &Value::Null), "{answer}");
    assert_eq!(inboxes_with_slug(&h, "cut-off").await, 0, "nothing was created");
}

// Issue 43, finding 17: only `/mcp` itself once got the MCP shape.
#[tokio::test]
async fn an_unreadable_body_on_every_mcp_path_is_a_json_rpc_error_and_elsewhere_the_apis() {
    let timeouts = ReadTimeouts { headers: Duration::from_secs(10), body: Duration::from_millis(300) };
    let (base, token, _stop, _h) = start_with(timeouts).await;
    let addr = base.trim_start_matches("http://").to_owned();
    let call = discover().to_string();
    let extra = format!(
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nContent-Length: {}\r\n",
        call.len() + 10
    );
    for path in ["/mcp", "/mcp/readonly", "/mcp/x/emails", "/mcp/x/emails,jobs"] {
        // Cut off before its Content-Length (400), and stalled (408).
        for (close, status, code) in [(true, "400", -32700), (false, "408", -32600)] {
            let request = format!("{}{call}", head("POST", path, &addr, &token, &extra));
            let answer = raw_exchange(&base, request.as_bytes(), close, Duration::from_secs(10)).await;
            assert!(answer.starts_with(&format!("HTTP/1.1 {status}")), "{path}: {answer}");
            let rpc = raw_body(&answer);
            assert_eq!(
                (&rpc["jsonrpc"], &rpc["id"], &rpc["error"]["code"]),
                (&json!("2.0"), &Value::Null, &json!(code)),
                "{path}: {answer}"
            );
            assert!(answer.to_ascii_lowercase().contains("mcp-protocol-version: 2026-07-28"), "{path}: {answer}");
        }
    }
    // A path that is not the MCP endpoint keeps the API's shape.
    let request = format!("{}{call}", head("POST", "/mcp/other", &addr, &token, &extra));
    let answer = raw_exchange(&base, request.as_bytes(), true, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert_eq!(raw_body(&answer)["error"]["code"], "invalid_body", "{answer}");
}

#[tokio::test]
async fn a_chunked_body_with_a_bad_chunk_header_is_400_and_creates_nothing() {
    let (base, token, _stop, h) = start_with(ReadTimeouts::default()).await;
    let addr = base.trim_start_matches("http://").to_owned();
    let body = json!({"slug": "bad-chunk", "name": "Bad chunk"}).to_string();
    let request = head("PUT", "/api/v1/inboxes", &addr, &token, "Transfer-Encoding: chunked\r\n");
    // A whole valid chunk with the JSON, then a chunk header that is not hex.
    let framed = format!("{request}{:x}\r\n{body}\r\nzz\r\n", body.len());
    let answer = raw_exchange(&base, framed.as_bytes(), true, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert_eq!(inboxes_with_slug(&h, "bad-chunk").await, 0, "nothing was created");
    // The same body, well framed, is created: the refusal was the framing.
    let framed = format!("{request}{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
    let request =
        framed.replace("Transfer-Encoding: chunked\r\n", "Transfer-Encoding: chunked\r\nConnection: close\r\n");
    let answer = raw_exchange(&base, request.as_bytes(), false, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert_eq!(inboxes_with_slug(&h, "bad-chunk").await, 1);
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_disconnected_after_the_header_timeout() {
    let timeouts = ReadTimeouts { headers: Duration::from_millis(300), body: Duration::from_secs(10) };
    let (base, _token, _stop, _h) = start_with(timeouts).await;
    let started = Instant::now();
    let addr = base.trim_start_matches("http://");
    // Partial headers, the connection left open.
    let partial = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: appl");
    let answer = raw_exchange(&base, partial.as_bytes(), false, Duration::from_secs(5)).await;
    assert!(started.elapsed() < Duration::from_secs(5), "closed by the server");
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[tokio::test]
async fn a_body_that_stops_arriving_is_408_after_the_body_timeout_and_creates_nothing() {
    let timeouts = ReadTimeouts { headers: Duration::from_secs(10), body: Duration::from_millis(300) };
    let (base, token, _stop, h) = start_with(timeouts).await;
    let addr = base.trim_start_matches("http://").to_owned();
    let body = json!({"slug": "slow-body", "name": "Slow"}).to_string();
    let request = head("PUT", "/api/v1/inboxes", &addr, &token, &format!("Content-Length: {}\r\n", body.len()));
    // Half of the body, then nothing (the connection stays open).
    let sent = format!("{request}{}", &body[..body.len() / 2]);
    let answer = raw_exchange(&base, sent.as_bytes(), false, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert_eq!(raw_body(&answer)["error"]["code"], "request_timeout", "{answer}");
    assert_eq!(inboxes_with_slug(&h, "slow-body").await, 0, "nothing was created");
}

#[tokio::test]
async fn a_declared_content_length_over_the_limit_is_413_without_waiting_for_the_body() {
    let (base, token, _stop) = start().await;
    let addr = base.trim_start_matches("http://").to_owned();
    let declared = inbox::gate::MAX_BODY_BYTES + 1;
    for path in ["/mcp", "/api/v1/inboxes"] {
        let method = if path == "/mcp" { "POST" } else { "PUT" };
        let request = head(method, path, &addr, &token, &format!("Content-Length: {declared}\r\n"));
        // Not one byte of the body is sent, and the connection stays open:
        // only an answer from the header can arrive.
        let answer = raw_exchange(&base, request.as_bytes(), false, Duration::from_secs(5)).await;
        assert!(answer.starts_with("HTTP/1.1 413"), "{path}: {answer}");
    }
}

// ------------------------------------------------------------------ limits

/// The header limits of the local port: at the limit the request is
/// served; one past it, 431 and nothing runs.
#[tokio::test]
async fn header_count_and_size_limits_hold_at_the_edge_and_refuse_past_it() {
    use inbox::edge::local::{MAX_HEAD_BYTES, MAX_HEADERS};
    let (base, token, _stop) = start().await;
    let addr = base.trim_start_matches("http://");
    let body = discover().to_string();
    // `head` writes 5 fields; Content-Length, MCP-Protocol-Version, Mcp-Method
    // and Connection make 9. (Connection: close: the answer ends the exchange.)
    let request = |extra_fields: usize, filler: usize| {
        let mut extra = format!(
            "Content-Length: {}\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\nConnection: close\r\n",
            body.len()
        );
        for i in 0..extra_fields {
            extra.push_str(&format!("X-Extra-{i}: {}\r\n", if i == 0 { "a".repeat(filler) } else { "1".into() }));
        }
        format!("{}{body}", head("POST", "/mcp", addr, &token, &extra))
    };
    let at_count = request(MAX_HEADERS - 9, 1);
    let answer = raw_exchange(&base, at_count.as_bytes(), false, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{MAX_HEADERS} fields are served: {answer}");
    let past_count = request(MAX_HEADERS - 8, 1);
    let answer = raw_exchange(&base, past_count.as_bytes(), false, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{} fields are refused: {answer}", MAX_HEADERS + 1);

    // Header bytes as counted: `name: value\r\n` per field, without the request line.
    let head_bytes = |filler: usize| {
        let text = request(1, filler);
        let head = text.split("\r\n\r\n").next().unwrap();
        head.split("\r\n").skip(1).map(|line| line.len() + 2).sum::<usize>()
    };
    let fits = MAX_HEAD_BYTES - head_bytes(1) + 1;
    assert_eq!(head_bytes(fits), MAX_HEAD_BYTES);
    let answer = raw_exchange(&base, request(1, fits).as_bytes(), false, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{MAX_HEAD_BYTES} header bytes are served: {answer:.200}");
    let answer = raw_exchange(&base, request(1, fits + 1).as_bytes(), false, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "one byte more is refused: {answer:.200}");
    assert!(answer.contains("headers_too_large"), "{answer:.300}");
}
