//! Composition root. The command line (`inbox::cli::Cli`) is parsed before
//! anything else, so that `--help` on every command, `--version` and a wrong
//! command line need no configuration. With no command (or `serve`): on
//! Lambda, serve API Gateway events; elsewhere, serve the same handler on
//! `127.0.0.1:$PORT`. `admin` administers organizations (`inbox::cli`) and
//! `openapi` prints the `/api/v1` OpenAPI document, neither with the
//! server's configuration. Development subcommands, in builds with the `dev`
//! feature (the default; the Lambda artefacts are built without it):
//! `create-table`, `seed`, `dev-token`, `invoke`, `receiver`, `snapshot`, and
//! the development issuer beside a local `serve`.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;

use inbox::cli::Command;
#[cfg(feature = "dev")]
use inbox::cli::{DevCommand, Snapshot};
use inbox::config::{Config, Mode};
#[cfg(feature = "dev")]
use inbox::dev::DevIssuer;
#[cfg(feature = "dev")]
use inbox::store::Store;
use inbox::{App, edge};

/// mimalloc instead of the C library's allocator: a request allocates and
/// frees a few hundred small blocks (JSON values, the SDK's request and
/// response), and glibc's malloc was a fifth of a read's instructions
/// (`make profile`); measured side by side in `make bench`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One thread runs everything: a Lambda function answers one event at a
/// time on at most one vCPU, and the work-stealing scheduler's bookkeeping
/// (its queues, parking, cross-thread wake-ups) was 3–7 % of a cheap
/// request's CPU beside the single-threaded one (`make bench`). The local
/// server serves its connections on the same thread: nothing in a request
/// blocks it (table, token issuer and webhook calls are all awaited).
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let command = match inbox::cli::parse(std::env::args_os()) {
        Ok(cli) => cli.command.unwrap_or(Command::Serve),
        Err(exit) => return exit,
    };
    match command {
        Command::Serve => {
            // Joined when main returns: no short command exits while it runs.
            let _warm = inbox::sys::warm_crypto();
            let Some(config) = inbox::app::configure().await else { return ExitCode::FAILURE };
            ended(match config.mode {
                Mode::Lambda => run_lambda(config).await,
                Mode::Local => serve_local(config).await,
            })
        }
        // Organization administration needs the table only, not the server's configuration.
        Command::Admin(admin) => inbox::cli::run(&admin).await,
        Command::Openapi => emit(&format!("{}\n", inbox::api::openapi::document())),
        // The release's version (docs/operations.md, "Versions"): the CLI and the stack it
        // administers are deployed together.
        Command::Version => emit(&inbox::cli::command().render_version()),
        #[cfg(feature = "dev")]
        Command::Dev(command) => develop(command).await,
    }
}

