//! How long an e-mail's content is kept (LGPD art. 16: personal data is
//! deleted once its purpose is met). Each workspace chooses
//! `retention_days` (`DEFAULT_DAYS` until it does): past it, counted from
//! when the inbox stored the e-mail (`created_at`: the server's clock, not
//! a date the sender wrote), its subject, body and attachments are purged
//! (`records::Email::purge_content`). What the server decoded from it (the
//! bills) and the audit trail stay: they are the customer's payables record.
//! A soft-deleted e-mail is removed for good `DELETED_GRACE_DAYS` after its
//! deletion (the table's TTL).
//!
//! Reads hide content past retention at once (`expired`); the purge itself
//! runs daily (`inbox_worker::retention`), so nothing depends on when it ran.

use time::{Duration, OffsetDateTime};

use crate::clock::{format, parse_instant};

/// The retention of a workspace that never chose one: a year, long enough
/// for a year's payables to be reconciled.
pub const DEFAULT_DAYS: u32 = 365;
pub const MIN_DAYS: u32 = 1;
/// Ten years: longer than any Brazilian record-keeping duty on these documents.
pub const MAX_DAYS: u32 = 3650;
/// How far ahead of the server's clock an ingested `received_at` may be
/// (clock skew); a later one is taken as now.
pub const FUTURE_SKEW_SECS: i64 = 300;

/// How long a soft-deleted e-mail is kept before the table removes it.
pub const DELETED_GRACE_DAYS: u64 = 30;

/// The oldest `created_at` whose content is still kept at `now`.
pub fn cutoff(now: OffsetDateTime, days: u32) -> String {
    format(now - Duration::days(i64::from(days)))
}

/// Whether content stored at `stored_at` is past `days` at `now`. A
/// time that does not parse is not expired (it was written by this server;
/// a bad one is a defect to see, not a reason to hide data).
pub fn expired(stored_at: &str, days: u32, now: OffsetDateTime) -> bool {
    parse_instant(stored_at).is_some_and(|at| at < now - Duration::days(i64::from(days)))
}

/// When a soft-deleted e-mail leaves the table (unix seconds), from the
/// deletion time (unix seconds).
pub fn deleted_expiry(deleted_at_unix: u64) -> u64 {
    deleted_at_unix + DELETED_GRACE_DAYS * 86_400
}

/// When content stored at `stored_at` expires under `days` (in the
/// product's timestamp format); `None` for a time that does not parse.
pub fn expiry(stored_at: &str, days: u32) -> Option<String> {
    parse_instant(stored_at).map(|at| format(at + Duration::days(i64::from(days))))
}

/// Hides `email`'s content when it is past `days` at `now` and the purge
/// has not yet removed it: the e-mail reads as the purge will leave it.
pub fn hide_expired(email: &mut crate::records::Email, days: u32, now: OffsetDateTime) {
    if email.content_purged_at.is_none() && expired(&email.created_at, days, now) {
        let at = expiry(&email.created_at, days).unwrap_or_else(|| format(now));
        email.purge_content(&at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_expires_the_day_after_its_retention() {
        let now = parse_instant("2026-12-06T12:00:00Z").unwrap();
        assert!(!expired("2026-12-05T12:00:01.000Z", 1, now));
        assert!(expired("2026-12-05T11:59:59.000Z", 1, now));
        assert!(!expired("2025-12-07T00:00:00.000Z", DEFAULT_DAYS, now));
        assert!(expired("2025-12-06T11:00:00.000Z", DEFAULT_DAYS, now));
        assert!(!expired("not a time", 1, now));
        assert_eq!(cutoff(now, 1), "2026-12-05T12:00:00.000Z");
        // The cutoff and `expired` agree: what sorts before the cutoff is expired.
        assert!(expired("2026-12-05T11:59:59.999Z", 1, now) && "2026-12-05T11:59:59.999Z" < cutoff(now, 1).as_str());
    }
}
