//! Single-use markers: a confirmation's nonce is consumed once.

use super::items::Item;
use super::keys::{self, PK, SK};
use super::writes::ws_pk;
use super::{Store, StoreError, s};
use crate::domain::Tenant;

impl Store {
    /// Records that `key` was used; false when it had been already (until
    /// `expires_at`, unix seconds). One conditional write.
    pub async fn use_once(&self, t: &Tenant, key: &str, expires_at: u64) -> Result<bool, StoreError> {
        let mut item = Item::new();
        item.insert(PK.into(), s(ws_pk(t)));
        item.insert(SK.into(), s(keys::once(key)));
        item.insert(keys::TTL.into(), super::n(expires_at));
        let now = crate::sys::unix_now();
        let result = self
            .client()
            .put_item()
            .table_name(self.table())
            .set_item(Some(item))
            // Expiry is lazy: an expired record counts as absent.
            .condition_expression("attribute_not_exists(pk) OR #ttl < :now")
            .expression_attribute_names("#ttl", keys::TTL)
            .expression_attribute_values(":now", super::n(now))
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(e) => match StoreError::from(e) {
                StoreError::Conflict => Ok(false),
                other => Err(other),
            },
        }
    }
}
