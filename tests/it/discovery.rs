//! How clients find the server: the server card at `/mcp/server-card`
//! (SEP-2127: its media type, a strong `ETag` and 304, CORS for any page)
//! and the registry's `server.json`, which is what the code makes
//! (`mcp::card::registry_entry`) and valid against the registry's published
//! schema (2025-12-11, vendored in `tests/schemas/`). `UPDATE_EXPECTED=1`
//! rewrites `server.json` from the code.

use serde_json::Value;

use crate::common::{Harness, MCP_RESOURCE, send};

const SERVER_JSON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/server.json");
const REGISTRY_SCHEMA: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/schemas/registry-server-2025-12-11.schema.json");

fn committed() -> Value {
    let made = inbox::mcp::card::registry_entry();
    let text = format!("{}\n", serde_json::to_string_pretty(&made).unwrap());
    if std::env::var_os("UPDATE_EXPECTED").is_some() {
        std::fs::write(SERVER_JSON, &text).unwrap();
    }
    let on_disk = std::fs::read_to_string(SERVER_JSON).unwrap_or_default();
    assert_eq!(on_disk, text, "server.json is not what the code makes: UPDATE_EXPECTED=1 make test rewrites it");
    made
}

#[test]
fn server_json_is_the_codes_and_valid_against_the_registry_schema() {
    let entry = committed();
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(REGISTRY_SCHEMA).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the registry's schema compiles");
    let errors: Vec<String> = validator.iter_errors(&entry).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(entry["version"], env!("CARGO_PKG_VERSION"));
    // The schema can fail: a name without its slash is refused.
    let mut broken = entry.clone();
    broken["name"] = Value::from("autonomous-inbox");
    assert!(!validator.is_valid(&broken));
}

#[tokio::test]
async fn the_server_card_is_served_with_a_strong_etag_304_and_cors_for_any_page() {
    let h = Harness::new();
    let resp = send(h.request("GET", "/mcp/server-card").header("accept", "application/mcp-server-card+json")).await;
    assert_eq!(resp.status, 200);
    let header = |r: &crate::common::Resp, name: &str| {
        r.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned()
    };
    assert_eq!(header(&resp, "content-type"), "application/mcp-server-card+json");
    assert_eq!(header(&resp, "cache-control"), "public, max-age=3600");
    assert_eq!(header(&resp, "access-control-allow-origin"), "*");
    assert_eq!(header(&resp, "access-control-expose-headers"), "ETag");
    let etag = header(&resp, "etag");
    assert!(etag.starts_with('"') && etag.ends_with('"') && etag.len() > 10, "a strong tag: {etag}");

    let card = resp.json();
    let entry = committed();
    for field in ["name", "title", "version", "description"] {
        assert_eq!(card[field], entry[field], "{field}");
    }
    assert_eq!(card["$schema"], "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json");
    let remote = &card["remotes"][0];
    assert_eq!((remote["type"].as_str(), remote["url"].as_str()), (Some("streamable-http"), Some(MCP_RESOURCE)));
    assert_eq!(remote["headers"], entry["remotes"][0]["headers"]);
    assert_eq!(remote["supportedProtocolVersions"], serde_json::json!(["2026-07-28", "2025-06-18", "2025-03-26"]));
    assert!(!resp.body.is_empty() && !String::from_utf8_lossy(&resp.body).contains("tools"), "no tool is listed");

    // The same tag: 304, no body; another tag: the card again.
    let again = send(h.request("GET", "/mcp/server-card").header("if-none-match", &etag)).await;
    assert_eq!((again.status, again.body.len()), (304, 0));
    assert_eq!(header(&again, "etag"), etag);
    let weak = send(h.request("GET", "/mcp/server-card").header("if-none-match", &format!("W/{etag}"))).await;
    assert_eq!(weak.status, 304, "If-None-Match compares weakly");
    let stale = send(h.request("GET", "/mcp/server-card").header("if-none-match", "\"stale\"")).await;
    assert_eq!((stale.status, stale.json()), (200, card.clone()));

    // Any page may read it (the gate's Origin allowlist is for calls that act).
    let foreign = send(h.request("GET", "/mcp/server-card").header("origin", "https://elsewhere.example")).await;
    assert_eq!(foreign.status, 200);
    let preflight = send(
        h.request("OPTIONS", "/mcp/server-card")
            .header("origin", "https://elsewhere.example")
            .header("access-control-request-headers", "if-none-match"),
    )
    .await;
    assert_eq!(preflight.status, 204);
    assert_eq!(header(&preflight, "access-control-allow-headers"), "Content-Type, If-None-Match");
    let post = send(h.request("POST", "/mcp/server-card")).await;
    assert_eq!(post.status, 405);
    assert_eq!(header(&post, "allow"), "GET, HEAD, OPTIONS");
}
