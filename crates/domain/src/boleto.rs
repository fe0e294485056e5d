//! Brazilian boletos: finding the digitable line or barcode in an e-mail's
//! text and validating it. Pure: no I/O, no clock (the reception date is an
//! argument).
//!
//! Two families exist:
//! - **Bank slips** (boleto bancário): a 47-digit digitable line or a 44-digit
//!   barcode. The line has three fields with a modulo-10 check digit each, the
//!   barcode's general check digit (modulo 11), a due-date factor and the
//!   amount in cents. The factor counts days from 1997-10-07; it reached 9999
//!   on 2025-02-21 and restarted at 1000 on 2025-02-22, so one factor names
//!   two dates 9000 days apart: the one nearest the e-mail's reception wins.
//! - **Utility and tax slips** (arrecadação): a 48-digit line starting with 8
//!   (four blocks of 11 digits and a check digit) or its 44-digit barcode. The
//!   third digit says how check digits are computed: 6 or 7 modulo 10, 8 or 9
//!   modulo 11; with 6 or 8 the value field is an amount in cents, with 7 or 9
//!   a reference quantity (no amount).

use std::fmt;

use time::{Date, Duration, Month};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Bank,
    Utility,
}

/// A validated slip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slip {
    pub family: Family,
    /// The digitable line, digits only.
    pub digitable_line: String,
    /// The 44-digit barcode.
    pub barcode: String,
    /// `None` for a utility slip carrying a reference quantity.
    pub amount_cents: Option<u64>,
    pub due_date: Option<Date>,
    /// Bank slips: the issuing bank.
    pub bank_code: Option<String>,
}

/// Where a check digit sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Digit {
    /// Field 1, 2 or 3 of a bank slip's line.
    Field(u8),
    /// Block 1 to 4 of a utility slip's line.
    Block(u8),
    /// The barcode's general check digit.
    General,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoletoError {
    /// Nothing shaped like a line or barcode.
    NotFound,
    /// Several different valid slips: the e-mail is ambiguous.
    Several(usize),
    CheckDigit {
        digit: Digit,
        expected: u8,
        found: u8,
    },
    /// A bank slip's currency code other than 9 (real).
    Currency(u8),
    /// A due-date factor in no cycle (1 to 999).
    Factor(u16),
    ZeroAmount,
    /// A 48-digit utility line must start with 8; a value-type digit must be
    /// 6 to 9; a bank line's bank code must not start with 8.
    Malformed(&'static str),
}

impl fmt::Display for BoletoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoletoError::NotFound => f.write_str("no boleto digitable line or barcode was found in the e-mail"),
            BoletoError::Several(n) => write!(f, "{n} different boletos were found in the e-mail; send one per e-mail"),
            BoletoError::CheckDigit { digit, expected, found } => {
                let what = match digit {
                    Digit::Field(n) => format!("digitable line: the check digit of field {n}"),
                    Digit::Block(n) => format!("digitable line: the check digit of block {n}"),
                    Digit::General => "barcode: the general check digit".to_owned(),
                };
                write!(f, "{what} is wrong (expected {expected}, found {found})")
            }
            BoletoError::Currency(c) => write!(f, "currency code {c} is not 9 (real)"),
            BoletoError::Factor(n) => write!(f, "due-date factor {n:04} is in no valid cycle"),
            BoletoError::ZeroAmount => f.write_str("the amount is zero"),
            BoletoError::Malformed(why) => f.write_str(why),
        }
    }
}

fn digits(s: &str) -> Vec<u8> {
    s.bytes().map(|b| b - b'0').collect()
}

/// Modulo 10 with weights 2, 1, 2, … from the right; products' digits summed.
pub fn mod10(digits: &[u8]) -> u8 {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            let p = u32::from(*d) * if i % 2 == 0 { 2 } else { 1 };
            p / 10 + p % 10
        })
        .sum();
    ((10 - sum % 10) % 10) as u8
}

fn mod11_sum(digits: &[u8]) -> u32 {
    digits.iter().rev().enumerate().map(|(i, d)| u32::from(*d) * (2 + (i as u32 % 8))).sum()
}

/// Bank slips' general check digit: weights 2..9 from the right; 0, 10 and 11 become 1.
pub fn mod11_bank(digits: &[u8]) -> u8 {
    match 11 - mod11_sum(digits) % 11 {
        0 | 10 | 11 => 1,
        d => d as u8,
    }
}

