//! The tools as the MCP endpoint serves them: the rows of `catalogue`, rendered
//! once per protocol version, filtered per caller, and called by handing the
//! API operation each row names (`inbox_api::Op`) its arguments as they are
//! (`inbox_api::Input::tool`: no query string or body bytes in between)
//! through `api::dispatch`, in-process, with the verified caller (never the token).
//!
//! `tools/call` runs its stages (docs/protocol.md: "How a request is answered", I–K) in order: unknown tool
//! (-32602), missing scope (HTTP 403 with an `insufficient_scope` challenge),
//! missing role (a tool error `forbidden`), invalid arguments (a tool error
//! naming the argument), confirmation of destructive tools, then the call.
//! The scope and role come from the operation's declaration and are checked once,
//! by `api::authorize`, whose permit the call then needs. A long tool's job
//! is answered as a task when the request declares the tasks extension
//! (`super::tasks`).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::catalogue::{self, ToolRow, rows};
use super::confirm::{self, Decision};
use super::era::{Era, ProtocolVersion};
use super::jsonrpc::RpcError;
use super::narrow::Narrowing;
use super::results::{step_up, tool_result, unavailable};
use super::tasks;
use super::{Call, Outcome};
use inbox_api::error::ApiError;
use inbox_api::shape::{Checker, Place, Violation};
use inbox_api::{self as api, Input, Needs, Param, Route};
use inbox_auth::Principal;
use inbox_domain::{Role, Tenant};

pub struct Tool {
    pub row: ToolRow,
    /// The arguments it takes (`catalogue::arguments`).
    pub schema: Value,
    /// `schema`, compiled on the tool's first call.
    checker: Checker,
    /// The listing entry per protocol version, serialized once: what
    /// `tools/list` is assembled from.
    serialized: [String; 3],
    /// Its 2026-07-28 entry for a client that draws views (`super::apps`):
    /// the view it links to, and the pending confirmation among its results.
    serialized_views: String,
}

impl Tool {
    /// What a violation of the arguments is called: a path parameter's is
    /// the arguments' own (REST has no such answer: a path is found or
    /// not); the others are the query's or the body's, as REST names them.
    fn place(&self, violation: &Violation) -> Place {
        let root = violation.field.split(['.', '[']).next().unwrap_or_default();
        let op = self.row.op;
        if !violation.value_rule || Param::named(root).is_some_and(|p| op.template.declares(p)) {
            Place::ArgumentsShape
        } else if op.method.args_are_query() {
            Place::QueryArguments
        } else {
            Place::BodyArguments
        }
    }

    fn needs(&self) -> Needs {
        self.row.op.needs
    }

    fn visible_to(&self, principal: &Principal, role: Role) -> bool {
        match self.needs() {
            Needs::Role(scope, permission) => principal.has(scope) && role.allows(permission),
            Needs::Scope(scope) | Needs::Org(scope) => principal.has(scope),
            Needs::Handler { any, .. } => any.iter().any(|s| principal.has(*s)),
            Needs::Job { any } => any.iter().any(|s| principal.has_for_jobs(*s)),
        }
    }

    fn render(row: &ToolRow, schema: &Value, version: ProtocolVersion) -> Value {
        let mut entry = Map::new();
        entry.insert("name".into(), Value::from(row.name));
        if version != ProtocolVersion::V2025_03_26 {
            entry.insert("title".into(), Value::from(row.title));
        }
        entry.insert("description".into(), Value::from(row.description));
        entry.insert("inputSchema".into(), schema.clone());
        // 2025-03-26 has no structured results; the later versions describe them.
        if version != ProtocolVersion::V2025_03_26 {
            entry.insert("outputSchema".into(), catalogue::output(row));
        }
        entry.insert(
            "annotations".into(),
            json!({
                "title": row.title,
                "readOnlyHint": row.read_only(),
                "destructiveHint": row.destructive,
                "idempotentHint": row.idempotent,
                "openWorldHint": false,
            }),
        );
        Value::Object(entry)
    }

