//! E-mails: list (newest first; filters `inbox_id`, `status`, `from`,
//! `received_after`, `received_before`), get, reprocess (202 with a job),
//! soft delete. Subject and body are third-party text and are only ever
//! returned as JSON string values.

use serde::Deserialize;
use serde_json::json;

use super::error::ApiError;
use super::input::{self, invalid_parameter, or_list};
use super::jobs::{accepted, new_job};
use super::page::page_request;
use super::{ApiResponse, Ctx};
use crate::domain::clock::{format, parse_instant};
use crate::domain::ids::{Kind, is_id};
use crate::domain::records::{Attachment, Email, EmailStatus, InboxStatus, JobKind, SenderPolicy};
use crate::store::EmailFilter;
use crate::store::StoreError;
use crate::sys::new_id;
use crate::sys::now_string;

pub async fn load(ctx: &Ctx<'_>, id: &str) -> Result<Email, ApiError> {
    super::fetch(Kind::Email, "E-mail", id, async || ctx.store.get_email(ctx.tenant, id).await).await
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
        let parsed = EmailStatus::parse(status)
            .ok_or_else(|| invalid_parameter("status", &format!("must be {}", or_list(EmailStatus::NAMES))))?;
        filter.status = Some(parsed);
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
    let page = page_request(ctx.secrets, ctx.tenant, "emails", &params)?;
    let found = ctx.store.list_emails(ctx.tenant, &filter, page.limit, page.start.clone()).await?;
    let next = page.next_cursor(ctx.secrets, ctx.tenant, found.next);
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
    let (previous, previous_status) = (email.updated_at.clone(), email.status);
    let job = new_job(JobKind::EmailReprocess, &email.id);
    email.status = EmailStatus::Processing;
    email.updated_at = now_string();
    let audit = ctx.audit(&email.id, 202)?;
    match ctx.store.enqueue_email_job(ctx.tenant, &email, &previous, previous_status, &job, &audit).await {
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
    ctx.store.delete_email(ctx.tenant, &email, &previous, &ctx.audit(&email.id, 200)?).await?;
    Ok(ApiResponse::ok(200, json!({"data": {"id": email.id, "deleted": true}})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IngestBody {
    from: String,
    to: String,
    subject: String,
    text: String,
    received_at: Option<String>,
    #[serde(default)]
    attachments: Vec<Attachment>,
}

/// Largest body text accepted (the request itself is capped at 1 MiB).
const MAX_TEXT_CHARS: usize = 512 * 1024;

/// `POST /inboxes/{id}/emails`, for the organization's mail-receiving
/// pipeline (scope `emails:ingest`, no person). Stores the e-mail —
/// `rejected` when the inbox accepts allowed senders only and this one is not
/// allowed — and enqueues its processing in the same transaction: 202.
pub async fn ingest(ctx: &Ctx<'_>, inbox_id: &str, body: &[u8]) -> Result<ApiResponse, ApiError> {
    let body: IngestBody = input::body(body)?;
    let from = input::email_address("from", &body.from)?;
    let to = input::email_address("to", &body.to)?;
    let subject = body.subject.trim().to_owned();
    if subject.chars().count() > 998 {
        return Err(ApiError::invalid("subject", "must have at most 998 characters"));
    }
    if body.text.chars().count() > MAX_TEXT_CHARS {
        return Err(ApiError::invalid("text", "must have at most 524288 characters"));
    }
    if body.attachments.len() > 50 {
        return Err(ApiError::invalid("attachments", "at most 50 attachments"));
    }
    for (i, a) in body.attachments.iter().enumerate() {
        input::text(&format!("attachments[{i}].name"), &a.name, 255)?;
        input::text(&format!("attachments[{i}].content_type"), &a.content_type, 127)?;
    }
    let received_at = match &body.received_at {
        None => now_string(),
        Some(raw) => format(
            crate::domain::clock::parse_instant(raw)
                .filter(|_| raw.contains('T'))
                .ok_or_else(|| ApiError::invalid("received_at", "must be an RFC 3339 timestamp"))?,
        ),
    };
    let inbox = super::inboxes::load(ctx, inbox_id).await?;
    if inbox.status == InboxStatus::Paused {
        return Err(ApiError::Conflict {
            code: "inbox_paused",
            message: "This inbox is paused and accepts no mail".into(),
        });
    }
    let allowed =
        inbox.sender_policy == SenderPolicy::Anyone || ctx.store.sender_allowed(ctx.tenant, &inbox.id, &from).await?;
    let now = now_string();
    let email = Email {
        id: new_id(Kind::Email),
        inbox_id: inbox.id.clone(),
        from: from.clone(),
        to,
        subject,
        received_at,
        status: if allowed { EmailStatus::Received } else { EmailStatus::Rejected },
        text: body.text,
        attachments: body.attachments,
        extracted: None,
        error: (!allowed).then(|| format!("sender {from} is not allowed in inbox {}", inbox.slug)),
        created_at: now.clone(),
        updated_at: now,
        deleted_at: None,
    };
    let job = new_job(JobKind::EmailProcess, &email.id);
    ctx.store.create_email_with_job(ctx.tenant, &email, &job, &ctx.audit(&email.id, 202)?).await?;
    let mut response = accepted(&job)?;
    if let Some(serde_json::Value::Object(data)) = response.body.get_mut("data") {
        data.insert("email".into(), json!({"id": email.id, "status": email.status}));
    }
    Ok(response)
}
