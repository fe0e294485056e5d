//! The visible `match` over method names, per era (wire reference §3), and
//! the per-method parameter checks. Each arm returns its result in the shape
//! of the request's protocol version; decoration happens in `super::decorate`.

use serde_json::{Map, Value, json};

use super::era::{Era, ProtocolVersion};
use super::jsonrpc::RpcError;
use super::{Call, Outcome, capabilities, server_info};

/// Methods served in both eras.
const BOTH: &[&str] = &[
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
];

/// Methods of the handshake era only.
const HANDSHAKE: &[&str] = &["initialize", "ping"];

/// Stage G: is `method` served in `era`? Discovery and the tasks extension
/// exist only in the stateless era; the handshake and `ping` only in the
/// handshake era.
pub fn is_served(era: Era, method: &str) -> bool {
    let own = match era {
        Era::Stateless => method == "server/discover" || super::tasks::METHODS.contains(&method),
        Era::Handshake(_) => HANDSHAKE.contains(&method),
    };
    own || BOTH.contains(&method)
}

/// The method's name as a bounded label (metrics): a method this server
/// serves in either era, `notification` for any notification, `unknown` for
/// anything else, so a client cannot mint new metric dimensions.
pub fn label(method: &str) -> &'static str {
    let served = BOTH.iter().chain(HANDSHAKE).chain(&["server/discover"]).chain(&super::tasks::METHODS);
    match served.copied().find(|known| *known == method) {
        Some(known) => known,
        None if method.starts_with("notifications/") => "notification",
        None => "unknown",
    }
}

/// Methods that act on a workspace (everything but discovery and the handshake).
pub fn needs_workspace(method: &str) -> bool {
    !matches!(method, "server/discover" | "initialize" | "ping")
}

/// Results that carry `ttlMs`/`cacheScope` when complete (stateless era).
pub fn is_cacheable(method: &str) -> bool {
    matches!(
        method,
        "server/discover"
            | "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
    )
}

/// Stages H–K: dispatch a served method. Returns the outcome and the version
/// the response is produced under (`initialize` negotiates its own).
pub async fn dispatch(call: &Call<'_>) -> Result<(Outcome, ProtocolVersion), RpcError> {
    let server = call.server;
    let version = call.era.version();
    let params = &call.message.params;
    let complete = |v: Value| Ok((Outcome::Complete(v), version));
    match call.message.method.as_str() {
        "server/discover" => complete(server.discover.clone()),
        "initialize" => {
            let (result, negotiated) = initialize(params)?;
            Ok((Outcome::Complete(result), negotiated))
        }
        "ping" => complete(json!({})),
        "tools/list" => {
            no_cursor(params)?;
            let role = call.tenant.map_or(crate::domain::Role::Viewer, |t| t.role);
            let listed = server.tools.list_serialized(version, call.principal, role, call.narrowing);
            Ok((Outcome::Serialized(listed), version))
        }
        "tools/call" => server.tools.call(call).await.map(|outcome| (outcome, version)),
        "resources/list" => {
            no_cursor(params)?;
            complete(json!({"resources": server.resources.list(version, call.principal)}))
        }
        "resources/templates/list" => {
            no_cursor(params)?;
            complete(json!({"resourceTemplates": server.resources.templates(version, call.principal)}))
        }
        "resources/read" => complete(server.resources.read(call).await?),
        "prompts/list" => {
            no_cursor(params)?;
            complete(json!({"prompts": server.prompts.list(version, call.principal)}))
        }
        "prompts/get" => complete(server.prompts.get(call).await?),
        "completion/complete" => complete(super::completion::complete(call, params, version).await?),
        "tasks/get" | "tasks/update" | "tasks/cancel" => {
            super::tasks::dispatch(call).await.map(|outcome| (outcome, version))
        }
        // is_served() admitted only the names above.
        other => Err(RpcError::method_not_found(other, call.era == Era::Stateless)),
    }
}

/// Every list fits in one page, so the server never issues a cursor: any
/// cursor a client sends (even "") is one it never issued.
fn no_cursor(params: &Map<String, Value>) -> Result<(), RpcError> {
    match params.get("cursor") {
        None => Ok(()),
        Some(_) => Err(RpcError::invalid_params("Invalid cursor")),
    }
}

/// `initialize` (handshake era): validate, then negotiate. An unsupported
/// requested version gets a counter-offer of 2025-06-18, never 2026-07-28.
fn initialize(params: &Map<String, Value>) -> Result<(Value, ProtocolVersion), RpcError> {
    let Some(Value::String(requested)) = params.get("protocolVersion") else {
        return Err(RpcError::invalid_params("initialize needs protocolVersion as a string"));
    };
    if !params.get("capabilities").is_some_and(Value::is_object) {
        return Err(RpcError::invalid_params("initialize needs capabilities as an object"));
    }
    if !params.get("clientInfo").is_some_and(Value::is_object) {
        return Err(RpcError::invalid_params("initialize needs clientInfo as an object"));
    }
    let negotiated = ProtocolVersion::parse_handshake(requested).unwrap_or(ProtocolVersion::V2025_06_18);
    let result = json!({
        "protocolVersion": negotiated.as_str(),
        "capabilities": capabilities(),
        "serverInfo": server_info(negotiated),
        "instructions": super::INSTRUCTIONS,
    });
    Ok((result, negotiated))
}
