//! Conformance tests for the MCP endpoint, one or more per line of the
//! checklist in §7 of `mcp-wire-reference.md` (each test names its line), plus
//! additions marked with the section they come from, and fuzz tests of the
//! whole pipeline.
//!
//! Every request carries the harness's valid admin token and workspace unless
//! a test removes them. Authentication (§7 lines 79–89) is in `auth`; the
//! tools, confirmation and their errors (lines 102, 106–126) in `mcp_tools`.

use crate::common;
use base64::Engine as _;
use common::{Harness, Resp, STATELESS, envelope, envelope_with};
use serde_json::{Map, Value, json};

const SUPPORTED: [&str; 3] = ["2026-07-28", "2025-06-18", "2025-03-26"];
const PROMPT: &str = "triage_failed_emails";
const EXISTING_URI: &str = "kobana://inbox/docs/email-statuses";
const NON_ASCII_URI: &str = "kobana://inbox/inboxes/cobrança";
/// `NON_ASCII_URI` in the `Mcp-Name` sentinel form, as written in §5.6.
const NON_ASCII_URI_SENTINEL: &str = "=?base64?a29iYW5hOi8vaW5ib3gvaW5ib3hlcy9jb2JyYW7Dp2E=?=";
const LIMIT: usize = 1_048_576;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// The `MCP-Protocol-Version` response header.
#[track_caller]
fn assert_version_header(resp: &Resp, version: &str) {
    assert_eq!(resp.header("mcp-protocol-version"), Some(version), "MCP-Protocol-Version response header");
}

#[track_caller]
fn assert_no_session(resp: &Resp) {
    assert!(resp.header("mcp-session-id").is_none(), "the server must never send Mcp-Session-Id");
}

/// A decorated stateless success, plus the headers every JSON answer carries.
#[track_caller]
fn stateless_ok(resp: &Resp, id: Value) -> Value {
    let result = resp.assert_stateless_ok(id);
    assert_eq!(resp.header("content-type"), Some("application/json"));
    assert!(result.get("inputRequests").is_none() && result.get("requestState").is_none(), "result {result}");
    result
}

/// A JSON-RPC error with status, code and echoed id, labelled with `version`.
#[track_caller]
fn assert_error_v(resp: &Resp, status: u16, code: i64, id: Value, version: &str) -> Value {
    resp.assert_error(status, code, id);
    assert_version_header(resp, version);
    assert_no_session(resp);
    resp.json()["error"].clone()
}

/// A handshake-era success: no stateless decoration at all.
#[track_caller]
fn handshake_ok(resp: &Resp, id: Value, version: &str) -> Value {
    let body = resp.json();
    assert_eq!(resp.status, 200, "body {body}");
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], id);
    let result = resp.result();
    for key in ["resultType", "ttlMs", "cacheScope"] {
        assert!(result.get(key).is_none(), "handshake result must not carry {key}: {result}");
    }
    assert!(result["_meta"].get("io.modelcontextprotocol/serverInfo").is_none(), "no serverInfo _meta: {result}");
    assert_eq!(resp.header("content-type"), Some("application/json"));
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    assert_version_header(resp, version);
    assert_no_session(resp);
    result
}

/// The routing-header check passed: HTTP 200 and, if the method itself
/// failed, any error but `-32020`.
#[track_caller]
fn assert_routing_headers_accepted(resp: &Resp, id: Value) {
    let body = resp.json();
    assert_eq!(resp.status, 200, "body {body}");
    assert_eq!(body["id"], id, "body {body}");
    match body.get("error") {
        Some(error) => assert_ne!(error["code"], -32020, "routing headers were rejected: {body}"),
        None => {
            stateless_ok(resp, id);
        }
    }
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    assert_version_header(resp, STATELESS);
}

#[track_caller]
fn assert_caching_hints(result: &Value) {
    assert_eq!(result["ttlMs"], 0, "result {result}");
    assert!(result["ttlMs"].is_u64(), "ttlMs must be an integer >= 0: {result}");
    assert_eq!(result["cacheScope"], "private", "result {result}");
}

#[track_caller]
fn assert_no_caching_hints(result: &Value) {
    assert!(result.get("ttlMs").is_none(), "no ttlMs expected: {result}");
    assert!(result.get("cacheScope").is_none(), "no cacheScope expected: {result}");
}

/// A JSON request serialised and padded with whitespace (before the closing
/// brace) to exactly `len` bytes: still valid JSON.
fn padded(value: &Value, len: usize) -> String {
    let text = value.to_string();
    assert!(text.len() < len, "request already longer than {len}");
    let mut out = String::with_capacity(len);
    out.push_str(&text[..text.len() - 1]);
    out.push_str(&" ".repeat(len - text.len()));
    out.push('}');
    assert_eq!(out.len(), len);
    out
}

fn stateless_body(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = envelope();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// An API Gateway HTTP API (payload 2.0) event for `POST /mcp` with a
/// Base64-encoded body.
fn gateway_event(h: &Harness, body: &[u8], extra_headers: &[(&str, &str)]) -> String {
    let mut headers = json!({
        "host": common::HOST,
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": format!("Bearer {}", h.admin_token()),
        "x-workspace-id": "ws_main",
    });
    for (name, value) in extra_headers {
        headers[*name] = json!(value);
    }
    json!({
        "version": "2.0",
        "routeKey": "POST /mcp",
        "rawPath": "/mcp",
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "a1b2c3d4e5",
            "domainName": "127.0.0.1",
            "domainPrefix": "127",
            "http": {
                "method": "POST",
                "path": "/mcp",
                "protocol": "HTTP/1.1",
                "sourceIp": "203.0.113.10",
                "userAgent": "conformance-test/1.0"
            },
            "requestId": "req-conformance",
            "routeKey": "POST /mcp",
            "stage": "$default",
            "time": "02/Dec/2026:12:00:00 +0000",
            "timeEpoch": 1796212800000u64
        },
        "isBase64Encoded": true,
        "body": base64::engine::general_purpose::STANDARD.encode(body),
    })
    .to_string()
}

async fn send_gateway_event(h: &Harness, event: &str) -> Resp {
    let req = lambda_http::request::from_str(event).expect("a valid API Gateway v2 event");
    let app = h.app().await;
    Resp::from(inbox::edge::handle(&app.edge, req).await)
}

// ---------------------------------------------------------------------------
// HTTP gate and framing (§7 lines 1–26)
// ---------------------------------------------------------------------------

// §7 line 1
#[tokio::test]
async fn get_on_mcp_is_405_with_allow_post() {
    let h = Harness::new();
    let resp = h.request("GET", "/mcp").header("accept", "application/json, text/event-stream").send().await;
    assert_eq!(resp.status, 405);
    assert_eq!(resp.header("allow"), Some("POST"));
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    assert_no_session(&resp);
    assert_ne!(resp.header("content-type"), Some("text/event-stream"), "no SSE stream is offered");
    assert_version_header(&resp, STATELESS);
}

// §7 line 2
#[tokio::test]
async fn delete_on_mcp_with_a_session_id_is_405() {
    let h = Harness::new();
    let resp = h.request("DELETE", "/mcp").header("mcp-session-id", "abc").send().await;
    assert_eq!(resp.status, 405);
    assert_eq!(resp.header("allow"), Some("POST"));
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    assert_no_session(&resp);
}

// §7 line 3 (and §5.3: PATCH and HEAD alike)
#[tokio::test]
async fn put_patch_and_head_on_mcp_are_405_with_allow_post() {
    let h = Harness::new();
    for method in ["PUT", "PATCH", "HEAD"] {
        let resp = h
            .request(method, "/mcp")
            .header("content-type", "application/json")
            .json(&stateless_body(json!(1), "tools/list", json!({})))
            .send()
            .await;
        assert_eq!(resp.status, 405, "{method}");
        assert_eq!(resp.header("allow"), Some("POST"), "{method}");
        assert_eq!(resp.header("cache-control"), Some("no-store"), "{method}");
        assert_no_session(&resp);
    }
}

// §7 line 4
#[tokio::test]
async fn post_from_a_foreign_origin_is_403_and_nothing_runs() {
    let h = Harness::new();
    let resp = h
        .stateless(json!(4), "prompts/get", json!({"name": PROMPT, "arguments": {"inbox_id": "inb_bills"}}))
        .header("origin", "https://evil.example")
        .send()
        .await;
    assert_eq!(resp.status, 403, "body {}", String::from_utf8_lossy(&resp.body));
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    assert_version_header(&resp, STATELESS);
    assert_no_session(&resp);
    let body = resp.json();
    assert_eq!(body["error"]["code"], "origin_not_allowed", "{body}");
    assert!(body.get("result").is_none(), "nothing may run for a refused origin: {body}");
    assert!(!body.to_string().contains("Triage"), "the prompt must not have been rendered: {body}");
}

// §7 line 5
#[tokio::test]
async fn post_from_an_allowlisted_origin_is_processed_normally() {
    let h = Harness::with_config(|config| config.allowed_origins = vec!["https://app.example.com".into()]);
    let resp = h.stateless(json!(5), "tools/list", json!({})).header("origin", "https://app.example.com").send().await;
    stateless_ok(&resp, json!(5));
}

// Issue 14: the server's own origin needs no configuration; look-alikes stay refused.
#[tokio::test]
async fn the_servers_own_origin_is_allowed_without_configuration() {
    let h = Harness::new();
    for (id, origin) in [(1, "http://127.0.0.1:3000"), (2, "http://localhost:3000")] {
        let resp = h.stateless(json!(id), "tools/list", json!({})).header("origin", origin).send().await;
        stateless_ok(&resp, json!(id));
    }
    let h = Harness::with_config(|config| config.mcp_resource = "https://inbox-mcp.example.com/mcp".into());
    let now = jsonwebtoken::get_current_timestamp();
    let token = h.sign(&json!({"iss": common::ISSUER, "sub": "usr_admin", "org_id": "org_demo",
        "aud": "https://inbox-mcp.example.com/mcp", "scope": common::ADMIN_SCOPES, "iat": now, "exp": now + 600}));
    let resp = h
        .stateless(json!(3), "tools/list", json!({}))
        .token(&token)
        .header("host", "inbox-mcp.example.com")
        .header("origin", "https://inbox-mcp.example.com")
        .send()
        .await;
    stateless_ok(&resp, json!(3));
    for (id, origin) in [
        (4, "http://inbox-mcp.example.com"),
        (5, "https://inbox-mcp.example.com.evil.example"),
        (6, "http://127.0.0.1:3001"),
        (7, "null"),
    ] {
        let resp = h
            .stateless(json!(id), "tools/list", json!({}))
            .header("host", "inbox-mcp.example.com")
            .header("origin", origin)
            .send()
            .await;
        assert_eq!(resp.status, 403, "{origin}: {}", String::from_utf8_lossy(&resp.body));
    }
}

// §7 line 6
#[tokio::test]
async fn post_without_origin_is_processed_normally() {
    let h = Harness::new();
    let resp = h.stateless(json!(6), "tools/list", json!({})).without("origin").send().await;
    stateless_ok(&resp, json!(6));
}

