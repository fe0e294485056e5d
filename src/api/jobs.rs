//! Jobs: the status of a long operation. Reading one needs the read scope of
//! its subject (`emails:read` for e-mail jobs, `webhooks:read` for webhook
//! and delivery jobs) and the viewer role; cancelling one needs the write
//! scope of its subject and the operator role. Only a queued job can be
//! cancelled; cancelling a cancelled job again answers the same (200), one
//! that is running or finished is left alone (409 `job_not_cancellable`).

use http::StatusCode;
use serde_json::json;

use super::error::ApiError;
use super::operation::{Operation, Tool, Verb, operation};
use super::schemas::{Record, Shape};
use super::{ApiResponse, Ctx, Needs, Op, check_job};
use crate::domain::ids::{Kind, is_id};
use crate::domain::records::{Job, JobKind, JobStatus};
use crate::domain::{Permission, Scope};
use crate::store::ToCancel;
use crate::sys::now_string;

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

pub fn read_scope(kind: JobKind) -> Scope {
    match kind {
        JobKind::EmailProcess | JobKind::EmailReprocess => Scope::EmailsRead,
        JobKind::WebhookTest | JobKind::DeliveryResend => Scope::WebhooksRead,
    }
}

pub fn write_scope(kind: JobKind) -> Scope {
    match kind {
        JobKind::EmailProcess | JobKind::EmailReprocess => Scope::EmailsWrite,
        JobKind::WebhookTest | JobKind::DeliveryResend => Scope::WebhooksWrite,
    }
}

/// A new queued job about `subject_id` (in write shard 0).
pub fn new_job(kind: JobKind, subject_id: &str) -> Job {
    new_job_in(kind, subject_id, &crate::domain::Shards::default())
}

/// A new queued job about `subject_id`, in one of the write `shards` of its workspace.
pub fn new_job_in(kind: JobKind, subject_id: &str, shards: &crate::domain::Shards) -> Job {
    let now = now_string();
    Job {
        id: crate::sys::new_id_in(Kind::Job, shards),
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
    check_job(ctx, read_scope(job.kind), Permission::Read)?;
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
    check_job(ctx, write_scope(read.job.kind), Permission::Operate)?;
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
