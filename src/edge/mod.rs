//! The one HTTP handler, `handle`, shared by the Lambda runtime (API Gateway
//! events through `lambda_http`) and the local port (`local`). It routes by
//! path, applies the gate every route shares (`Origin`, `Host`), and turns
//! every outcome into a response: it never returns an error, because an `Err`
//! becomes a body-less 5xx at API Gateway.
//!
//! This module and the binaries are the only code that sees `lambda_http` or
//! `hyper` types.

pub mod admit;
pub mod local;
pub mod mcp;
pub mod rest;

use http::StatusCode;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderName, HeaderValue};
use lambda_http::{Body, Request, RequestExt, Response};
use serde_json::{Value, json};

use crate::api::Services;
use crate::auth::Verifier;
use crate::auth::challenge::Resource;
use crate::mcp::era::ProtocolVersion;
use crate::mcp::narrow::is_mcp_path;
use crate::mcp::{McpReply, McpServer, ReplyBody, Trace};
use mcp::McpRequest;
use rest::RestRequest;

/// Everything the edge needs, built once per container by the composition
/// root: the two protocols' servers, the token verifier, the two protected
/// resources, and the gate's allowlists.
pub struct Edge {
    pub mcp: McpServer,
    pub api: Services,
    pub verifier: Verifier,
    /// The MCP endpoint as an OAuth protected resource.
    pub mcp_resource: Resource,
    /// The REST API as an OAuth protected resource.
    pub api_resource: Resource,
    /// The `Host` values this server answers to and the `Origin`s allowed to call.
    pub callers: crate::gate::Allowlist,
    /// The shared per-minute budget of each person.
    pub limiter: admit::RateLimiter,
    /// The most a request may take; past it, 503 with `Retry-After`.
    pub request_timeout: std::time::Duration,
    /// The server card (`GET /mcp/server-card`), rendered once.
    pub card: crate::mcp::card::Card,
}

/// Handle one request. Never fails: every failure is an HTTP response.
pub async fn handle(edge: &Edge, req: Request) -> Response<Body> {
    let request_id = req
        .lambda_context_ref()
        .map(|c| c.request_id.clone())
        .filter(|id| !id.is_empty())
        .unwrap_or_else(new_request_id);
    let started = std::time::Instant::now();
    let http_method = req.method().clone();
    let request = async {
        let (response, label) = route(edge, req, &request_id).await;
        let line = crate::telemetry::take_line();
        let (status, round_trips) = (response.status().as_u16(), line.dynamodb_calls);
        tracing::info!(
            path = line.path,
            era = line.era,
            method = line.method,
            operation = line.operation,
            task = line.task,
            sub = line.sub,
            workspace = line.workspace,
            status,
            dynamodb_calls = round_trips,
            "answered"
        );
        request_metrics(&label, status, started.elapsed(), round_trips, &request_id);
        response
    };
    crate::telemetry::in_request(&request_id, http_method.as_str(), request).await
}

/// What a request was, for its metric line: bounded labels only.
struct Label {
    /// `mcp`, `rest` or `other`.
    surface: &'static str,
    /// The MCP method or tool, the REST operation, or the other route.
    operation: &'static str,
}

impl Label {
    const fn other(operation: &'static str) -> Label {
        Label { surface: "other", operation }
    }
}

/// One EMF line per request: `Requests`, `Latency`, `DynamoDbCalls`,
/// `RateLimited` and `Unavailable`, by surface and status class and by
/// surface and operation.
fn request_metrics(label: &Label, status: u16, elapsed: std::time::Duration, round_trips: u32, request_id: &str) {
    if !crate::telemetry::metrics_on() {
        return;
    }
    let class = match status {
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    };
    let flag = |hit: bool| if hit { 1.0 } else { 0.0 };
    let metrics = [
        ("Requests", "Count", 1.0),
        ("Latency", "Milliseconds", elapsed.as_secs_f64() * 1000.0),
        ("DynamoDbCalls", "Count", f64::from(round_trips)),
        ("RateLimited", "Count", flag(status == 429)),
        ("Unavailable", "Count", flag(status == 503)),
    ];
    crate::telemetry::Emf {
        dimensions: &[&["Surface", "StatusClass"], &["Surface", "Operation"]],
        metrics: &metrics,
        properties: &[
            ("Surface", Value::from(label.surface)),
            ("Operation", Value::from(label.operation)),
            ("StatusClass", Value::from(class)),
            ("Status", Value::from(status)),
            ("RequestId", Value::from(request_id)),
        ],
    }
    .emit();
}

