//! The write primitives every aggregate module uses: the workspace
//! partition, transaction items, a change with its audit record,
//! insert-if-absent, replace-if-live and conditional puts.

use std::sync::atomic::{AtomicBool, Ordering};

use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};

use super::items::Item;
use super::keys::{self, PK, SK};
use super::{Store, StoreError, s};
use inbox_domain::Tenant;
use inbox_domain::records::AuditRecord;

/// An audit record on its way into a change's transaction; `committed` is
/// set once that transaction is written (so the caller knows the call has
/// its record).
pub struct Audit<'a> {
    pub record: AuditRecord,
    committed: &'a AtomicBool,
}

impl<'a> Audit<'a> {
    pub fn new(record: AuditRecord, committed: &'a AtomicBool) -> Audit<'a> {
        Audit { record, committed }
    }

    pub(super) fn committed(&self) {
        self.committed.store(true, Ordering::Relaxed);
    }
}

/// What a cancelled transaction means, from its per-item reasons (`None` for
/// an item that was fine). Without reasons, a failed condition (the old reading).
fn cancelled(codes: &[String]) -> StoreError {
    let any = |wanted: &[&str]| codes.iter().any(|c| wanted.contains(&c.as_str()));
    if codes.iter().all(|c| c == "None") || any(&["ConditionalCheckFailed"]) {
        StoreError::Conflict
    } else if any(&["TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"])
    {
        StoreError::Throttled
    } else {
        // A validation error, a size limit: not the caller's doing, not worth retrying.
        StoreError::Unavailable(format!("transaction cancelled: {codes:?}").into())
    }
}

/// An item's attributes as `name=value`, sorted.
fn attrs(map: &Item) -> String {
    let text = |v: &AttributeValue| match v {
        AttributeValue::S(s) => s.clone(),
        AttributeValue::N(n) => n.clone(),
        AttributeValue::Ss(set) => format!("{set:?}"),
        AttributeValue::Bool(b) => b.to_string(),
        other => format!("{other:?}"),
    };
    let mut pairs: Vec<String> = map.iter().map(|(k, v)| format!("{k}={}", text(v))).collect();
    pairs.sort();
    pairs.join(" ")
}

/// One line for an item a put writes.
pub(super) fn describe_put(item: &Item) -> String {
    format!("put    {}", attrs(item))
}

/// One line for an item of a transaction: what it writes and where.
fn describe(item: &TransactWriteItem) -> String {
    if let Some(put) = item.put() {
        describe_put(put.item())
    } else if let Some(update) = item.update() {
        format!("update {} {}", attrs(update.key()), update.update_expression())
    } else if let Some(delete) = item.delete() {
        format!("delete {}", attrs(delete.key()))
    } else {
        "check".to_owned()
    }
}

pub(super) fn ws_pk(t: &Tenant) -> String {
    keys::ws(&t.org, &t.workspace)
}

/// The partition of the record `id` names: the write shard its id carries.
pub(super) fn home(t: &Tenant, id: &str) -> String {
    keys::ws_shard(&t.org, &t.workspace, inbox_domain::ids::shard_of(id))
}

/// Every write shard of the workspace that may hold records (what lists read).
pub(super) fn shard_pks(t: &Tenant) -> Vec<String> {
    (0..t.shards.read_count()).map(|shard| keys::ws_shard(&t.org, &t.workspace, shard)).collect()
}

/// Where a record found by `key` goes, and where else it may be (during the
/// grace after a change of shards): partitions from the key's hash.
pub(super) fn keyed_homes(t: &Tenant, key: &str) -> (String, Option<String>) {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(digest.as_ref().get(..8).unwrap_or(&[0; 8]));
    let (home, other) = t.shards.keyed(u64::from_be_bytes(first), inbox_support::sys::unix_now());
    let pk = |shard| keys::ws_shard(&t.org, &t.workspace, shard);
    (pk(home), other.map(pk))
}

pub(super) fn built<T, E: std::fmt::Display>(r: Result<T, E>) -> Result<T, StoreError> {
    r.map_err(|e| StoreError::Corrupt(e.to_string()))
}

pub(super) fn put(table: &str, item: Item, condition: Option<&str>) -> Result<TransactWriteItem, StoreError> {
    let put = built(
        Put::builder()
            .table_name(table)
            .set_item(Some(item))
            .set_condition_expression(condition.map(Into::into))
            .build(),
    )?;
    Ok(TransactWriteItem::builder().put(put).build())
}

impl Store {
    /// One transaction. A cancelled one is `Conflict` only when a condition
    /// failed (what callers read as "the record is not as expected"); one
    /// cancelled by a concurrent transaction or by throttling is `Throttled`
    /// (worth retrying), and any other reason is `Unavailable`.
    pub(super) async fn transact(&self, items: Vec<TransactWriteItem>) -> Result<(), StoreError> {
        if self.describe(true, || items.iter().map(describe).collect()) {
            return Ok(());
        }
        match self.client().transact_write_items().set_transact_items(Some(items)).send().await {
            Ok(_) => Ok(()),
            Err(error) => {
                let reasons: Option<Vec<String>> = match error.as_service_error() {
                    Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => Some(
                        cancelled.cancellation_reasons().iter().filter_map(|r| r.code().map(str::to_owned)).collect(),
                    ),
                    _ => None,
                };
                Err(reasons.map_or_else(|| error.into(), |codes| cancelled(&codes)))
            }
        }
    }

