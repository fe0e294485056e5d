//! Single-use markers: a confirmation's nonce is consumed once. A marker
//! lives in the workspace's write shard of its key's hash (and, for a while
//! after the shard count changes, is also looked for under the previous one).

use super::items::Item;
use super::keys::{self, PK, SK};
use super::writes::keyed_homes;
use super::{Store, StoreError, s};
use inbox_domain::Tenant;

impl Store {
    /// Records that `key` was used; false when it had been already (until
    /// `expires_at`, unix seconds). One conditional write.
    pub async fn use_once(&self, t: &Tenant, key: &str, expires_at: u64) -> Result<bool, StoreError> {
        let now = inbox_support::sys::unix_now();
        let sk = keys::once(key);
        let (pk, elsewhere) = keyed_homes(t, &sk);
        if let Some(old) = elsewhere
            && let Some(found) = self.item(old, sk.clone()).await?
        {
            let expired = matches!(found.get(keys::TTL), Some(aws_sdk_dynamodb::types::AttributeValue::N(n)) if n.parse::<u64>().is_ok_and(|e| e < now));
            if !expired {
                return Ok(false);
            }
        }
        let mut item = Item::new();
        item.insert(PK.into(), s(pk));
        item.insert(SK.into(), s(sk));
        item.insert(keys::TTL.into(), super::n(expires_at));
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
