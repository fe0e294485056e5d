//! What the busy path reads again and again, kept a few seconds per
//! container: an inbox and its allowed senders (every ingestion reads them)
//! and a workspace's webhooks (every job that sends an event reads them).
//! Without it, one busy workspace's ingestion would read the same few items
//! thousands of times a second — a hot key however the records spread
//! (docs/capacity.md). A change made through this container forgets the
//! workspace's entries at once; one made elsewhere is seen within
//! `CONFIG_CACHE_SECS` (an inbox paused, a sender removed, a webhook
//! disabled takes effect for ingestion and deliveries within that time;
//! configurable, `StoreConfig::cache_secs`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::webhooks::StoredWebhook;
use crate::domain::records::Inbox;

/// How long an entry is used, by default.
pub const CONFIG_CACHE_SECS: u64 = 5;
/// Most entries kept; past it the cache starts over.
const MAX_ENTRIES: usize = 10_000;

/// Values by key, each with when it was read.
type Entries<K, V> = Mutex<HashMap<K, (Instant, V)>>;

pub(super) struct ReadCache {
    ttl: Duration,
    inboxes: Entries<(String, String), Option<Inbox>>,
    senders: Entries<(String, String, String), bool>,
    webhooks: Entries<String, Vec<StoredWebhook>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned map only holds copies of stored data: keep using it.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn keep<K: std::hash::Hash + Eq, V>(map: &Mutex<HashMap<K, (Instant, V)>>, key: K, value: V) {
    let mut map = lock(map);
    if map.len() >= MAX_ENTRIES {
        map.clear();
    }
    map.insert(key, (Instant::now(), value));
}

impl ReadCache {
    pub(super) fn new(secs: u64) -> ReadCache {
        ReadCache {
            ttl: Duration::from_secs(secs),
            inboxes: Mutex::default(),
            senders: Mutex::default(),
            webhooks: Mutex::default(),
        }
    }

    fn fresh(&self, at: &Instant) -> bool {
        at.elapsed() < self.ttl
    }

    pub(super) fn inbox(&self, pk: &str, id: &str) -> Option<Option<Inbox>> {
        lock(&self.inboxes)
            .get(&(pk.to_owned(), id.to_owned()))
            .filter(|(at, _)| self.fresh(at))
            .map(|(_, v)| v.clone())
    }

    pub(super) fn keep_inbox(&self, pk: &str, id: &str, inbox: Option<Inbox>) {
        keep(&self.inboxes, (pk.to_owned(), id.to_owned()), inbox);
    }

    pub(super) fn sender(&self, pk: &str, inbox: &str, address: &str) -> Option<bool> {
        let key = (pk.to_owned(), inbox.to_owned(), address.to_owned());
        lock(&self.senders).get(&key).filter(|(at, _)| self.fresh(at)).map(|(_, v)| *v)
    }

    pub(super) fn keep_sender(&self, pk: &str, inbox: &str, address: &str, allowed: bool) {
        keep(&self.senders, (pk.to_owned(), inbox.to_owned(), address.to_owned()), allowed);
    }

    pub(super) fn webhooks(&self, pk: &str) -> Option<Vec<StoredWebhook>> {
        lock(&self.webhooks).get(pk).filter(|(at, _)| self.fresh(at)).map(|(_, v)| v.clone())
    }

    pub(super) fn keep_webhooks(&self, pk: &str, webhooks: Vec<StoredWebhook>) {
        keep(&self.webhooks, pk.to_owned(), webhooks);
    }

    /// Forgets everything kept of the workspace partition `pk` (a change to
    /// an inbox, a sender or a webhook there).
    pub(super) fn forget(&self, pk: &str) {
        lock(&self.inboxes).retain(|(p, _), _| p != pk);
        lock(&self.senders).retain(|(p, _, _), _| p != pk);
        lock(&self.webhooks).remove(pk);
    }
}
