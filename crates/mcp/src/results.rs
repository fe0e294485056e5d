//! What the method handlers answer with in common: a tool's
//! `CallToolResult` (also what a completed task inlines), the 503 of storage
//! trouble, and the step-up 403 of a missing scope.

use serde_json::{Map, Value, json};

use super::era::ProtocolVersion;
use super::jsonrpc::RpcError;
use super::{Call, Outcome};
use inbox_domain::Scope;

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
/// version has it, as `structuredContent`: `call_tool_result`'s members,
/// written as text. The body is serialized once and used twice (as the text
/// content, escaped, and as the structured content) instead of copied into
/// a tree that is serialized again with the answer.
pub fn tool_result(version: ProtocolVersion, body: &Value, is_error: bool) -> Outcome {
    let text = inbox_support::json::text(body);
    let mut out = Vec::with_capacity(2 * text.len() + 96);
    out.extend_from_slice(b"{\"content\":[{\"type\":\"text\",\"text\":");
    inbox_support::json::write_string(&mut out, &text);
    out.extend_from_slice(b"}]");
    if has_structured_content(version, body) {
        out.extend_from_slice(b",\"structuredContent\":");
        out.extend_from_slice(text.as_bytes());
    }
    out.extend_from_slice(if is_error { b",\"isError\":true}" } else { b",\"isError\":false}" });
    // JSON text written from `str`s only: valid UTF-8.
    Outcome::Serialized(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// A tool result whose body holds e-mails (`untrusted::tool_result`): the
/// text content is the facts and the fenced fields, the structured content
/// the rewritten body.
pub fn fenced_result(version: ProtocolVersion, rewritten: &super::untrusted::Rewritten, is_error: bool) -> Outcome {
    let mut out = Vec::with_capacity(2 * rewritten.text.len() + 96);
    out.extend_from_slice(b"{\"content\":[{\"type\":\"text\",\"text\":");
    inbox_support::json::write_string(&mut out, &rewritten.text);
    out.extend_from_slice(b"}]");
    if has_structured_content(version, &rewritten.structured) {
        out.extend_from_slice(b",\"structuredContent\":");
        out.extend_from_slice(inbox_support::json::text(&rewritten.structured).as_bytes());
    }
    out.extend_from_slice(if is_error { b",\"isError\":true}" } else { b",\"isError\":false}" });
    // JSON text written from `str`s only: valid UTF-8.
    Outcome::Serialized(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Whether a result in `version` carries `body` as `structuredContent` too.
fn has_structured_content(version: ProtocolVersion, body: &Value) -> bool {
    version != ProtocolVersion::V2025_03_26 && body.is_object()
}

/// The `CallToolResult` object of `tool_result` (also what a completed task inlines).
pub fn call_tool_result(version: ProtocolVersion, body: &Value, is_error: bool) -> Value {
    let mut result = Map::new();
    let mut text = Map::new();
    text.insert("type".into(), Value::from("text"));
    text.insert("text".into(), Value::String(inbox_support::json::text(body)));
    result.insert("content".into(), Value::Array(vec![Value::Object(text)]));
    if has_structured_content(version, body) {
        result.insert("structuredContent".into(), body.clone());
    }
    result.insert("isError".into(), Value::Bool(is_error));
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text `tool_result` writes is the `CallToolResult` of
    /// `call_tool_result`, member for member, in every version.
    #[test]
    fn a_tool_result_written_as_text_is_the_call_tool_result() {
        let bodies = [
            json!({"data": {"id": "eml_1", "subject": "Boleto \"Nov\"\n\u{1}ção", "amount": 12.5, "tags": []}}),
            json!({"error": {"code": "not_found", "message": "E-mail not found"}}),
            json!([1, 2]),
            json!("text"),
        ];
        for version in ProtocolVersion::SUPPORTED {
            for body in &bodies {
                for is_error in [false, true] {
                    let Outcome::Serialized(text) = tool_result(version, body, is_error) else {
                        panic!("a tool result is written as text");
                    };
                    let written: Value = serde_json::from_str(&text).unwrap();
                    assert_eq!(written, call_tool_result(version, body, is_error), "{version:?} {body} {is_error}");
                }
            }
        }
        let Outcome::Serialized(text) = tool_result(ProtocolVersion::V2026_07_28, &bodies[0], false) else {
            panic!("a tool result is written as text");
        };
        let written: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(written["structuredContent"], bodies[0]);
        assert_eq!(serde_json::from_str::<Value>(written["content"][0]["text"].as_str().unwrap()).unwrap(), bodies[0]);
    }
}