// §1.1 A2b (addition): DNS-rebinding protection
#[tokio::test]
async fn post_with_a_foreign_host_is_403_and_nothing_runs() {
    let h = Harness::new();
    let resp = h.stateless(json!(1), "tools/list", json!({})).header("host", "evil.example").send().await;
    assert_eq!(resp.status, 403);
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    let body = resp.json();
    assert_eq!(body["error"]["code"], "host_not_allowed", "{body}");
    assert!(body.get("result").is_none(), "{body}");
}

// §7 line 7
#[tokio::test]
async fn text_plain_content_type_is_415_invalid_request_with_null_id() {
    let h = Harness::new();
    let resp = h.stateless(json!(7), "tools/list", json!({})).header("content-type", "text/plain").send().await;
    assert_error_v(&resp, 415, -32600, Value::Null, STATELESS);
    // §1.1 A4: a missing Content-Type is not application/json either.
    let resp = h.stateless(json!(7), "tools/list", json!({})).without("content-type").send().await;
    assert_error_v(&resp, 415, -32600, Value::Null, STATELESS);
}

// §7 line 8
#[tokio::test]
async fn json_content_type_with_charset_is_accepted() {
    let h = Harness::new();
    let resp = h
        .stateless(json!(8), "tools/list", json!({}))
        .header("content-type", "application/json; charset=utf-8")
        .send()
        .await;
    stateless_ok(&resp, json!(8));
    // Media types compare case-insensitively (RFC 9110 §8.3.1).
    let resp = h.stateless(json!(8), "tools/list", json!({})).header("content-type", "Application/JSON").send().await;
    stateless_ok(&resp, json!(8));
}

// §7 line 9
#[tokio::test]
async fn accept_event_stream_only_is_406_invalid_request() {
    let h = Harness::new();
    let resp = h.stateless(json!(9), "tools/list", json!({})).header("accept", "text/event-stream").send().await;
    assert_error_v(&resp, 406, -32600, Value::Null, STATELESS);
    // §5.5: JSON explicitly refused, or another type only.
    for accept in ["application/json;q=0, text/event-stream", "text/html"] {
        let resp = h.stateless(json!(9), "tools/list", json!({})).header("accept", accept).send().await;
        assert_error_v(&resp, 406, -32600, Value::Null, STATELESS);
    }
}

// §5.5 (addition): Accept admitting JSON through a wildcard is enough
#[tokio::test]
async fn accept_admitting_json_through_a_wildcard_is_accepted() {
    let h = Harness::new();
    for accept in ["*/*", "application/*", "text/event-stream, application/*;q=0.5", "application/json"] {
        let resp = h.stateless(json!(9), "tools/list", json!({})).header("accept", accept).send().await;
        stateless_ok(&resp, json!(9));
    }
}

// §7 line 10
#[tokio::test]
async fn post_without_accept_is_accepted() {
    let h = Harness::new();
    let resp = h.stateless(json!(10), "tools/list", json!({})).without("accept").send().await;
    stateless_ok(&resp, json!(10));
}

// §7 line 11
#[tokio::test]
async fn body_of_1_048_577_bytes_is_413_invalid_request_with_null_id() {
    let h = Harness::new();
    let body = padded(&stateless_body(json!(11), "tools/list", json!({})), LIMIT + 1);
    let resp = h.stateless(json!(11), "tools/list", json!({})).text(&body).send().await;
    assert_error_v(&resp, 413, -32600, Value::Null, STATELESS);
}

// §5.4 (addition): Content-Length is checked before the body is read
#[tokio::test]
async fn declared_content_length_over_the_limit_is_413() {
    let h = Harness::new();
    let resp =
        h.stateless(json!(1), "tools/list", json!({})).header("content-length", &(LIMIT + 1).to_string()).send().await;
    assert_error_v(&resp, 413, -32600, Value::Null, STATELESS);
}

// §7 line 12
#[tokio::test]
async fn body_of_exactly_1_048_576_bytes_of_valid_json_is_not_413() {
    let h = Harness::new();
    let body = padded(&stateless_body(json!(12), "tools/list", json!({})), LIMIT);
    assert_eq!(body.len(), LIMIT);
    let resp = h.stateless(json!(12), "tools/list", json!({})).text(&body).send().await;
    assert_ne!(resp.status, 413, "a body of exactly the limit must be accepted");
    stateless_ok(&resp, json!(12));
}

// §7 line 13
#[tokio::test]
async fn base64_gateway_body_over_the_limit_after_decoding_is_413() {
    let h = Harness::new();
    let body = padded(&stateless_body(json!(13), "tools/list", json!({})), LIMIT + 1);
    let event =
        gateway_event(&h, body.as_bytes(), &[("mcp-protocol-version", STATELESS), ("mcp-method", "tools/list")]);
    let resp = send_gateway_event(&h, &event).await;
    assert_error_v(&resp, 413, -32600, Value::Null, STATELESS);
}

// §7 line 13 / §5.7 (addition): the limit applies to the decoded bytes, not the Base64 text
#[tokio::test]
async fn base64_gateway_body_under_the_limit_after_decoding_is_served() {
    let h = Harness::new();
    // 900,000 decoded bytes are 1,200,000 Base64 characters: over the limit only if not decoded.
    let body = padded(&stateless_body(json!(13), "tools/list", json!({})), 900_000);
    let event =
        gateway_event(&h, body.as_bytes(), &[("mcp-protocol-version", STATELESS), ("mcp-method", "tools/list")]);
    assert!(event.len() > LIMIT);
    let resp = send_gateway_event(&h, &event).await;
    stateless_ok(&resp, json!(13));
}

// §7 line 14
#[tokio::test]
async fn truncated_json_is_400_parse_error_with_null_id() {
    let h = Harness::new();
    let resp = h.post().text(r#"{"jsonrpc":"2.0","id":1,"#).send().await;
    assert_error_v(&resp, 400, -32700, Value::Null, STATELESS);
}

// §7 line 15
#[tokio::test]
async fn empty_body_is_400_parse_error() {
    let h = Harness::new();
    let resp = h.post().send().await;
    assert_error_v(&resp, 400, -32700, Value::Null, STATELESS);
    let resp = h.post().text("").send().await;
    assert_error_v(&resp, 400, -32700, Value::Null, STATELESS);
}

// §5.4 (addition): duplicate keys would let header checks and dispatch disagree
#[tokio::test]
async fn duplicate_json_keys_are_400_parse_error() {
    let h = Harness::new();
    let resp = h
        .post()
        .text(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"prompts/list","params":{}}"#)
        .send()
        .await;
    assert_error_v(&resp, 400, -32700, Value::Null, STATELESS);
}

// §1.1 B1 (addition)
#[tokio::test]
async fn invalid_utf8_body_is_400_parse_error() {
    let h = Harness::new();
    let resp = h.post().raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}").send().await;
    assert_error_v(&resp, 400, -32700, Value::Null, STATELESS);
}

// §7 line 16
#[tokio::test]
async fn empty_batch_is_400_invalid_request_with_null_id() {
    let h = Harness::new();
    let resp = h.post().text("[]").send().await;
    assert_error_v(&resp, 400, -32600, Value::Null, STATELESS);
}

// §7 line 17
#[tokio::test]
async fn stateless_batch_of_one_is_400_invalid_request() {
    let h = Harness::new();
    let batch = json!([stateless_body(json!(1), "tools/list", json!({}))]);
    let resp =
        h.post().header("mcp-protocol-version", STATELESS).header("mcp-method", "tools/list").json(&batch).send().await;
    assert_error_v(&resp, 400, -32600, Value::Null, STATELESS);
}

// §7 line 18
#[tokio::test]
async fn handshake_batch_is_400_invalid_request() {
    let h = Harness::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let resp = h.post().json(&json!([init])).send().await;
    assert_error_v(&resp, 400, -32600, Value::Null, STATELESS);
}

