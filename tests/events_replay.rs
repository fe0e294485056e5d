//! Replays every recorded API Gateway event in `events/` through the exact
//! Lambda path (`lambda_http`'s event conversion and response adapter around
//! `http::handle`) and compares the API Gateway response with the expected
//! file beside it: status exactly, the listed headers (null = must be absent),
//! and the body as a JSON subset (every expected member present and equal;
//! arrays compared whole).

mod common;

use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;

use lambda_http::lambda_runtime::{Context, LambdaEvent};
use lambda_http::request::LambdaRequest;
use lambda_http::{Adapter, Service, service_fn};
use serde_json::Value;

const RESOURCE: &str = "https://inbox-mcp.example.com/mcp";

/// A harness whose public name is the one the recorded events were sent to.
fn replay_harness() -> common::Harness {
    common::Harness::with_config(|c| c.mcp_resource = RESOURCE.into())
}

/// Fills the placeholders of a recorded event: `{{TOKEN}}` is a valid token
/// for the demo admin with every scope.
fn fill(event: &str, harness: &common::Harness) -> String {
    let now = jsonwebtoken::get_current_timestamp();
    let token = harness.sign(&serde_json::json!({
        "iss": common::ISSUER, "sub": "usr_admin", "org_id": "org_demo", "aud": RESOURCE,
        "scope": common::ALL_SCOPES, "iat": now, "exp": now + 600,
    }));
    event.replace("{{TOKEN}}", &token)
}

/// Runs one event file and returns the API Gateway response payload as JSON.
async fn invoke(app: Arc<inbox::App>, event: &str) -> Value {
    let payload: LambdaRequest = serde_json::from_str(event).expect("event parses as an API Gateway request");
    let service = service_fn(move |req| {
        let app = Arc::clone(&app);
        async move { Ok::<_, Infallible>(inbox::http::handle(&app, req).await) }
    });
    let mut adapter = Adapter::from(service);
    let response = adapter.call(LambdaEvent::new(payload, Context::default())).await.expect("handler never fails");
    serde_json::to_value(response).expect("response serializes")
}

/// `expected` ⊆ `actual`: objects by member, everything else by equality.
fn subset(expected: &Value, actual: &Value, at: &str, problems: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, value) in e {
                match a.get(key) {
                    Some(inner) => subset(value, inner, &format!("{at}.{key}"), problems),
                    None => problems.push(format!("{at}.{key} is missing")),
                }
            }
        }
        _ if expected == actual => {}
        _ => problems.push(format!("{at}: expected {expected}, got {actual}")),
    }
}

fn compare(name: &str, expected: &Value, actual: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if expected["statusCode"] != actual["statusCode"] {
        problems.push(format!("status: expected {}, got {}", expected["statusCode"], actual["statusCode"]));
    }
    let headers = &actual["headers"];
    if let Some(wanted) = expected["headers"].as_object() {
        for (name, value) in wanted {
            let got = headers.get(name.as_str());
            match (value, got) {
                (Value::Null, None) => {}
                (Value::Null, Some(v)) => problems.push(format!("header {name} must be absent, got {v}")),
                (v, Some(g)) if v == g => {}
                (v, g) => problems.push(format!("header {name}: expected {v}, got {g:?}")),
            }
        }
    }
    let body = actual["body"].as_str().unwrap_or("");
    match &expected["body"] {
        Value::Null => {
            if !body.is_empty() {
                problems.push(format!("body must be empty, got {body}"));
            }
        }
        wanted => match serde_json::from_str::<Value>(body) {
            Ok(got) => subset(wanted, &got, "body", &mut problems),
            Err(_) => problems.push(format!("body is not JSON: {body:?}")),
        },
    }
    problems.into_iter().map(|p| format!("{name}: {p}")).collect()
}

#[tokio::test]
async fn every_recorded_event_replays_to_its_expected_response() {
    let harness = replay_harness();
    let app = harness.app().await;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("events");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("events/ exists")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".json") && !n.ends_with(".expected.json"))
        .collect();
    names.sort();
    assert!(names.len() >= 6, "expected the recorded events, found {names:?}");
    let mut problems = Vec::new();
    for name in &names {
        let event = std::fs::read_to_string(dir.join(name)).expect("event readable");
        let expected_path = dir.join(name.replace(".json", ".expected.json"));
        let Ok(expected) = std::fs::read_to_string(&expected_path) else {
            problems.push(format!("{name}: no expected file {}", expected_path.display()));
            continue;
        };
        let expected: Value = serde_json::from_str(&expected).expect("expected file is JSON");
        let actual = invoke(Arc::clone(&app), &fill(&event, &harness)).await;
        problems.extend(compare(name, &expected, &actual));
    }
    assert!(problems.is_empty(), "{} event(s) differ:\n{}", problems.len(), problems.join("\n"));
}

#[tokio::test]
async fn a_changed_expectation_is_reported() {
    // The comparison itself must be able to fail.
    let harness = replay_harness();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("events");
    let event = std::fs::read_to_string(dir.join("mcp-2026-server-discover.json")).expect("event");
    let actual = invoke(harness.app().await, &fill(&event, &harness)).await;
    let wrong =
        serde_json::json!({"statusCode": 200, "headers": {"mcp-session-id": "x"}, "body": {"result": {"ttlMs": 1}}});
    assert_eq!(compare("discover", &wrong, &actual).len(), 2);
}
