//! Brazilian personal identifiers named in third-party text: the CPF of a
//! person and the CNPJ of a company. A data-subject request under the LGPD
//! ("every e-mail that names CPF 123.456.789-09") finds e-mails by them, so
//! they are read from what a person types (`Identifier::parse`) and from the
//! e-mails themselves (`find_all`).
//!
//! Check digits:
//! - **CPF**, 11 digits: modulo 11 with weights 10..2 for the first check
//!   digit and 11..2 for the second; a remainder below 2 gives 0, any other
//!   gives 11 minus the remainder. A CPF of one repeated digit
//!   (000.000.000-00 …) has valid check digits but is never issued.
//! - **CNPJ**, 14 characters: 12 digits or uppercase letters (the alphanumeric
//!   CNPJ issued from 2026) and two check digits. The Receita Federal's rule
//!   gives each character the value of its ASCII code minus 48 ('0'..'9' are
//!   0..9, 'A' is 17, 'Z' is 42), so a numeric CNPJ is checked exactly as
//!   before; weights 5,4,3,2,9,8,7,6,5,4,3,2 and 6,5,4,3,2,9,8,7,6,5,4,3,2,
//!   remainders as for the CPF. A CNPJ of one repeated digit is refused too.
//!
//! `parse` is lenient, being what a person typed: surrounding and inner
//! spaces and the punctuation `.`, `/` and `-` are dropped wherever they
//! stand, and letters may be lowercase.
//!
//! `find_all` is strict, because bills are full of digit runs (the boleto's
//! 47- or 48-digit line, the 44-digit barcode, Pix payloads, phone numbers,
//! amounts) and a run of 11 or 14 digits passes a check by chance once in a
//! hundred:
//! - A token is a maximal run of ASCII letters, digits, `.`, `/` and `-`;
//!   anything else ends it (spaces, `:`, `,`, `@`, parentheses, any non-ASCII
//!   character). Trailing `.`, `/` and `-` are sentence punctuation and are
//!   dropped; leading ones are kept, and then the token matches nothing.
//! - A token counts only when it is, whole, one of these shapes and its check
//!   digits are valid: a CPF `ddd.ddd.ddd-dd` or 11 digits; a CNPJ
//!   `XX.XXX.XXX/XXXX-dd` or 14 characters, where X is a digit or an
//!   uppercase letter and d a digit. So no identifier is found inside a
//!   longer run, and a label glued to the number (`CPF:` is fine,
//!   `CPF52998224725` is not) hides it.
//! - The bare 14-character form with letters also needs at least 6 digits,
//!   so that an uppercase word ending in two digits is not taken for a CNPJ.
//!   Lowercase letters are never CNPJ characters in text.
//! - A number written with spaces inside (`529 982 247 25`) is several
//!   tokens and is not found.
//! - The last field of a formatted bank digitable line
//!   (`23793.38128 60000.000004 00000.000000 5 16460001234500`) is 14 bare
//!   digits: it is not taken for a CNPJ when the two tokens before it are the
//!   line's third field (`ddddd.dddddd`) and its one-digit general check
//!   digit. Other bare runs of exactly 11 or 14 digits standing alone (an
//!   11-digit mobile number without punctuation, a utility line's blocks
//!   separated by spaces) are found when their check digits happen to be
//!   valid: missing an e-mail that names a person costs more than listing
//!   one that merely carries the same digits.
//!
//! `find_all` reads the text once, keeps no more than the two previous
//! tokens, and allocates only for the identifiers it returns: its time is
//! linear in the text's length, whatever the text holds.

use std::collections::HashSet;
use std::fmt;

/// A CPF (11 digits) or a CNPJ (14 characters: 12 digits or uppercase letters
/// and 2 check digits, the alphanumeric CNPJ of 2026 included), in canonical
/// form: digits and uppercase letters only, no punctuation.
///
/// There is deliberately no `Display`: logs and answers that must not repeat
/// the number use `masked`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Identifier {
    Cpf(String),
    Cnpj(String),
}

