//! The REST API `/api/v1`: the single implementation of every operation.
//!
//! `ROUTES` is the route table: each operation (`Op`), its method and path,
//! and who may call it. A call is `authorize` (the table's requirement, once,
//! for every caller) then `dispatch` (the handler), or `call` for both at
//! once from a path. The REST edge and the MCP tools both come here, so
//! filters, validation, soft delete, upserts and tenant isolation exist once.
//! Nothing here knows HTTP framing or JSON-RPC.

pub mod audit;
pub mod confirmations;
mod ctx;
pub mod emails;
pub mod error;
pub mod idempotency;
pub mod inboxes;
pub mod input;
pub mod jobs;
pub mod openapi;
pub mod page;
pub mod schemas;
pub mod senders;
pub mod tenancy;
mod upsert;
pub mod webhooks;
pub mod workspace;

use percent_encoding::percent_decode_str;
use serde::Serialize;
use serde_json::{Value, json};

use crate::domain::{Permission, Scope};
pub use ctx::{Ctx, Services};
use error::ApiError;

/// One call of the API with a path, from either edge.
#[derive(Debug, Clone)]
pub struct ApiRequest<'a> {
    pub method: &'a str,
    /// The path after `/api/v1`, still percent-encoded (`/emails/eml_1`).
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub body: &'a [u8],
}

#[derive(Debug, Clone, PartialEq)]
pub struct ApiResponse {
    pub status: u16,
    pub body: Value,
    /// `Location` of a created job.
    pub location: Option<String>,
}

impl ApiResponse {
    pub fn ok(status: u16, body: Value) -> ApiResponse {
        ApiResponse { status, body, location: None }
    }

