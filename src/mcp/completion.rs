//! `completion/complete`: suggestions for prompt arguments and resource
//! template variables. A reference to an unknown prompt, template or argument
//! is `-32602`; a valid reference with no match is an empty list. At most 100
//! values, always with `total` and `hasMore`.

use serde_json::{Map, Value, json};

use super::McpServer;
use super::era::ProtocolVersion;
use super::jsonrpc::RpcError;
use super::methods::invalid_params;
use super::prompts::{ArgumentKind, Prompts};

pub const MAX_VALUES: usize = 100;

pub fn complete(_server: &McpServer, params: &Map<String, Value>, version: ProtocolVersion) -> Result<Value, RpcError> {
    let Some(Value::Object(reference)) = params.get("ref") else {
        return Err(invalid_params("completion/complete needs params.ref as an object"));
    };
    let Some(Value::Object(argument)) = params.get("argument") else {
        return Err(invalid_params("completion/complete needs params.argument as an object"));
    };
    let (Some(Value::String(arg_name)), Some(Value::String(prefix))) = (argument.get("name"), argument.get("value"))
    else {
        return Err(invalid_params("completion/complete needs argument.name and argument.value as strings"));
    };
    // 2025-03-26 has no context: whatever arrives there is ignored.
    if version != ProtocolVersion::V2025_03_26 && params.get("context").is_some_and(|c| !c.is_object()) {
        return Err(invalid_params("completion/complete needs params.context as an object"));
    }
    let candidates: Vec<String> = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let Some(Value::String(name)) = reference.get("name") else {
                return Err(invalid_params("ref/prompt needs a name"));
            };
            let prompt = Prompts::find(name).ok_or_else(|| invalid_params(format!("Unknown prompt: {name}")))?;
            let spec = prompt
                .arguments
                .iter()
                .find(|a| a.name == arg_name)
                .ok_or_else(|| invalid_params(format!("Prompt {name} has no argument {arg_name}")))?;
            match spec.kind {
                // Record ids come from the workspace's data.
                ArgumentKind::Id => Vec::new(),
                ArgumentKind::Date => Vec::new(),
            }
        }
        Some("ref/resource") => {
            let Some(Value::String(uri)) = reference.get("uri") else {
                return Err(invalid_params("ref/resource needs a uri"));
            };
            return Err(invalid_params(format!("Unknown resource template: {uri}")).with_data(json!({"uri": uri})));
        }
        _ => return Err(invalid_params("ref.type must be ref/prompt or ref/resource")),
    };
    Ok(completion_result(candidates, prefix))
}

/// Prefix-filter `candidates`, cap at 100, report the full count.
pub fn completion_result(candidates: Vec<String>, prefix: &str) -> Value {
    let mut matching: Vec<String> = candidates.into_iter().filter(|c| c.starts_with(prefix)).collect();
    matching.sort();
    matching.dedup();
    let total = matching.len();
    matching.truncate(MAX_VALUES);
    json!({"completion": {"values": matching, "total": total, "hasMore": total > MAX_VALUES}})
}
