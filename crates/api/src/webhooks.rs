//! Webhooks and their deliveries: list, get, upsert by `url`, soft delete,
//! test (202), secret rotation, delivery attempts (newest first), resend (202).
//!
//! The signing secret is generated here, sealed at rest with the server's
//! key, shown in full only in the response that created or rotated it, and
//! otherwise only as its last four characters.

use base64::Engine as _;
use http::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::emails::job_tool;
use super::error::ApiError;
use super::input;
use super::jobs::{accepted, new_job_in};
use super::operation::{NO_FILTERS, Operation, Tool, Verb, operation};
use super::page::page_request;
use super::schemas::{Record, SUBSCRIBABLE, Shape};
use super::shape::{Text, body, value_rule};
use super::upsert::{self, Reserved, Upserted};
use super::{ApiResponse, Ctx, Input, Needs, Op};
use inbox_domain::Permission::{Administer, Operate, Read};
use inbox_domain::Scope;
use inbox_domain::ids::{Kind, is_id};
use inbox_domain::records::{EventType, JobKind, Webhook, WebhookStatus};
use inbox_outbound::{Refusal, check_target, normalise_host};
use inbox_store::StoreError;
use inbox_store::StoredWebhook;
use inbox_support::sys::new_id;
use inbox_support::sys::now_string;

/// The operations of this module, in catalogue order.
pub static OPERATIONS: &[Op] =
    &[&LIST, &GET, &UPSERT, &DELETE, &TEST, &ROTATE_SECRET, &DELIVERIES, &DELIVERY_GET, &RESEND];

const READ: Needs = Needs::Role(Scope::WebhooksRead, Read);
const ADMINISTER: Needs = Needs::Role(Scope::WebhooksWrite, Administer);
const OPERATE: Needs = Needs::Role(Scope::WebhooksWrite, Operate);

pub static LIST: Operation = Operation {
    summary: "List webhooks",
    list: Some(NO_FILTERS),
    answers: &[(StatusCode::OK, Shape::Page(Record::Webhook))],
    tool: Some(Tool::read(
        "webhooks_list",
        "List webhooks",
        "List the workspace's webhooks (URL, events, status; never the secret).",
    )),
    ..operation("webhooks_list", Verb::Get, "/webhooks", READ, |ctx, input| Box::pin(list(ctx, input)))
};

pub static GET: Operation = Operation {
    summary: "Get a webhook",
    id_of: "webhook",
    answers: &[(StatusCode::OK, Shape::Data(Record::Webhook))],
    tool: Some(Tool::read(
        "webhooks_get",
        "Get webhook",
        "Fetch one webhook. Its secret is never shown, only its last 4 characters.",
    )),
    ..operation("webhook_get", Verb::Get, "/webhooks/{id}", READ, |ctx, input| Box::pin(get(ctx, input.id())))
};

pub static UPSERT: Operation = Operation {
    summary: "Create or update a webhook by URL (a new secret is shown once)",
    body: Some(body!(UpsertBody)),
    answers: &[
        (StatusCode::CREATED, Shape::Data(Record::WebhookWithSecret)),
        (StatusCode::OK, Shape::Data(Record::Webhook)),
    ],
    tool: Some(Tool::destructive(
        "webhooks_upsert",
        "Create or update webhook",
        "Create the webhook for this https URL, or update it when the URL exists. A new webhook's signing secret is in this response only. Destructive: the user is asked to confirm (the URL decides where the workspace's events go; status disabled stops them).",
        "The workspace's events (e-mail senders, amounts, due dates and bank lines) will be sent to this URL, signed with a secret returned once; for a URL already registered, its events, status or description change, and status disabled stops its notifications.",
    )),
    ..operation("webhooks_upsert", Verb::Put, "/webhooks", ADMINISTER, |ctx, input| Box::pin(upsert(ctx, input)))
};

pub static DELETE: Operation = Operation {
    summary: "Delete a webhook (soft delete)",
    id_of: "webhook",
    answers: &[(StatusCode::OK, Shape::Deleted)],
    tool: Some(Tool::destructive(
        "webhooks_delete",
        "Delete webhook",
        "Soft-delete a webhook; it receives no more events. Destructive: the user is asked to confirm.",
        "The webhook stops receiving events and disappears from lists and reads.",
    )),
    ..operation("webhook_delete", Verb::Delete, "/webhooks/{id}", ADMINISTER, |ctx, input| {
        Box::pin(delete(ctx, input.id()))
    })
};

