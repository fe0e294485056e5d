//! The conformance fixture server (`dev` builds only; not in the Lambda
//! artefacts): this crate's own MCP pipeline — the edge handler, era
//! selection, routing headers, authentication, narrowing, `input_required`,
//! tasks over the job queue with the local worker — serving the official
//! conformance runner's fixture catalogue (`inbox_conformance`), or the
//! product's with `product` as the argument. `scripts/conformance.sh` runs
//! the runner against both (docs/conformance.md).
//!
//! `conformance [fixtures|product]`, configured like `make run` (`PORT`,
//! `DEV_ISSUER_PORT`, `DEV_ISSUER_KEY`, `TABLE_NAME`, `DYNAMODB_ENDPOINT`, …).
//! At start it creates its table and seeds the demo data, serves the
//! development issuer, and runs queued jobs in-process, each on its own task.
//!
//! Authentication is not switched off: the runner sends no token, so this
//! server mints a development token at start (`CONFORMANCE_SUB` in
//! `CONFORMANCE_ORG`, by default `usr_other` in `org_other`, the seeded
//! admin of a single workspace, with every person scope) and its HTTP front
//! adds `Authorization: Bearer <that token>` to every request that has no
//! `Authorization` header, before the same edge handler verifies it as it
//! verifies any token. A request that brings its own keeps it.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;
use http::header::AUTHORIZATION;
use inbox::app::{App, Serving};
use inbox::config::{Config, Mode};
use inbox::dev::DevIssuer;
use inbox::edge::local::{Front, ReadTimeouts, serve_fronted};
use inbox::store::Store;

/// How often the in-process worker looks for queued jobs.
const POLL_EVERY: Duration = Duration::from_millis(100);

#[tokio::main]
async fn main() -> ExitCode {
    // Joined when main returns: no short command exits while it runs.
    let _warm = inbox::sys::warm_crypto();
    let Some(config) = inbox::app::configure().await else { return ExitCode::FAILURE };
    match serve(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("conformance: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(config: Config) -> Result<(), String> {
    if config.mode != Mode::Local {
        return Err("the fixture server runs locally only".into());
    }
    let serving = match std::env::args().nth(1).as_deref() {
        None | Some("fixtures") => inbox_conformance::serving(),
        Some("product") => Serving::default(),
        Some(other) => return Err(format!("unknown catalogue {other:?}: use fixtures or product")),
    };
    let token = token(&config)?;
    let store = Store::connect(&config.store).await;
    store.create_table().await.map_err(|e| format!("create-table: {e}"))?;
    let signing = inbox::secret_store::signing_secrets(&config.secret_source()).await.map_err(|e| e.to_string())?;
    inbox::seed::seed(&store, &inbox::secrets::Secrets::new(&signing)).await.map_err(|e| format!("seed: {e}"))?;
    inbox::app::start_dev_issuer(&config).await?;

    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, config.port));
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let app = App::build_with(config, serving).await.map_err(|e| format!("start-up failed: {e}"))?;
    tokio::spawn(inbox::worker::poll_concurrently(Arc::clone(&app.runner), POLL_EVERY, Duration::ZERO));

    let bearer = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|e| e.to_string())?;
    let front: Front = Arc::new(move |headers| {
        if !headers.contains_key(AUTHORIZATION) {
            headers.insert(AUTHORIZATION, bearer.clone());
        }
    });
    tracing::info!(%addr, "conformance fixture server on http://{addr}/mcp");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    serve_fronted(listener, Arc::clone(&app.edge), shutdown, ReadTimeouts::default(), Some(front)).await;
    Ok(())
}

/// The development token the front adds: every person scope, for a day.
fn token(config: &Config) -> Result<String, String> {
    let dev = config.dev_issuer.as_ref().ok_or("the fixture server needs DEV_ISSUER_KEY (its token's issuer)")?;
    let issuer = DevIssuer::load_or_create(&dev.key_path).map_err(|e| e.to_string())?;
    let env = |name: &str, default: &str| std::env::var(name).ok().filter(|v| !v.is_empty()).unwrap_or(default.into());
    let scopes: Vec<&str> = inbox::domain::Scope::USER.iter().map(|s| s.as_str()).collect();
    let audiences = [config.mcp_resource.clone(), config.auth.api_audience.clone()];
    issuer
        .mint(
            &dev.issuer(),
            &audiences,
            &env("CONFORMANCE_SUB", "usr_other"),
            &env("CONFORMANCE_ORG", "org_other"),
            &scopes.join(" "),
            24 * 60 * 60,
        )
        .map_err(|e| e.to_string())
}
