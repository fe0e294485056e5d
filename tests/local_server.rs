//! The local port serves the same handler as Lambda: real TCP on loopback.

mod common;

use serde_json::{Value, json};
use tokio::net::TcpListener;

/// Serves a fresh harness's app on an ephemeral loopback port; returns the
/// base URL, a token, and the sender that stops the server when dropped.
async fn start() -> (String, String, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let port = listener.local_addr().expect("addr").port();
    let harness = common::Harness::with_config(move |c| c.port = port);
    let app = harness.app().await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(inbox::http::local::serve(listener, app, async {
        let _ = stopped.await;
    }));
    (format!("http://127.0.0.1:{port}"), harness.admin_token(), stop)
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
    let body = vec![b' '; inbox::mcp::MAX_BODY_BYTES + 1];
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
