//! The REST API `/api/v1`: the single implementation of every operation.
//!
//! Each operation is one declaration (`operation::Operation`) in the module
//! of the records it is about, with its handler; `operations()` lists them
//! all, and the route table (`route`), the OpenAPI document and the MCP
//! catalogue are read from them. A call is `authorize` (the declaration's requirement,
//! once, for every caller) then `dispatch` (the handler), or `call` for both
//! at once from a path. The REST edge and the MCP tools both come here, so
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
pub mod operation;
pub mod org;
pub mod page;
pub mod privacy;
pub mod route;
pub mod schemas;
pub mod senders;
pub mod shape;
pub mod tenancy;
mod upsert;
pub mod webhooks;
pub mod workspace;

use http::StatusCode;
use serde::Serialize;
use serde_json::Value;

pub use ctx::{Ctx, Services};
use error::ApiError;
use inbox_domain::records::Job;
use inbox_domain::{Permission, Scope};
pub use operation::{Input, Media, Op, Operation, Verb};
pub use route::{Param, Route, Template};

/// One call of the API with a path, from either edge.
#[derive(Debug, Clone)]
pub struct ApiRequest<'a> {
    pub method: &'a str,
    /// The path after `/api/v1`, still percent-encoded (`/emails/eml_1`).
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub body: &'a [u8],
    pub media: Media,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ApiResponse {
    pub status: StatusCode,
    pub body: Value,
    /// `Location` of a created job.
    pub location: Option<String>,
    /// The job the answer is about (an enqueued, read or cancelled job), as
    /// a value: what MCP tasks are made from, without reading the body back.
    pub job: Option<Job>,
}

impl ApiResponse {
    pub fn ok(status: StatusCode, body: Value) -> ApiResponse {
        ApiResponse { status, body, location: None, job: None }
    }

    pub fn data<T: Serialize>(status: StatusCode, data: &T) -> Result<ApiResponse, ApiError> {
        let data = serde_json::to_value(data).map_err(ApiError::unserializable)?;
        // Not `json!`: it would copy `data` by serializing it again.
        let mut body = serde_json::Map::new();
        body.insert("data".into(), data);
        Ok(ApiResponse::ok(status, Value::Object(body)))
    }

