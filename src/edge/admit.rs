//! Admission, the same for both surfaces: the bearer token is verified for
//! the resource it was sent to (the MCP endpoint or the REST API), then the
//! request is counted against one of the caller's shared per-minute budgets.
//!
//! Every request spends the person's budget (organization and subject),
//! whatever its token's scopes, except one: the ingestion route called by a
//! subject registered as the workspace's mail pipeline, which spends the
//! pipeline's ingestion budget (`Budget::Ingestion`) instead. The caller
//! says which (`edge::rest` knows the route and resolves the registration);
//! the two have counters and memory of their own, so neither spends the other.
//!
//! A budget is one DynamoDB counter per subject and minute, shared by every
//! replica and by all the person's workspaces. It is keyed on nothing a
//! request chooses: a made-up `X-Workspace-Id` on every call neither buys a
//! fresh budget nor writes a new counter item. A write waits for its count
//! before it runs (an over-budget write never happens). A read does not wait:
//! its count runs concurrently with the work (`Counting`), and the answer
//! carries the counter's decision when it is back in time, else this
//! container's estimate from the last decision it saw for that budget.
//!
//! A container refuses at once, without a round trip, a request of a budget
//! it knows to be spent in this window: the counter said so, or the container
//! itself admitted the whole budget in this window (each admitted request
//! is counted, so the counter is past the budget too). The second rule is
//! what bounds concurrent reads, which do not wait for their counts: a burst
//! of reads into one container is admitted up to the budget, not beyond.
//! Both are checked under the memory's lock, held for no await.
//! When the counter cannot be updated, requests are admitted (availability
//! over strictness) and the failure is logged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use http::HeaderMap;
use tokio::task::JoinHandle;

use super::Edge;
use crate::auth::challenge::{Challenge, Resource};
use crate::auth::{self, Principal};
use crate::store::rate_limit::{Budget, RateDecision, WINDOW_SECS};
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

/// The shared budgets, and what this container last learned of each budget.
pub struct RateLimiter {
    per_minute: u32,
    /// The budget of a registered mail pipeline's ingestion.
    ingest_per_minute: u32,
    store: Store,
    seen: Arc<Mutex<HashMap<String, Seen>>>,
}

/// What this container knows of one budget, in its window.
#[derive(Debug, Clone, Copy)]
struct Seen {
    window: u64,
    /// From the last decision of the counter (an estimate past it).
    remaining: u32,
    /// The last decision of the counter refused.
    exhausted: bool,
    /// Requests this container admitted in the window.
    admitted: u32,
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

    /// A mail pipeline's ingestion budget: its volume is the workspace's
    /// mail, not a person's clicks (0: not limited).
    pub fn with_ingest_budget(mut self, per_minute: u32) -> RateLimiter {
        self.ingest_per_minute = per_minute;
        self
    }

    /// The requests per minute of `budget` (0: not limited).
    fn per_minute(&self, budget: Budget) -> u32 {
        match budget {
            Budget::Person => self.per_minute,
            Budget::Ingestion => self.ingest_per_minute,
        }
    }

