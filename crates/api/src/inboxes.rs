//! Inboxes: list (filters `status`, `q`), get, upsert by `slug`, update, soft delete.

use http::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::error::ApiError;
use super::input::{self, invalid_parameter};
use super::operation::{Operation, Tool, Verb, filters, operation};
use super::page::page_request;
use super::schemas::{Record, Shape, caller_string, described, one_of};
use super::shape::{Name, Slug, body};
use super::upsert::{self, Reserved, Upserted};
use super::{ApiResponse, Ctx, Input, Needs, Op};
use inbox_domain::Permission::{Administer, Read};
use inbox_domain::Scope;
use inbox_domain::ids::Kind;
use inbox_domain::records::{Inbox, InboxStatus, SenderPolicy};
use inbox_store::InboxFilter;
use inbox_store::StoreError;
use inbox_support::sys::new_id;
use inbox_support::sys::now_string;

fn not_found() -> ApiError {
    ApiError::NotFound { what: "Inbox" }
}

/// The live inbox `id` of the caller's workspace, or 404.
pub async fn load(ctx: &Ctx<'_>, id: &str) -> Result<Inbox, ApiError> {
    super::fetch(Kind::Inbox, "Inbox", id, async || ctx.store.get_inbox(ctx.tenant, id).await).await
}

/// The operations of this module, in catalogue order.
pub static OPERATIONS: &[Op] = &[&LIST, &GET, &UPSERT, &UPDATE, &DELETE];

const READ: Needs = Needs::Role(Scope::InboxesRead, Read);
const WRITE: Needs = Needs::Role(Scope::InboxesWrite, Administer);

/// A tool whose call is confirmed by the user when it gives `sender_policy`
/// (who may send to the inbox) or `status` (whether it takes mail at all);
/// without them (a new name), the change runs at once.
///
/// Any `status` asks, `active` included, as any `sender_policy` does: the
/// decision is made on the arguments, before the inbox is read, and undoing
/// a pause is no more harmless than making one: a person pauses an inbox
/// flooded with forged bills or a compromised sender, and an injected prompt
/// re-opening it brings that mail back into processing and onto webhooks.
const fn policy_tool(name: &'static str, title: &'static str, description: &'static str) -> Tool {
    let effect = "Whether and from whom this inbox takes mail changes: with status paused it refuses all new mail until it is active again; with sender_policy anyone, mail from every sender is accepted and processed; with allowed_only, only mail from the inbox's allowed senders is.";
    Tool { confirm_when: &["sender_policy", "status"], ..Tool::destructive(name, title, description, effect) }
}

pub static LIST: Operation = Operation {
    summary: "List inboxes",
    list: Some(filters!(
        "status" => one_of(InboxStatus::NAMES),
        "q" => described(caller_string(1, 100), "Text to find in name or slug"),
    )),
    answers: &[(StatusCode::OK, Shape::Page(Record::Inbox))],
    tool: Some(Tool::read(
        "inboxes_list",
        "List inboxes",
        "List the workspace's inboxes. Filter by status or by text in the name or slug. Paginated: pass meta.next_cursor back as cursor.",
    )),
    ..operation("inboxes_list", Verb::Get, "/inboxes", READ, |ctx, input| Box::pin(list(ctx, input)))
};

pub static GET: Operation = Operation {
    summary: "Get an inbox",
    id_of: "inbox",
    answers: &[(StatusCode::OK, Shape::Data(Record::Inbox))],
    tool: Some(Tool::read("inboxes_get", "Get inbox", "Fetch one inbox by id.")),
    ..operation("inbox_get", Verb::Get, "/inboxes/{id}", READ, |ctx, input| Box::pin(get(ctx, input.id())))
};