pub static TEST: Operation = Operation {
    summary: "Send a webhook.test event (202 with a job)",
    id_of: "webhook",
    answers: &[(StatusCode::ACCEPTED, Shape::Accepted)],
    enqueues: true,
    tool: Some(Tool {
        idempotent: false,
        ..Tool::destructive(
            "webhooks_test",
            "Test webhook",
            job_tool!("Send a signed webhook.test event to the webhook."),
            "A signed webhook.test event is sent to the webhook's URL and recorded as a delivery.",
        )
    }),
    ..operation("webhook_test", Verb::Post, "/webhooks/{id}/test", OPERATE, |ctx, input| {
        Box::pin(test(ctx, input.id()))
    })
};

pub static ROTATE_SECRET: Operation = Operation {
    summary: "Replace a webhook's signing secret (shown once)",
    id_of: "webhook",
    answers: &[(StatusCode::OK, Shape::Data(Record::WebhookWithSecret))],
    tool: Some(Tool {
        idempotent: false,
        ..Tool::destructive(
            "webhooks_rotate_secret",
            "Rotate webhook secret",
            "Replace the webhook's signing secret; the new secret is in this response only. Destructive: the user is asked to confirm.",
            "The old secret stops working at once: the receiver must be given the new one to keep verifying deliveries.",
        )
    }),
    ..operation("webhook_rotate_secret", Verb::Post, "/webhooks/{id}/rotate_secret", ADMINISTER, |ctx, input| {
        Box::pin(rotate_secret(ctx, input.id()))
    })
};

pub static DELIVERIES: Operation = Operation {
    summary: "List a webhook's delivery attempts, newest first",
    id_of: "webhook",
    list: Some(NO_FILTERS),
    answers: &[(StatusCode::OK, Shape::Page(Record::Delivery))],
    tool: Some(Tool::read(
        "webhook_deliveries_list",
        "List webhook deliveries",
        "List a webhook's delivery attempts, newest first: status code, duration, error.",
    )),
    ..operation("deliveries_list", Verb::Get, "/webhooks/{id}/deliveries", READ, |ctx, input| {
        Box::pin(deliveries(ctx, input))
    })
};

/// One delivery attempt (REST only: an agent reads them in lists).
pub static DELIVERY_GET: Operation = Operation {
    summary: "Get a delivery attempt",
    id_of: "delivery",
    answers: &[(StatusCode::OK, Shape::Data(Record::Delivery))],
    ..operation("delivery_get", Verb::Get, "/webhook_deliveries/{id}", READ, |ctx, input| {
        Box::pin(delivery(ctx, input.id()))
    })
};

pub static RESEND: Operation = Operation {
    summary: "Resend a delivery as a new attempt (202 with a job)",
    id_of: "delivery",
    answers: &[(StatusCode::ACCEPTED, Shape::Accepted)],
    enqueues: true,
    tool: Some(Tool {
        idempotent: false,
        ..Tool::destructive(
            "webhook_deliveries_resend",
            "Resend delivery",
            job_tool!("Send a delivery's event again, as a new attempt."),
            "The event is delivered again to the webhook's URL as a new attempt.",
        )
    }),
    ..operation("delivery_resend", Verb::Post, "/webhook_deliveries/{id}/resend", OPERATE, |ctx, input| {
        Box::pin(resend(ctx, input.id()))
    })
};

fn not_found() -> ApiError {
    ApiError::NotFound { what: "Webhook" }
}

pub async fn load(ctx: &Ctx<'_>, id: &str) -> Result<StoredWebhook, ApiError> {
    super::fetch(Kind::Webhook, "Webhook", id, async || ctx.store.get_webhook(ctx.tenant, id).await).await
}

