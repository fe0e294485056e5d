//! The REST API `/api/v1`: the single implementation of every operation.
//!
//! `dispatch` takes an `ApiRequest` (method, percent-encoded path, query,
//! body) and the verified caller, and answers an `ApiResponse`. The REST edge
//! (`rest`) and the MCP tools both call it, so filters, validation, soft
//! delete, upserts and tenant isolation exist once. Each handler checks its
//! own scope and role, whoever called it.

pub mod confirmations;
pub mod emails;
pub mod error;
pub mod inboxes;
pub mod input;
pub mod jobs;
pub mod page;
pub mod rest;
pub mod senders;
pub mod tenancy;
mod upsert;
pub mod webhooks;
pub mod workspace;

use percent_encoding::percent_decode_str;
use serde::Serialize;
use serde_json::{Value, json};

use crate::app::App;
use crate::auth::Principal;
use crate::domain::{Permission, Scope, Tenant};
use error::ApiError;

/// One call of the API, from either edge.
#[derive(Debug, Clone)]
pub struct ApiRequest<'a> {
    pub method: &'a str,
    /// The path after `/api/v1`, still percent-encoded (`/emails/eml_1`).
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub body: &'a [u8],
}

/// The verified caller and the workspace acted on. Never the token.
pub struct Ctx<'a> {
    pub app: &'a App,
    pub principal: &'a Principal,
    pub tenant: &'a Tenant,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ApiResponse {
    pub status: u16,
    pub body: Value,
    /// `Location` of a created job.
    pub location: Option<String>,
    /// Set on a 403 for a missing scope, so each edge can challenge in its own terms.
    pub missing_scopes: Vec<Scope>,
}

impl ApiResponse {
    pub fn ok(status: u16, body: Value) -> ApiResponse {
        ApiResponse { status, body, location: None, missing_scopes: Vec::new() }
    }

    pub fn data<T: Serialize>(status: u16, data: &T) -> Result<ApiResponse, ApiError> {
        let data = serde_json::to_value(data).map_err(|_| ApiError::Unavailable)?;
        Ok(ApiResponse::ok(status, json!({"data": data})))
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

impl From<ApiError> for ApiResponse {
    fn from(error: ApiError) -> Self {
        let missing_scopes = match &error {
            ApiError::InsufficientScope { scopes } => scopes.clone(),
            _ => Vec::new(),
        };
        ApiResponse { status: error.status(), body: error.body(), location: None, missing_scopes }
    }
}

/// Every route of the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    InboxesList,
    InboxesUpsert,
    InboxGet(String),
    InboxUpdate(String),
    InboxDelete(String),
    SendersList(String),
    SendersAdd(String),
    SenderRemove(String, String),
    EmailIngest(String),
    EmailsList,
    EmailGet(String),
    EmailReprocess(String),
    EmailDelete(String),
    WebhooksList,
    WebhooksUpsert,
    WebhookGet(String),
    WebhookDelete(String),
    WebhookTest(String),
    WebhookRotateSecret(String),
    DeliveriesList(String),
    DeliveryResend(String),
    JobGet(String),
    Workspace,
}

impl Route {
    /// Matches a method and a percent-encoded path. Each segment is decoded on
    /// its own, so an encoded `/` stays inside one path parameter (and then
    /// fails that parameter's validation) instead of reaching another route.
    pub fn parse(method: &str, path: &str) -> Result<Route, ApiError> {
        let segments: Vec<String> = path
            .trim_start_matches('/')
            .split('/')
            .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
            .collect();
        let s: Vec<&str> = segments.iter().map(String::as_str).collect();
        let id = |i: usize| s[i].to_owned();
        let route = match (method, s.as_slice()) {
            ("GET", ["inboxes"]) => Route::InboxesList,
            ("PUT", ["inboxes"]) => Route::InboxesUpsert,
            ("GET", ["inboxes", _]) => Route::InboxGet(id(1)),
            ("PATCH", ["inboxes", _]) => Route::InboxUpdate(id(1)),
            ("DELETE", ["inboxes", _]) => Route::InboxDelete(id(1)),
            ("GET", ["inboxes", _, "senders"]) => Route::SendersList(id(1)),
            ("POST", ["inboxes", _, "senders"]) => Route::SendersAdd(id(1)),
            ("DELETE", ["inboxes", _, "senders", _]) => Route::SenderRemove(id(1), id(3)),
            ("POST", ["inboxes", _, "emails"]) => Route::EmailIngest(id(1)),
            ("GET", ["emails"]) => Route::EmailsList,
            ("GET", ["emails", _]) => Route::EmailGet(id(1)),
            ("POST", ["emails", _, "reprocess"]) => Route::EmailReprocess(id(1)),
            ("DELETE", ["emails", _]) => Route::EmailDelete(id(1)),
            ("GET", ["webhooks"]) => Route::WebhooksList,
            ("PUT", ["webhooks"]) => Route::WebhooksUpsert,
            ("GET", ["webhooks", _]) => Route::WebhookGet(id(1)),
            ("DELETE", ["webhooks", _]) => Route::WebhookDelete(id(1)),
            ("POST", ["webhooks", _, "test"]) => Route::WebhookTest(id(1)),
            ("POST", ["webhooks", _, "rotate_secret"]) => Route::WebhookRotateSecret(id(1)),
            ("GET", ["webhooks", _, "deliveries"]) => Route::DeliveriesList(id(1)),
            ("POST", ["webhook_deliveries", _, "resend"]) => Route::DeliveryResend(id(1)),
            ("GET", ["jobs", _]) => Route::JobGet(id(1)),
            ("GET", ["workspace"]) => Route::Workspace,
            (_, shape) => {
                return Err(match allowed_methods(shape) {
                    Some(allow) => ApiError::MethodNotAllowed { allow },
                    None => ApiError::NoRoute,
                });
            }
        };
        Ok(route)
    }

