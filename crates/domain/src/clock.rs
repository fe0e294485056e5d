//! Timestamps: UTC, RFC 3339 with milliseconds and a `Z`, fixed width so that
//! string order is time order (they are used in sort keys). Formatting and
//! parsing only: reading the wall clock is `inbox_support::sys`'s.

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, OffsetDateTime, UtcOffset};

const FORMAT: &[time::format_description::BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

pub fn format(t: OffsetDateTime) -> String {
    // The fixed format cannot fail for a UTC time with a four-digit year;
    // `parse_instant` and the clock give no other (a time outside that range
    // would have no place in the sort order anyway).
    t.checked_to_offset(UtcOffset::UTC)
        .filter(|t| (0..=9999).contains(&t.year()))
        .and_then(|t| t.format(FORMAT).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".into())
}

/// Parses a filter bound: an RFC 3339 timestamp, or a date (midnight UTC).
/// A time whose UTC year is not 0000–9999 (`9999-12-31T23:59:59-23:59`) is
/// none: it cannot be written in the fixed format.
pub fn parse_instant(text: &str) -> Option<OffsetDateTime> {
    let parsed = match OffsetDateTime::parse(text, &Rfc3339) {
        Ok(t) => Some(t),
        Err(_) => {
            Date::parse(text, format_description!("[year]-[month]-[day]")).ok().map(|d| d.midnight().assume_utc())
        }
    };
    parsed.and_then(|t| t.checked_to_offset(UtcOffset::UTC)).filter(|t| (0..=9999).contains(&t.year()))
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

    #[test]
    fn an_instant_outside_the_four_digit_years_in_utc_is_not_one() {
        // Valid RFC 3339 whose UTC time is past 9999 or before 0000: not an
        // instant this service can write (and formatting it must not panic).
        for text in ["9999-12-31T23:59:59-23:59", "0000-01-01T00:00:00+23:59"] {
            assert!(parse_instant(text).is_none(), "{text}");
        }
        let edge = parse_instant("9999-12-31T23:59:59.999Z").unwrap();
        assert_eq!(format(edge), "9999-12-31T23:59:59.999Z");
        let late = OffsetDateTime::parse("9999-12-31T23:59:59-23:59", &Rfc3339).unwrap();
        assert_eq!(format(late), "1970-01-01T00:00:00.000Z", "a time format cannot write is not a panic");
    }
}
