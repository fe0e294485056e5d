//! The audit trail: who changed what in a workspace, through which surface
//! and client, and how it ended; and its reading (`GET /audit`,
//! `GET /audit/{id}`, workspace admins with `audit:read`).
//!
//! Every call of a changing operation leaves exactly one record, made here
//! and written by the store:
//! - a change writes its record in the change's own transaction
//!   (`Ctx::audit` hands the handler the record for its store call), so a
//!   change without its record, or a record without its change, cannot exist;
//! - a call that changed nothing writes its record alone, after the fact
//!   (`finish`), with `changed: false`: one the operation refused (404, 409,
//!   422, with the error code), or one with nothing to do (an allowed sender
//!   added again, a job cancelled again). Best effort: if that write fails it
//!   is logged, and the answer stands. A refusal is recorded only for a
//!   caller who could have made the change (`Ctx::may_attempt`);
//! - refusals before the operation runs (authentication, scope, role, rate
//!   limit, a malformed request: 400, or a tool's arguments that do not fit its
//!   schema), storage failures (503) and replays of an `Idempotency-Key` leave
//!   none; a declined MCP confirmation never reaches the operation.
//!
//! The record never holds the arguments (an e-mail's body, a secret): only
//! `arguments_digest`, the SHA-256 of `[operation, id, other, body]` (`other`
//! the path's `{sender}` or `{sub}`) as compact JSON with the body's object
//! keys sorted (an absent body is `{}`), the same for a REST call and the
//! tool call with the same arguments.

use http::StatusCode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use aws_lc_rs::digest::{SHA256, digest};
use serde_json::{Value, json};

use super::error::ApiError;
use super::input::invalid_parameter;
use super::operation::{Filters, Operation, Tool, Verb, filters, operation};
use super::page::page_request;
use super::schemas::{Record, Shape, caller_string, described, id, string};
use super::{ApiResponse, Ctx, Input, Needs, Op, Param};
use inbox_domain::clock::{format, parse_instant};
use inbox_domain::ids::{Kind, is_id};
use inbox_domain::records::{AuditRecord, ClientInfo, Surface};
use inbox_domain::{Permission, Scope};
use inbox_store::{Audit, AuditFilter, StoreError};

/// Where a call comes from, as the trail records it.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    pub request_id: &'a str,
    pub surface: Surface,
    /// The MCP client, as it named itself on this request.
    pub client: Option<&'a ClientInfo>,
    /// MCP: the tool (or method) that made the call. REST: `None`, the
    /// route says.
    pub via: Option<&'a str>,
}

/// One call of a changing operation, while `dispatch` runs it.
pub(crate) struct Change<'a> {
    input: &'a Input<'a>,
    /// Made with the first record: a call refused before it has none.
    digest: OnceLock<String>,
    /// Set by the store when a record of this call was written.
    committed: AtomicBool,
}

impl<'a> Change<'a> {
    pub(crate) fn new(input: &'a Input<'a>) -> Change<'a> {
        Change { input, digest: OnceLock::new(), committed: AtomicBool::new(false) }
    }

    fn digest(&self) -> String {
        self.digest.get_or_init(|| arguments_digest(self.input)).clone()
    }

    /// The path's id when it is a well-formed record id (the text is the caller's).
    fn target(&self) -> Option<String> {
        let id = self.input.id();
        is_record_id(id).then(|| id.to_owned())
    }
}

/// Whether `s` is an id of a kind of record a change can be about.
fn is_record_id(s: &str) -> bool {
    TARGETS.iter().any(|kind| is_id(*kind, s))
}

/// Body fields left out of the arguments' digest, by operation.
const SECRET_FIELDS: [(&str, &str); 1] = [("data_request_create", "identifier")];

