//! The tools as the MCP endpoint serves them: the rows of `tools`, rendered
//! once per protocol version, filtered per caller, and called by building an
//! `ApiRequest` for the REST route the tool mirrors and handing it to
//! `api::dispatch` in-process, with the verified caller (never the token).
//!
//! `tools/call` runs the stages of the wire reference in order: unknown tool
//! (-32602), missing scope (HTTP 403 with an `insufficient_scope` challenge),
//! missing role (a tool error `forbidden`), invalid arguments (a tool error
//! naming the argument), confirmation of destructive tools, then the call.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value, json};

use super::confirm::{self, Decision};
use super::era::{Era, ProtocolVersion};
use super::jsonrpc::{ErrorCode, RpcError};
use super::methods::invalid_params;
use super::schema;
use super::tools::{ToolRow, rows};
use super::{Call, Outcome};
use crate::api::{self, ApiRequest, Ctx, Route};
use crate::auth::Principal;
use crate::domain::{Permission, Role, Scope};

/// Everything but letters, digits, `-` and `_` is encoded, so an argument is
/// always exactly one path segment (`/`, `%`, `.` included).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_');

/// What a caller needs to see and call a tool.
#[derive(Debug, Clone, Copy)]
enum Needs {
    Route(Scope, Permission),
    /// `jobs_get`: the read scope of the job's subject, checked by the API.
    AnyRead,
}

pub struct Tool {
    pub row: ToolRow,
    needs: Needs,
    rendered: [Value; 3],
}

impl Tool {
    fn visible_to(&self, principal: &Principal, role: Role) -> bool {
        match self.needs {
            Needs::Route(scope, permission) => principal.has(scope) && role.allows(permission),
            Needs::AnyRead => principal.has(Scope::EmailsRead) || principal.has(Scope::WebhooksRead),
        }
    }

    fn render(row: &ToolRow, version: ProtocolVersion) -> Value {
        let mut entry = Map::new();
        entry.insert("name".into(), Value::from(row.name));
        if version != ProtocolVersion::V2025_03_26 {
            entry.insert("title".into(), Value::from(row.title));
        }
        entry.insert("description".into(), Value::from(row.description));
        entry.insert("inputSchema".into(), row.schema.clone());
        entry.insert(
            "annotations".into(),
            json!({
                "title": row.title,
                "readOnlyHint": row.read_only,
                "destructiveHint": row.destructive,
                "idempotentHint": row.idempotent,
                "openWorldHint": false,
            }),
        );
        Value::Object(entry)
    }
}

pub struct Catalogue {
    tools: Vec<Tool>,
}

impl Default for Catalogue {
    fn default() -> Self {
        Self::new()
    }
}

impl Catalogue {
    pub fn new() -> Self {
        let tools = rows()
            .into_iter()
            .map(|row| {
                // The API's own route table says what a tool needs.
                let sample = row.path.replace("{id}", "x").replace("{sender}", "x");
                let needs = match Route::parse(row.method, &sample).ok().and_then(|r| r.requirements()) {
                    Some((scope, permission)) => Needs::Route(scope, permission),
                    None => Needs::AnyRead,
                };
                let rendered = ProtocolVersion::SUPPORTED.map(|v| Tool::render(&row, v));
                Tool { row, needs, rendered }
            })
            .collect();
        Self { tools }
    }

