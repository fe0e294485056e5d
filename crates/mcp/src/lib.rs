//! The MCP endpoint's protocol half: the request pipeline (docs/protocol.md: "How a
//! request is answered", stages A–L) from parsing to result decoration, for
//! both protocol eras at once. The HTTP half (`inbox::edge`: `Origin`/`Host`, media type, size,
//! authentication, rate limit) runs before and between the two steps here:
//!
//! - `prepare` (stages B–D): bytes → one JSON-RPC message → its era, with the
//!   version errors that are answered before authentication;
//! - `answer` (stages F–L), for an authenticated caller: envelope and routing
//!   headers, method resolution, workspace, dispatch, decoration.
//!
//! Protocol translation only: no business rules live here. What the server
//! offers is a value it is given (`surface::Catalogue`: the product's is
//! `product::Product`, whose tools, resources and prompts are rows in their
//! modules); `methods` is the visible match over method names; asking the
//! client for input (`input`) and the tasks extension over the job queue
//! (`tasks`) serve every catalogue; data is reached only through `inbox_api`.

pub mod apps;
pub mod card;
pub mod catalogue;
pub mod completion;
pub mod confirm;
pub mod era;
pub mod input;
pub mod jsonrpc;
pub mod method;
pub mod methods;
pub mod narrow;
pub mod product;
pub mod prompts;
pub mod resources;
pub mod results;
pub mod surface;
pub mod tasks;
pub mod tools;
pub mod untrusted;

use http::StatusCode;
use std::sync::Arc;

use http::HeaderMap;
use serde_json::{Map, Value, json};

use era::{ClientContext, Era, ProtocolVersion};
use inbox_api::Services;
use inbox_api::error::ApiError;
use inbox_api::tenancy::{self, TenancyError, Tenant};
use inbox_auth::Principal;
use inbox_auth::challenge::{Challenge, Resource};
use inbox_domain::provenance::ContentPolicy;
use inbox_support::secrets::Secrets;
use jsonrpc::{Message, RpcError, error_body, parse_message, result_body};
use method::Method;

pub use product::{INSTRUCTIONS, SERVER_NAME, SERVER_TITLE, SERVER_VERSION};

/// A reply body: a JSON document, or one already serialized (listings are
/// assembled from pieces rendered once per container, without rebuilding
/// their JSON trees per request).
#[derive(Debug, Clone)]
pub enum ReplyBody {
    Json(Value),
    Serialized(String),
}

/// The answer of the MCP pipeline, turned into an HTTP response by `inbox::edge`.
#[derive(Debug, Clone)]
pub struct McpReply {
    pub status: StatusCode,
    /// `None` for `202 Accepted` (no body, no `Content-Type`).
    pub body: Option<ReplyBody>,
    /// The value of the `MCP-Protocol-Version` response header.
    pub version: ProtocolVersion,
    /// Extra response headers (challenges, rate-limit headers, `Retry-After`).
    pub headers: Vec<(&'static str, String)>,
}

impl McpReply {
    pub fn error(id: Option<&Value>, error: &RpcError, version: ProtocolVersion) -> Self {
        let body = Some(ReplyBody::Json(error_body(id, error)));
        Self { status: error.status, body, version, headers: error.headers.clone() }
    }

    pub fn accepted(version: ProtocolVersion) -> Self {
        Self { status: StatusCode::ACCEPTED, body: None, version, headers: Vec::new() }
    }

    /// An authentication failure: OAuth-style body on 401/400, JSON-RPC
    /// (with the id, when there is one) on 503.
    pub fn rejected(id: Option<&Value>, challenge: &Challenge, version: ProtocolVersion) -> Self {
        let body = if challenge.status == StatusCode::SERVICE_UNAVAILABLE {
            // The challenge's own Retry-After travels below.
            error_body(id, &RpcError::unavailable(challenge.description.clone()))
        } else {
            challenge.oauth_body()
        };
        Self { status: challenge.status, body: Some(ReplyBody::Json(body)), version, headers: challenge.headers() }
    }

    /// Over the per-minute budget: 429 with the JSON-RPC error 42900.
    pub fn rate_limited(id: Option<&Value>, version: ProtocolVersion, retry_after: u64, limit: u32) -> Self {
        let error = RpcError::rate_limited().with_data(json!({"retryAfter": retry_after, "limit": limit}));
        Self::error(id, &error, version)
    }

