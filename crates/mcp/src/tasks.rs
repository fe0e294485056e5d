//! The tasks extension (`io.modelcontextprotocol/tasks`, protocol
//! 2026-07-28) over the job queue: a task is a job seen through MCP.
//!
//! - A request opts in by declaring the extension in its per-request client
//!   capabilities. Only then does a long tool (one whose API operation
//!   enqueues a job, `inbox_api::Op::enqueues`) answer with a
//!   `CreateTaskResult` instead of the job's 202 body, and only then are
//!   `tasks/get`, `tasks/update` and `tasks/cancel` served (-32021 otherwise).
//! - The task id is the job id. `tasks/get` reads the job through
//!   `GET /api/v1/jobs/{id}` and `tasks/cancel` cancels it through
//!   `POST /api/v1/jobs/{id}/cancel`, in-process: the same tenant, workspace,
//!   scope and role rules as REST. A job the caller cannot read (unknown,
//!   another workspace or organization, a subject outside its scopes) is
//!   "Task not found" (-32602), never a hint that it exists elsewhere.
//! - Job status → task status: queued/running → `working`; succeeded →
//!   `completed` with the tool's result inlined (`isError` when the job's
//!   effect failed: the boleto did not parse, the receiver refused the
//!   delivery); failed because the operation cannot be done (subject gone,
//!   webhook disabled) → `completed` with `isError`; failed because the
//!   platform gave up (storage kept failing) → `failed` with a JSON-RPC
//!   error; cancelled → `cancelled`.
//! - Extension jobs (`JobKind::Extension`: the long tools of another
//!   catalogue, started with `start` as a job of a kind that catalogue's
//!   binary registered with the worker) carry their tool's own result,
//!   inlined as it is. Such a job may wait for the client's input: the task
//!   is `input_required` with the job's pending `inputRequests`;
//!   `tasks/update` records the answers to those it waits for (others are
//!   ignored) and acknowledges with `{}`; the job runs on once none is left.
//!   `tasks/cancel` stops an extension job at any point — queued, waiting,
//!   or running (it ends `cancelled` at its next check). A task of any kind
//!   that is already finished is acknowledged as it is (the request is
//!   idempotent; nothing changes); a running product job cannot be stopped
//!   and is -32602. What the job does and what it asks for are its runner's
//!   business; this module sees only the generic state every extension job
//!   has (`JobExtension`: what it waits for, the answers, a cancellation).
//! - The product's jobs never ask for input: `tasks/update` on a task that
//!   waits for nothing is -32602.

use serde_json::{Map, Value, json};

use super::era::{EXT_TASKS, ProtocolVersion};
use super::jsonrpc::RpcError;
use super::method::Method;
use super::results::{call_tool_result, step_up, unavailable};
use super::{Call, Outcome, ResultType};
use inbox_api::error::ApiError;
use inbox_api::{self as api, ApiResponse, Ctx, Input, Op, Param, Route, jobs};
use inbox_domain::Tenant;
use inbox_domain::records::{DeliveryStatus, EmailStatus, Job, JobErrorKind, JobKind, JobStatus, wire_enum};

/// How long a task stays readable after it was created: jobs are kept at
/// least this long (today they are never removed).
pub const TTL_MS: u64 = 7 * 24 * 60 * 60 * 1000;

/// How often a client should poll: jobs usually finish within seconds.
pub const POLL_INTERVAL_MS: u64 = 1000;

/// A `CreateTaskResult` (without `resultType`, which decoration adds) for a
/// job just enqueued, when the 202 body carries one.
pub fn created(response: &ApiResponse) -> Option<Value> {
    let job = response.job.as_ref()?;
    inbox_support::telemetry::note(|line| line.task = Some(job.id.as_str().to_owned()));
    Some(Value::Object(envelope(job)))
}