// §7 line 19
#[tokio::test]
async fn json_string_body_is_400_invalid_request_with_null_id() {
    let h = Harness::new();
    let resp = h.post().text(r#""hello""#).send().await;
    assert_error_v(&resp, 400, -32600, Value::Null, STATELESS);
}

// §7 line 20
#[tokio::test]
async fn jsonrpc_1_0_is_400_invalid_request_echoing_the_id() {
    let h = Harness::new();
    let resp = h.post().text(r#"{"jsonrpc":"1.0","id":3,"method":"tools/list"}"#).send().await;
    assert_error_v(&resp, 400, -32600, json!(3), STATELESS);
}

// §7 line 21
#[tokio::test]
async fn null_id_is_400_invalid_request_with_null_id() {
    let h = Harness::new();
    let resp = h.post().text(r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#).send().await;
    assert_error_v(&resp, 400, -32600, Value::Null, STATELESS);
}

// §7 line 22 (and §1.1 B3: boolean, object and array ids alike)
#[tokio::test]
async fn fractional_boolean_object_and_array_ids_are_400_invalid_request() {
    let h = Harness::new();
    for id in ["1.5", "true", r#"{"a":1}"#, "[1]"] {
        let resp = h.post().text(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#)).send().await;
        assert_error_v(&resp, 400, -32600, Value::Null, STATELESS);
    }
}

// §7 line 23
#[tokio::test]
async fn non_string_method_is_400_invalid_request_echoing_the_id() {
    let h = Harness::new();
    let resp = h.post().text(r#"{"jsonrpc":"2.0","id":4,"method":7}"#).send().await;
    assert_error_v(&resp, 400, -32600, json!(4), STATELESS);
    let resp = h.post().text(r#"{"jsonrpc":"2.0","id":4}"#).send().await;
    assert_error_v(&resp, 400, -32600, json!(4), STATELESS);
}

// §7 line 24
#[tokio::test]
async fn array_params_are_400_invalid_request_echoing_the_id() {
    let h = Harness::new();
    let resp = h.post().text(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[1]}"#).send().await;
    assert_error_v(&resp, 400, -32600, json!(5), STATELESS);
}

// §7 line 25
#[tokio::test]
async fn posted_jsonrpc_response_is_400_invalid_request() {
    let h = Harness::new();
    let resp = h.post().text(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#).send().await;
    assert_error_v(&resp, 400, -32600, json!(9), STATELESS);
    let resp = h.post().text(r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"x"}}"#).send().await;
    assert_error_v(&resp, 400, -32600, json!(9), STATELESS);
}

// §7 line 26
#[tokio::test]
async fn error_responses_echo_the_id_with_its_json_type() {
    let h = Harness::new();
    for id in [json!("abc"), json!(12), json!("12"), json!(-7), json!(u64::MAX)] {
        // Shape error (stage B3).
        let text = format!(r#"{{"jsonrpc":"1.0","id":{id},"method":"tools/list"}}"#);
        let resp = h.post().text(&text).send().await;
        assert_error_v(&resp, 400, -32600, id.clone(), STATELESS);
        // Stateless unknown method (stage G).
        let resp = h.stateless(id.clone(), "foo/bar", json!({})).send().await;
        assert_error_v(&resp, 404, -32601, id.clone(), STATELESS);
        // Handshake unknown method, in-band.
        let resp = h.handshake(id.clone(), "foo/bar", json!({}), Some("2025-06-18")).send().await;
        assert_error_v(&resp, 200, -32601, id.clone(), "2025-06-18");
        // The type survives on the wire, not only the value.
        let raw = String::from_utf8(resp.body.clone()).unwrap();
        assert!(raw.contains(&format!(r#""id":{id}"#)), "id {id} not echoed verbatim: {raw}");
    }
}

// ---------------------------------------------------------------------------
// Notifications (§7 lines 27, 28, 30)
// ---------------------------------------------------------------------------

#[track_caller]
fn assert_accepted(resp: &Resp) {
    assert_eq!(resp.status, 202, "body {}", String::from_utf8_lossy(&resp.body));
    assert!(resp.body.is_empty(), "202 must have an empty body: {}", String::from_utf8_lossy(&resp.body));
    assert!(resp.header("content-type").is_none(), "202 must have no Content-Type");
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    assert_no_session(resp);
}

// §7 line 27
#[tokio::test]
async fn initialized_notification_without_routing_headers_is_202_with_empty_body() {
    let h = Harness::new();
    let resp = h.post().json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).send().await;
    assert_accepted(&resp);
}

// §7 line 28
#[tokio::test]
async fn cancelled_notification_with_stateless_version_header_is_202_with_empty_body() {
    let h = Harness::new();
    let resp = h
        .post()
        .header("mcp-protocol-version", STATELESS)
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "user pressed stop"}}))
        .send()
        .await;
    assert_accepted(&resp);
}

// §7 line 29
#[tokio::test]
async fn notification_without_a_token_is_401_with_a_challenge() {
    let h = Harness::new();
    let resp = h
        .post()
        .without("authorization")
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await;
    assert_eq!(resp.status, 401, "body {}", String::from_utf8_lossy(&resp.body));
    let challenge = resp.header("www-authenticate").expect("WWW-Authenticate on 401");
    assert!(challenge.starts_with("Bearer "), "challenge {challenge}");
    assert!(challenge.contains("resource_metadata=\""), "challenge {challenge}");
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    assert_no_session(&resp);
}

// §7 line 30
#[tokio::test]
async fn unknown_notification_is_202() {
    let h = Harness::new();
    let resp = h.post().json(&json!({"jsonrpc": "2.0", "method": "notifications/foo", "params": {}})).send().await;
    assert_accepted(&resp);
}

// §1.4 point 4 (addition): no version or Mcp-Method validation on notifications
#[tokio::test]
async fn notification_with_mismatched_mcp_method_or_unknown_version_is_still_202() {
    let h = Harness::new();
    let resp = h
        .post()
        .header("mcp-protocol-version", STATELESS)
        .header("mcp-method", "tools/list")
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": envelope()}}))
        .send()
        .await;
    assert_accepted(&resp);
    let resp = h
        .post()
        .header("mcp-protocol-version", "v999.0.0")
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await;
    assert_accepted(&resp);
}

// ---------------------------------------------------------------------------
// Era selection and version handling (§7 lines 31–50, without 44/45)
// ---------------------------------------------------------------------------

fn env_without(key: &str) -> Value {
    let mut env = envelope();
    env.as_object_mut().unwrap().remove(key);
    env
}

fn env_with(key: &str, value: Value) -> Value {
    let mut env = envelope();
    env[key] = value;
    env
}

// §7 line 31
#[tokio::test]
async fn stateless_header_without_params_is_400_invalid_params() {
    let h = Harness::new();
    let resp = h
        .post()
        .header("mcp-protocol-version", STATELESS)
        .header("mcp-method", "tools/list")
        .json(&json!({"jsonrpc": "2.0", "id": 31, "method": "tools/list"}))
        .send()
        .await;
    let error = assert_error_v(&resp, 400, -32602, json!(31), STATELESS);
    let missing = error["data"]["missing"].as_array().unwrap_or_else(|| panic!("data.missing: {error}"));
    assert!(
        missing.contains(&json!("_meta")) || missing.contains(&json!("io.modelcontextprotocol/protocolVersion")),
        "data.missing names _meta or the envelope keys: {error}"
    );
}

// §7 line 32
#[tokio::test]
async fn stateless_header_with_empty_params_is_400_invalid_params() {
    let h = Harness::new();
    let resp = h
        .post()
        .header("mcp-protocol-version", STATELESS)
        .header("mcp-method", "server/discover")
        .json(&json!({"jsonrpc": "2.0", "id": "d-32", "method": "server/discover", "params": {}}))
        .send()
        .await;
    let error = assert_error_v(&resp, 400, -32602, json!("d-32"), STATELESS);
    assert!(error["data"]["missing"].is_array(), "data.missing: {error}");
}

// §7 line 33
#[tokio::test]
async fn stateless_header_with_meta_lacking_protocol_version_is_400_invalid_params() {
    let h = Harness::new();
    let meta = env_without("io.modelcontextprotocol/protocolVersion");
    let resp = h
        .post()
        .header("mcp-protocol-version", STATELESS)
        .header("mcp-method", "server/discover")
        .json(&json!({"jsonrpc": "2.0", "id": 33, "method": "server/discover", "params": {"_meta": meta}}))
        .send()
        .await;
    let error = assert_error_v(&resp, 400, -32602, json!(33), STATELESS);
    let missing = error["data"]["missing"].as_array().unwrap_or_else(|| panic!("data.missing: {error}"));
    assert!(
        missing.contains(&json!("io.modelcontextprotocol/protocolVersion")) || missing.contains(&json!("_meta")),
        "data.missing names the protocol version: {error}"
    );
}

// §7 line 34
#[tokio::test]
async fn envelope_without_client_capabilities_is_400_invalid_params_naming_the_key() {
    let h = Harness::new();
    let env = env_without("io.modelcontextprotocol/clientCapabilities");
    let resp = h.stateless_with(json!(34), "server/discover", json!({}), env).send().await;
    let error = assert_error_v(&resp, 400, -32602, json!(34), STATELESS);
    let missing = error["data"]["missing"].as_array().unwrap_or_else(|| panic!("data.missing: {error}"));
    assert!(missing.contains(&json!("io.modelcontextprotocol/clientCapabilities")), "error {error}");
}

// §7 line 35
#[tokio::test]
async fn non_object_client_capabilities_is_400_invalid_params() {
    let h = Harness::new();
    let env = env_with("io.modelcontextprotocol/clientCapabilities", json!("yes"));
    let resp = h.stateless_with(json!(35), "server/discover", json!({}), env).send().await;
    assert_error_v(&resp, 400, -32602, json!(35), STATELESS);
}

// §7 line 36
#[tokio::test]
async fn envelope_without_client_info_is_served() {
    let h = Harness::new();
    let env = env_without("io.modelcontextprotocol/clientInfo");
    let resp = h.stateless_with(json!(36), "server/discover", json!({}), env).send().await;
    let result = stateless_ok(&resp, json!(36));
    assert!(result["supportedVersions"].is_array());
}

// §1.1 F1 (addition): clientInfo, when present, must be {name, version} strings
#[tokio::test]
async fn malformed_client_info_is_400_invalid_params() {
    let h = Harness::new();
    for info in [json!("agent"), json!({"name": "agent"}), json!({"name": 1, "version": "1"})] {
        let env = env_with("io.modelcontextprotocol/clientInfo", info.clone());
        let resp = h.stateless_with(json!(1), "server/discover", json!({}), env).send().await;
        assert_error_v(&resp, 400, -32602, json!(1), STATELESS);
    }
}

// §7 line 37
#[tokio::test]
async fn undefined_log_level_is_400_invalid_params() {
    let h = Harness::new();
    let env = env_with("io.modelcontextprotocol/logLevel", json!("loud"));
    let resp = h.stateless_with(json!(37), "server/discover", json!({}), env).send().await;
    assert_error_v(&resp, 400, -32602, json!(37), STATELESS);
    // A defined level is accepted.
    let env = env_with("io.modelcontextprotocol/logLevel", json!("warning"));
    let resp = h.stateless_with(json!(37), "server/discover", json!({}), env).send().await;
    stateless_ok(&resp, json!(37));
}

// §7 line 38
#[tokio::test]
async fn numeric_envelope_protocol_version_is_400_invalid_params() {
    let h = Harness::new();
    let env = env_with("io.modelcontextprotocol/protocolVersion", json!(20260728));
    let resp = h.stateless_with(json!(38), "server/discover", json!({}), env).send().await;
    assert_error_v(&resp, 400, -32602, json!(38), STATELESS);
}

// §7 line 39
#[tokio::test]
async fn header_and_envelope_version_disagreeing_is_400_header_mismatch() {
    let h = Harness::new();
    let env = env_with("io.modelcontextprotocol/protocolVersion", json!("v999.0.0"));
    let resp = h.stateless_with(json!(39), "server/discover", json!({}), env).send().await;
    assert_error_v(&resp, 400, -32020, json!(39), STATELESS);
    // The other way round: a handshake-era header on a 2026-07-28 envelope.
    let resp =
        h.stateless(json!(39), "server/discover", json!({})).header("mcp-protocol-version", "2025-06-18").send().await;
    assert_error_v(&resp, 400, -32020, json!(39), STATELESS);
}

// §7 line 40
#[tokio::test]
async fn unknown_version_in_header_and_envelope_is_400_unsupported_version_with_data() {
    let h = Harness::new();
    let env = env_with("io.modelcontextprotocol/protocolVersion", json!("v999.0.0"));
    let resp = h
        .stateless_with(json!(40), "server/discover", json!({}), env)
        .header("mcp-protocol-version", "v999.0.0")
        .send()
        .await;
    let error = assert_error_v(&resp, 400, -32022, json!(40), STATELESS);
    assert_eq!(error["data"]["supported"], json!(SUPPORTED), "error {error}");
    assert_eq!(error["data"]["requested"], "v999.0.0", "error {error}");
}

// §7 line 41
#[tokio::test]
async fn version_2025_11_25_is_400_unsupported_version() {
    let h = Harness::new();
    let env = env_with("io.modelcontextprotocol/protocolVersion", json!("2025-11-25"));
    let resp = h
        .stateless_with(json!(41), "tools/list", json!({}), env)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await;
    let error = assert_error_v(&resp, 400, -32022, json!(41), STATELESS);
    assert_eq!(error["data"]["requested"], "2025-11-25", "error {error}");
    assert_eq!(error["data"]["supported"], json!(SUPPORTED), "error {error}");
}

// §7 line 42
#[tokio::test]
async fn handshake_version_in_the_envelope_is_400_invalid_params() {
    let h = Harness::new();
    for version in ["2025-06-18", "2025-03-26"] {
        let env = env_with("io.modelcontextprotocol/protocolVersion", json!(version));
        let resp = h
            .stateless_with(json!(42), "tools/list", json!({}), env)
            .header("mcp-protocol-version", version)
            .send()
            .await;
        let body = resp.json();
        assert_eq!(resp.status, 400, "{version}: {body}");
        assert_eq!(body["error"]["code"], -32602, "{version}: {body}");
        assert_eq!(body["id"], 42);
    }
}

// §7 line 43
#[tokio::test]
async fn every_unsupported_version_list_entry_is_in_discover_supported_versions() {
    let h = Harness::new();
    let resp = h.stateless(json!(1), "server/discover", json!({})).send().await;
    let discovered = stateless_ok(&resp, json!(1))["supportedVersions"].clone();
    let discovered = discovered.as_array().expect("supportedVersions is an array");
    let unsupported = [
        h.handshake(json!(2), "tools/list", json!({}), Some("2024-11-05")).send().await,
        h.stateless_with(
            json!(3),
            "tools/list",
            json!({}),
            env_with("io.modelcontextprotocol/protocolVersion", json!("2027-01-01")),
        )
        .header("mcp-protocol-version", "2027-01-01")
        .send()
        .await,
    ];
    for resp in unsupported {
        assert_eq!(resp.code(), -32022);
        let supported = resp.json()["error"]["data"]["supported"].clone();
        let supported = supported.as_array().expect("data.supported is an array");
        assert!(!supported.is_empty());
        for version in supported {
            assert!(discovered.contains(version), "{version} is not in supportedVersions {discovered:?}");
        }
    }
}

// §7 line 44
#[tokio::test]
async fn unsupported_version_without_a_token_is_still_400_unsupported_version() {
    let h = Harness::new();
    let env = env_with("io.modelcontextprotocol/protocolVersion", json!("v999.0.0"));
    let resp = h
        .stateless_with(json!(44), "tools/list", json!({}), env)
        .header("mcp-protocol-version", "v999.0.0")
        .without("authorization")
        .send()
        .await;
    let error = assert_error_v(&resp, 400, -32022, json!(44), STATELESS);
    assert_eq!(error["data"]["requested"], "v999.0.0");
    assert!(resp.header("www-authenticate").is_none(), "answered before authentication");
    // The handshake-era header path too.
    let resp =
        h.handshake(json!(44), "tools/list", json!({}), Some("2024-11-05")).without("authorization").send().await;
    assert_error_v(&resp, 400, -32022, json!(44), STATELESS);
    assert!(resp.header("www-authenticate").is_none());
}

// §7 line 45
#[tokio::test]
async fn header_body_version_mismatch_without_a_token_is_still_400_header_mismatch() {
    let h = Harness::new();
    let env = env_with("io.modelcontextprotocol/protocolVersion", json!("v999.0.0"));
    let resp = h.stateless_with(json!(45), "tools/list", json!({}), env).without("authorization").send().await;
    assert_error_v(&resp, 400, -32020, json!(45), STATELESS);
    assert!(resp.header("www-authenticate").is_none(), "answered before authentication");
}

// §7 line 46
#[tokio::test]
async fn tools_list_with_2025_06_18_header_and_no_envelope_gets_the_handshake_shape() {
    let h = Harness::new();
    let resp = h.handshake(json!(46), "tools/list", json!({}), Some("2025-06-18")).send().await;
    let result = handshake_ok(&resp, json!(46), "2025-06-18");
    assert!(result["tools"].is_array(), "result {result}");
}

// §7 line 47
#[tokio::test]
async fn tools_list_without_envelope_or_header_is_served_as_2025_03_26() {
    let h = Harness::new();
    let resp = h.handshake(json!(47), "tools/list", json!({}), None).send().await;
    let result = handshake_ok(&resp, json!(47), "2025-03-26");
    let tools = result["tools"].as_array().expect("tools array");
    for tool in tools {
        assert!(tool.get("title").is_none(), "2025-03-26 tools have no title: {tool}");
        assert!(tool.get("outputSchema").is_none(), "2025-03-26 tools have no outputSchema: {tool}");
        assert!(tool.get("icons").is_none(), "{tool}");
    }
    // An explicit 2025-03-26 header is served the same way.
    let resp = h.handshake(json!(47), "tools/list", json!({}), Some("2025-03-26")).send().await;
    assert_eq!(handshake_ok(&resp, json!(47), "2025-03-26"), result);
}

// §3.0.3 (addition): the 2025-03-26 downgrade of the other listings
#[tokio::test]
async fn listings_served_as_2025_03_26_omit_titles_and_2025_06_18_keeps_them() {
    let h = Harness::new();
    let resp = h.handshake(json!(1), "prompts/list", json!({}), None).send().await;
    let prompts = handshake_ok(&resp, json!(1), "2025-03-26")["prompts"].clone();
    assert!(!prompts.as_array().unwrap().is_empty());
    for prompt in prompts.as_array().unwrap() {
        assert!(prompt.get("title").is_none(), "{prompt}");
        for argument in prompt["arguments"].as_array().unwrap() {
            assert!(argument.get("title").is_none(), "{argument}");
        }
    }
    let resp = h.handshake(json!(2), "resources/list", json!({}), None).send().await;
    for resource in handshake_ok(&resp, json!(2), "2025-03-26")["resources"].as_array().unwrap() {
        assert!(resource.get("title").is_none(), "{resource}");
    }
    let resp = h.handshake(json!(3), "prompts/list", json!({}), Some("2025-06-18")).send().await;
    for prompt in handshake_ok(&resp, json!(3), "2025-06-18")["prompts"].as_array().unwrap() {
        assert!(prompt["title"].is_string(), "{prompt}");
    }
}

// §7 line 48
#[tokio::test]
async fn header_2024_11_05_without_envelope_is_400_unsupported_version() {
    let h = Harness::new();
    let resp = h.handshake(json!(48), "tools/list", json!({}), Some("2024-11-05")).send().await;
    let error = assert_error_v(&resp, 400, -32022, json!(48), STATELESS);
    assert_eq!(error["data"]["requested"], "2024-11-05", "error {error}");
    assert_eq!(error["data"]["supported"], json!(SUPPORTED), "error {error}");
}

// §7 line 49
#[tokio::test]
async fn future_header_version_without_envelope_is_400_unsupported_version() {
    let h = Harness::new();
    for version in ["2027-01-01", "2025-11-25", "garbage"] {
        let resp = h.handshake(json!(49), "tools/list", json!({}), Some(version)).send().await;
        let error = assert_error_v(&resp, 400, -32022, json!(49), STATELESS);
        assert_eq!(error["data"]["requested"], version, "error {error}");
    }
}

// §7 line 50
#[tokio::test]
async fn repeated_or_folded_protocol_version_header_is_400_header_mismatch() {
    let h = Harness::new();
    let resp =
        h.stateless(json!(50), "tools/list", json!({})).append_header("mcp-protocol-version", STATELESS).send().await;
    assert_error_v(&resp, 400, -32020, json!(50), STATELESS);
    let resp = h
        .stateless(json!(51), "tools/list", json!({}))
        .header("mcp-protocol-version", "2026-07-28, 2026-07-28")
        .send()
        .await;
    assert_error_v(&resp, 400, -32020, json!(51), STATELESS);
    // Without an envelope a repeated header names no single version either:
    // the request is refused (-32020 per §5.1, or -32022 for the folded value per §2 step 4).
    let resp = h
        .handshake(json!(52), "tools/list", json!({}), Some("2025-06-18"))
        .append_header("mcp-protocol-version", "2025-06-18")
        .send()
        .await;
    let body = resp.json();
    assert_eq!(resp.status, 400, "body {body}");
    assert!([-32020, -32022].contains(&resp.code()), "body {body}");
    assert_eq!(body["id"], 52);
}

// ---------------------------------------------------------------------------
// Handshake era methods (§7 lines 51–57, 59–63)
// ---------------------------------------------------------------------------

fn initialize_params(version: Value) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "example-agent", "title": "Example Agent", "version": "2.3.0"},
    })
}

// §7 line 51
#[tokio::test]
async fn initialize_2025_06_18_echoes_the_version_with_titled_server_info_and_no_session() {
    let h = Harness::new();
    let resp = h.handshake(json!(1), "initialize", initialize_params(json!("2025-06-18")), None).send().await;
    let result = handshake_ok(&resp, json!(1), "2025-06-18");
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["capabilities"], json!({"tools": {}, "resources": {}, "prompts": {}, "completions": {}}));
    assert_eq!(result["serverInfo"]["name"], "kobana-autonomous-inbox");
    assert_eq!(result["serverInfo"]["title"], "Kobana Autonomous Inbox");
    assert!(result["serverInfo"]["version"].is_string());
    assert!(result["instructions"].is_string(), "result {result}");
}