/// `sha256:` and the hex SHA-256 of `[operation, id, other, body]`: `id`
/// the path's `{id}` and `other` its other parameter (`{sender}` or
/// `{sub}`), each `""` when the path has none. Digests are stored in the
/// audit records, so this material keeps the shape the stored ones were
/// made with: the same call digests the same, before and after.
fn arguments_digest(input: &Input<'_>) -> String {
    let route = input.route;
    let other = route.params().find(|(param, _)| *param != Param::Id).map_or("", |(_, value)| value);
    // `serde_json::Map` keeps keys sorted (no `preserve_order`): canonical.
    let mut body = input.body_value();
    // A field whose value must not be recoverable from a digest kept 400
    // days (a CPF has about 10⁹ values: a plain digest of it is a lookup away).
    for (op, field) in SECRET_FIELDS {
        if route.op().name() != op {
            continue;
        }
        match &mut body {
            Value::Object(fields) if fields.contains_key(field) => {
                fields.insert(field.to_owned(), Value::from("(not kept)"));
            }
            Value::Object(_) => {}
            // A body that did not read as an object may hold it anywhere.
            other => *other = Value::from("(not kept)"),
        }
    }
    let material = json!([route.op().name(), route.id(), other, body]).to_string();
    let hex = inbox_domain::hex(digest(&SHA256, material.as_bytes()).as_ref());
    format!("sha256:{hex}")
}

/// `aud_`, the time as 17 digits (`YYYYMMDDhhmmssmmm`), 16 random characters.
fn new_audit_id(at: &str) -> String {
    let random = inbox_support::sys::new_id(Kind::Audit);
    let tail = random.trim_start_matches("aud_").get(..16).unwrap_or_default();
    format!("{}{tail}", id_at(at))
}

/// The start of every audit id of the instant `at`: `aud_` and its 17 digits.
fn id_at(at: &str) -> String {
    let digits: String = at.chars().filter(char::is_ascii_digit).collect();
    format!("aud_{digits}")
}

/// A change asked for outside `dispatch`, which would go unrecorded: refused
/// (a defect, never a client's doing).
#[derive(Debug)]
pub struct Unrecorded;

impl From<Unrecorded> for ApiError {
    fn from(_: Unrecorded) -> Self {
        ApiError::Unavailable
    }
}

impl From<Unrecorded> for StoreError {
    fn from(_: Unrecorded) -> Self {
        StoreError::Corrupt("a change without its audit record".into())
    }
}

impl Ctx<'_> {
    /// The record of this call's change, for the store call that makes it:
    /// `target_id` is the record changed, `status` the answer about to be given.
    pub fn audit(&self, target_id: &str, status: StatusCode) -> Result<Audit<'_>, Unrecorded> {
        let Some(change) = self.change else {
            // Only `dispatch` runs changing operations, and it always says what runs.
            tracing::error!("a change outside dispatch");
            return Err(Unrecorded);
        };
        let record = self.record(change, Some(target_id.to_owned()), status, None, true);
        Ok(Audit::new(record, &change.committed))
    }

    fn record(
        &self,
        change: &Change<'_>,
        target_id: Option<String>,
        status: StatusCode,
        error: Option<&str>,
        changed: bool,
    ) -> AuditRecord {
        let at = inbox_support::sys::now_string();
        let op = change.input.route.op();
        let action = match (self.origin.surface, self.origin.via) {
            (Surface::Mcp | Surface::Cli, Some(via)) => via.to_owned(),
            _ => format!("{} {}", op.method.as_str(), op.template),
        };
        AuditRecord {
            id: inbox_support::sys::sharded(new_audit_id(&at), &self.tenant.shards),
            at,
            request_id: self.origin.request_id.to_owned(),
            organization: self.tenant.org.to_string(),
            workspace: self.tenant.workspace.to_string(),
            subject: self.principal.sub.clone(),
            client: self.origin.client.cloned(),
            surface: self.origin.surface,
            action,
            operation: op.name().to_owned(),
            target_id,
            arguments_digest: change.digest(),
            status: status.as_u16(),
            error_code: error.map(str::to_owned),
            changed,
        }
    }

    /// Whether this caller could have made the change: the route table's
    /// requirement, or, for an operation the handler authorizes from the
    /// data (cancelling a job), one of its write scopes and the operator
    /// role. A refusal is recorded only for such a caller, so one who may
    /// change nothing cannot write into the trail (a viewer cancelling
    /// made-up job ids gets 404s, and no records).
    fn may_attempt(&self, op: Op) -> bool {
        match op.needs {
            Needs::Job { any } => {
                any.iter().any(|s| self.principal.has_for_jobs(*s)) && self.tenant.role.allows(Permission::Operate)
            }
            Needs::Handler { any, .. } => {
                any.iter().any(|s| self.principal.has(*s)) && self.tenant.role.allows(Permission::Operate)
            }
            // `dispatch` runs only what `authorize` let through.
            Needs::Role(..) | Needs::Scope(_) | Needs::Org(_) => true,
        }
    }
}

