//! Allowed senders of an inbox: an address (`billing@acme.com`) or a whole
//! domain (`@acme.com`), stored lowercase. Adding is idempotent (201 the first
//! time, 200 after); removing one that is not allowed is 404.

use http::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::error::ApiError;
use super::input;
use super::operation::{NO_FILTERS, Operation, Tool, Verb, operation};
use super::page::page_request;
use super::schemas::{Record, Shape};
use super::shape::{Text, body};
use super::{ApiResponse, Ctx, Input, Needs, Op, inboxes};
use inbox_domain::Permission::{Administer, Read};
use inbox_domain::Scope;
use inbox_domain::records::AllowedSender;
use inbox_support::sys::now_string;

/// A sender as given: an address or `@domain`, normalised to lowercase.
pub fn parse_sender(field: &str, value: &str) -> Result<String, ApiError> {
    let value = input::caller_text(field, value)?.trim().to_lowercase();
    match value.strip_prefix('@') {
        Some(domain) if input::is_domain(domain) => Ok(value),
        Some(_) => Err(ApiError::invalid(field, "must be an e-mail address or @domain")),
        None => input::email_address(field, &value)
            .map_err(|_| ApiError::invalid(field, "must be an e-mail address or @domain")),
    }
}

/// The operations of this module, in catalogue order.
pub static OPERATIONS: &[Op] = &[&LIST, &ADD, &REMOVE];

const WRITE: Needs = Needs::Role(Scope::InboxesWrite, Administer);

pub static LIST: Operation = Operation {
    summary: "List an inbox's allowed senders",
    id_of: "inbox",
    list: Some(NO_FILTERS),
    answers: &[(StatusCode::OK, Shape::Page(Record::AllowedSender))],
    tool: Some(Tool::read(
        "inbox_senders_list",
        "List allowed senders",
        "List the senders (addresses or @domains) an inbox accepts when its policy is allowed_only.",
    )),
    ..operation(
        "senders_list",
        Verb::Get,
        "/inboxes/{id}/senders",
        Needs::Role(Scope::InboxesRead, Read),
        |ctx, input| Box::pin(list(ctx, input)),
    )
};

pub static ADD: Operation = Operation {
    summary: "Allow a sender (address or @domain)",
    id_of: "inbox",
    body: Some(body!(AddBody)),
    answers: &[
        (StatusCode::CREATED, Shape::Data(Record::AllowedSender)),
        (StatusCode::OK, Shape::Data(Record::AllowedSender)),
    ],
    may_change_nothing: true,
    tool: Some(Tool::destructive(
        "inbox_senders_add",
        "Allow sender",
        "Allow an address (billing@acme.com) or a whole domain (@acme.com) to send to an inbox. Destructive: the user is asked to confirm.",
        "Mail from this sender will be accepted and processed instead of rejected.",
    )),
    ..operation("senders_add", Verb::Post, "/inboxes/{id}/senders", WRITE, |ctx, input| Box::pin(add(ctx, input)))
};

pub static REMOVE: Operation = Operation {
    summary: "Stop allowing a sender",
    id_of: "inbox",
    answers: &[(StatusCode::OK, Shape::SenderDeleted)],
    tool: Some(Tool::destructive(
        "inbox_senders_remove",
        "Stop allowing sender",
        "Remove a sender from an inbox's allowed list. Destructive: the user is asked to confirm.",
        "New mail from this sender will be rejected when the inbox accepts allowed senders only.",
    )),
    ..operation("sender_remove", Verb::Delete, "/inboxes/{id}/senders/{sender}", WRITE, |ctx, input| {
        Box::pin(remove(ctx, input.id(), input.sender()))
    })
};

async fn list(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let (inbox_id, params) = (input.id(), input.params()?);
    let inbox = inboxes::load(ctx, inbox_id).await?;
    let page = page_request(ctx.secrets, ctx.tenant, &format!("senders/{}", inbox.id), &params)?;
    let found = ctx.store.list_senders(ctx.tenant, &inbox.id, page.limit, page.start.clone()).await?;
    let next = page.next_cursor(ctx.secrets, ctx.tenant, found.next);
    Ok(ApiResponse::ok(StatusCode::OK, json!({"data": found.items, "meta": {"next_cursor": next}})))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddBody {
    /// An e-mail address or @domain
    sender: Text<3, 254>,
}

async fn add(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let (inbox_id, body) = (input.id(), input.body::<AddBody>()?);
    let sender = parse_sender("sender", body.sender.as_str())?;
    let inbox = inboxes::load(ctx, inbox_id).await?;
    let allowed = AllowedSender { inbox_id: inbox.id, sender, created_at: now_string() };
    // Already allowed: nothing is written (the call's record is written alone).
    let created =
        ctx.store.add_sender(ctx.tenant, &allowed, Some(&ctx.audit(&allowed.inbox_id, StatusCode::CREATED)?)).await?;
    ApiResponse::data(if created { StatusCode::CREATED } else { StatusCode::OK }, &allowed)
}

async fn remove(ctx: &Ctx<'_>, inbox_id: &str, sender: &str) -> Result<ApiResponse, ApiError> {
    input::caller_text("sender", sender)?;
    let inbox = inboxes::load(ctx, inbox_id).await?;
    let sender = parse_sender("sender", sender).map_err(|_| ApiError::NotFound { what: "Allowed sender" })?;
    if ctx.store.remove_sender(ctx.tenant, &inbox.id, &sender, &ctx.audit(&inbox.id, StatusCode::OK)?).await? {
        Ok(ApiResponse::ok(StatusCode::OK, json!({"data": {"inbox_id": inbox.id, "sender": sender, "deleted": true}})))
    } else {
        Err(ApiError::NotFound { what: "Allowed sender" })
    }
}
