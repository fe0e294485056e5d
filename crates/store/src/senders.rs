//! The allowed senders of an inbox (addresses and `@domain`s).

use aws_sdk_dynamodb::types::{Delete, TransactWriteItem};

use super::items::{Keys, ListQuery, Page, Position, to_item};
use super::keys::{self, PK, SK};
use super::writes::{Audit, built, ws_pk};
use super::{Store, StoreError, s};
use inbox_domain::Tenant;
use inbox_domain::records::AllowedSender;

impl Store {
    /// Allows `sender`; returns false when it was already allowed (and
    /// then nothing is written, not even `audit`).
    pub async fn add_sender(
        &self,
        t: &Tenant,
        sender: &AllowedSender,
        audit: Option<&Audit<'_>>,
    ) -> Result<bool, StoreError> {
        self.cache.forget(&ws_pk(t));
        let item = to_item(Keys::new(ws_pk(t), keys::sender(&sender.inbox_id, &sender.sender)), sender)?;
        self.insert_new(t, item, audit).await
    }

    pub async fn list_senders(
        &self,
        t: &Tenant,
        inbox_id: &str,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<AllowedSender>, StoreError> {
        self.list(&ListQuery::base(ws_pk(t), keys::sender_prefix(inbox_id)), limit, start).await
    }

    /// Whether `sender` is allowed, as an address or by its domain (two
    /// reads at once, kept `cache::CONFIG_CACHE_SECS`: every ingestion asks).
    pub async fn sender_allowed(&self, t: &Tenant, inbox_id: &str, address: &str) -> Result<bool, StoreError> {
        let pk = ws_pk(t);
        let key = (pk.clone(), inbox_id.to_owned(), address.to_owned());
        self.cache
            .senders
            .get_or_load(key, async || {
                let domain = address.rsplit_once('@').map(|(_, d)| format!("@{d}")).unwrap_or_default();
                let (a, d) = tokio::join!(
                    self.get::<AllowedSender>(pk.clone(), keys::sender(inbox_id, address)),
                    self.get::<AllowedSender>(pk.clone(), keys::sender(inbox_id, &domain)),
                );
                Ok(a?.is_some() || d?.is_some())
            })
            .await
    }

    /// Stops allowing `sender`; returns false when it was not allowed (and
    /// then nothing is written, not even `audit`).
    pub async fn remove_sender(
        &self,
        t: &Tenant,
        inbox_id: &str,
        sender: &str,
        audit: &Audit<'_>,
    ) -> Result<bool, StoreError> {
        self.cache.forget(&ws_pk(t));
        let remove = built(
            Delete::builder()
                .table_name(self.table())
                .key(PK, s(ws_pk(t)))
                .key(SK, s(keys::sender(inbox_id, sender)))
                .condition_expression("attribute_exists(pk)")
                .build(),
        )?;
        match self.transact_audited(t, vec![TransactWriteItem::builder().delete(remove).build()], Some(audit)).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict) => Ok(false),
            Err(e) => Err(e),
        }
    }
}