    /// Runs a change and its audit record (when it has one: demo data has
    /// none) as one transaction: both are written or neither.
    pub(super) async fn transact_audited(
        &self,
        t: &Tenant,
        mut items: Vec<TransactWriteItem>,
        audit: Option<&Audit<'_>>,
    ) -> Result<(), StoreError> {
        if let Some(audit) = audit {
            items.push(self.audit_put(t, &audit.record)?);
        }
        self.transact(items).await?;
        if let Some(audit) = audit {
            audit.committed();
        }
        Ok(())
    }

    /// Writes a new record unless one with its key exists; false when it does.
    pub(super) async fn insert_new(
        &self,
        t: &Tenant,
        item: Item,
        audit: Option<&Audit<'_>>,
    ) -> Result<bool, StoreError> {
        let insert = put(self.table(), item, Some("attribute_not_exists(pk)"))?;
        match self.transact_audited(t, vec![insert], audit).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Replaces a live record; with `previous_updated_at`, only if it is
    /// unchanged since it was read (PATCH), otherwise last writer wins
    /// (upsert). `Conflict` when the record is gone or changed.
    pub(super) async fn replace_live(
        &self,
        t: &Tenant,
        item: Item,
        previous_updated_at: Option<&str>,
        audit: &Audit<'_>,
    ) -> Result<(), StoreError> {
        let live = "attribute_exists(pk) AND attribute_not_exists(deleted_at)";
        let replace = match previous_updated_at {
            Some(prev) => Put::builder()
                .condition_expression(format!("{live} AND updated_at = :prev"))
                .expression_attribute_values(":prev", s(prev)),
            None => Put::builder().condition_expression(live),
        };
        let replace = built(replace.table_name(self.table()).set_item(Some(item)).build())?;
        self.transact_audited(t, vec![TransactWriteItem::builder().put(replace).build()], Some(audit)).await
    }

    pub(super) async fn put_conditional(
        &self,
        item: Item,
        condition: &str,
        values: &[(&str, AttributeValue)],
    ) -> Result<(), StoreError> {
        if self.describe(true, || vec![describe_put(&item)]) {
            return Ok(());
        }
        let mut request =
            self.client().put_item().table_name(self.table()).set_item(Some(item)).condition_expression(condition);
        for (k, v) in values {
            request = request.expression_attribute_values(*k, v.clone());
        }
        request.send().await?;
        Ok(())
    }

    /// Reserves the unique key `sk` (a slug or a URL) for `owner`, recording
    /// it under `owner_attr`. False when it is taken. One conditional put.
    pub(super) async fn reserve(
        &self,
        t: &Tenant,
        sk: String,
        owner_attr: &str,
        owner: &str,
    ) -> Result<bool, StoreError> {
        let mut reservation = Item::new();
        reservation.insert(PK.into(), s(ws_pk(t)));
        reservation.insert(SK.into(), s(sk));
        reservation.insert(owner_attr.into(), s(owner));
        match self.put_conditional(reservation, "attribute_not_exists(pk)", &[]).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Frees a reservation if `owner` still holds it.
    pub(super) async fn release(
        &self,
        t: &Tenant,
        sk: String,
        owner_attr: &str,
        owner: &str,
    ) -> Result<(), StoreError> {
        let result = self
            .client()
            .delete_item()
            .table_name(self.table())
            .key(PK, s(ws_pk(t)))
            .key(SK, s(sk))
            .condition_expression("#o = :id")
            .expression_attribute_names("#o", owner_attr)
            .expression_attribute_values(":id", s(owner))
            .send()
            .await;
        match result.map_err(StoreError::from) {
            Ok(_) | Err(StoreError::Conflict) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
