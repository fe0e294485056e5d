//! Webhooks with their sealed signing secrets, the URL reservation that
//! makes a URL unique in a workspace, and jobs about a webhook.

use aws_sdk_dynamodb::types::{ConditionCheck, Delete, TransactWriteItem};

use super::items::{Item, Keys, ListQuery, Page, Position, to_item};
use super::keys::{self, PK, SK};
use super::writes::{Audit, built, put, ws_pk};
use super::{Store, StoreError, s};
use inbox_domain::Tenant;
use inbox_domain::records::{Job, Webhook};

/// A webhook as stored: the record plus its sealed signing secret.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StoredWebhook {
    #[serde(flatten)]
    pub webhook: Webhook,
    /// The signing secret, sealed (see `inbox_support::secrets`).
    pub secret_sealed: String,
}

impl Store {
    fn webhook_item(t: &Tenant, stored: &StoredWebhook) -> Result<Item, StoreError> {
        to_item(Keys::new(ws_pk(t), keys::webhook(&stored.webhook.id)), stored)
    }

    /// Every webhook of the workspace (every page), kept
    /// `cache::CONFIG_CACHE_SECS`: every job that sends an event asks.
    pub async fn all_webhooks(&self, t: &Tenant) -> Result<Vec<StoredWebhook>, StoreError> {
        self.cache
            .webhooks
            .get_or_load(ws_pk(t), async || {
                let mut found = Vec::new();
                let mut start = None;
                loop {
                    let page = self.list_webhooks(t, 100, start).await?;
                    found.extend(page.items);
                    match page.next {
                        Some(next) => start = Some(next),
                        None => return Ok(found),
                    }
                }
            })
            .await
    }

    pub async fn get_webhook(&self, t: &Tenant, id: &str) -> Result<Option<StoredWebhook>, StoreError> {
        Ok(self.get::<StoredWebhook>(ws_pk(t), keys::webhook(id)).await?.filter(|w| w.webhook.deleted_at.is_none()))
    }

    pub async fn list_webhooks(
        &self,
        t: &Tenant,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<StoredWebhook>, StoreError> {
        let mut q = ListQuery::base(ws_pk(t), keys::webhook(""));
        q.and("attribute_not_exists(deleted_at)");
        self.list(&q, limit, start).await
    }

    /// The webhook that holds `url`, if any.
    pub async fn url_owner(&self, t: &Tenant, url: &str) -> Result<Option<String>, StoreError> {
        #[derive(serde::Deserialize)]
        struct Reservation {
            webhook_id: String,
        }
        Ok(self.get::<Reservation>(ws_pk(t), keys::url_reservation(url)).await?.map(|c| c.webhook_id))
    }

    /// Reserves `url` (normalised) for the webhook `webhook_id`; false when it is taken.
    pub async fn reserve_url(&self, t: &Tenant, url: &str, webhook_id: &str) -> Result<bool, StoreError> {
        self.reserve(t, keys::url_reservation(url), "webhook_id", webhook_id).await
    }

    /// Frees `url` if `webhook_id` still holds it (a stale reservation of a deleted webhook).
    pub async fn release_url(&self, t: &Tenant, url: &str, webhook_id: &str) -> Result<(), StoreError> {
        self.release(t, keys::url_reservation(url), "webhook_id", webhook_id).await
    }

    /// Writes a new webhook unless one with its id exists; false when it does.
    pub async fn insert_webhook(
        &self,
        t: &Tenant,
        stored: &StoredWebhook,
        audit: Option<&Audit<'_>>,
    ) -> Result<bool, StoreError> {
        self.cache.forget(&ws_pk(t));
        self.insert_new(t, Self::webhook_item(t, stored)?, audit).await
    }

    /// A webhook, deleted or not.
    pub async fn get_webhook_any(&self, t: &Tenant, id: &str) -> Result<Option<StoredWebhook>, StoreError> {
        self.get::<StoredWebhook>(ws_pk(t), keys::webhook(id)).await
    }

    /// Replaces a live webhook (see `replace_live`).
    pub async fn update_webhook(
        &self,
        t: &Tenant,
        stored: &StoredWebhook,
        previous: Option<&str>,
        audit: &Audit<'_>,
    ) -> Result<(), StoreError> {
        self.cache.forget(&ws_pk(t));
        self.replace_live(t, Self::webhook_item(t, stored)?, previous, audit).await
    }

    /// Soft-deletes a webhook and frees its URL, in one transaction.
    pub async fn delete_webhook(
        &self,
        t: &Tenant,
        stored: &StoredWebhook,
        audit: &Audit<'_>,
    ) -> Result<(), StoreError> {
        self.cache.forget(&ws_pk(t));
        let mut deleted = stored.clone();
        deleted.webhook.deleted_at = Some(deleted.webhook.updated_at.clone());
        let release = built(
            Delete::builder()
                .table_name(self.table())
                .key(PK, s(ws_pk(t)))
                .key(SK, s(keys::url_reservation(&stored.webhook.url)))
                .condition_expression("webhook_id = :id")
                .expression_attribute_values(":id", s(stored.webhook.id.clone()))
                .build(),
        )?;
        let items = vec![
            put(
                self.table(),
                Self::webhook_item(t, &deleted)?,
                Some("attribute_exists(pk) AND attribute_not_exists(deleted_at)"),
            )?,
            TransactWriteItem::builder().delete(release).build(),
        ];
        self.transact_audited(t, items, Some(audit)).await
    }

    /// Writes `job` if the webhook `webhook_id` is live (one transaction);
    /// `Conflict` when it is not.
    pub async fn enqueue_webhook_job(
        &self,
        t: &Tenant,
        webhook_id: &str,
        job: &Job,
        audit: &Audit<'_>,
    ) -> Result<(), StoreError> {
        let sk = keys::webhook(webhook_id);
        let check = built(
            ConditionCheck::builder()
                .table_name(self.table())
                .key(PK, s(ws_pk(t)))
                .key(SK, s(sk))
                .condition_expression("attribute_exists(pk) AND attribute_not_exists(deleted_at)")
                .build(),
        )?;
        let items = vec![TransactWriteItem::builder().condition_check(check).build(), self.job_put(t, job)?];
        self.transact_audited(t, items, Some(audit)).await
    }
}
