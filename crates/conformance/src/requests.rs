//! The input requests the fixtures ask the client for besides a form
//! elicitation: a sampling request (`sampling/createMessage`, the client's
//! model) and a root listing (`roots/list`). The product never asks for
//! either, so the pipeline does not know them: `inbox_mcp::input` takes them
//! as `input::Kind`s this module defines — the method, the client capability
//! each needs (`sampling`, `roots`: -32021 naming it when the client did not
//! declare it) and what a valid answer is (-32602 otherwise) — and this
//! module reads their answers.

use serde_json::{Value, json};

use inbox_mcp::input::{Kind, Request, Responses};
use inbox_mcp::jsonrpc::RpcError;

/// A sampling request: its answer is a message (a role, and a content block
/// or, from 2025-11-25, a list of them).
pub static SAMPLING: Kind = Kind {
    method: "sampling/createMessage",
    capability: "sampling",
    answer: "sampling result (role and content)",
    is_answer: is_sampling_result,
};

/// A root listing: its answer lists roots, each with its URI.
pub static ROOTS: Kind = Kind {
    method: "roots/list",
    capability: "roots",
    answer: "roots result (roots with uri)",
    is_answer: is_roots_result,
};

/// The first content block of a sampling result (one block, or a list).
fn first_block(answer: &Value) -> Option<&Value> {
    match answer.get("content") {
        Some(Value::Array(blocks)) => blocks.first(),
        other => other,
    }
}

fn is_sampling_result(answer: &Value) -> bool {
    answer.get("role").is_some_and(Value::is_string) && first_block(answer).is_some_and(Value::is_object)
}

fn is_roots_result(answer: &Value) -> bool {
    match answer.get("roots") {
        Some(Value::Array(roots)) => roots.iter().all(|r| r.get("uri").is_some_and(Value::is_string)),
        _ => false,
    }
}

/// Asks the client's model `text`, in at most `max_tokens`.
pub fn question(text: &str, max_tokens: u64) -> Request {
    Request::Other(
        &SAMPLING,
        json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "maxTokens": max_tokens,
        }),
    )
}

/// Asks for the client's roots.
pub fn roots() -> Request {
    Request::Other(&ROOTS, json!({}))
}

/// The text of the sampling result that answered `key`, if it came (an
/// answer whose content is not text gives an empty text).
pub fn sampled(responses: &Responses<'_>, key: &str) -> Result<Option<String>, RpcError> {
    Ok(responses.answer(&SAMPLING, key)?.map(|answer| {
        first_block(answer).and_then(|block| block.get("text")).and_then(Value::as_str).unwrap_or("").to_owned()
    }))
}

/// The roots that answered `key`, if they came.
pub fn listed_roots(responses: &Responses<'_>, key: &str) -> Result<Option<Vec<Value>>, RpcError> {
    Ok(responses.answer(&ROOTS, key)?.and_then(|answer| answer.get("roots")).and_then(Value::as_array).cloned())
}