/// Starts a task of `tool`: a job of extension `kind` (whose runner the
/// deployment registered) with `data` (what that runner needs): the
/// `CreateTaskResult`, once the job is stored (a `tasks/get` right after it
/// finds the task).
pub async fn start(call: &Call<'_>, tenant: &Tenant, kind: &str, tool: &str, data: Value) -> Result<Outcome, RpcError> {
    let ctx = call.api_ctx(tenant, tool);
    match jobs::start_extension(&ctx, kind, tool, data).await {
        Ok(job) => {
            inbox_support::telemetry::note(|line| line.task = Some(job.id.as_str().to_owned()));
            Ok(Outcome::Task(Value::Object(envelope(&job))))
        }
        Err(ApiError::Unavailable) => Err(unavailable()),
        Err(error) => Ok(super::results::tool_result(call.era.version(), &error.body(), true)),
    }
}

wire_enum! {
    /// A task's status, as the tasks extension names them (`input_required`
    /// only for an extension job: the product's jobs ask for nothing).
    pub enum TaskStatus {
        Working = "working",
        InputRequired = "input_required",
        Completed = "completed",
        Failed = "failed",
        Cancelled = "cancelled",
    }
}

/// The task status of a job, and its message.
fn task_status(job: &Job) -> (TaskStatus, String) {
    if job.is_awaiting_input() {
        return (TaskStatus::InputRequired, "Waiting for your input (tasks/update).".to_owned());
    }
    match job.status {
        JobStatus::Queued => (TaskStatus::Working, "Queued; it starts shortly.".to_owned()),
        // What the worker last said it was doing (`Job::stage`), when it said.
        JobStatus::Running => match &job.stage {
            Some(stage) => (TaskStatus::Working, format!("{stage} (attempt {}).", job.attempts.max(1))),
            None => (TaskStatus::Working, format!("Running (attempt {}).", job.attempts.max(1))),
        },
        JobStatus::Succeeded => (TaskStatus::Completed, "Finished.".to_owned()),
        JobStatus::Failed if job.error_kind == Some(JobErrorKind::Operation) => {
            (TaskStatus::Completed, "Finished: the operation could not be done.".to_owned())
        }
        JobStatus::Failed => {
            (TaskStatus::Failed, "The service could not run it; starting it again may work.".to_owned())
        }
        JobStatus::Cancelled => (TaskStatus::Cancelled, "Cancelled before it ran; nothing was done.".to_owned()),
    }
}

/// The fields every task view has, from the job as it is now.
fn envelope(job: &Job) -> Map<String, Value> {
    let (status, message) = task_status(job);
    let mut task = Map::new();
    task.insert("taskId".into(), Value::from(job.id.as_str()));
    task.insert("status".into(), Value::from(status.as_str()));
    task.insert("statusMessage".into(), Value::from(message));
    task.insert("createdAt".into(), Value::from(job.created_at.as_str()));
    task.insert("lastUpdatedAt".into(), Value::from(job.updated_at.as_str()));
    task.insert("ttlMs".into(), Value::from(TTL_MS));
    task.insert("pollIntervalMs".into(), Value::from(POLL_INTERVAL_MS));
    task
}

/// What `tasks/get` answers: the task with its terminal payload inlined.
pub fn detailed(job: &Job) -> Value {
    let mut task = envelope(job);
    match task_status(job).0 {
        TaskStatus::Completed if job.kind == JobKind::Extension => {
            task.insert("result".into(), tool_outcome(job));
        }
        TaskStatus::InputRequired => {
            let awaiting = job.extension.as_ref().map(|x| x.awaiting.clone()).unwrap_or_default();
            task.insert("inputRequests".into(), Value::Object(awaiting));
        }
        TaskStatus::Completed => {
            let failure = effect_failure(job);
            let mut body = Map::new();
            if let Some((code, message)) = &failure {
                body.insert("error".into(), json!({"code": code, "message": message}));
            }
            body.insert("data".into(), json!({"job": job}));
            let mut result = call_tool_result(ProtocolVersion::V2026_07_28, &Value::Object(body), failure.is_some());
            // Tasks live in the 2026-07-28 era, where every result says what
            // it is — the one inlined here too (the tasks client checks it).
            if let Value::Object(fields) = &mut result {
                fields.insert("resultType".into(), Value::from(ResultType::Complete.as_str()));
            }
            task.insert("result".into(), result);
        }
        TaskStatus::Failed => {
            let message = job.error.as_deref().unwrap_or("The job failed");
            task.insert("error".into(), json!({"code": -32603, "message": message}));
        }
        TaskStatus::Working | TaskStatus::Cancelled => {}
    }
    Value::Object(task)
}