    /// `render` for 2026-07-28 and a client that draws views.
    fn render_views(row: &ToolRow, schema: &Value) -> Value {
        let mut entry = Tool::render(row, schema, ProtocolVersion::V2026_07_28);
        if let (Some(meta), Value::Object(fields)) = (super::apps::tool_meta(row.name, row.destructive), &mut entry) {
            fields.insert("_meta".into(), meta);
        }
        if let Value::Object(fields) = &mut entry {
            fields.insert("outputSchema".into(), super::apps::output(row));
        }
        entry
    }
}

pub struct Tools {
    tools: Vec<Tool>,
    /// Each tool's place in `tools`, by name: a call names its tool, and the
    /// pipeline looks it up three times (its label, whether it writes, the
    /// call itself); one hash and a probe touch a few cache lines where a
    /// scan touched two per tool, on a request whose caches start cold.
    by_name: HashMap<&'static str, usize>,
}

impl Default for Tools {
    fn default() -> Self {
        Self::new()
    }
}

impl Tools {
    pub fn new() -> Self {
        let tools = rows()
            .into_iter()
            .map(|row| {
                let schema = catalogue::arguments(row.op);
                let serialized = ProtocolVersion::SUPPORTED.map(|v| Tool::render(&row, &schema, v).to_string());
                let serialized_views = Tool::render_views(&row, &schema).to_string();
                Tool { row, schema, checker: Checker::new(), serialized, serialized_views }
            })
            .collect::<Vec<Tool>>();
        let by_name = tools.iter().enumerate().map(|(i, tool)| (tool.row.name, i)).collect();
        Self { tools, by_name }
    }

