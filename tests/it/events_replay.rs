//! Replays every recorded API Gateway event in `events/` (HTTP API payload
//! 2.0, and REST API payload 1.0) through the exact Lambda path
//! (`lambda_http`'s event conversion and response adapter around
//! `edge::handle`) and compares the API Gateway response with the expected
//! file beside it.
//!
//! Each event runs against its own freshly seeded table, so a write in one
//! event never shows in another; the events run concurrently.
//!
//! Placeholders filled in before the replay (`make invoke` fills only the
//! first): `{{TOKEN}}` (the demo admin, every scope, both audiences),
//! `{{VIEWER_TOKEN}}` (`usr_viewer`), `{{EXPIRED_TOKEN}}` (expired an hour
//! ago), `{{REST_ONLY_TOKEN}}` (audience: the REST API only),
//! `{{NO_SCOPE_TOKEN}}` (no scopes), `{{OTHER_ORG_TOKEN}}` (`usr_other` of
//! `org_other`) and `{{PIPELINE_TOKEN}}` (`svc_mailpipe`, the demo
//! workspaces' registered mail pipeline, `emails:ingest` only; `make invoke`
//! fills it too).
//!
//! The expected file has `statusCode` (compared exactly), `headers` (each
//! listed header: a string is compared exactly, `null` means "must be
//! absent", an object is a matcher; a REST API response's multi-value
//! headers are joined with ", ") and `body` (absent: not checked; `null`: the
//! body must be empty; otherwise a JSON subset of the body). In the subset,
//! objects match member by member, arrays element by element (same length),
//! anything else by equality, and these forms say more:
//!
//! - `"$absent"` as a member's value: that member must not exist;
//! - `{"$exact": v}`: equal to `v`, no extra members;
//! - `{"$json": v}`: a string holding JSON that matches `v`;
//! - `{"$type": "string" | "number" | "integer" | "boolean" | "object" | "array" | "null"}`;
//! - `{"$prefix": "…"}`, `{"$contains": ["…"]}`, `{"$excludes": ["…"]}` on strings;
//! - `{"$unordered": [..]}`: an array of the same length whose elements match
//!   these, in any order.
//!
//! Matcher members combine (`{"$contains": [..], "$excludes": [..]}`).

use crate::common;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;

use lambda_http::lambda_runtime::{Context, LambdaEvent};
use lambda_http::request::LambdaRequest;
use lambda_http::{Adapter, Service, service_fn};
use serde_json::{Map, Value, json};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

pub(crate) const RESOURCE: &str = "https://inbox-mcp.example.com/mcp";
pub(crate) const API_AUDIENCE: &str = "https://inbox-mcp.example.com/api/v1";

/// Events replayed at once (each with its own table and JWKS server).
const CONCURRENCY: usize = 16;

const ABSENT: &str = "$absent";

/// The per-minute budget a deployment has by default, so authenticated
/// responses carry their `X-RateLimit-*` headers as they do on AWS.
pub(crate) const RATE_LIMIT: u32 = 120;
/// The mail pipeline's default budget (`INGEST_RATE_LIMIT_PER_MINUTE`).
pub(crate) const INGEST_RATE_LIMIT: u32 = 60_000;

/// A harness whose public names are the ones the recorded events were sent to.
pub(crate) fn replay_harness() -> common::Harness {
    common::Harness::with_config(|c| {
        c.mcp_resource = RESOURCE.into();
        c.auth.api_audience = API_AUDIENCE.into();
        c.rate_limit_per_minute = RATE_LIMIT;
        c.ingest_rate_limit_per_minute = INGEST_RATE_LIMIT;
    })
}

