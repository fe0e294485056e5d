//! The REST edge of `/api/v1`: body limit and media type, authentication
//! (tokens for the REST audience), rate limit, workspace, `Idempotency-Key`,
//! then `dispatch`. Answers in the API's error shape with the headers REST
//! clients expect (`WWW-Authenticate`, `Retry-After`, `Location`,
//! `X-RateLimit-*`).

use aws_lc_rs::digest::{SHA256, digest};
use http::HeaderMap;
use serde_json::{Value, json};

use super::error::ApiError;
use super::page::hex;
use super::{ApiRequest, ApiResponse, Ctx, Route, authorize, dispatch};
use crate::app::{App, Refused};
use crate::auth::{Audience, Principal};
use crate::mcp::MAX_BODY_BYTES;
use crate::store::idempotency::{Claim, StoredResponse};
use crate::api::tenancy::{self, TenancyError};

/// What the HTTP layer sends back.
#[derive(Debug)]
pub struct RestReply {
    pub status: u16,
    pub body: Value,
    pub headers: Vec<(&'static str, String)>,
}

impl RestReply {
    fn error(error: ApiError) -> RestReply {
        let mut headers = Vec::new();
        if let ApiError::MethodNotAllowed { allow } = &error {
            headers.push(("allow", (*allow).to_owned()));
        }
        RestReply { status: error.status(), body: error.body(), headers }
    }
}

pub struct RestRequest<'a> {
    pub method: &'a str,
    /// The path after `/api/v1`, percent-encoded.
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
}

pub async fn handle(app: &App, req: &RestRequest<'_>) -> RestReply {
    let declared_too_large = req
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > MAX_BODY_BYTES as u64);
    if declared_too_large || req.body.len() > MAX_BODY_BYTES {
        return RestReply::error(ApiError::TooLarge);
    }
    let admitted = match app.admit(req.headers, req.query, Audience::Api).await {
        Ok(admitted) => admitted,
        Err(Refused::Auth(rejection)) => {
            let body = json!({"error": {"code": rejection.error, "message": rejection.description, "details": {}}});
            return RestReply { status: rejection.status, body, headers: rejection.headers() };
        }
        Err(Refused::RateLimited { headers, .. }) => {
            let body = json!({"error": {"code": "rate_limited", "message": "Rate limit exceeded; retry after the window resets", "details": {}}});
            return RestReply { status: 429, body, headers };
        }
    };
    let mut reply = authenticated(app, req, &admitted.principal).await;
    reply.headers.extend(admitted.headers);
    reply
}

async fn authenticated(app: &App, req: &RestRequest<'_>, principal: &Principal) -> RestReply {
    let route = match Route::parse(req.method, req.path) {
        Ok(route) => route,
        Err(error) => return RestReply::error(error),
    };
    if !req.body.is_empty() {
        let content_type = req.headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
        let media = content_type.split(';').next().unwrap_or("").trim();
        if !media.eq_ignore_ascii_case("application/json") {
            return RestReply::error(ApiError::bad_request(
                "unsupported_media_type",
                "Send JSON bodies with Content-Type: application/json",
                json!({}),
            ));
        }
    }
    let header = req.headers.get(tenancy::HEADER).and_then(|v| v.to_str().ok());
    // The ingestion route serves a machine client: no membership, no role.
    // Its scope is checked before the registration is looked up, so a token
    // without it gets the step-up challenge, not a workspace error.
    if let Route::EmailIngest(_) = route
        && !principal.has(crate::domain::Scope::EmailsIngest)
    {
        return to_reply(app, ApiError::InsufficientScope { scopes: vec![crate::domain::Scope::EmailsIngest] }.into());
    }
    let resolved = if matches!(route, Route::EmailIngest(_)) {
        tenancy::resolve_machine(&app.store, principal, header).await
    } else {
        tenancy::resolve(&app.store, principal, header).await
    };
    let tenant = match resolved {
        Ok(tenant) => tenant,
        Err(error) => return RestReply::error(workspace_error(error)),
    };
    tracing::Span::current().record("workspace", tenant.workspace.as_str());
    let key = match req.headers.get("idempotency-key") {
        None => None,
        Some(value) => match value.to_str() {
            Ok(k) if (1..=255).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()) => Some(k),
            _ => {
                return RestReply::error(ApiError::bad_request(
                    "invalid_idempotency_key",
                    "Idempotency-Key must be 1 to 255 visible ASCII characters",
                    json!({"header": "Idempotency-Key"}),
                ));
            }
        },
    };
    let ctx = Ctx { app, principal, tenant: &tenant };
    let api_request = ApiRequest { method: req.method, path: req.path, query: req.query, body: req.body };
    let response = match key.filter(|_| route.is_write()) {
        Some(key) => idempotent(&ctx, &route, &api_request, key).await,
        None => dispatch(&ctx, &api_request).await,
    };
    to_reply(app, response)
}

