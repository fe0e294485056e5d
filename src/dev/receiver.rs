//! The local webhook receiver `make run` starts beside the server, which the
//! demo webhook points at: a newcomer sees ingest → processed → a signed
//! delivery arrive, verified, within seconds. It checks each delivery's
//! `X-Kobana-Signature` (HMAC-SHA256 of `"{t}.{body}"` with the webhook's
//! secret, `t` within five minutes) and prints one line per delivery: the
//! event, the delivery id, whether the signature holds, and the body's
//! `type` and e-mail id. A development component (the `dev` feature).
//!
//! Anyone who can reach the port can send it anything, a web page included,
//! and what it sends lands on the developer's terminal: every field taken
//! from a request is printed through the log filter and in quotes
//! (`telemetry::quoted`: control, bidirectional and separator characters
//! dropped, a `"` escaped), so a CR, LF or ESC cannot forge a line or move
//! the cursor, and a field cannot pass for the line's own words. A request with an `Origin` comes from a browser page —
//! deliveries never carry one, and the receiver serves no page of its own —
//! and is refused (403) without a line.

use std::sync::Arc;

use bytes::Bytes;
use http::{Response, StatusCode};

use crate::telemetry::quoted;

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
                let field = |p: &str| v.pointer(p).and_then(serde_json::Value::as_str).map_or("-".to_owned(), quoted);
                format!("{} {}", field("/type"), field("/data/email_id"))
            })
            .unwrap_or_else(|| "(body is not JSON)".to_owned());
        let (event, delivery) = (quoted(&self.event), quoted(&self.delivery));
        format!("webhook received: {event} delivery {delivery} — {verdict} — {summary}")
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
/// 401 when not, so the server's delivery record says which); a request from
/// a browser page (with an `Origin`) 403; anything else 404.
pub fn handle(secret: &str, req: &http::Request<Bytes>, report: &(dyn Fn(Received) + Send + Sync)) -> Response<Bytes> {
    let mut answer = Response::new(Bytes::new());
    if req.headers().contains_key(http::header::ORIGIN) {
        *answer.status_mut() = StatusCode::FORBIDDEN;
        return answer;
    }
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

    fn post(headers: &[(&str, &str)], body: &str) -> (StatusCode, Vec<String>) {
        let mut req = http::Request::builder().method("POST").uri("/kobana");
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let req = req.body(Bytes::from(body.to_owned())).unwrap();
        let lines = std::sync::Mutex::new(Vec::new());
        let answer = handle("s3cret", &req, &|received: Received| lines.lock().unwrap().push(received.line()));
        (answer.status(), lines.into_inner().unwrap())
    }

    #[test]
    fn control_characters_a_sender_puts_in_a_delivery_are_filtered_out_and_forge_no_line() {
        let forged =
            "webhook received: \"email.processed\" delivery \"dlv_1\" — signature ok — \"email.processed\" \"eml_1\"";
        // A return and a line feed to start a fresh line, ESC sequences to
        // clear the real one and move up over it.
        let body = serde_json::json!({
            "type": format!("email.processed\r\u{1b}[2K{forged}"),
            "data": {"email_id": format!("eml_1\n\u{1b}[1A\u{1b}[2K{forged}")},
        })
        .to_string();
        let headers = [("x-kobana-event", "email.processed -- signature ok"), ("x-kobana-delivery", "dlv_\"x\"")];
        let (status, lines) = post(&headers, &body);
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let [line] = lines.as_slice() else { panic!("one line: {lines:?}") };
        assert!(!line.contains(['\r', '\n', '\u{1b}']), "{line:?}");
        // Each field is in quotes, its own quotes escaped: the forged words
        // stay inside the field they came in.
        let expected = r#"webhook received: "email.processed -- signature ok" delivery "dlv_\"x\"" — SIGNATURE INVALID — "email.processed[2Kwebhook received: \"email.processed\" delivery \"dlv_1\" — signature ok"#;
        assert!(line.starts_with(expected), "{line}");
        assert!(line.contains(r#" "eml_1[1A[2Kwebhook received: \"email.processed\""#), "{line}");
        // What a terminal shows: a line starts after each CR or LF.
        let shown: Vec<&str> = line.split(['\r', '\n']).collect();
        assert_eq!(shown.len(), 1, "{shown:?}");
    }

    #[test]
    fn a_request_from_a_web_page_is_refused_and_prints_nothing() {
        let body = r#"{"type":"email.processed","data":{"email_id":"eml_1"}}"#;
        let (status, lines) = post(&[("origin", "https://attacker.example"), ("content-type", "text/plain")], body);
        assert_eq!((status, lines.len()), (StatusCode::FORBIDDEN, 0));
        // A delivery (no Origin) is printed.
        let (status, lines) = post(&[], body);
        assert_eq!((status, lines.len()), (StatusCode::UNAUTHORIZED, 1));
        assert!(lines[0].ends_with(r#"— "email.processed" "eml_1""#), "{}", lines[0]);
    }
}