/// The exit code of a command that ended with `outcome` (what went wrong on stderr).
fn ended(outcome: Result<(), String>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// A development command: elsewhere than on Lambda, and with the configuration (all of
/// it but for `create-table`, which needs the table's settings only).
#[cfg(feature = "dev")]
async fn develop(command: DevCommand) -> ExitCode {
    if matches!(command, DevCommand::CreateTable) && std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_none() {
        // Like `admin`: no issuer or audience is needed to make the table.
        return ended(create_table().await);
    }
    // Joined when develop returns: no short command exits while it runs.
    let _warm = inbox::sys::warm_crypto();
    let Some(config) = inbox::app::configure().await else { return ExitCode::FAILURE };
    if let Mode::Lambda = config.mode {
        // The command's name as given: the first argument (the binary has no global flags).
        let name = std::env::args_os().nth(1).unwrap_or_default();
        let name = name.to_string_lossy();
        return ended(Err(format!("{name} is a development command and does not run on Lambda")));
    }
    ended(match command {
        DevCommand::CreateTable => create_table().await,
        DevCommand::Seed => match inbox::secret_store::signing_secrets(&config.secret_source()).await {
            Ok(signing) => {
                let store = Store::connect(&config.store).await;
                inbox::seed::seed(&store, &inbox::secrets::Secrets::new(&signing))
                    .await
                    .map_err(|e| format!("seed: {e}"))
            }
            Err(e) => Err(format!("seed: {e}")),
        },
        DevCommand::DevToken => dev_token(&config),
        DevCommand::Invoke { event } => invoke(config, &event).await,
        DevCommand::Receiver => receiver().await,
        DevCommand::Snapshot(action) => snapshot(&config, &action).await,
    })
}

/// A command's whole answer on standard output, then success (`sys::print_stdout`: a reader
/// that closed the pipe is no failure; a write that failed otherwise is).
fn emit(text: &str) -> ExitCode {
    match inbox::sys::print_stdout(text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cannot write to standard output: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `create-table`: the table `TABLE_NAME` at `DYNAMODB_ENDPOINT` (the store's settings only).
#[cfg(feature = "dev")]
async fn create_table() -> Result<(), String> {
    let settings = inbox::config::store_from_env().map_err(|e| format!("create-table: {e}"))?;
    let store = Store::connect(&settings).await;
    let created = store.create_table().await.map_err(|e| format!("create-table: {e}"))?;
    inbox::sys::print_stdout(if created { "created\n" } else { "exists\n" }).map_err(|e| format!("create-table: {e}"))
}

async fn build(config: Config) -> Result<App, String> {
    match App::build(config).await {
        Ok(app) => Ok(app),
        Err(e) => {
            let message = format!("start-up failed: {e}");
            inbox::app::report_init_error("InitError", &message).await;
            Err(message)
        }
    }
}

async fn run_lambda(config: Config) -> Result<(), String> {
    // Built once per container and kept for its lifetime.
    let app: &'static App = Box::leak(Box::new(build(config).await?));
    let service =
        lambda_http::service_fn(move |req| async move { Ok::<_, Infallible>(edge::handle(&app.edge, req).await) });
    lambda_http::run(service).await.map_err(|e| format!("lambda runtime stopped: {e}"))
}

/// The local webhook receiver (`inbox::dev::receiver`), until interrupted.
#[cfg(feature = "dev")]
async fn receiver() -> Result<(), String> {
    let port: u16 = match std::env::var("RECEIVER_PORT").ok().filter(|v| !v.is_empty()) {
        None => 3002,
        Some(text) => text.parse().map_err(|_| format!("RECEIVER_PORT={text}: a port number"))?,
    };
    let secret = std::env::var("RECEIVER_SECRET")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| inbox::seed::DEMO_WEBHOOK_SECRET.to_owned());
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    println!("webhook receiver listening on http://{addr}/ (signatures checked with the demo webhooks' secret)");
    let receive = inbox::dev::receiver::printing(secret);
    let handler: edge::local::Handler = Arc::new(move |req| {
        let answer = receive(req);
        Box::pin(async move { answer })
    });
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    edge::local::serve_fn(listener, handler, shutdown).await;
    Ok(())
}

/// `snapshot save FILE` / `snapshot restore FILE` (`inbox::store::snapshot`).
#[cfg(feature = "dev")]
async fn snapshot(config: &Config, action: &Snapshot) -> Result<(), String> {
    use inbox::store::snapshot::{checked_item, item_line, local_endpoint, write_file};
    // A snapshot is of the local table, for the local table (`store::snapshot`).
    if !local_endpoint(config.store.endpoint.as_deref()) {
        return Err(
            "snapshot: only a local table (DYNAMODB_ENDPOINT on 127.0.0.1, localhost or [::1]) is saved or restored"
                .into(),
        );
    }
    let store = Store::connect(&config.store).await;
    match action {
        Snapshot::Save { file } => {
            let items = store.all_items().await.map_err(|e| format!("snapshot: {e}"))?;
            let text: String = items.iter().map(|item| item_line(item) + "\n").collect();
            let name = file.display();
            write_file(file, &text).map_err(|e| format!("{name}: {e}"))?;
            println!("saved {} items of table {} to {name}", items.len(), config.store.table);
            Ok(())
        }
        Snapshot::Restore { file } => {
            let name = file.display();
            let text = std::fs::read_to_string(file).map_err(|e| format!("{name}: {e}"))?;
            let lines: Vec<(usize, &str)> = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).collect();
            // Every line is read before anything is written: a bad file restores nothing.
            let items = lines
                .iter()
                .map(|(number, line)| checked_item(line).map_err(|e| format!("{name}:{}: {e}", number + 1)))
                .collect::<Result<Vec<_>, _>>()?;
            if !store.is_empty().await.map_err(|e| format!("snapshot: {e}"))? {
                return Err(format!(
                    "snapshot: table {} is not empty; a snapshot is restored into an empty table only",
                    config.store.table
                ));
            }
            let count = items.len();
            for item in items {
                store.put_raw(item).await.map_err(|e| format!("snapshot: {e}"))?;
            }
            println!("restored {count} items into table {} from {name}", config.store.table);
            Ok(())
        }
    }
}

/// Runs one recorded API Gateway event through the exact Lambda conversion
/// (`lambda_http`'s adapter around `edge::handle`) and prints the response
/// API Gateway would receive. `{{TOKEN}}` (and `{{AUDITOR_TOKEN}}`) in the
/// event becomes a development token of the demo admin with every scope for
/// the host the event names, `{{PIPELINE_TOKEN}}` one of the demo mail pipeline.
#[cfg(feature = "dev")]
async fn invoke(mut config: Config, file: &std::path::Path) -> Result<(), String> {
    use lambda_http::{Adapter, Service};
    let dev = config.dev_issuer.clone().ok_or("invoke needs DEV_ISSUER_KEY (make invoke sets it)")?;
    let path = file.display();
    let text = std::fs::read_to_string(file).map_err(|e| format!("{path}: {e}"))?;
    let event: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    // Header names are case-insensitive (REST API events often say `Host`).
    let host = event
        .get("headers")
        .and_then(serde_json::Value::as_object)
        .and_then(|h| h.iter().find(|(k, _)| k.eq_ignore_ascii_case("host")))
        .and_then(|(_, v)| v.as_str())
        .unwrap_or("127.0.0.1:3000")
        .to_owned();
    let scheme = if host.starts_with("127.0.0.1") || host.starts_with("localhost") { "http" } else { "https" };
    config.mcp_resource = format!("{scheme}://{host}/mcp");
    config.auth.api_audience = format!("{scheme}://{host}/api/v1");
    let audiences = [config.mcp_resource.clone(), config.auth.api_audience.clone()];
    let issuer = DevIssuer::load_or_create(&dev.key_path).map_err(|e| e.to_string())?;
    let all: Vec<&str> = inbox::domain::Scope::ALL.iter().map(|s| s.as_str()).collect();
    let token = issuer
        .mint(&dev.issuer(), &audiences, "usr_admin", "org_demo", &all.join(" "), 600)
        .map_err(|e| e.to_string())?;
    let pipeline = issuer
        .mint(&dev.issuer(), &audiences, inbox::seed::MAIL_PIPELINE, "org_demo", "emails:ingest", 600)
        .map_err(|e| e.to_string())?;
    inbox::app::start_dev_issuer(&config).await?;
    let app: &'static App = Box::leak(Box::new(build(config).await?));
    let text =
        text.replace("{{PIPELINE_TOKEN}}", &pipeline).replace("{{AUDITOR_TOKEN}}", &token).replace("{{TOKEN}}", &token);
    let payload: lambda_http::request::LambdaRequest =
        serde_json::from_str(&text).map_err(|e| format!("{path}: not an API Gateway event: {e}"))?;
    let service =
        lambda_http::service_fn(move |req| async move { Ok::<_, Infallible>(edge::handle(&app.edge, req).await) });
    let response = Adapter::from(service)
        .call(lambda_http::LambdaEvent::new(payload, lambda_http::Context::default()))
        .await
        .map_err(|e: Infallible| e.to_string())?;
    let text = serde_json::to_string_pretty(&response).map_err(|e| e.to_string())?;
    inbox::sys::print_stdout(&format!("{text}\n")).map_err(|e| format!("invoke: {e}"))?;
    Ok(())
}

async fn serve_local(config: Config) -> Result<(), String> {
    // Locally the job runner polls the queue in-process (on AWS the worker
    // Lambda is fed by the table's stream), every `LOCAL_JOB_POLL_MS` (none
    // with 0: a benchmark measures requests as a function serves them).
    // `LOCAL_JOB_HOLD_MS` leaves each job queued that long first (to see a
    // task queued, and cancel it).
    let millis = |name: &str, default: u64| match std::env::var(name).ok().filter(|v| !v.is_empty()) {
        None => Ok(default),
        Some(text) => text.parse::<u64>().map_err(|_| format!("{name}={text}: milliseconds")),
    };
    let (every, hold) = (millis("LOCAL_JOB_POLL_MS", 500)?, millis("LOCAL_JOB_HOLD_MS", 0)?);
    inbox::app::start_dev_issuer(&config).await?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, config.port));
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let app = Arc::new(build(config).await?);
    if every > 0 {
        let (every, hold) = (std::time::Duration::from_millis(every), std::time::Duration::from_millis(hold));
        tokio::spawn(inbox::worker::poll(Arc::clone(&app.runner), every, hold));
        // The daily retention purge (an EventBridge schedule on AWS): at
        // start, then every day the server runs.
        let runner = Arc::clone(&app.runner);
        tokio::spawn(async move {
            let mut daily = tokio::time::interval(std::time::Duration::from_secs(86_400));
            loop {
                daily.tick().await;
                if let Err(e) = inbox::worker::privacy::sweep(&runner, inbox::sys::now()).await {
                    tracing::warn!(error = %e, "retention sweep stopped; the next one takes over");
                }
            }
        });
    }
    tracing::info!(%addr, "serving MCP on http://{addr}/mcp");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    edge::local::serve(listener, Arc::clone(&app.edge), shutdown).await;
    Ok(())
}