async fn route(edge: &Edge, req: Request, request_id: &str) -> (Response<Body>, Label) {
    // Behind a REST API (v1) stage the URI carries the stage; the raw path does not.
    let raw = req.raw_http_path();
    let path = if raw.is_empty() { req.uri().path().to_owned() } else { raw.to_owned() };
    let logged = logged_path(&path);
    crate::telemetry::note(|line| line.path = Some(logged));
    let is_mcp = is_mcp_path(&path);
    let endpoint = if is_mcp { Endpoint::Mcp } else { Endpoint::Other };
    let refused = if is_mcp {
        Label { surface: "mcp", operation: "refused" }
    } else if path.starts_with("/api/v1/") {
        Label { surface: "rest", operation: "refused" }
    } else {
        Label::other("refused")
    };

    // Public and static, for any page or tool that looks (CORS `*`): before
    // the gate, whose `Origin` allowlist is for calls that act.
    if path == SERVER_CARD {
        return (server_card(&edge.card, &req), Label::other("server_card"));
    }
    if let Err(refusal) = edge.callers.check(req.headers(), req.uri()) {
        let response = gate_refusal(StatusCode::FORBIDDEN, refusal.code(), refusal.message(), endpoint);
        return (response, refused);
    }

    match path.as_str() {
        _ if is_mcp => {
            if req.method() != http::Method::POST {
                let mut response = gate_refusal(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "method_not_allowed",
                    "The MCP endpoint accepts POST only",
                    Endpoint::Mcp,
                );
                response.headers_mut().insert(http::header::ALLOW, HeaderValue::from_static("POST"));
                return (response, refused);
            }
            let (parts, body) = req.into_parts();
            let mut trace = Trace { request_id: request_id.to_owned(), ..Trace::default() };
            let request =
                McpRequest { path: &path, headers: &parts.headers, query: parts.uri.query(), body: body_bytes(&body) };
            let reply = mcp::handle(edge, &request, &mut trace).await;
            let (sub, workspace) = (trace.sub.take(), trace.workspace.take());
            crate::telemetry::note(|line| {
                line.era = trace.era;
                line.method = trace.method;
                // The tool a `tools/call` ran, so the request's line names it.
                line.operation = trace.operation.filter(|op| Some(*op) != trace.method);
                line.sub = sub;
                line.workspace = workspace;
            });
            (mcp_response(reply), Label { surface: "mcp", operation: trace.operation.unwrap_or("unparsed") })
        }
        "/.well-known/oauth-protected-resource" | "/.well-known/oauth-protected-resource/mcp"
            if req.method() == http::Method::GET =>
        {
            let metadata = edge.mcp_resource.metadata(&format!("{} MCP", edge.mcp.identity().title));
            (json_response(StatusCode::OK, &metadata), Label::other("resource_metadata"))
        }
        "/.well-known/oauth-protected-resource/api/v1" if req.method() == http::Method::GET => {
            let metadata = edge.api_resource.metadata(&format!("{} REST API", edge.mcp.identity().title));
            (json_response(StatusCode::OK, &metadata), Label::other("resource_metadata"))
        }
        "/health" if req.method() == http::Method::GET => {
            (json_response(StatusCode::OK, &json!({"status": "ok"})), Label::other("health"))
        }
        // It describes the API and reveals no data: no token needed.
        "/api/v1/openapi.json" if req.method() == http::Method::GET => {
            let response = json_text_response(StatusCode::OK, crate::api::openapi::document().to_owned());
            (response, Label { surface: "rest", operation: "openapi" })
        }
        rest if rest.starts_with("/api/v1/") => {
            let (parts, body) = req.into_parts();
            let path = &rest["/api/v1".len()..];
            // Parsed once: the handler runs it, the metric line names it.
            let route = crate::api::Route::parse(parts.method.as_str(), path).ok();
            let operation = route.as_ref().map_or("no_route", |r| r.op().name());
            let request = RestRequest {
                method: parts.method.as_str(),
                path,
                route,
                query: parts.uri.query(),
                headers: &parts.headers,
                body: body_bytes(&body),
                request_id,
            };
            let reply = rest::handle(edge, &request).await;
            let mut response = json_response(reply.status, &reply.body);
            append_headers(&mut response, reply.headers);
            (response, Label { surface: "rest", operation })
        }
        _ => (
            gate_refusal(StatusCode::NOT_FOUND, "not_found", "No such route", Endpoint::Other),
            Label::other("no_route"),
        ),
    }
}