    pub fn with_headers(mut self, headers: &[(&'static str, String)]) -> Self {
        self.headers.extend(headers.iter().cloned());
        self
    }
}

/// Fields the pipeline learns and the request span records.
#[derive(Debug, Default, Clone)]
pub struct Trace {
    pub era: Option<&'static str>,
    /// The JSON-RPC method as a bounded label (`methods::label`): it is
    /// logged before authentication, so a client cannot write what it likes
    /// (or as much as it likes) into the logs.
    pub method: Option<&'static str>,
    /// What the request asked for, as a bounded label: the tool's name for
    /// `tools/call` of a known tool, otherwise `methods::label`.
    pub operation: Option<&'static str>,
    pub sub: Option<String>,
    pub workspace: Option<String>,
    /// Set by the edge before the request runs: the audit trail names it.
    pub request_id: String,
}

/// A workspace that cannot be resolved: HTTP 400 with -32602 and what to send
/// instead, so a client configuration can be fixed in one step. The API says
/// what went wrong; this only words it for JSON-RPC.
fn workspace_error(error: TenancyError) -> RpcError {
    match ApiError::from(error) {
        ApiError::WorkspaceRequired { workspaces } => {
            RpcError::bad_params("X-Workspace-Id is required: this organization has more than one workspace")
                .with_data(json!({"missing": tenancy::HEADER_NAME, "workspaces": workspaces}))
        }
        ApiError::WorkspaceNotFound { workspaces } => RpcError::bad_params("Workspace not found")
            .with_data(json!({"invalid": tenancy::HEADER_NAME, "workspaces": workspaces})),
        // Not set up yet: 403 with the REST error's code and message, so a
        // client can show the person what to do.
        error @ (ApiError::NoMembership { .. } | ApiError::NoWorkspace { .. }) => {
            let body = error.body();
            let message = body.pointer("/error/message").and_then(Value::as_str).unwrap_or("Forbidden");
            let mut data = body.pointer("/error/details").cloned().unwrap_or_else(|| json!({}));
            if let (Some(code), Value::Object(map)) = (body.pointer("/error/code").cloned(), &mut data) {
                map.insert("code".into(), code);
            }
            RpcError::forbidden(message).with_data(data)
        }
        _ => results::unavailable(),
    }
}

/// A successful method result before decoration.
#[derive(Debug)]
pub enum Outcome {
    Complete(Value),
    /// A complete result already serialized: a JSON object, not empty.
    Serialized(String),
    /// A multi-round-trip interim result (`ResultType::InputRequired`).
    InputRequired(Value),
    /// A task was created for the request (`ResultType::Task`, tasks extension).
    Task(Value),
}

inbox_domain::records::wire_enum! {
    /// What a stateless-era result is (its `resultType`).
    pub enum ResultType {
        Complete = "complete",
        InputRequired = "input_required",
        Task = "task",
    }
}

/// Everything a method handler may read about the request.
pub struct Call<'a> {
    pub server: &'a McpServer,
    /// The operations, reached only through `inbox_api`.
    pub api: &'a Services,
    pub era: Era,
    pub client: &'a ClientContext,
    pub message: &'a Message,
    /// The verified caller, with the scopes the connection's narrowing keeps.
    pub principal: &'a Principal,
    /// What the connection narrowed itself to (`narrow`).
    pub narrowing: narrow::Narrowing,
    pub request_id: &'a str,
}

impl<'a> Call<'a> {
    /// An API call for this request in `tenant`, made by `via` (the tool or
    /// the method: what the audit trail says asked).
    pub fn api_ctx(&self, tenant: &'a Tenant, via: &'a str) -> inbox_api::Ctx<'a> {
        let origin = inbox_api::audit::Origin {
            request_id: self.request_id,
            surface: inbox_domain::records::Surface::Mcp,
            client: self.client.info.as_ref(),
            via: Some(via),
        };
        self.api.ctx(self.principal, tenant, origin)
    }