/// A new signing secret: `whsec_` and 32 random bytes, base64url.
fn new_secret() -> String {
    let bytes: [u8; 32] = inbox_support::sys::random();
    format!("whsec_{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

fn last4(secret: &str) -> String {
    secret.chars().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect()
}

/// The webhook as shown, with the secret added when it was just created or rotated.
fn view(webhook: &Webhook, secret: Option<&str>) -> Result<Value, ApiError> {
    let mut value = serde_json::to_value(webhook).map_err(ApiError::unserializable)?;
    if let (Some(secret), Value::Object(map)) = (secret, &mut value) {
        map.insert("secret".into(), Value::from(secret));
    }
    Ok(value)
}

/// The longest webhook URL kept, counted on the stored (normalised,
/// percent-encoded) form.
pub const MAX_URL_CHARS: usize = 2048;

/// Checks a webhook URL and returns it normalised: `https` (plain `http` only
/// for loopback hosts under the development flag), a host (lowercase, without
/// a trailing dot), no credentials, no fragment, at most `MAX_URL_CHARS` as
/// stored, and no literal address in a refused range nor a name of this
/// machine. Host names are resolved and checked again at every delivery.
pub fn parse_url(raw: &str, allow_loopback: bool) -> Result<url::Url, ApiError> {
    let bad = |why: &str| ApiError::invalid("url", why);
    let too_long = || bad("must have at most 2048 characters");
    // The URL's text as given is what a confirmation quotes: the parser would
    // drop a tab or a line break, not refuse it.
    let raw = super::input::caller_text("url", raw)?;
    // A cheap bound before parsing; the real limit applies to what is stored.
    if raw.trim().chars().count() > MAX_URL_CHARS {
        return Err(too_long());
    }
    let mut url = url::Url::parse(raw.trim()).map_err(|_| bad("must be an absolute URL"))?;
    if url.host().is_none() {
        return Err(bad("must have a host"));
    }
    normalise_host(&mut url).map_err(|_| bad("must have a host"))?;
    if url.as_str().chars().count() > MAX_URL_CHARS {
        return Err(too_long());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("must not contain credentials"));
    }
    if url.fragment().is_some() {
        return Err(bad("must not have a fragment"));
    }
    // The same rules every delivery applies, worded for the registering client.
    match check_target(&url, allow_loopback) {
        Ok(()) => {}
        Err(Refusal::NoHost) => return Err(bad("must have a host")),
        Err(Refusal::Scheme(_)) => return Err(bad("must use https")),
        Err(Refusal::Address(ip)) if ip.is_loopback() => return Err(bad("must not point at this machine")),
        Err(Refusal::Address(_)) => {
            return Err(bad("must not point at a private, loopback, link-local or reserved address"));
        }
        // A name that is this machine by definition is refused now, not at the first delivery.
        Err(Refusal::LocalName) => return Err(bad("must not point at this machine")),
    }
    Ok(url)
}

async fn list(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let params = input.params()?;
    let page = page_request(ctx.secrets, ctx.tenant, "webhooks", &params)?;
    let found = ctx.store.list_webhooks(ctx.tenant, page.limit, page.start.clone()).await?;
    let next = page.next_cursor(ctx.secrets, ctx.tenant, found.next);
    let data: Vec<&Webhook> = found.items.iter().map(|s| &s.webhook).collect();
    Ok(ApiResponse::ok(StatusCode::OK, json!({"data": data, "meta": {"next_cursor": next}})))
}

async fn get(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    ApiResponse::data(StatusCode::OK, &load(ctx, id).await?.webhook)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpsertBody {
    /// https URL that receives the events
    url: Text<8, 2048>,
    events: Option<Events>,
    status: Option<WebhookStatus>,
    description: Option<Text<1, 200>>,
}

/// The subscribable events a webhook listens to: one to all three, each
/// once, in the order of `EventType::SUBSCRIBABLE`.
struct Events(Vec<EventType>);

impl<'de> Deserialize<'de> for Events {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let names = Vec::<String>::deserialize(deserializer)?;
        parse_events(&names).map(Events).map_err(|e| match e {
            ApiError::Unprocessable { message, .. } => value_rule(message),
            other => D::Error::custom(other),
        })
    }
}

impl JsonSchema for Events {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Events".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names = SUBSCRIBABLE;
        let max = names.len();
        schemars::json_schema!({"type": "array", "items": {"type": "string", "enum": names}, "minItems": 1, "maxItems": max, "uniqueItems": true})
    }
}

/// The subscribable events named in a request: known, at least one, no duplicates.
fn parse_events(names: &[String]) -> Result<Vec<EventType>, ApiError> {
    let mut events = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        input::caller_text(&format!("events[{i}]"), name)?;
        let event = EventType::SUBSCRIBABLE.into_iter().find(|e| e.as_str() == name).ok_or_else(|| {
            ApiError::invalid(
                "events",
                format!("unknown event {name:?}; use email.processed, email.failed, email.rejected"),
            )
        })?;
        if events.contains(&event) {
            return Err(ApiError::invalid("events", "must not repeat items"));
        }
        events.push(event);
    }
    events.sort();
    if events.is_empty() {
        return Err(ApiError::invalid(
            "events",
            "must list one or more of email.processed, email.failed, email.rejected",
        ));
    }
    Ok(events)
}

