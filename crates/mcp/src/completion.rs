//! `completion/complete`: suggestions for prompt arguments (`inbox_id`,
//! `webhook_id`) and resource template variables (`{id}`). The typed prefix
//! is matched against the ids, slugs and names of records the caller may read
//! (read through the REST list routes, so scopes and tenancy apply), and the
//! matching ids are offered. A reference to an unknown prompt, template or
//! argument is `-32602`; a valid reference with no match, or one the caller
//! has no scope to read, is an empty list. At most 100 values, always with
//! `total` and `hasMore`.

use serde_json::{Map, Value, json};

use super::Call;
use super::era::ProtocolVersion;
use super::jsonrpc::RpcError;
use super::prompts::{ArgumentKind, Prompts};
use super::resources::Resources;
use inbox_api::error::ApiError;
use inbox_api::{self as api, Ctx, Input, Op, Route};
use inbox_domain::Tenant;

pub const MAX_VALUES: usize = 100;

/// Pages read from a list route to find candidates.
const MAX_PAGES: usize = 5;

pub async fn complete(
    call: &Call<'_>,
    tenant: &Tenant,
    params: &Map<String, Value>,
    version: ProtocolVersion,
) -> Result<Value, RpcError> {
    let Some(Value::Object(reference)) = params.get("ref") else {
        return Err(RpcError::invalid_params("completion/complete needs params.ref as an object"));
    };
    let Some(Value::Object(argument)) = params.get("argument") else {
        return Err(RpcError::invalid_params("completion/complete needs params.argument as an object"));
    };
    let (Some(Value::String(arg_name)), Some(Value::String(prefix))) = (argument.get("name"), argument.get("value"))
    else {
        return Err(RpcError::invalid_params("completion/complete needs argument.name and argument.value as strings"));
    };
    // 2025-03-26 has no context: whatever arrives there is ignored.
    if version != ProtocolVersion::V2025_03_26 && params.get("context").is_some_and(|c| !c.is_object()) {
        return Err(RpcError::invalid_params("completion/complete needs params.context as an object"));
    }
    let collection = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let Some(Value::String(name)) = reference.get("name") else {
                return Err(RpcError::invalid_params("ref/prompt needs a name"));
            };
            let prompt =
                Prompts::find(name).ok_or_else(|| RpcError::invalid_params(format!("Unknown prompt: {name}")))?;
            let spec = prompt
                .arguments
                .iter()
                .find(|a| a.name == arg_name)
                .ok_or_else(|| RpcError::invalid_params(format!("Prompt {name} has no argument {arg_name}")))?;
            match spec.kind {
                ArgumentKind::Id => Some(prompt.subject.list),
                // Dates are typed, not chosen from records.
                ArgumentKind::Date => None,
            }
        }
        Some("ref/resource") => {
            let Some(Value::String(uri)) = reference.get("uri") else {
                return Err(RpcError::invalid_params("ref/resource needs a uri"));
            };
            let Some(list) = Resources::template_list(uri) else {
                return Err(RpcError::invalid_params(format!("Unknown resource template: {uri}"))
                    .with_data(json!({"uri": uri})));
            };
            if arg_name != "id" {
                return Err(RpcError::invalid_params(format!("Template {uri} has no variable {arg_name}")));
            }
            list
        }
        _ => return Err(RpcError::invalid_params("ref.type must be ref/prompt or ref/resource")),
    };
    let candidates = match collection {
        Some(list) => {
            candidates(&call.api_ctx(tenant, super::method::Method::CompletionComplete.as_str()), list, prefix).await?
        }
        None => Vec::new(),
    };
    Ok(completion_result(candidates))
}

/// Ids of the records `list` lists whose id, slug or name starts with `prefix`
/// (case-insensitive), read through the API's list operation. A list the caller
/// may not read offers nothing; storage trouble is the server's 503, not an
/// empty answer a client would take for "no such records".
async fn candidates(ctx: &Ctx<'_>, list: Op, prefix: &str) -> Result<Vec<String>, RpcError> {
    let prefix = prefix.to_lowercase();
    let mut found = Vec::new();
    let route = Route::new(list);
    let mut page = Map::new();
    page.insert("limit".into(), Value::from(100));
    for _ in 0..MAX_PAGES {
        let response = match api::invoke(ctx, &Input::tool(&route, &page)).await {
            Ok(response) if response.is_success() => response,
            Err(ApiError::Unavailable) => return Err(super::results::unavailable()),
            _ => break,
        };
        for record in response.body.get("data").and_then(Value::as_array).into_iter().flatten() {
            let matches = ["id", "slug", "name"]
                .iter()
                .filter_map(|k| record.get(*k).and_then(Value::as_str))
                .any(|v| v.to_lowercase().starts_with(&prefix));
            if let (true, Some(id)) = (matches, record.get("id").and_then(Value::as_str)) {
                found.push(id.to_owned());
            }
        }
        match response.body.pointer("/meta/next_cursor").and_then(Value::as_str) {
            Some(next) => page.insert("cursor".into(), Value::from(next)),
            None => break,
        };
    }
    Ok(found)
}

/// Sorted, unique, capped at 100, with the full count.
pub fn completion_result(mut values: Vec<String>) -> Value {
    values.sort();
    values.dedup();
    let total = values.len();
    values.truncate(MAX_VALUES);
    json!({"completion": {"values": values, "total": total, "hasMore": total > MAX_VALUES}})
}
