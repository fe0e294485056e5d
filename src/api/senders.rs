//! Allowed senders of an inbox: an address (`billing@acme.com`) or a whole
//! domain (`@acme.com`), stored lowercase. Adding is idempotent (201 the first
//! time, 200 after); removing one that is not allowed is 404.

use serde::Deserialize;
use serde_json::json;

use super::error::ApiError;
use super::input::{self};
use super::page::page_request;
use super::{ApiResponse, Ctx, inboxes};
use crate::domain::records::AllowedSender;
use crate::sys::now_string;

/// A sender as given: an address or `@domain`, normalised to lowercase.
pub fn parse_sender(field: &str, value: &str) -> Result<String, ApiError> {
    let value = value.trim().to_lowercase();
    match value.strip_prefix('@') {
        Some(domain) if input::is_domain(domain) => Ok(value),
        Some(_) => Err(ApiError::invalid(field, "must be an e-mail address or @domain")),
        None => input::email_address(field, &value)
            .map_err(|_| ApiError::invalid(field, "must be an e-mail address or @domain")),
    }
}

pub async fn list(ctx: &Ctx<'_>, inbox_id: &str, query: Option<&str>) -> Result<ApiResponse, ApiError> {
    let params = input::query(query, &["limit", "cursor"])?;
    let inbox = inboxes::load(ctx, inbox_id).await?;
    let page = page_request(ctx.secrets, ctx.tenant, &format!("senders/{}", inbox.id), &params)?;
    let found = ctx.store.list_senders(ctx.tenant, &inbox.id, page.limit, page.start.clone()).await?;
    let next = page.next_cursor(ctx.secrets, ctx.tenant, found.next);
    Ok(ApiResponse::ok(200, json!({"data": found.items, "meta": {"next_cursor": next}})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddBody {
    sender: String,
}

pub async fn add(ctx: &Ctx<'_>, inbox_id: &str, body: &[u8]) -> Result<ApiResponse, ApiError> {
    let body: AddBody = input::body(body)?;
    let sender = parse_sender("sender", &body.sender)?;
    let inbox = inboxes::load(ctx, inbox_id).await?;
    let allowed = AllowedSender { inbox_id: inbox.id, sender, created_at: now_string() };
    // Already allowed: nothing is written (the call's record is written alone).
    let created = ctx.store.add_sender(ctx.tenant, &allowed, Some(&ctx.audit(&allowed.inbox_id, 201)?)).await?;
    ApiResponse::data(if created { 201 } else { 200 }, &allowed)
}

pub async fn remove(ctx: &Ctx<'_>, inbox_id: &str, sender: &str) -> Result<ApiResponse, ApiError> {
    let inbox = inboxes::load(ctx, inbox_id).await?;
    let sender = parse_sender("sender", sender).map_err(|_| ApiError::NotFound { what: "Allowed sender" })?;
    if ctx.store.remove_sender(ctx.tenant, &inbox.id, &sender, &ctx.audit(&inbox.id, 200)?).await? {
        Ok(ApiResponse::ok(200, json!({"data": {"inbox_id": inbox.id, "sender": sender, "deleted": true}})))
    } else {
        Err(ApiError::NotFound { what: "Allowed sender" })
    }
}