    pub fn find(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).and_then(|&i| self.tools.get(i))
    }

    pub fn all(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter()
    }

    /// The `tools/list` result object for this caller, serialized from the
    /// pieces rendered at start-up (no JSON tree is built per request).
    /// With `views` (a 2026-07-28 client that draws them), each tool's
    /// entry links its view, and the confirmation view's two app-only tools
    /// follow when any listed tool asks for confirmation.
    pub fn list_serialized(
        &self,
        version: ProtocolVersion,
        principal: &Principal,
        role: Role,
        narrowing: Narrowing,
        views: bool,
    ) -> String {
        let mut out = String::with_capacity(16 * 1024);
        out.push_str("{\"tools\":[");
        let listed = self.tools.iter().filter(|t| narrowing.allows(t.row.op) && t.visible_to(principal, role));
        let mut confirms = false;
        for (i, tool) in listed.enumerate() {
            if i > 0 {
                out.push(',');
            }
            if views {
                confirms |= tool.row.destructive;
                out.push_str(&tool.serialized_views);
            } else {
                out.push_str(version.pick::<String>(&tool.serialized));
            }
        }
        if confirms {
            for tool in super::apps::app_tools() {
                out.push(',');
                out.push_str(&inbox_support::json::text(&tool));
            }
        }
        out.push_str("]}");
        out
    }

    pub async fn call(&self, call: &Call<'_>, tenant: &Tenant) -> Result<Outcome, RpcError> {
        let (name, args) = name_and_arguments(&call.message.params)?;
        // The confirmation view's answers: tools of clients that draw views only.
        if call.client.ui && matches!(name, super::apps::APPROVE | super::apps::DECLINE) {
            return Box::pin(self.answer_from_view(call, tenant, name == super::apps::APPROVE)).await;
        }
        self.call_tool(call, tenant, name, args, false).await
    }

    /// An answer from the confirmation view: the approved call runs as if
    /// confirmed (every check but the confirmation made again), a refusal
    /// runs nothing.
    async fn answer_from_view(&self, call: &Call<'_>, tenant: &Tenant, approve: bool) -> Result<Outcome, RpcError> {
        let ctx = call.api_ctx(tenant, if approve { super::apps::APPROVE } else { super::apps::DECLINE });
        match super::apps::answer(call, &ctx, tenant, approve).await? {
            super::apps::Answered::Run { tool, args } => self.call_tool(call, tenant, &tool, args, true).await,
            super::apps::Answered::Declined => {
                let body = json!({"result": "not_confirmed", "message": "Nothing was done: the user declined."});
                Ok(tool_result(call.era.version(), &body, false))
            }
        }
    }

    /// Stages I–K for tool `name` with `args`; `confirmed` when the person
    /// already approved this very call (through the confirmation view).
    async fn call_tool(
        &self,
        call: &Call<'_>,
        tenant: &Tenant,
        name: &str,
        args: Map<String, Value>,
        confirmed: bool,
    ) -> Result<Outcome, RpcError> {
        // A tool the connection narrowed away does not exist for it.
        let tool = self.find(name).filter(|t| call.narrowing.allows(t.row.op)).ok_or_else(|| {
            RpcError::invalid_params(format!("Unknown tool: {name}")).with_data(json!({"name": name}))
        })?;
        let version = call.era.version();
        let ctx = call.api_ctx(tenant, tool.row.name);

        // Stage I: scope (HTTP 403, step-up), then role (tool error), from the declaration.
        let hopeless = match tool.needs() {
            Needs::Handler { any, .. } => Some(any).filter(|any| !any.iter().any(|s| call.principal.has(*s))),
            Needs::Job { any } => Some(any).filter(|any| !any.iter().any(|s| call.principal.has_for_jobs(*s))),
            Needs::Role(..) | Needs::Scope(_) | Needs::Org(_) => None,
        };
        if let Some(any) = hopeless {
            return Err(step_up(call, any));
        }
        let permit = match api::authorize(&ctx, tool.row.op) {
            Ok(permit) => permit,
            Err(ApiError::InsufficientScope { scopes }) => return Err(step_up(call, &scopes)),
            Err(error) => return Ok(tool_result(version, &error.body(), true)),
        };
        // Text the handler would refuse is refused before any confirmation,
        // with the handler's own error: a form never quotes it. Then the
        // arguments against the tool's input schema, by the checker that
        // checks a REST body against the same types' schema, in the same
        // order: a value rule broken here is the REST answer's code
        // (`api::shape`).
        if let Err(refused) = api::input::caller_arguments(&args) {
            return Ok(tool_result(version, &refused.body(), true));
        }
        let args = Value::Object(args);
        if let Some(violation) = tool.checker.violation(&|| tool.schema.clone(), &args) {
            return Ok(tool_result(version, &violation.error(tool.place(&violation)).body(), true));
        }
        let Value::Object(args) = args else { return Err(RpcError::internal("arguments are an object")) };

        // Stage J: destructive calls run only on a confirmation of this call.
        // A client that draws views is shown the confirmation view, unless it
        // is answering the form (it brings a state or answers).
        let answering = ["requestState", "inputResponses"].iter().any(|k| call.message.params.contains_key(*k));
        if !confirmed && tool.row.needs_confirmation(&args) {
            match call.era {
                Era::Handshake(_) => return Ok(confirmation_required(tool, version)),
                Era::Stateless if call.client.ui && !answering => {
                    let row = &tool.row;
                    let facts =
                        if row.name.starts_with("emails_") { confirm::email_facts(&ctx, &args).await } else { None };
                    return super::apps::pending(
                        call,
                        tenant,
                        (row.name, row.title, row.effect),
                        &args,
                        facts.as_deref(),
                    );
                }
                Era::Stateless if !call.client.form_elicitation => {
                    return Err(RpcError::missing_capability(format!(
                        "{} needs the user's confirmation through form elicitation",
                        tool.row.name
                    ))
                    .with_data(json!({"requiredCapabilities": {"elicitation": {"form": {}}}})));
                }
                Era::Stateless => {
                    let row = &tool.row;
                    // Boxed: the confirmation's table calls would size every
                    // tool call's future, the reads' too.
                    let decided = Box::pin(confirm::decide(call, &ctx, (row.name, row.title, row.effect), &args));
                    match decided.await? {
                        Decision::Ask(interim) => return Ok(Outcome::InputRequired(interim)),
                        Decision::NotConfirmed => {
                            let body = json!({"result": "not_confirmed", "message": "Nothing was done: the user did not confirm."});
                            return Ok(tool_result(version, &body, false));
                        }
                        Decision::Run => {}
                    }
                }
            }
        }

        // Stage K: the REST handler, in-process. A job it enqueued is a task
        // for a client that declared the tasks extension on this request
        // (after the confirmation above: the task exists only once it runs).
        let (route, rest) = request_parts(tool.row.op, args);
        match api::dispatch(&ctx, permit, &Input::tool(&route, &rest)).await {
            Ok(response) if call.client.tasks && tool.row.op.enqueues() && response.status == 202 => {
                Ok(match tasks::created(&response) {
                    Some(task) => Outcome::Task(task),
                    None => tool_result(version, &response.body, false),
                })
            }
            Ok(response) => {
                let is_error = !response.is_success();
                Ok(match super::untrusted::tool_result(&response.body, call.content_policy(tenant)) {
                    Some(rewritten) => super::results::fenced_result(version, &rewritten, is_error),
                    None => tool_result(version, &response.body, is_error),
                })
            }
            Err(ApiError::InsufficientScope { scopes }) => Err(step_up(call, &scopes)),
            // Storage trouble is the server's, not the tool's: 503 with Retry-After.
            Err(ApiError::Unavailable) => Err(unavailable()),
            Err(error) => Ok(tool_result(version, &error.body(), true)),
        }
    }
}

