//! The HTTP checks a request meets before any protocol sees it: whom it is
//! addressed to (`Host`) and who sends it (`Origin`), body size (declared or
//! actual), JSON media type, and `Accept`. The product's edge and the
//! development servers (`dev`: the authorization server `make run` starts)
//! apply the same rules, so they live here, below both; each words the
//! refusal in its own error shape.

use http::{HeaderMap, Uri};

/// The `Host` values of a server listening on loopback `port`: each loopback
/// name with the port (lowercase, as `Host` headers are compared).
pub fn loopback_hosts(port: u16) -> Vec<String> {
    ["127.0.0.1", "localhost", "[::1]"].iter().map(|h| format!("{h}:{port}")).collect()
}

/// The `Origin` values of pages served by a server on loopback `port`.
pub fn loopback_origins(port: u16) -> Vec<String> {
    ["127.0.0.1", "localhost"].iter().map(|h| format!("http://{h}:{port}")).collect()
}

/// Who may call a server: the `Host` values it answers to (DNS-rebinding
/// protection: a name an attacker controls that resolves to this machine is
/// not one of them) and the browser `Origin`s it accepts (a request from a
/// page elsewhere is refused, whatever it asks).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    hosts: Vec<String>,
    origins: Vec<String>,
}

/// Why a request is refused before anything reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// An `Origin` that is not allowed.
    Origin,
    /// A `Host` (or, without one, a URI authority) that does not name the server.
    Host,
}

impl Refusal {
    /// The error code both servers answer with.
    pub fn code(self) -> &'static str {
        match self {
            Refusal::Origin => "origin_not_allowed",
            Refusal::Host => "host_not_allowed",
        }
    }

    pub fn message(self) -> &'static str {
        match self {
            Refusal::Origin => "The Origin of this request is not allowed",
            Refusal::Host => "The Host of this request does not name this server",
        }
    }
}

impl Allowlist {
    /// Exact `Host` values (compared lowercase) and exact `Origin` values.
    pub fn new(hosts: impl IntoIterator<Item = String>, origins: impl IntoIterator<Item = String>) -> Self {
        let mut hosts: Vec<String> = hosts.into_iter().map(|h| h.to_ascii_lowercase()).collect();
        let mut origins: Vec<String> = origins.into_iter().collect();
        hosts.sort();
        hosts.dedup();
        origins.sort();
        origins.dedup();
        Allowlist { hosts, origins }
    }

    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// Whether the request may go on: an `Origin`, when present, is one of
    /// the allowed; the `Host` header (or, failing that, the URI authority)
    /// is one of the server's names. The `Origin` is checked first.
    pub fn check(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Refusal> {
        if let Some(origin) = headers.get(http::header::ORIGIN)
            && !origin.to_str().is_ok_and(|o| self.origins.iter().any(|a| a == o))
        {
            return Err(Refusal::Origin);
        }
        let host = match headers.get(http::header::HOST) {
            Some(value) => value.to_str().ok().map(str::to_ascii_lowercase),
            None => uri.authority().map(|a| a.as_str().to_ascii_lowercase()),
        };
        if !host.is_some_and(|h| self.hosts.contains(&h)) {
            return Err(Refusal::Host);
        }
        Ok(())
    }
}

/// Largest accepted request body, after Base64 decoding of a gateway event.
pub const MAX_BODY_BYTES: usize = 1_048_576;

/// Largest accepted raw e-mail message (`Content-Type: message/rfc822`): a
/// bill with its PDF. A Lambda function behind API Gateway takes at most
/// 6 MB of request payload, and a binary body arrives Base64-encoded (4/3
/// of its size) inside the event's JSON, so 4 MiB is what fits with room
/// for the headers; larger messages need the mail-receiving path (SES to S3).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1_048_576;

/// What a socket reads of a request before its route is known: a raw
/// message's limit only on the ingestion path (`/api/v1/inboxes/{id}/emails`),
/// where the route then decides; `MAX_BODY_BYTES` everywhere else.
pub fn read_limit(headers: &HeaderMap, path: &str) -> usize {
    let ingestion = path.starts_with("/api/v1/inboxes/") && path.ends_with("/emails");
    if ingestion && is_message(headers) { MAX_MESSAGE_BYTES } else { MAX_BODY_BYTES }
}

/// Whether the body is over `limit`, by its `Content-Length` or its size.
pub fn too_large(headers: &HeaderMap, body_len: usize, limit: usize) -> bool {
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    declared.is_some_and(|n| n > limit as u64) || body_len > limit
}

/// Whether `Content-Type` names JSON (parameters such as `charset` allowed).
pub fn is_json(headers: &HeaderMap) -> bool {
    media_is(headers, "application/json")
}

/// Whether `Content-Type` names `media` (any case; parameters allowed).
fn media_is(headers: &HeaderMap, media: &str) -> bool {
    let content_type = headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    content_type.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case(media)
}

/// Whether the body is a raw e-mail message (`Content-Type: message/rfc822`).
pub fn is_message(headers: &HeaderMap) -> bool {
    media_is(headers, "message/rfc822")
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

    #[test]
    fn a_loopback_server_answers_its_own_names_and_origins_only() {
        let list = Allowlist::new(loopback_hosts(3001), loopback_origins(3001));
        let check = |pairs: &[(&str, &str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(
                    http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    http::HeaderValue::from_str(value).unwrap(),
                );
            }
            list.check(&headers, &Uri::from_static("/token"))
        };
        assert_eq!(check(&[("host", "127.0.0.1:3001")]), Ok(()));
        assert_eq!(check(&[("host", "LOCALHOST:3001"), ("origin", "http://localhost:3001")]), Ok(()));
        assert_eq!(check(&[("host", "[::1]:3001")]), Ok(()));
        assert_eq!(check(&[("host", "127.0.0.1:3000")]), Err(Refusal::Host));
        assert_eq!(check(&[("host", "rebind.attacker.example:3001")]), Err(Refusal::Host));
        assert_eq!(check(&[]), Err(Refusal::Host));
        assert_eq!(check(&[("host", "127.0.0.1:3001"), ("origin", "https://attacker.example")]), Err(Refusal::Origin));
        assert_eq!(check(&[("host", "127.0.0.1:3001"), ("origin", "null")]), Err(Refusal::Origin));
    }
}
