//! The OpenAPI 3.1 document of `/api/v1`, generated from the operations'
//! declarations (`super::operations`) and the schemas (`super::schemas`): every
//! route, its parameters (path, query, `X-Workspace-Id`, `Idempotency-Key`),
//! body, success and error answers, and the bearer scheme with the scopes
//! each operation needs. Served without authentication at
//! `GET /api/v1/openapi.json` (it describes the API and reveals no data),
//! built once per container on first use; `make openapi` writes it to a file.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use super::schemas::{self, RECORDS, Refs, put};
use super::{Needs, Op, operations};
use inbox_domain::{Permission, Scope};

/// The path it is served at, under `/api/v1`.
pub const PATH: &str = "/openapi.json";

/// The document, serialized once per container.
pub fn document() -> &'static str {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    DOCUMENT.get_or_init(|| build().to_string())
}

/// The document as JSON.
pub fn build() -> Value {
    let mut paths = Map::new();
    for op in operations() {
        let item = paths.entry(op.template.as_str().to_owned()).or_insert_with(|| json!({}));
        put(item, &op.method.as_str().to_ascii_lowercase(), operation(op));
    }
    let components: Map<String, Value> =
        RECORDS.iter().map(|record| (record.name().to_owned(), record.schema())).collect();
    json!({
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "Kobana Autonomous Inbox REST API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "E-mails received for a workspace (mostly Brazilian boletos), the boleto data extracted from them, \
    and the signed webhooks that notify the customer's systems. The MCP tools of the same server call these operations. \
    Bearer tokens for this API's audience; `X-Workspace-Id` when the organization has more than one workspace; \
    `Idempotency-Key` on any write. Every error is `{\"error\": {\"code\", \"message\", \"details\"}}`. \
    Every write leaves one record in the workspace's audit trail (`GET /audit`), in the same transaction as its change.",
        },
        "servers": [{"url": "/api/v1"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {
                "type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                "description": "An access token of the trusted authorization server for this API's audience; \
    its `scope` claim lists the scopes each operation names (`security`), and the person's role in the workspace \
    must allow the operation (see each description).",
            }},
            "parameters": {
                "WorkspaceId": {"name": "X-Workspace-Id", "in": "header", "required": false,
                    "description": "The workspace acted on; required when the organization has more than one",
                    "schema": {"type": "string", "minLength": 1, "maxLength": 64}},
                "IdempotencyKey": {"name": "Idempotency-Key", "in": "header", "required": false,
                    "description": "Makes a write safe to repeat: the first answer is kept 24 h and replayed for the same request",
                    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"}},
            },
        },
    })
}