/// Utility slips' modulo 11: remainders 0 and 1 give 0.
pub fn mod11_utility(digits: &[u8]) -> u8 {
    match mod11_sum(digits) % 11 {
        0 | 1 => 0,
        r => (11 - r) as u8,
    }
}

fn check(digit: Digit, expected: u8, found: u8) -> Result<(), BoletoError> {
    if expected == found { Ok(()) } else { Err(BoletoError::CheckDigit { digit, expected, found }) }
}

fn date(y: i32, m: Month, d: u8) -> Date {
    // Constant, valid calendar dates.
    Date::from_calendar_date(y, m, d).unwrap_or(Date::MIN)
}

/// The due date a factor names, choosing the cycle nearest `received`.
pub fn due_date(factor: u16, received: Date) -> Result<Option<Date>, BoletoError> {
    if factor == 0 {
        return Ok(None);
    }
    if factor < 1000 {
        return Err(BoletoError::Factor(factor));
    }
    let first = date(1997, Month::October, 7) + Duration::days(i64::from(factor));
    let candidates = (0..4).map(|cycle| first + Duration::days(9000 * cycle));
    Ok(candidates.min_by_key(|d| (*d - received).whole_days().abs()))
}

/// Validates a bank slip's 44-digit barcode.
fn bank_barcode(barcode: &[u8; 44], line: String, received: Date) -> Result<Slip, BoletoError> {
    // A barcode that starts with 8 is a utility slip's: a bank line whose
    // barcode would start with 8 cannot be read back from its barcode.
    if barcode[0] == 8 {
        return Err(BoletoError::Malformed("a bank slip's bank code cannot start with 8 (that is a utility barcode)"));
    }
    if barcode[3] != 9 {
        return Err(BoletoError::Currency(barcode[3]));
    }
    let without: Vec<u8> = barcode[..4].iter().chain(&barcode[5..]).copied().collect();
    check(Digit::General, mod11_bank(&without), barcode[4])?;
    let number = |digits: &[u8]| digits.iter().fold(0u64, |acc, d| acc * 10 + u64::from(*d));
    let factor = number(&barcode[5..9]) as u16;
    let amount = number(&barcode[9..19]);
    if amount == 0 {
        return Err(BoletoError::ZeroAmount);
    }
    let text: String = barcode.iter().map(|d| char::from(b'0' + d)).collect();
    Ok(Slip {
        family: Family::Bank,
        digitable_line: if line.is_empty() { bank_line(barcode) } else { line },
        bank_code: Some(text[..3].to_owned()),
        barcode: text,
        amount_cents: Some(amount),
        due_date: due_date(factor, received)?,
    })
}

/// The digitable line of a bank barcode.
fn bank_line(b: &[u8; 44]) -> String {
    let f1: Vec<u8> = b[..4].iter().chain(&b[19..24]).copied().collect();
    let f2 = &b[24..34];
    let f3 = &b[34..44];
    let mut line: Vec<u8> = f1.clone();
    line.push(mod10(&f1));
    line.extend_from_slice(f2);
    line.push(mod10(f2));
    line.extend_from_slice(f3);
    line.push(mod10(f3));
    line.push(b[4]);
    line.extend_from_slice(&b[5..19]);
    line.iter().map(|d| char::from(b'0' + d)).collect()
}

/// Validates a 47-digit bank slip line.
fn bank_digitable(line: &[u8; 47], received: Date) -> Result<Slip, BoletoError> {
    check(Digit::Field(1), mod10(&line[0..9]), line[9])?;
    check(Digit::Field(2), mod10(&line[10..20]), line[20])?;
    check(Digit::Field(3), mod10(&line[21..31]), line[31])?;
    let barcode: Vec<u8> = line[0..4]
        .iter()
        .chain(&line[32..33])
        .chain(&line[33..47])
        .chain(&line[4..9])
        .chain(&line[10..20])
        .chain(&line[21..31])
        .copied()
        .collect();
    let barcode: [u8; 44] = barcode.try_into().map_err(|_| BoletoError::NotFound)?;
    bank_barcode(&barcode, line.iter().map(|d| char::from(b'0' + d)).collect(), received)
}

fn utility_modulus(value_type: u8) -> Result<fn(&[u8]) -> u8, BoletoError> {
    match value_type {
        6 | 7 => Ok(mod10),
        8 | 9 => Ok(mod11_utility),
        _ => Err(BoletoError::Malformed("utility slip: the value-type digit must be 6, 7, 8 or 9")),
    }
}