/// Fills the token placeholders of a recorded event with tokens from this
/// harness's issuer.
pub(crate) fn fill(event: &str, harness: &common::Harness) -> String {
    let now = jsonwebtoken::get_current_timestamp();
    let both = json!([RESOURCE, API_AUDIENCE]);
    let token = |sub: &str, org: &str, aud: &Value, scope: Option<&str>, iat: u64, exp: u64| {
        let mut claims = json!({
            "iss": common::ISSUER, "sub": sub, "org_id": org, "aud": aud, "iat": iat, "exp": exp,
        });
        if let Some(scope) = scope {
            claims["scope"] = Value::from(scope);
        }
        harness.sign(&claims)
    };
    let all = Some(common::ADMIN_SCOPES);
    let auditor = common::ALL_SCOPES.to_owned();
    let placeholders = [
        ("{{VIEWER_TOKEN}}", token("usr_viewer", "org_demo", &both, all, now, now + 600)),
        ("{{EXPIRED_TOKEN}}", token("usr_admin", "org_demo", &both, all, now - 7200, now - 3600)),
        ("{{REST_ONLY_TOKEN}}", token("usr_admin", "org_demo", &json!(API_AUDIENCE), all, now, now + 600)),
        ("{{NO_SCOPE_TOKEN}}", token("usr_admin", "org_demo", &both, None, now, now + 600)),
        ("{{OTHER_ORG_TOKEN}}", token("usr_other", "org_other", &both, all, now, now + 600)),
        ("{{PIPELINE_TOKEN}}", token("svc_mailpipe", "org_demo", &both, Some("emails:ingest"), now, now + 600)),
        ("{{AUDITOR_TOKEN}}", token("usr_admin", "org_demo", &both, Some(&auditor), now, now + 600)),
        ("{{VIEWER_AUDITOR_TOKEN}}", token("usr_viewer", "org_demo", &both, Some(&auditor), now, now + 600)),
        ("{{TOKEN}}", token("usr_admin", "org_demo", &both, all, now, now + 600)),
    ];
    placeholders.iter().fold(event.to_owned(), |text, (name, value)| text.replace(name, value))
}

/// Runs one event and returns the API Gateway response payload as JSON.
pub(crate) async fn invoke(app: Arc<inbox::App>, event: &str) -> Value {
    let payload: LambdaRequest = serde_json::from_str(event).expect("event parses as an API Gateway request");
    let service = service_fn(move |req| {
        let app = Arc::clone(&app);
        async move { Ok::<_, Infallible>(inbox::edge::handle(&app.edge, req).await) }
    });
    let mut adapter = Adapter::from(service);
    let response = adapter.call(LambdaEvent::new(payload, Context::default())).await.expect("handler never fails");
    serde_json::to_value(response).expect("response serializes")
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The expected value is a matcher: an object whose members all start with `$`.
fn is_matcher(expected: &Map<String, Value>) -> bool {
    !expected.is_empty() && expected.keys().all(|k| k.starts_with('$'))
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

fn check_matcher(matcher: &Map<String, Value>, actual: &Value, at: &str, problems: &mut Vec<String>) {
    for (op, wanted) in matcher {
        match op.as_str() {
            "$exact" if wanted != actual => problems.push(format!("{at}: expected exactly {wanted}, got {actual}")),
            "$json" => match actual.as_str().map(serde_json::from_str::<Value>) {
                Some(Ok(parsed)) => subset(wanted, &parsed, &format!("{at}<json>"), problems),
                _ => problems.push(format!("{at}: expected a string holding JSON, got {actual}")),
            },
            "$type" => {
                let got = type_name(actual);
                let fits = wanted.as_str() == Some(got) || (wanted == "number" && got == "integer");
                if !fits {
                    problems.push(format!("{at}: expected a {wanted}, got {actual}"));
                }
            }
            "$prefix" => {
                let prefix = wanted.as_str().unwrap_or_default();
                if !actual.as_str().is_some_and(|s| s.starts_with(prefix)) {
                    problems.push(format!("{at}: expected a string starting with {wanted}, got {actual}"));
                }
            }
            "$contains" => {
                for part in strings(wanted) {
                    if !actual.as_str().is_some_and(|s| s.contains(part)) {
                        problems.push(format!("{at}: expected a string containing {part:?}, got {actual}"));
                    }
                }
            }
            "$excludes" => {
                for part in strings(wanted) {
                    if actual.as_str().is_none_or(|s| s.contains(part)) {
                        problems.push(format!("{at}: expected a string without {part:?}, got {actual}"));
                    }
                }
            }
            "$unordered" => unordered(wanted, actual, at, problems),
            "$exact" => {}
            other => problems.push(format!("{at}: unknown matcher {other}")),
        }
    }
}

/// Every expected element matches a distinct actual element, in any order.
fn unordered(wanted: &Value, actual: &Value, at: &str, problems: &mut Vec<String>) {
    let (Some(wanted), Some(actual)) = (wanted.as_array(), actual.as_array()) else {
        problems.push(format!("{at}: expected an array, got {actual}"));
        return;
    };
    if wanted.len() != actual.len() {
        problems.push(format!("{at}: expected {} elements, got {}", wanted.len(), actual.len()));
        return;
    }
    let mut used = vec![false; actual.len()];
    for (i, element) in wanted.iter().enumerate() {
        let found = actual.iter().enumerate().position(|(j, candidate)| {
            let mut scratch = Vec::new();
            subset(element, candidate, at, &mut scratch);
            !used[j] && scratch.is_empty()
        });
        match found {
            Some(j) => used[j] = true,
            None => problems.push(format!("{at}: no element matches expected[{i}] {element}")),
        }
    }
}

/// `expected` ⊆ `actual`, with the matchers described at the top of the file.
fn subset(expected: &Value, actual: &Value, at: &str, problems: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), _) if is_matcher(e) => check_matcher(e, actual, at, problems),
        (Value::Object(e), Value::Object(a)) => {
            for (key, value) in e {
                match (value, a.get(key)) {
                    (Value::String(s), None) if s == ABSENT => {}
                    (Value::String(s), Some(got)) if s == ABSENT => {
                        problems.push(format!("{at}.{key} must be absent, got {got}"));
                    }
                    (value, Some(inner)) => subset(value, inner, &format!("{at}.{key}"), problems),
                    (_, None) => problems.push(format!("{at}.{key} is missing")),
                }
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() == a.len() {
                for (i, (e, a)) in e.iter().zip(a).enumerate() {
                    subset(e, a, &format!("{at}[{i}]"), problems);
                }
            } else {
                problems.push(format!("{at}: expected {} elements, got {}: {actual}", e.len(), a.len()));
            }
        }
        _ if expected == actual => {}
        _ => problems.push(format!("{at}: expected {expected}, got {actual}")),
    }
}

