//! Composition root: on Lambda, serve API Gateway events; elsewhere, serve
//! the same handler on `127.0.0.1:$PORT`.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;

use inbox::config::{Config, Mode};
use inbox::{App, http, telemetry};

#[tokio::main]
async fn main() -> ExitCode {
    let config = match Config::from_env() {
        Ok(config) => config,
        Err(error) => {
            eprintln!("configuration error: {error}");
            return ExitCode::FAILURE;
        }
    };
    telemetry::init(config.log_format);
    match config.mode {
        Mode::Lambda => run_lambda(config).await,
        Mode::Local => serve_local(config).await,
    }
}

async fn run_lambda(config: Config) -> ExitCode {
    // Built once per container and kept for its lifetime.
    let app: &'static App = Box::leak(Box::new(App::new(config)));
    let service = lambda_http::service_fn(move |req| async move { Ok::<_, Infallible>(http::handle(app, req).await) });
    match lambda_http::run(service).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "lambda runtime stopped");
            ExitCode::FAILURE
        }
    }
}

async fn serve_local(config: Config) -> ExitCode {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, config.port));
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("cannot listen on {addr}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let app = Arc::new(App::new(config));
    tracing::info!(%addr, "serving MCP on http://{addr}/mcp");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    http::local::serve(listener, app, shutdown).await;
    ExitCode::SUCCESS
}
