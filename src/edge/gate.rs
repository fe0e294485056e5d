//! The HTTP checks a request meets before any protocol sees it: body size
//! (declared or actual), JSON media type, and `Accept`. Both surfaces use
//! them; each words the refusal in its own error shape.

use http::HeaderMap;

/// Largest accepted request body, after Base64 decoding of a gateway event.
pub const MAX_BODY_BYTES: usize = 1_048_576;

/// Whether the body is over the limit, by its `Content-Length` or its size.
pub fn too_large(headers: &HeaderMap, body_len: usize) -> bool {
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) || body_len > MAX_BODY_BYTES
}

/// Whether `Content-Type` names JSON (parameters such as `charset` allowed).
pub fn is_json(headers: &HeaderMap) -> bool {
    let content_type = headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    content_type.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json")
}

/// Whether the client takes JSON answers: no `Accept`, or one that admits it.
pub fn accepts_json(headers: &HeaderMap) -> bool {
    !headers.contains_key(http::header::ACCEPT)
        || headers.get_all(http::header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).any(admits_json)
}

/// Whether one `Accept` header value admits `application/json`.
fn admits_json(value: &str) -> bool {
    value.split(',').any(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim();
        let refused = parts.any(|p| {
            let p = p.trim();
            p.strip_prefix("q=")
                .or_else(|| p.strip_prefix("Q="))
                .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
        });
        !refused && ["application/json", "application/*", "*/*"].iter().any(|m| media.eq_ignore_ascii_case(m))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_header_rules() {
        assert!(admits_json("application/json, text/event-stream"));
        assert!(admits_json("text/event-stream, application/*"));
        assert!(admits_json("*/*"));
        assert!(admits_json("Application/JSON;q=0.5"));
        assert!(!admits_json("text/event-stream"));
        assert!(!admits_json("application/json;q=0"));
        assert!(!admits_json("text/html"));
    }
}
