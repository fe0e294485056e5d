//! Jobs: the status of a long operation. Reading one needs the read scope of
//! its subject (`emails:read` for e-mail jobs, `webhooks:read` for webhook
//! and delivery jobs) and the viewer role; cancelling one needs the write
//! scope of its subject and the operator role. Only a queued job can be
//! cancelled; cancelling a cancelled job again answers the same (200), one
//! that is running or finished is left alone (409 `job_not_cancellable`).
//!
//! Extension jobs (`JobKind::Extension`: a job of a kind the product does
//! not define, started by a tool of another MCP catalogue, never by a REST
//! operation) have no subject of the API's: the tool call that started one
//! was authorized by its catalogue, so they need the role only. Beyond the
//! routes, they are started (`start_extension`), told what they asked for
//! (`answer_input`) and stopped at any point (`stop_extension`) by the MCP
//! tasks extension, not over REST. What they carry is opaque here
//! (`JobExtension`): the code that registered their kind gives it and reads it.

use http::StatusCode;
use serde_json::{Map, Value, json};

use super::error::ApiError;
use super::operation::{Operation, Tool, Verb, operation};
use super::schemas::{Record, Shape};
use super::{ApiResponse, Ctx, Needs, Op, check_job, check_role};
use inbox_domain::ids::{Kind, is_id};
use inbox_domain::records::{Job, JobExtension, JobKind, JobStatus};
use inbox_domain::{Permission, Scope};
use inbox_store::{StoreError, ToCancel};
use inbox_support::sys::now_string;

/// The operations of this module, in catalogue order.
pub static OPERATIONS: &[Op] = &[&GET, &CANCEL];

pub static GET: Operation = Operation {
    summary: "Get a job (a long operation)",
    id_of: "job",
    answers: &[(StatusCode::OK, Shape::Data(Record::Job))],
    tool: Some(Tool::read(
        "jobs_get",
        "Get job",
        "Status and result of a long operation (reprocess, webhook test, resend).",
    )),
    ..operation(
        "job_get",
        Verb::Get,
        "/jobs/{id}",
        Needs::Job { any: &[Scope::EmailsRead, Scope::WebhooksRead] },
        |ctx, input| Box::pin(get(ctx, input.id())),
    )
};

/// Not a tool: an agent cancels through `tasks/cancel`.
pub static CANCEL: Operation = Operation {
    summary: "Cancel a queued job",
    id_of: "job",
    answers: &[(StatusCode::OK, Shape::Data(Record::Job))],
    may_change_nothing: true,
    replay_check: Some(|ctx, id| Box::pin(async move { cancellable(ctx, id).await.map(|_| ()) })),
    ..operation(
        "job_cancel",
        Verb::Post,
        "/jobs/{id}/cancel",
        Needs::Job { any: &[Scope::EmailsWrite, Scope::WebhooksWrite] },
        |ctx, input| Box::pin(cancel(ctx, input.id())),
    )
};

/// The scope reading a job of `kind` needs (`None`: an extension job, the role only).
pub fn read_scope(kind: JobKind) -> Option<Scope> {
    match kind {
        JobKind::EmailProcess | JobKind::EmailReprocess => Some(Scope::EmailsRead),
        JobKind::WebhookTest | JobKind::DeliveryResend => Some(Scope::WebhooksRead),
        JobKind::Extension => None,
    }
}

/// The scope cancelling a job of `kind` needs (`None`: an extension job, the role only).
pub fn write_scope(kind: JobKind) -> Option<Scope> {
    match kind {
        JobKind::EmailProcess | JobKind::EmailReprocess => Some(Scope::EmailsWrite),
        JobKind::WebhookTest | JobKind::DeliveryResend => Some(Scope::WebhooksWrite),
        JobKind::Extension => None,
    }
}