    /// How much third-party text this answer may carry in `tenant`: the
    /// strictest of the workspace's policy, the deployment's cap and the
    /// connection's narrowing (`provenance`: none can loosen another).
    pub fn content_policy(&self, tenant: &Tenant) -> ContentPolicy {
        let asked = self.narrowing.content.unwrap_or(ContentPolicy::Full);
        tenant.content_policy.stricter(self.server.content_cap).stricter(asked)
    }
}

/// A message that passed parsing and era selection (`prepare`).
#[derive(Debug)]
pub enum Prepared {
    /// A notification: nothing is executed and no version rules apply; once
    /// authenticated it is answered 202, labelled with this version.
    Notification(ProtocolVersion),
    Request(Request),
}

/// A request with an id, in its era, waiting for authentication.
#[derive(Debug)]
pub struct Request {
    pub message: Message,
    pub id: Value,
    pub era: Era,
}

/// The MCP server: the catalogue it serves, static documents built once per
/// container, and what `requestState` and the step-up challenge need.
pub struct McpServer {
    server_info_meta: Value,
    /// `server_info_meta` serialized.
    server_info_json: String,
    /// The `server/discover` result, serialized once: it is the same for
    /// every caller, and writing its ~1.5 KB tree was a third of the request.
    pub(crate) discover: String,
    /// `server/discover` for a client that declared the MCP Apps extension,
    /// when the catalogue draws views: the extension advertised too.
    pub(crate) discover_views: Option<String>,
    /// What this server offers (the product's, or another a binary gives it).
    pub(crate) catalogue: Arc<dyn surface::Catalogue>,
    /// Seals and opens `requestState` (`input`, `confirm`).
    pub(crate) secrets: Arc<Secrets>,
    /// How long a `requestState` stays valid.
    pub(crate) confirmation_ttl_secs: u64,
    /// This endpoint as an OAuth protected resource (for `insufficient_scope`).
    pub(crate) resource: Resource,
    /// The deployment's cap on third-party text (`CONTENT_POLICY_CAP`;
    /// `full`, no cap, unless the operator set one).
    pub(crate) content_cap: ContentPolicy,
}

impl McpServer {
    /// The product's server (`product::Product`).
    pub fn new(secrets: Arc<Secrets>, confirmation_ttl_secs: u64, resource: Resource) -> Self {
        Self::with_catalogue(secrets, confirmation_ttl_secs, resource, Arc::new(product::Product::new()))
    }

    /// A server of `catalogue`, through the same pipeline.
    pub fn with_catalogue(
        secrets: Arc<Secrets>,
        confirmation_ttl_secs: u64,
        resource: Resource,
        catalogue: Arc<dyn surface::Catalogue>,
    ) -> Self {
        let identity = *catalogue.identity();
        let discover = json!({
            "supportedVersions": ProtocolVersion::supported_strings(),
            "capabilities": stateless_capabilities(),
            "instructions": identity.instructions,
        });
        let discover_views = catalogue.has_views().then(|| {
            let mut with_views = discover.clone();
            if let Some(Value::Object(extensions)) = with_views.pointer_mut("/capabilities/extensions") {
                extensions.insert(era::EXT_UI.into(), json!({}));
            }
            inbox_support::json::text(&with_views)
        });
        let server_info_meta =
            json!({"io.modelcontextprotocol/serverInfo": server_info(&identity, ProtocolVersion::V2026_07_28)});
        Self {
            server_info_json: server_info_meta.to_string(),
            server_info_meta,
            discover: inbox_support::json::text(&discover),
            discover_views,
            catalogue,
            secrets,
            confirmation_ttl_secs,
            resource,
            content_cap: ContentPolicy::Full,
        }
    }

    /// The deployment's cap on third-party text: no workspace setting and
    /// no request gets more than `cap` out (`provenance::ContentPolicy`).
    pub fn with_content_cap(mut self, cap: ContentPolicy) -> Self {
        self.content_cap = cap;
        self
    }

    /// Who this server says it is.
    pub fn identity(&self) -> &surface::Identity {
        self.catalogue.identity()
    }

