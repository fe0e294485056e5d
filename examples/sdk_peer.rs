//! The bare-SDK benchmark peer: what one DynamoDB read costs with nothing
//! around it. `make bench` puts every DynamoDB-bound row of this server
//! beside it.
//!
//! axum, the ceiling's bearer check (a static string compared byte for
//! byte), and one `GetItem` per request through `aws-sdk-dynamodb` — the
//! same crate versions as the server (this is one of its examples, so one
//! lock file) — with the client configured as the server configured its own
//! before it tuned it: region, the Lambda timeouts (connect 1 s, attempt 1 s,
//! operation 3 s), standard retries (3 attempts, 50–500 ms backoff), and for
//! a local table its endpoint and fixed credentials. Everything else is the
//! SDK's default: that is what this peer is for.
//!
//! Environment: `PORT`, `BEARER`, `TABLE_NAME`, `PK`, `SK` (the item read),
//! `DYNAMODB_ENDPOINT` (optional), `AWS_REGION` (default us-east-1). The
//! answer is the item's string and number attributes as a JSON object.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use aws_config::BehaviorVersion;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{Credentials, Region};
use aws_sdk_dynamodb::types::AttributeValue;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

struct Peer {
    client: Client,
    bearer: String,
    table: String,
    pk: AttributeValue,
    sk: AttributeValue,
}

fn env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("{name} is required"))
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let port: u16 = env("PORT")?.parse().map_err(|_| "PORT: a port number")?;
    let timeouts = aws_config::timeout::TimeoutConfig::builder()
        .connect_timeout(Duration::from_millis(1000))
        .operation_attempt_timeout(Duration::from_millis(1000))
        .operation_timeout(Duration::from_millis(3000))
        .build();
    let retry = aws_config::retry::RetryConfig::standard()
        .with_max_attempts(3)
        .with_initial_backoff(Duration::from_millis(50))
        .with_max_backoff(Duration::from_millis(500));
    let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".into());
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(region))
        .timeout_config(timeouts)
        .retry_config(retry);
    if let Ok(endpoint) = std::env::var("DYNAMODB_ENDPOINT") {
        loader =
            loader.endpoint_url(endpoint).credentials_provider(Credentials::new("local", "local", None, None, "local"));
    }
    let peer = Arc::new(Peer {
        client: Client::new(&loader.load().await),
        bearer: format!("Bearer {}", env("BEARER")?),
        table: env("TABLE_NAME")?,
        pk: AttributeValue::S(env("PK")?),
        sk: AttributeValue::S(env("SK")?),
    });
    let app = axum::Router::new().route("/", post(read)).with_state(peer);
    let listener =
        tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await.map_err(|e| e.to_string())?;
    axum::serve(listener, app).await.map_err(|e| e.to_string())
}

async fn read(State(peer): State<Arc<Peer>>, headers: HeaderMap) -> Response {
    if headers.get(header::AUTHORIZATION).map(|v| v.as_bytes()) != Some(peer.bearer.as_bytes()) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let got = peer
        .client
        .get_item()
        .table_name(&peer.table)
        .key("pk", peer.pk.clone())
        .key("sk", peer.sk.clone())
        .send()
        .await;
    match got {
        Ok(output) => match output.item {
            Some(item) => ([(header::CONTENT_TYPE, "application/json")], to_json(&item)).into_response(),
            None => StatusCode::NOT_FOUND.into_response(),
        },
        Err(error) => (StatusCode::BAD_GATEWAY, error.to_string()).into_response(),
    }
}

fn to_json(item: &HashMap<String, AttributeValue>) -> String {
    let object: serde_json::Map<String, serde_json::Value> = item
        .iter()
        .filter_map(|(k, v)| match v {
            AttributeValue::S(s) | AttributeValue::N(s) => Some((k.clone(), serde_json::Value::String(s.clone()))),
            _ => None,
        })
        .collect();
    serde_json::Value::Object(object).to_string()
}