impl Identifier {
    /// Parses what a person types: `123.456.789-09`, `12345678909`,
    /// `12.345.678/0001-95`, `12345678000195`, `12.ABC.345/01DE-35`, with
    /// lowercase letters and surrounding spaces too. The punctuation `.`, `/`,
    /// `-` and inner spaces are dropped wherever they stand. The error says
    /// which rule failed.
    pub fn parse(input: &str) -> Result<Identifier, IdentifierError> {
        let mut canon = Canon::default();
        for c in input.trim().chars() {
            match c {
                '.' | '/' | '-' => {}
                c if c.is_whitespace() => {}
                c if c.is_ascii_alphanumeric() => {
                    let pushed = u8::try_from(c.to_ascii_uppercase()).is_ok_and(|b| canon.push(b));
                    if !pushed {
                        return Err(IdentifierError::Shape);
                    }
                }
                _ => return Err(IdentifierError::Shape),
            }
        }
        classify(canon.as_slice()).map(|kind| kind.identifier(&canon))
    }

    /// The canonical form: "12345678909", "12ABC34501DE35".
    pub fn canonical(&self) -> &str {
        match self {
            Identifier::Cpf(s) | Identifier::Cnpj(s) => s,
        }
    }

    /// "cpf" or "cnpj".
    pub fn kind(&self) -> &'static str {
        match self {
            Identifier::Cpf(_) => "cpf",
            Identifier::Cnpj(_) => "cnpj",
        }
    }

    /// For logs and answers that must not repeat the number: the kind and the
    /// last two characters, "cpf ***.***.***-09", "cnpj **.***.***/****-35".
    pub fn masked(&self) -> String {
        let s = self.canonical();
        // The variants are public, so the string may be anything: a short or
        // non-ASCII one yields an empty tail rather than a panic.
        let tail = s.get(s.len().saturating_sub(2)..).unwrap_or_default();
        match self {
            Identifier::Cpf(_) => format!("cpf ***.***.***-{tail}"),
            Identifier::Cnpj(_) => format!("cnpj **.***.***/****-{tail}"),
        }
    }
}

/// Why a typed identifier was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentifierError {
    /// Not 11 or 14 characters once punctuation is dropped, characters other
    /// than digits, letters and the punctuation, letters in a CPF, or letters
    /// in a CNPJ's two check digits.
    Shape,
    /// A CPF or CNPJ of one repeated digit (000.000.000-00 …): valid check
    /// digits, never issued.
    Repeated,
    /// The check digits do not match.
    CheckDigits,
}

impl fmt::Display for IdentifierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IdentifierError::Shape => {
                "must be a CPF (11 digits) or a CNPJ (12 letters or digits and 2 check digits), punctuation allowed"
            }
            IdentifierError::Repeated => "a CPF or CNPJ of one repeated digit is never issued",
            IdentifierError::CheckDigits => "the check digits do not match",
        })
    }
}

impl std::error::Error for IdentifierError {}

/// Every CPF and CNPJ named in `text`, in order of first appearance, each
/// once. Only whole tokens of the shapes the module documentation lists, with
/// valid check digits, count.
pub fn find_all(text: &str) -> Vec<Identifier> {
    let mut found = Vec::new();
    let mut seen: HashSet<Canon> = HashSet::new();
    let mut before: &[u8] = &[];
    let mut last: &[u8] = &[];
    for raw in text.as_bytes().split(|b| !is_token_byte(*b)) {
        let token = trim_trailing_punctuation(raw);
        if token.is_empty() {
            continue;
        }
        if !ends_bank_line(before, last, token)
            && let Some(canon) = candidate(token)
            && let Ok(kind) = classify(canon.as_slice())
            && seen.insert(canon)
        {
            found.push(kind.identifier(&canon));
        }
        before = last;
        last = token;
    }
    found
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Cpf,
    Cnpj,
}

impl Kind {
    fn identifier(self, canon: &Canon) -> Identifier {
        let s: String = canon.as_slice().iter().copied().map(char::from).collect();
        match self {
            Kind::Cpf => Identifier::Cpf(s),
            Kind::Cnpj => Identifier::Cnpj(s),
        }
    }
}

