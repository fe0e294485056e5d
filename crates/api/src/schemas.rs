//! One JSON Schema (2020-12) per shape of `/api/v1`, beside the route table:
//! the parameters and body each operation takes, and every body it answers
//! with. Written once and derived everywhere:
//!
//! - the MCP tools' `inputSchema` (path, query and body parameters of their
//!   operation) and `outputSchema` (its success body) — `inbox_mcp::catalogue`;
//! - the OpenAPI 3.1 document of `/api/v1` — `super::openapi`;
//! - the tests, which validate every REST response and every tool's
//!   `structuredContent` against them.
//!
//! Response shapes are strict (`additionalProperties: false`, every field
//! required): a field without a value is `null`, never absent. The only
//! fields that come and go are `secret` (in the answers that show a webhook
//! secret once) and a running job's `lease_until`; `deleted_at` never appears,
//! since deleted records are never returned.

use serde_json::{Map, Value, json};

use super::Op;
use super::route::Param;
use super::shape::output_schema;
use inbox_domain::records::{self, EmailStatus, EventType, InboxStatus};

/// The events a webhook may subscribe to.
pub(super) const SUBSCRIBABLE: [&str; 3] = {
    let [a, b, c] = EventType::SUBSCRIBABLE;
    [a.as_str(), b.as_str(), c.as_str()]
};

// ------------------------------------------------------------------ building

pub(super) fn string(min: u32, max: u32) -> Value {
    json!({"type": "string", "minLength": min, "maxLength": max})
}

/// Sets `key` of an object (anything else is left as it is).
pub(super) fn put(target: &mut Value, key: &str, value: Value) {
    if let Value::Object(map) = target {
        map.insert(key.into(), value);
    }
}

/// `schema` with `description` (before the one it has, if any).
pub(super) fn described(mut schema: Value, description: &str) -> Value {
    let text = match schema.get("description").and_then(Value::as_str) {
        Some(existing) => format!("{description}. {existing}"),
        None => description.to_owned(),
    };
    put(&mut schema, "description", Value::from(text));
    schema
}

pub(super) use super::shape::CALLER_TEXT;

/// A caller's text field of `min..=max` characters (`CALLER_TEXT`).
pub(super) fn caller_string(min: u32, max: u32) -> Value {
    described(string(min, max), CALLER_TEXT)
}

pub(super) fn one_of(values: &[&str]) -> Value {
    json!({"type": "string", "enum": values})
}

fn nullable(schema: Value) -> Value {
    match schema {
        Value::Object(mut map) => {
            match map.remove("type") {
                Some(Value::String(t)) => map.insert("type".into(), json!([t, "null"])),
                Some(other) => map.insert("type".into(), other),
                None => None,
            };
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.push(Value::Null);
            }
            Value::Object(map)
        }
        other => json!({"anyOf": [other, {"type": "null"}]}),
    }
}

fn text() -> Value {
    json!({"type": "string"})
}

pub(super) fn count() -> Value {
    json!({"type": "integer", "minimum": 0})
}

/// A strict object: every property required unless named in `optional`.
fn strict(properties: Value, optional: &[&str]) -> Value {
    let required: Vec<&String> = properties
        .as_object()
        .map(|p| p.keys().filter(|k| !optional.contains(&k.as_str())).collect())
        .unwrap_or_default();
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

// ------------------------------------------------------------- parameters

pub(super) fn id(what: &str) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 64, "description": format!("Id of the {what}")})
}

fn limit() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": 100, "description": "Page size (default 20)"})
}

fn cursor() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 4096, "description": "meta.next_cursor of the previous page, unchanged"})
}

/// The path parameters of `op`, in path order: each one's name and schema.
pub fn path_params(op: Op) -> Vec<(&'static str, Value)> {
    let schema = |param| match param {
        Param::Id => id(op.id_of),
        Param::Sender => sender(),
        Param::Sub => subject(),
        Param::Attachment => attachment_index(),
    };
    op.template.params().map(|param| (param.name(), schema(param))).collect()
}