fn utility_barcode(barcode: &[u8; 44], line: String) -> Result<Slip, BoletoError> {
    let modulus = utility_modulus(barcode[2])?;
    let without: Vec<u8> = barcode[..3].iter().chain(&barcode[4..]).copied().collect();
    check(Digit::General, modulus(&without), barcode[3])?;
    let amount = match barcode[2] {
        6 | 8 => {
            let cents = barcode[4..15].iter().fold(0u64, |acc, d| acc * 10 + u64::from(*d));
            if cents == 0 {
                return Err(BoletoError::ZeroAmount);
            }
            Some(cents)
        }
        _ => None,
    };
    let text: String = barcode.iter().map(|d| char::from(b'0' + d)).collect();
    let line = if line.is_empty() {
        barcode
            .chunks(11)
            .flat_map(|block| {
                let mut with_dv = block.to_vec();
                with_dv.push(modulus(block));
                with_dv
            })
            .map(|d| char::from(b'0' + d))
            .collect()
    } else {
        line
    };
    Ok(Slip {
        family: Family::Utility,
        digitable_line: line,
        barcode: text,
        amount_cents: amount,
        due_date: None,
        bank_code: None,
    })
}

fn utility_digitable(line: &[u8; 48]) -> Result<Slip, BoletoError> {
    if line[0] != 8 {
        return Err(BoletoError::Malformed("a 48-digit line must start with 8 (utility or tax slip)"));
    }
    let modulus = utility_modulus(line[2])?;
    for (i, block) in line.chunks_exact(12).enumerate() {
        if let Some((dv, digits)) = block.split_last() {
            check(Digit::Block(i as u8 + 1), modulus(digits), *dv)?;
        }
    }
    let barcode: Vec<u8> = line.chunks(12).flat_map(|b| b.iter().take(11).copied()).collect();
    let barcode: [u8; 44] = barcode.try_into().map_err(|_| BoletoError::NotFound)?;
    utility_barcode(&barcode, line.iter().map(|d| char::from(b'0' + d)).collect())
}

/// Validates one candidate, given as digits only (44, 47 or 48 of them).
pub fn parse(candidate: &str, received: Date) -> Result<Slip, BoletoError> {
    if !candidate.bytes().all(|b| b.is_ascii_digit()) {
        return Err(BoletoError::NotFound);
    }
    let d = digits(candidate);
    if let Ok(line) = <[u8; 47]>::try_from(d.as_slice()) {
        return bank_digitable(&line, received);
    }
    if let Ok(line) = <[u8; 48]>::try_from(d.as_slice()) {
        return utility_digitable(&line);
    }
    match <[u8; 44]>::try_from(d.as_slice()) {
        Ok(barcode) if barcode[0] == 8 => utility_barcode(&barcode, String::new()),
        Ok(barcode) => bank_barcode(&barcode, String::new(), received),
        Err(_) => Err(BoletoError::NotFound),
    }
}

/// Most characters of a body that are scanned, and most candidates tried.
const MAX_SCAN: usize = 1_048_576;
const MAX_CANDIDATES: usize = 64;

/// Digit strings in `text` that could be a line or a barcode: runs of digit
/// groups separated by single spaces, dots or hyphens, and within a run every
/// span of consecutive groups holding exactly 44, 47 or 48 digits.
pub fn candidates(text: &str) -> Vec<String> {
    let text = &text[..text.floor_char_boundary(MAX_SCAN.min(text.len()))];
    let mut runs: Vec<Vec<&str>> = Vec::new();
    let mut groups: Vec<&str> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    let digit_at = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_digit);
    while i < bytes.len() {
        if digit_at(i) {
            let start = i;
            while digit_at(i) {
                i += 1;
            }
            // Digits are ASCII, so these are character boundaries.
            groups.extend(text.get(start..i));
            // One separator keeps the run going; anything else ends it.
            let joined = matches!(bytes.get(i), Some(b' ' | b'.' | b'-')) && digit_at(i + 1);
            if joined {
                i += 1;
            } else {
                runs.push(std::mem::take(&mut groups));
            }
        } else {
            i += 1;
        }
    }
    let mut found = Vec::new();
    for run in runs {
        for start in 0..run.len() {
            let mut joined = String::new();
            for group in run.iter().skip(start) {
                joined.push_str(group);
                if matches!(joined.len(), 44 | 47 | 48) && !found.contains(&joined) {
                    found.push(joined.clone());
                }
                if joined.len() >= 48 || found.len() >= MAX_CANDIDATES {
                    break;
                }
            }
        }
    }
    found
}