/// A webhook upsert: the normalised URL is the reserved key.
struct ByUrl<'a> {
    ctx: &'a Ctx<'a>,
    url: url::Url,
    events: Option<Vec<EventType>>,
    status: Option<WebhookStatus>,
    description: Option<String>,
}

impl Reserved for ByUrl<'_> {
    type Record = StoredWebhook;

    async fn owner(&self) -> Result<Option<String>, StoreError> {
        self.ctx.store.url_owner(self.ctx.tenant, self.url.as_str()).await
    }
    async fn reserve(&self, id: &str) -> Result<bool, StoreError> {
        self.ctx.store.reserve_url(self.ctx.tenant, self.url.as_str(), id).await
    }
    async fn release(&self, id: &str) -> Result<(), StoreError> {
        self.ctx.store.release_url(self.ctx.tenant, self.url.as_str(), id).await
    }
    async fn find(&self, id: &str) -> Result<Option<StoredWebhook>, StoreError> {
        self.ctx.store.get_webhook_any(self.ctx.tenant, id).await
    }
    fn is_deleted(record: &StoredWebhook) -> bool {
        record.webhook.deleted_at.is_some()
    }
    fn fresh(&self, id: &str) -> Result<StoredWebhook, ApiError> {
        let secret = new_secret();
        let sealed = self.ctx.secrets.seal(&secret).ok_or(ApiError::Unavailable)?;
        let now = now_string();
        Ok(StoredWebhook {
            webhook: Webhook {
                id: id.to_owned(),
                url: self.url.to_string(),
                events: self.events.clone().unwrap_or_else(|| EventType::SUBSCRIBABLE.to_vec()),
                status: self.status.unwrap_or(WebhookStatus::Active),
                description: self.description.clone(),
                secret_last4: last4(&secret),
                created_at: now.clone(),
                updated_at: now,
                deleted_at: None,
            },
            secret_sealed: sealed,
        })
    }
    async fn insert(&self, record: &StoredWebhook) -> Result<bool, StoreError> {
        let audit = self.ctx.audit(&record.webhook.id, StatusCode::CREATED)?;
        self.ctx.store.insert_webhook(self.ctx.tenant, record, Some(&audit)).await
    }
    async fn update(&self, mut stored: StoredWebhook) -> Result<StoredWebhook, StoreError> {
        let w = &mut stored.webhook;
        if let Some(events) = &self.events {
            w.events = events.clone();
        }
        w.status = self.status.unwrap_or(w.status);
        if self.description.is_some() {
            w.description = self.description.clone();
        }
        w.updated_at = now_string();
        let audit = self.ctx.audit(&stored.webhook.id, StatusCode::OK)?;
        self.ctx.store.update_webhook(self.ctx.tenant, &stored, None, &audit).await?;
        Ok(stored)
    }
    fn new_id(&self) -> String {
        new_id(Kind::Webhook)
    }
}

/// `PUT /webhooks`: creates the webhook for this URL (201, with its secret) or
/// updates it (200). Omitted optional fields keep their current value (or, on
/// create: every subscribable event, `active`, no description). Racing
/// upserts of one URL create one webhook (see `api::upsert`).
async fn upsert(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let body: UpsertBody = input.body()?;
    let url = parse_url(body.url.as_str(), ctx.webhook_allow_loopback)?;
    let events = body.events.map(|events| events.0);
    let description = body.description.map(Text::into_string);
    let request = ByUrl { ctx, url, events, status: body.status, description };
    match upsert::upsert(&request).await? {
        Upserted::Created(stored) => {
            let secret = ctx.secrets.unseal(&stored.secret_sealed).ok_or(ApiError::Unavailable)?;
            Ok(ApiResponse::ok(StatusCode::CREATED, json!({"data": view(&stored.webhook, Some(&secret))?})))
        }
        Upserted::Updated(stored) => ApiResponse::data(StatusCode::OK, &stored.webhook),
    }
}