/// The caller's right to a job whose subject needs `scope`, for `permission`.
fn check_subject(ctx: &Ctx<'_>, scope: Option<Scope>, permission: Permission) -> Result<(), ApiError> {
    match scope {
        Some(scope) => check_job(ctx, scope, permission),
        None => check_role(ctx, permission),
    }
}

/// A new queued job about `subject_id` (in write shard 0).
pub fn new_job(kind: JobKind, subject_id: &str) -> Job {
    new_job_in(kind, subject_id, &inbox_domain::Shards::default())
}

/// A new queued job about `subject_id`, in one of the write `shards` of its workspace.
pub fn new_job_in(kind: JobKind, subject_id: &str, shards: &inbox_domain::Shards) -> Job {
    let now = now_string();
    Job {
        id: inbox_support::sys::new_id_in(Kind::Job, shards),
        kind,
        subject_id: subject_id.to_owned(),
        status: JobStatus::Queued,
        attempts: 0,
        result: None,
        error: None,
        error_kind: None,
        created_at: now.clone(),
        updated_at: now,
        lease_until: None,
        stage: None,
        extension: None,
    }
}

/// The 202 answer to an enqueued job: its JSON and where to follow it.
pub fn accepted(job: &Job) -> Result<ApiResponse, ApiError> {
    let job_json = serde_json::to_value(job).map_err(ApiError::unserializable)?;
    let mut response = ApiResponse::ok(StatusCode::ACCEPTED, json!({"data": {"job": job_json}}));
    response.location = Some(format!("/api/v1/jobs/{}", job.id));
    response.job = Some(job.clone());
    Ok(response)
}

/// A 200 answer about a job.
fn answer(job: Job) -> Result<ApiResponse, ApiError> {
    let mut response = ApiResponse::data(StatusCode::OK, &job)?;
    response.job = Some(job);
    Ok(response)
}

fn not_found() -> ApiError {
    ApiError::NotFound { what: "Job" }
}

async fn get(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    if !is_id(Kind::Job, id) {
        return Err(not_found());
    }
    let job = ctx.store.get_job(ctx.tenant, id).await?.ok_or_else(not_found)?;
    check_subject(ctx, read_scope(job.kind), Permission::Read)?;
    answer(job)
}

/// Job `id` read once for cancelling, with the caller's right to cancel it
/// checked (the scope and role depend on the job's subject): also the check
/// the replay of a stored answer repeats (`CANCEL.replay_check`), which must
/// be authorized as the call itself would be.
async fn cancellable(ctx: &Ctx<'_>, id: &str) -> Result<ToCancel, ApiError> {
    if !is_id(Kind::Job, id) {
        return Err(not_found());
    }
    let read = ctx.store.job_to_cancel(ctx.tenant, id).await?.ok_or_else(not_found)?;
    check_subject(ctx, write_scope(read.job.kind), Permission::Operate)?;
    Ok(read)
}

/// `POST /jobs/{id}/cancel`: 200 with the cancelled job.
async fn cancel(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let read = cancellable(ctx, id).await?;
    let job = ctx.store.cancel_job(ctx.tenant, read, &ctx.audit(id, StatusCode::OK)?).await?.ok_or_else(not_found)?;
    match job.status {
        JobStatus::Cancelled => answer(job),
        status => Err(ApiError::Conflict {
            code: "job_not_cancellable",
            message: format!("This job is {}: only a queued job can be cancelled", status.as_str()),
        }),
    }
}

/// How often an extension job's optimistic write is tried before giving up (503).
const WRITE_ROUNDS: usize = 3;

/// Starts a job of extension `kind` about `subject_id` (the tool that
/// started it), queued with `data` (what its runner needs: the arguments,
/// and anything gathered before): what a task of another catalogue's long
/// tool is. Starting one needs the operator role.
pub async fn start_extension(ctx: &Ctx<'_>, kind: &str, subject_id: &str, data: Value) -> Result<Job, ApiError> {
    check_role(ctx, Permission::Operate)?;
    let mut job = new_job_in(JobKind::Extension, subject_id, &ctx.tenant.shards);
    job.extension = Some(JobExtension { kind: kind.to_owned(), data, ..JobExtension::default() });
    ctx.store.insert_job(ctx.tenant, &job).await?;
    Ok(job)
}