/// A finished extension job's `CallToolResult`: the one its tool answered, or a
/// tool error saying why the job could not be done; with `resultType`.
fn tool_outcome(job: &Job) -> Value {
    let mut result = match (&job.result, job.status) {
        (Some(Value::Object(result)), JobStatus::Succeeded) => result.clone(),
        _ => {
            let message = job.error.as_deref().unwrap_or("The job failed");
            let body = json!({"error": {"code": "job_failed", "message": message}});
            match call_tool_result(ProtocolVersion::V2026_07_28, &body, true) {
                Value::Object(result) => result,
                _ => Map::new(),
            }
        }
    };
    result.insert("resultType".into(), Value::from(ResultType::Complete.as_str()));
    Value::Object(result)
}

/// Why a finished job's effect failed, if it did: `(code, message)`.
fn effect_failure(job: &Job) -> Option<(&'static str, String)> {
    if job.status == JobStatus::Failed {
        return Some(("job_failed", job.error.clone().unwrap_or_else(|| "The job failed".into())));
    }
    let result = job.result.as_ref()?;
    if result.get("status").and_then(Value::as_str) == Some(EmailStatus::Failed.as_str()) {
        let why = result.get("error").and_then(Value::as_str).unwrap_or("no boleto was found");
        return Some(("extraction_failed", format!("The boleto could not be extracted: {why}")));
    }
    let delivery = result.get("delivery")?;
    if delivery.get("status").and_then(Value::as_str) == Some(DeliveryStatus::Failed.as_str()) {
        let why = match (
            delivery.get("status_code").and_then(Value::as_u64),
            delivery.get("error").and_then(Value::as_str),
        ) {
            (Some(code), _) => format!("the receiver answered HTTP {code}"),
            (None, Some(error)) => error.to_owned(),
            (None, None) => "the receiver did not accept it".to_owned(),
        };
        return Some(("delivery_failed", format!("The delivery failed: {why}")));
    }
    None
}

/// `tasks/get`, `tasks/update`, `tasks/cancel`.
pub async fn dispatch(call: &Call<'_>, tenant: &Tenant, method: Method) -> Result<Outcome, RpcError> {
    let name = method.as_str();
    let Some(Value::String(task_id)) = call.message.params.get("taskId") else {
        return Err(RpcError::invalid_params(format!("{name} needs params.taskId as a string")));
    };
    if !call.client.tasks {
        return Err(RpcError::missing_capability(format!("{name} needs the {EXT_TASKS} extension"))
            .with_data(json!({"requiredCapabilities": {"extensions": {EXT_TASKS: {}}}})));
    }
    // The request's log line names the task (a well-formed id only: it came from the client).
    if inbox_domain::ids::is_id(inbox_domain::ids::Kind::Job, task_id) {
        inbox_support::telemetry::note(|line| line.task = Some(task_id.as_str().to_owned()));
    }
    let ctx = call.api_ctx(tenant, name);
    if method == Method::TasksCancel && call.narrowing.readonly {
        return Err(RpcError::invalid_params(
            "This connection is read-only (X-MCP-Readonly): a task cannot be cancelled",
        )
        .with_data(json!({"taskId": task_id})));
    }
    match method {
        Method::TasksGet => Ok(Outcome::Complete(detailed(&read(&ctx, task_id).await?))),
        Method::TasksCancel => cancel(call, &ctx, task_id).await.map(|()| Outcome::Complete(json!({}))),
        _ => update(call, &ctx, task_id).await.map(|()| Outcome::Complete(json!({}))),
    }
}

