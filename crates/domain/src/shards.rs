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
//! - One raise per grace: a raise is refused until `KEYED_GRACE_SECS` after
//!   the last one (`Shards::raise`). Keyed lookups know two counts, the one
//!   in force and the one before; a second raise within the grace would make
//!   them forget the first count while records written under it (an
//!   idempotency record lives 24 h) are still live, and a replay would run
//!   its operation again, a used confirmation would be usable again.
//!   Refusing keeps every count that may hold a live keyed record in those
//!   two, so a keyed lookup stays at most two reads and the stored entry
//!   keeps its shape (containers of the previous release read it as they
//!   did); a list of every recent count would need a bound, and a refusal at
//!   it, anyway.

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

/// Why a raise is refused (`Shards::raise`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaiseRefused {
    /// Zero, over `MAX_SHARDS`, or lower than the shards that may hold records.
    InvalidCount,
    /// The last raise was less than `Shards::KEYED_GRACE_SECS` ago: the next
    /// one is possible from `from` (unix seconds).
    TooSoon { from: u64 },
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

    /// When the next raise is possible (unix seconds): once keyed records
    /// are no longer looked for under the count before the last change. A
    /// count never changed (`count == previous`) may be raised at once.
    pub fn next_raise_at(&self) -> u64 {
        if self.count == self.previous { 0 } else { self.changed_at.saturating_add(Self::KEYED_GRACE_SECS) }
    }

    /// The shards after raising the count to `count` at `now`: itself when
    /// `count` is the count already (nothing changes), refused when the count
    /// would not grow or is out of range, or while the last raise's grace
    /// runs (see the module's doc).
    pub fn raise(&self, count: u16, now: u64) -> Result<Shards, RaiseRefused> {
        if count == 0 || count > MAX_SHARDS || count < self.read_count() {
            return Err(RaiseRefused::InvalidCount);
        }
        if count == self.count {
            return Ok(*self);
        }
        let from = self.next_raise_at();
        if now < from {
            return Err(RaiseRefused::TooSoon { from });
        }
        Ok(Shards { count, previous: self.write_count(now), changed_at: now })
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

    #[test]
    fn a_second_raise_is_refused_until_the_grace_of_the_first_has_passed() {
        let grace = Shards::KEYED_GRACE_SECS;
        assert_eq!(Shards::default().next_raise_at(), 0, "never changed: raised at once");
        let once = Shards::default().raise(4, 0).unwrap();
        assert_eq!(once, Shards { count: 4, previous: 1, changed_at: 0 });
        let once = Shards::default().raise(4, 1000).unwrap();
        assert_eq!(once, Shards { count: 4, previous: 1, changed_at: 1000 });
        for at in [1000, 1000 + Shards::WRITE_DELAY_SECS, 1000 + 3600, 1000 + grace - 1] {
            assert_eq!(once.raise(16, at), Err(RaiseRefused::TooSoon { from: 1000 + grace }), "{at}");
        }
        assert_eq!(once.raise(4, 2000), Ok(once), "the same count changes nothing");
        for count in [0, 2, MAX_SHARDS + 1] {
            assert_eq!(once.raise(count, 1000 + grace), Err(RaiseRefused::InvalidCount), "{count}");
        }
        assert_eq!(once.raise(16, 1000 + grace), Ok(Shards { count: 16, previous: 4, changed_at: 1000 + grace }));
    }

    /// Every shard a keyed record of `hash` is looked for in at `now`.
    fn looked_in(shards: &Shards, hash: u64, now: u64) -> Vec<u16> {
        let (home, other) = shards.keyed(hash, now);
        std::iter::once(home).chain(other).collect()
    }

    #[test]
    fn a_keyed_record_is_found_for_a_day_wherever_it_was_written_across_every_raise_tried() {
        const HOUR: u64 = 3600;
        // How long a container may write with a count it read before (tenancy caches).
        const CACHE: u64 = 30;
        // An idempotency record lives a day after it is written.
        const LIVES: u64 = 24 * HOUR;
        let (start, grace) = (1_000_000, Shards::KEYED_GRACE_SECS);
        // 1 → 4, → 16 an hour later, → 16 once the grace passed, → 64 an hour after that.
        let tried = [(start, 4), (start + HOUR, 16), (start + grace, 16), (start + grace + HOUR, 64)];
        let mut timeline = vec![(0, Shards::default())];
        for (at, count) in tried {
            let current = timeline.last().map(|(_, s)| *s).unwrap_or_default();
            if let Ok(raised) = current.raise(count, at)
                && raised != current
            {
                timeline.push((at, raised));
            }
        }
        let state = |t: u64| timeline.iter().rev().find(|(at, _)| *at <= t).map(|(_, s)| *s).unwrap_or_default();
        let mut written: Vec<u64> = (start - HOUR..start + 3 * grace).step_by(600).collect();
        // The last moments each count is written.
        written.extend(timeline.iter().map(|(at, _)| at + Shards::WRITE_DELAY_SECS - 1));
        for hash in 0..32u64 {
            for &at in &written {
                for seen in [at, at - CACHE] {
                    let shard = state(seen).keyed(hash, at).0;
                    for later in (at..at + LIVES).step_by(1800).chain([at + LIVES - 1]) {
                        assert!(
                            looked_in(&state(later), hash, later).contains(&shard),
                            "hash {hash} written at {at} in shard {shard}, lost at {later}: {:?}",
                            state(later)
                        );
                    }
                }
            }
        }
        let counts: Vec<u16> = timeline.iter().map(|(_, s)| s.count).collect();
        assert_eq!(counts, [1, 4, 16], "the raises within a grace were refused");
    }
}
