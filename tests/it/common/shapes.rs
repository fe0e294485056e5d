//! Every answer the tests produce, checked against the schemas the server
//! publishes (`inbox::api::schemas`): a REST body against its operation's
//! documented answer for that status, a tool's `structuredContent` against
//! the tool's `outputSchema`. A handler that changes a shape fails the test
//! that exercised it, whatever that test was about.

use inbox::api::Route;
use inbox::api::error::ApiError;
use inbox::api::schemas::{self, Record, Refs};
use inbox::mcp::catalogue;
use serde_json::Value;

/// Validates `instance` against `schema`, panicking with every error.
#[track_caller]
pub fn assert_conforms(schema: &Value, instance: &Value, what: &str) {
    let validator = jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("{what}: the schema is invalid: {e}"));
    let errors: Vec<String> =
        validator.iter_errors(instance).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(
        errors.is_empty(),
        "{what}: the answer is outside its schema:\n  {}\nanswer: {instance}",
        errors.join("\n  ")
    );
}

/// A REST answer (`path` after `/api/v1`, with any query).
#[track_caller]
pub fn check_rest(method: &str, path: &str, status: u16, body: &[u8]) {
    let path = path.split('?').next().unwrap_or(path);
    if path == inbox::api::openapi::PATH {
        return;
    }
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        panic!("{method} /api/v1{path}: {status} without a JSON body");
    };
    let what = format!("{method} /api/v1{path} → {status}");
    match Route::parse(method, path) {
        Ok(route) => {
            let schema = schemas::response(route.op(), status, Refs::Inline)
                .unwrap_or_else(|| panic!("{what}: status not documented for {:?}: {body}", route.op()));
            assert_conforms(&schema, &body, &what);
        }
        // No such route or method: the error shape.
        Err(ApiError::NoRoute | ApiError::MethodNotAllowed { .. }) => {
            assert_conforms(&Record::Error.schema(), &body, &what);
        }
        Err(other) => panic!("{what}: unexpected route error {other:?}"),
    }
}

/// A JSON-RPC exchange: a successful `tools/call` with `structuredContent`
/// (not an error result) must fit the tool's `outputSchema`.
#[track_caller]
pub fn check_mcp(request: &Value, body: &[u8]) {
    if request.get("method").and_then(Value::as_str) != Some("tools/call") {
        return;
    }
    let Some(name) = request.pointer("/params/name").and_then(Value::as_str) else { return };
    let Ok(answer) = serde_json::from_slice::<Value>(body) else { return };
    let result = &answer["result"];
    if result.get("isError") != Some(&Value::Bool(false)) {
        return;
    }
    let Some(content) = result.get("structuredContent") else { return };
    let Some(row) = catalogue::rows().into_iter().find(|row| row.name == name) else { return };
    // A client that draws views was listed the schema with the pending confirmation.
    let ui = request
        .pointer("/params/_meta/io.modelcontextprotocol~1clientCapabilities/extensions/io.modelcontextprotocol~1ui/mimeTypes")
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t == "text/html;profile=mcp-app"));
    let schema = if ui { inbox::mcp::apps::output(&row) } else { catalogue::output(&row) };
    assert_conforms(&schema, content, &format!("tools/call {name} structuredContent"));
}
