//! The composition roots: what each binary builds once per container.
//!
//! - `configure`: the configuration and its logs and metrics, for both binaries.
//! - `App::build` (the MCP/REST function, `serve`, the tests): configuration,
//!   the DynamoDB client, the JWKS cache and verifier, the secrets, the
//!   outbound client, the MCP server's static documents, handed to each layer
//!   as the narrow context it uses: the edge gets `Edge`, the local poller
//!   `worker::Runner`, the operations `api::Services`.
//! - `App::build_with`: the same, serving another MCP catalogue and running
//!   the job kinds it registers (`Serving`: the conformance fixture server
//!   gives one; the product's binaries never do).
//! - `build_runner` (the worker Lambda): only what running a job needs — the
//!   store, the secrets, the outbound client. The worker checks no token, so
//!   its INIT fetches no issuer keys and builds no edge.
//!
//! - `start_dev_issuer`: the development authorization server beside a
//!   local server (`dev` builds), for both local binaries.
//!
//! Nothing below imports this module; only the binaries (and the tests) see it.

use std::sync::Arc;
use std::time::Duration;

use crate::api::Services;
use crate::api::tenancy::{self, MembershipCache};
use crate::auth::challenge::Resource;
use crate::auth::{JwksCache, Verifier};
use crate::config::Config;
use crate::domain::Scope;
use crate::edge::Edge;
use crate::edge::admit::RateLimiter;
use crate::mcp::McpServer;
use crate::mcp::surface::Catalogue;
use crate::outbound::Outbound;
use crate::secrets::Secrets;
use crate::store::Store;
use crate::worker::{Extensions, Runner};

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

/// What a binary may give the server besides its configuration: another MCP
/// catalogue, and the extension job kinds that catalogue's tools start, each
/// with what runs it (the conformance fixture server gives both; the
/// product neither).
#[derive(Default, Clone)]
pub struct Serving {
    pub catalogue: Option<Arc<dyn Catalogue>>,
    pub extensions: Extensions,
}

impl App {
    pub async fn build(config: Config) -> Result<App, AppError> {
        Self::build_with(config, Serving::default()).await
    }

    /// `build`, serving `serving`'s catalogue (the product's when none).
    pub async fn build_with(config: Config, serving: Serving) -> Result<App, AppError> {
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(crate::tls::client_config())
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(3))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| AppError::HttpClient(e.to_string()))?;
        let jwks = JwksCache::new(config.auth.jwks_url.clone(), client, config.auth.jwks_min_refresh)
            .with_max_age(config.auth.jwks_max_age, config.auth.jwks_max_stale);
        // INIT's round trips side by side: the DynamoDB client's setup, the
        // signing secret from Secrets Manager and, on Lambda, the issuer's
        // keys and the table's first connections (which the first request
        // would otherwise open, and fetch, while it waits).
        let source = config.secret_source();
        let lambda = config.mode == crate::config::Mode::Lambda;
        let prime = async {
            if lambda {
                jwks.prime().await;
            }
        };
        // As many connections as a cold container's first read uses at once:
        // its tenancy reads and, with a rate limit, the counter's update
        // beside them (`RateLimiter::admit_read`).
        let first_calls = tenancy::COLD_READS + usize::from(config.rate_limit_per_minute > 0);
        let table = async {
            let store = Store::connect(&config.store).await;
            if lambda {
                store.prime(first_calls).await;
            }
            store
        };
        // The secret on a task of its own: its round trips overlap the
        // DynamoDB client's setup (on the one thread the server runs, their
        // CPU work does not).
        let secret = tokio::spawn(async move { crate::secret_store::signing_secrets(&source).await });
        // The schema checker's one-time set-up, on this thread while the
        // round trips above wait on the network (`api::shape::warm_up`).
        let warm = async {
            tokio::task::yield_now().await;
            crate::api::shape::warm_up();
        };
        let ((), store, ()) = tokio::join!(prime, table, warm);
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
        let card = crate::mcp::card::Card::new(&mcp_resource.uri);
        let edge = Edge {
            mcp: match serving.catalogue {
                Some(catalogue) => McpServer::with_catalogue(
                    Arc::clone(&secrets),
                    config.confirmation_ttl_secs,
                    mcp_resource.clone(),
                    catalogue,
                ),
                None => McpServer::new(Arc::clone(&secrets), config.confirmation_ttl_secs, mcp_resource.clone()),
            }
            .with_content_cap(config.content_policy_cap),
            api,
            verifier,
            mcp_resource,
            api_resource,
            card,
            callers: crate::gate::Allowlist::new(config.host_allowlist(), config.origin_allowlist()),
            limiter: RateLimiter::new(config.rate_limit_per_minute, store.clone())
                .with_ingest_budget(config.ingest_rate_limit_per_minute),
            request_timeout: config.request_timeout,
        };
        let mut runner = runner(&config, store.clone(), Arc::clone(&secrets))?;
        runner.extensions = serving.extensions;
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
    Ok(Runner {
        store,
        secrets,
        outbound,
        lease_secs: config.job_lease_secs,
        extensions: Extensions::default(),
        shards: Default::default(),
    })
}

