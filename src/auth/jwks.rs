//! The issuer's signing keys, fetched once per container and kept.
//!
//! A token whose `kid` is not cached triggers a refresh, but at most one fetch
//! runs at a time (single flight: other callers wait for it and then look
//! again) and at most one starts per interval, so a flood of unknown `kid`s
//! costs one request to the issuer. A failed fetch keeps the keys already
//! held; with no keys at all, or after a failed fetch, an unknown `kid` gets
//! `Unavailable` and a retry hint (it may be a key the issuer just rotated in).
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

pub struct JwksCache {
    url: String,
    client: reqwest::Client,
    min_interval: Duration,
    keys: RwLock<Arc<HashMap<String, CachedKey>>>,
    /// Held while a fetch runs; records when the last one started.
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
            keys: RwLock::new(Arc::new(HashMap::new())),
            refresh: tokio::sync::Mutex::new(None),
            fetches: AtomicU64::new(0),
            issuer_down: AtomicBool::new(false),
        }
    }

    /// How many times the JWKS was requested from the issuer.
    pub fn fetch_count(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    fn snapshot(&self) -> Arc<HashMap<String, CachedKey>> {
        // A poisoned lock only means a writer panicked mid-swap of an Arc; the
        // map inside is whole either way.
        Arc::clone(&self.keys.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Loads the key set if none is held yet (best effort: a failure is
    /// logged and the first request tries again). For INIT, where the round
    /// trip overlaps the others instead of delaying the first request.
    pub async fn prime(&self) {
        if self.snapshot().is_empty() {
            // An id no key has: loads the set, and the answer is of no interest.
            let _ = self.key("").await;
        }
    }

    /// The key for `kid`, refreshing the set when it is not known.
    pub async fn key(&self, kid: &str) -> Result<CachedKey, JwksError> {
        if let Some(key) = self.snapshot().get(kid) {
            return Ok(key.clone());
        }
        let mut last_attempt = self.refresh.lock().await;
        let keys = self.snapshot();
        if let Some(key) = keys.get(kid) {
            return Ok(key.clone());
        }
        // With no keys at all, retry sooner: nothing can be served until then.
        let had_keys = !keys.is_empty();
        let interval = if had_keys { self.min_interval } else { self.min_interval.min(Duration::from_secs(5)) };
        let now = Instant::now();
        let due = last_attempt.is_none_or(|t| now.duration_since(t) >= interval);
        if due {
            self.fetches.fetch_add(1, Ordering::Relaxed);
            match self.fetch().await {
                Ok(fresh) => {
                    tracing::info!(keys = fresh.len(), "JWKS refreshed");
                    *self.keys.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(fresh);
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
                    tracing::warn!(%reason, "JWKS refresh failed; keeping the keys already held");
                }
            }
        }
        let keys = self.snapshot();
        match keys.get(kid) {
            Some(key) => Ok(key.clone()),
            None if keys.is_empty() || self.issuer_down.load(Ordering::Relaxed) => {
                let waited = last_attempt.map_or(Duration::ZERO, |t| now.duration_since(t));
                let retry = interval.saturating_sub(waited).as_secs().max(1);
                Err(JwksError::Unavailable { retry_after_secs: retry })
            }
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
