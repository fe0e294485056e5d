//! What the method handlers answer with in common: a tool's
//! `CallToolResult` (also what a completed task inlines), the 503 of storage
//! trouble, and the step-up 403 of a missing scope.

use serde_json::{Map, Value, json};

use super::era::ProtocolVersion;
use super::jsonrpc::RpcError;
use super::{Call, Outcome};
use crate::domain::Scope;

/// The service cannot answer now (storage slow or down): HTTP 503 with
/// `Retry-After`, the JSON-RPC error 50300.
pub fn unavailable() -> RpcError {
    RpcError::unavailable("The service is temporarily unavailable; try again shortly")
}

/// HTTP 403 with the step-up challenge of the MCP resource.
pub fn step_up(call: &Call<'_>, scopes: &[Scope]) -> RpcError {
    let challenge = call.server.resource.insufficient_scope(scopes);
    let mut error = RpcError::forbidden(challenge.description.clone())
        .with_data(json!({"requiredScopes": scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>()}));
    error.headers = challenge.headers();
    error
}

/// A tool result carrying `body` (the endpoint's JSON) as text and, where the
/// version has it, as `structuredContent`.
pub fn tool_result(version: ProtocolVersion, body: &Value, is_error: bool) -> Outcome {
    Outcome::Complete(call_tool_result(version, body, is_error))
}

/// The `CallToolResult` object of `tool_result` (also what a completed task inlines).
pub fn call_tool_result(version: ProtocolVersion, body: &Value, is_error: bool) -> Value {
    let mut result = Map::new();
    let mut text = Map::new();
    text.insert("type".into(), Value::from("text"));
    text.insert("text".into(), Value::String(crate::json::text(body)));
    result.insert("content".into(), Value::Array(vec![Value::Object(text)]));
    if version != ProtocolVersion::V2025_03_26 && body.is_object() {
        result.insert("structuredContent".into(), body.clone());
    }
    result.insert("isError".into(), Value::Bool(is_error));
    Value::Object(result)
}