/// The response headers as one string each: HTTP API responses carry
/// `headers`, REST API responses `multiValueHeaders` (joined with ", ").
fn response_headers(actual: &Value) -> BTreeMap<String, String> {
    let mut headers = BTreeMap::new();
    for (name, value) in actual["headers"].as_object().into_iter().flatten() {
        headers.insert(name.to_ascii_lowercase(), value.as_str().unwrap_or_default().to_owned());
    }
    for (name, values) in actual["multiValueHeaders"].as_object().into_iter().flatten() {
        headers.entry(name.to_ascii_lowercase()).or_insert_with(|| strings(values).join(", "));
    }
    headers
}

pub(crate) fn compare(name: &str, expected: &Value, actual: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if expected["statusCode"] != actual["statusCode"] {
        problems.push(format!("status: expected {}, got {}", expected["statusCode"], actual["statusCode"]));
    }
    let headers = response_headers(actual);
    for (header, wanted) in expected["headers"].as_object().into_iter().flatten() {
        let got = headers.get(&header.to_ascii_lowercase());
        match (wanted, got) {
            (Value::Null, None) => {}
            (Value::Null, Some(v)) => problems.push(format!("header {header} must be absent, got {v:?}")),
            (_, None) => problems.push(format!("header {header}: expected {wanted}, got none")),
            (Value::Object(m), Some(v)) if is_matcher(m) => {
                check_matcher(m, &Value::from(v.as_str()), &format!("header {header}"), &mut problems);
            }
            (_, Some(v)) if wanted.as_str() == Some(v.as_str()) => {}
            (_, Some(v)) => problems.push(format!("header {header}: expected {wanted}, got {v:?}")),
        }
    }
    let body = actual["body"].as_str().unwrap_or("");
    match expected.get("body") {
        Some(Value::Null) if !body.is_empty() => problems.push(format!("body must be empty, got {body}")),
        None | Some(Value::Null) => {}
        Some(wanted) => match serde_json::from_str::<Value>(body) {
            Ok(got) => subset(wanted, &got, "body", &mut problems),
            Err(_) => problems.push(format!("body is not JSON: {body:?}")),
        },
    }
    problems.into_iter().map(|p| format!("{name}: {p}")).collect()
}