/// `tasks/update`: the answers to what a waiting task asked for. The
/// acknowledgement (`{}`) means they were taken; the task's state is seen
/// through `tasks/get`.
async fn update(call: &Call<'_>, ctx: &Ctx<'_>, task_id: &str) -> Result<(), RpcError> {
    let job = read(ctx, task_id).await?;
    if !job.is_awaiting_input() {
        return Err(RpcError::invalid_params("This task asks for no input; there is nothing to update")
            .with_data(json!({"taskId": task_id})));
    }
    let responses = match call.message.params.get("inputResponses") {
        Some(Value::Object(responses)) => responses,
        _ => {
            return Err(RpcError::invalid_params("tasks/update needs params.inputResponses as an object")
                .with_data(json!({"taskId": task_id})));
        }
    };
    match jobs::answer_input(ctx, task_id, responses).await {
        Ok(_) => Ok(()),
        // It stopped waiting in the meantime (answered, cancelled).
        Err(ApiError::Conflict { .. }) => {
            Err(RpcError::invalid_params("This task no longer waits for input").with_data(json!({"taskId": task_id})))
        }
        Err(ApiError::Unavailable) => Err(unavailable()),
        Err(ApiError::InsufficientScope { scopes }) => Err(step_up(call, &scopes)),
        Err(ApiError::Forbidden { message }) => Err(RpcError::forbidden(message).with_data(json!({"taskId": task_id}))),
        Err(_) => Err(not_found(task_id)),
    }
}

fn not_found(task_id: &str) -> RpcError {
    RpcError::invalid_params("Task not found").with_data(json!({"taskId": task_id}))
}

/// One job operation, in-process, with its declaration's check.
async fn run(ctx: &Ctx<'_>, op: Op, task_id: &str) -> Result<ApiResponse, ApiError> {
    let route = Route::new(op).with(Param::Id, task_id)?;
    api::invoke(ctx, &Input::bare(&route)).await
}

/// The job behind a task, if this caller may read it.
async fn read(ctx: &Ctx<'_>, task_id: &str) -> Result<Job, RpcError> {
    match run(ctx, &jobs::GET, task_id).await {
        Ok(response) => response.job.ok_or_else(|| RpcError::internal("The job could not be read")),
        Err(ApiError::Unavailable) => Err(unavailable()),
        Err(_) => Err(not_found(task_id)),
    }
}

/// Cancels the task's job. The acknowledgement (`{}`) means the job will not
/// run (again): a queued job is cancelled (its cancellation cannot be
/// vetoed), and a task already in a terminal status — cancelled, completed,
/// failed — is acknowledged as it is, changing nothing (`tasks/get` keeps its
/// status and result), as the extension and its official client expect of
/// an idempotent request. A product job that is running cannot be stopped:
/// -32602 naming its status, since an acknowledgement would say a job that
/// runs was cancelled; an unknown task is -32602 "not found".
async fn cancel(call: &Call<'_>, ctx: &Ctx<'_>, task_id: &str) -> Result<(), RpcError> {
    match run(ctx, &jobs::CANCEL, task_id).await {
        Ok(response) => match response.job {
            Some(job) if job.status == JobStatus::Cancelled => Ok(()),
            Some(job) => Err(not_cancellable(&job)),
            None => Err(RpcError::internal("The job could not be read")),
        },
        // Running or finished (a runner may have taken it a moment ago): a
        // finished job is acknowledged as it is, an extension job stops at
        // any point, and a running product job keeps running.
        Err(ApiError::Conflict { .. }) => {
            let job = read(ctx, task_id).await?;
            if matches!(job.status, JobStatus::Succeeded | JobStatus::Failed | JobStatus::Cancelled) {
                return Ok(());
            }
            if job.kind != JobKind::Extension {
                return Err(not_cancellable(&job));
            }
            match jobs::stop_extension(ctx, task_id).await {
                Ok(_) => Ok(()),
                Err(ApiError::Unavailable) => Err(unavailable()),
                Err(ApiError::Forbidden { message }) => {
                    Err(RpcError::forbidden(message).with_data(json!({"taskId": task_id})))
                }
                Err(_) => Err(not_found(task_id)),
            }
        }
        Err(ApiError::Unavailable) => Err(unavailable()),
        // Allowed to see it but not to act on it: say why. Otherwise — another
        // workspace, or a subject outside a narrowed connection (whose job
        // scopes then lack its read scope too) — it does not exist.
        Err(ApiError::InsufficientScope { scopes }) => {
            read(ctx, task_id).await?;
            Err(step_up(call, &scopes))
        }
        Err(ApiError::Forbidden { message }) => {
            read(ctx, task_id).await?;
            Err(RpcError::forbidden(message).with_data(json!({"taskId": task_id})))
        }
        Err(_) => Err(not_found(task_id)),
    }
}

