//! What the process reads from the machine at run time: the wall clock and
//! the system's random numbers. Kept out of `domain`, whose rules stay pure
//! (they take times and random bytes as arguments), and in one place, so
//! every timestamp and id of the product comes from here.

use time::OffsetDateTime;

use crate::domain::clock::format;
use crate::domain::ids::{Kind, id_from};

pub fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

/// Now, in the product's fixed-width timestamp format.
pub fn now_string() -> String {
    format(now())
}

pub fn unix_now() -> u64 {
    u64::try_from(now().unix_timestamp()).unwrap_or(0)
}

/// `n` bytes from the system RNG. aws-lc aborts the process itself when the
/// system has no randomness, so the error path cannot be taken in practice.
pub fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    let _ = aws_lc_rs::rand::fill(&mut bytes);
    bytes
}

/// A new random id of `kind`.
pub fn new_id(kind: Kind) -> String {
    id_from(kind, &random())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_are_distinct() {
        assert_ne!(new_id(Kind::Job), new_id(Kind::Job));
        assert!(crate::domain::ids::is_id(Kind::Job, &new_id(Kind::Job)));
    }
}