/// An attachment's position (`n`) in its e-mail's `attachments`, from 0.
fn attachment_index() -> Value {
    json!({"type": "string", "pattern": "^(0|[1-9][0-9]?)$", "maxLength": 2,
           "description": "The attachment's position in the e-mail's attachments, from 0"})
}

/// A token subject (`sub`): a person or a machine client.
pub(super) fn subject() -> Value {
    described(caller_string(1, 255), "The token subject (sub) of the person or machine client")
}

/// An allowed sender, as a path parameter or a body field.
pub(super) fn sender() -> Value {
    described(caller_string(3, 254), "An e-mail address or @domain")
}

/// The query parameters of `op` (lists only: their filters, then `limit`
/// and `cursor`), none required.
pub fn query_params(op: Op) -> Vec<(&'static str, Value)> {
    let Some(filters) = op.list else { return Vec::new() };
    filters.params().chain([("limit", limit()), ("cursor", cursor())]).collect()
}

/// The JSON body `op` takes, if any.
pub fn body(op: Op) -> Option<Value> {
    op.body.map(|body| body.schema())
}

// ---------------------------------------------------------------- records

/// The records the API shows, by name (the OpenAPI components).
pub const RECORDS: [Record; 15] = [
    Record::Organization,
    Record::OrgWorkspace,
    Record::Member,
    Record::Grant,
    Record::Inbox,
    Record::AllowedSender,
    Record::Email,
    Record::Webhook,
    Record::WebhookWithSecret,
    Record::Delivery,
    Record::Job,
    Record::Workspace,
    Record::AuditRecord,
    Record::DataRequest,
    Record::Error,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    Organization,
    OrgWorkspace,
    Member,
    Grant,
    Inbox,
    AllowedSender,
    Email,
    Webhook,
    WebhookWithSecret,
    Delivery,
    Job,
    Workspace,
    AuditRecord,
    DataRequest,
    Error,
}

impl Record {
    pub fn name(self) -> &'static str {
        match self {
            Record::Organization => "Organization",
            Record::OrgWorkspace => "OrgWorkspace",
            Record::Member => "Member",
            Record::Grant => "Grant",
            Record::Inbox => "Inbox",
            Record::AllowedSender => "AllowedSender",
            Record::Email => "Email",
            Record::Webhook => "Webhook",
            Record::WebhookWithSecret => "WebhookWithSecret",
            Record::Delivery => "Delivery",
            Record::Job => "Job",
            Record::Workspace => "Workspace",
            Record::AuditRecord => "AuditRecord",
            Record::DataRequest => "DataRequest",
            Record::Error => "Error",
        }
    }

    /// The record's schema, whole: generated from the type that serialises
    /// it (`shape::output_schema`) where the answer is one; written here for
    /// the three the handlers assemble.
    pub fn schema(self) -> Value {
        match self {
            Record::Organization => strict(json!({"id": text(), "name": text()}), &[]),
            Record::OrgWorkspace => output_schema::<records::Workspace>(),
            Record::Member => output_schema::<records::Member>(),
            Record::Grant => output_schema::<records::Grant>(),
            Record::Inbox => output_schema::<records::Inbox>(),
            Record::AllowedSender => output_schema::<records::AllowedSender>(),
            Record::Email => output_schema::<records::Email>(),
            Record::Webhook => output_schema::<records::Webhook>(),
            Record::WebhookWithSecret => {
                let mut schema = output_schema::<records::Webhook>();
                if let Some(properties) = schema.get_mut("properties") {
                    put(properties, "secret", described(text(), "The signing secret, shown in this answer only"));
                }
                if let Some(Value::Array(required)) = schema.get_mut("required") {
                    required.push(Value::from("secret"));
                }
                schema
            }
            Record::Delivery => output_schema::<records::Delivery>(),
            Record::Job => output_schema::<records::Job>(),
            Record::Workspace => {
                let counts = strict(
                    Value::Object(EmailStatus::NAMES.iter().map(|s| ((*s).to_owned(), count())).collect::<Map<_, _>>()),
                    &[],
                );
                strict(
                    json!({"id": text(), "name": nullable(text()),
                           "content_policy": one_of(inbox_domain::provenance::ContentPolicy::NAMES),
                           "retention_days": described(count(), "Days e-mail content is kept (counted from reception)"),
                           "inboxes": {"type": "array", "items": strict(json!({"id": text(), "slug": text(), "name": text(),
                               "status": one_of(InboxStatus::NAMES), "email_counts": counts.clone()}), &[])},
                           "email_counts": counts, "counts_truncated": {"type": "boolean"},
                           "more_inboxes": {"type": "boolean"}}),
                    &[],
                )
            }
            Record::AuditRecord => output_schema::<records::AuditRecord>(),
            Record::DataRequest => {
                let mut schema = output_schema::<records::DataRequest>();
                if let Some(properties) = schema.get_mut("properties") {
                    let link = strict(
                        json!({
                            "url": described(json!({"type": "string", "format": "uri"}), "The export document's short-lived link"),
                            "expires_at": described(text(), "When the link stops working (RFC 3339)"),
                        }),
                        &[],
                    );
                    put(
                        properties,
                        "document",
                        described(link, "A succeeded export's document (JSON), while it is kept (7 days)"),
                    );
                }
                schema
            }
            Record::Error => strict(
                json!({"error": strict(json!({"code": text(), "message": text(), "details": {"type": "object"}}), &[])}),
                &[],
            ),
        }
    }
}