    pub fn find(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.row.name == name)
    }

    pub fn all(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter()
    }

    /// The tools this caller can run, in catalogue order, shaped for `version`.
    pub fn list(&self, version: ProtocolVersion, principal: &Principal, role: Role) -> Vec<Value> {
        let i = version.index();
        self.tools.iter().filter(|t| t.visible_to(principal, role)).map(|t| t.rendered[i].clone()).collect()
    }

    pub async fn call(&self, call: &Call<'_>) -> Result<Outcome, RpcError> {
        let params = &call.message.params;
        let Some(Value::String(name)) = params.get("name") else {
            return Err(invalid_params("tools/call needs params.name as a string"));
        };
        let args = match params.get("arguments") {
            None => Map::new(),
            Some(Value::Object(args)) => args.clone(),
            Some(_) => return Err(invalid_params("tools/call needs params.arguments as an object")),
        };
        let tool = self
            .find(name)
            .ok_or_else(|| invalid_params(format!("Unknown tool: {name}")).with_data(json!({"name": name})))?;
        let version = call.era.version();
        let Some(tenant) = call.tenant else {
            return Err(RpcError::new(200, ErrorCode::INTERNAL_ERROR, "No workspace was resolved for this call"));
        };
        let ctx = Ctx { app: call.app, principal: call.principal, tenant };

        // Stage I: scope (HTTP 403, step-up), then role (tool error).
        match tool.needs {
            Needs::Route(scope, permission) => {
                if !call.principal.has(scope) {
                    return Err(scope_refusal(call, &[scope]));
                }
                if let Err(error) = api::authorize(&ctx, scope, permission) {
                    return Ok(tool_result(version, &error.body(), true));
                }
            }
            Needs::AnyRead => {
                if !call.principal.has(Scope::EmailsRead) && !call.principal.has(Scope::WebhooksRead) {
                    return Err(scope_refusal(call, &[Scope::EmailsRead, Scope::WebhooksRead]));
                }
            }
        }
        if let Err(invalid) = schema::validate(&tool.row.schema, &args) {
            let body = json!({"error": {"code": "invalid_arguments", "message": format!("{}: {}", invalid.field, invalid.message), "details": {"field": invalid.field}}});
            return Ok(tool_result(version, &body, true));
        }

        // Stage J: destructive tools run only on a confirmation of this call.
        if tool.row.destructive {
            match call.era {
                Era::Handshake(_) => return Ok(confirmation_required(tool, version)),
                Era::Stateless if !call.client.form_elicitation => {
                    return Err(RpcError::new(
                        400,
                        ErrorCode::MISSING_CAPABILITY,
                        format!("{} needs the user's confirmation through form elicitation", tool.row.name),
                    )
                    .with_data(json!({"requiredCapabilities": {"elicitation": {"form": {}}}})));
                }
                Era::Stateless => {
                    let row = &tool.row;
                    match confirm::decide(call, &ctx, (row.name, row.title, row.effect), &args).await? {
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

        // Stage K: the REST handler, in-process.
        let (path, query, body) = request_parts(&tool.row, &args);
        let request = ApiRequest { method: tool.row.method, path: &path, query: query.as_deref(), body: &body };
        let response = api::dispatch(&ctx, &request).await;
        if !response.missing_scopes.is_empty() {
            return Err(scope_refusal(call, &response.missing_scopes));
        }
        Ok(tool_result(version, &response.body, !response.is_success()))
    }
}

/// Path with encoded segments, query string, JSON body.
fn request_parts(row: &ToolRow, args: &Map<String, Value>) -> (String, Option<String>, Vec<u8>) {
    let mut path = row.path.to_owned();
    let mut rest = Map::new();
    for (name, value) in args {
        let placeholder = format!("{{{name}}}");
        if path.contains(&placeholder) {
            let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            path = path.replace(&placeholder, &utf8_percent_encode(&text, SEGMENT).to_string());
        } else {
            rest.insert(name.clone(), value.clone());
        }
    }
    if matches!(row.method, "GET" | "DELETE") {
        if rest.is_empty() {
            return (path, None, Vec::new());
        }
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in &rest {
            query.append_pair(name, &value.as_str().map_or_else(|| value.to_string(), str::to_owned));
        }
        (path, Some(query.finish()), Vec::new())
    } else if rest.is_empty() {
        // The route's own validation decides whether an empty object is enough.
        (path, None, b"{}".to_vec())
    } else {
        (path, None, Value::Object(rest).to_string().into_bytes())
    }
}

/// HTTP 403 with the step-up challenge of the MCP resource.
pub fn scope_refusal(call: &Call<'_>, scopes: &[Scope]) -> RpcError {
    let rejection = call.app.mcp_resource.insufficient_scope(scopes);
    let mut error = RpcError::new(403, ErrorCode::FORBIDDEN, rejection.description.clone())
        .with_data(json!({"requiredScopes": scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>()}));
    error.headers = rejection.headers();
    error
}

/// A tool result carrying `body` (the endpoint's JSON) as text and, where the
/// version has it, as `structuredContent`.
pub fn tool_result(version: ProtocolVersion, body: &Value, is_error: bool) -> Outcome {
    let mut result = Map::new();
    result.insert("content".into(), json!([{"type": "text", "text": body.to_string()}]));
    if version != ProtocolVersion::V2025_03_26 && body.is_object() {
        result.insert("structuredContent".into(), body.clone());
    }
    result.insert("isError".into(), Value::Bool(is_error));
    Outcome::Complete(Value::Object(result))
}

fn confirmation_required(tool: &Tool, version: ProtocolVersion) -> Outcome {
    let message = format!(
        "{} needs the user's confirmation, which this client cannot provide (it requires protocol 2026-07-28 with the elicitation capability). Nothing was done. Do not retry.",
        tool.row.name
    );
    let mut result = Map::new();
    let text = json!({"error": {"code": "confirmation_required", "message": message}});
    result.insert("content".into(), json!([{"type": "text", "text": text.to_string()}]));
    if version != ProtocolVersion::V2025_03_26 {
        result.insert("structuredContent".into(), json!({"error": {"code": "confirmation_required"}}));
    }
    result.insert("isError".into(), Value::Bool(true));
    Outcome::Complete(Value::Object(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_in_the_checked_subset_and_every_route_exists() {
        let catalogue = Catalogue::new();
        assert_eq!(catalogue.tools.len(), 21);
        for tool in &catalogue.tools {
            assert!(schema::is_supported(&tool.row.schema), "{}", tool.row.name);
            let sample = tool.row.path.replace("{id}", "x").replace("{sender}", "x");
            assert!(Route::parse(tool.row.method, &sample).is_ok(), "{}", tool.row.name);
            assert_eq!(tool.row.destructive, !tool.row.effect.is_empty(), "{}", tool.row.name);
            for version in ProtocolVersion::SUPPORTED {
                assert_eq!(tool.rendered[version.index()]["inputSchema"]["type"], "object");
            }
        }
    }

    #[test]
    fn arguments_become_one_encoded_segment_each() {
        let catalogue = Catalogue::new();
        let row = &catalogue.find("inbox_senders_remove").unwrap().row;
        let args = json!({"id": "../x", "sender": "@acme.com/a"}).as_object().cloned().unwrap();
        let (path, query, body) = request_parts(row, &args);
        assert_eq!(path, "/inboxes/%2E%2E%2Fx/senders/%40acme%2Ecom%2Fa");
        assert_eq!((query, body), (None, Vec::new()));
        let row = &catalogue.find("inboxes_update").unwrap().row;
        let args = json!({"id": "inb_bills"}).as_object().cloned().unwrap();
        assert_eq!(request_parts(row, &args).2, b"{}".to_vec());
        let row = &catalogue.find("emails_list").unwrap().row;
        let args = json!({"status": "failed", "limit": 5}).as_object().cloned().unwrap();
        assert_eq!(request_parts(row, &args).1.as_deref(), Some("limit=5&status=failed"));
    }
}