    /// Counts a write: waits for the shared counter.
    pub async fn admit_write(
        &self,
        principal: &Principal,
        budget: Budget,
    ) -> Result<Vec<(&'static str, String)>, NotAdmitted> {
        let per_minute = self.per_minute(budget);
        if per_minute == 0 {
            return Ok(Vec::new());
        }
        let key = memory_key(principal, budget);
        let now = crate::sys::unix_now();
        refuse_if_spent(&self.seen, &key, per_minute, now, false)?;
        // Boxed: the counter's update is a table write whose future is
        // kilobytes; inline, it would size every request's future, reads too.
        let counted = Box::pin(self.store.hit_rate_limit(&principal.org, &principal.sub, budget, per_minute, now));
        match counted.await {
            Ok(decision) => {
                remember(&self.seen, &key, now, &decision, decision.allowed);
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
    pub fn admit_read(&self, principal: &Principal, budget: Budget) -> Result<Option<Counting>, NotAdmitted> {
        let per_minute = self.per_minute(budget);
        if per_minute == 0 {
            return Ok(None);
        }
        let key = memory_key(principal, budget);
        let now = crate::sys::unix_now();
        // Admitted here, before its count is back: the local tally is what
        // stops a burst of reads that all start before any count lands.
        refuse_if_spent(&self.seen, &key, per_minute, now, true)?;
        let (store, org, sub, limit) = (self.store.clone(), principal.org.clone(), principal.sub.clone(), per_minute);
        // The counter's call is this request's, made by a task of its own
        // (the read does not wait for it): counted on the request's line
        // here, where the task cannot, and the task's lines name the request.
        crate::store::count_round_trip();
        let task =
            crate::telemetry::spawn_in_request(
                async move { store.hit_rate_limit(&org, &sub, budget, limit, now).await },
            );
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
                    remember(&self.seen, &self.key, self.now, &decision, false);
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
                    Ok(Ok(decision)) => remember(&seen, &key, now, &decision, false),
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

/// A budget's key in this container's memory: which budget, and whose.
/// A subject's two budgets are remembered apart.
fn memory_key(principal: &Principal, budget: Budget) -> String {
    let kind = match budget {
        Budget::Person => 'P',
        Budget::Ingestion => 'I',
    };
    format!("{kind}\u{0}{}\u{0}{}", principal.org, principal.sub)
}

fn lock(seen: &Mutex<HashMap<String, Seen>>) -> std::sync::MutexGuard<'_, HashMap<String, Seen>> {
    // A poisoned map only holds estimates: keep using it.
    seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What this container knows of `key` in the window containing `now`: a
/// fresh entry when it knew nothing of this window yet.
fn entry<'m>(map: &'m mut HashMap<String, Seen>, key: &str, now: u64, limit: u32) -> &'m mut Seen {
    let window = now - now % WINDOW_SECS;
    if map.len() >= MAX_SEEN && !map.contains_key(key) {
        map.clear();
    }
    let fresh = Seen { window, remaining: limit, exhausted: false, admitted: 0 };
    let seen = map.entry(key.to_owned()).or_insert(fresh);
    if seen.window < window {
        *seen = fresh;
    }
    seen
}

/// Refuses at once when this container knows the budget spent in this
/// window (the counter refused, or it admitted `limit` requests itself);
/// else, when `admit`, takes this request into the container's tally.
fn refuse_if_spent(
    seen: &Mutex<HashMap<String, Seen>>,
    key: &str,
    limit: u32,
    now: u64,
    admit: bool,
) -> Result<(), NotAdmitted> {
    let window = now - now % WINDOW_SECS;
    let spent = {
        let mut map = lock(seen);
        let known = entry(&mut map, key, now, limit);
        let spent = known.window == window && (known.exhausted || known.admitted >= limit);
        if admit && !spent {
            known.admitted = known.admitted.saturating_add(1);
        }
        spent
    };
    if spent {
        verdict(&RateDecision { allowed: false, limit, remaining: 0, reset_secs: window + WINDOW_SECS - now })?;
    }
    Ok(())
}

/// Keeps the counter's decision for its window (an older window's, landing
/// late, is dropped); `admitted`: the request it decided is admitted and not
/// yet in the tally (a write's, taken once its count allowed it).
fn remember(seen: &Mutex<HashMap<String, Seen>>, key: &str, now: u64, decision: &RateDecision, admitted: bool) {
    let window = now - now % WINDOW_SECS;
    let mut map = lock(seen);
    let known = entry(&mut map, key, now, decision.limit);
    if known.window != window {
        return;
    }
    known.remaining = decision.remaining;
    known.exhausted = !decision.allowed;
    if admitted {
        known.admitted = known.admitted.saturating_add(1);
    }
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
