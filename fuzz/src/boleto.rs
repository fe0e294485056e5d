//! The boleto extractor over any text. Invariants: a slip it accepts
//! validates again from its digitable line and from its barcode alone (check
//! digits), and both give the same barcode, amount and due date.

use inbox::domain::boleto::{extract, parse};
use time::macros::date;

/// The invariants on one input (panics when one is broken).
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let received = date!(2026 - 12 - 01);
    let Ok(slip) = extract(text, received) else { return };
    assert_eq!(slip.barcode.len(), 44, "{slip:?}");
    if !slip.digitable_line.is_empty() {
        let again = parse(&slip.digitable_line, received).expect("the line validates again");
        assert_eq!(again.barcode, slip.barcode);
    }
    let from_barcode = parse(&slip.barcode, received).expect("the barcode validates alone");
    assert_eq!(from_barcode.barcode, slip.barcode);
    assert_eq!(from_barcode.amount_cents, slip.amount_cents);
    assert_eq!(from_barcode.due_date, slip.due_date);
}