/// Up to 14 canonical characters, on the stack: `parse` and `find_all` build
/// one per candidate without allocating, and it is `find_all`'s key for
/// reporting each identifier once (the unused tail stays zero, and a CPF and
/// a CNPJ differ in length, so equal keys are equal identifiers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Canon {
    bytes: [u8; 14],
    len: usize,
}

impl Canon {
    /// False when the 14 places are taken.
    fn push(&mut self, b: u8) -> bool {
        let Some(slot) = self.bytes.get_mut(self.len) else { return false };
        *slot = b;
        self.len += 1;
        true
    }

    fn as_slice(&self) -> &[u8] {
        // `push` never lets `len` pass 14.
        self.bytes.get(..self.len).unwrap_or_default()
    }
}

/// What a canonical string is, or which rule it breaks.
fn classify(canon: &[u8]) -> Result<Kind, IdentifierError> {
    let repeated = canon.split_first().is_some_and(|(first, rest)| rest.iter().all(|b| b == first));
    match canon.len() {
        11 => {
            if !canon.iter().all(u8::is_ascii_digit) {
                return Err(IdentifierError::Shape);
            }
            if repeated {
                return Err(IdentifierError::Repeated);
            }
            if !cpf_check(canon) {
                return Err(IdentifierError::CheckDigits);
            }
            Ok(Kind::Cpf)
        }
        14 => {
            // 14 characters always split at 12.
            let (body, check) = canon.split_at_checked(12).unwrap_or_default();
            if !body.iter().all(|b| is_cnpj_char(*b)) || !check.iter().all(u8::is_ascii_digit) {
                return Err(IdentifierError::Shape);
            }
            // The check digits are digits, so one repeated character is a digit.
            if repeated {
                return Err(IdentifierError::Repeated);
            }
            if !cnpj_check(canon) {
                return Err(IdentifierError::CheckDigits);
            }
            Ok(Kind::Cnpj)
        }
        _ => Err(IdentifierError::Shape),
    }
}

/// A character's value in the check-digit sums: its ASCII code minus 48, the
/// Receita Federal's table for the alphanumeric CNPJ, which is also a
/// digit's value. Only digits and uppercase letters reach here (all above
/// 48); saturating keeps any other byte from overflowing.
fn value(b: u8) -> u32 {
    u32::from(b).saturating_sub(48)
}

/// Modulo 11 over weighted values: a remainder below 2 gives 0, any other
/// 11 minus the remainder.
fn mod11<'a>(chars: impl Iterator<Item = &'a u8>, weights: impl Iterator<Item = u32>) -> u32 {
    let sum: u32 = chars.zip(weights).map(|(b, w)| value(*b) * w).sum();
    match sum % 11 {
        0 | 1 => 0,
        r => 11 - r,
    }
}

fn cpf_check(canon: &[u8]) -> bool {
    let [body @ .., d1, d2] = canon else { return false };
    let first = mod11(body.iter(), (2..=10).rev());
    let second = mod11(body.iter().chain([d1]), (2..=11).rev());
    first == value(*d1) && second == value(*d2)
}

/// The two check digits of a CNPJ's first 12 characters.
fn cnpj_check_digits(body: &[u8]) -> (u32, u32) {
    const FIRST: [u32; 12] = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
    const SECOND: [u32; 13] = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
    let first = mod11(body.iter(), FIRST.into_iter());
    // `first` is 0 to 9, a digit.
    let first_char = u8::try_from(first).map_or(b'0', |d| b'0' + d);
    let second = mod11(body.iter().chain([&first_char]), SECOND.into_iter());
    (first, second)
}

fn cnpj_check(canon: &[u8]) -> bool {
    let [body @ .., d1, d2] = canon else { return false };
    cnpj_check_digits(body) == (value(*d1), value(*d2))
}

fn is_cnpj_char(b: u8) -> bool {
    b.is_ascii_digit() || b.is_ascii_uppercase()
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'/' | b'-')
}

fn trim_trailing_punctuation(mut token: &[u8]) -> &[u8] {
    while let [rest @ .., b'.' | b'/' | b'-'] = token {
        token = rest;
    }
    token
}