    /// Stages B–D: parse the body and select the era. Version errors are
    /// answered here, before authentication.
    pub fn prepare(&self, body: &[u8], headers: &HeaderMap, trace: &mut Trace) -> Result<Prepared, McpReply> {
        let newest = ProtocolVersion::NEWEST;
        let message = match parse_message(body) {
            Ok(message) => message,
            Err(failure) => return Err(McpReply::error(failure.id.as_ref(), &failure.error, newest)),
        };
        trace.method = Some(methods::label(&message));
        trace.operation = Some(self.operation(&message));
        let Some(id) = message.id.clone() else {
            return Ok(Prepared::Notification(notification_version(&message, headers)));
        };
        let era = match era::select(&message, headers) {
            Ok(era) => era,
            Err(error) => return Err(McpReply::error(Some(&id), &error, newest)),
        };
        trace.era = Some(era.label());
        Ok(Prepared::Request(Request { message, id, era }))
    }

    /// The bounded label of a message (see `Trace::operation`).
    fn operation(&self, message: &Message) -> &'static str {
        if message.kind == Some(Method::ToolsCall)
            && let Some(tool) = message.params.get("name").and_then(Value::as_str).and_then(|n| self.catalogue.tool(n))
        {
            return tool.label;
        }
        methods::label(message)
    }

    /// Whether answering `request` may change state: a call of a tool that
    /// is not read-only, or a task's cancellation (such requests are counted
    /// against the rate budget before they run).
    pub fn changes_state(&self, request: &Request) -> bool {
        match request.message.kind {
            Some(Method::TasksCancel) => true,
            Some(Method::ToolsCall) => request
                .message
                .params
                .get("name")
                .and_then(Value::as_str)
                .and_then(|name| self.catalogue.tool(name))
                .is_some_and(|tool| tool.changes_state),
            _ => false,
        }
    }

    /// Stages F–L for an authenticated request.
    pub async fn answer(
        &self,
        api: &Services,
        request: &Request,
        path: &str,
        headers: &HeaderMap,
        principal: &Principal,
        trace: &mut Trace,
    ) -> McpReply {
        let Request { message, id, era } = request;
        let (era, version) = (*era, era.version());
        let client = match era {
            Era::Stateless => {
                let checked = era::check_envelope(message).and_then(|client| {
                    era::check_routing_headers(message, headers)?;
                    if message.kind == Some(Method::ToolsCall)
                        && let Some(tool) =
                            message.params.get("name").and_then(Value::as_str).and_then(|n| self.catalogue.tool(n))
                    {
                        era::check_param_headers(message, headers, tool.param_headers)?;
                    }
                    Ok(client)
                });
                match checked {
                    Ok(client) => client,
                    Err(error) => return McpReply::error(Some(id), &error, version),
                }
            }
            // Handshake-era capabilities were sent only with initialize and are not kept.
            Era::Handshake(_) => ClientContext::default(),
        };

        // What the connection narrowed itself to; the caller, narrowed.
        let narrowing = match narrow::Narrowing::read(path, headers) {
            Ok(narrowing) => narrowing,
            Err(error) => return McpReply::error(Some(id), &error, version),
        };
        let narrowed = narrowing.principal(principal);
        let principal: &Principal = &narrowed;

        if !message.kind.is_some_and(|m| era.serves(m)) {
            let error = era.method_not_found(&message.method);
            return McpReply::error(Some(id), &error, version);
        }

        let tenant = if message.kind.is_some_and(Method::needs_workspace) {
            let header = headers.get(tenancy::HEADER).and_then(|v| v.to_str().ok());
            match api.resolve(principal, header).await {
                Ok(tenant) => {
                    trace.workspace = Some(tenant.workspace.to_string());
                    Some(tenant)
                }
                Err(error) => return McpReply::error(Some(id), &workspace_error(error), version),
            }
        } else {
            None
        };

        let call = Call {
            server: self,
            api,
            era,
            client: &client,
            message,
            principal,
            narrowing,
            request_id: &trace.request_id,
        };
        match methods::dispatch(&call, tenant.as_ref()).await {
            Ok((outcome, reply_version)) => {
                let body = match outcome {
                    Outcome::Serialized(result) => {
                        ReplyBody::Serialized(self.serialized_response(id, era, message.kind, &result))
                    }
                    outcome => ReplyBody::Json(result_body(id, self.decorate(era, message.kind, outcome))),
                };
                McpReply { status: StatusCode::OK, body: Some(body), version: reply_version, headers: Vec::new() }
            }
            Err(error) => McpReply::error(Some(id), &error, version),
        }
    }

