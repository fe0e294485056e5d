//! The worker Lambda, invoked two ways and telling them apart by the
//! records' `eventSource` (`inbound::is_mail_event`), so receiving mail needs
//! no build artefact of its own:
//!
//! - the table's DynamoDB stream (filtered to new job items, new
//!   data-subject requests, e-mails the TTL removed and changed audit
//!   records): it runs each job and reports the records it could not finish
//!   as batch item failures (`worker::stream`);
//! - the daily EventBridge schedule (`"source": "aws.events"`): the
//!   retention purge (`worker::privacy::sweep`);
//! - with `InboundMailDomain` set, SES's receipt rule, asynchronously, after
//!   its S3 action stored the raw message: each recipient's inbox ingests it
//!   as the mail pipeline would (`inbound`). Only a failure a retry can cure
//!   fails that invocation (Lambda retries twice, then the event goes to the
//!   on-failure queue).

use std::process::ExitCode;
use std::sync::Arc;

use inbox::config::Mode;
use inbox::inbound::{self, Inbound};
use inbox::worker;
use inbox::worker::Runner;
use lambda_runtime::{Diagnostic, LambdaEvent, service_fn};
use serde_json::{Value, json};

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
    // SES mail: the operations over the runner's store and secrets (no I/O at INIT).
    let inbound: &'static Inbound =
        Box::leak(Box::new(Inbound::new(runner.store.clone(), Arc::clone(&runner.secrets))));
    let handler = service_fn(move |event: LambdaEvent<Value>| async move {
        let LambdaEvent { payload, context } = event;
        // Each kind's future boxed: inline, the two together are past the
        // compiler's depth limit for the layout of this binary's main future.
        // The daily retention purge (the template's EventBridge schedule).
        if payload.get("source").and_then(Value::as_str) == Some("aws.events") {
            return match Box::pin(worker::privacy::sweep(runner, inbox::sys::now())).await {
                Ok(swept) => Ok(json!({"swept": swept})),
                Err(error) => Err(diagnostic("Retention.Unfinished", &error)),
            };
        }
        if inbound::is_mail_event(&payload) {
            return match Box::pin(inbound.on_event(payload, &context.request_id)).await {
                // What a synchronous Lambda action would read; SES's `Event`
                // invocation reads nothing.
                Ok(_) => Ok(json!({"disposition": "CONTINUE"})),
                Err(transient) => Err(diagnostic("InboundMail.Transient", &transient)),
            };
        }
        // A stream batch: one that does not read fails as the runtime's own
        // deserialization would (the event source mapping retries, then
        // hands it to the dead-letter queue).
        let batch = serde_json::from_value::<aws_lambda_events::event::dynamodb::Event>(payload)
            .map_err(|e| diagnostic("Runtime.UnreadableEvent", &e))?;
        let answer = Box::pin(worker::stream::handle(runner, batch)).await;
        serde_json::to_value(answer).map_err(|e| diagnostic("Runtime.UnwritableAnswer", &e))
    });
    match lambda_runtime::run(handler).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lambda runtime stopped: {error}");
            ExitCode::FAILURE
        }
    }
}

fn diagnostic(error_type: &str, error: &dyn std::fmt::Display) -> Diagnostic {
    Diagnostic { error_type: error_type.to_owned(), error_message: error.to_string() }
}