/// Serves the development authorization server on loopback, when
/// configured: its metadata, JWKS, registration, login and token endpoints
/// (`crate::dev::oauth`). `AUTO_APPROVE=<sub>` approves every login as that
/// demo person, without the consent page; `DEV_ACCESS_TOKEN_SECS` shortens
/// the access tokens' life.
#[cfg(feature = "dev")]
pub async fn start_dev_issuer(config: &Config) -> Result<(), String> {
    if let Some(dev) = &config.dev_issuer {
        let issuer = crate::dev::DevIssuer::load_or_create(&dev.key_path).map_err(|e| e.to_string())?;
        let addr = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, dev.port));
        let listener =
            tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let store = crate::store::Store::connect(&config.store).await;
        let resources = vec![config.mcp_resource.clone(), config.auth.api_audience.clone()];
        // The browser origins the main server accepts, it accepts too.
        let options = crate::dev::oauth::Options {
            allowed_origins: config.allowed_origins.clone(),
            ..crate::dev::oauth::Options::from_env()?
        };
        // Client documents on loopback only under the development flag, as
        // for webhooks; `DEV_CLIENT_DOCUMENT_CA` names a PEM file of
        // authorities trusted besides the public roots (a test serving a
        // client document over https on loopback).
        let outbound = match std::env::var_os("DEV_CLIENT_DOCUMENT_CA").filter(|p| !p.is_empty()) {
            Some(path) => {
                let pem = std::fs::read(&path)
                    .map_err(|e| format!("DEV_CLIENT_DOCUMENT_CA={}: {e}", path.to_string_lossy()))?;
                crate::outbound::Outbound::also_trusting(config.webhook_allow_loopback, &pem)
                    .map_err(|e| format!("DEV_CLIENT_DOCUMENT_CA={}: {e}", path.to_string_lossy()))?
            }
            None => crate::outbound::Outbound::new(config.webhook_allow_loopback)?,
        };
        let server = crate::dev::oauth::AuthServer::new(issuer, &dev.issuer(), resources, store, outbound, options);
        let server = Arc::new(server);
        tracing::info!(issuer = %dev.issuer(), "development authorization server (OAuth 2.1, PKCE) listening");
        let handler: crate::edge::local::Handler = Arc::new(move |req| {
            let server = Arc::clone(&server);
            Box::pin(async move { server.handle(req).await })
        });
        tokio::spawn(crate::edge::local::serve_fn(listener, handler, std::future::pending()));
    }
    Ok(())
}

/// A build without the `dev` feature has no development issuer to serve.
#[cfg(not(feature = "dev"))]
pub async fn start_dev_issuer(config: &Config) -> Result<(), String> {
    match config.dev_issuer {
        Some(_) => {
            Err("DEV_ISSUER_KEY is set, but this build has no development issuer (build with the dev feature)".into())
        }
        None => Ok(()),
    }
}