// -------------------------------------------------------------- responses

/// A success body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `{"data": record}`
    Data(Record),
    /// `{"data": [record], "meta": {"next_cursor": string | null}}`
    Page(Record),
    /// `{"data": {"job": job}}` (202)
    Accepted,
    /// `{"data": {"job": job, "email": {"id", "status"}}}` (202, ingestion)
    AcceptedEmail,
    /// `{"data": {"id", "deleted": true}}`
    Deleted,
    /// `{"data": {"inbox_id", "sender", "deleted": true}}`
    SenderDeleted,
    /// `{"data": {"subject", "deleted": true}}`: a grant taken away.
    Revoked,
    /// `{"data": {"workspace_id", "content_policy", "previous"}}`.
    ContentPolicy,
    /// `{"data": {"workspace_id", "retention_days", "previous"}}`.
    Retention,
    /// `{"data": {"id", "erased": true, "erased_at", "already_erased",
    /// "files", "jobs", "deliveries", "index_entries"}}`.
    Erased,
    /// `{"data": {"url", "expires_at", "name", "content_type", "size",
    /// "sha256"}}` (302, with `Location: url`): a short-lived download link.
    Download,
}

/// How records appear inside a shape: whole (tool schemas) or as references
/// to `#/components/schemas/…` (the OpenAPI document).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refs {
    Inline,
    Components,
}

impl Refs {
    pub fn record(self, record: Record) -> Value {
        match self {
            Refs::Inline => record.schema(),
            Refs::Components => json!({"$ref": format!("#/components/schemas/{}", record.name())}),
        }
    }
}

