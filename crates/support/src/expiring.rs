//! A map whose entries are used for a fixed time after they were read: the
//! per-container caches of stored data (memberships and organizations,
//! the configuration the busy path reads, a workspace's write shards, the
//! development server's client documents). Past `MAX_ENTRIES` it starts
//! over rather than grow; a zero lifetime keeps nothing. A poisoned lock
//! only guards copies of stored data, so it is used as it is.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Most entries kept per map.
pub const MAX_ENTRIES: usize = 10_000;

pub struct Expiring<K, V> {
    ttl: Duration,
    entries: Mutex<HashMap<K, (Instant, V)>>,
}

impl<K: Eq + Hash, V: Clone> Expiring<K, V> {
    pub fn new(ttl: Duration) -> Self {
        Expiring { ttl, entries: Mutex::default() }
    }

    fn entries(&self) -> MutexGuard<'_, HashMap<K, (Instant, V)>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value kept for `key`, while it is fresh.
    pub fn get(&self, key: &K) -> Option<V> {
        self.entries().get(key).filter(|(at, _)| at.elapsed() < self.ttl).map(|(_, v)| v.clone())
    }

    /// Keeps `value` for `key` from now.
    pub fn put(&self, key: K, value: V) {
        if self.ttl.is_zero() {
            return;
        }
        let mut entries = self.entries();
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(key, (Instant::now(), value));
    }

    /// Forgets every entry whose key `forget` says.
    pub fn forget(&self, forget: impl Fn(&K) -> bool) {
        self.entries().retain(|k, _| !forget(k));
    }

    /// The fresh value for `key`, or what `load` reads (then kept).
    ///
    /// The read is boxed: a table read's future is kilobytes (the SDK's
    /// orchestrator), and held inline it would make every caller's future —
    /// up to the whole request's — that large, to be moved and touched on
    /// every request although a warm cache never runs it. Boxed, only a
    /// miss pays, one allocation beside its round trip.
    pub async fn get_or_load<E>(&self, key: K, load: impl AsyncFnOnce() -> Result<V, E>) -> Result<V, E> {
        if let Some(value) = self.get(&key) {
            return Ok(value);
        }
        let value = Box::pin(load()).await?;
        self.put(key, value.clone());
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_live_their_time_and_a_zero_lifetime_keeps_nothing() {
        let kept = Expiring::new(Duration::from_secs(60));
        kept.put("a", 1);
        assert_eq!(kept.get(&"a"), Some(1));
        kept.forget(|k| *k == "a");
        assert_eq!(kept.get(&"a"), None);
        let none = Expiring::new(Duration::ZERO);
        none.put("a", 1);
        assert_eq!(none.get(&"a"), None);
        let stale = Expiring::new(Duration::from_nanos(1));
        stale.put("a", 1);
        std::thread::sleep(Duration::from_millis(1));
        assert_eq!(stale.get(&"a"), None);
    }
}