    pub fn data<T: Serialize>(status: u16, data: &T) -> Result<ApiResponse, ApiError> {
        let data = serde_json::to_value(data).map_err(ApiError::unserializable)?;
        Ok(ApiResponse::ok(status, json!({"data": data})))
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Every operation of the API: the route ids. Each has one row in `ROUTES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    InboxesList,
    InboxesUpsert,
    InboxGet,
    InboxUpdate,
    InboxDelete,
    SendersList,
    SendersAdd,
    SenderRemove,
    EmailIngest,
    EmailsList,
    EmailGet,
    EmailReprocess,
    EmailDelete,
    WebhooksList,
    WebhooksUpsert,
    WebhookGet,
    WebhookDelete,
    WebhookTest,
    WebhookRotateSecret,
    DeliveriesList,
    DeliveryResend,
    JobGet,
    JobCancel,
    Workspace,
    AuditList,
    AuditGet,
}

/// Who may call an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// This scope and a role with this permission.
    Role(Scope, Permission),
    /// This scope only: a machine client (the mail pipeline).
    Scope(Scope),
    /// The handler decides from the data (the workspace summary needs two
    /// scopes). `any`: a caller with none of these scopes can never succeed
    /// (what the MCP listing filters on).
    Handler { any: &'static [Scope] },
    /// A job: its subject decides (an e-mail job needs the e-mail scope, a
    /// webhook or delivery job the webhook scope), checked by the handler
    /// once it has read the job, against the caller's job scopes
    /// (`Principal::job_scopes`). `any` as for `Handler`.
    Job { any: &'static [Scope] },
}

/// One row of the route table.
#[derive(Debug, Clone, Copy)]
pub struct RouteRow {
    pub op: Op,
    pub method: &'static str,
    /// The path after `/api/v1`, with `{id}` and `{sender}` for its parameters.
    pub template: &'static str,
    pub needs: Needs,
    /// Reads filters, `limit` and `cursor` from the query string.
    pub takes_query: bool,
    /// Takes a JSON body.
    pub takes_body: bool,
}

const fn row(op: Op, method: &'static str, template: &'static str, needs: Needs) -> RouteRow {
    let takes_query = matches!(
        op,
        Op::InboxesList | Op::SendersList | Op::EmailsList | Op::WebhooksList | Op::DeliveriesList | Op::AuditList
    );
    let takes_body =
        matches!(op, Op::InboxesUpsert | Op::InboxUpdate | Op::SendersAdd | Op::WebhooksUpsert | Op::EmailIngest);
    RouteRow { op, method, template, needs, takes_query, takes_body }
}

use Permission::{Administer, Operate, Read};

/// The route table: every operation, its method and path, and who may call it.
pub const ROUTES: [RouteRow; 26] = [
    row(Op::InboxesList, "GET", "/inboxes", Needs::Role(Scope::InboxesRead, Read)),
    row(Op::InboxesUpsert, "PUT", "/inboxes", Needs::Role(Scope::InboxesWrite, Administer)),
    row(Op::InboxGet, "GET", "/inboxes/{id}", Needs::Role(Scope::InboxesRead, Read)),
    row(Op::InboxUpdate, "PATCH", "/inboxes/{id}", Needs::Role(Scope::InboxesWrite, Administer)),
    row(Op::InboxDelete, "DELETE", "/inboxes/{id}", Needs::Role(Scope::InboxesWrite, Administer)),
    row(Op::SendersList, "GET", "/inboxes/{id}/senders", Needs::Role(Scope::InboxesRead, Read)),
    row(Op::SendersAdd, "POST", "/inboxes/{id}/senders", Needs::Role(Scope::InboxesWrite, Administer)),
    row(Op::SenderRemove, "DELETE", "/inboxes/{id}/senders/{sender}", Needs::Role(Scope::InboxesWrite, Administer)),
    row(Op::EmailIngest, "POST", "/inboxes/{id}/emails", Needs::Scope(Scope::EmailsIngest)),
    row(Op::EmailsList, "GET", "/emails", Needs::Role(Scope::EmailsRead, Read)),
    row(Op::EmailGet, "GET", "/emails/{id}", Needs::Role(Scope::EmailsRead, Read)),
    row(Op::EmailReprocess, "POST", "/emails/{id}/reprocess", Needs::Role(Scope::EmailsWrite, Operate)),
    row(Op::EmailDelete, "DELETE", "/emails/{id}", Needs::Role(Scope::EmailsWrite, Administer)),
    row(Op::WebhooksList, "GET", "/webhooks", Needs::Role(Scope::WebhooksRead, Read)),
    row(Op::WebhooksUpsert, "PUT", "/webhooks", Needs::Role(Scope::WebhooksWrite, Administer)),
    row(Op::WebhookGet, "GET", "/webhooks/{id}", Needs::Role(Scope::WebhooksRead, Read)),
    row(Op::WebhookDelete, "DELETE", "/webhooks/{id}", Needs::Role(Scope::WebhooksWrite, Administer)),
    row(Op::WebhookTest, "POST", "/webhooks/{id}/test", Needs::Role(Scope::WebhooksWrite, Operate)),
    row(Op::WebhookRotateSecret, "POST", "/webhooks/{id}/rotate_secret", Needs::Role(Scope::WebhooksWrite, Administer)),
    row(Op::DeliveriesList, "GET", "/webhooks/{id}/deliveries", Needs::Role(Scope::WebhooksRead, Read)),
    row(Op::DeliveryResend, "POST", "/webhook_deliveries/{id}/resend", Needs::Role(Scope::WebhooksWrite, Operate)),
    row(Op::JobGet, "GET", "/jobs/{id}", Needs::Job { any: &[Scope::EmailsRead, Scope::WebhooksRead] }),
    row(Op::JobCancel, "POST", "/jobs/{id}/cancel", Needs::Job { any: &[Scope::EmailsWrite, Scope::WebhooksWrite] }),
    row(Op::Workspace, "GET", "/workspace", Needs::Handler { any: &[Scope::InboxesRead, Scope::EmailsRead] }),
    row(Op::AuditList, "GET", "/audit", Needs::Role(Scope::AuditRead, Administer)),
    row(Op::AuditGet, "GET", "/audit/{id}", Needs::Role(Scope::AuditRead, Administer)),
];

impl Op {
    pub fn row(self) -> &'static RouteRow {
        #[expect(
            clippy::indexing_slicing,
            reason = "ROUTES has one row per Op, in declaration order; a unit test checks it"
        )]
        &ROUTES[self as usize]
    }

    /// Whether the operation changes state (and so honours `Idempotency-Key`).
    pub fn is_write(self) -> bool {
        self.row().method != "GET"
    }

    /// The operation's name in snake case (`webhook_rotate_secret`): its
    /// OpenAPI `operationId` and its metric dimension.
    pub fn name(self) -> &'static str {
        match self {
            Op::InboxesList => "inboxes_list",
            Op::InboxesUpsert => "inboxes_upsert",
            Op::InboxGet => "inbox_get",
            Op::InboxUpdate => "inbox_update",
            Op::InboxDelete => "inbox_delete",
            Op::SendersList => "senders_list",
            Op::SendersAdd => "senders_add",
            Op::SenderRemove => "sender_remove",
            Op::EmailIngest => "email_ingest",
            Op::EmailsList => "emails_list",
            Op::EmailGet => "email_get",
            Op::EmailReprocess => "email_reprocess",
            Op::EmailDelete => "email_delete",
            Op::WebhooksList => "webhooks_list",
            Op::WebhooksUpsert => "webhooks_upsert",
            Op::WebhookGet => "webhook_get",
            Op::WebhookDelete => "webhook_delete",
            Op::WebhookTest => "webhook_test",
            Op::WebhookRotateSecret => "webhook_rotate_secret",
            Op::DeliveriesList => "deliveries_list",
            Op::DeliveryResend => "delivery_resend",
            Op::JobGet => "job_get",
            Op::JobCancel => "job_cancel",
            Op::Workspace => "workspace",
            Op::AuditList => "audit_list",
            Op::AuditGet => "audit_get",
        }
    }

    /// Whether it answers 202 with a job that finishes later (what the MCP
    /// tools turn into tasks).
    pub fn enqueues(self) -> bool {
        matches!(self, Op::EmailReprocess | Op::WebhookTest | Op::DeliveryResend | Op::EmailIngest)
    }
}

/// An operation with its path parameters: what the API runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub op: Op,
    /// `{id}` of the path (`""` when the route has none).
    pub id: String,
    /// `{sender}` of the path (`""` when the route has none).
    pub sender: String,
}

impl Route {
    pub fn new(op: Op, id: impl Into<String>, sender: impl Into<String>) -> Route {
        Route { op, id: id.into(), sender: sender.into() }
    }

    /// Matches a method and a percent-encoded path against the route table.
    /// Each segment is decoded on its own, so an encoded `/` stays inside one
    /// path parameter (and then fails that parameter's validation) instead of
    /// reaching another route.
    pub fn parse(method: &str, path: &str) -> Result<Route, ApiError> {
        let segments: Vec<String> = path
            .trim_start_matches('/')
            .split('/')
            .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
            .collect();
        let mut allowed: Vec<&'static str> = Vec::new();
        for row in &ROUTES {
            let Some((id, sender)) = matches(row.template, &segments) else { continue };
            if row.method == method {
                return Ok(Route { op: row.op, id, sender });
            }
            allowed.push(row.method);
        }
        if allowed.is_empty() {
            return Err(ApiError::NoRoute);
        }
        Err(ApiError::MethodNotAllowed { allow: allow_header(&allowed) })
    }
}

/// The path parameters if `segments` fit `template`.
fn matches(template: &str, segments: &[String]) -> Option<(String, String)> {
    let parts: Vec<&str> = template.trim_start_matches('/').split('/').collect();
    if parts.len() != segments.len() {
        return None;
    }
    let (mut id, mut sender) = (String::new(), String::new());
    for (part, segment) in parts.iter().zip(segments) {
        match *part {
            "{id}" => id.clone_from(segment),
            "{sender}" => sender.clone_from(segment),
            literal if literal == segment => {}
            _ => return None,
        }
    }
    Some((id, sender))
}

/// The `Allow` value: the methods a path has, in the table's order.
fn allow_header(methods: &[&str]) -> &'static str {
    match methods {
        ["GET", "PUT"] => "GET, PUT",
        ["GET", "PATCH", "DELETE"] => "GET, PATCH, DELETE",
        ["GET", "POST"] => "GET, POST",
        ["GET", "DELETE"] => "GET, DELETE",
        ["DELETE"] => "DELETE",
        ["POST"] => "POST",
        _ => "GET",
    }
}

/// Checks that the caller has `scope` (403 `insufficient_scope`) and that the
/// role allows `permission` (403 `forbidden`).
pub fn check(ctx: &Ctx<'_>, scope: Scope, permission: Permission) -> Result<(), ApiError> {
    check_in(ctx, ctx.principal.scopes, scope, permission)
}

/// `check` for a job whose subject needs `scope`: against the caller's job scopes.
pub fn check_job(ctx: &Ctx<'_>, scope: Scope, permission: Permission) -> Result<(), ApiError> {
    check_in(ctx, ctx.principal.job_scopes, scope, permission)
}

fn check_in(
    ctx: &Ctx<'_>,
    granted: crate::domain::Scopes,
    scope: Scope,
    permission: Permission,
) -> Result<(), ApiError> {
    if !granted.contains(scope) {
        return Err(ApiError::InsufficientScope { scopes: vec![scope] });
    }
    if !ctx.tenant.role.allows(permission) {
        let needed = match permission {
            Permission::Read => "viewer",
            Permission::Operate => "operator",
            Permission::Administer => "admin",
        };
        return Err(ApiError::Forbidden {
            message: format!(
                "Your role in workspace {} is {}; this needs {needed}",
                ctx.tenant.workspace,
                ctx.tenant.role.as_str()
            ),
        });
    }
    Ok(())
}

/// Proof that the caller passed the route table's check for one operation;
/// only `authorize` makes one, and `dispatch` takes one, so every call is
/// checked exactly once, whichever edge made it.
#[derive(Debug, Clone, Copy)]
pub struct Permit {
    op: Op,
}

/// The route table's requirement for `op`, checked for this caller.
pub fn authorize(ctx: &Ctx<'_>, op: Op) -> Result<Permit, ApiError> {
    match op.row().needs {
        Needs::Role(scope, permission) => check(ctx, scope, permission)?,
        Needs::Scope(scope) if !ctx.principal.has(scope) => {
            return Err(ApiError::InsufficientScope { scopes: vec![scope] });
        }
        Needs::Scope(_) => {}
        // The handler checks once it has read what the call is about.
        Needs::Handler { .. } | Needs::Job { .. } => {}
    }
    Ok(Permit { op })
}

/// The checks an operation's handler makes itself, from what it reads,
/// made for the replay of a stored answer (`idempotency`): with the route
/// table's `Permit`, a replay is authorized exactly as the call would be,
/// so a key never lends the authority of the token that first used it.
pub async fn authorize_replay(ctx: &Ctx<'_>, route: &Route) -> Result<(), ApiError> {
    match (route.op, route.op.row().needs) {
        (Op::JobCancel, _) => jobs::authorize_cancel(ctx, &route.id).await,
        (_, Needs::Role(..) | Needs::Scope(_)) => Ok(()),
        // A write authorized by its handler that this list does not know:
        // never replay it unchecked.
        (op, Needs::Handler { .. } | Needs::Job { .. }) => {
            tracing::error!(?op, "no replay check for an operation its handler authorizes");
            Err(ApiError::Unavailable)
        }
    }
}

/// Parse, authorize, run: a whole call for a caller that has a path.
pub async fn call(ctx: &Ctx<'_>, req: &ApiRequest<'_>) -> Result<ApiResponse, ApiError> {
    let route = Route::parse(req.method, req.path)?;
    let permit = authorize(ctx, route.op)?;
    dispatch(ctx, permit, &route, req.query, req.body).await
}

/// Runs one authorized operation for a verified caller in a resolved workspace.
pub async fn dispatch(
    ctx: &Ctx<'_>,
    permit: Permit,
    route: &Route,
    query: Option<&str>,
    body: &[u8],
) -> Result<ApiResponse, ApiError> {
    if permit.op != route.op {
        tracing::error!(permitted = ?permit.op, route = ?route.op, "a permit for another operation");
        return Err(ApiError::Unavailable);
    }
    if !route.op.is_write() {
        // The route match holds every handler's future; boxing keeps that off
        // the caller's stack (it is large in debug builds).
        return Box::pin(run(ctx, route, query, body)).await;
    }
    // A change: it leaves exactly one audit record (see `audit`).
    let change = audit::Change::new(route, body);
    let ctx = Ctx { change: Some(&change), ..*ctx };
    let outcome = Box::pin(run(&ctx, route, query, body)).await;
    audit::finish(&ctx, &change, &outcome).await;
    outcome
}

async fn run(ctx: &Ctx<'_>, route: &Route, q: Option<&str>, body: &[u8]) -> Result<ApiResponse, ApiError> {
    let row = route.op.row();
    if !row.takes_body {
        no_body(body)?;
    }
    if !row.takes_query {
        // Only lists read the query string; anything there is a client mistake.
        input::query(q, &[])?;
    }
    let (id, sender) = (route.id.as_str(), route.sender.as_str());
    match route.op {
        Op::InboxesList => inboxes::list(ctx, q).await,
        Op::InboxesUpsert => inboxes::upsert(ctx, body).await,
        Op::InboxGet => inboxes::get(ctx, id).await,
        Op::InboxUpdate => inboxes::update(ctx, id, body).await,
        Op::InboxDelete => inboxes::delete(ctx, id).await,
        Op::SendersList => senders::list(ctx, id, q).await,
        Op::SendersAdd => senders::add(ctx, id, body).await,
        Op::SenderRemove => senders::remove(ctx, id, sender).await,
        Op::EmailIngest => emails::ingest(ctx, id, body).await,
        Op::EmailsList => emails::list(ctx, q).await,
        Op::EmailGet => emails::get(ctx, id).await,
        Op::EmailReprocess => emails::reprocess(ctx, id).await,
        Op::EmailDelete => emails::delete(ctx, id).await,
        Op::WebhooksList => webhooks::list(ctx, q).await,
        Op::WebhooksUpsert => webhooks::upsert(ctx, body).await,
        Op::WebhookGet => webhooks::get(ctx, id).await,
        Op::WebhookDelete => webhooks::delete(ctx, id).await,
        Op::WebhookTest => webhooks::test(ctx, id).await,
        Op::WebhookRotateSecret => webhooks::rotate_secret(ctx, id).await,
        Op::DeliveriesList => webhooks::deliveries(ctx, id, q).await,
        Op::DeliveryResend => webhooks::resend(ctx, id).await,
        Op::JobGet => jobs::get(ctx, id).await,
        Op::JobCancel => jobs::cancel(ctx, id).await,
        Op::Workspace => workspace::get(ctx).await,
        Op::AuditList => audit::list(ctx, q).await,
        Op::AuditGet => audit::get(ctx, id).await,
    }
}

/// The record `id` of `kind` in the caller's workspace, or 404 naming
/// `what`. A malformed id (`../x`, `%2F`, another prefix) never reaches the store.
pub(crate) async fn fetch<T>(
    kind: crate::domain::ids::Kind,
    what: &'static str,
    id: &str,
    read: impl AsyncFnOnce() -> Result<Option<T>, crate::store::StoreError>,
) -> Result<T, ApiError> {
    if !crate::domain::ids::is_id(kind, id) {
        return Err(ApiError::NotFound { what });
    }
    read().await?.ok_or(ApiError::NotFound { what })
}

/// A body-less route must get no body (a stray body is a client bug worth telling).
pub fn no_body(body: &[u8]) -> Result<(), ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) || body == b"{}" {
        Ok(())
    } else {
        Err(ApiError::bad_request("invalid_body", "This route takes no body", json!({})))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_route_table_has_one_row_per_operation_in_order_and_every_path_parses_back() {
        for (i, row) in ROUTES.iter().enumerate() {
            assert_eq!(row.op as usize, i, "{:?}", row.op);
            let path = row.template.replace("{id}", "p1").replace("{sender}", "p2");
            let route = Route::parse(row.method, &path).unwrap();
            assert_eq!(route.op, row.op, "{} {}", row.method, row.template);
            let (id, sender) = (
                if row.template.contains("{id}") { "p1" } else { "" },
                if row.template.contains("{sender}") { "p2" } else { "" },
            );
            assert_eq!((route.id.as_str(), route.sender.as_str()), (id, sender));
        }
    }

    #[test]
    fn an_encoded_slash_stays_inside_its_parameter() {
        let route = Route::parse("GET", "/inboxes/a%2Fsenders").unwrap();
        assert_eq!((route.op, route.id.as_str()), (Op::InboxGet, "a/senders"));
        assert!(matches!(Route::parse("PUT", "/emails"), Err(ApiError::MethodNotAllowed { allow: "GET" })));
        assert!(matches!(Route::parse("GET", "/nope"), Err(ApiError::NoRoute)));
    }
}
