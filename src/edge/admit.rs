//! Admission, the same for both surfaces: the bearer token is verified for
//! the resource it was sent to (the MCP endpoint or the REST API), then the
//! request is counted against the caller's shared per-minute budget.
//!
//! The budget is one DynamoDB counter per person (organization and subject)
//! and minute, shared by every replica and by all the person's workspaces.
//! It is keyed on nothing a request chooses: a made-up `X-Workspace-Id` on
//! every call neither buys a fresh budget nor writes a new counter item. A write waits for its count before it runs (an
//! over-budget write never happens). A read does not wait: its count runs
//! concurrently with the work (`Counting`), and the answer carries the
//! counter's decision when it is back in time, else this container's
//! estimate from the last decision it saw for that budget. A budget this
//! container knows to be spent refuses reads at once, without a round trip.
//! When the counter cannot be updated, requests are admitted (availability
//! over strictness) and the failure is logged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use http::HeaderMap;
use tokio::task::JoinHandle;

use super::Edge;
use crate::auth::challenge::{Challenge, Resource};
use crate::auth::{self, Principal};
use crate::store::rate_limit::{RateDecision, WINDOW_SECS};
use crate::store::{Store, StoreError};

/// Why a request was not admitted.
#[derive(Debug)]
pub enum NotAdmitted {
    /// The token is missing, malformed or invalid, or its keys cannot be loaded.
    Unauthenticated(Challenge),
    /// Over the budget: when to retry, the limit, and the headers to send.
    RateLimited { retry_after: u64, limit: u32, headers: Vec<(&'static str, String)> },
}

/// Verifies the bearer token for `resource` (no storage involved).
pub async fn authenticate(
    edge: &Edge,
    resource: &Resource,
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<Principal, NotAdmitted> {
    let token = auth::bearer(headers, query).map_err(|e| NotAdmitted::Unauthenticated(resource.reject(&e)))?;
    edge.verifier.verify(token, resource).await.map_err(|e| {
        // What this server expects, so a token minted for another run (another
        // port, another issuer) is recognised at a glance.
        tracing::info!(reason = %e, expected_issuer = edge.verifier.issuer(), expected_audience = %resource.audience, "token rejected");
        NotAdmitted::Unauthenticated(resource.reject(&e))
    })
}

/// The shared budget, and what this container last learned of each budget.
pub struct RateLimiter {
    per_minute: u32,
    /// The budget of a mail pipeline's token (its only scope `emails:ingest`).
    ingest_per_minute: u32,
    store: Store,
    seen: Arc<Mutex<HashMap<String, Seen>>>,
}

/// The last decision seen for one budget, in its window.
#[derive(Debug, Clone, Copy)]
struct Seen {
    window: u64,
    remaining: u32,
    exhausted: bool,
}

/// Most budgets remembered per container; past it the memory starts over.
const MAX_SEEN: usize = 10_000;

/// A read's count, running while the read does its work.
pub struct Counting {
    key: String,
    limit: u32,
    now: u64,
    task: Option<JoinHandle<Result<RateDecision, StoreError>>>,
    seen: Arc<Mutex<HashMap<String, Seen>>>,
}

impl RateLimiter {
    pub fn new(per_minute: u32, store: Store) -> RateLimiter {
        RateLimiter { per_minute, ingest_per_minute: per_minute, store, seen: Arc::new(Mutex::new(HashMap::new())) }
    }

    /// A mail pipeline's budget of its own: its volume is the workspace's
    /// mail, not a person's clicks (0: not limited).
    pub fn with_ingest_budget(mut self, per_minute: u32) -> RateLimiter {
        self.ingest_per_minute = per_minute;
        self
    }

    /// The budget of `principal`'s requests per minute (0: not limited).
    fn budget_of(&self, principal: &Principal) -> u32 {
        let only_ingest = principal.scopes.iter().eq([crate::domain::Scope::EmailsIngest]);
        if only_ingest { self.ingest_per_minute } else { self.per_minute }
    }

    /// Counts a write: waits for the shared counter.
    pub async fn admit_write(&self, principal: &Principal) -> Result<Vec<(&'static str, String)>, NotAdmitted> {
        let per_minute = self.budget_of(principal);
        if per_minute == 0 {
            return Ok(Vec::new());
        }
        let key = budget(principal);
        let now = crate::sys::unix_now();
        // Boxed: the counter's update is a table write whose future is
        // kilobytes; inline, it would size every request's future, reads too.
        match Box::pin(self.store.hit_rate_limit(&principal.org, &principal.sub, per_minute, now)).await {
            Ok(decision) => {
                remember(&self.seen, &key, now, &decision);
                verdict(&decision)
            }
            Err(error) => {
                tracing::error!(%error, "rate-limit counter unavailable; admitting the request");
                Ok(Vec::new())
            }
        }
    }

    /// Starts counting a read without waiting for it; refuses at once a
    /// budget this container already knows to be spent in this window.
    pub fn admit_read(&self, principal: &Principal) -> Result<Option<Counting>, NotAdmitted> {
        let per_minute = self.budget_of(principal);
        if per_minute == 0 {
            return Ok(None);
        }
        let key = budget(principal);
        let now = crate::sys::unix_now();
        let window = now - now % WINDOW_SECS;
        let known = lock(&self.seen).get(&key).copied().filter(|s| s.window == window);
        if known.is_some_and(|s| s.exhausted) {
            let decision = RateDecision {
                allowed: false,
                limit: per_minute,
                remaining: 0,
                reset_secs: window + WINDOW_SECS - now,
            };
            verdict(&decision)?;
        }
        let (store, org, sub, limit) = (self.store.clone(), principal.org.clone(), principal.sub.clone(), per_minute);
        // The counter's call is this request's, made by a task of its own
        // (the read does not wait for it): counted on the request's line
        // here, where the task cannot, and the task's lines name the request.
        crate::store::count_round_trip();
        let task =
            crate::telemetry::spawn_in_request(async move { store.hit_rate_limit(&org, &sub, limit, now).await });
        Ok(Some(Counting { key, limit, now, task: Some(task), seen: Arc::clone(&self.seen) }))
    }
}

impl Counting {
    /// After the work: the counter's verdict if it is back, else the
    /// estimate (the count goes on and is remembered when it lands).
    pub fn finish(mut self) -> Result<Vec<(&'static str, String)>, NotAdmitted> {
        let window = self.now - self.now % WINDOW_SECS;
        let reset_secs = window + WINDOW_SECS - self.now;
        if let Some(task) = self.task.take_if(|t| t.is_finished()) {
            // A finished task's output is ready: this does not wait.
            return match futures_util::FutureExt::now_or_never(task) {
                Some(Ok(Ok(decision))) => {
                    remember(&self.seen, &self.key, self.now, &decision);
                    verdict(&decision)
                }
                Some(Ok(Err(error))) => {
                    tracing::error!(%error, "rate-limit counter unavailable; admitting the request");
                    Ok(Vec::new())
                }
                _ => Ok(Vec::new()),
            };
        }
        if let Some(task) = self.task.take() {
            let (seen, key, now) = (Arc::clone(&self.seen), self.key.clone(), self.now);
            crate::telemetry::spawn_in_request(async move {
                match task.await {
                    Ok(Ok(decision)) => remember(&seen, &key, now, &decision),
                    Ok(Err(error)) => tracing::error!(%error, "rate-limit counter unavailable; the read was admitted"),
                    Err(_) => {}
                }
            });
        }
        let remaining = lock(&self.seen)
            .get_mut(&self.key)
            .filter(|s| s.window == window)
            .map(|s| {
                s.remaining = s.remaining.saturating_sub(1);
                s.remaining
            })
            .unwrap_or(self.limit.saturating_sub(1));
        Ok(rate_headers(&RateDecision { allowed: true, limit: self.limit, remaining, reset_secs }))
    }
}

/// The budget's key in this container's memory: the person.
fn budget(principal: &Principal) -> String {
    format!("{}\u{0}{}", principal.org, principal.sub)
}

fn lock(seen: &Mutex<HashMap<String, Seen>>) -> std::sync::MutexGuard<'_, HashMap<String, Seen>> {
    // A poisoned map only holds estimates: keep using it.
    seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn remember(seen: &Mutex<HashMap<String, Seen>>, key: &str, now: u64, decision: &RateDecision) {
    let mut map = lock(seen);
    if map.len() >= MAX_SEEN && !map.contains_key(key) {
        map.clear();
    }
    let window = now - now % WINDOW_SECS;
    map.insert(key.to_owned(), Seen { window, remaining: decision.remaining, exhausted: !decision.allowed });
}

fn verdict(decision: &RateDecision) -> Result<Vec<(&'static str, String)>, NotAdmitted> {
    let headers = rate_headers(decision);
    if decision.allowed {
        Ok(headers)
    } else {
        Err(NotAdmitted::RateLimited { retry_after: decision.reset_secs.max(1), limit: decision.limit, headers })
    }
}

fn rate_headers(d: &RateDecision) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("x-ratelimit-limit", d.limit.to_string()),
        ("x-ratelimit-remaining", d.remaining.to_string()),
        ("x-ratelimit-reset", d.reset_secs.to_string()),
    ];
    if !d.allowed {
        headers.push(("retry-after", d.reset_secs.max(1).to_string()));
    }
    headers
}