// §7 line 52
#[tokio::test]
async fn initialize_2025_03_26_echoes_the_version_with_untitled_server_info() {
    let h = Harness::new();
    let resp = h.handshake(json!(2), "initialize", initialize_params(json!("2025-03-26")), None).send().await;
    let result = handshake_ok(&resp, json!(2), "2025-03-26");
    assert_eq!(result["protocolVersion"], "2025-03-26");
    assert_eq!(result["serverInfo"]["name"], "kobana-autonomous-inbox");
    assert!(result["serverInfo"].get("title").is_none(), "result {result}");
    assert!(result["serverInfo"]["version"].is_string());
}

// §7 line 53
#[tokio::test]
async fn initialize_2024_11_05_gets_a_2025_06_18_counter_offer() {
    let h = Harness::new();
    let resp = h.handshake(json!(3), "initialize", initialize_params(json!("2024-11-05")), None).send().await;
    let result = handshake_ok(&resp, json!(3), "2025-06-18");
    assert_eq!(result["protocolVersion"], "2025-06-18");
}

// §7 line 54
#[tokio::test]
async fn initialize_asking_for_2026_07_28_gets_a_2025_06_18_counter_offer() {
    let h = Harness::new();
    let resp = h.handshake(json!(4), "initialize", initialize_params(json!("2026-07-28")), None).send().await;
    let result = handshake_ok(&resp, json!(4), "2025-06-18");
    assert_eq!(result["protocolVersion"], "2025-06-18");
}

// §7 line 55
#[tokio::test]
async fn initialize_with_stateless_header_and_no_envelope_is_400_invalid_params() {
    let h = Harness::new();
    let resp =
        h.handshake(json!(5), "initialize", initialize_params(json!("2025-06-18")), Some(STATELESS)).send().await;
    assert_error_v(&resp, 400, -32602, json!(5), STATELESS);
}

// §7 line 56
#[tokio::test]
async fn initialize_with_an_envelope_is_404_method_not_found() {
    let h = Harness::new();
    let resp = h.stateless(json!(6), "initialize", initialize_params(json!("2025-06-18"))).send().await;
    let error = assert_error_v(&resp, 404, -32601, json!(6), STATELESS);
    assert_eq!(error["data"]["method"], "initialize");
}

// §7 line 57
#[tokio::test]
async fn initialize_without_capabilities_is_200_invalid_params() {
    let h = Harness::new();
    let mut params = initialize_params(json!("2025-06-18"));
    params.as_object_mut().unwrap().remove("capabilities");
    let resp = h.handshake(json!(7), "initialize", params, None).send().await;
    let body = resp.json();
    assert!(body.get("result").is_none(), "{body}");
    resp.assert_error(200, -32602, json!(7));
    assert_no_session(&resp);
}

// §3.2 (addition): the other required initialize fields
#[tokio::test]
async fn initialize_without_client_info_or_version_string_is_200_invalid_params() {
    let h = Harness::new();
    let mut no_info = initialize_params(json!("2025-06-18"));
    no_info.as_object_mut().unwrap().remove("clientInfo");
    let resp = h.handshake(json!(1), "initialize", no_info, None).send().await;
    resp.assert_error(200, -32602, json!(1));
    let resp = h.handshake(json!(2), "initialize", initialize_params(json!(20250618)), None).send().await;
    resp.assert_error(200, -32602, json!(2));
}

