//! The fixtures' long tools as extension jobs of kind `super::KIND` (`tool.call`):
//! what the worker runs for a task of `slow_compute`, `failing_job`,
//! `protocol_error_job`, `confirm_delete`, `multi_input` and
//! `test_tool_with_task`, from the job's data (the tool's arguments, in
//! `JobExtension::data`; the tool's name is the job's subject) and the
//! answers it was given. The product defines no such kind: `extensions`
//! registers it with the worker (`inbox_worker::ExtensionJobs`), for the
//! fixture server and the tests that serve the fixtures.
//!
//! - `slow_compute` sleeps its `seconds` in short steps and stops, ending
//!   `cancelled`, when a cancellation was asked for meanwhile.
//! - `failing_job` answers a tool error after about a second; the task
//!   completes with `isError`.
//! - `protocol_error_job` fails as the platform's fault: the task fails with
//!   a JSON-RPC error.
//! - `confirm_delete` and `multi_input` ask the client (the task waits,
//!   `input_required`) and finish once every question is answered.
//! - `test_tool_with_task` greets the name gathered before it started.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::tools::{Behaviour, compute_arguments, computed, deletion, deletion_form, describe, find};
use super::{KIND, call_result, text};
use inbox_domain::Tenant;
use inbox_domain::records::Job;
use inbox_mcp::input::{Asked, Elicited, Request, Responses};
use inbox_worker::{EffectError, ExtensionJobs, Extensions, Runner, Step, cancel_requested};

/// How long `slow_compute` sleeps between looks for a cancellation.
const STEP: Duration = Duration::from_millis(100);

/// Runs the fixtures' tool jobs.
pub struct FixtureJobs;

/// The extension kinds the fixtures' tools start: `KIND`, run by `FixtureJobs`.
pub fn extensions() -> Extensions {
    Extensions::default().with(KIND, Arc::new(FixtureJobs))
}

impl ExtensionJobs for FixtureJobs {
    fn run<'a>(
        &'a self,
        runner: &'a Runner,
        tenant: &'a Tenant,
        job: &'a Job,
    ) -> BoxFuture<'a, Result<Step, EffectError>> {
        Box::pin(run(runner, tenant, job))
    }
}

/// An answer a job was given, read as an elicitation result (one that is
/// not is taken as not given: the job asks again).
fn elicited(responses: &Map<String, Value>, key: &str) -> Option<Elicited> {
    Responses::of(responses).elicitation(key).ok().flatten()
}

async fn run(runner: &Runner, tenant: &Tenant, job: &Job) -> Result<Step, EffectError> {
    let Some(tool) = find(&job.subject_id) else {
        return Err(EffectError::Permanent(format!("no fixture tool {:?}", job.subject_id)));
    };
    let run = job.extension.clone().unwrap_or_default();
    let input = run.data.as_object().cloned().unwrap_or_default();
    match tool.behaviour {
        Behaviour::SlowCompute => {
            let (seconds, label) = compute_arguments(&input);
            let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(seconds);
            while tokio::time::Instant::now() < deadline {
                tokio::time::sleep(STEP.min(deadline - tokio::time::Instant::now())).await;
                if cancel_requested(runner, tenant, &job.id).await {
                    return Ok(Step::Cancelled);
                }
            }
            Ok(Step::Done(computed(&label, seconds)))
        }
        Behaviour::FailingJob => {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok(Step::Done(call_result(vec![text("failing_job failed, as it always does")], true)))
        }
        Behaviour::ProtocolErrorJob => {
            Err(EffectError::Platform("protocol_error_job: the server failed to run it, as it always does".into()))
        }
        Behaviour::ConfirmDelete => match elicited(&run.responses, "confirm") {
            Some(answer) => Ok(Step::Done(deletion(&input, &answer))),
            None => Ok(Step::Input(Asked::new().ask("confirm", &deletion_form(&input)).into_requests())),
        },
        Behaviour::MultiInput => {
            let keys = ["first", "second"];
            let answers: Vec<Option<Elicited>> = keys.iter().map(|key| elicited(&run.responses, key)).collect();
            if answers.iter().all(Option::is_some) {
                let said: Vec<String> = answers.iter().flatten().map(describe).collect();
                return Ok(Step::Done(call_result(vec![text(format!("Both answered: {}", said.join("; ")))], false)));
            }
            let form = Request::Form {
                message: "Your name, and whether to go ahead".to_owned(),
                schema: json!({"type": "object", "properties": {
                    "name": {"type": "string"}, "confirm": {"type": "boolean"}}, "required": ["name"]}),
            };
            let asked = keys
                .iter()
                .zip(&answers)
                .filter(|(_, answer)| answer.is_none())
                .fold(Asked::new(), |asked, (key, _)| asked.ask(key, &form));
            Ok(Step::Input(asked.into_requests()))
        }
        Behaviour::AskThenTask => {
            let name = input.get("name").and_then(Value::as_str).unwrap_or("stranger");
            Ok(Step::Done(call_result(
                vec![text(format!("Hello, {name}! (the name was asked before the task)"))],
                false,
            )))
        }
        _ => Err(EffectError::Permanent(format!("{} does not run as a task", tool.name))),
    }
}
