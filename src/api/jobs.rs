//! Jobs: the status of a long operation. Reading one needs the read scope of
//! its subject (`emails:read` for e-mail jobs, `webhooks:read` for webhook
//! and delivery jobs) and the viewer role.

use serde_json::json;

use super::error::ApiError;
use super::{ApiResponse, Ctx, check};
use crate::domain::ids::{Kind, is_id};
use crate::domain::records::{Job, JobKind, JobStatus};
use crate::domain::{Permission, Scope};
use crate::sys::new_id;
use crate::sys::now_string;

pub fn read_scope(kind: JobKind) -> Scope {
    match kind {
        JobKind::EmailProcess | JobKind::EmailReprocess => Scope::EmailsRead,
        JobKind::WebhookTest | JobKind::DeliveryResend => Scope::WebhooksRead,
    }
}

/// A new queued job about `subject_id`.
pub fn new_job(kind: JobKind, subject_id: &str) -> Job {
    let now = now_string();
    Job {
        id: new_id(Kind::Job),
        kind,
        subject_id: subject_id.to_owned(),
        status: JobStatus::Queued,
        attempts: 0,
        result: None,
        error: None,
        created_at: now.clone(),
        updated_at: now,
        lease_until: None,
    }
}

/// The 202 answer to an enqueued job: its JSON and where to follow it.
pub fn accepted(job: &Job) -> Result<ApiResponse, ApiError> {
    let job_json = serde_json::to_value(job).map_err(|_| ApiError::Unavailable)?;
    let mut response = ApiResponse::ok(202, json!({"data": {"job": job_json}}));
    response.location = Some(format!("/api/v1/jobs/{}", job.id));
    Ok(response)
}

pub async fn get(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let not_found = || ApiError::NotFound { what: "Job" };
    if !is_id(Kind::Job, id) {
        return Err(not_found());
    }
    let job = ctx.store.get_job(ctx.tenant, id).await?.ok_or_else(not_found)?;
    check(ctx, read_scope(job.kind), Permission::Read)?;
    ApiResponse::data(200, &job)
}