/// A `tools/call`'s tool name and arguments (an absent `arguments` is none),
/// or the -32602 of a malformed one: every catalogue reads them this way.
pub fn name_and_arguments(params: &Map<String, Value>) -> Result<(&str, Map<String, Value>), RpcError> {
    let Some(Value::String(name)) = params.get("name") else {
        return Err(RpcError::invalid_params("tools/call needs params.name as a string"));
    };
    let args = match params.get("arguments") {
        None => Map::new(),
        Some(Value::Object(args)) => args.clone(),
        Some(_) => return Err(RpcError::invalid_params("tools/call needs params.arguments as an object")),
    };
    Ok((name, args))
}

/// The operation's route (the arguments named like its path parameters, as
/// they are: never parsed as a path) and the rest of the arguments.
fn request_parts(op: api::Op, args: Map<String, Value>) -> (Route, Map<String, Value>) {
    let text = |value: &Value| value.as_str().map_or_else(|| value.to_string(), str::to_owned);
    let mut route = Route::new(op);
    let mut rest = Map::new();
    for (name, value) in args {
        // Every parameter the route's template names goes into the path,
        // whichever it is; the other arguments stay arguments.
        match Param::named(&name).and_then(|param| route.param_mut(param)) {
            Some(slot) => *slot = text(&value),
            None => {
                rest.insert(name, value);
            }
        }
    }
    (route, rest)
}

