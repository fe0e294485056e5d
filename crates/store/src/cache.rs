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

use std::time::Duration;

use super::webhooks::StoredWebhook;
use inbox_domain::records::Inbox;
use inbox_support::expiring::Expiring;

/// How long an entry is used, by default.
pub const CONFIG_CACHE_SECS: u64 = 5;

pub(super) struct ReadCache {
    /// By (workspace partition, inbox id).
    pub(super) inboxes: Expiring<(String, String), Option<Inbox>>,
    /// By (workspace partition, inbox id, address): whether it is allowed.
    pub(super) senders: Expiring<(String, String, String), bool>,
    /// By workspace partition.
    pub(super) webhooks: Expiring<String, Vec<StoredWebhook>>,
}

impl ReadCache {
    pub(super) fn new(secs: u64) -> ReadCache {
        let ttl = Duration::from_secs(secs);
        ReadCache { inboxes: Expiring::new(ttl), senders: Expiring::new(ttl), webhooks: Expiring::new(ttl) }
    }

    /// Forgets everything kept of the workspace partition `pk` (a change to
    /// an inbox, a sender or a webhook there).
    pub(super) fn forget(&self, pk: &str) {
        self.inboxes.forget(|(p, _)| p == pk);
        self.senders.forget(|(p, _, _)| p == pk);
        self.webhooks.forget(|p| p == pk);
    }
}
