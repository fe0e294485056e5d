//! E-mails: list (newest first; filters `inbox_id`, `status`, `from`,
//! `received_after`, `received_before`), get, reprocess (202 with a job),
//! soft delete. Subject and body are third-party text and are only ever
//! returned as JSON string values.

use serde_json::json;

use super::error::ApiError;
use super::input::{self, invalid_parameter};
use super::jobs::{accepted, new_job};
use super::page::page_request;
use super::{ApiResponse, Ctx};
use crate::domain::clock::{format, now_string, parse_instant};
use crate::domain::ids::{Kind, is_id};
use crate::domain::records::{Email, EmailStatus, JobKind};
use crate::store::StoreError;
use crate::store::records::EmailFilter;

fn not_found() -> ApiError {
    ApiError::NotFound { what: "E-mail" }
}

pub async fn load(ctx: &Ctx<'_>, id: &str) -> Result<Email, ApiError> {
    if !is_id(Kind::Email, id) {
        return Err(not_found());
    }
    ctx.app.store.get_email(ctx.tenant, id).await?.ok_or_else(not_found)
}

pub async fn list(ctx: &Ctx<'_>, query: Option<&str>) -> Result<ApiResponse, ApiError> {
    let params =
        input::query(query, &["limit", "cursor", "inbox_id", "status", "from", "received_after", "received_before"])?;
    let mut filter = EmailFilter::default();
    if let Some(inbox) = params.get("inbox_id") {
        if !is_id(Kind::Inbox, inbox) {
            return Err(invalid_parameter("inbox_id", "must be an inbox id (inb_…)"));
        }
        filter.inbox_id = Some(inbox.clone());
    }
    if let Some(status) = params.get("status") {
        let known = ["received", "processing", "processed", "failed", "rejected"];
        if !known.contains(&status.as_str()) {
            return Err(invalid_parameter("status", "must be received, processing, processed, failed or rejected"));
        }
        filter.status = Some(status.clone());
    }
    if let Some(from) = params.get("from") {
        let address =
            input::email_address("from", from).map_err(|_| invalid_parameter("from", "must be an e-mail address"))?;
        filter.from = Some(address);
    }
    for (name, slot) in [("received_after", &mut filter.after), ("received_before", &mut filter.before)] {
        if let Some(raw) = params.get(name) {
            let instant = parse_instant(raw)
                .ok_or_else(|| invalid_parameter(name, "must be a date (YYYY-MM-DD) or an RFC 3339 timestamp"))?;
            *slot = Some(format(instant));
        }
    }
    if let (Some(after), Some(before)) = (&filter.after, &filter.before)
        && after > before
    {
        return Err(invalid_parameter("received_after", "must not be later than received_before"));
    }
    let page = page_request(&ctx.app.secrets, ctx.tenant, "emails", &params)?;
    let found = ctx.app.store.list_emails(ctx.tenant, &filter, page.limit, page.start.clone()).await?;
    let next = page.next_cursor(&ctx.app.secrets, ctx.tenant, found.next);
    Ok(ApiResponse::ok(200, json!({"data": found.items, "meta": {"next_cursor": next}})))
}

pub async fn get(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    ApiResponse::data(200, &load(ctx, id).await?)
}

/// Moves the e-mail to `processing` and enqueues its processing, in one
/// transaction; 409 while it is already being processed.
pub async fn reprocess(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let mut email = load(ctx, id).await?;
    if email.status == EmailStatus::Processing {
        return Err(ApiError::Conflict {
            code: "already_processing",
            message: "This e-mail is already being processed; follow its job".into(),
        });
    }
    let previous = email.updated_at.clone();
    let job = new_job(JobKind::EmailReprocess, &email.id);
    email.status = EmailStatus::Processing;
    email.updated_at = now_string();
    match ctx.app.store.enqueue_email_job(ctx.tenant, &email, &previous, &job).await {
        Ok(()) => accepted(&job),
        Err(StoreError::Conflict) => Err(ApiError::Conflict {
            code: "conflict",
            message: "The e-mail changed while the request ran; read it again and retry".into(),
        }),
        Err(e) => Err(e.into()),
    }
}

pub async fn delete(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let mut email = load(ctx, id).await?;
    let previous = email.updated_at.clone();
    email.updated_at = now_string();
    email.deleted_at = Some(email.updated_at.clone());
    ctx.app.store.delete_email(ctx.tenant, &email, &previous).await?;
    Ok(ApiResponse::ok(200, json!({"data": {"id": email.id, "deleted": true}})))
}