    /// Stage L: stateless results get `resultType`, serverInfo `_meta` and,
    /// for the cacheable methods, `ttlMs`/`cacheScope`; handshake results are
    /// already in their version's shape.
    fn decorate(&self, era: Era, method: Option<Method>, outcome: Outcome) -> Value {
        let (mut result, result_type) = match outcome {
            Outcome::Complete(v) => (v, ResultType::Complete),
            Outcome::InputRequired(v) => (v, ResultType::InputRequired),
            Outcome::Task(v) => (v, ResultType::Task),
            // Serialized results are decorated by `serialized_response`.
            Outcome::Serialized(text) => {
                (inbox_support::json::parse_strict(&text).unwrap_or(Value::Null), ResultType::Complete)
            }
        };
        if era != Era::Stateless {
            return result;
        }
        let Value::Object(object) = &mut result else { return result };
        object.insert("resultType".into(), Value::from(result_type.as_str()));
        if result_type == ResultType::Complete && method.is_some_and(Method::is_cacheable) {
            object.insert("ttlMs".into(), Value::from(0));
            object.insert("cacheScope".into(), Value::from("private"));
        }
        match object.get_mut("_meta") {
            Some(Value::Object(meta)) => {
                if let Value::Object(info) = &self.server_info_meta {
                    meta.extend(info.clone());
                }
            }
            _ => {
                object.insert("_meta".into(), self.server_info_meta.clone());
            }
        }
        result
    }
}

impl McpServer {
    /// The whole response to a request whose result is already serialized (a
    /// JSON object without `_meta`), with `decorate`'s members appended as
    /// text: written once into one buffer of the right size.
    fn serialized_response(&self, id: &Value, era: Era, method: Option<Method>, result: &str) -> String {
        const CACHEABLE: &str = ",\"ttlMs\":0,\"cacheScope\":\"private\"";
        let id = inbox_support::json::text(id);
        let mut out = String::with_capacity(result.len() + id.len() + self.server_info_json.len() + 120);
        out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
        out.push_str(&id);
        out.push_str(",\"result\":");
        match result.strip_suffix('}') {
            Some(open) if era == Era::Stateless => {
                out.push_str(open);
                out.push_str(",\"resultType\":\"complete\"");
                if method.is_some_and(Method::is_cacheable) {
                    out.push_str(CACHEABLE);
                }
                out.push_str(",\"_meta\":");
                out.push_str(&self.server_info_json);
                out.push('}');
            }
            _ => out.push_str(result),
        }
        out.push('}');
        out
    }
}

/// The server capabilities of the handshake era. Nothing that needs a stream
/// (`listChanged`, `subscribe`, `logging`) is advertised.
pub fn capabilities() -> Value {
    json!({"tools": {}, "resources": {}, "prompts": {}, "completions": {}})
}

/// The server capabilities of the stateless era: those of the handshake era
/// and the tasks extension (no settings of its own).
pub fn stateless_capabilities() -> Value {
    let mut capabilities = capabilities();
    if let Value::Object(map) = &mut capabilities {
        map.insert("extensions".into(), json!({era::EXT_TASKS: {}}));
    }
    capabilities
}

/// Server identity in the shape of `version` (2025-03-26 has no `title`).
pub fn server_info(identity: &surface::Identity, version: ProtocolVersion) -> Value {
    let mut info = Map::new();
    info.insert("name".into(), Value::from(identity.name));
    if version != ProtocolVersion::V2025_03_26 {
        info.insert("title".into(), Value::from(identity.title));
    }
    info.insert("version".into(), Value::from(identity.version));
    Value::Object(info)
}

/// The version a 202 is labelled with: nothing is validated on notifications,
/// so this is a best reading of what the client speaks.
fn notification_version(message: &Message, headers: &HeaderMap) -> ProtocolVersion {
    let claims_stateless =
        message.params.get(era::META).and_then(Value::as_object).is_some_and(|env| env.contains_key(era::KEY_VERSION));
    if claims_stateless {
        return ProtocolVersion::V2026_07_28;
    }
    match era::Header::read(headers, era::H_PROTOCOL_VERSION) {
        era::Header::Absent => ProtocolVersion::V2025_03_26,
        era::Header::One(v) => ProtocolVersion::parse(v).unwrap_or(ProtocolVersion::NEWEST),
        _ => ProtocolVersion::NEWEST,
    }
}