fn to_reply(app: &App, response: ApiResponse) -> RestReply {
    let mut headers = Vec::new();
    if let Some(location) = &response.location {
        headers.push(("location", location.clone()));
    }
    if !response.missing_scopes.is_empty() {
        let rejection = app.api_resource.insufficient_scope(&response.missing_scopes);
        headers.extend(rejection.headers());
    }
    RestReply { status: response.status, body: response.body, headers }
}

fn workspace_error(error: TenancyError) -> ApiError {
    let ids = |w: Vec<crate::domain::WorkspaceId>| w.into_iter().map(|w| w.to_string()).collect::<Vec<_>>();
    match error {
        TenancyError::Required { workspaces } => ApiError::WorkspaceRequired { workspaces: ids(workspaces) },
        TenancyError::NotFound { workspaces } => ApiError::bad_request(
            "workspace_not_found",
            "No workspace with this X-Workspace-Id for you in this organization",
            json!({"header": "X-Workspace-Id", "workspaces": ids(workspaces)}),
        ),
        TenancyError::Store(e) => e.into(),
    }
}

/// Runs a write at most once per `Idempotency-Key`: the first response is
/// stored and replayed for the same request; the same key with a different
/// request is 409. A 5xx is not stored, so the client can retry.
///
/// A replay is a request like any other: the caller's scope and role for the
/// route are checked first, so a key never lends the authority of the token
/// that first used it. The stored response is sealed with the server key
/// (it may hold a webhook secret shown once), bound to its record.
pub async fn idempotent(ctx: &Ctx<'_>, route: &Route, req: &ApiRequest<'_>, key: &str) -> ApiResponse {
    if let Some((scope, permission)) = route.requirements()
        && let Err(error) = authorize(ctx, scope, permission)
    {
        return error.into();
    }
    let fingerprint = fingerprint(req);
    let store = &ctx.app.store;
    let sub = &ctx.principal.sub;
    let purpose = seal_purpose(ctx, key);
    match store.claim_idempotency_key(ctx.tenant, sub, key, &fingerprint).await {
        Ok(Claim::Fresh) => {}
        Ok(Claim::Replay(stored)) => return replayed(ctx, &purpose, stored),
        Ok(Claim::Mismatch) => {
            return ApiError::Conflict {
                code: "idempotency_key_reused",
                message: "This Idempotency-Key was used with a different request".into(),
            }
            .into();
        }
        Ok(Claim::InProgress) => {
            return ApiError::Conflict {
                code: "idempotency_key_in_progress",
                message: "A request with this Idempotency-Key is still running; retry shortly".into(),
            }
            .into();
        }
        Err(e) => return ApiError::from(e).into(),
    }
    let response = dispatch(ctx, req).await;
    if response.status >= 500 {
        if let Err(e) = store.release_idempotency_key(ctx.tenant, sub, key).await {
            tracing::warn!(error = %e, "could not release an idempotency key");
        }
    } else {
        let finished = match ctx.app.secrets.seal_token(&purpose, &response.body) {
            Some(sealed) => {
                let stored =
                    StoredResponse { status: response.status, body: sealed, location: response.location.clone() };
                store.finish_idempotency_key(ctx.tenant, sub, key, &fingerprint, &stored).await
            }
            // Nothing is kept in clear: without a seal, forget the key (a
            // repeat then runs the write again, which every write tolerates).
            None => store.release_idempotency_key(ctx.tenant, sub, key).await,
        };
        if let Err(e) = finished {
            tracing::warn!(error = %e, "could not store an idempotent response");
        }
    }
    response
}

/// The associated data of a stored response: its purpose and the record it
/// belongs to, so a sealed body opens only as the replay of that very key.
fn seal_purpose(ctx: &Ctx<'_>, key: &str) -> String {
    let t = ctx.tenant;
    format!("idempotency\0{}\0{}\0{}\0{key}", t.org, t.workspace, ctx.principal.sub)
}

fn replayed(ctx: &Ctx<'_>, purpose: &str, stored: StoredResponse) -> ApiResponse {
    let Some(body) = ctx.app.secrets.open_token(purpose, &stored.body) else {
        // Sealed with a key no longer configured: the write ran once, but its
        // response cannot be shown again.
        return ApiError::Conflict {
            code: "idempotency_replay_unavailable",
            message: "The request with this Idempotency-Key already ran, but its response can no longer be \
                      shown; read the resource to see its state"
                .into(),
        }
        .into();
    };
    let mut response = ApiResponse::ok(stored.status, body);
    response.location = stored.location;
    response
}

fn fingerprint(req: &ApiRequest<'_>) -> String {
    let mut material = Vec::new();
    for part in [req.method.as_bytes(), req.path.as_bytes(), req.query.unwrap_or("").as_bytes(), req.body] {
        material.extend_from_slice(&(part.len() as u64).to_be_bytes());
        material.extend_from_slice(part);
    }
    hex(digest(&SHA256, &material).as_ref())
}