/// `expected` brought in line with `actual`, keeping its shape: what still
/// matches stays as written (matchers included); what does not becomes the
/// actual value (a member that is gone becomes `"$absent"`, a header that is
/// gone `null`). Used by `UPDATE_EXPECTED=1`.
fn updated(expected: &Value, actual: &Value) -> Value {
    let mut problems = Vec::new();
    subset(expected, actual, "", &mut problems);
    if problems.is_empty() {
        return expected.clone();
    }
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) if !is_matcher(e) => Value::Object(
            e.iter()
                .map(|(key, value)| {
                    let next = match a.get(key) {
                        None => Value::from(ABSENT),
                        Some(inner) if value == ABSENT => inner.clone(),
                        Some(inner) => updated(value, inner),
                    };
                    (key.clone(), next)
                })
                .collect(),
        ),
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            Value::Array(e.iter().zip(a).map(|(e, a)| updated(e, a)).collect())
        }
        _ => actual.clone(),
    }
}

/// The expected file rewritten for `actual` (see `updated`).
fn rewritten(expected: &Value, actual: &Value) -> Value {
    let mut next = expected.clone();
    next["statusCode"] = actual["statusCode"].clone();
    let headers = response_headers(actual);
    if let Some(wanted) = next["headers"].as_object_mut() {
        for (header, value) in wanted.iter_mut() {
            let got = headers.get(&header.to_ascii_lowercase());
            let mut problems = Vec::new();
            match (&*value, got) {
                (Value::Object(m), Some(v)) if is_matcher(m) => {
                    check_matcher(m, &Value::from(v.as_str()), "", &mut problems);
                }
                (Value::String(w), Some(v)) if w == v => {}
                (Value::Null, None) => {}
                _ => problems.push(String::new()),
            }
            if !problems.is_empty() {
                *value = got.map_or(Value::Null, |v| Value::from(v.as_str()));
            }
        }
    }
    let body = actual["body"].as_str().unwrap_or("");
    match next.get("body") {
        None => {}
        Some(wanted) => {
            let got = if body.is_empty() { Value::Null } else { serde_json::from_str(body).unwrap_or(Value::Null) };
            let body = if wanted.is_null() || got.is_null() { got } else { updated(wanted, &got) };
            next["body"] = body;
        }
    }
    next
}

