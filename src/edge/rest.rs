//! The REST edge of `/api/v1`: body limit and media type, authentication
//! (tokens for the REST audience), rate limit, workspace, `Idempotency-Key`,
//! then `api::dispatch`. Answers in the API's error shape with the headers
//! REST clients expect (`WWW-Authenticate`, `Retry-After`, `Location`,
//! `X-RateLimit-*`).

use http::HeaderMap;
use http::StatusCode;
use serde_json::{Value, json};

use super::Edge;
use super::admit::{Counting, NotAdmitted, authenticate};
use crate::api::audit::Origin;
use crate::api::error::ApiError;
use crate::api::idempotency::idempotent;
use crate::api::tenancy::{self, TenancyError, Tenant};
use crate::api::{ApiRequest, ApiResponse, Input, Media, Needs, Route, authorize, dispatch};
use crate::auth::Principal;
use crate::domain::Scope;
use crate::domain::records::Surface;
use crate::gate;
use crate::mcp::jsonrpc::RETRY_AFTER_SECS;
use crate::store::rate_limit::Budget;

/// What the HTTP layer sends back.
#[derive(Debug)]
pub struct RestReply {
    pub status: StatusCode,
    pub body: Value,
    pub headers: Vec<(&'static str, String)>,
}

pub struct RestRequest<'a> {
    pub method: &'a str,
    /// The path after `/api/v1`, percent-encoded.
    pub path: &'a str,
    /// The route `path` matches, when it matches one.
    pub route: Option<Route>,
    pub query: Option<&'a str>,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
    /// The gateway's request id (the audit trail names it).
    pub request_id: &'a str,
}

pub async fn handle(edge: &Edge, req: &RestRequest<'_>) -> RestReply {
    // A raw message's larger limit only where the route takes one.
    let message = req.route.as_ref().is_some_and(|r| r.op().accepts_message) && gate::is_message(req.headers);
    let limit = if message { gate::MAX_MESSAGE_BYTES } else { gate::MAX_BODY_BYTES };
    if gate::too_large(req.headers, req.body.len(), limit) {
        return error_reply(edge, ApiError::TooLarge);
    }
    match tokio::time::timeout(edge.request_timeout, admitted(edge, req)).await {
        Ok(reply) => reply,
        Err(_) => {
            tracing::warn!(budget_ms = edge.request_timeout.as_millis(), "request budget exhausted");
            error_reply(edge, ApiError::Unavailable)
        }
    }
}

/// Admission, then the call. A write is counted against the budget before
/// it runs; a read's count runs alongside it (see `admit`).
///
/// The budget is the person's, except for the ingestion route called by a
/// subject registered as the workspace's mail pipeline: its registration is
/// resolved first (the reads that route always makes, so nothing is added
/// to any request), and a registered call spends the pipeline's ingestion
/// budget; an unregistered one the person's, like everything else.
async fn admitted(edge: &Edge, req: &RestRequest<'_>) -> RestReply {
    let principal = match authenticate(edge, &edge.api_resource, req.headers, req.query).await {
        Ok(principal) => principal,
        Err(refused) => return not_admitted(refused),
    };
    let pipeline = match req.route.as_ref().map(|route| route.op().needs) {
        Some(Needs::Scope(scope @ Scope::EmailsIngest)) if principal.has(scope) => {
            let header = req.headers.get(tenancy::HEADER).and_then(|v| v.to_str().ok());
            // Boxed, as it always reads the table: its future would
            // otherwise size every request's.
            Some(Box::pin(edge.api.resolve_pipeline(&principal, header)).await)
        }
        _ => None,
    };
    let budget = if matches!(pipeline, Some(Ok(_))) { Budget::Ingestion } else { Budget::Person };
    let run = async {
        match authenticated(edge, req, &principal, pipeline).await {
            Ok(response) => {
                let headers = response.location.map(|l| ("location", l)).into_iter().collect();
                RestReply { status: response.status, body: response.body, headers }
            }
            Err(error) => error_reply(edge, error),
        }
    };
    let (mut reply, rate) = if req.method == "GET" {
        let counting = match edge.limiter.admit_read(&principal, budget) {
            Ok(counting) => counting,
            Err(refused) => return not_admitted(refused),
        };
        let reply = run.await;
        match counting.map_or(Ok(Vec::new()), Counting::finish) {
            Ok(rate) => (reply, rate),
            Err(refused) => return not_admitted(refused),
        }
    } else {
        match edge.limiter.admit_write(&principal, budget).await {
            Ok(rate) => (run.await, rate),
            Err(refused) => return not_admitted(refused),
        }
    };
    reply.headers.extend(rate);
    reply
}