/// An extension job read for changing, with the caller's right to change it.
async fn extension_job(ctx: &Ctx<'_>, id: &str) -> Result<Job, ApiError> {
    if !is_id(Kind::Job, id) {
        return Err(not_found());
    }
    let job = ctx.store.get_job(ctx.tenant, id).await?.ok_or_else(not_found)?;
    check_subject(ctx, write_scope(job.kind), Permission::Operate)?;
    if job.kind != JobKind::Extension {
        return Err(ApiError::Conflict {
            code: "job_not_an_extension",
            message: format!(
                "This job is {}: only an extension job takes input or stops while it runs",
                job.kind.as_str()
            ),
        });
    }
    Ok(job)
}

/// Changes extension job `id` with `change` over the version read (another
/// writer in between — a runner, another client — makes it read again).
/// `change` returns whether there is anything to write.
async fn change_extension_job(
    ctx: &Ctx<'_>,
    id: &str,
    change: impl Fn(&mut Job) -> Result<bool, ApiError>,
) -> Result<Job, ApiError> {
    for _ in 0..WRITE_ROUNDS {
        let mut job = extension_job(ctx, id).await?;
        let read_at = job.updated_at.clone();
        if !change(&mut job)? {
            return Ok(job);
        }
        job.updated_at = now_string();
        match ctx.store.replace_job(ctx.tenant, &job, &read_at).await {
            Ok(()) => return Ok(job),
            Err(StoreError::Conflict) => {}
            Err(error) => return Err(error.into()),
        }
    }
    Err(ApiError::Unavailable)
}

/// Answers an extension job that waits for input: each response to a
/// request it waits for is recorded (any other is ignored); once none is
/// left it is queued again, to run on with them. A job that waits for
/// nothing is left as it is (409 `job_not_waiting`). Returns the job as it
/// now is.
pub async fn answer_input(ctx: &Ctx<'_>, id: &str, responses: &Map<String, Value>) -> Result<Job, ApiError> {
    change_extension_job(ctx, id, |job| {
        if !job.is_awaiting_input() {
            return Err(ApiError::Conflict {
                code: "job_not_waiting",
                message: format!("This job is {}: it waits for no input", job.status.as_str()),
            });
        }
        let extension = job.extension.get_or_insert_with(JobExtension::default);
        for (key, value) in responses {
            if extension.awaiting.remove(key).is_some() {
                extension.responses.insert(key.clone(), value.clone());
            }
        }
        if extension.awaiting.is_empty() {
            job.status = JobStatus::Queued;
        }
        Ok(true)
    })
    .await
}

/// Stops an extension job at any point: one that is queued or waits for
/// input is cancelled at once; a running one is asked to stop and ends
/// cancelled at its next check (`worker::cancel_requested`); a finished one
/// is left as it is. Returns the job as it now is.
pub async fn stop_extension(ctx: &Ctx<'_>, id: &str) -> Result<Job, ApiError> {
    change_extension_job(ctx, id, |job| {
        let waiting = job.is_awaiting_input();
        match job.status {
            JobStatus::Queued => job.status = JobStatus::Cancelled,
            JobStatus::Running if waiting => {
                job.status = JobStatus::Cancelled;
                if let Some(extension) = job.extension.as_mut() {
                    extension.awaiting.clear();
                }
            }
            JobStatus::Running => match job.extension.as_mut() {
                Some(extension) if !extension.cancel_requested => extension.cancel_requested = true,
                _ => return Ok(false),
            },
            JobStatus::Succeeded | JobStatus::Failed | JobStatus::Cancelled => return Ok(false),
        }
        Ok(true)
    })
    .await
}