/// `token` has exactly `pattern`'s shape: `d` a digit, `X` a digit or an
/// uppercase letter, anything else itself.
fn has_shape(token: &[u8], pattern: &[u8]) -> bool {
    token.len() == pattern.len()
        && token.iter().zip(pattern).all(|(b, p)| match p {
            b'd' => b.is_ascii_digit(),
            b'X' => is_cnpj_char(*b),
            p => b == p,
        })
}

/// A token of one of the shapes `find_all` accepts, as canonical characters;
/// `classify` then checks it.
fn candidate(token: &[u8]) -> Option<Canon> {
    let accepted = match token.len() {
        11 => token.iter().all(u8::is_ascii_digit),
        14 if token.contains(&b'.') => has_shape(token, b"ddd.ddd.ddd-dd"),
        14 => {
            let digits = token.iter().filter(|b| b.is_ascii_digit()).count();
            let letters = token.iter().filter(|b| b.is_ascii_uppercase()).count();
            digits + letters == 14 && (letters == 0 || digits >= 6)
        }
        18 => has_shape(token, b"XX.XXX.XXX/XXXX-dd"),
        _ => false,
    };
    if !accepted {
        return None;
    }
    let mut canon = Canon::default();
    for b in token.iter().filter(|b| b.is_ascii_alphanumeric()) {
        if !canon.push(*b) {
            return None;
        }
    }
    Some(canon)
}