impl Shape {
    pub fn schema(self, refs: Refs) -> Value {
        let data = |inner: Value| strict(json!({"data": inner}), &[]);
        match self {
            Shape::Data(record) => data(refs.record(record)),
            Shape::Page(record) => strict(
                json!({"data": {"type": "array", "items": refs.record(record)},
                       "meta": strict(json!({"next_cursor": nullable(described(text(), "Pass back as cursor for the next page; null on the last page"))}), &[])}),
                &[],
            ),
            Shape::Accepted => data(strict(json!({"job": refs.record(Record::Job)}), &[])),
            Shape::AcceptedEmail => data(strict(
                json!({"job": refs.record(Record::Job), "email": strict(json!({"id": text(), "status": one_of(EmailStatus::NAMES)}), &[])}),
                &[],
            )),
            Shape::Deleted => data(strict(json!({"id": text(), "deleted": {"const": true}}), &[])),
            Shape::SenderDeleted => {
                data(strict(json!({"inbox_id": text(), "sender": text(), "deleted": {"const": true}}), &[]))
            }
            Shape::Revoked => data(strict(json!({"subject": text(), "deleted": {"const": true}}), &[])),
            Shape::ContentPolicy => {
                let policy = || one_of(inbox_domain::provenance::ContentPolicy::NAMES);
                data(strict(json!({"workspace_id": text(), "content_policy": policy(), "previous": policy()}), &[]))
            }
            Shape::Retention => {
                data(strict(json!({"workspace_id": text(), "retention_days": count(), "previous": count()}), &[]))
            }
            Shape::Erased => data(strict(
                json!({
                    "id": text(), "erased": {"const": true},
                    "erased_at": described(text(), "When the e-mail was erased (RFC 3339)"),
                    "already_erased": described(json!({"type": "boolean"}), "It had been erased before: this call removed only what was left"),
                    "files": described(count(), "Attachment files deleted"),
                    "jobs": described(count(), "Job results that copied its data, emptied"),
                    "deliveries": described(count(), "Stored webhook events that copied its data, emptied"),
                    "index_entries": described(count(), "Identifier index entries removed"),
                }),
                &[],
            )),
            Shape::Download => data(strict(
                json!({
                    "url": described(json!({"type": "string", "format": "uri"}), "The object's short-lived link (also in Location)"),
                    "expires_at": described(text(), "When the link stops working (RFC 3339)"),
                    "name": text(),
                    "content_type": text(),
                    "size": {"type": "integer", "minimum": 0},
                    "sha256": described(text(), "SHA-256 of the bytes, lowercase hex"),
                }),
                &[],
            )),
        }
    }
}

/// The success answers of `op`: status and shape.
pub fn successes(op: Op) -> Vec<(u16, Shape)> {
    op.answers.iter().map(|(status, shape)| (status.as_u16(), *shape)).collect()
}

/// The error statuses `op` can answer with (docs/rest.md's error table, per
/// route); every one carries the `Error` body.
pub fn error_statuses(op: Op) -> Vec<u16> {
    let mut statuses = vec![400, 401, 403];
    // Unknown, foreign or malformed ids; an ingestion for an unregistered inbox.
    if op.template.params().next().is_some() {
        statuses.push(404);
    }
    if op.is_write() {
        // Idempotency-Key conflicts, state conflicts; bodies over 1 MiB.
        statuses.extend([409, 413]);
    }
    // A token subject or a sender in the path is checked like a value (422
    // naming it: a character no caller's text may hold, `api::input::caller_text`).
    let texts = op.template.declares(Param::Sub) || op.template.declares(Param::Sender);
    if op.takes_body() || op.takes_query() || texts {
        statuses.push(422);
    }
    statuses.extend([429, 503]);
    statuses.sort_unstable();
    statuses
}

/// The schema of a body `op` answers with `status`, if documented.
pub fn response(op: Op, status: u16, refs: Refs) -> Option<Value> {
    if let Some((_, shape)) = successes(op).into_iter().find(|(s, _)| *s == status) {
        return Some(shape.schema(refs));
    }
    error_statuses(op).contains(&status).then(|| refs.record(Record::Error))
}

/// What a tool mirroring `op` puts in `structuredContent` when it succeeds:
/// its operation's success bodies (one, or either of two).
pub fn output(op: Op) -> Value {
    let mut shapes: Vec<Value> = Vec::new();
    for (_, shape) in successes(op) {
        let schema = shape.schema(Refs::Inline);
        if !shapes.contains(&schema) {
            shapes.push(schema);
        }
    }
    match <[Value; 1]>::try_from(shapes) {
        Ok([single]) => single,
        Err(shapes) => json!({"type": "object", "anyOf": shapes}),
    }
}
