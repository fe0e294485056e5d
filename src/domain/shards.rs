//! A workspace's write shards: how many partitions its write-heavy records
//! (e-mails, jobs, deliveries, audit records, idempotency and single-use
//! markers) spread over, so one busy workspace never makes one hot key.
//!
//! - A record made by id carries its shard in the id (`ids::with_shard`):
//!   reading it needs no lookup, and shard 0 is the workspace partition
//!   itself, so every record made before shards existed (ids without a
//!   shard) is where it always was. Raising the count moves nothing.
//! - Lists read every shard that may hold records (`read_count`), one query
//!   each, and merge newest first.
//! - A raised count is read at once but written only `WRITE_DELAY_SECS`
//!   later, once every container has seen it (tenancy caches live 30 s), so
//!   no list misses a record written to a shard it does not know yet.
//! - Records found by key, not id (idempotency and single-use markers), are
//!   placed by a hash of the key; for `KEYED_GRACE_SECS` after a change they
//!   are also looked for where the previous count put them.
//! - The count only grows (a lower count would hide records in the shards
//!   above it).

/// The most write shards a workspace may have.
pub const MAX_SHARDS: u16 = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shards {
    /// The shards records are written to (once `changed_at` +
    /// `WRITE_DELAY_SECS` has passed).
    pub count: u16,
    /// The count before the last change.
    pub previous: u16,
    /// When it changed (unix seconds).
    pub changed_at: u64,
}

impl Default for Shards {
    fn default() -> Self {
        Shards { count: 1, previous: 1, changed_at: 0 }
    }
}

impl Shards {
    /// How long after a change writers start using the new count.
    pub const WRITE_DELAY_SECS: u64 = 120;
    /// How long after a change keyed records are also looked for under the
    /// previous count: longer than an idempotency record lives (24 h).
    pub const KEYED_GRACE_SECS: u64 = 25 * 3600;

    /// The shards that may hold records: what lists read.
    pub fn read_count(&self) -> u16 {
        self.count.max(self.previous).clamp(1, MAX_SHARDS)
    }

    /// The shards new records go to at `now`.
    pub fn write_count(&self, now: u64) -> u16 {
        let count =
            if now >= self.changed_at.saturating_add(Self::WRITE_DELAY_SECS) { self.count } else { self.previous };
        count.clamp(1, MAX_SHARDS)
    }

    /// The shard of a new record, from a random number.
    pub fn pick(&self, now: u64, random: u32) -> u16 {
        let count = u32::from(self.write_count(now));
        u16::try_from(random % count).unwrap_or(0)
    }

    /// Where a keyed record goes (first) and where else it may be, from the
    /// key's hash: the shard under the count in force, and during the grace
    /// after a change the shard under the other count, when it differs.
    pub fn keyed(&self, hash: u64, now: u64) -> (u16, Option<u16>) {
        let at = |count: u16| u16::try_from(hash % u64::from(count.clamp(1, MAX_SHARDS))).unwrap_or(0);
        let home = at(self.write_count(now));
        let grace = now < self.changed_at.saturating_add(Self::KEYED_GRACE_SECS);
        let other = [self.count, self.previous].into_iter().map(at).find(|s| *s != home);
        (home, other.filter(|_| grace))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_count_is_read_at_once_and_written_after_the_delay() {
        let shards = Shards { count: 16, previous: 1, changed_at: 1000 };
        assert_eq!(shards.read_count(), 16);
        assert_eq!(shards.write_count(1000), 1);
        assert_eq!(shards.write_count(1000 + Shards::WRITE_DELAY_SECS), 16);
        assert!((0..1000).all(|r| shards.pick(5000, r) < 16));
        assert_eq!((0..64).map(|r| shards.pick(5000, r)).collect::<std::collections::BTreeSet<_>>().len(), 16);
        assert_eq!(Shards::default().pick(5000, 12345), 0);
    }

    #[test]
    fn keyed_records_are_also_looked_for_under_the_previous_count_during_the_grace() {
        let shards = Shards { count: 4, previous: 1, changed_at: 1000 };
        let after = 1000 + Shards::WRITE_DELAY_SECS;
        assert_eq!(shards.keyed(7, after), (3, Some(0)));
        assert_eq!(shards.keyed(7, 1000 + Shards::KEYED_GRACE_SECS), (3, None));
        assert_eq!(shards.keyed(8, after), (0, None), "same shard either way");
        assert_eq!(Shards::default().keyed(7, 5000), (0, None));
    }
}