pub static UPSERT: Operation = Operation {
    summary: "Create or update an inbox by slug",
    body: Some(body!(UpsertBody)),
    answers: &[(StatusCode::CREATED, Shape::Data(Record::Inbox)), (StatusCode::OK, Shape::Data(Record::Inbox))],
    tool: Some(policy_tool(
        "inboxes_upsert",
        "Create or update inbox",
        "Create the inbox with this slug, or update it when the slug exists. Omitted optional fields keep their value. Giving status (paused stops all mail intake) or sender_policy (who may send to the inbox) asks the user to confirm.",
    )),
    ..operation("inboxes_upsert", Verb::Put, "/inboxes", WRITE, |ctx, input| Box::pin(upsert(ctx, input)))
};

pub static UPDATE: Operation = Operation {
    summary: "Update an inbox",
    id_of: "inbox",
    body: Some(body!(UpdateBody)),
    answers: &[(StatusCode::OK, Shape::Data(Record::Inbox))],
    tool: Some(policy_tool(
        "inboxes_update",
        "Update inbox",
        "Change an inbox's name, status or sender policy. Give at least one of them. Giving status (paused stops all mail intake) or sender_policy (who may send to the inbox) asks the user to confirm; a new name alone runs at once.",
    )),
    ..operation("inbox_update", Verb::Patch, "/inboxes/{id}", WRITE, |ctx, input| Box::pin(update(ctx, input)))
};

pub static DELETE: Operation = Operation {
    summary: "Delete an inbox (soft delete; frees the slug)",
    id_of: "inbox",
    answers: &[(StatusCode::OK, Shape::Deleted)],
    tool: Some(Tool::destructive(
        "inboxes_delete",
        "Delete inbox",
        "Soft-delete an inbox. Destructive: the user is asked to confirm.",
        "The inbox disappears from lists and reads and its slug becomes free; its e-mails are kept.",
    )),
    ..operation("inbox_delete", Verb::Delete, "/inboxes/{id}", WRITE, |ctx, input| Box::pin(delete(ctx, input.id())))
};

async fn list(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let params = input.params()?;
    let status =
        match params.get("status") {
            None => None,
            Some(s) => Some(InboxStatus::parse(s).ok_or_else(|| {
                invalid_parameter("status", &format!("must be {}", input::or_list(InboxStatus::NAMES)))
            })?),
        };
    let q = match params.get("q").map(|q| input::caller_query("q", q)).transpose()? {
        None => None,
        Some(q) if q.chars().count() <= 100 && !q.trim().is_empty() => Some(q.trim().to_lowercase()),
        Some(_) => return Err(invalid_parameter("q", "must have 1 to 100 characters")),
    };
    let page = page_request(ctx.secrets, ctx.tenant, "inboxes", &params)?;
    let found = ctx.store.list_inboxes(ctx.tenant, &InboxFilter { status, q }, page.limit, page.start.clone()).await?;
    let next = page.next_cursor(ctx.secrets, ctx.tenant, found.next);
    Ok(ApiResponse::ok(StatusCode::OK, json!({"data": found.items, "meta": {"next_cursor": next}})))
}

async fn get(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    ApiResponse::data(StatusCode::OK, &load(ctx, id).await?)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpsertBody {
    slug: Slug,
    name: Name,
    status: Option<InboxStatus>,
    /// allowed_only rejects mail from senders not on the inbox's list
    sender_policy: Option<SenderPolicy>,
}

/// An inbox upsert: the slug is the reserved key.
struct BySlug<'a> {
    ctx: &'a Ctx<'a>,
    slug: String,
    name: String,
    status: Option<InboxStatus>,
    sender_policy: Option<SenderPolicy>,
}