// §2 step 2 (addition): the version header is not validated on initialize
#[tokio::test]
async fn initialize_with_an_unsupported_version_header_still_negotiates() {
    let h = Harness::new();
    for header in ["2024-11-05", "2025-03-26", "garbage"] {
        let resp =
            h.handshake(json!(8), "initialize", initialize_params(json!("2025-06-18")), Some(header)).send().await;
        let result = handshake_ok(&resp, json!(8), "2025-06-18");
        assert_eq!(result["protocolVersion"], "2025-06-18", "header {header}");
    }
}

// §7 line 58
#[tokio::test]
async fn initialize_without_a_token_is_401_with_resource_metadata() {
    let h = Harness::new();
    let resp = h
        .handshake(json!(58), "initialize", initialize_params(json!("2025-06-18")), None)
        .without("authorization")
        .send()
        .await;
    assert_eq!(resp.status, 401, "body {}", String::from_utf8_lossy(&resp.body));
    let challenge = resp.header("www-authenticate").expect("WWW-Authenticate on 401");
    assert!(challenge.starts_with("Bearer "), "challenge {challenge}");
    assert!(
        challenge.contains("resource_metadata=\"http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp\""),
        "challenge {challenge}"
    );
    assert!(!challenge.contains("error="), "no error attribute without a token (RFC 6750 §3.1): {challenge}");
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    assert_no_session(&resp);
}

// §7 line 59
#[tokio::test]
async fn handshake_ping_is_200_with_empty_result() {
    let h = Harness::new();
    let resp = h.post().json(&json!({"jsonrpc": "2.0", "id": "p1", "method": "ping"})).send().await;
    let result = handshake_ok(&resp, json!("p1"), "2025-03-26");
    assert_eq!(result, json!({}));
    let resp = h
        .post()
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "id": "p2", "method": "ping"}))
        .send()
        .await;
    assert_eq!(handshake_ok(&resp, json!("p2"), "2025-06-18"), json!({}));
}

// §7 line 60
#[tokio::test]
async fn ping_with_an_envelope_is_404_method_not_found() {
    let h = Harness::new();
    let resp = h.stateless(json!(60), "ping", json!({})).send().await;
    let error = assert_error_v(&resp, 404, -32601, json!(60), STATELESS);
    assert_eq!(error["data"]["method"], "ping");
}

// §7 line 61
#[tokio::test]
async fn handshake_unknown_method_is_200_method_not_found() {
    let h = Harness::new();
    for version in [Some("2025-06-18"), None] {
        let resp = h.handshake(json!(61), "foo/bar", json!({}), version).send().await;
        let error = assert_error_v(&resp, 200, -32601, json!(61), version.unwrap_or("2025-03-26"));
        assert_eq!(error["data"]["method"], "foo/bar");
    }
}

// §7 line 62
#[tokio::test]
async fn handshake_server_discover_without_envelope_is_200_method_not_found() {
    let h = Harness::new();
    let resp = h.handshake(json!(62), "server/discover", json!({}), None).send().await;
    let error = assert_error_v(&resp, 200, -32601, json!(62), "2025-03-26");
    assert_eq!(error["data"]["method"], "server/discover");
    let resp = h.handshake(json!(62), "server/discover", json!({}), Some("2025-06-18")).send().await;
    assert_error_v(&resp, 200, -32601, json!(62), "2025-06-18");
}

// §7 line 63
#[tokio::test]
async fn handshake_logging_set_level_is_200_method_not_found() {
    let h = Harness::new();
    let resp = h.handshake(json!(63), "logging/setLevel", json!({"level": "info"}), Some("2025-06-18")).send().await;
    assert_error_v(&resp, 200, -32601, json!(63), "2025-06-18");
}

// §3.13 (addition): the other handshake-era methods that are not served
#[tokio::test]
async fn handshake_subscriptions_and_other_unserved_methods_are_200_method_not_found() {
    let h = Harness::new();
    for method in ["resources/subscribe", "resources/unsubscribe", "subscriptions/listen", "sampling/createMessage"] {
        let resp = h.handshake(json!(1), method, json!({"uri": EXISTING_URI}), Some("2025-06-18")).send().await;
        assert_error_v(&resp, 200, -32601, json!(1), "2025-06-18");
    }
}

// ---------------------------------------------------------------------------
// Stateless standard headers (§7 lines 64–78)
// ---------------------------------------------------------------------------

// §7 line 64
#[tokio::test]
async fn stateless_request_without_protocol_version_header_is_400_header_mismatch() {
    let h = Harness::new();
    let resp = h.stateless(json!(64), "tools/list", json!({})).without("mcp-protocol-version").send().await;
    assert_error_v(&resp, 400, -32020, json!(64), STATELESS);
}

// §7 line 65
#[tokio::test]
async fn stateless_request_without_mcp_method_is_400_header_mismatch() {
    let h = Harness::new();
    let resp = h.stateless(json!(65), "tools/list", json!({})).without("mcp-method").send().await;
    assert_error_v(&resp, 400, -32020, json!(65), STATELESS);
}

// §7 line 66
#[tokio::test]
async fn mcp_method_naming_another_method_is_400_header_mismatch() {
    let h = Harness::new();
    let resp = h.stateless(json!(66), "tools/list", json!({})).header("mcp-method", "prompts/list").send().await;
    assert_error_v(&resp, 400, -32020, json!(66), STATELESS);
}

// §7 line 67
#[tokio::test]
async fn mcp_method_value_is_compared_case_sensitively() {
    let h = Harness::new();
    let resp = h.stateless(json!(67), "tools/list", json!({})).header("mcp-method", "TOOLS/LIST").send().await;
    assert_error_v(&resp, 400, -32020, json!(67), STATELESS);
}

// §1.1 F2 / §5.1 (addition)
#[tokio::test]
async fn repeated_mcp_method_header_is_400_header_mismatch() {
    let h = Harness::new();
    let resp = h.stateless(json!(1), "tools/list", json!({})).append_header("mcp-method", "tools/list").send().await;
    assert_error_v(&resp, 400, -32020, json!(1), STATELESS);
}

// §7 line 68
#[tokio::test]
async fn routing_header_names_are_case_insensitive() {
    let h = Harness::new();
    for (version_name, method_name) in [
        ("mcp-protocol-version", "mcp-method"),
        ("MCP-PROTOCOL-VERSION", "MCP-METHOD"),
        ("Mcp-Protocol-Version", "Mcp-Method"),
    ] {
        let resp = h
            .stateless(json!(68), "tools/list", json!({}))
            .without("mcp-protocol-version")
            .without("mcp-method")
            .header(version_name, STATELESS)
            .header(method_name, "tools/list")
            .send()
            .await;
        stateless_ok(&resp, json!(68));
    }
}

// §2 / §5.1 (addition): header values are trimmed of spaces and tabs before comparing
#[tokio::test]
async fn routing_header_values_padded_with_whitespace_still_match() {
    let h = Harness::new();
    let resp = h
        .stateless(json!(1), "prompts/get", json!({"name": PROMPT, "arguments": {"inbox_id": "inb_bills"}}))
        .header("mcp-protocol-version", " 2026-07-28\t")
        .header("mcp-method", "\tprompts/get  ")
        .header("mcp-name", "  triage_failed_emails ")
        .send()
        .await;
    stateless_ok(&resp, json!(1));
}

// §7 line 69
#[tokio::test]
async fn tools_call_without_mcp_name_is_400_header_mismatch() {
    let h = Harness::new();
    let resp = h
        .stateless(json!(69), "tools/call", json!({"name": "emails_get", "arguments": {"id": "eml_01HX9"}}))
        .without("mcp-name")
        .send()
        .await;
    assert_error_v(&resp, 400, -32020, json!(69), STATELESS);
}

// §7 line 70
#[tokio::test]
async fn tools_call_with_mcp_name_of_another_tool_is_400_header_mismatch() {
    let h = Harness::new();
    let resp = h
        .stateless(json!(70), "tools/call", json!({"name": "emails_get", "arguments": {"id": "eml_01HX9"}}))
        .header("mcp-name", "wrong_tool")
        .send()
        .await;
    let error = assert_error_v(&resp, 400, -32020, json!(70), STATELESS);
    assert_eq!(error["data"]["header"], "Mcp-Name", "error {error}");
}

// §7 line 71
#[tokio::test]
async fn mcp_name_padded_with_spaces_or_tabs_matches_the_body() {
    let h = Harness::new();
    for padded_name in ["  emails_get  ", "\temails_get \t"] {
        let resp = h
            .stateless(json!(71), "tools/call", json!({"name": "emails_get", "arguments": {"id": "eml_01HX9"}}))
            .header("mcp-name", padded_name)
            .send()
            .await;
        assert_routing_headers_accepted(&resp, json!(71));
    }
}

// §7 line 72
#[tokio::test]
async fn mcp_name_in_base64_sentinel_form_matches_the_body() {
    let h = Harness::new();
    let resp = h
        .stateless(json!(72), "tools/call", json!({"name": "emails_get", "arguments": {"id": "eml_01HX9"}}))
        .header("mcp-name", "=?base64?ZW1haWxzX2dldA==?=")
        .send()
        .await;
    assert_routing_headers_accepted(&resp, json!(72));
}

// §7 line 73 (and §5.6: non-alphabet characters, non-UTF-8 bytes)
#[tokio::test]
async fn mcp_name_with_bad_base64_is_400_header_mismatch() {
    let h = Harness::new();
    for bad in ["=?base64?ZW1haWxzX2dldA?=", "=?base64?ZW1haW!!!X2dldA==?=", "=?base64?/w==?="] {
        let resp = h
            .stateless(json!(73), "tools/call", json!({"name": "emails_get", "arguments": {"id": "eml_01HX9"}}))
            .header("mcp-name", bad)
            .send()
            .await;
        assert_error_v(&resp, 400, -32020, json!(73), STATELESS);
    }
}

// §5.6 (addition): sentinel details
#[tokio::test]
async fn mcp_name_sentinel_is_case_sensitive_trimmed_and_required_for_sentinel_like_names() {
    let h = Harness::new();
    let call = |name: &str| json!({"name": name, "arguments": {}});
    // Uppercase prefix: not a sentinel, so compared literally, and it differs.
    let resp = h
        .stateless(json!(1), "tools/call", call("emails_get"))
        .header("mcp-name", "=?BASE64?ZW1haWxzX2dldA==?=")
        .send()
        .await;
    assert_error_v(&resp, 400, -32020, json!(1), STATELESS);
    // Whitespace around a sentinel is trimmed first.
    let resp = h
        .stateless(json!(2), "tools/call", call("emails_get"))
        .header("mcp-name", " =?base64?ZW1haWxzX2dldA==?= ")
        .send()
        .await;
    assert_routing_headers_accepted(&resp, json!(2));
    // A name that itself looks like a sentinel travels encoded ...
    let resp = h
        .stateless(json!(3), "tools/call", call("=?base64?x?="))
        .header("mcp-name", "=?base64?PT9iYXNlNjQ/eD89?=")
        .send()
        .await;
    assert_routing_headers_accepted(&resp, json!(3));
    // ... and sent literally it is an invalid sentinel.
    let resp =
        h.stateless(json!(4), "tools/call", call("=?base64?x?=")).header("mcp-name", "=?base64?x?=").send().await;
    assert_error_v(&resp, 400, -32020, json!(4), STATELESS);
}

