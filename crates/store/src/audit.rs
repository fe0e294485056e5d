//! The audit trail: one record per change, in the write shard of the
//! workspace its id names (`AUD#{id}`; listed over every shard), kept `RETENTION_SECS` by the table's TTL. A change writes
//! its record inside its own transaction (`audit_put`), so neither exists
//! without the other; a refused change, which changed nothing, writes its
//! record alone (`put_audit`).

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::items::{Item, Keys, ListQuery, Page, Position, to_item};
use super::keys::{self, TTL};
use super::writes::{home, put, shard_pks};
use super::{Store, StoreError, s};
use inbox_domain::Tenant;
use inbox_domain::records::AuditRecord;

/// How long a record is kept: 400 days.
pub const RETENTION_SECS: u64 = 400 * 86_400;

/// Audit trail filters. `since`/`until` bound the record ids (which begin
/// with their time), inclusively.
#[derive(Default)]
pub struct AuditFilter {
    pub subject: Option<String>,
    pub target_id: Option<String>,
    /// The smallest id a record of that instant can have.
    pub since: Option<String>,
    /// The largest id a record of that instant can have.
    pub until: Option<String>,
}

fn audit_item(t: &Tenant, record: &AuditRecord) -> Result<Item, StoreError> {
    let mut item = to_item(Keys::new(home(t, &record.id), keys::audit(&record.id)), record)?;
    let expires = inbox_support::sys::unix_now().saturating_add(RETENTION_SECS);
    item.insert(TTL.into(), AttributeValue::N(expires.to_string()));
    Ok(item)
}

impl Store {
    /// The record as one item of a change's transaction.
    pub(super) fn audit_put(&self, t: &Tenant, record: &AuditRecord) -> Result<TransactWriteItem, StoreError> {
        put(self.table(), audit_item(t, record)?, Some("attribute_not_exists(pk)"))
    }

    /// Writes the record of a change that changed nothing (it was refused,
    /// or there was nothing to do).
    pub async fn put_audit(&self, t: &Tenant, record: &AuditRecord) -> Result<(), StoreError> {
        let item = audit_item(t, record)?;
        // A dry run's description says it is the record alone, no change.
        if self.describe(false, || vec![super::writes::describe_put(&item)]) {
            return Ok(());
        }
        // One item: a conditional put (half a transaction's write units).
        self.put_conditional(item, "attribute_not_exists(pk)", &[]).await
    }

    /// A record, unless it has expired (expiry is lazy: see `keys`).
    pub async fn get_audit(&self, t: &Tenant, id: &str) -> Result<Option<AuditRecord>, StoreError> {
        #[derive(serde::Deserialize)]
        struct Stored {
            #[serde(flatten)]
            record: AuditRecord,
            expires_at: u64,
        }
        let found = self.get::<Stored>(home(t, id), keys::audit(id)).await?;
        Ok(found.filter(|s| s.expires_at > inbox_support::sys::unix_now()).map(|s| s.record))
    }

    /// The trail newest first. Expired records may linger until the TTL
    /// sweeper removes them; they are left out by their `expires_at`.
    pub async fn list_audit(
        &self,
        t: &Tenant,
        filter: &AuditFilter,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<AuditRecord>, StoreError> {
        // `~` sorts after every character of an id.
        let lo = keys::audit(filter.since.as_deref().unwrap_or(""));
        let hi = format!("{}~", keys::audit(filter.until.as_deref().unwrap_or("")));
        let query = |pk: String| {
            let mut q = ListQuery::base(pk, keys::AUDIT_PREFIX.to_owned()).within(lo.clone(), hi.clone());
            q.newest_first = true;
            q.and("#exp > :now");
            q.name("#exp", TTL);
            q.value(":now", AttributeValue::N(inbox_support::sys::unix_now().to_string()));
            if let Some(subject) = &filter.subject {
                q.and("subject = :subject");
                q.value(":subject", s(subject.clone()));
            }
            if let Some(target) = &filter.target_id {
                q.and("target_id = :target");
                q.value(":target", s(target.clone()));
            }
            q
        };
        self.list_shards(shard_pks(t).into_iter().map(query).collect(), limit, start).await
    }
}