fn operation(op: Op) -> Value {
    let mut parameters: Vec<Value> = vec![json!({"$ref": "#/components/parameters/WorkspaceId"})];
    if op.is_write() {
        parameters.push(json!({"$ref": "#/components/parameters/IdempotencyKey"}));
    }
    for (name, schema) in schemas::path_params(op) {
        parameters.push(json!({"name": name, "in": "path", "required": true, "schema": schema}));
    }
    for (name, schema) in schemas::query_params(op) {
        parameters.push(json!({"name": name, "in": "query", "required": false, "schema": schema}));
    }
    let mut responses = Map::new();
    for (status, shape) in schemas::successes(op) {
        let mut answer = json!({"description": success_text(status),
            "content": {"application/json": {"schema": shape.schema(Refs::Components)}}});
        if status == 202 {
            let location =
                json!({"Location": {"description": "Where to follow the job", "schema": {"type": "string"}}});
            put(&mut answer, "headers", location);
        }
        if status == 302 {
            let location = json!({"Location": {"description": "The short-lived link to the bytes", "schema": {"type": "string", "format": "uri"}}});
            put(&mut answer, "headers", location);
        }
        responses.insert(status.to_string(), answer);
    }
    for status in schemas::error_statuses(op) {
        let mut answer = json!({"description": error_text(status),
            "content": {"application/json": {"schema": Refs::Components.record(schemas::Record::Error)}}});
        if matches!(status, 429 | 503) {
            let retry = json!({"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}});
            put(&mut answer, "headers", retry);
        }
        responses.insert(status.to_string(), answer);
    }
    let (security, who) = security(op);
    let mut operation = json!({
        "operationId": op.name(),
        "summary": op.summary,
        "description": who,
        "tags": [tag(op.template.as_str())],
        "parameters": parameters,
        "responses": responses,
        "security": security,
    });
    if let Some(body) = schemas::body(op) {
        let mut content = json!({"application/json": {"schema": body}});
        if op.accepts_message {
            put(
                &mut content,
                "message/rfc822",
                json!({"schema": {"type": "string", "description": "The raw message as received (RFC 5322, MIME): sender, recipient, subject, Date, Message-ID, the text (HTML-only bodies and forwarded messages included) and the attachments' names, types and sizes are taken from it"}}),
            );
        }
        put(&mut operation, "requestBody", json!({"required": true, "content": content}));
    }
    operation
}

/// The scopes `op` needs (alternatives when any one of several will do) and
/// who may call it, in words.
fn security(op: Op) -> (Value, String) {
    let names = |scopes: &[Scope]| scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>();
    match op.needs {
        Needs::Role(scope, permission) => {
            let role = match permission {
                Permission::Read => "viewer",
                Permission::Operate => "operator",
                Permission::Administer => "admin",
            };
            (json!([{"bearer": [scope.as_str()]}]), format!("Scope `{}`; role {role} or above.", scope.as_str()))
        }
        Needs::Scope(scope) => (
            json!([{"bearer": [scope.as_str()]}]),
            format!("Scope `{}`: the organization's mail pipeline (a machine client, no role).", scope.as_str()),
        ),
        Needs::Handler { any, who } => (json!([{"bearer": names(any)}]), who.to_owned()),
        Needs::Org(scope) => (
            json!([{"bearer": [scope.as_str()]}]),
            format!(
                "Scope `{}`, and the caller holds `org_admin` in the token's organization (organization administration; no workspace header).",
                scope.as_str()
            ),
        ),
        Needs::Job { any } => {
            let alternatives: Vec<Value> = any.iter().map(|s| json!({"bearer": [s.as_str()]})).collect();
            let verb = if op.is_write() { "write scope; role operator" } else { "read scope; role viewer" };
            (Value::Array(alternatives), format!("The job's subject decides: its {verb} or above."))
        }
    }
}

fn tag(template: &str) -> &'static str {
    match template.trim_start_matches('/').split('/').next() {
        Some("inboxes") if template.contains("/emails") => "emails",
        Some("inboxes") => "inboxes",
        Some("emails") => "emails",
        Some("webhooks" | "webhook_deliveries") => "webhooks",
        Some("jobs") => "jobs",
        Some("audit") => "audit",
        Some("org") => "organization",
        _ => "workspace",
    }
}

fn success_text(status: u16) -> &'static str {
    match status {
        201 => "Created",
        202 => "Accepted: the job runs in the background; follow it at Location",
        302 => "Found: the bytes are at Location (a link valid for 5 minutes, no token needed)",
        _ => "OK",
    }
}

fn error_text(status: u16) -> &'static str {
    match status {
        400 => "Malformed input (JSON, types, unknown fields or parameters, cursor) or a workspace to name",
        401 => "No valid bearer token (with WWW-Authenticate)",
        403 => "insufficient_scope (with the step-up challenge) or forbidden (role)",
        404 => "Not found: unknown, malformed or another tenant's id",
        409 => "Conflict with the record's state or with an Idempotency-Key",
        413 => "Body over 1 MiB",
        422 => "Well-formed values that are not acceptable",
        429 => "Rate limited",
        _ => "Storage is slow or down; retry after Retry-After",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_one_operation_and_nothing_else_is() {
        let document = build();
        let mut found = Vec::new();
        for (path, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                found.push((method.to_ascii_uppercase(), path.clone()));
                assert!(operation["responses"].as_object().is_some_and(|r| !r.is_empty()), "{method} {path}");
            }
        }
        found.sort();
        let mut routes: Vec<(String, String)> =
            operations().map(|op| (op.method.as_str().to_owned(), op.template.as_str().to_owned())).collect();
        routes.sort();
        assert_eq!(found, routes);
    }
}