    /// The scope and role permission a route needs; `None` when the handler
    /// checks for itself (a job needs the read scope of its subject; the
    /// workspace summary needs two scopes).
    pub fn requirements(&self) -> Option<(Scope, Permission)> {
        use Permission::*;
        use Route::*;
        Some(match self {
            InboxesList | InboxGet(_) | SendersList(_) => (Scope::InboxesRead, Read),
            InboxesUpsert | InboxUpdate(_) | InboxDelete(_) | SendersAdd(_) | SenderRemove(..) => {
                (Scope::InboxesWrite, Administer)
            }
            EmailsList | EmailGet(_) => (Scope::EmailsRead, Read),
            EmailReprocess(_) => (Scope::EmailsWrite, Operate),
            EmailDelete(_) => (Scope::EmailsWrite, Administer),
            WebhooksList | WebhookGet(_) | DeliveriesList(_) => (Scope::WebhooksRead, Read),
            WebhooksUpsert | WebhookDelete(_) | WebhookRotateSecret(_) => (Scope::WebhooksWrite, Administer),
            WebhookTest(_) | DeliveryResend(_) => (Scope::WebhooksWrite, Operate),
            JobGet(_) | Workspace => return None,
            // A machine client: the scope is all it needs.
            EmailIngest(_) => (Scope::EmailsIngest, Read),
        })
    }

    fn takes_query(&self) -> bool {
        matches!(
            self,
            Route::InboxesList
                | Route::SendersList(_)
                | Route::EmailsList
                | Route::WebhooksList
                | Route::DeliveriesList(_)
        )
    }

    fn takes_body(&self) -> bool {
        matches!(
            self,
            Route::InboxesUpsert
                | Route::InboxUpdate(_)
                | Route::SendersAdd(_)
                | Route::WebhooksUpsert
                | Route::EmailIngest(_)
        )
    }