fn confirmation_required(tool: &Tool, version: ProtocolVersion) -> Outcome {
    let message = format!(
        "{} needs the user's confirmation, which this client cannot provide (it requires protocol 2026-07-28 with the elicitation capability). Nothing was done. Do not retry.",
        tool.row.name
    );
    // The same body as text and, where the version has it, as structured
    // content, like every other tool result.
    tool_result(version, &json!({"error": {"code": "confirmation_required", "message": message}}), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each tool is found by its own name (no two share one), and a name
    /// no tool has, or one that differs in case only, finds nothing.
    #[test]
    fn a_tool_is_found_by_its_name_alone() {
        let tools = Tools::new();
        for (i, tool) in tools.tools.iter().enumerate() {
            let found = tools.find(tool.row.name).map(|t| std::ptr::eq(t, &tools.tools[i]));
            assert_eq!(found, Some(true), "{}", tool.row.name);
        }
        assert_eq!(tools.by_name.len(), tools.tools.len());
        assert!(tools.find("emails_get").is_some());
        for unknown in ["", "EMAILS_GET", "emails_get ", "emails"] {
            assert!(tools.find(unknown).is_none(), "{unknown:?}");
        }
    }

    #[test]
    fn every_schema_compiles_and_names_its_operations_parameters() {
        let tools = Tools::new();
        assert_eq!(tools.tools.len(), 25);
        for tool in &tools.tools {
            assert!(api::shape::compiles(&tool.schema), "{}", tool.row.name);
            let template = tool.row.op.template;
            let required = |p: &str| tool.schema["required"].as_array().is_some_and(|r| r.contains(&json!(p)));
            // Every path parameter is a required argument; `id` is never a body field.
            assert_eq!(template.declares(Param::Id), required("id"), "{} id", tool.row.name);
            assert!(template.params().all(|p| required(p.name())), "{} {}", tool.row.name, template);
            assert_eq!(tool.row.destructive, !tool.row.effect.is_empty(), "{}", tool.row.name);
            for version in ProtocolVersion::SUPPORTED {
                let entry: Value = serde_json::from_str(version.pick::<String>(&tool.serialized)).unwrap();
                assert_eq!(entry["inputSchema"]["type"], "object");
            }
        }
    }

    #[test]
    fn path_arguments_are_taken_as_they_are_and_the_rest_stay_arguments() {
        let tools = Tools::new();
        let row = &tools.find("inbox_senders_remove").unwrap().row;
        let args = json!({"id": "../x", "sender": "@acme.com/a"}).as_object().cloned().unwrap();
        let (route, rest) = request_parts(row.op, args);
        let expected = Route::new(&api::senders::REMOVE).with(Param::Id, "../x").unwrap();
        assert_eq!(route, expected.with(Param::Sender, "@acme.com/a").unwrap());
        assert!(rest.is_empty());
        let row = &tools.find("emails_list").unwrap().row;
        let args = json!({"status": "failed", "limit": 5}).as_object().cloned().unwrap();
        let (route, rest) = request_parts(row.op, args.clone());
        assert_eq!((route, rest), (Route::new(&api::emails::LIST), args));
    }

    /// A route with `{sub}` (`PUT /org/workspaces/{id}/members/{sub}`): the
    /// subject goes into the path, as validated, never into the body; a
    /// `sender` argument, which that route does not name, stays an argument.
    #[test]
    fn every_parameter_the_route_names_goes_into_the_path_sub_included() {
        let args = json!({"id": "ws_main", "sub": "usr_new", "role": "viewer", "sender": "a@b.example"});
        let (route, rest) = request_parts(&api::org::MEMBER_SET, args.as_object().cloned().unwrap());
        let expected = Route::new(&api::org::MEMBER_SET).with(Param::Id, "ws_main").unwrap();
        assert_eq!(route, expected.with(Param::Sub, "usr_new").unwrap());
        assert_eq!(route.param(Param::Sender), "");
        assert_eq!(Value::Object(rest), json!({"role": "viewer", "sender": "a@b.example"}));
        // And the other way round: `sub` is an argument where the route has no `{sub}`.
        let args = json!({"id": "inb_1", "sender": "@acme.com", "sub": "usr_x"});
        let (route, rest) = request_parts(&api::senders::REMOVE, args.as_object().cloned().unwrap());
        let expected = Route::new(&api::senders::REMOVE).with(Param::Id, "inb_1").unwrap();
        assert_eq!(route, expected.with(Param::Sender, "@acme.com").unwrap());
        assert_eq!(Value::Object(rest), json!({"sub": "usr_x"}));
    }
}
