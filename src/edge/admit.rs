//! Admission, the same for both surfaces: the bearer token is verified for
//! the resource it was sent to (the MCP endpoint or the REST API), then the
//! request is counted against the caller's shared per-minute budget.

use http::HeaderMap;

use super::Edge;
use crate::api::tenancy;
use crate::auth::challenge::{Challenge, Resource};
use crate::auth::{self, Principal};
use crate::domain::WorkspaceId;
use crate::store::rate_limit::RateDecision;

/// An authenticated request within its budget.
#[derive(Debug)]
pub struct Admitted {
    pub principal: Principal,
    /// `X-RateLimit-*` headers for the response.
    pub headers: Vec<(&'static str, String)>,
}

/// Why a request was not admitted.
#[derive(Debug)]
pub enum NotAdmitted {
    /// The token is missing, malformed or invalid, or its keys cannot be loaded.
    Unauthenticated(Challenge),
    /// Over the budget: when to retry, the limit, and the headers to send.
    RateLimited { retry_after: u64, limit: u32, headers: Vec<(&'static str, String)> },
}

/// Authenticate for `resource`, then count the request against the caller's budget.
pub async fn admit(
    edge: &Edge,
    resource: &Resource,
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<Admitted, NotAdmitted> {
    let token = auth::bearer(headers, query).map_err(|e| NotAdmitted::Unauthenticated(resource.reject(&e)))?;
    let principal = edge.verifier.verify(token, &resource.uri).await.map_err(|e| {
        tracing::info!(reason = %e, "token rejected");
        NotAdmitted::Unauthenticated(resource.reject(&e))
    })?;
    let limit = edge.rate_limit_per_minute;
    if limit == 0 {
        return Ok(Admitted { principal, headers: Vec::new() });
    }
    // The budget is per principal and requested workspace; a malformed
    // workspace header shares the "no workspace" budget.
    let ws = headers
        .get(tenancy::HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(WorkspaceId::parse)
        .map_or_else(|| "-".to_owned(), |w| w.to_string());
    let now = crate::sys::unix_now();
    match edge.api.store.hit_rate_limit(&principal.org, &principal.sub, &ws, limit, now).await {
        Ok(decision) => {
            let headers = rate_headers(&decision);
            if decision.allowed {
                Ok(Admitted { principal, headers })
            } else {
                Err(NotAdmitted::RateLimited {
                    retry_after: decision.reset_secs.max(1),
                    limit: decision.limit,
                    headers,
                })
            }
        }
        Err(error) => {
            // Availability over strictness: a counter that cannot be
            // updated does not turn every request away.
            tracing::error!(%error, "rate-limit counter unavailable; admitting the request");
            Ok(Admitted { principal, headers: Vec::new() })
        }
    }
}

fn rate_headers(d: &RateDecision) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("x-ratelimit-limit", d.limit.to_string()),
        ("x-ratelimit-remaining", d.remaining.to_string()),
        ("x-ratelimit-reset", d.reset_secs.to_string()),
    ];
    if !d.allowed {
        headers.push(("retry-after", d.reset_secs.max(1).to_string()));
    }
    headers
}