    pub fn is_success(&self) -> bool {
        self.status.is_success()
    }
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
    /// (what the MCP listing filters on); `who`: the rule in words, for the
    /// OpenAPI document.
    Handler { any: &'static [Scope], who: &'static str },
    /// Organization administration: this scope, and `org_admin` in the
    /// caller's organization (checked when the edge resolves the
    /// organization as the call's tenant, `tenancy::resolve_org_admin`).
    Org(Scope),
    /// A job: its subject decides (an e-mail job needs the e-mail scope, a
    /// webhook or delivery job the webhook scope), checked by the handler
    /// once it has read the job, against the caller's job scopes
    /// (`Principal::job_scopes`). `any` as for `Handler`.
    Job { any: &'static [Scope] },
}

/// Every operation, in the order the MCP catalogue lists their tools: one
/// list per module, each written beside the operations' handlers.
pub static OPERATIONS: [&[Op]; 9] = [
    inboxes::OPERATIONS,
    senders::OPERATIONS,
    emails::OPERATIONS,
    webhooks::OPERATIONS,
    jobs::OPERATIONS,
    workspace::OPERATIONS,
    audit::OPERATIONS,
    org::OPERATIONS,
    privacy::OPERATIONS,
];

/// Every operation.
pub fn operations() -> impl Iterator<Item = Op> {
    OPERATIONS.iter().flat_map(|module| module.iter().copied())
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
    granted: inbox_domain::Scopes,
    scope: Scope,
    permission: Permission,
) -> Result<(), ApiError> {
    if !granted.contains(scope) {
        return Err(ApiError::InsufficientScope { scopes: vec![scope] });
    }
    check_role(ctx, permission)
}

/// The role half of `check` alone: that the caller's role in the workspace
/// allows `permission` (403 `forbidden`).
pub fn check_role(ctx: &Ctx<'_>, permission: Permission) -> Result<(), ApiError> {
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

/// Proof that the caller passed the declaration's check for one operation;
/// only `authorize` makes one, and `dispatch` takes one, so every call is
/// checked exactly once, whichever edge made it.
#[derive(Debug, Clone, Copy)]
pub struct Permit {
    op: Op,
}

/// The declaration's requirement for `op`, checked for this caller.
pub fn authorize(ctx: &Ctx<'_>, op: Op) -> Result<Permit, ApiError> {
    match op.needs {
        Needs::Role(scope, permission) => check(ctx, scope, permission)?,
        Needs::Scope(scope) if !ctx.principal.has(scope) => {
            return Err(ApiError::InsufficientScope { scopes: vec![scope] });
        }
        Needs::Scope(_) => {}
        Needs::Org(scope) if !ctx.principal.has(scope) => {
            return Err(ApiError::InsufficientScope { scopes: vec![scope] });
        }
        Needs::Org(_) if !ctx.tenant.is_organization() => {
            tracing::error!(op = op.name, "organization administration outside the organization");
            return Err(ApiError::Unavailable);
        }
        Needs::Org(_) => {}
        // The handler checks once it has read what the call is about.
        Needs::Handler { .. } | Needs::Job { .. } => {}
    }
    Ok(Permit { op })
}

/// The checks an operation's handler makes itself, from what it reads,
/// made for the replay of a stored answer (`idempotency`): with the
/// declaration's `Permit`, a replay is authorized exactly as the call would
/// be, so a key never lends the authority of the token that first used it.
pub async fn authorize_replay(ctx: &Ctx<'_>, route: &Route) -> Result<(), ApiError> {
    let op = route.op();
    match (op.needs, op.replay_check) {
        (Needs::Role(..) | Needs::Scope(_) | Needs::Org(_), _) => Ok(()),
        (Needs::Handler { .. } | Needs::Job { .. }, Some(check)) => check(ctx, route.id()).await,
        // A write authorized by its handler without a replay check: never
        // replay it unchecked.
        (Needs::Handler { .. } | Needs::Job { .. }, None) => {
            tracing::error!(op = op.name, "no replay check for an operation its handler authorizes");
            Err(ApiError::Unavailable)
        }
    }
}

/// Parse, authorize, run: a whole call for a caller that has a path.
pub async fn call(ctx: &Ctx<'_>, req: &ApiRequest<'_>) -> Result<ApiResponse, ApiError> {
    let route = Route::parse(req.method, req.path)?;
    invoke(ctx, &Input::rest_as(&route, req.query, req.body, req.media)).await
}

/// Authorize, run: a whole call of a known operation, for a caller inside
/// the server (MCP resources, prompts, completions and tasks).
pub async fn invoke(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let permit = authorize(ctx, input.route.op())?;
    dispatch(ctx, permit, input).await
}

/// Runs one authorized operation for a verified caller in a resolved workspace.
pub async fn dispatch(ctx: &Ctx<'_>, permit: Permit, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let op = input.route.op();
    if permit.op != op {
        tracing::error!(permitted = permit.op.name, route = op.name, "a permit for another operation");
        return Err(ApiError::Unavailable);
    }
    if ctx.tenant.archived {
        // An archived workspace: its admins read it, nothing in it changes.
        let workspace = ctx.tenant.workspace.to_string();
        if op.is_write() {
            return Err(ApiError::WorkspaceArchived { workspace, change: true });
        }
        if ctx.tenant.role != inbox_domain::Role::Admin {
            return Err(ApiError::WorkspaceArchived { workspace, change: false });
        }
    }
    if !op.is_write() {
        return run(ctx, input).await;
    }
    // A change: it leaves exactly one audit record (see `audit`).
    let change = audit::Change::new(input);
    let ctx = Ctx { change: Some(&change), ..*ctx };
    let outcome = run(&ctx, input).await;
    // Boxed: the audit record's write is a table call whose future is
    // kilobytes; inline, it would size every read's future too.
    Box::pin(audit::finish(&ctx, &change, &outcome)).await;
    outcome
}

async fn run<'a>(ctx: &'a Ctx<'a>, input: &'a Input<'a>) -> Result<ApiResponse, ApiError> {
    let op = input.route.op();
    if !op.takes_body() {
        input.no_body()?;
    }
    if !op.takes_query() {
        // Only lists read the query string; anything there is a client mistake.
        input.params()?;
    }
    // The handler's future is boxed (`operation::Answer`), which keeps it
    // off the caller's stack (it is large in debug builds).
    (op.run)(ctx, input).await
}

/// The record `id` of `kind` in the caller's workspace, or 404 naming
/// `what`. A malformed id (`../x`, `%2F`, another prefix) never reaches the store.
pub(crate) async fn fetch<T>(
    kind: inbox_domain::ids::Kind,
    what: &'static str,
    id: &str,
    read: impl AsyncFnOnce() -> Result<Option<T>, inbox_store::StoreError>,
) -> Result<T, ApiError> {
    if !inbox_domain::ids::is_id(kind, id) {
        return Err(ApiError::NotFound { what });
    }
    read().await?.ok_or(ApiError::NotFound { what })
}
