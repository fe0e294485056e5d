//! The worker Lambda: fed by the table's DynamoDB stream (filtered to new job
//! items), it runs each job and reports the records it could not finish as
//! batch item failures.

use std::process::ExitCode;

use inbox::config::Mode;
use inbox::worker;
use inbox::worker::Runner;
use lambda_runtime::{LambdaEvent, service_fn};

/// mimalloc instead of the C library's allocator: a request allocates and
/// frees a few hundred small blocks (JSON values, the SDK's request and
/// response), and glibc's malloc was a fifth of a read's instructions
/// (`make profile`); measured side by side in `make bench`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    // Joined when main returns: no short command exits while it runs.
    let _warm = inbox::sys::warm_crypto();
    let config = match inbox::app::configure().await {
        Some(config) if config.mode == Mode::Lambda => config,
        Some(_) => {
            eprintln!("the worker runs on Lambda; locally, `serve` runs jobs in-process");
            return ExitCode::FAILURE;
        }
        None => return ExitCode::FAILURE,
    };
    // Only what a job needs: no issuer keys, no edge (`app::build_runner`).
    let runner: &'static Runner = match inbox::app::build_runner(&config).await {
        Ok(runner) => Box::leak(Box::new(runner)),
        Err(error) => {
            let message = format!("start-up failed: {error}");
            eprintln!("{message}");
            inbox::app::report_init_error("InitError", &message).await;
            return ExitCode::FAILURE;
        }
    };
    let handler = service_fn(move |event: LambdaEvent<aws_lambda_events::event::dynamodb::Event>| async move {
        Ok::<_, std::convert::Infallible>(worker::stream::handle(runner, event.payload).await)
    });
    match lambda_runtime::run(handler).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lambda runtime stopped: {error}");
            ExitCode::FAILURE
        }
    }
}
