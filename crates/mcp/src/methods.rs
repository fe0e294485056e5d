//! The visible `match` over methods, per era (docs/clients.md), and
//! the per-method parameter checks. Each arm returns its result in the shape
//! of the request's protocol version; decoration happens in `super::decorate`.

use serde_json::{Map, Value, json};

use super::era::ProtocolVersion;
use super::jsonrpc::{Message, RpcError};
use super::method::Method;
use super::surface::Identity;
use super::{Call, Outcome, capabilities, server_info};
use inbox_domain::Tenant;

/// The method's name as a bounded label (logs and metrics): a method this
/// server knows, `notification` for any notification, `unknown` for anything
/// else, so a client cannot mint new metric dimensions or fill the logs.
pub fn label(message: &Message) -> &'static str {
    match message.kind {
        Some(method) => method.as_str(),
        None if message.method.starts_with("notifications/") => "notification",
        None => "unknown",
    }
}

/// Stages H–K: dispatch a served method. Returns the outcome and the version
/// the response is produced under (`initialize` negotiates its own).
/// `tenant` is the workspace resolved for a method that needs one
/// (`Method::needs_workspace`); the handlers of those get it resolved.
///
/// What runs an operation is boxed one by one (the catalogue's answers, the
/// tasks methods): those futures are kilobytes (the operation's table calls),
/// and held inline they would size this future, and every future above it,
/// for `server/discover` and the lists too, which run none.
pub async fn dispatch(call: &Call<'_>, tenant: Option<&Tenant>) -> Result<(Outcome, ProtocolVersion), RpcError> {
    let server = call.server;
    let catalogue = server.catalogue.as_ref();
    let version = call.era.version();
    let params = &call.message.params;
    let complete = |v: Value| Ok((Outcome::Complete(v), version));
    let Some(method) = call.message.kind else {
        return Err(call.era.method_not_found(&call.message.method));
    };
    match method {
        Method::ServerDiscover => {
            let discover = server.discover_views.as_ref().filter(|_| call.client.ui).unwrap_or(&server.discover);
            return Ok((Outcome::Serialized(discover.clone()), version));
        }
        Method::Initialize => {
            let (result, negotiated) = initialize(catalogue.identity(), params)?;
            return Ok((Outcome::Complete(result), negotiated));
        }
        Method::Ping => return complete(json!({})),
        _ => {}
    }
    let Some(tenant) = tenant else {
        // The pipeline resolves a workspace for every other method first.
        tracing::error!(method = method.as_str(), "no workspace was resolved");
        return Err(RpcError::internal("No workspace was resolved for this request"));
    };
    match method {
        Method::ServerDiscover | Method::Initialize | Method::Ping => {
            Err(RpcError::internal("A method without a workspace reached the workspace methods"))
        }
        Method::ToolsList => {
            no_cursor(params)?;
            Ok((catalogue.list_tools(call, tenant), version))
        }
        Method::ToolsCall => catalogue.call_tool(call, tenant).await.map(|outcome| (outcome, version)),
        Method::ResourcesList => {
            no_cursor(params)?;
            complete(json!({"resources": catalogue.list_resources(call, tenant)}))
        }
        Method::ResourcesTemplatesList => {
            no_cursor(params)?;
            complete(json!({"resourceTemplates": catalogue.list_resource_templates(call, tenant)}))
        }
        Method::ResourcesRead => catalogue.read_resource(call, tenant).await.map(|outcome| (outcome, version)),
        Method::PromptsList => {
            no_cursor(params)?;
            complete(json!({"prompts": catalogue.list_prompts(call, tenant)}))
        }
        Method::PromptsGet => catalogue.get_prompt(call, tenant).await.map(|outcome| (outcome, version)),
        Method::CompletionComplete => complete(catalogue.complete(call, tenant).await?),
        Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
            Box::pin(super::tasks::dispatch(call, tenant, method)).await.map(|outcome| (outcome, version))
        }
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
fn initialize(identity: &Identity, params: &Map<String, Value>) -> Result<(Value, ProtocolVersion), RpcError> {
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
        "serverInfo": server_info(identity, negotiated),
        "instructions": identity.instructions,
    });
    Ok((result, negotiated))
}
