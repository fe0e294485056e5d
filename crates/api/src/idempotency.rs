//! `Idempotency-Key` on writes: the first response is kept (24 h, by the
//! store) and replayed for a repeat of the same request by the same person in
//! the same workspace; the same key with a different request is 409.

use aws_lc_rs::digest::{SHA256, digest};
use http::StatusCode;

use super::error::ApiError;
use super::{ApiRequest, ApiResponse, Ctx, Permit, Route, dispatch};
use inbox_domain::hex;
use inbox_store::idempotency::{KeyState, StoredResponse};

/// Runs an authorized write at most once per `Idempotency-Key`: the first
/// response is stored and replayed for the same request; the same key with a
/// different request is 409. A 5xx is not stored, so the client can retry.
///
/// A replay is a request like any other: it needs the `Permit` of this call's
/// own authorization and passes the checks the handler would make
/// (`super::authorize_replay`), so a key never lends the authority of the
/// token that first used it. The stored response is sealed with the server key (it may
/// hold a webhook secret shown once), bound to its record.
pub async fn idempotent(
    ctx: &Ctx<'_>,
    permit: Permit,
    route: &Route,
    req: &ApiRequest<'_>,
    key: &str,
) -> Result<ApiResponse, ApiError> {
    let fingerprint = fingerprint(req);
    let store = ctx.store;
    let sub = &ctx.principal.sub;
    let purpose = seal_purpose(ctx, key);
    match store.begin_idempotent(ctx.tenant, sub, key, &fingerprint).await? {
        KeyState::Fresh => {}
        KeyState::Replay(stored) => {
            super::authorize_replay(ctx, route).await?;
            return replayed(ctx, &purpose, stored);
        }
        KeyState::Mismatch => {
            return Err(ApiError::Conflict {
                code: "idempotency_key_reused",
                message: "This Idempotency-Key was used with a different request".into(),
            });
        }
        KeyState::InProgress => {
            return Err(ApiError::Conflict {
                code: "idempotency_key_in_progress",
                message: "A request with this Idempotency-Key is still running; retry shortly".into(),
            });
        }
    }
    let result = dispatch(ctx, permit, &super::Input::rest_as(route, req.query, req.body, req.media)).await;
    let kept = match &result {
        Ok(response) => Some(StoredResponse {
            status: response.status.as_u16(),
            body: response.body.to_string(),
            location: response.location.clone(),
        }),
        Err(error) if !error.status().is_server_error() => {
            Some(StoredResponse { status: error.status().as_u16(), body: error.body().to_string(), location: None })
        }
        Err(_) => None,
    };
    let sealed = kept.and_then(|mut stored| {
        let body: serde_json::Value = serde_json::from_str(&stored.body).ok()?;
        stored.body = ctx.secrets.seal_token(&purpose, &body)?;
        Some(stored)
    });
    let finished = match sealed {
        Some(stored) => store.finish_idempotent(ctx.tenant, sub, key, &fingerprint, &stored).await,
        // A 5xx, or nothing that could be sealed (nothing is kept in clear):
        // forget the key, so a repeat runs the write again.
        None => store.forget_idempotent(ctx.tenant, sub, key).await,
    };
    if let Err(e) = finished {
        tracing::warn!(error = %e, "could not store an idempotent response");
    }
    result
}

/// The associated data of a stored response: its purpose and the record it
/// belongs to, so a sealed body opens only as the replay of that very key.
fn seal_purpose(ctx: &Ctx<'_>, key: &str) -> String {
    let t = ctx.tenant;
    format!("idempotency\0{}\0{}\0{}\0{key}", t.org, t.workspace, ctx.principal.sub)
}

fn replayed(ctx: &Ctx<'_>, purpose: &str, stored: StoredResponse) -> Result<ApiResponse, ApiError> {
    let Some(body) = ctx.secrets.open_token(purpose, &stored.body) else {
        // Sealed with a key no longer configured: the write ran once, but its
        // response cannot be shown again.
        return Err(ApiError::Conflict {
            code: "idempotency_replay_unavailable",
            message: "The request with this Idempotency-Key already ran, but its response can no longer be \
                      shown; read the resource to see its state"
                .into(),
        });
    };
    let Ok(status) = StatusCode::from_u16(stored.status) else {
        tracing::error!(status = stored.status, "a stored answer with an impossible status");
        return Err(ApiError::Unavailable);
    };
    let mut response = ApiResponse::ok(status, body);
    response.location = stored.location;
    Ok(response)
}

fn fingerprint(req: &ApiRequest<'_>) -> String {
    let mut material = Vec::new();
    for part in [req.method.as_bytes(), req.path.as_bytes(), req.query.unwrap_or("").as_bytes(), req.body] {
        material.extend_from_slice(&(part.len() as u64).to_be_bytes());
        material.extend_from_slice(part);
    }
    hex(digest(&SHA256, &material).as_ref())
}