// §1.1 F2 (addition)
#[tokio::test]
async fn repeated_mcp_name_header_is_400_header_mismatch() {
    let h = Harness::new();
    let resp = h
        .stateless(json!(1), "prompts/get", json!({"name": PROMPT, "arguments": {"inbox_id": "inb_bills"}}))
        .append_header("mcp-name", PROMPT)
        .send()
        .await;
    assert_error_v(&resp, 400, -32020, json!(1), STATELESS);
}

// §5.6 (addition): nothing to mirror, so params validation answers
#[tokio::test]
async fn tools_call_without_a_name_and_without_mcp_name_is_200_invalid_params() {
    let h = Harness::new();
    let resp = h.stateless(json!(1), "tools/call", json!({"arguments": {}})).without("mcp-name").send().await;
    assert_error_v(&resp, 200, -32602, json!(1), STATELESS);
    let resp = h.stateless(json!(2), "resources/read", json!({})).without("mcp-name").send().await;
    assert_error_v(&resp, 200, -32602, json!(2), STATELESS);
}

// §7 line 74
#[tokio::test]
async fn non_ascii_uri_in_base64_sentinel_mcp_name_passes_the_header_check() {
    let h = Harness::new();
    let resp = h
        .stateless(json!(74), "resources/read", json!({"uri": NON_ASCII_URI}))
        .header("mcp-name", NON_ASCII_URI_SENTINEL)
        .send()
        .await;
    assert_routing_headers_accepted(&resp, json!(74));
    // The resource does not exist: the stateless not-found answer.
    let error = assert_error_v(&resp, 200, -32602, json!(74), STATELESS);
    assert_eq!(error["data"]["uri"], NON_ASCII_URI, "error {error}");
}

// §7 line 75
#[tokio::test]
async fn non_ascii_uri_sent_raw_in_mcp_name_is_400_header_mismatch() {
    let h = Harness::new();
    let resp = h
        .stateless(json!(75), "resources/read", json!({"uri": NON_ASCII_URI}))
        .header_bytes("mcp-name", NON_ASCII_URI.as_bytes())
        .send()
        .await;
    assert_error_v(&resp, 400, -32020, json!(75), STATELESS);
}

// §7 line 76
#[tokio::test]
async fn prompts_get_with_mcp_name_differing_from_params_name_is_400_header_mismatch() {
    let h = Harness::new();
    let resp = h
        .stateless(json!(76), "prompts/get", json!({"name": PROMPT, "arguments": {"inbox_id": "inb_bills"}}))
        .header("mcp-name", "summarize_inbox")
        .send()
        .await;
    assert_error_v(&resp, 400, -32020, json!(76), STATELESS);
    // And resources/read compares against params.uri.
    let resp = h
        .stateless(json!(76), "resources/read", json!({"uri": EXISTING_URI}))
        .header("mcp-name", "kobana://inbox/docs/webhook-signatures")
        .send()
        .await;
    assert_error_v(&resp, 400, -32020, json!(76), STATELESS);
}

fn completion_params() -> Value {
    json!({"ref": {"type": "ref/prompt", "name": PROMPT}, "argument": {"name": "inbox_id", "value": "inb_"}})
}

// §7 line 77
#[tokio::test]
async fn completion_complete_without_mcp_name_is_served() {
    let h = Harness::new();
    let resp = h.stateless(json!(77), "completion/complete", completion_params()).without("mcp-name").send().await;
    let result = stateless_ok(&resp, json!(77));
    assert!(result["completion"]["values"].is_array(), "result {result}");
}

// §7 line 78
#[tokio::test]
async fn client_session_id_is_ignored_and_never_echoed() {
    let h = Harness::new();
    let resp = h.stateless(json!(78), "tools/list", json!({})).header("mcp-session-id", "x").send().await;
    stateless_ok(&resp, json!(78));
    assert_no_session(&resp);
}

// ---------------------------------------------------------------------------
// Stateless methods and decoration (§7 lines 90–105, without 102; and 123)
// ---------------------------------------------------------------------------

// §7 line 90
#[tokio::test]
async fn server_discover_lists_versions_capabilities_and_caching_hints() {
    let h = Harness::new();
    let resp = h.stateless(json!("d-1"), "server/discover", json!({})).send().await;
    let result = stateless_ok(&resp, json!("d-1"));
    let versions = result["supportedVersions"].as_array().expect("supportedVersions array");
    assert!(!versions.is_empty());
    assert!(versions.contains(&json!(STATELESS)), "result {result}");
    assert!(result["capabilities"].is_object(), "result {result}");
    assert_caching_hints(&result);
    let info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert!(info["name"].is_string() && info["version"].is_string(), "serverInfo {info}");
    assert_eq!(info["title"], "Kobana Autonomous Inbox", "serverInfo {info}");
    assert!(result.get("serverInfo").is_none(), "serverInfo lives in _meta, not the body: {result}");
}

// §7 line 91
#[tokio::test]
async fn tools_list_is_deterministic_with_object_input_schemas_and_caching_hints() {
    let h = Harness::new();
    let first = stateless_ok(&h.stateless(json!(91), "tools/list", json!({})).send().await, json!(91));
    let second = stateless_ok(&h.stateless(json!(92), "tools/list", json!({})).send().await, json!(92));
    assert_caching_hints(&first);
    assert_caching_hints(&second);
    let tools = first["tools"].as_array().expect("tools array");
    assert_eq!(first["tools"], second["tools"], "tools/list order must be deterministic");
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "tool {tool}");
        assert!(tool["name"].is_string(), "tool {tool}");
    }
    assert!(first.get("nextCursor").is_none(), "no cursor for a single page: {first}");
}

// §7 line 92
#[tokio::test]
async fn list_with_a_cursor_the_server_never_issued_is_200_invalid_params() {
    let h = Harness::new();
    for method in ["tools/list", "resources/list", "resources/templates/list", "prompts/list"] {
        for cursor in ["bm90LWlzc3VlZA==", ""] {
            let resp = h.stateless(json!(92), method, json!({"cursor": cursor})).send().await;
            let body = resp.json();
            assert!(body.get("result").is_none(), "{method} {cursor:?}: {body}");
            assert_error_v(&resp, 200, -32602, json!(92), STATELESS);
        }
    }
}

// §7 line 93
#[tokio::test]
async fn resources_list_carries_caching_hints() {
    let h = Harness::new();
    let result = stateless_ok(&h.stateless(json!(93), "resources/list", json!({})).send().await, json!(93));
    assert_caching_hints(&result);
    let resources = result["resources"].as_array().expect("resources array");
    for resource in resources {
        assert!(resource["uri"].is_string() && resource["name"].is_string(), "resource {resource}");
    }
    assert!(resources.iter().any(|r| r["uri"] == EXISTING_URI), "resources {resources:?}");
}

// §7 line 94
#[tokio::test]
async fn resource_templates_list_carries_caching_hints() {
    let h = Harness::new();
    let result = stateless_ok(&h.stateless(json!(94), "resources/templates/list", json!({})).send().await, json!(94));
    assert_caching_hints(&result);
    assert!(result["resourceTemplates"].is_array(), "result {result}");
}

// §7 line 95
#[tokio::test]
async fn resources_read_of_an_existing_uri_returns_contents_and_caching_hints() {
    let h = Harness::new();
    for uri in [EXISTING_URI, "kobana://inbox/docs/webhook-signatures"] {
        let resp = h.stateless(json!(95), "resources/read", json!({"uri": uri})).send().await;
        let result = stateless_ok(&resp, json!(95));
        assert_caching_hints(&result);
        let contents = result["contents"].as_array().expect("contents array");
        assert!(!contents.is_empty(), "contents must not be empty");
        assert_eq!(contents[0]["uri"], uri);
        assert!(contents[0]["mimeType"].is_string());
        assert!(
            contents[0]["text"].is_string() != contents[0]["blob"].is_string(),
            "exactly one of text or blob: {}",
            contents[0]
        );
    }
}

// §7 line 96
#[tokio::test]
async fn resources_read_of_an_unknown_uri_is_invalid_params_stateless_and_resource_not_found_handshake() {
    let h = Harness::new();
    let uri = "kobana://inbox/emails/eml_nope";
    let resp = h.stateless(json!(96), "resources/read", json!({"uri": uri})).send().await;
    assert!(resp.json().get("result").is_none(), "never an empty contents array");
    let error = assert_error_v(&resp, 200, -32602, json!(96), STATELESS);
    assert_eq!(error["data"]["uri"], uri);
    for version in [Some("2025-06-18"), None] {
        let resp = h.handshake(json!(97), "resources/read", json!({"uri": uri}), version).send().await;
        let error = assert_error_v(&resp, 200, -32002, json!(97), version.unwrap_or("2025-03-26"));
        assert_eq!(error["data"]["uri"], uri);
    }
}

// §7 line 97
#[tokio::test]
async fn prompts_list_carries_caching_hints() {
    let h = Harness::new();
    let result = stateless_ok(&h.stateless(json!(97), "prompts/list", json!({})).send().await, json!(97));
    assert_caching_hints(&result);
    let prompts = result["prompts"].as_array().expect("prompts array");
    let names: Vec<&str> = prompts.iter().filter_map(|p| p["name"].as_str()).collect();
    for expected in [PROMPT, "summarize_inbox", "investigate_webhook"] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
}

// §7 line 98
#[tokio::test]
async fn prompts_get_of_an_unknown_name_is_200_invalid_params() {
    let h = Harness::new();
    let resp = h.stateless(json!(98), "prompts/get", json!({"name": "no_such_prompt", "arguments": {}})).send().await;
    assert_error_v(&resp, 200, -32602, json!(98), STATELESS);
    let resp =
        h.handshake(json!(98), "prompts/get", json!({"name": "no_such_prompt"}), Some("2025-06-18")).send().await;
    assert_error_v(&resp, 200, -32602, json!(98), "2025-06-18");
}

// §7 line 99
#[tokio::test]
async fn prompts_get_without_a_required_argument_is_200_invalid_params() {
    let h = Harness::new();
    for (name, arguments) in
        [(PROMPT, json!({})), ("summarize_inbox", json!({"since": "2026-01-01"})), ("investigate_webhook", json!({}))]
    {
        let resp = h.stateless(json!(99), "prompts/get", json!({"name": name, "arguments": arguments})).send().await;
        let body = resp.json();
        assert!(body.get("result").is_none(), "{name}: {body}");
        assert_error_v(&resp, 200, -32602, json!(99), STATELESS);
    }
    // The optional argument may be left out.
    let resp = h
        .stateless(json!(99), "prompts/get", json!({"name": "summarize_inbox", "arguments": {"inbox_id": "inb_bills"}}))
        .send()
        .await;
    stateless_ok(&resp, json!(99));
}

