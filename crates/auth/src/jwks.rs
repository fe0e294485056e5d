//! The issuer's signing keys, fetched per container and kept for a bounded
//! time.
//!
//! A key set is trusted for `max_age` after it was fetched (`JWKS_MAX_AGE_MINUTES`):
//! the first request past that age refreshes it, and a key the issuer no
//! longer lists stops verifying then, whether or not anyone ever sends a token
//! with an unknown `kid` (an attacker holding a retired key never would). A
//! token whose `kid` is not in a fresh set triggers a refresh too. Either way
//! at most one fetch runs at a time (single flight: other callers wait for it
//! and then look again), and after a refresh or a failure the next one on an
//! unknown `kid` — or the next retry of a failed one — waits `min_interval`,
//! so a flood of unknown `kid`s or an issuer outage costs one request to the
//! issuer per interval, not one per request. The first load does not start
//! that clock.
//!
//! A failed fetch keeps the keys already held, but only while the issuer is
//! unreachable and only until the set is `max_stale` old
//! (`JWKS_MAX_STALE_MINUTES`); past it, and with no keys at all, the answer is
//! `Unavailable` with a retry hint, as for an unknown `kid` after a failed
//! fetch (it may be a key the issuer just rotated in).
//!
//! Only asymmetric keys usable with RS256, ES256 or EdDSA are kept: an HMAC
//! (`oct`) key in the set is ignored, so a public key can never be used as an
//! HMAC secret.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

/// Largest JWKS document read from the issuer.
const MAX_JWKS_BYTES: usize = 256 * 1024;

/// How long a fetched key set is trusted before it is fetched again.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(10 * 60);
/// The oldest a key set may grow while the issuer cannot be reached.
pub const DEFAULT_MAX_STALE: Duration = Duration::from_secs(60 * 60);

/// A verification key and the one algorithm it may verify.
#[derive(Clone)]
pub struct CachedKey {
    pub alg: Algorithm,
    pub key: DecodingKey,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum JwksError {
    #[error("no key with this kid")]
    UnknownKid,
    #[error("no signing keys available")]
    Unavailable { retry_after_secs: u64 },
}

/// The keys held and when the issuer listed them.
#[derive(Default)]
struct KeySet {
    keys: HashMap<String, CachedKey>,
    /// When the fetch that returned `keys` started; `None` before the first.
    fetched_at: Option<Instant>,
}

impl KeySet {
    fn age(&self, now: Instant) -> Option<Duration> {
        self.fetched_at.map(|t| now.saturating_duration_since(t))
    }
}

pub struct JwksCache {
    url: String,
    client: reqwest::Client,
    min_interval: Duration,
    max_age: Duration,
    max_stale: Duration,
    keys: RwLock<Arc<KeySet>>,
    /// Held while a fetch runs; records when the last one that counts
    /// against `min_interval` started.
    refresh: tokio::sync::Mutex<Option<Instant>>,
    fetches: AtomicU64,
    /// The last fetch failed: a kid we do not know may be one the issuer
    /// rotated in, so it is "try again", not "invalid".
    issuer_down: AtomicBool,
}

impl JwksCache {
    pub fn new(url: String, client: reqwest::Client, min_interval: Duration) -> Self {
        Self {
            url,
            client,
            min_interval,
            max_age: DEFAULT_MAX_AGE,
            max_stale: DEFAULT_MAX_STALE,
            keys: RwLock::new(Arc::new(KeySet::default())),
            refresh: tokio::sync::Mutex::new(None),
            fetches: AtomicU64::new(0),
            issuer_down: AtomicBool::new(false),
        }
    }

    /// Trusts a fetched set for `max_age`, and while the issuer is
    /// unreachable keeps using it until it is `max_stale` old (at least
    /// `max_age`).
    pub fn with_max_age(self, max_age: Duration, max_stale: Duration) -> Self {
        Self { max_age, max_stale: max_stale.max(max_age), ..self }
    }