/// -32602 for a task that can no longer be cancelled, with its status.
fn not_cancellable(job: &Job) -> RpcError {
    let (status, _) = task_status(job);
    let message = if job.status == JobStatus::Running {
        "Cannot cancel task: it is already running and cannot be stopped; follow it with tasks/get".to_owned()
    } else {
        format!("Cannot cancel task: it is already in a terminal status ({})", status.as_str())
    };
    RpcError::invalid_params(message).with_data(json!({"taskId": job.id, "status": status.as_str()}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use inbox_domain::records::JobKind;

    fn job(status: JobStatus) -> Job {
        Job {
            id: "job_1".into(),
            kind: JobKind::WebhookTest,
            subject_id: "wh_1".into(),
            status,
            attempts: 1,
            result: None,
            error: None,
            error_kind: None,
            created_at: "2026-12-04T10:00:00.000Z".into(),
            updated_at: "2026-12-04T10:00:01.000Z".into(),
            lease_until: None,
            stage: None,
            extension: None,
        }
    }

    #[test]
    fn job_statuses_become_task_statuses_with_their_payloads() {
        for (status, task_status) in [(JobStatus::Queued, "working"), (JobStatus::Running, "working")] {
            let task = detailed(&job(status));
            assert_eq!(task["status"], task_status);
            assert!(task.get("result").is_none() && task.get("error").is_none());
        }
        let mut ok = job(JobStatus::Succeeded);
        ok.result = Some(json!({"delivery": {"status": "succeeded", "status_code": 200}}));
        let task = detailed(&ok);
        assert_eq!((task["status"].as_str(), task["result"]["isError"].as_bool()), (Some("completed"), Some(false)));
        assert_eq!(task["result"]["structuredContent"]["data"]["job"]["id"], "job_1");

        let mut refused = ok.clone();
        refused.result = Some(json!({"delivery": {"status": "failed", "status_code": 500}}));
        let task = detailed(&refused);
        assert_eq!((task["status"].as_str(), task["result"]["isError"].as_bool()), (Some("completed"), Some(true)));
        assert_eq!(task["result"]["structuredContent"]["error"]["code"], "delivery_failed");
        assert!(task["result"]["structuredContent"]["error"]["message"].as_str().unwrap().contains("500"));

        let mut gone = job(JobStatus::Failed);
        (gone.error, gone.error_kind) = (Some("the webhook is disabled".into()), Some(JobErrorKind::Operation));
        let task = detailed(&gone);
        assert_eq!((task["status"].as_str(), task["result"]["isError"].as_bool()), (Some("completed"), Some(true)));
        assert_eq!(task["result"]["structuredContent"]["error"]["message"], "the webhook is disabled");

        let mut broke = job(JobStatus::Failed);
        (broke.error, broke.error_kind) = (Some("gave up after 4 attempts".into()), Some(JobErrorKind::Platform));
        let task = detailed(&broke);
        assert_eq!(task["status"], "failed");
        assert_eq!(task["error"], json!({"code": -32603, "message": "gave up after 4 attempts"}));
        assert!(task.get("result").is_none());

        let task = detailed(&job(JobStatus::Cancelled));
        assert_eq!(task["status"], "cancelled");
        assert!(task.get("result").is_none() && task.get("error").is_none());
    }

    #[test]
    fn a_failed_extraction_is_a_completed_task_with_a_tool_error() {
        let mut done = job(JobStatus::Succeeded);
        done.kind = JobKind::EmailReprocess;
        done.result = Some(json!({"status": "failed", "error": "no digitable line found"}));
        let task = detailed(&done);
        assert_eq!((task["status"].as_str(), task["result"]["isError"].as_bool()), (Some("completed"), Some(true)));
        assert_eq!(task["result"]["structuredContent"]["error"]["code"], "extraction_failed");
    }
}