// §3.11 (addition): argument values must be strings
#[tokio::test]
async fn prompts_get_with_a_non_string_argument_is_200_invalid_params() {
    let h = Harness::new();
    let resp = h.stateless(json!(1), "prompts/get", json!({"name": PROMPT, "arguments": {"inbox_id": 7}})).send().await;
    assert_error_v(&resp, 200, -32602, json!(1), STATELESS);
}

// §3.11 / §3.14 (addition): prompts/get and resources/read in the handshake shape
#[tokio::test]
async fn handshake_prompts_get_and_resources_read_have_no_stateless_decoration() {
    let h = Harness::new();
    let params = json!({"name": PROMPT, "arguments": {"inbox_id": "inb_bills"}});
    let resp = h.handshake(json!(1), "prompts/get", params, Some("2025-06-18")).send().await;
    let result = handshake_ok(&resp, json!(1), "2025-06-18");
    assert!(result["description"].is_string(), "result {result}");
    let message = &result["messages"][0];
    assert_eq!(message["role"], "user");
    assert_eq!(message["content"]["type"], "text");
    assert!(message["content"]["text"].as_str().is_some_and(|t| t.contains("inb_bills")), "message {message}");

    let resp = h.handshake(json!(2), "resources/read", json!({"uri": EXISTING_URI}), None).send().await;
    let result = handshake_ok(&resp, json!(2), "2025-03-26");
    assert_eq!(result["contents"][0]["uri"], EXISTING_URI);
    assert!(result["contents"][0]["text"].is_string());
}

// §3.12 (addition): 2025-03-26 has no completion context, so whatever is sent there is ignored
#[tokio::test]
async fn completion_context_is_ignored_in_2025_03_26() {
    let h = Harness::new();
    for context in [json!({"arguments": {"since": "2026-01-01"}}), json!("not an object")] {
        let mut params = completion_params();
        params["context"] = context.clone();
        let resp = h.handshake(json!(1), "completion/complete", params, None).send().await;
        let result = handshake_ok(&resp, json!(1), "2025-03-26");
        assert!(result["completion"]["values"].is_array(), "context {context}: {result}");
    }
}

// §7 line 100
#[tokio::test]
async fn completion_complete_returns_at_most_100_values_with_total_and_has_more() {
    let h = Harness::new();
    let resp = h.stateless(json!(100), "completion/complete", completion_params()).send().await;
    let result = stateless_ok(&resp, json!(100));
    let completion = &result["completion"];
    let values = completion["values"].as_array().unwrap_or_else(|| panic!("completion.values: {result}"));
    assert!(values.len() <= 100);
    for value in values {
        assert!(value.is_string(), "value {value}");
    }
    assert!(completion["total"].is_u64(), "completion.total: {result}");
    assert!(completion["total"].as_u64().unwrap() >= values.len() as u64);
    assert!(completion["hasMore"].is_boolean(), "completion.hasMore: {result}");
    assert_no_caching_hints(&result);
}

// §3.12 (addition): unknown prompt or argument in a completion reference
#[tokio::test]
async fn completion_for_an_unknown_prompt_or_argument_is_200_invalid_params() {
    let h = Harness::new();
    for params in [
        json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "inbox_id", "value": ""}}),
        json!({"ref": {"type": "ref/prompt", "name": PROMPT}, "argument": {"name": "nope", "value": ""}}),
        json!({"ref": {"type": "ref/unknown"}, "argument": {"name": "inbox_id", "value": ""}}),
    ] {
        let resp = h.stateless(json!(1), "completion/complete", params).send().await;
        assert_error_v(&resp, 200, -32602, json!(1), STATELESS);
    }
}

// §7 line 101
#[tokio::test]
async fn tools_call_of_an_unknown_tool_is_200_invalid_params() {
    let h = Harness::new();
    let resp = h.stateless(json!(101), "tools/call", json!({"name": "no_such_tool", "arguments": {}})).send().await;
    let error = assert_error_v(&resp, 200, -32602, json!(101), STATELESS);
    assert!(error["message"].as_str().is_some_and(|m| m.contains("Unknown tool")), "error {error}");
    let resp = h
        .handshake(json!(101), "tools/call", json!({"name": "no_such_tool", "arguments": {}}), Some("2025-06-18"))
        .send()
        .await;
    assert_error_v(&resp, 200, -32602, json!(101), "2025-06-18");
}

// §7 line 103
#[tokio::test]
async fn tools_call_prompts_get_and_completion_results_carry_no_caching_hints() {
    let h = Harness::new();
    let resp = h
        .stateless(json!(1), "prompts/get", json!({"name": PROMPT, "arguments": {"inbox_id": "inb_bills"}}))
        .send()
        .await;
    let result = stateless_ok(&resp, json!(1));
    assert_no_caching_hints(&result);
    assert!(result["messages"].as_array().is_some_and(|m| !m.is_empty()), "result {result}");

    let resp = h.stateless(json!(2), "completion/complete", completion_params()).send().await;
    assert_no_caching_hints(&stateless_ok(&resp, json!(2)));

    let resp =
        h.stateless(json!(3), "tools/call", json!({"name": "emails_get", "arguments": {"id": "x"}})).send().await;
    let body = resp.json();
    let result = body.get("result").unwrap_or_else(|| panic!("a tool result (isError), not an error: {body}"));
    assert_eq!(result["isError"], true, "{body}");
    assert_no_caching_hints(result);
    let text = body.to_string();
    assert!(!text.contains("ttlMs") && !text.contains("cacheScope"), "tools/call answer {text}");
}

// §3.0.2 (addition): error responses carry no decoration
#[tokio::test]
async fn stateless_error_responses_carry_no_result_decoration() {
    let h = Harness::new();
    let resp = h.stateless(json!(1), "tools/call", json!({"name": "no_such_tool"})).send().await;
    let body = resp.json();
    assert!(body.get("result").is_none());
    let text = body.to_string();
    for key in ["resultType", "ttlMs", "cacheScope", "io.modelcontextprotocol/serverInfo"] {
        assert!(!text.contains(key), "{key} in error response {text}");
    }
}

// §7 line 104
#[tokio::test]
async fn unknown_stateless_method_is_404_method_not_found_echoing_the_id() {
    let h = Harness::new();
    for id in [json!(104), json!("req-104")] {
        let resp = h.stateless(id.clone(), "foo/bar", json!({})).send().await;
        let error = assert_error_v(&resp, 404, -32601, id, STATELESS);
        assert_eq!(error["data"]["method"], "foo/bar");
    }
}

// §7 line 105
#[tokio::test]
async fn removed_and_stream_methods_with_an_envelope_are_404_method_not_found() {
    let h = Harness::new();
    for method in [
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "subscriptions/listen",
        "tasks/list",
        "sampling/createMessage",
        "roots/list",
        "elicitation/create",
    ] {
        let resp = h.stateless(json!(105), method, json!({"uri": EXISTING_URI, "level": "info"})).send().await;
        let error = assert_error_v(&resp, 404, -32601, json!(105), STATELESS);
        assert_eq!(error["data"]["method"], method);
    }
}

// §7 line 123
#[tokio::test]
async fn tools_list_discover_and_completion_never_return_input_required() {
    let h = Harness::new();
    for caps in [json!({}), json!({"elicitation": {}}), json!({"elicitation": {"form": {}, "url": {}}})] {
        for (method, params) in
            [("tools/list", json!({})), ("server/discover", json!({})), ("completion/complete", completion_params())]
        {
            let resp = h.stateless_with(json!(123), method, params, envelope_with(caps.clone())).send().await;
            let result = stateless_ok(&resp, json!(123));
            assert_eq!(result["resultType"], "complete", "{method} with {caps}: {result}");
        }
    }
}

// ---------------------------------------------------------------------------
// Fuzzing: the handler never panics, never answers 5xx, and every answer
// keeps the wire contract's invariants.
// ---------------------------------------------------------------------------

/// xorshift64: small, deterministic, good enough to shake the parser.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "",
    "2.0",
    "1.0",
    "jsonrpc",
    "id",
    "method",
    "params",
    "result",
    "error",
    "name",
    "uri",
    "arguments",
    "cursor",
    "ref",
    "argument",
    "value",
    "context",
    "requestState",
    "inputResponses",
    "protocolVersion",
    "capabilities",
    "clientInfo",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "server/discover",
    "initialize",
    "ping",
    "notifications/initialized",
    "notifications/cancelled",
    "logging/setLevel",
    "foo/bar",
    "_meta",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/logLevel",
    "2026-07-28",
    "2025-06-18",
    "2025-03-26",
    "2025-11-25",
    "2024-11-05",
    "v999.0.0",
    "triage_failed_emails",
    "summarize_inbox",
    "investigate_webhook",
    "inbox_id",
    "since",
    "webhook_id",
    "ref/prompt",
    "ref/resource",
    "kobana://inbox/docs/email-statuses",
    "kobana://inbox/inboxes/cobrança",
    "emails_get",
    "=?base64?ZW1haWxzX2dldA==?=",
    "=?base64?",
    "?=",
    "2024-02-29",
    "2023-02-29",
    "inb_bills",
    "elicitation",
    "form",
    "debug",
    "loud",
    "\u{0}",
    "\"",
    "\\",
    "\n",
    "ç",
    "😀",
    "\u{feff}",
    " ",
    "\t",
];

const METHODS: &[&str] = &[
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "server/discover",
    "initialize",
    "ping",
    "notifications/initialized",
    "notifications/cancelled",
    "logging/setLevel",
    "subscriptions/listen",
    "foo/bar",
    "",
];

fn random_string(rng: &mut Rng) -> String {
    let parts = 1 + rng.below(3);
    let mut s = String::new();
    for _ in 0..parts {
        if rng.chance(80) {
            s.push_str(rng.pick(WORDS));
        } else {
            let c = char::from_u32(rng.below(0x3000) as u32).unwrap_or('?');
            s.push(c);
        }
    }
    s
}

fn random_number(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => json!(0),
        1 => json!(rng.below(1000)),
        2 => json!(-(rng.below(1000) as i64)),
        3 => json!(rng.next()),
        4 => json!(i64::MIN),
        5 => json!((rng.below(10_000) as f64) / 7.0),
        _ => json!(1.0),
    }
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    let kinds = if depth == 0 { 4 } else { 6 };
    match rng.below(kinds) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(50)),
        2 => random_number(rng),
        3 => Value::String(random_string(rng)),
        4 => Value::Array((0..rng.below(4)).map(|_| random_value(rng, depth - 1)).collect()),
        _ => {
            let mut map = Map::new();
            for _ in 0..rng.below(5) {
                map.insert(random_string(rng), random_value(rng, depth - 1));
            }
            Value::Object(map)
        }
    }
}

fn random_id(rng: &mut Rng) -> Option<Value> {
    match rng.below(20) {
        0 | 1 => None,
        2 => Some(Value::Null),
        3 => Some(json!(1.5)),
        4 => Some(Value::Bool(true)),
        5 => Some(random_value(rng, 2)),
        6..=10 => Some(Value::String(random_string(rng))),
        11 => Some(json!(u64::MAX)),
        12 => Some(json!(i64::MIN)),
        _ => Some(json!(rng.below(1_000_000))),
    }
}

