//! The local webhook receiver `make run` starts beside the server, which the
//! demo webhook points at: a newcomer sees ingest → processed → a signed
//! delivery arrive, verified, within seconds. It checks each delivery's
//! `X-Kobana-Signature` (HMAC-SHA256 of `"{t}.{body}"` with the webhook's
//! secret, `t` within five minutes) and prints one line per delivery: the
//! event, the delivery id, whether the signature holds, and the body's
//! `type` and subject. A development component (the `dev` feature).

use std::sync::Arc;

use bytes::Bytes;
use http::{Response, StatusCode};

/// How far a delivery's timestamp may be from now, either way.
const TOLERANCE_SECS: u64 = 300;

/// What the receiver made of one delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub event: String,
    pub delivery: String,
    /// The signature matched the secret and the timestamp is recent.
    pub verified: bool,
    pub body: String,
}

impl Received {
    /// The line printed for it.
    pub fn line(&self) -> String {
        let verdict = if self.verified { "signature ok" } else { "SIGNATURE INVALID" };
        let summary = serde_json::from_str::<serde_json::Value>(&self.body)
            .ok()
            .map(|v| {
                let field = |p: &str| v.pointer(p).and_then(serde_json::Value::as_str).unwrap_or("-").to_owned();
                format!("{} {}", field("/type"), field("/data/email_id"))
            })
            .unwrap_or_else(|| "(body is not JSON)".to_owned());
        format!("webhook received: {} delivery {} — {verdict} — {summary}", self.event, self.delivery)
    }
}

/// Whether `header` (`t=<unix>,v1=<hex>`) signs `body` with `secret` at a
/// time within the tolerance of `now`.
pub fn verify(secret: &str, header: &str, body: &str, now: u64) -> bool {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<u64>().ok(),
            Some(("v1", v)) => signatures.push(v),
            _ => {}
        }
    }
    let Some(t) = timestamp.filter(|t| t.abs_diff(now) <= TOLERANCE_SECS) else { return false };
    let expected = crate::outbound::signature(secret, t, body);
    let expected = expected.rsplit_once("v1=").map_or("", |(_, hex)| hex).to_owned();
    // Constant-time: the comparison of what an attacker sends with the real tag.
    signatures
        .iter()
        .any(|given| aws_lc_rs::constant_time::verify_slices_are_equal(given.as_bytes(), expected.as_bytes()).is_ok())
}

/// Handles one request: a POST is a delivery (answered 204 when verified,
/// 401 when not, so the server's delivery record says which); anything else 404.
pub fn handle(secret: &str, req: &http::Request<Bytes>, report: &(dyn Fn(Received) + Send + Sync)) -> Response<Bytes> {
    let mut answer = Response::new(Bytes::new());
    if req.method() != http::Method::POST {
        *answer.status_mut() = StatusCode::NOT_FOUND;
        return answer;
    }
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let body = String::from_utf8_lossy(req.body()).into_owned();
    let verified = verify(secret, &header("x-kobana-signature"), &body, crate::sys::unix_now());
    report(Received { event: header("x-kobana-event"), delivery: header("x-kobana-delivery"), verified, body });
    *answer.status_mut() = if verified { StatusCode::NO_CONTENT } else { StatusCode::UNAUTHORIZED };
    answer
}

/// A handler for `edge::local::serve_fn` that prints each delivery.
pub fn printing(secret: String) -> Arc<dyn Fn(http::Request<Bytes>) -> Response<Bytes> + Send + Sync> {
    Arc::new(move |req| handle(&secret, &req, &|received: Received| println!("{}", received.line())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_holds_for_its_secret_body_and_a_recent_time_only() {
        let header = crate::outbound::signature("s3cret", 1_000_000, "{}");
        assert!(verify("s3cret", &header, "{}", 1_000_100));
        assert!(!verify("other", &header, "{}", 1_000_100));
        assert!(!verify("s3cret", &header, "{ }", 1_000_100));
        assert!(!verify("s3cret", &header, "{}", 1_000_000 + TOLERANCE_SECS + 1));
        assert!(!verify("s3cret", "v1=00", "{}", 1_000_000));
    }
}
