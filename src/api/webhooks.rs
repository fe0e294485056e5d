//! Webhooks and their deliveries: list, get, upsert by `url`, soft delete,
//! test (202), secret rotation, delivery attempts (newest first), resend (202).
//!
//! The signing secret is generated here, sealed at rest with the server's
//! key, shown in full only in the response that created or rotated it, and
//! otherwise only as its last four characters.

use aws_lc_rs::digest::{SHA256, digest};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::ApiError;
use super::input;
use super::jobs::{accepted, new_job};
use super::page::{hex, page_request};
use super::{ApiResponse, Ctx};
use crate::domain::clock::now_string;
use crate::domain::ids::{Kind, is_id, new_id};
use crate::domain::records::{EventType, JobKind, Webhook, WebhookStatus};
use crate::store::StoreError;
use crate::store::keys;
use crate::store::records::StoredWebhook;

fn not_found() -> ApiError {
    ApiError::NotFound { what: "Webhook" }
}

pub async fn load(ctx: &Ctx<'_>, id: &str) -> Result<StoredWebhook, ApiError> {
    if !is_id(Kind::Webhook, id) {
        return Err(not_found());
    }
    ctx.app.store.get_webhook(ctx.tenant, id).await?.ok_or_else(not_found)
}

/// A new signing secret: `whsec_` and 32 random bytes, base64url.
fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    let _ = aws_lc_rs::rand::fill(&mut bytes);
    format!("whsec_{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

fn last4(secret: &str) -> String {
    secret.chars().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect()
}

/// The webhook as shown, with the secret added when it was just created or rotated.
fn view(webhook: &Webhook, secret: Option<&str>) -> Result<Value, ApiError> {
    let mut value = serde_json::to_value(webhook).map_err(|_| ApiError::Unavailable)?;
    if let (Some(secret), Value::Object(map)) = (secret, &mut value) {
        map.insert("secret".into(), Value::from(secret));
    }
    Ok(value)
}

/// Checks a webhook URL and returns it normalised: `https` (plain `http` only
/// for loopback hosts under the development flag), a host, no credentials, no
/// fragment, at most 2048 characters, and no literal address in a refused
/// range. Host names are resolved and checked again at every delivery.
pub fn parse_url(raw: &str, allow_loopback: bool) -> Result<url::Url, ApiError> {
    let bad = |why: &str| ApiError::invalid("url", why);
    if raw.len() > 2048 {
        return Err(bad("must have at most 2048 characters"));
    }
    let url = url::Url::parse(raw.trim()).map_err(|_| bad("must be an absolute URL"))?;
    let host = url.host().ok_or_else(|| bad("must have a host"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("must not contain credentials"));
    }
    if url.fragment().is_some() {
        return Err(bad("must not have a fragment"));
    }
    let loopback = match &host {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    };
    match url.scheme() {
        "https" => {}
        "http" if allow_loopback && loopback => {}
        _ => return Err(bad("must use https")),
    }
    if loopback && !allow_loopback {
        return Err(bad("must not point at this machine"));
    }
    let literal = match host {
        url::Host::Ipv4(ip) => Some(std::net::IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => Some(std::net::IpAddr::V6(ip)),
        url::Host::Domain(_) => None,
    };
    if let Some(ip) = literal
        && !(allow_loopback && ip.is_loopback())
        && !crate::net::is_public(ip)
    {
        return Err(bad("must not point at a private, loopback, link-local or reserved address"));
    }
    Ok(url)
}

fn url_digest(url: &url::Url) -> String {
    hex(digest(&SHA256, url.as_str().as_bytes()).as_ref())
}

/// The uniqueness digest of a stored (already normalised) webhook URL.
pub fn url_digest_of(url: &str) -> String {
    hex(digest(&SHA256, url.as_bytes()).as_ref())
}

pub async fn list(ctx: &Ctx<'_>, query: Option<&str>) -> Result<ApiResponse, ApiError> {
    let params = input::query(query, &["limit", "cursor"])?;
    let page = page_request(&ctx.app.secrets, ctx.tenant, "webhooks", &params)?;
    let found = ctx.app.store.list_webhooks(ctx.tenant, page.limit, page.start.clone()).await?;
    let next = page.next_cursor(&ctx.app.secrets, ctx.tenant, found.next);
    let data: Vec<&Webhook> = found.items.iter().map(|s| &s.webhook).collect();
    Ok(ApiResponse::ok(200, json!({"data": data, "meta": {"next_cursor": next}})))
}

pub async fn get(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    ApiResponse::data(200, &load(ctx, id).await?.webhook)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpsertBody {
    url: String,
    events: Option<Vec<EventType>>,
    status: Option<WebhookStatus>,
    description: Option<String>,
}

/// `PUT /webhooks`: creates the webhook for this URL (201, with its secret) or
/// updates it (200). Omitted optional fields keep their current value (or, on
/// create: every subscribable event, `active`, no description).
pub async fn upsert(ctx: &Ctx<'_>, body: &[u8]) -> Result<ApiResponse, ApiError> {
    let body: UpsertBody = input::body(body)?;
    let url = parse_url(&body.url, ctx.app.config.webhook_allow_loopback)?;
    let events = match body.events {
        None => None,
        Some(list) => {
            let mut list = list;
            list.sort();
            list.dedup();
            if list.is_empty() || list.contains(&EventType::WebhookTest) {
                return Err(ApiError::invalid(
                    "events",
                    "must list one or more of email.processed, email.failed, email.rejected",
                ));
            }
            Some(list)
        }
    };
    let description = body.description.as_deref().map(|d| input::text("description", d, 200)).transpose()?;
    let digest = url_digest(&url);
    for _ in 0..3 {
        match ctx.app.store.url_owner(ctx.tenant, &digest).await? {
            Some(id) => {
                let Some(mut stored) = ctx.app.store.get_webhook(ctx.tenant, &id).await? else { continue };
                let previous = stored.webhook.updated_at.clone();
                let w = &mut stored.webhook;
                if let Some(events) = &events {
                    w.events = events.clone();
                }
                w.status = body.status.unwrap_or(w.status);
                if description.is_some() {
                    w.description = description.clone();
                }
                w.updated_at = now_string();
                match ctx.app.store.update_webhook(ctx.tenant, &stored, &previous).await {
                    Ok(()) => return ApiResponse::data(200, &stored.webhook),
                    Err(StoreError::Conflict) => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            None => {
                let secret = new_secret();
                let sealed = ctx.app.secrets.seal(&secret).ok_or(ApiError::Unavailable)?;
                let now = now_string();
                let stored = StoredWebhook {
                    webhook: Webhook {
                        id: new_id(Kind::Webhook),
                        url: url.to_string(),
                        events: events.clone().unwrap_or_else(|| EventType::SUBSCRIBABLE.to_vec()),
                        status: body.status.unwrap_or(WebhookStatus::Active),
                        description: description.clone(),
                        secret_last4: last4(&secret),
                        created_at: now.clone(),
                        updated_at: now,
                        deleted_at: None,
                    },
                    secret_sealed: sealed,
                };
                match ctx.app.store.create_webhook(ctx.tenant, &stored, &digest).await {
                    Ok(()) => return Ok(ApiResponse::ok(201, json!({"data": view(&stored.webhook, Some(&secret))?}))),
                    Err(StoreError::Conflict) => continue,
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }
    Err(ApiError::Conflict {
        code: "conflict",
        message: "The webhook is being changed by other requests; retry".into(),
    })
}

pub async fn delete(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let mut stored = load(ctx, id).await?;
    let url = url::Url::parse(&stored.webhook.url).map_err(|_| ApiError::Unavailable)?;
    stored.webhook.updated_at = now_string();
    match ctx.app.store.delete_webhook(ctx.tenant, &stored, &url_digest(&url)).await {
        Ok(()) => Ok(ApiResponse::ok(200, json!({"data": {"id": stored.webhook.id, "deleted": true}}))),
        Err(StoreError::Conflict) => Err(not_found()),
        Err(e) => Err(e.into()),
    }
}

pub async fn rotate_secret(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let mut stored = load(ctx, id).await?;
    let previous = stored.webhook.updated_at.clone();
    let secret = new_secret();
    stored.secret_sealed = ctx.app.secrets.seal(&secret).ok_or(ApiError::Unavailable)?;
    stored.webhook.secret_last4 = last4(&secret);
    stored.webhook.updated_at = now_string();
    ctx.app.store.update_webhook(ctx.tenant, &stored, &previous).await?;
    Ok(ApiResponse::ok(200, json!({"data": view(&stored.webhook, Some(&secret))?})))
}

/// Enqueues a `webhook.test` delivery to this webhook.
pub async fn test(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let stored = load(ctx, id).await?;
    let job = new_job(JobKind::WebhookTest, &stored.webhook.id);
    match ctx.app.store.enqueue_job_for(ctx.tenant, keys::webhook(&stored.webhook.id), &job).await {
        Ok(()) => accepted(&job),
        Err(StoreError::Conflict) => Err(not_found()),
        Err(e) => Err(e.into()),
    }
}

/// Delivery attempts of a webhook, newest first. The webhook is read in
/// parallel with the page, so an unknown webhook is 404 at no extra latency.
pub async fn deliveries(ctx: &Ctx<'_>, id: &str, query: Option<&str>) -> Result<ApiResponse, ApiError> {
    let params = input::query(query, &["limit", "cursor"])?;
    if !is_id(Kind::Webhook, id) {
        return Err(not_found());
    }
    let page = page_request(&ctx.app.secrets, ctx.tenant, &format!("deliveries/{id}"), &params)?;
    let (webhook, found) = tokio::join!(
        ctx.app.store.get_webhook(ctx.tenant, id),
        ctx.app.store.list_deliveries(ctx.tenant, id, page.limit, page.start.clone()),
    );
    webhook?.ok_or_else(not_found)?;
    let found = found?;
    let next = page.next_cursor(&ctx.app.secrets, ctx.tenant, found.next);
    Ok(ApiResponse::ok(200, json!({"data": found.items, "meta": {"next_cursor": next}})))
}

/// Enqueues a new attempt of a delivery's event.
pub async fn resend(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let not_found = || ApiError::NotFound { what: "Delivery" };
    if !is_id(Kind::Delivery, id) {
        return Err(not_found());
    }
    let delivery = ctx.app.store.get_delivery(ctx.tenant, id).await?.ok_or_else(not_found)?;
    let job = new_job(JobKind::DeliveryResend, &delivery.id);
    // The delivery's webhook must still exist: that is the record checked.
    match ctx.app.store.enqueue_job_for(ctx.tenant, keys::webhook(&delivery.webhook_id), &job).await {
        Ok(()) => accepted(&job),
        Err(StoreError::Conflict) => Err(ApiError::Conflict {
            code: "webhook_deleted",
            message: "The delivery's webhook was deleted; nothing to resend to".into(),
        }),
        Err(e) => Err(e.into()),
    }
}
