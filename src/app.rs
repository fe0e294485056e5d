//! The composition roots: what each binary builds once per container.
//!
//! - `configure`: the configuration and its logs and metrics, for both binaries.
//! - `App::build` (the MCP/REST function, `serve`, the tests): configuration,
//!   the DynamoDB client, the JWKS cache and verifier, the secrets, the
//!   outbound client, the MCP server's static documents, handed to each layer
//!   as the narrow context it uses: the edge gets `Edge`, the local poller
//!   `worker::Runner`, the operations `api::Services`.
//! - `build_runner` (the worker Lambda): only what running a job needs — the
//!   store, the secrets, the outbound client. The worker checks no token, so
//!   its INIT fetches no issuer keys and builds no edge.
//!
//! Nothing below imports this module; only the binaries (and the tests) see it.

use std::sync::Arc;
use std::time::Duration;

use crate::api::Services;
use crate::api::tenancy::MembershipCache;
use crate::auth::challenge::Resource;
use crate::auth::{JwksCache, Verifier};
use crate::config::Config;
use crate::domain::Scope;
use crate::edge::Edge;
use crate::edge::admit::RateLimiter;
use crate::mcp::McpServer;
use crate::outbound::Outbound;
use crate::secrets::Secrets;
use crate::store::Store;
use crate::worker::Runner;

pub struct App {
    pub config: Config,
    pub store: Store,
    /// Signs cursors and confirmations; seals webhook secrets and stored responses.
    pub secrets: Arc<Secrets>,
    /// Both HTTP surfaces (Lambda and the local port).
    pub edge: Arc<Edge>,
    /// The job runner (the worker Lambda, or the local poller).
    pub runner: Arc<Runner>,
}

/// The configuration from the environment, with logs and metrics set up as
/// it says; or `None` once the reason is on stderr and, on Lambda, reported
/// as the init error (`report_init_error`).
pub async fn configure() -> Option<Config> {
    match Config::from_env() {
        Ok(config) => {
            crate::telemetry::init(config.log_format);
            crate::telemetry::enable_metrics(config.metrics);
            Some(config)
        }
        Err(error) => {
            let message = format!("configuration error: {error}");
            eprintln!("{message}");
            report_init_error("ConfigurationError", &message).await;
            None
        }
    }
}

/// On Lambda, reports a failed INIT (bad configuration, a client that could
/// not be built) to the Runtime API, so the failure is an init error with a
/// readable message in the console and logs, not a process that dies
/// silently and is restarted over and over. Elsewhere, does nothing.
pub async fn report_init_error(kind: &str, message: &str) {
    let Ok(api) = std::env::var("AWS_LAMBDA_RUNTIME_API") else { return };
    let url = format!("http://{api}/2018-06-01/runtime/init/error");
    let error_type = format!("Runtime.{kind}");
    let body = serde_json::json!({"errorMessage": message, "errorType": error_type});
    let sent = match reqwest::Client::builder().timeout(Duration::from_secs(2)).build() {
        Ok(client) => {
            client
                .post(url)
                .header("lambda-runtime-function-error-type", error_type.as_str())
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
        }
        Err(e) => {
            eprintln!("cannot report the init error: {e}");
            return;
        }
    };
    if let Err(e) = sent {
        eprintln!("cannot report the init error: {e}");
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(String),
    #[error(transparent)]
    Secret(crate::secret_store::SecretError),
    #[error("a start-up task failed: {0}")]
    Task(String),
}

impl App {
    pub async fn build(config: Config) -> Result<App, AppError> {
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(crate::tls::client_config())
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(3))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| AppError::HttpClient(e.to_string()))?;
        let jwks = JwksCache::new(config.auth.jwks_url.clone(), client, config.auth.jwks_min_refresh);
        // INIT's round trips side by side: the DynamoDB client's setup, the
        // signing secret from Secrets Manager and, on Lambda, the issuer's
        // keys (which the first request would otherwise fetch while it waits).
        let source = config.secret_source();
        let prime = async {
            if config.mode == crate::config::Mode::Lambda {
                jwks.prime().await;
            }
        };
        // The secret on a task of its own: its client's setup is CPU work that
        // runs on another worker thread meanwhile.
        let secret = tokio::spawn(async move { crate::secret_store::signing_secrets(&source).await });
        let ((), store) = tokio::join!(prime, Store::connect(&config.store));
        let secrets = joined_secrets(secret).await?;
        let verifier = Verifier::new(config.auth.issuer.clone(), jwks).with_claims(config.auth.claims.clone());
        let mut mcp_resource = Resource::new(&config.mcp_resource, &config.auth.issuer, Scope::USER.to_vec());
        if let Some(audience) = &config.auth.mcp_audience {
            mcp_resource.audience.clone_from(audience);
        }
        let api_resource = Resource::new(&config.auth.api_audience, &config.auth.issuer, Scope::ALL.to_vec());
        let api = Services {
            store: store.clone(),
            secrets: Arc::clone(&secrets),
            webhook_allow_loopback: config.webhook_allow_loopback,
            memberships: MembershipCache::new(config.membership_cache),
        };
        let edge = Edge {
            mcp: McpServer::new(Arc::clone(&secrets), config.confirmation_ttl_secs, mcp_resource.clone()),
            api,
            verifier,
            mcp_resource,
            api_resource,
            allowed_origins: config.origin_allowlist(),
            hosts: config.host_allowlist(),
            limiter: RateLimiter::new(config.rate_limit_per_minute, store.clone())
                .with_ingest_budget(config.ingest_rate_limit_per_minute),
            request_timeout: config.request_timeout,
        };
        let runner = runner(&config, store.clone(), Arc::clone(&secrets))?;
        Ok(App { config, store, secrets, edge: Arc::new(edge), runner: Arc::new(runner) })
    }
}

/// The worker Lambda's composition root (see the module docs): the store and
/// the signing secret side by side, then the runner.
pub async fn build_runner(config: &Config) -> Result<Runner, AppError> {
    let source = config.secret_source();
    let secret = tokio::spawn(async move { crate::secret_store::signing_secrets(&source).await });
    let store = Store::connect(&config.store).await;
    runner(config, store, joined_secrets(secret).await?)
}

/// The server's secrets from the signing secret fetched on its own task.
async fn joined_secrets(
    secret: tokio::task::JoinHandle<Result<Vec<String>, crate::secret_store::SecretError>>,
) -> Result<Arc<Secrets>, AppError> {
    match secret.await {
        Ok(signing) => Ok(Arc::new(Secrets::new(&signing.map_err(AppError::Secret)?))),
        Err(e) => Err(AppError::Task(e.to_string())),
    }
}

fn runner(config: &Config, store: Store, secrets: Arc<Secrets>) -> Result<Runner, AppError> {
    let outbound = Outbound::new(config.webhook_allow_loopback).map_err(AppError::HttpClient)?;
    Ok(Runner { store, secrets, outbound, lease_secs: config.job_lease_secs, shards: Default::default() })
}
