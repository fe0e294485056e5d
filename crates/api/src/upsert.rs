//! Upsert by a unique natural key (an inbox's slug, a webhook's URL), safe
//! under races without transactions.
//!
//! The key is a reservation item naming the record's id, taken with a conditional
//! put. Then:
//! - no reservation: reserve the key for a new id, write the record → created;
//! - a reservation whose record is live: update the record (last writer wins) → updated;
//! - a reservation whose record does not exist yet (its creator is between the two
//!   writes, or died there): write the record under the claimed id; of the
//!   writers only one succeeds (conditional put), the others update;
//! - a reservation whose record was deleted (a stale reservation): release it and start over.
//!
//! Exactly one request creates; every other one updates that record.

use super::error::ApiError;
use inbox_store::StoreError;

/// How many rounds before giving up with a 409 (each round makes progress
/// unless other requests keep deleting the record).
const ROUNDS: usize = 8;

pub(crate) enum Upserted<T> {
    Created(T),
    Updated(T),
}

pub(crate) trait Reserved {
    type Record;
    /// The id the reservation names, if it exists.
    async fn owner(&self) -> Result<Option<String>, StoreError>;
    /// Reserves the key for `id`; false when it is taken.
    async fn reserve(&self, id: &str) -> Result<bool, StoreError>;
    async fn release(&self, id: &str) -> Result<(), StoreError>;
    /// The record, deleted or not.
    async fn find(&self, id: &str) -> Result<Option<Self::Record>, StoreError>;
    fn is_deleted(record: &Self::Record) -> bool;
    /// A new record with `id` and the requested fields.
    fn fresh(&self, id: &str) -> Result<Self::Record, ApiError>;
    /// Writes a new record; false when one with its id exists.
    async fn insert(&self, record: &Self::Record) -> Result<bool, StoreError>;
    /// Applies the requested fields to a live record and writes it.
    async fn update(&self, record: Self::Record) -> Result<Self::Record, StoreError>;
    fn new_id(&self) -> String;
}

pub(crate) async fn upsert<C: Reserved>(c: &C) -> Result<Upserted<C::Record>, ApiError> {
    for _ in 0..ROUNDS {
        let Some(id) = c.owner().await? else {
            let id = c.new_id();
            if c.reserve(&id).await? {
                let record = c.fresh(&id)?;
                if c.insert(&record).await? {
                    return Ok(Upserted::Created(record));
                }
            }
            continue;
        };
        match c.find(&id).await? {
            Some(record) if !C::is_deleted(&record) => match c.update(record).await {
                Ok(updated) => return Ok(Upserted::Updated(updated)),
                // Deleted in between: start over.
                Err(StoreError::Conflict) => continue,
                Err(e) => return Err(e.into()),
            },
            Some(_) => c.release(&id).await?,
            None => {
                let record = c.fresh(&id)?;
                if c.insert(&record).await? {
                    return Ok(Upserted::Created(record));
                }
            }
        }
    }
    Err(ApiError::Conflict { code: "conflict", message: "The record is being changed by other requests; retry".into() })
}