fn not_admitted(refused: NotAdmitted) -> RestReply {
    match refused {
        NotAdmitted::Unauthenticated(challenge) => {
            let body = json!({"error": {"code": challenge.error, "message": challenge.description, "details": {}}});
            RestReply { status: challenge.status, body, headers: challenge.headers() }
        }
        NotAdmitted::RateLimited { headers, .. } => {
            let body = json!({"error": {"code": "rate_limited", "message": "Rate limit exceeded; retry after the window resets", "details": {}}});
            RestReply { status: StatusCode::TOO_MANY_REQUESTS, body, headers }
        }
    }
}

/// The API's error shape, with the headers that go with it: `Allow` on 405,
/// the REST resource's step-up challenge on `insufficient_scope`.
fn error_reply(edge: &Edge, error: ApiError) -> RestReply {
    let mut headers = Vec::new();
    match &error {
        ApiError::MethodNotAllowed { allow } => headers.push(("allow", allow.clone())),
        ApiError::Unavailable => headers.push(("retry-after", RETRY_AFTER_SECS.to_string())),
        ApiError::InsufficientScope { scopes } => {
            headers.extend(edge.api_resource.insufficient_scope(scopes).headers())
        }
        _ => {}
    }
    RestReply { status: error.status(), body: error.body(), headers }
}

/// The call, once admitted. `pipeline`: the machine route's workspace when
/// admission already resolved it.
async fn authenticated(
    edge: &Edge,
    req: &RestRequest<'_>,
    principal: &Principal,
    pipeline: Option<Result<Tenant, TenancyError>>,
) -> Result<ApiResponse, ApiError> {
    let parsed;
    let route = match &req.route {
        Some(route) => route,
        // Which error (no such route, or another method) is worked out again.
        None => {
            parsed = Route::parse(req.method, req.path)?;
            &parsed
        }
    };
    let media = if route.op().accepts_message && gate::is_message(req.headers) {
        Media::Message
    } else if req.body.is_empty() || gate::is_json(req.headers) {
        Media::Json
    } else if route.op().accepts_message {
        return Err(ApiError::bad_request(
            "unsupported_media_type",
            "Send a JSON body with Content-Type: application/json, or the raw message with Content-Type: message/rfc822",
            json!({}),
        ));
    } else {
        return Err(ApiError::bad_request(
            "unsupported_media_type",
            "Send JSON bodies with Content-Type: application/json",
            json!({}),
        ));
    };
    let header = req.headers.get(tenancy::HEADER).and_then(|v| v.to_str().ok());
    let tenant = match route.op().needs {
        // The scope of a route that is not a workspace's is checked before
        // its tenant is looked up, so a token without it gets the step-up
        // challenge, not a tenancy error.
        Needs::Scope(scope) | Needs::Org(scope) if !principal.has(scope) => {
            return Err(ApiError::InsufficientScope { scopes: vec![scope] });
        }
        // A route for a machine client (the ingestion pipeline): no
        // membership, no role: its registration (resolved at admission,
        // which needs it to pick the budget).
        // Boxed, as the two resolutions that always read the table: their
        // futures would otherwise size every request's.
        Needs::Scope(_) => match pipeline {
            Some(resolved) => resolved?,
            None => Box::pin(edge.api.resolve_pipeline(principal, header)).await?,
        },
        // Organization administration: the organization itself.
        Needs::Org(_) => Box::pin(edge.api.resolve_org_admin(principal)).await?,
        Needs::Role(..) | Needs::Handler { .. } | Needs::Job { .. } => edge.api.resolve(principal, header).await?,
    };
    crate::telemetry::note(|line| line.workspace = Some(tenant.workspace.as_str().to_owned()));
    let key = match req.headers.get("idempotency-key") {
        None => None,
        Some(value) => match value.to_str() {
            Ok(k) if (1..=255).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()) => Some(k),
            _ => {
                return Err(ApiError::bad_request(
                    "invalid_idempotency_key",
                    "Idempotency-Key must be 1 to 255 visible ASCII characters",
                    json!({"header": "Idempotency-Key"}),
                ));
            }
        },
    };
    let origin = Origin { request_id: req.request_id, surface: Surface::Rest, client: None, via: None };
    let ctx = edge.api.ctx(principal, &tenant, origin);
    // Authorized before anything runs or is replayed.
    let permit = authorize(&ctx, route.op())?;
    match key.filter(|_| route.op().is_write()) {
        Some(key) => {
            let api_request =
                ApiRequest { method: req.method, path: req.path, query: req.query, body: req.body, media };
            // Boxed: its table calls would size every request's future.
            Box::pin(idempotent(&ctx, permit, route, &api_request, key)).await
        }
        None => dispatch(&ctx, permit, &Input::rest_as(route, req.query, req.body, media)).await,
    }
}