/// Prints a development token. `SUB`, `ORG`, `SCOPES`, `AUD` (`mcp`, `api` or
/// `both`) and `TTL_SECS` pick its contents; by default the demo admin with
/// every person scope.
#[cfg(feature = "dev")]
fn dev_token(config: &Config) -> Result<(), String> {
    let dev = config.dev_issuer.as_ref().ok_or("dev-token needs DEV_ISSUER_KEY (make token sets it)")?;
    let issuer = DevIssuer::load_or_create(&dev.key_path).map_err(|e| e.to_string())?;
    let env = |name: &str, default: &str| std::env::var(name).ok().filter(|v| !v.is_empty()).unwrap_or(default.into());
    // A person's scopes: `emails:ingest` belongs to the mail pipeline's
    // machine client (`SUB=svc_mailpipe SCOPES=emails:ingest`), not to people.
    let user_scopes: Vec<&str> = inbox::domain::Scope::USER.iter().map(|s| s.as_str()).collect();
    let audiences = match env("AUD", "both").as_str() {
        "mcp" => vec![config.mcp_resource.clone()],
        "api" => vec![config.auth.api_audience.clone()],
        "both" => vec![config.mcp_resource.clone(), config.auth.api_audience.clone()],
        other => return Err(format!("AUD must be mcp, api or both, not {other:?}")),
    };
    let ttl: u64 = env("TTL_SECS", "86400").parse().map_err(|_| "TTL_SECS must be a number")?;
    // A misspelt scope would mint a token that silently opens nothing.
    let scopes = env("SCOPES", &user_scopes.join(" "));
    let unknown: Vec<&str> = scopes.split_whitespace().filter(|s| inbox::domain::Scope::parse(s).is_none()).collect();
    if !unknown.is_empty() {
        let known: Vec<&str> = inbox::domain::Scope::ALL.iter().map(|s| s.as_str()).collect();
        return Err(format!("SCOPES: unknown {}; the scopes are {}", unknown.join(", "), known.join(" ")));
    }
    let token = issuer
        .mint(&dev.issuer(), &audiences, &env("SUB", "usr_admin"), &env("ORG", "org_demo"), &scopes, ttl)
        .map_err(|e| e.to_string())?;
    inbox::sys::print_stdout(&format!("{token}\n")).map_err(|e| format!("dev-token: {e}"))?;
    Ok(())
}