/// After a changing operation ran: the record of a call that changed nothing
/// (refused by the operation, or nothing to do), written alone. A record that
/// cannot be written is logged; the caller's answer stands.
pub(crate) async fn finish(ctx: &Ctx<'_>, change: &Change<'_>, outcome: &Result<ApiResponse, ApiError>) {
    let op = change.input.route.op();
    if change.committed.load(Ordering::Relaxed) || !ctx.may_attempt(op) {
        return;
    }
    let (status, error) = match outcome {
        Ok(response) => {
            if !op.may_change_nothing {
                // Only these can succeed with nothing to do; any other success
                // without its record is a change written without one (a defect).
                tracing::error!(operation = op.name(), "a change answered without its audit record");
            }
            (response.status, None)
        }
        Err(error @ ApiError::NotFound { .. }) => (error.status(), Some("not_found")),
        Err(error @ ApiError::Conflict { code, .. }) => (error.status(), Some(*code)),
        Err(error @ ApiError::Unprocessable { .. }) => (error.status(), Some("validation_failed")),
        Err(_) => return,
    };
    let record = ctx.record(change, change.target(), status, error, false);
    if let Err(failure) = ctx.store.put_audit(ctx.tenant, &record).await {
        tracing::error!(error = %failure, operation = op.name(), "the audit record of an unchanged call was not written");
    }
}

/// `GET /audit`: newest first; filters `subject`, `target_id`, `since`, `until`.
/// The trail's filters (this list and the organization's, `super::org::AUDIT`).
pub(super) const FILTERS: Filters = filters!(
    "subject" => described(caller_string(1, 255), "Only changes by this token subject"),
    "target_id" => id("record changed"),
    "since" => described(string(10, 40), "RFC 3339 time, inclusive, or a date (its midnight UTC)"),
    "until" => described(string(10, 40), "RFC 3339 time, inclusive, or a date (its midnight UTC)"),
);

pub static LIST: Operation = Operation {
    summary: "The workspace's audit trail, newest first (workspace admins)",
    list: Some(FILTERS),
    answers: &[(StatusCode::OK, Shape::Page(Record::AuditRecord))],
    tool: Some(Tool::read(
        "audit_list",
        "List audit trail",
        "Who changed what in this workspace, newest first: each change through the API or these tools, with its subject, client, tool or route, target id, a digest of its arguments and its status. Filter by subject, target_id, since, until. Workspace admins only. Paginated: pass meta.next_cursor back as cursor.",
    )),
    ..operation(
        "audit_list",
        Verb::Get,
        "/audit",
        Needs::Role(Scope::AuditRead, Permission::Administer),
        |ctx, input| Box::pin(list(ctx, input)),
    )
};

/// `GET /audit/{id}`.
pub static GET: Operation = Operation {
    summary: "One audit record (workspace admins)",
    id_of: "audit record",
    answers: &[(StatusCode::OK, Shape::Data(Record::AuditRecord))],
    ..operation(
        "audit_get",
        Verb::Get,
        "/audit/{id}",
        Needs::Role(Scope::AuditRead, Permission::Administer),
        |ctx, input| Box::pin(get(ctx, input.id())),
    )
};

/// The operations of this module, in catalogue order.
pub static OPERATIONS: &[Op] = &[&LIST, &GET];

