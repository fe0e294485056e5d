//! `Idempotency-Key` records: the first response to a write is kept (24 h)
//! and replayed for a repeat with the same key and body. A marker is written
//! before the operation runs, so two concurrent requests with one key cannot
//! both run it. A record lives in the workspace's write shard of its key's
//! hash; for a while after the shard count changes it is also looked for
//! where the previous count put it (`inbox_domain::shards`).

use serde::{Deserialize, Serialize};

use super::items::{Keys, to_item};
use super::keys::{self, PK, SK, TTL};
use super::writes::keyed_homes;
use super::{Store, StoreError, s};
use inbox_domain::Tenant;
use inbox_support::sys::unix_now;

/// How long a key is remembered.
pub const RETENTION_SECS: u64 = 24 * 3600;

/// How long a key is held for a request still running. A request cut short
/// (its budget ran out, its container died) cannot release its key; the
/// marker then lapses after this, and the client's retry runs.
pub const IN_PROGRESS_SECS: u64 = 60;

/// A stored response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredResponse {
    pub status: u16,
    /// The response body, sealed by the caller (it may hold a secret shown once).
    /// A record from before bodies were sealed reads as empty, which no
    /// key opens: its replay is refused rather than served in clear.
    #[serde(rename = "body_sealed", default)]
    pub body: String,
    pub location: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    fingerprint: String,
    response: Option<StoredResponse>,
    expires_at: u64,
}

/// What a key says about a request.
#[derive(Debug, PartialEq)]
pub enum KeyState {
    /// First use: run the operation, then `finish`.
    Fresh,
    /// Seen with the same request: answer this.
    Replay(StoredResponse),
    /// Seen with a different request.
    Mismatch,
    /// The first request with this key has not finished.
    InProgress,
}

impl Store {
    pub async fn begin_idempotent(
        &self,
        t: &Tenant,
        sub: &str,
        key: &str,
        fingerprint: &str,
    ) -> Result<KeyState, StoreError> {
        let now = unix_now();
        let sk = keys::idempotency(sub, key);
        let (pk, elsewhere) = keyed_homes(t, &sk);
        if let Some(old) = elsewhere
            && let Some(existing) = self.get::<Record>(old, sk.clone()).await?.filter(|r| r.expires_at >= now)
        {
            return Ok(match existing.response {
                _ if existing.fingerprint != fingerprint => KeyState::Mismatch,
                Some(response) => KeyState::Replay(response),
                None => KeyState::InProgress,
            });
        }
        let record = Record { fingerprint: fingerprint.to_owned(), response: None, expires_at: now + IN_PROGRESS_SECS };
        let put = self
            .client()
            .put_item()
            .table_name(self.table())
            .set_item(Some(to_item(Keys::new(pk.clone(), sk.clone()), &record)?))
            // Expiry is lazy: an expired record counts as absent.
            .condition_expression("attribute_not_exists(pk) OR #ttl < :now")
            .expression_attribute_names("#ttl", TTL)
            .expression_attribute_values(":now", super::n(now))
            .send()
            .await;
        match put {
            Ok(_) => Ok(KeyState::Fresh),
            Err(e) => match StoreError::from(e) {
                StoreError::Conflict => {
                    let Some(existing) = self.get::<Record>(pk, sk).await? else { return Ok(KeyState::InProgress) };
                    Ok(match existing.response {
                        _ if existing.fingerprint != fingerprint => KeyState::Mismatch,
                        Some(response) => KeyState::Replay(response),
                        None => KeyState::InProgress,
                    })
                }
                other => Err(other),
            },
        }
    }

    pub async fn finish_idempotent(
        &self,
        t: &Tenant,
        sub: &str,
        key: &str,
        fingerprint: &str,
        response: &StoredResponse,
    ) -> Result<(), StoreError> {
        let record = Record {
            fingerprint: fingerprint.to_owned(),
            response: Some(response.clone()),
            expires_at: unix_now() + RETENTION_SECS,
        };
        let sk = keys::idempotency(sub, key);
        let item = to_item(Keys::new(keyed_homes(t, &sk).0, sk), &record)?;
        self.client().put_item().table_name(self.table()).set_item(Some(item)).send().await?;
        Ok(())
    }

    /// Forgets a key whose operation failed for a reason worth retrying.
    pub async fn forget_idempotent(&self, t: &Tenant, sub: &str, key: &str) -> Result<(), StoreError> {
        self.client()
            .delete_item()
            .table_name(self.table())
            .key(PK, s(keyed_homes(t, &keys::idempotency(sub, key)).0))
            .key(SK, s(keys::idempotency(sub, key)))
            .send()
            .await?;
        Ok(())
    }
}
