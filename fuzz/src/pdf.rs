//! The text layer of PDF attachments (`inbox::mail::pdf::text`), over the
//! bytes as a file and, when they are short and not a PDF already, over the
//! bytes as the content stream of a valid one-page PDF, so that the fuzzer
//! reaches the content parser and the text decoder behind the file's
//! structure. Invariants: reading never panics, overflows its stack or
//! hangs (lopdf is behind the module's guard; a hang is libFuzzer's
//! `-timeout`); text read is at most
//! `MAX_TEXT_BYTES` and not only whitespace (that is `NoText`); a refusal is
//! one of the three reasons an e-mail's record names; two reads of the same
//! bytes agree; bytes without `%PDF-` in their first kilobyte are refused as
//! unreadable.

use std::time::Instant;

use inbox::mail::pdf::{MAX_TEXT_BYTES, TIME_BUDGET, Unread, is_pdf, text};

/// The longest input also read as a content stream (a page's content is
/// what the fuzzer mutates there, and short inputs are what it makes).
pub const MAX_CONTENT_BYTES: usize = 32 * 1024;

/// The invariants on one input (panics when one is broken).
pub fn check(data: &[u8]) {
    holds(data);
    if data.len() <= MAX_CONTENT_BYTES && !is_pdf(data) {
        holds(&one_page(data));
    }
}

/// The invariants of one read of `pdf`.
fn holds(pdf: &[u8]) {
    let started = Instant::now();
    let first = text(pdf);
    let took = started.elapsed();
    // Where a reader looks for the header, written out here rather than
    // taken from `is_pdf`: the two must agree.
    let header = pdf.get(..pdf.len().min(1024)).is_some_and(|head| head.windows(5).any(|w| w == b"%PDF-"));
    assert_eq!(is_pdf(pdf), header);
    match &first {
        Ok(text) => {
            assert!(header, "text read from bytes without a PDF header: {text:?}");
            assert!(text.len() <= MAX_TEXT_BYTES, "{} bytes of text", text.len());
            assert!(!text.chars().all(char::is_whitespace), "text of whitespace only: {text:?}");
        }
        Err(unread) => {
            assert!(["pdf_no_text", "pdf_encrypted", "pdf_unreadable"].contains(&unread.reason()), "{unread:?}");
            assert!(header || matches!(unread, Unread::Unreadable(_)), "{unread:?} without a PDF header");
        }
    }
    // A read that stopped at the time budget may read more or less the next
    // time; one well within it must read the same.
    let again = Instant::now();
    let second = text(pdf);
    if took.max(again.elapsed()) < TIME_BUDGET / 2 {
        assert_eq!(first, second, "two reads of the same bytes differ");
    }
}

/// A one-page PDF whose page's content stream is `content` as it is, with
/// a WinAnsi Helvetica as `/F1`; the cross-reference table is exact, so
/// the file opens without repair.
pub fn one_page(content: &[u8]) -> Vec<u8> {
    let mut stream = format!("<< /Length {} >>\nstream\n", content.len()).into_bytes();
    stream.extend_from_slice(content);
    stream.extend_from_slice(b"\nendstream");
    let objects: [&[u8]; 5] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        &stream,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (n, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", n + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    out
}