/// The one slip an e-mail carries. Several different valid slips are an
/// error; with none valid, the first candidate's error is the most precise
/// answer.
pub fn extract(text: &str, received: Date) -> Result<Slip, BoletoError> {
    let mut valid = all(text, received)?;
    match valid.len() {
        1 => Ok(valid.remove(0)),
        n => Err(BoletoError::Several(n)),
    }
}

/// Every different valid slip in `text`, in order (the same barcode written
/// twice, as line and as barcode, is one); with none valid, the first
/// candidate's error, the most precise answer.
pub fn all(text: &str, received: Date) -> Result<Vec<Slip>, BoletoError> {
    let mut valid: Vec<Slip> = Vec::new();
    let mut first_error = None;
    for candidate in candidates(text) {
        match parse(&candidate, received) {
            Ok(slip) => {
                if !valid.iter().any(|v| v.barcode == slip.barcode) {
                    valid.push(slip);
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if valid.is_empty() {
        return Err(first_error.unwrap_or(BoletoError::NotFound));
    }
    Ok(valid)
}

/// Sample digitable lines with known amounts and due dates: the demo data's e-mails carry
/// them, and the tests check the parser against them.
pub mod samples {
    /// A valid Itaú slip: R$ 159,90 due 2026-12-10.
    pub const LINE_TELECOM: &str = "34191.09123 34567.800007 01234.567897 1 16560000015990";
    /// A valid Banco do Brasil slip: R$ 487,50 due 2026-12-15.
    pub const LINE_ENERGY: &str = "00190.00009 02345.678904 12345.678176 6 16610000048750";
    /// A valid Bradesco slip: R$ 12.345,00 due 2026-11-30.
    pub const LINE_RENT: &str = "23793.38128 60000.000004 00000.000000 5 16460001234500";
    /// A slip whose second field's check digit is wrong.
    pub const LINE_BROKEN: &str = "10491.23456 67990.123457 67890.123457 9 16660000009900";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u8, d: u8) -> Date {
        Date::from_calendar_date(y, Month::try_from(m).unwrap(), d).unwrap()
    }

    fn s(d: &[u8]) -> String {
        d.iter().map(|x| char::from(b'0' + x)).collect()
    }

    /// Builds a valid bank barcode and line, computing every check digit here.
    fn bank_slip(bank: &str, factor: u16, cents: u64, free: &str) -> (String, String) {
        let body = format!("{bank}9{factor:04}{cents:010}{free}");
        let b = digits(&body);
        let dv = mod11_bank(&b);
        let barcode = format!("{bank}9{dv}{factor:04}{cents:010}{free}");
        let line = bank_line(&digits(&barcode).try_into().unwrap());
        (barcode, line)
    }

    fn utility_slip(value_type: u8, cents: u64) -> (String, String) {
        let modulus = utility_modulus(value_type).unwrap();
        let partial = format!("82{value_type}{cents:011}00010000123456789012345678901");
        let p = digits(&partial);
        let dv = modulus(&p);
        let barcode = format!("{}{}{}", &partial[..3], dv, &partial[3..]);
        let line: String = digits(&barcode)
            .chunks(11)
            .flat_map(|blk| {
                let mut v = blk.to_vec();
                v.push(modulus(blk));
                v
            })
            .map(|d| char::from(b'0' + d))
            .collect();
        (barcode, line)
    }

    #[test]
    fn check_digit_algorithms_agree_with_an_independent_implementation() {
        // Values from a separate implementation of the Febraban rules, used to
        // build the seeded demo lines.
        assert_eq!(mod10(&digits("341910912")), 3);
        assert_eq!(mod10(&digits("3456780000")), 7);
        assert_eq!(mod10(&digits("0000000000")), 0);
        assert_eq!(mod11_bank(&digits("3419165600000159901091234567800000123456789")), 1);
        assert_eq!(mod11_bank(&digits("0019166100000487500000002345678901234567817")), 6);
        // Remainders 0 and 1 give 0 for utility slips (11 * 1 = 11 → remainder 0).
        assert_eq!(mod11_utility(&digits("0")), 0);
        assert_eq!(mod11_utility(&digits("5")), 1);
    }

    #[test]
    fn valid_bank_line_yields_amount_bank_and_due_date() {
        let received = day(2026, 11, 21);
        let (barcode, line) = bank_slip("341", 1000 + 656, 15_990, "1091234567800000123456789");
        let slip = parse(&line, received).unwrap();
        assert_eq!(slip.barcode, barcode);
        assert_eq!(slip.digitable_line, line);
        assert_eq!(slip.amount_cents, Some(15_990));
        assert_eq!(slip.bank_code.as_deref(), Some("341"));
        assert_eq!(slip.due_date, Some(day(2026, 12, 10)));
        // The barcode alone gives the same slip.
        assert_eq!(parse(&barcode, received).unwrap(), slip);
    }

    #[test]
    fn the_seeded_demo_lines_are_valid() {
        let received = day(2026, 11, 21);
        for (text, cents, due) in [
            (samples::LINE_TELECOM, 15_990, day(2026, 12, 10)),
            (samples::LINE_ENERGY, 48_750, day(2026, 12, 15)),
            (samples::LINE_RENT, 1_234_500, day(2026, 11, 30)),
        ] {
            let slip = extract(text, received).unwrap();
            assert_eq!((slip.amount_cents, slip.due_date), (Some(cents), Some(due)), "{text}");
        }
        let broken = extract(samples::LINE_BROKEN, received).unwrap_err();
        assert!(matches!(broken, BoletoError::CheckDigit { digit: Digit::Field(2), .. }), "{broken}");
    }

    #[test]
    fn due_dates_on_both_sides_of_the_factor_restart() {
        // Old cycle: factor 9999 = 2025-02-21, read near that time.
        assert_eq!(due_date(9999, day(2025, 2, 1)).unwrap(), Some(day(2025, 2, 21)));
        // New cycle: factor 1000 = 2025-02-22.
        assert_eq!(due_date(1000, day(2025, 2, 10)).unwrap(), Some(day(2025, 2, 22)));
        // The same factor before the restart names a date in 2000.
        assert_eq!(due_date(1000, day(2000, 6, 1)).unwrap(), Some(day(2000, 7, 3)));
        // Around the restart: a slip issued just before it and read just after keeps its old-cycle date.
        assert_eq!(due_date(9990, day(2025, 2, 25)).unwrap(), Some(day(2025, 2, 12)));
        // And a new-cycle factor read just before the restart moves forward.
        assert_eq!(due_date(1005, day(2025, 2, 20)).unwrap(), Some(day(2025, 2, 27)));
        assert_eq!(due_date(0, day(2025, 1, 1)).unwrap(), None);
        assert_eq!(due_date(999, day(2025, 1, 1)), Err(BoletoError::Factor(999)));
    }

    #[test]
    fn each_wrong_check_digit_is_named() {
        let received = day(2026, 11, 21);
        let (_, line) = bank_slip("001", 1661, 48_750, "0000002345678901234567817");
        for (position, digit) in
            [(9, Digit::Field(1)), (20, Digit::Field(2)), (31, Digit::Field(3)), (32, Digit::General)]
        {
            let mut bad = digits(&line);
            let found = (bad[position] + 1) % 10;
            bad[position] = found;
            match parse(&s(&bad), received) {
                Err(BoletoError::CheckDigit { digit: d, found: f, .. }) => {
                    assert_eq!((d, f), (digit, found), "position {position}");
                }
                other => panic!("position {position}: {other:?}"),
            }
        }
    }

    #[test]
    fn bad_lines_fail_precisely() {
        let received = day(2026, 11, 21);
        let (_, zero) = bank_slip("237", 1646, 0, "3381260000000000000000000");
        assert_eq!(parse(&zero, received), Err(BoletoError::ZeroAmount));
        let (_, early) = bank_slip("237", 500, 100, "3381260000000000000000000");
        assert_eq!(parse(&early, received), Err(BoletoError::Factor(500)));
        let mut dollars = digits(&bank_slip("237", 1646, 100, "3381260000000000000000000").0);
        dollars[3] = 5;
        dollars[4] = mod11_bank(&dollars[..4].iter().chain(&dollars[5..]).copied().collect::<Vec<_>>());
        assert_eq!(parse(&s(&dollars), received), Err(BoletoError::Currency(5)));
        assert_eq!(extract("no numbers here", received), Err(BoletoError::NotFound));
        assert_eq!(extract("341910912 short", received), Err(BoletoError::NotFound));
        // Letters inside a line break it: nothing of the right length remains.
        let (_, line) = bank_slip("341", 1656, 15_990, "1091234567800000123456789");
        let lettered = format!("{}I{}", &line[..12], &line[13..]);
        assert_eq!(extract(&lettered, received), Err(BoletoError::NotFound));
    }

    #[test]
    fn formatted_lines_are_found_in_prose() {
        let received = day(2026, 11, 21);
        let text = format!("Pague até o vencimento.\nLinha: {} R$ 159,90\nObrigado", samples::LINE_TELECOM);
        assert_eq!(extract(&text, received).unwrap().amount_cents, Some(15_990));
        // A trailing number after the line does not hide it.
        let text = format!("{} 12", samples::LINE_TELECOM);
        assert_eq!(extract(&text, received).unwrap().amount_cents, Some(15_990));
    }

    #[test]
    fn the_same_slip_twice_is_one_but_two_slips_are_ambiguous() {
        let received = day(2026, 11, 21);
        let (barcode, line) = bank_slip("341", 1656, 15_990, "1091234567800000123456789");
        assert!(extract(&format!("{line}\n{barcode}"), received).is_ok());
        let two = format!("{}\n{}", samples::LINE_TELECOM, samples::LINE_ENERGY);
        assert_eq!(extract(&two, received), Err(BoletoError::Several(2)));
    }

    #[test]
    fn utility_slips_use_the_modulus_their_value_type_names() {
        let received = day(2026, 11, 21);
        for value_type in [6, 7, 8, 9] {
            let (barcode, line) = utility_slip(value_type, 12_345);
            let slip = parse(&line, received).unwrap_or_else(|e| panic!("type {value_type}: {e}"));
            assert_eq!(slip.family, Family::Utility);
            assert_eq!(slip.barcode, barcode);
            let expected = if matches!(value_type, 6 | 8) { Some(12_345) } else { None };
            assert_eq!(slip.amount_cents, expected);
            assert_eq!(parse(&barcode, received).unwrap().digitable_line, line);
            let mut bad = digits(&line);
            bad[23] = (bad[23] + 1) % 10;
            assert!(matches!(parse(&s(&bad), received), Err(BoletoError::CheckDigit { digit: Digit::Block(2), .. })));
        }
        let (_, zero) = utility_slip(8, 0);
        assert_eq!(parse(&zero, received), Err(BoletoError::ZeroAmount));
        let (_, line) = utility_slip(6, 1);
        let wrong_start = format!("7{}", &line[1..]);
        assert!(matches!(parse(&wrong_start, received), Err(BoletoError::Malformed(_))));
    }

    #[test]
    fn enormous_bodies_are_scanned_within_bounds() {
        let received = day(2026, 11, 21);
        let noise = "1234 5678 ".repeat(300_000);
        let text = format!("{noise}{}", samples::LINE_TELECOM);
        // The line lies beyond the scanned prefix: nothing valid, no panic.
        assert!(extract(&text, received).is_err());
        assert!(candidates(&"9".repeat(5_000_000)).is_empty());
    }

    /// Regression (fuzzing, boleto target): a 47-digit bank line whose bank
    /// code starts with 8 passed its check digits, but its barcode reads as a
    /// utility slip's and cannot be validated back; it is refused now.
    #[test]
    fn a_bank_line_whose_barcode_would_read_as_a_utility_slip_is_refused() {
        let text = "91.234241666 0000.09166 00149 5458 9 7 9 166 0008 600.123457 8 13458 9 1666 080 166 0008 \
                    300.123457 8 0.09.0930 9 0.093457 9 166 000 1660 0000.093458 9000.093457 9 16";
        let received = date(2026, Month::December, 1);
        match extract(text, received) {
            Ok(slip) => {
                assert!(!slip.barcode.starts_with('8'), "{slip:?}");
                assert_eq!(parse(&slip.barcode, received).map(|s| s.barcode), Ok(slip.barcode.clone()));
            }
            Err(error) => assert!(!matches!(error, BoletoError::Several(_)), "{error}"),
        }
        // The same line with its check digits made right is still refused.
        let barcode = "80019000000000012345678901234567890123456789";
        let without: Vec<u8> = digits(&barcode[..4]).into_iter().chain(digits(&barcode[5..])).collect();
        let fixed = format!("{}{}{}", &barcode[..4], mod11_bank(&without), &barcode[5..]);
        let fixed: [u8; 44] = digits(&fixed).try_into().unwrap();
        let line = bank_line(&fixed);
        assert!(matches!(parse(&line, received), Err(BoletoError::Malformed(_))), "{line}");
    }
}