/// A random envelope: usually valid, sometimes with one field broken.
fn random_envelope(rng: &mut Rng) -> Value {
    let mut env = envelope_with(if rng.chance(30) { json!({"elicitation": {}}) } else { json!({}) });
    if rng.chance(40) {
        let key = rng.pick(&[
            "io.modelcontextprotocol/protocolVersion",
            "io.modelcontextprotocol/clientCapabilities",
            "io.modelcontextprotocol/clientInfo",
            "io.modelcontextprotocol/logLevel",
            "progressToken",
        ]);
        if rng.chance(30) {
            env.as_object_mut().unwrap().remove(key);
        } else {
            env[key] = random_value(rng, 2);
        }
    }
    env
}

/// A request-shaped object: mostly well formed, with random defects.
fn random_request(rng: &mut Rng) -> Value {
    let mut map = Map::new();
    if rng.chance(97) {
        map.insert("jsonrpc".into(), if rng.chance(95) { json!("2.0") } else { random_value(rng, 1) });
    }
    if let Some(id) = random_id(rng) {
        map.insert("id".into(), id);
    }
    if rng.chance(98) {
        let method = if rng.chance(95) { Value::from(rng.pick(METHODS)) } else { random_value(rng, 1) };
        map.insert("method".into(), method);
    }
    match rng.below(20) {
        0 => {}
        1 => {
            map.insert("params".into(), random_value(rng, 3));
        }
        _ => {
            let mut params = Map::new();
            if rng.chance(60) {
                params.insert("_meta".into(), random_envelope(rng));
            }
            for key in ["name", "uri", "arguments", "cursor", "ref", "argument", "protocolVersion", "capabilities"] {
                if rng.chance(20) {
                    let value = match key {
                        "name" if rng.chance(70) => {
                            json!(rng.pick(&["emails_get", PROMPT, "summarize_inbox", "investigate_webhook", "nope"]))
                        }
                        "uri" if rng.chance(70) => json!(rng.pick(&[EXISTING_URI, NON_ASCII_URI, "x"])),
                        "arguments" if rng.chance(60) => json!({"inbox_id": random_string(rng)}),
                        "ref" if rng.chance(60) => json!({"type": "ref/prompt", "name": PROMPT}),
                        "argument" if rng.chance(60) => json!({"name": "inbox_id", "value": random_string(rng)}),
                        _ => random_value(rng, 2),
                    };
                    params.insert(key.into(), value);
                }
            }
            map.insert("params".into(), Value::Object(params));
        }
    }
    if rng.chance(3) {
        map.insert(if rng.chance(50) { "result" } else { "error" }.into(), random_value(rng, 2));
    }
    Value::Object(map)
}

/// Bytes that a header value may carry (no control characters).
fn header_safe(s: &str) -> Vec<u8> {
    s.bytes().filter(|b| (*b >= 0x20 && *b != 0x7f) || *b == b'\t').collect()
}

/// The id an error or result must carry for this body (§1.3): the request id
/// when it is a string or an integer, otherwise `null`.
fn expected_id(body: &[u8]) -> Value {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(object)) => match object.get("id") {
            Some(Value::String(s)) => Value::String(s.clone()),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Value::Number(n.clone()),
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

fn is_notification(body: &[u8]) -> bool {
    matches!(serde_json::from_slice::<Value>(body), Ok(Value::Object(o)) if !o.contains_key("id"))
}

/// Send one fuzz case on its own task so that a panic is reported with its input.
async fn fuzz_case(h: &Harness, req: common::Req<'_>, body: &[u8], label: &str) {
    let app = h.app().await;
    let request = req.build();
    let shown = String::from_utf8_lossy(&body[..body.len().min(400)]).into_owned();
    let outcome = tokio::spawn(async move { inbox::edge::handle(&app.edge, request).await }).await;
    let response = match outcome {
        Ok(response) => response,
        Err(e) => panic!("{label}: the handler panicked ({e}) on body {shown:?}"),
    };
    let resp = Resp::from(response);
    let status = resp.status;
    let context =
        || format!("{label}: status {status}, body {shown:?}, answer {}", String::from_utf8_lossy(&resp.body));
    assert!(status < 500, "5xx answer: {}", context());
    assert_eq!(resp.header("cache-control"), Some("no-store"), "{}", context());
    assert!(resp.header("mcp-protocol-version").is_some(), "{}", context());
    assert!(resp.header("mcp-session-id").is_none(), "{}", context());
    if resp.header("www-authenticate").is_some() {
        // An authentication refusal (§6.3): OAuth-style JSON, not JSON-RPC.
        assert!(matches!(status, 400 | 401 | 403), "{}", context());
        assert!(serde_json::from_slice::<Value>(&resp.body).is_ok_and(|v| v.is_object()), "{}", context());
        return;
    }
    if status == 202 {
        assert!(resp.body.is_empty(), "{}", context());
        assert!(resp.header("content-type").is_none(), "{}", context());
        assert!(is_notification(body), "202 for a message with an id: {}", context());
        return;
    }
    assert_eq!(resp.header("content-type"), Some("application/json"), "{}", context());
    let answer: Value = serde_json::from_slice(&resp.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", context()));
    assert_eq!(answer["jsonrpc"], "2.0", "{}", context());
    assert!(answer.get("result").is_some() != answer.get("error").is_some(), "{}", context());
    // Gate refusals (stages A4–A6) and parse errors cannot read the id.
    let unread = matches!(status, 406 | 413 | 415) || answer["error"]["code"] == -32700;
    let expected = if unread { Value::Null } else { expected_id(body) };
    assert_eq!(answer["id"], expected, "id echo: {}", context());
    if let Some(error) = answer.get("error") {
        assert!(error["code"].is_i64() && error["message"].is_string(), "{}", context());
        if status == 200 {
            assert!([-32601, -32602, -32002, -32603].contains(&error["code"].as_i64().unwrap()), "{}", context());
        }
    } else {
        assert_eq!(status, 200, "{}", context());
        assert!(answer["result"].is_object(), "{}", context());
    }
    if !matches!(status, 406 | 413 | 415) && serde_json::from_slice::<Value>(body).is_err() {
        assert_eq!((status, answer["error"]["code"].as_i64()), (400, Some(-32700)), "{}", context());
    }
}

/// The routing headers of a stateless request for `body`, sometimes wrong.
fn with_random_routing_headers<'a>(rng: &mut Rng, mut req: common::Req<'a>, body: &Value) -> common::Req<'a> {
    let version = if rng.chance(80) { STATELESS.to_owned() } else { random_string(rng) };
    req = req.header_bytes("mcp-protocol-version", &header_safe(&version));
    let method = body.get("method").and_then(Value::as_str).map(str::to_owned);
    let method = match method {
        Some(m) if rng.chance(80) => m,
        _ => random_string(rng),
    };
    req = req.header_bytes("mcp-method", &header_safe(&method));
    let params = body.get("params");
    let name = params.and_then(|p| p.get("name").or_else(|| p.get("uri"))).and_then(Value::as_str);
    match name {
        Some(n) if rng.chance(70) => req.header("mcp-name", &inbox::mcp::era::encode_name(n)),
        _ if rng.chance(50) => req.header_bytes("mcp-name", &header_safe(&random_string(rng))),
        _ => req,
    }
}

fn with_random_gate_headers<'a>(rng: &mut Rng, mut req: common::Req<'a>) -> common::Req<'a> {
    if rng.chance(5) {
        req = req.header("content-type", rng.pick(&["text/plain", "application/json; charset=utf-8", "", "a/b"]));
    }
    if rng.chance(5) {
        req = req.header("accept", rng.pick(&["text/event-stream", "*/*", "application/*", "text/html;q=0"]));
    }
    if rng.chance(3) {
        req = req.without("accept");
    }
    match rng.below(40) {
        0 => req.without("authorization"),
        1 => req.header("authorization", "Basic dXNlcjpwYXNz"),
        2 => req.header_bytes("authorization", &header_safe(&format!("Bearer {}", random_string(rng)))),
        3 => req.header("authorization", "Bearer a.b.c"),
        _ => req,
    }
}

// Fuzz (§1 pipeline): random byte strings
#[tokio::test]
async fn fuzz_random_byte_bodies_never_panic_or_answer_5xx() {
    let h = Harness::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let seed_request = stateless_body(json!(1), "prompts/get", json!({"name": PROMPT, "arguments": {"inbox_id": "x"}}))
        .to_string()
        .into_bytes();
    const FRAGMENTS: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        "\"",
        "\"jsonrpc\"",
        "\"2.0\"",
        "\"id\"",
        "1",
        "-0",
        "1e400",
        "1.5",
        "null",
        "true",
        "\"method\"",
        "\"tools/list\"",
        "\"params\"",
        "\"_meta\"",
        "\\u0000",
        "\\ud800",
        " ",
        "\n",
    ];
    for i in 0..2000 {
        let body: Vec<u8> = match i % 3 {
            0 => (0..rng.below(256)).map(|_| rng.next() as u8).collect(),
            1 => {
                let mut bytes = seed_request.clone();
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(bytes.len() + 1);
                    match rng.below(3) {
                        0 if at < bytes.len() => bytes[at] ^= 1 << rng.below(8),
                        1 if at < bytes.len() => {
                            bytes.remove(at);
                        }
                        _ => bytes.insert(at, rng.next() as u8),
                    }
                }
                bytes
            }
            _ => (0..rng.below(24)).flat_map(|_| rng.pick(FRAGMENTS).bytes()).collect(),
        };
        let mut req = h.post().raw(&body);
        let with_headers = rng.chance(50);
        if with_headers {
            let parsed = serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
            req = with_random_routing_headers(&mut rng, req, &parsed);
        }
        req = with_random_gate_headers(&mut rng, req);
        fuzz_case(&h, req, &body, &format!("bytes #{i} (routing headers: {with_headers})")).await;
    }
}

// Fuzz (§1 pipeline): random JSON values and request-shaped objects
#[tokio::test]
async fn fuzz_random_json_bodies_never_panic_or_answer_5xx_and_echo_ids() {
    let h = Harness::new();
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for i in 0..2000 {
        let value = if i % 5 == 0 { random_value(&mut rng, 4) } else { random_request(&mut rng) };
        let body = value.to_string().into_bytes();
        let mut req = h.post().raw(&body);
        let with_headers = i % 2 == 1;
        if with_headers {
            req = with_random_routing_headers(&mut rng, req, &value);
        }
        req = with_random_gate_headers(&mut rng, req);
        fuzz_case(&h, req, &body, &format!("json #{i} (routing headers: {with_headers})")).await;
    }
}

// Regression (fuzzing, jsonrpc target): an empty method name is a string, so
// the message parses; it is then an unknown method like any other.
#[tokio::test]
async fn an_empty_method_name_is_an_unknown_method() {
    let h = Harness::new();
    let body = "{\"jsonrpc\":\"2.0\"\n,\n\n\n\n\"id\":7,\"method\":\n\n\n\"\"}";
    let resp = h.post().header("mcp-protocol-version", "2025-06-18").text(body).send().await;
    resp.assert_error(200, -32601, json!(7));
}