/// `token` is the last field of a formatted bank digitable line: 14 digits
/// after the third field (`ddddd.dddddd`) and the one-digit general check
/// digit.
fn ends_bank_line(before: &[u8], last: &[u8], token: &[u8]) -> bool {
    token.len() == 14
        && token.iter().all(u8::is_ascii_digit)
        && matches!(last, [d] if d.is_ascii_digit())
        && has_shape(before, b"ddddd.dddddd")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpf(s: &str) -> Identifier {
        Identifier::Cpf(s.to_owned())
    }

    fn cnpj(s: &str) -> Identifier {
        Identifier::Cnpj(s.to_owned())
    }

    #[test]
    fn parses_valid_cpfs_from_every_formatting() {
        for input in ["529.982.247-25", "52998224725", "  529.982.247-25\n", "529 982 247 25", "529982247-25"] {
            assert_eq!(Identifier::parse(input), Ok(cpf("52998224725")), "{input:?}");
        }
        assert_eq!(Identifier::parse("123.456.789-09"), Ok(cpf("12345678909")));
        assert_eq!(Identifier::parse("\u{a0}123\u{a0}456\u{a0}789\u{a0}09 "), Ok(cpf("12345678909")));
    }

    #[test]
    fn parses_valid_numeric_cnpjs_from_every_formatting() {
        for input in ["11.222.333/0001-81", "11222333000181", " 11 222 333 0001 81 "] {
            assert_eq!(Identifier::parse(input), Ok(cnpj("11222333000181")), "{input:?}");
        }
        assert_eq!(Identifier::parse("12.345.678/0001-95"), Ok(cnpj("12345678000195")));
        assert_eq!(Identifier::parse("12345678000195"), Ok(cnpj("12345678000195")));
    }

    #[test]
    fn parses_the_alphanumeric_cnpj_in_any_case() {
        for input in
            ["12.ABC.345/01DE-35", "12ABC34501DE35", "12.abc.345/01de-35", "12abc34501de35", " 12.AbC.345/01dE-35 "]
        {
            assert_eq!(Identifier::parse(input), Ok(cnpj("12ABC34501DE35")), "{input:?}");
        }
    }

    #[test]
    fn alphanumeric_check_digits_follow_the_receita_table() {
        assert_eq!(value(b'0'), 0);
        assert_eq!(value(b'9'), 9);
        assert_eq!(value(b'A'), 17);
        assert_eq!(value(b'B'), 18);
        assert_eq!(value(b'Z'), 42);
        // The Receita Federal's published example, 12.ABC.345/01DE-35.
        assert_eq!(cnpj_check_digits(b"12ABC34501DE"), (3, 5));
        // And a numeric one computed the same way as always.
        assert_eq!(cnpj_check_digits(b"112223330001"), (8, 1));
    }

    #[test]
    fn refuses_wrong_check_digits() {
        for input in [
            "529.982.247-24",
            "529.982.247-15",
            "52998224752",
            "11.222.333/0001-82",
            "11.222.333/0001-91",
            "12.ABC.345/01DE-36",
            "12.ABC.345/01DF-35",
            "12ABC34501DE53",
        ] {
            assert_eq!(Identifier::parse(input), Err(IdentifierError::CheckDigits), "{input:?}");
        }
    }

    #[test]
    fn refuses_repeated_digits() {
        for d in '0'..='9' {
            let cpf: String = std::iter::repeat_n(d, 11).collect();
            assert_eq!(Identifier::parse(&cpf), Err(IdentifierError::Repeated), "{cpf}");
            let cnpj: String = std::iter::repeat_n(d, 14).collect();
            assert_eq!(Identifier::parse(&cnpj), Err(IdentifierError::Repeated), "{cnpj}");
        }
        assert_eq!(Identifier::parse("000.000.000-00"), Err(IdentifierError::Repeated));
        assert_eq!(Identifier::parse("00.000.000/0000-00"), Err(IdentifierError::Repeated));
    }

    #[test]
    fn refuses_bad_shapes() {
        for input in [
            "",
            "   ",
            "5299822472",
            "529982247251",
            "112223330001811",
            "5299822472A",
            "529.982.247-2X",
            "12.ABC.345/01DE-3A",
            "12ABC34501DEAB",
            "529,982,247-25",
            "529_982_247_25",
            "529.982.247-25 and more",
            "５２９.９８２.２４７-２５",
        ] {
            assert_eq!(Identifier::parse(input), Err(IdentifierError::Shape), "{input:?}");
        }
        let long = "1".repeat(100_000);
        assert_eq!(Identifier::parse(&long), Err(IdentifierError::Shape));
    }

    #[test]
    fn canonical_kind_and_masked() {
        let p = Identifier::parse("529.982.247-25").unwrap();
        assert_eq!((p.canonical(), p.kind(), p.masked().as_str()), ("52998224725", "cpf", "cpf ***.***.***-25"));
        let c = Identifier::parse("12.abc.345/01de-35").unwrap();
        assert_eq!(
            (c.canonical(), c.kind(), c.masked().as_str()),
            ("12ABC34501DE35", "cnpj", "cnpj **.***.***/****-35")
        );
        // Hand-built values never make `masked` panic.
        assert_eq!(cpf("").masked(), "cpf ***.***.***-");
        assert_eq!(cnpj("日").masked(), "cnpj **.***.***/****-");
    }

    #[test]
    fn error_texts_name_the_rule() {
        assert!(IdentifierError::Shape.to_string().contains("CPF (11 digits)"));
        assert!(IdentifierError::Repeated.to_string().contains("repeated digit"));
        assert_eq!(IdentifierError::CheckDigits.to_string(), "the check digits do not match");
    }

    #[test]
    fn finds_a_formatted_cpf_in_a_sentence() {
        assert_eq!(find_all("O titular, portador do CPF 529.982.247-25, pede a exclusão."), vec![cpf("52998224725")]);
    }

    #[test]
    fn finds_a_bare_cnpj_after_its_label() {
        assert_eq!(find_all("Empresa ACME LTDA\nCNPJ:11222333000181\nEndereço"), vec![cnpj("11222333000181")]);
        assert_eq!(find_all("CNPJ: 11222333000181"), vec![cnpj("11222333000181")]);
    }

    #[test]
    fn finds_an_alphanumeric_cnpj() {
        assert_eq!(find_all("Fornecedor (CNPJ 12.ABC.345/01DE-35) emitiu"), vec![cnpj("12ABC34501DE35")]);
        assert_eq!(find_all("CNPJ 12ABC34501DE35 emitiu"), vec![cnpj("12ABC34501DE35")]);
    }

    #[test]
    fn reports_each_once_in_order_of_first_appearance() {
        let text = "CNPJ 11.222.333/0001-81, CPF 529.982.247-25; de novo 52998224725 e 11222333000181.";
        assert_eq!(find_all(text), vec![cnpj("11222333000181"), cpf("52998224725")]);
    }

    #[test]
    fn finds_at_the_very_start_and_end_and_before_a_period() {
        assert_eq!(find_all("529.982.247-25"), vec![cpf("52998224725")]);
        assert_eq!(find_all("529.982.247-25 is the first"), vec![cpf("52998224725")]);
        assert_eq!(find_all("the last is 11.222.333/0001-81"), vec![cnpj("11222333000181")]);
        assert_eq!(find_all("O CPF é 52998224725."), vec![cpf("52998224725")]);
        assert_eq!(find_all("O CNPJ é 12.ABC.345/01DE-35..."), vec![cnpj("12ABC34501DE35")]);
        assert_eq!(find_all("nº52998224725"), vec![cpf("52998224725")]);
    }

    #[test]
    fn refuses_invalid_and_repeated_tokens() {
        assert!(find_all("CPF 529.982.247-24 e 000.000.000-00 e 00000000000000").is_empty());
    }

    #[test]
    fn finds_nothing_in_digitable_lines_and_barcodes() {
        let lines = [
            "23793.38128 60000.000004 00000.000000 5 16460001234500",
            "34191.09123 34567.800007 01234.567897 1 16560000015990",
            "00190.00009 02345.678904 12345.678176 6 16610000048750",
        ];
        for line in lines {
            assert!(find_all(&format!("Linha digitável: {line}")).is_empty(), "{line}");
            let bare: String = line.chars().filter(char::is_ascii_digit).collect();
            assert_eq!(bare.len(), 47);
            assert!(find_all(&format!("Linha digitável: {bare}.")).is_empty(), "{bare}");
        }
        let barcode = "34191165600000159901091234567800000123456789";
        assert_eq!(barcode.len(), 44);
        assert!(find_all(&format!("Código de barras {barcode}")).is_empty());
        let utility = "83620000000-5 67890001010-1 12345678901-2 34567890123-4";
        assert!(find_all(utility).is_empty());
    }

    #[test]
    fn a_bank_lines_last_field_is_not_a_cnpj_even_when_its_digits_check() {
        // 11222333000181 is a valid CNPJ: alone it is found, as a line's last field it is not.
        assert_eq!(find_all("1 11222333000181"), vec![cnpj("11222333000181")]);
        assert_eq!(find_all("00000.000000 11222333000181"), vec![cnpj("11222333000181")]);
        assert!(find_all("23793.38128 60000.000004 00000.000000 5 11222333000181").is_empty());
        assert!(find_all("23793.38128\n60000.000004\n00000.000000\n5\n11222333000181\n").is_empty());
    }

    #[test]
    fn finds_nothing_inside_a_longer_digit_run() {
        // 52998224725 is valid on its own…
        assert_eq!(find_all("52998224725"), vec![cpf("52998224725")]);
        // …and not inside a 20-digit run, a longer dotted number, or glued to letters.
        for text in [
            "123452998224725678",
            "12345529982247256789",
            "00000000052998224725",
            "52998224725123456789",
            "1.529.982.247-25",
            "529.982.247-25.1",
            "529.982.247-25/0001",
            "CPF52998224725",
            "x11222333000181",
            "12.ABC.345/01DE-35X",
            "-52998224725",
        ] {
            assert!(find_all(text).is_empty(), "{text:?}");
        }
    }

    #[test]
    fn finds_nothing_in_phones_amounts_lowercase_words_or_spaced_numbers() {
        assert!(find_all("Ligue +55 11 98765-4321 ou (11) 3333-4444").is_empty());
        assert!(find_all("Total: R$ 1.234.567,89 (R$ 52.998.224,72)").is_empty());
        // The alphanumeric example in lowercase: what `parse` accepts, text does not name.
        assert!(Identifier::parse("12abc34501de35").is_ok());
        assert!(find_all("token 12abc34501de35 e 12.abc.345/01de-35").is_empty());
        // An uppercase word with fewer than 6 digits is not a bare CNPJ.
        assert!(find_all("REFERENCIA2024").is_empty());
        assert!(find_all("CPF 529 982 247 25").is_empty());
    }

    /// `body` followed by the check digits the CNPJ rule computes for it,
    /// whatever its characters.
    fn with_check_digits(body: &str) -> String {
        let (first, second) = cnpj_check_digits(body.as_bytes());
        format!("{body}{first}{second}")
    }

    #[test]
    fn an_uppercase_word_needs_six_digits_to_be_a_bare_cnpj() {
        let word = with_check_digits("PROTOCOLOABC");
        assert_eq!(Identifier::parse(&word), Ok(cnpj(&word)));
        assert!(find_all(&format!("ver {word} anexo")).is_empty());
        // Formatted, the punctuation is evidence enough.
        let formatted = format!("PR.OTO.COL/OABC-{}", word.get(12..).unwrap());
        assert_eq!(find_all(&format!("CNPJ {formatted}")), vec![cnpj(&word)]);
        // Six digits make a bare one count.
        let six = with_check_digits("AB1234CDEFGH");
        assert_eq!(find_all(&format!("CNPJ {six}")), vec![cnpj(&six)]);
    }

    #[test]
    fn lowercase_text_is_never_a_cnpj_even_when_its_codes_would_check() {
        // Check digits computed over the lowercase letters' own codes, so
        // only the rule against lowercase keeps these out.
        let bare = with_check_digits("12abc34501de");
        let tail = bare.get(12..).unwrap();
        assert!(find_all(&format!("{bare} e 12.abc.345/01de-{tail}")).is_empty());
    }

    #[test]
    fn hostile_text_is_read_in_one_pass() {
        let digits = "7".repeat(256 * 1024);
        assert!(find_all(&digits).is_empty());
        let punctuation = ".-/".repeat(90_000);
        assert!(find_all(&punctuation).is_empty());
        let same = "529.982.247-25 ".repeat(17_000);
        assert_eq!(find_all(&same), vec![cpf("52998224725")]);
    }

    /// A CPF with valid check digits from 9 body digits.
    fn valid_cpf(body: u32) -> String {
        let mut digits: Vec<u8> = format!("{body:09}").into_bytes();
        let first = mod11(digits.iter(), (2..=10).rev());
        digits.push(b'0' + u8::try_from(first).unwrap());
        let second = mod11(digits.iter(), (2..=11).rev());
        digits.push(b'0' + u8::try_from(second).unwrap());
        String::from_utf8(digits).unwrap()
    }

    #[test]
    fn many_distinct_identifiers_are_all_found() {
        let cpfs: Vec<String> = (100_000_000..100_020_000).map(valid_cpf).collect();
        let text = cpfs.join(" ");
        let found = find_all(&text);
        let expected: Vec<Identifier> = cpfs.iter().map(|s| cpf(s)).collect();
        assert_eq!(found, expected);
    }

    /// xorshift64: deterministic, so a failure is reproducible.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % n as u64).unwrap()
        }
    }

    #[test]
    fn never_panics_and_every_result_reparses_to_itself() {
        const PIECES: [&str; 24] = [
            "0",
            "1",
            "5",
            "9",
            "A",
            "Z",
            "a",
            "z",
            ".",
            "/",
            "-",
            " ",
            ":",
            ",",
            "\n",
            "ç",
            "º",
            "R$",
            "529.982.247-25",
            "52998224725",
            "11.222.333/0001-81",
            "12ABC34501DE35",
            "12.ABC.345/01DE-35",
            "1 ",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut total = 0;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..rng.below(40) {
                text.push_str(PIECES[rng.below(PIECES.len())]);
            }
            let found = find_all(&text);
            for id in &found {
                assert_eq!(Identifier::parse(id.canonical()).as_ref(), Ok(id), "{text:?}");
            }
            let unique: HashSet<&Identifier> = found.iter().collect();
            assert_eq!(unique.len(), found.len(), "{text:?}");
            total += found.len();
        }
        // The property is exercised on real finds, not only on empty results.
        assert!(total > 1_000, "{total}");
    }
}