/// Where the server card is served (SEP-2127: `<mcp-url>/server-card`).
const SERVER_CARD: &str = "/mcp/server-card";

/// `GET` (or `HEAD`) the card: 200 with it, or 304 when `If-None-Match`
/// names it; `OPTIONS` answers a browser's preflight; anything else 405.
/// Cached an hour by anyone (it changes with a release).
fn server_card(card: &crate::mcp::card::Card, req: &Request) -> Response<Body> {
    let method = req.method();
    let mut response = if method == http::Method::OPTIONS {
        base_response(StatusCode::NO_CONTENT, Body::Empty)
    } else if method != http::Method::GET && method != http::Method::HEAD {
        let mut refused = gate_refusal(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "The server card is read with GET",
            Endpoint::Other,
        );
        refused.headers_mut().insert(http::header::ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
        return refused;
    } else if req
        .headers()
        .get(http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| card.matches(tags))
    {
        base_response(StatusCode::NOT_MODIFIED, Body::Empty)
    } else {
        let body = if method == http::Method::HEAD { Body::Empty } else { Body::Text(card.body.clone()) };
        let mut ok = base_response(StatusCode::OK, body);
        ok.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(crate::mcp::card::MEDIA_TYPE));
        ok
    };
    let headers = response.headers_mut();
    if let Ok(tag) = HeaderValue::from_str(&card.etag) {
        headers.insert(http::header::ETAG, tag);
    }
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600"));
    headers.insert(http::header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(http::header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET"));
    headers.insert(http::header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("Content-Type, If-None-Match"));
    headers.insert(http::header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("ETag"));
    response
}

/// A request's path as its log line shows it: through the log filter
/// (`telemetry::loggable`), with the one path parameter that can be a
/// person's e-mail address — the sender of `/api/v1/inboxes/{id}/senders/{sender}`
/// — cut to its domain: `…/senders/*@acme.com` for an address, `@acme.com`
/// for a domain sender as it is, `{sender}` for anything else. Every other
/// path parameter is an id.
pub(crate) fn logged_path(path: &str) -> String {
    let shown = match sender_start(path) {
        Some(start) => format!("{}{}", &path[..start], sender_domain(&path[start..])),
        None => path.to_owned(),
    };
    crate::telemetry::loggable(&shown)
}

/// Where the sender begins in a path `/api/v1/inboxes/{id}/senders/{sender}`.
fn sender_start(path: &str) -> Option<usize> {
    let rest = path.strip_prefix("/api/v1/inboxes/")?;
    let (inbox, after) = rest.split_once('/')?;
    let sender = after.strip_prefix("senders/")?;
    (!inbox.is_empty() && !sender.is_empty()).then(|| path.len() - sender.len())
}

/// A sender as a log line may show it: its domain only.
fn sender_domain(sender: &str) -> String {
    let decoded = sender.replace("%40", "@");
    match decoded.rsplit_once('@') {
        Some(("", domain)) => format!("@{domain}"),
        Some((_, domain)) => format!("*@{domain}"),
        None => "{sender}".to_owned(),
    }
}

/// The request body as bytes (a Base64 gateway body has already been decoded).
fn body_bytes(body: &Body) -> &[u8] {
    match body {
        Body::Empty => &[],
        Body::Text(text) => text.as_bytes(),
        Body::Binary(bytes) => bytes,
        _ => &[],
    }
}

fn base_response(status: StatusCode, body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

pub(crate) fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    json_text_response(status, crate::json::text(value))
}

/// A JSON body that is already serialized.
fn json_text_response(status: StatusCode, text: String) -> Response<Body> {
    let mut response = base_response(status, Body::Text(text));
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A refusal by the HTTP gate, in the error shape of the route it was aimed at.
/// Which endpoint a gate refused: an MCP answer names its protocol version.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Mcp,
    Other,
}

fn gate_refusal(status: StatusCode, code: &str, message: &str, endpoint: Endpoint) -> Response<Body> {
    let mut response = json_response(status, &json!({"error": {"code": code, "message": message}}));
    if endpoint == Endpoint::Mcp {
        response.headers_mut().insert(mcp_version_header(), HeaderValue::from_static(ProtocolVersion::NEWEST.as_str()));
    }
    response
}

/// A request whose body could not be read whole (the local port only: API
/// Gateway hands over complete bodies). It is refused before any handler
/// runs: on the MCP endpoint (any of its paths) as a JSON-RPC error with a
/// null id, elsewhere in the API's error shape.
pub(crate) fn unreadable_body(path: &str, status: StatusCode, message: &str) -> Response<Body> {
    if is_mcp_path(path) {
        let code = if status == StatusCode::BAD_REQUEST { -32700 } else { -32600 };
        let mut response =
            json_response(status, &json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}));
        response.headers_mut().insert(mcp_version_header(), HeaderValue::from_static(ProtocolVersion::NEWEST.as_str()));
        response
    } else {
        let code = if status == StatusCode::BAD_REQUEST { "invalid_body" } else { "request_timeout" };
        json_response(status, &json!({"error": {"code": code, "message": message, "details": {}}}))
    }
}