    /// Whether the route changes state (and so honours `Idempotency-Key`).
    pub fn is_write(&self) -> bool {
        !matches!(
            self,
            Route::InboxesList
                | Route::InboxGet(_)
                | Route::SendersList(_)
                | Route::EmailsList
                | Route::EmailGet(_)
                | Route::WebhooksList
                | Route::WebhookGet(_)
                | Route::DeliveriesList(_)
                | Route::JobGet(_)
                | Route::Workspace
        )
    }
}

/// The `Allow` value for a path that exists with other methods.
fn allowed_methods(shape: &[&str]) -> Option<&'static str> {
    Some(match shape {
        ["inboxes"] | ["webhooks"] => "GET, PUT",
        ["inboxes", _] => "GET, PATCH, DELETE",
        ["inboxes", _, "senders"] => "GET, POST",
        ["inboxes", _, "senders", _] => "DELETE",
        ["inboxes", _, "emails"] => "POST",
        ["emails"] | ["webhooks", _, "deliveries"] | ["jobs", _] | ["workspace"] => "GET",
        ["emails", _] | ["webhooks", _] => "GET, DELETE",
        ["emails", _, "reprocess"]
        | ["webhooks", _, "test"]
        | ["webhooks", _, "rotate_secret"]
        | ["webhook_deliveries", _, "resend"] => "POST",
        _ => return None,
    })
}

/// Checks that the caller has `scope` (403 `insufficient_scope`) and that the
/// role allows `permission` (403 `forbidden`).
pub fn authorize(ctx: &Ctx<'_>, scope: Scope, permission: Permission) -> Result<(), ApiError> {
    if !ctx.principal.has(scope) {
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

/// Runs one API call for a verified caller in a resolved workspace.
pub async fn dispatch(ctx: &Ctx<'_>, req: &ApiRequest<'_>) -> ApiResponse {
    // The route match holds every handler's future; boxing keeps that off
    // the caller's stack (it is large in debug builds).
    match Box::pin(run(ctx, req)).await {
        Ok(response) => response,
        Err(error) => error.into(),
    }
}

async fn run(ctx: &Ctx<'_>, req: &ApiRequest<'_>) -> Result<ApiResponse, ApiError> {
    let route = Route::parse(req.method, req.path)?;
    if let Some((scope, permission)) = route.requirements() {
        authorize(ctx, scope, permission)?;
    }
    if !route.takes_body() {
        no_body(req.body)?;
    }
    if !route.takes_query() {
        // Only lists read the query string; anything there is a client mistake.
        input::query(req.query, &[])?;
    }
    let (q, body) = (req.query, req.body);
    match route {
        Route::InboxesList => inboxes::list(ctx, q).await,
        Route::InboxesUpsert => inboxes::upsert(ctx, body).await,
        Route::InboxGet(id) => inboxes::get(ctx, &id).await,
        Route::InboxUpdate(id) => inboxes::update(ctx, &id, body).await,
        Route::InboxDelete(id) => inboxes::delete(ctx, &id).await,
        Route::SendersList(id) => senders::list(ctx, &id, q).await,
        Route::SendersAdd(id) => senders::add(ctx, &id, body).await,
        Route::SenderRemove(id, sender) => senders::remove(ctx, &id, &sender).await,
        Route::EmailIngest(id) => emails::ingest(ctx, &id, body).await,
        Route::EmailsList => emails::list(ctx, q).await,
        Route::EmailGet(id) => emails::get(ctx, &id).await,
        Route::EmailReprocess(id) => emails::reprocess(ctx, &id).await,
        Route::EmailDelete(id) => emails::delete(ctx, &id).await,
        Route::WebhooksList => webhooks::list(ctx, q).await,
        Route::WebhooksUpsert => webhooks::upsert(ctx, body).await,
        Route::WebhookGet(id) => webhooks::get(ctx, &id).await,
        Route::WebhookDelete(id) => webhooks::delete(ctx, &id).await,
        Route::WebhookTest(id) => webhooks::test(ctx, &id).await,
        Route::WebhookRotateSecret(id) => webhooks::rotate_secret(ctx, &id).await,
        Route::DeliveriesList(id) => webhooks::deliveries(ctx, &id, q).await,
        Route::DeliveryResend(id) => webhooks::resend(ctx, &id).await,
        Route::JobGet(id) => jobs::get(ctx, &id).await,
        Route::Workspace => workspace::get(ctx).await,
    }
}

/// A body-less route must get no body (a stray body is a client bug worth telling).
pub fn no_body(body: &[u8]) -> Result<(), ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) || body == b"{}" {
        Ok(())
    } else {
        Err(ApiError::bad_request("invalid_body", "This route takes no body", json!({})))
    }
}