/// Replays one event file against a fresh harness (its own seeded table),
/// then drops the table.
/// With `UPDATE_EXPECTED=1`, an expected file that does not match is
/// rewritten (see `rewritten`) instead of reported.
async fn replay(name: String, event: String, expected: Value, db: aws_sdk_dynamodb::Client) -> Vec<String> {
    let harness = replay_harness();
    let filled = fill(&event, &harness);
    if filled.contains("{{") && filled.contains("}}") {
        return vec![format!("{name}: unknown placeholder left in the event")];
    }
    let actual = invoke(harness.app().await, &filled).await;
    let _ = db.delete_table().table_name(&harness.table).send().await;
    let problems = compare(&name, &expected, &actual);
    if problems.is_empty() || std::env::var("UPDATE_EXPECTED").as_deref() != Ok("1") {
        return problems;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("events").join(name.replace(".json", ".expected.json"));
    let text = serde_json::to_string_pretty(&rewritten(&expected, &actual)).expect("JSON serializes");
    match std::fs::write(&path, format!("{text}\n")) {
        Ok(()) => {
            eprintln!("rewrote {}", path.display());
            Vec::new()
        }
        Err(e) => vec![format!("{name}: cannot rewrite {}: {e}", path.display())],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_recorded_event_replays_to_its_expected_response() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("events");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("events/ exists")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".json"))
        // Stream batches for the worker Lambda: replayed by `runtime`.
        .filter(|n| !n.starts_with("worker-"))
        .collect();
    files.sort();
    let mut problems = Vec::new();
    for name in files.iter().filter(|n| n.ends_with(".expected.json")) {
        if !files.contains(&name.replace(".expected.json", ".json")) {
            problems.push(format!("{name}: no event beside it"));
        }
    }
    let names: Vec<&String> = files.iter().filter(|n| !n.ends_with(".expected.json")).collect();
    assert!(names.len() >= 60, "expected the recorded events, found {names:?}");

    // To drop each replay's table afterwards.
    let db = common::dynamodb_client();
    let permits = Arc::new(Semaphore::new(CONCURRENCY));
    let mut tasks = JoinSet::new();
    for name in names {
        let event = std::fs::read_to_string(dir.join(name)).expect("event readable");
        let expected_path = dir.join(name.replace(".json", ".expected.json"));
        let Ok(expected) = std::fs::read_to_string(&expected_path) else {
            problems.push(format!("{name}: no expected file {}", expected_path.display()));
            continue;
        };
        let expected: Value = serde_json::from_str(&expected).unwrap_or_else(|e| panic!("{name}: expected file: {e}"));
        let (name, permits, db) = (name.clone(), Arc::clone(&permits), db.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.expect("semaphore open");
            // A panic (a harness that cannot be built) is reported with the event's name.
            match tokio::spawn(replay(name.clone(), event, expected, db)).await {
                Ok(found) => found,
                Err(e) => vec![format!("{name}: the replay panicked: {e}")],
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(found) => problems.extend(found),
            Err(e) => problems.push(format!("a replay panicked: {e}")),
        }
    }
    problems.sort();
    assert!(problems.is_empty(), "{} problem(s):\n{}", problems.len(), problems.join("\n"));
}

#[tokio::test]
async fn a_changed_expectation_is_reported() {
    // The comparison itself must be able to fail.
    let harness = replay_harness();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("events");
    let event = std::fs::read_to_string(dir.join("mcp-2026-server-discover.json")).expect("event");
    let actual = invoke(harness.app().await, &fill(&event, &harness)).await;
    let _ = common::dynamodb_client().delete_table().table_name(&harness.table).send().await;
    let wrong =
        serde_json::json!({"statusCode": 200, "headers": {"mcp-session-id": "x"}, "body": {"result": {"ttlMs": 1}}});
    assert_eq!(compare("discover", &wrong, &actual).len(), 2);
    // And each matcher.
    let wrong = json!({"statusCode": 200, "headers": {"content-type": {"$prefix": "text/"}}, "body": {"result": {
        "resultType": "$absent",
        "supportedVersions": {"$unordered": ["2026-07-28", "2025-06-18", "2024-11-05"]},
        "ttlMs": {"$type": "string"},
        "capabilities": {"$exact": {"tools": {}}},
        "instructions": {"$contains": ["no such words"], "$excludes": ["third-party"]},
        "cacheScope": {"$json": {}},
    }}});
    assert_eq!(compare("discover", &wrong, &actual).len(), 8, "{:#?}", compare("discover", &wrong, &actual));
    let right = json!({"statusCode": 200, "headers": {"content-type": {"$prefix": "application/"}}, "body": {"result": {
        "resultType": "complete",
        "logging": "$absent",
        "supportedVersions": {"$unordered": ["2025-03-26", "2026-07-28", "2025-06-18"]},
        "ttlMs": {"$type": "integer"},
        "capabilities": {"$exact": {"tools": {}, "resources": {}, "prompts": {}, "completions": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}}},
        "instructions": {"$contains": ["third-party"], "$excludes": ["no such words"]},
    }}});
    assert_eq!(compare("discover", &right, &actual), Vec::<String>::new());
}

#[test]
fn rewriting_an_expectation_keeps_what_matches_and_takes_what_changed() {
    let expected = json!({"statusCode": 200, "headers": {"content-type": {"$prefix": "application/"}, "x-gone": "1", "x-new": "a"},
        "body": {"result": {"id": {"$prefix": "job_"}, "status": "queued", "old": 1, "kept": "$absent"}}});
    let actual = json!({"statusCode": 202, "headers": {"content-type": "application/json", "x-new": "b"},
        "body": json!({"result": {"id": "job_1", "status": "running", "extra": true}}).to_string()});
    let next = rewritten(&expected, &actual);
    assert_eq!(
        next,
        json!({"statusCode": 202, "headers": {"content-type": {"$prefix": "application/"}, "x-gone": null, "x-new": "b"},
        "body": {"result": {"id": {"$prefix": "job_"}, "status": "running", "old": "$absent", "kept": "$absent"}}})
    );
    assert!(compare("x", &next, &actual).is_empty(), "{:?}", compare("x", &next, &actual));
}
