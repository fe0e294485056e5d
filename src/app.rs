//! `App`: everything built once per container (configuration, the DynamoDB
//! client, the JWKS cache and verifier, the MCP server's static documents,
//! allowlists) and borrowed by every request. Also the admission step both
//! edges share: authenticate the bearer token, then count the request against
//! the shared rate limit.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::HeaderMap;

use crate::auth::challenge::{Rejection, Resource};
use crate::auth::{self, Audience, JwksCache, Principal, Verifier};
use crate::config::Config;
use crate::domain::{Scope, WorkspaceId};
use crate::mcp::McpServer;
use crate::secrets::Secrets;
use crate::store::Store;
use crate::store::rate_limit::RateDecision;
use crate::api::tenancy;
use crate::outbound::Outbound;

pub struct App {
    pub config: Config,
    pub mcp: McpServer,
    pub store: Store,
    pub verifier: Verifier,
    /// The MCP endpoint as an OAuth protected resource.
    pub mcp_resource: Resource,
    /// The REST API as an OAuth protected resource.
    pub api_resource: Resource,
    /// Signs cursors and confirmations; seals webhook secrets.
    pub secrets: Secrets,
    /// The HTTP client for webhook deliveries (address-checked).
    pub outbound: Outbound,
    /// Lowercase `Host` values this server answers to.
    pub(crate) hosts: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(String),
}

/// An authenticated request within its budget.
#[derive(Debug)]
pub struct Admitted {
    pub principal: Principal,
    /// `X-RateLimit-*` headers for the response.
    pub headers: Vec<(&'static str, String)>,
}

/// Why a request was not admitted.
#[derive(Debug)]
pub enum Refused {
    Auth(Rejection),
    RateLimited { decision: RateDecision, headers: Vec<(&'static str, String)> },
}

impl App {
    pub async fn build(config: Config) -> Result<App, AppError> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(3))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| AppError::HttpClient(e.to_string()))?;
        let jwks = JwksCache::new(config.auth.jwks_url.clone(), client, config.auth.jwks_min_refresh);
        let verifier = Verifier::new(
            config.auth.issuer.clone(),
            config.mcp_resource.clone(),
            config.auth.api_audience.clone(),
            jwks,
        );
        let store = Store::connect(&config.store).await;
        let mcp_resource = Resource::new(&config.mcp_resource, &config.auth.issuer, Scope::USER.to_vec());
        let api_resource = Resource::new(&config.auth.api_audience, &config.auth.issuer, Scope::ALL.to_vec());
        let outbound = Outbound::new(config.webhook_allow_loopback).map_err(AppError::HttpClient)?;
        Ok(App {
            outbound,
            secrets: Secrets::new(&config.signing_secrets),
            hosts: config.host_allowlist(),
            mcp: McpServer::new(),
            store,
            verifier,
            mcp_resource,
            api_resource,
            config,
        })
    }

    pub fn resource(&self, audience: Audience) -> &Resource {
        match audience {
            Audience::Mcp => &self.mcp_resource,
            Audience::Api => &self.api_resource,
        }
    }

    /// Authenticate, then count the request against the caller's budget.
    pub async fn admit(
        &self,
        headers: &HeaderMap,
        query: Option<&str>,
        audience: Audience,
    ) -> Result<Admitted, Refused> {
        let resource = self.resource(audience);
        let token = auth::bearer(headers, query).map_err(|e| Refused::Auth(resource.reject(&e)))?;
        let principal = self.verifier.verify(token, audience).await.map_err(|e| {
            tracing::info!(reason = %e, "token rejected");
            Refused::Auth(resource.reject(&e))
        })?;
        let limit = self.config.rate_limit_per_minute;
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
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        match self.store.hit_rate_limit(&principal.org, &principal.sub, &ws, limit, now).await {
            Ok(decision) => {
                let headers = rate_headers(&decision);
                if decision.allowed {
                    Ok(Admitted { principal, headers })
                } else {
                    Err(Refused::RateLimited { decision, headers })
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