async fn delete(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let mut stored = load(ctx, id).await?;
    stored.webhook.updated_at = now_string();
    match ctx.store.delete_webhook(ctx.tenant, &stored, &ctx.audit(&stored.webhook.id, StatusCode::OK)?).await {
        Ok(()) => Ok(ApiResponse::ok(StatusCode::OK, json!({"data": {"id": stored.webhook.id, "deleted": true}}))),
        Err(StoreError::Conflict) => Err(not_found()),
        Err(e) => Err(e.into()),
    }
}

async fn rotate_secret(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let mut stored = load(ctx, id).await?;
    let previous = stored.webhook.updated_at.clone();
    let secret = new_secret();
    stored.secret_sealed = ctx.secrets.seal(&secret).ok_or(ApiError::Unavailable)?;
    stored.webhook.secret_last4 = last4(&secret);
    stored.webhook.updated_at = now_string();
    ctx.store
        .update_webhook(ctx.tenant, &stored, Some(&previous), &ctx.audit(&stored.webhook.id, StatusCode::OK)?)
        .await?;
    Ok(ApiResponse::ok(StatusCode::OK, json!({"data": view(&stored.webhook, Some(&secret))?})))
}

/// A disabled webhook receives nothing, tests and resends included: 409
/// `webhook_disabled` (enable it with an upsert first).
fn refuse_disabled(webhook: &Webhook) -> Result<(), ApiError> {
    match webhook.status {
        WebhookStatus::Active => Ok(()),
        WebhookStatus::Disabled => Err(ApiError::Conflict {
            code: "webhook_disabled",
            message: format!("Webhook {} is disabled; enable it (PUT /webhooks with status active) first", webhook.id),
        }),
    }
}

/// Enqueues a `webhook.test` delivery to this webhook.
async fn test(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let stored = load(ctx, id).await?;
    refuse_disabled(&stored.webhook)?;
    let job = new_job_in(JobKind::WebhookTest, &stored.webhook.id, &ctx.tenant.shards);
    let audit = ctx.audit(&stored.webhook.id, StatusCode::ACCEPTED)?;
    match ctx.store.enqueue_webhook_job(ctx.tenant, &stored.webhook.id, &job, &audit).await {
        Ok(()) => accepted(&job),
        Err(StoreError::Conflict) => Err(not_found()),
        Err(e) => Err(e.into()),
    }
}

/// Delivery attempts of a webhook, newest first. The webhook is read in
/// parallel with the page, so an unknown webhook is 404 at no extra latency.
async fn deliveries(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let (id, params) = (input.id(), input.params()?);
    if !is_id(Kind::Webhook, id) {
        return Err(not_found());
    }
    let page = page_request(ctx.secrets, ctx.tenant, &format!("deliveries/{id}"), &params)?;
    let (webhook, found) = tokio::join!(
        ctx.store.get_webhook(ctx.tenant, id),
        ctx.store.list_deliveries(ctx.tenant, id, page.limit, page.start.clone()),
    );
    webhook?.ok_or_else(not_found)?;
    let found = found?;
    let next = page.next_cursor(ctx.secrets, ctx.tenant, found.next);
    Ok(ApiResponse::ok(StatusCode::OK, json!({"data": found.items, "meta": {"next_cursor": next}})))
}

async fn delivery(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let what = "Delivery";
    let found = super::fetch(Kind::Delivery, what, id, async || ctx.store.get_delivery(ctx.tenant, id).await).await?;
    ApiResponse::data(StatusCode::OK, &found)
}

/// Enqueues a new attempt of a delivery's event.
async fn resend(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let not_found = || ApiError::NotFound { what: "Delivery" };
    if !is_id(Kind::Delivery, id) {
        return Err(not_found());
    }
    let delivery = ctx.store.get_delivery(ctx.tenant, id).await?.ok_or_else(not_found)?;
    if let Some(webhook) = ctx.store.get_webhook(ctx.tenant, &delivery.webhook_id).await? {
        refuse_disabled(&webhook.webhook)?;
    }
    let job = new_job_in(JobKind::DeliveryResend, &delivery.id, &ctx.tenant.shards);
    // The delivery's webhook must still exist: that is the record checked.
    let audit = ctx.audit(&delivery.id, StatusCode::ACCEPTED)?;
    match ctx.store.enqueue_webhook_job(ctx.tenant, &delivery.webhook_id, &job, &audit).await {
        Ok(()) => accepted(&job),
        Err(StoreError::Conflict) => Err(ApiError::Conflict {
            code: "webhook_deleted",
            message: "The delivery's webhook was deleted; nothing to resend to".into(),
        }),
        Err(e) => Err(e.into()),
    }
}