pub(super) async fn list(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let params = input.params()?;
    let mut filter = AuditFilter::default();
    if let Some(subject) = params.get("subject") {
        super::input::caller_query("subject", subject)?;
        if subject.is_empty() || subject.len() > 255 {
            return Err(invalid_parameter("subject", "must be a token subject (1 to 255 characters)"));
        }
        filter.subject = Some(subject.clone());
    }
    if let Some(target) = params.get("target_id") {
        if !is_record_id(target) {
            return Err(invalid_parameter(
                "target_id",
                "must be a record id (inb_…, eml_…, whk_…, dlv_…, job_…, ws_…)",
            ));
        }
        filter.target_id = Some(target.clone());
    }
    let mut bounds = [None, None];
    for (slot, name) in bounds.iter_mut().zip(["since", "until"]) {
        if let Some(raw) = params.get(name) {
            let instant = parse_instant(raw)
                .ok_or_else(|| invalid_parameter(name, "must be a date (YYYY-MM-DD) or an RFC 3339 timestamp"))?;
            *slot = Some(format(instant));
        }
    }
    let [since, until] = bounds;
    if let (Some(since), Some(until)) = (&since, &until)
        && since > until
    {
        return Err(invalid_parameter("since", "must not be later than until"));
    }
    filter.since = since.as_deref().map(id_at);
    filter.until = until.as_deref().map(id_at);
    let page = page_request(ctx.secrets, ctx.tenant, "audit", &params)?;
    let found = ctx.store.list_audit(ctx.tenant, &filter, page.limit, page.start.clone()).await?;
    let next = page.next_cursor(ctx.secrets, ctx.tenant, found.next);
    Ok(ApiResponse::ok(StatusCode::OK, json!({"data": found.items, "meta": {"next_cursor": next}})))
}

/// The kinds of record a change can be about.
const TARGETS: [Kind; 6] = [Kind::Inbox, Kind::Email, Kind::Webhook, Kind::Delivery, Kind::Job, Kind::Workspace];

async fn get(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let what = "Audit record";
    let record = super::fetch(Kind::Audit, what, id, async || ctx.store.get_audit(ctx.tenant, id).await).await?;
    ApiResponse::data(StatusCode::OK, &record)
}

#[cfg(test)]
mod tests {
    use super::super::Route;
    use super::*;

    #[test]
    fn the_digest_ignores_key_order_and_an_absent_body_and_is_the_same_from_a_tool() {
        let route = Route::new(&super::super::inboxes::UPSERT);
        let digest = |body: &[u8]| arguments_digest(&Input::rest(&route, None, body));
        let a = digest(br#"{"slug":"bills","name":"Bills"}"#);
        assert_eq!(a, digest(br#"{ "name": "Bills", "slug": "bills" }"#));
        assert!(a.starts_with("sha256:") && a.len() == 7 + 64, "{a}");
        assert_ne!(a, digest(br#"{"slug":"bills","name":"Bill"}"#));
        let args = json!({"name": "Bills", "slug": "bills"}).as_object().cloned().unwrap();
        assert_eq!(a, arguments_digest(&Input::tool(&route, &args)));
        let rotate = Route::new(&super::super::webhooks::ROTATE_SECRET).with(Param::Id, "whk_1").unwrap();
        let other = Route::new(&super::super::webhooks::ROTATE_SECRET).with(Param::Id, "whk_2").unwrap();
        let empty = serde_json::Map::new();
        assert_eq!(arguments_digest(&Input::bare(&rotate)), arguments_digest(&Input::rest(&rotate, None, b"{}")));
        assert_eq!(arguments_digest(&Input::bare(&rotate)), arguments_digest(&Input::tool(&rotate, &empty)));
        assert_ne!(arguments_digest(&Input::bare(&rotate)), arguments_digest(&Input::bare(&other)));
    }

    #[test]
    fn audit_ids_sort_by_time_and_are_ids() {
        let early = new_audit_id("2026-12-04T05:56:09.123Z");
        let late = new_audit_id("2026-12-04T05:56:09.124Z");
        assert!(early < late);
        assert!(is_id(Kind::Audit, &early), "{early}");
        assert!(early.starts_with("aud_20261204055609123"));
    }
}