fn mcp_version_header() -> HeaderName {
    HeaderName::from_static("mcp-protocol-version")
}

fn mcp_response(reply: McpReply) -> Response<Body> {
    let mut response = match reply.body {
        Some(ReplyBody::Json(body)) => json_response(reply.status, &body),
        Some(ReplyBody::Serialized(text)) => {
            let mut response = base_response(reply.status, Body::Text(text));
            response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        None => base_response(reply.status, Body::Empty),
    };
    let headers = response.headers_mut();
    headers.insert(mcp_version_header(), HeaderValue::from_static(reply.version.as_str()));
    append_headers(&mut response, reply.headers);
    response
}

fn append_headers(response: &mut Response<Body>, extra: Vec<(&'static str, String)>) {
    let headers = response.headers_mut();
    for (name, value) in extra {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.append(HeaderName::from_static(name), value);
        }
    }
}

/// A request id for local runs (Lambda supplies its own): 64 bits that
/// differ from request to request, thread to thread and process to process,
/// without a system call per request — SipHash, keyed once per thread from
/// the system's randomness (std's `RandomState`), of a per-thread counter.
/// An id names a request in the logs; it is not a secret.
fn new_request_id() -> String {
    use std::hash::BuildHasher as _;
    thread_local! {
        static NEXT: (std::hash::RandomState, std::cell::Cell<u64>) =
            (std::hash::RandomState::new(), std::cell::Cell::new(0));
    }
    NEXT.with(|(keys, count)| {
        let n = count.get();
        count.set(n.wrapping_add(1));
        format!("{:016x}", keys.hash_one(n))
    })
}

#[cfg(test)]
mod tests {
    use super::logged_path;

    #[test]
    fn a_senders_address_is_logged_by_its_domain_only() {
        for (path, logged) in [
            (
                "/api/v1/inboxes/inb_bills/senders/cobranca@telecom.example.com",
                "/api/v1/inboxes/inb_bills/senders/*@telecom.example.com",
            ),
            (
                "/api/v1/inboxes/inb_bills/senders/cobranca%40telecom.example.com",
                "/api/v1/inboxes/inb_bills/senders/*@telecom.example.com",
            ),
            (
                "/api/v1/inboxes/inb_bills/senders/%40energia.example.com",
                "/api/v1/inboxes/inb_bills/senders/@energia.example.com",
            ),
            (
                "/api/v1/inboxes/inb_bills/senders/@energia.example.com",
                "/api/v1/inboxes/inb_bills/senders/@energia.example.com",
            ),
            ("/api/v1/inboxes/inb_bills/senders/maria.silva", "/api/v1/inboxes/inb_bills/senders/{sender}"),
            // Ids and the list itself are kept as they are.
            ("/api/v1/inboxes/inb_bills/senders", "/api/v1/inboxes/inb_bills/senders"),
            ("/api/v1/inboxes/inb_bills/senders/", "/api/v1/inboxes/inb_bills/senders/"),
            ("/api/v1/emails/eml_1/attachments/0", "/api/v1/emails/eml_1/attachments/0"),
            ("/mcp", "/mcp"),
        ] {
            assert_eq!(logged_path(path), logged, "{path}");
        }
    }
}
