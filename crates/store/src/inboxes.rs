//! Inboxes, and the slug reservation that makes the slug unique in a
//! workspace (taken before the inbox is written; see `api::upsert`).

use aws_sdk_dynamodb::types::{Delete, TransactWriteItem};

use super::items::{Item, Keys, ListQuery, Page, Position, to_item};
use super::keys::{self, PK, SK};
use super::writes::{Audit, built, put, ws_pk};
use super::{Store, StoreError, s};
use inbox_domain::Tenant;
use inbox_domain::records::{Inbox, InboxStatus};

/// Inbox list filters.
pub struct InboxFilter {
    pub status: Option<InboxStatus>,
    /// Lowercase substring of slug or name.
    pub q: Option<String>,
}

impl Store {
    /// `get_inbox` for ingestion, kept `cache::CONFIG_CACHE_SECS` (every
    /// ingestion reads its inbox).
    pub async fn inbox_for_ingestion(&self, t: &Tenant, id: &str) -> Result<Option<Inbox>, StoreError> {
        self.cache.inboxes.get_or_load((ws_pk(t), id.to_owned()), async || self.get_inbox(t, id).await).await
    }

    pub async fn get_inbox(&self, t: &Tenant, id: &str) -> Result<Option<Inbox>, StoreError> {
        Ok(self.get::<Inbox>(ws_pk(t), keys::inbox(id)).await?.filter(|i| i.deleted_at.is_none()))
    }

    pub async fn list_inboxes(
        &self,
        t: &Tenant,
        filter: &InboxFilter,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<Inbox>, StoreError> {
        let mut q = ListQuery::base(ws_pk(t), keys::inbox(""));
        q.and("attribute_not_exists(deleted_at)");
        if let Some(status) = &filter.status {
            q.and("#status = :status");
            q.name("#status", "status");
            q.value(":status", s(status.as_str()));
        }
        if let Some(text) = &filter.q {
            // `search` is a reserved word in expressions: always via a name placeholder.
            q.and("contains(#search, :q)");
            q.name("#search", "search");
            q.value(":q", s(text.clone()));
        }
        self.list(&q, limit, start).await
    }

    /// The id of the live inbox that owns `slug`, if any.
    pub async fn slug_owner(&self, t: &Tenant, slug: &str) -> Result<Option<String>, StoreError> {
        #[derive(serde::Deserialize)]
        struct Reservation {
            inbox_id: String,
        }
        Ok(self.get::<Reservation>(ws_pk(t), keys::slug(slug)).await?.map(|c| c.inbox_id))
    }

    fn inbox_item(t: &Tenant, inbox: &Inbox) -> Result<Item, StoreError> {
        let mut item = to_item(Keys::new(ws_pk(t), keys::inbox(&inbox.id)), inbox)?;
        item.insert("search".into(), s(format!("{} {}", inbox.slug, inbox.name).to_lowercase()));
        Ok(item)
    }

    /// Reserves `slug` for the inbox `inbox_id`; false when it is taken.
    pub async fn reserve_slug(&self, t: &Tenant, slug: &str, inbox_id: &str) -> Result<bool, StoreError> {
        self.reserve(t, keys::slug(slug), "inbox_id", inbox_id).await
    }

    /// Frees `slug` if `inbox_id` still holds it (a stale reservation of a deleted inbox).
    pub async fn release_slug(&self, t: &Tenant, slug: &str, inbox_id: &str) -> Result<(), StoreError> {
        self.release(t, keys::slug(slug), "inbox_id", inbox_id).await
    }

    /// Writes a new inbox unless one with its id exists; false when it does.
    pub async fn insert_inbox(&self, t: &Tenant, inbox: &Inbox, audit: Option<&Audit<'_>>) -> Result<bool, StoreError> {
        self.cache.forget(&ws_pk(t));
        self.insert_new(t, Self::inbox_item(t, inbox)?, audit).await
    }

    /// An inbox, deleted or not.
    pub async fn get_inbox_any(&self, t: &Tenant, id: &str) -> Result<Option<Inbox>, StoreError> {
        self.get::<Inbox>(ws_pk(t), keys::inbox(id)).await
    }

    /// Replaces a live inbox (see `replace_live`).
    pub async fn update_inbox(
        &self,
        t: &Tenant,
        inbox: &Inbox,
        previous: Option<&str>,
        audit: &Audit<'_>,
    ) -> Result<(), StoreError> {
        self.cache.forget(&ws_pk(t));
        self.replace_live(t, Self::inbox_item(t, inbox)?, previous, audit).await
    }

    /// Soft-deletes an inbox and frees its slug, in one transaction.
    pub async fn delete_inbox(&self, t: &Tenant, inbox: &Inbox, audit: &Audit<'_>) -> Result<(), StoreError> {
        self.cache.forget(&ws_pk(t));
        let mut deleted = inbox.clone();
        deleted.deleted_at = Some(deleted.updated_at.clone());
        let release = built(
            Delete::builder()
                .table_name(self.table())
                .key(PK, s(ws_pk(t)))
                .key(SK, s(keys::slug(&inbox.slug)))
                .condition_expression("inbox_id = :id")
                .expression_attribute_values(":id", s(inbox.id.clone()))
                .build(),
        )?;
        let items = vec![
            put(
                self.table(),
                Self::inbox_item(t, &deleted)?,
                Some("attribute_exists(pk) AND attribute_not_exists(deleted_at)"),
            )?,
            TransactWriteItem::builder().delete(release).build(),
        ];
        self.transact_audited(t, items, Some(audit)).await
    }
}
