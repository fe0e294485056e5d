//! A DynamoDB endpoint in front of the local one, for the tests that need the
//! table to misbehave at one precise call: it forwards every call except the
//! ones a rule answers itself, and a rule may act on the table first (a write
//! another client makes at that very moment).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Value, json};

/// What the proxy does with one call.
pub enum Rule {
    Forward,
    /// Answer this status and body instead of the table.
    Answer(u16, Value),
    /// Run this first, then forward the call.
    First(Pin<Box<dyn Future<Output = ()> + Send>>),
}

/// Decides from the operation (`PutItem`, `TransactWriteItems`, …) and the request body.
pub type RuleFn = dyn Fn(&str, &Value) -> Rule + Send + Sync;

pub struct Interposer {
    pub endpoint: String,
    /// The connections clients have opened to it so far.
    pub connections: Arc<std::sync::atomic::AtomicUsize>,
}

/// DynamoDB's answer when it throttles a call.
pub fn throttled() -> Rule {
    Rule::Answer(
        400,
        json!({"__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
               "message": "Rate of requests exceeds the allowed throughput (test)"}),
    )
}

/// DynamoDB's answer to a transaction it cancels, with `code` for each of `items`.
pub fn cancelled(code: &str, items: usize) -> Rule {
    let reasons: Vec<Value> = (0..items).map(|_| json!({"Code": code})).collect();
    Rule::Answer(
        400,
        json!({"__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
               "Message": "Transaction cancelled", "CancellationReasons": reasons}),
    )
}

impl Interposer {
    pub async fn start(rule: Arc<RuleFn>) -> Interposer {
        let upstream = super::dynamodb_endpoint();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let endpoint = format!("http://{}", listener.local_addr().expect("proxy address"));
        let client = reqwest::Client::new();
        let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let opened = Arc::clone(&connections);
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                opened.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let (rule, client, upstream) = (Arc::clone(&rule), client.clone(), upstream.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                        let (rule, client, upstream) = (Arc::clone(&rule), client.clone(), upstream.clone());
                        async move {
                            let (status, bytes) = answer(rule.as_ref(), &client, &upstream, req).await;
                            let mut response = http::Response::new(http_body_util::Full::new(bytes));
                            *response.status_mut() = http::StatusCode::from_u16(status).expect("status");
                            response
                                .headers_mut()
                                .insert("content-type", http::HeaderValue::from_static("application/x-amz-json-1.0"));
                            Ok::<_, std::convert::Infallible>(response)
                        }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        });
        Interposer { endpoint, connections }
    }
}

async fn answer(
    rule: &RuleFn,
    client: &reqwest::Client,
    upstream: &str,
    req: http::Request<hyper::body::Incoming>,
) -> (u16, bytes::Bytes) {
    use http_body_util::BodyExt;
    let (parts, body) = req.into_parts();
    let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let target = parts.headers.get("x-amz-target").and_then(|v| v.to_str().ok()).unwrap_or("");
    let operation = target.rsplit('.').next().unwrap_or("");
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    match rule(operation, &parsed) {
        Rule::Answer(status, answer) => return (status, bytes::Bytes::from(answer.to_string())),
        Rule::First(before) => before.await,
        Rule::Forward => {}
    }
    let mut forward = client.post(upstream).body(body);
    for (name, value) in &parts.headers {
        if name != http::header::HOST && name != http::header::CONTENT_LENGTH {
            forward = forward.header(name, value);
        }
    }
    match forward.send().await {
        Ok(answer) => (answer.status().as_u16(), answer.bytes().await.unwrap_or_default()),
        Err(_) => (502, bytes::Bytes::new()),
    }
}
