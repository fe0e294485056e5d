//! Webhook delivery attempts (newest first per webhook, merged over the
//! workspace's write shards) and the event body each sent, for resends.

use super::items::{Keys, ListQuery, Page, Position, to_item};
use super::keys::{self};
use super::writes::{home, shard_pks};
use super::{Store, StoreError, s};
use inbox_domain::Tenant;
use inbox_domain::records::Delivery;

impl Store {
    pub async fn get_delivery(&self, t: &Tenant, id: &str) -> Result<Option<Delivery>, StoreError> {
        self.get::<Delivery>(home(t, id), keys::delivery(id)).await
    }

    /// Stores a delivery and the event it sent; an event about e-mail
    /// `about` gets its reference in the e-mail's partition first
    /// (`keys::copy_ref`: a reference to a delivery never written is
    /// harmless; a delivery nothing references would outlive an erasure).
    pub async fn put_delivery(
        &self,
        t: &Tenant,
        delivery: &Delivery,
        payload: &str,
        about: Option<&str>,
    ) -> Result<(), StoreError> {
        if let Some(email_id) = about {
            let reference = Self::copy_item(t, email_id, "DLV", &delivery.id);
            self.client().put_item().table_name(self.table()).set_item(Some(reference)).send().await?;
        }
        let pk = home(t, &delivery.id);
        let keys = Keys::new(pk.clone(), keys::delivery(&delivery.id)).with_gsi1(
            keys::deliveries_index(&pk, &delivery.webhook_id),
            keys::timeline(&delivery.created_at, &delivery.id),
        );
        let mut item = to_item(keys, delivery)?;
        item.insert("payload".into(), s(payload));
        self.client().put_item().table_name(self.table()).set_item(Some(item)).send().await?;
        Ok(())
    }

    /// The event body a delivery sent (for resends); `None` for no such
    /// delivery, or one whose event was erased with its e-mail.
    pub async fn delivery_payload(&self, t: &Tenant, id: &str) -> Result<Option<String>, StoreError> {
        #[derive(serde::Deserialize)]
        struct Payload {
            #[serde(default)]
            payload: Option<String>,
        }
        Ok(self.get::<Payload>(home(t, id), keys::delivery(id)).await?.and_then(|p| p.payload))
    }

    pub async fn list_deliveries(
        &self,
        t: &Tenant,
        webhook_id: &str,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<Delivery>, StoreError> {
        let queries = shard_pks(t)
            .into_iter()
            .map(|pk| ListQuery::gsi1(keys::deliveries_index(&pk, webhook_id), pk, &keys::delivery("")))
            .collect();
        self.list_shards(queries, limit, start).await
    }
}