impl Reserved for BySlug<'_> {
    type Record = Inbox;

    async fn owner(&self) -> Result<Option<String>, StoreError> {
        self.ctx.store.slug_owner(self.ctx.tenant, &self.slug).await
    }
    async fn reserve(&self, id: &str) -> Result<bool, StoreError> {
        self.ctx.store.reserve_slug(self.ctx.tenant, &self.slug, id).await
    }
    async fn release(&self, id: &str) -> Result<(), StoreError> {
        self.ctx.store.release_slug(self.ctx.tenant, &self.slug, id).await
    }
    async fn find(&self, id: &str) -> Result<Option<Inbox>, StoreError> {
        self.ctx.store.get_inbox_any(self.ctx.tenant, id).await
    }
    fn is_deleted(record: &Inbox) -> bool {
        record.deleted_at.is_some()
    }
    fn fresh(&self, id: &str) -> Result<Inbox, ApiError> {
        let now = now_string();
        Ok(Inbox {
            id: id.to_owned(),
            slug: self.slug.clone(),
            name: self.name.clone(),
            status: self.status.unwrap_or(InboxStatus::Active),
            sender_policy: self.sender_policy.unwrap_or(SenderPolicy::Anyone),
            created_at: now.clone(),
            updated_at: now,
            deleted_at: None,
        })
    }
    async fn insert(&self, record: &Inbox) -> Result<bool, StoreError> {
        let audit = self.ctx.audit(&record.id, StatusCode::CREATED)?;
        self.ctx.store.insert_inbox(self.ctx.tenant, record, Some(&audit)).await
    }
    async fn update(&self, mut inbox: Inbox) -> Result<Inbox, StoreError> {
        inbox.name = self.name.clone();
        inbox.status = self.status.unwrap_or(inbox.status);
        inbox.sender_policy = self.sender_policy.unwrap_or(inbox.sender_policy);
        inbox.updated_at = now_string();
        let audit = self.ctx.audit(&inbox.id, StatusCode::OK)?;
        self.ctx.store.update_inbox(self.ctx.tenant, &inbox, None, &audit).await?;
        Ok(inbox)
    }
    fn new_id(&self) -> String {
        new_id(Kind::Inbox)
    }
}

/// `PUT /inboxes`: creates the inbox with this slug (201) or updates it (200).
/// Omitted optional fields keep their current value (or the default on create:
/// `active`, `anyone`). Racing upserts of one slug create one inbox (see
/// `api::upsert`).
async fn upsert(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let body: UpsertBody = input.body()?;
    let (slug, name) = (body.slug.into_string(), body.name.into_string());
    match upsert::upsert(&BySlug { ctx, slug, name, status: body.status, sender_policy: body.sender_policy }).await? {
        Upserted::Created(inbox) => ApiResponse::data(StatusCode::CREATED, &inbox),
        Upserted::Updated(inbox) => ApiResponse::data(StatusCode::OK, &inbox),
    }
}

// At least one field (`minProperties`), which the handler also checks: a
// tool's arguments hold the inbox's id beside them. (Comments on a body type
// are `//`: a doc comment would be published as its schema's description.)
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("minProperties" = 1))]
struct UpdateBody {
    name: Option<Name>,
    status: Option<InboxStatus>,
    sender_policy: Option<SenderPolicy>,
}

async fn update(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let id = input.id();
    let body: UpdateBody = input.body()?;
    if body.name.is_none() && body.status.is_none() && body.sender_policy.is_none() {
        return Err(ApiError::invalid("body", "give at least one of name, sender_policy, status"));
    }
    let name = body.name.map(Name::into_string);
    let mut inbox = load(ctx, id).await?;
    let previous = inbox.updated_at.clone();
    if let Some(name) = name {
        inbox.name = name;
    }
    inbox.status = body.status.unwrap_or(inbox.status);
    inbox.sender_policy = body.sender_policy.unwrap_or(inbox.sender_policy);
    inbox.updated_at = now_string();
    ctx.store.update_inbox(ctx.tenant, &inbox, Some(&previous), &ctx.audit(&inbox.id, StatusCode::OK)?).await?;
    ApiResponse::data(StatusCode::OK, &inbox)
}

async fn delete(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let mut inbox = load(ctx, id).await?;
    inbox.updated_at = now_string();
    match ctx.store.delete_inbox(ctx.tenant, &inbox, &ctx.audit(&inbox.id, StatusCode::OK)?).await {
        Ok(()) => Ok(ApiResponse::ok(StatusCode::OK, json!({"data": {"id": inbox.id, "deleted": true}}))),
        // Deleted by a concurrent request in between: it is gone either way.
        Err(StoreError::Conflict) => Err(not_found()),
        Err(e) => Err(e.into()),
    }
}
