//! Fixed-window rate-limit counters shared by every replica: one conditional
//! update per request. The window item expires by TTL.
//!
//! One counter takes a write per counted request, so it stays under half a
//! key's 1,000 writes a second up to `PER_COUNTER` requests a minute. A
//! bigger budget (a mail pipeline's) is split over several counters, each
//! on a key of its own and allowing its share; a request counts on one of
//! them at random. People's budgets (hundreds a minute) have one counter.
//!
//! A subject has two budgets on keys apart (`Budget`): a person's, which
//! every request spends, and a registered mail pipeline's ingestion, which
//! only that route spends: neither spends the other.

use super::keys::{self, PK, SK, TTL};
use super::{Store, StoreError, n, s};
use inbox_domain::OrgId;

/// The outcome of counting one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateDecision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the window resets.
    pub reset_secs: u64,
}

pub const WINDOW_SECS: u64 = 60;

/// Which of a subject's budgets a request spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// The person's: every request but a registered pipeline's ingestion,
    /// whatever the token's scopes.
    Person,
    /// A registered mail pipeline's ingestion (`POST /inboxes/{id}/emails`
    /// by a subject registered for the workspace), and nothing else.
    Ingestion,
}

impl Budget {
    /// The budget's first counter key (`keys::rate_counter_pk` adds the others).
    fn pk(self, org: &OrgId, sub: &str) -> String {
        match self {
            Budget::Person => keys::rate_pk(org, sub),
            Budget::Ingestion => keys::ingestion_rate_pk(org, sub),
        }
    }
}

/// The most requests a minute one counter admits (half a key's write limit).
pub const PER_COUNTER: u32 = 30_000;

impl Store {
    /// Counts a request of (org, sub) on `budget` in the window containing `now`.
    pub async fn hit_rate_limit(
        &self,
        org: &OrgId,
        sub: &str,
        budget: Budget,
        limit: u32,
        now: u64,
    ) -> Result<RateDecision, StoreError> {
        let window = now - now % WINDOW_SECS;
        let reset_secs = window + WINDOW_SECS - now;
        let counters = limit.div_ceil(PER_COUNTER).max(1);
        let counter = if counters > 1 { u32::from_le_bytes(inbox_support::sys::random()) % counters } else { 0 };
        let (full, limit) = (limit, limit.div_ceil(counters));
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .key(PK, s(keys::rate_counter_pk(budget.pk(org, sub), counter)))
            .key(SK, s(keys::rate_sk(window)))
            .update_expression("ADD #c :one SET #e = :exp")
            .condition_expression("attribute_not_exists(#c) OR #c < :limit")
            .expression_attribute_names("#c", "count")
            .expression_attribute_names("#e", TTL)
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":limit", n(limit))
            .expression_attribute_values(":exp", n(window + 2 * WINDOW_SECS))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::UpdatedNew)
            .send()
            .await;
        match result {
            Ok(out) => {
                let count = out
                    .attributes
                    .as_ref()
                    .and_then(|a| a.get("count"))
                    .and_then(|v| v.as_n().ok())
                    .and_then(|v| v.parse::<u32>().ok())
                    .unwrap_or(limit);
                // With several counters, what is left is this one's share times their number (an estimate).
                let remaining = limit.saturating_sub(count).saturating_mul(counters).min(full);
                Ok(RateDecision { allowed: true, limit: full, remaining, reset_secs })
            }
            Err(e) => match StoreError::from(e) {
                StoreError::Conflict => Ok(RateDecision { allowed: false, limit: full, remaining: 0, reset_secs }),
                other => Err(other),
            },
        }
    }
}
