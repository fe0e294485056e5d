//! The `Mcp-Name` header codec. Invariants: decoding never panics; what
//! `encode_name` writes is a header value (visible ASCII and inner spaces)
//! that decodes back to the name, exactly.

use inbox::mcp::era::{decode_name, encode_name};

/// The invariants on one input (panics when one is broken).
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = decode_name(text);
    let encoded = encode_name(text);
    assert!(encoded.bytes().all(|b| b == b' ' || b.is_ascii_graphic()), "not a header value: {encoded:?}");
    assert_eq!(decode_name(&encoded).as_deref(), Some(text), "round trip of {text:?} via {encoded:?}");
}