    /// How many times the JWKS was requested from the issuer.
    pub fn fetch_count(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    fn snapshot(&self) -> Arc<KeySet> {
        // A poisoned lock only means a writer panicked mid-swap of an Arc; the
        // set inside is whole either way.
        Arc::clone(&self.keys.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// How much longer the keys held are trusted without asking the issuer
    /// again (zero once they are due for a refresh): what a verified token
    /// may be taken on trust for, so a retired key stops vouching on time.
    pub fn fresh_for(&self) -> Duration {
        let set = self.snapshot();
        set.age(Instant::now()).map_or(Duration::ZERO, |age| self.max_age.saturating_sub(age))
    }

    /// Loads the key set if none is held yet (best effort: a failure is
    /// logged and the first request tries again). For INIT, where the round
    /// trip overlaps the others instead of delaying the first request.
    pub async fn prime(&self) {
        if self.snapshot().fetched_at.is_none() {
            // An id no key has: loads the set, and the answer is of no interest.
            let _ = self.key("").await;
        }
    }

    /// The key for `kid`, refreshing the set when it is due or `kid` is not known.
    pub async fn key(&self, kid: &str) -> Result<CachedKey, JwksError> {
        let fresh = |set: &KeySet, now: Instant| set.age(now).is_some_and(|age| age < self.max_age);
        {
            let set = self.snapshot();
            if let Some(key) = set.keys.get(kid).filter(|_| fresh(&set, Instant::now())) {
                return Ok(key.clone());
            }
        }
        let mut last_attempt = self.refresh.lock().await;
        let now = Instant::now();
        let set = self.snapshot();
        let was_fresh = fresh(&set, now);
        if let Some(key) = set.keys.get(kid).filter(|_| was_fresh) {
            return Ok(key.clone());
        }
        // With no keys at all, retry sooner: nothing can be served until then.
        let had_keys = !set.keys.is_empty();
        let interval = if had_keys { self.min_interval } else { self.min_interval.min(Duration::from_secs(5)) };
        let waited_enough = last_attempt.is_none_or(|t| now.duration_since(t) >= interval);
        // A set past its age is fetched again by the first request that finds
        // it so, unless that fetch already failed within the interval (an
        // outage is retried once per interval, not on every request); an
        // unknown kid in a fresh set waits out the interval as well.
        let issuer_down = self.issuer_down.load(Ordering::Relaxed);
        let due = if was_fresh { waited_enough } else { !issuer_down || waited_enough };
        if due {
            self.fetches.fetch_add(1, Ordering::Relaxed);
            match self.fetch().await {
                Ok(fresh_keys) => {
                    tracing::info!(keys = fresh_keys.len(), "JWKS refreshed");
                    let replaced = KeySet { keys: fresh_keys, fetched_at: Some(now) };
                    *self.keys.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(replaced);
                    self.issuer_down.store(false, Ordering::Relaxed);
                    // The first successful load does not start the clock:
                    // only refreshes (and failures) are rate-limited.
                    if had_keys {
                        *last_attempt = Some(now);
                    }
                }
                Err(reason) => {
                    *last_attempt = Some(now);
                    self.issuer_down.store(true, Ordering::Relaxed);
                    tracing::warn!(%reason, "JWKS refresh failed; keeping the keys already held while they are young enough");
                }
            }
        }
        let set = self.snapshot();
        let usable = set.age(Instant::now()).is_some_and(|age| age < self.max_stale);
        let unavailable = || {
            let waited = last_attempt.map_or(Duration::ZERO, |t| now.duration_since(t));
            let retry = interval.saturating_sub(waited).as_secs().max(1);
            JwksError::Unavailable { retry_after_secs: retry }
        };
        match set.keys.get(kid) {
            // Past its age only because the issuer cannot be reached, and not for longer than allowed.
            Some(key) if usable => Ok(key.clone()),
            Some(_) => Err(unavailable()),
            None if set.keys.is_empty() || !usable || self.issuer_down.load(Ordering::Relaxed) => Err(unavailable()),
            None => Err(JwksError::UnknownKid),
        }
    }

    async fn fetch(&self) -> Result<HashMap<String, CachedKey>, String> {
        let mut response = self.client.get(&self.url).send().await.map_err(|e| format!("request failed: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("issuer answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| format!("read failed: {e}"))? {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_JWKS_BYTES {
                return Err("JWKS document too large".into());
            }
        }
        parse_jwks(&body)
    }
}

/// Parses a JWKS document, keeping each usable key under its `kid`.
pub fn parse_jwks(body: &[u8]) -> Result<HashMap<String, CachedKey>, String> {
    let doc: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let Some(Value::Array(entries)) = doc.get("keys") else {
        return Err("no keys array".into());
    };
    let mut keys = HashMap::new();
    for entry in entries {
        let Ok(jwk) = serde_json::from_value::<Jwk>(entry.clone()) else { continue };
        let Some(kid) = jwk.common.key_id.clone() else { continue };
        let Some(alg) = algorithm_for(&jwk) else { continue };
        let Ok(key) = DecodingKey::from_jwk(&jwk) else { continue };
        keys.insert(kid, CachedKey { alg, key });
    }
    if keys.is_empty() {
        return Err("no usable keys".into());
    }
    Ok(keys)
}

/// The one allowed algorithm a key may verify: from the key type, and equal
/// to the JWK's own `alg` when it names one.
fn algorithm_for(jwk: &Jwk) -> Option<Algorithm> {
    let by_type = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P256 => Algorithm::ES256,
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => Algorithm::EdDSA,
        _ => return None,
    };
    let declared = match jwk.common.key_algorithm {
        None => return Some(by_type),
        Some(KeyAlgorithm::RS256) => Algorithm::RS256,
        Some(KeyAlgorithm::ES256) => Algorithm::ES256,
        Some(KeyAlgorithm::EdDSA) => Algorithm::EdDSA,
        Some(_) => return None,
    };
    (declared == by_type).then_some(by_type)
}
