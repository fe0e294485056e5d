//! Timestamps: UTC, RFC 3339 with milliseconds and a `Z`, fixed width so that
//! string order is time order (they are used in sort keys). Formatting and
//! parsing only: reading the wall clock is `crate::sys`'s.

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, OffsetDateTime, UtcOffset};

const FORMAT: &[time::format_description::BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

pub fn format(t: OffsetDateTime) -> String {
    // The fixed format cannot fail for a UTC time with a four-digit year.
    t.to_offset(UtcOffset::UTC).format(FORMAT).unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".into())
}

/// Parses a filter bound: an RFC 3339 timestamp, or a date (midnight UTC).
pub fn parse_instant(text: &str) -> Option<OffsetDateTime> {
    if let Ok(t) = OffsetDateTime::parse(text, &Rfc3339) {
        return Some(t);
    }
    Date::parse(text, format_description!("[year]-[month]-[day]")).ok().map(|d| d.midnight().assume_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_is_fixed_width_and_sortable() {
        let a = parse_instant("2026-01-02T03:04:05Z").unwrap();
        let b = parse_instant("2026-01-02T03:04:05.5+00:00").unwrap();
        assert_eq!(format(a), "2026-01-02T03:04:05.000Z");
        assert_eq!(format(b), "2026-01-02T03:04:05.500Z");
        assert!(format(a) < format(b));
        assert_eq!(format(parse_instant("2026-02-03").unwrap()), "2026-02-03T00:00:00.000Z");
        assert!(parse_instant("2026-02-30").is_none());
        assert!(parse_instant("yesterday").is_none());
    }
}
