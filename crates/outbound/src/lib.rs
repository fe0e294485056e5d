//! Outbound webhook deliveries: signing, and calls to customer URLs that
//! cannot be turned against this network. The same guarded client fetches
//! OAuth Client ID Metadata Documents for the development authorization
//! server (`fetch_document`).
//!
//! - The host is resolved here (`Guard`, plugged into the HTTP client as its
//!   resolver); every address it returns is checked, and the client connects
//!   only to the checked addresses: there is no second resolution. A name
//!   that resolves to any refused address is refused whole.
//! - A literal IP in the URL is checked the same way before the call.
//! - `https` only, except loopback over plain HTTP under the development flag
//!   (`WEBHOOK_ALLOW_LOOPBACK`, refused on Lambda).
//! - No redirects, no proxies, short connect and total timeouts, and at most
//!   `MAX_RESPONSE_BYTES` of the answer are read.
//!
//! Signature: `X-Kobana-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_lc_rs::hmac;

pub mod addresses;

use addresses::is_public;

pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const TOTAL_TIMEOUT: Duration = Duration::from_secs(10);

/// Name resolution, replaceable in tests.
pub trait Lookup: Send + Sync {
    fn lookup(&self, host: &str) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + '_>>;
}

/// The system resolver.
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + '_>> {
        let host = host.to_owned();
        Box::pin(async move { Ok(tokio::net::lookup_host((host.as_str(), 0)).await?.map(|a| a.ip()).collect()) })
    }
}

fn allowed(ip: IpAddr, allow_loopback: bool) -> bool {
    is_public(ip) || (allow_loopback && ip.is_loopback())
}

/// The resolver the HTTP client uses: resolves, checks, and hands over only
/// checked addresses.
struct Guard {
    lookup: Arc<dyn Lookup>,
    allow_loopback: bool,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Refused(String);

/// What a delivery refused by the address guard says (`describe`).
pub const REFUSED_NAME: &str = "refused: the receiver's host name does not resolve to a public address";

impl reqwest::dns::Resolve for Guard {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let lookup = Arc::clone(&self.lookup);
        let allow_loopback = self.allow_loopback;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = lookup.lookup(&host).await?;
            if addrs.is_empty() {
                return Err(
                    Box::new(Refused(format!("{host} does not resolve"))) as Box<dyn std::error::Error + Send + Sync>
                );
            }
            if let Some(bad) = addrs.iter().find(|ip| !allowed(**ip, allow_loopback)) {
                return Err(Box::new(Refused(format!("{host} resolves to a refused address ({bad})"))) as _);
            }
            let checked: reqwest::dns::Addrs = Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(checked)
        })
    }
}

/// Why a URL fails the scheme and literal-address rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    NoHost,
    /// Anything but `https` (plain `http` passes only for loopback under the development flag).
    Scheme(String),
    /// A literal address in a refused range.
    Address(IpAddr),
    /// A name that is this machine by definition (`localhost`, `*.localhost`),
    /// refused unless the development flag allows loopback.
    LocalName,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NoHost => f.write_str("the URL has no host"),
            Refusal::Scheme(scheme) => write!(f, "scheme {scheme} is refused: https is required"),
            Refusal::Address(ip) => write!(f, "address {ip} is refused"),
            Refusal::LocalName => f.write_str("the host is refused: it names this machine"),
        }
    }
}

/// Rewrites a domain host to its canonical form: lowercase (the URL parser
/// already lowercases) and without the trailing dots of the absolute form,
/// so `https://LocalHost./` and `https://localhost/` are one target to every
/// check and one URL to the uniqueness rule. `NoHost` when nothing is left.
pub fn normalise_host(url: &mut url::Url) -> Result<(), Refusal> {
    let Some(url::Host::Domain(domain)) = url.host() else { return Ok(()) };
    let trimmed = domain.trim_end_matches('.').to_ascii_lowercase();
    if trimmed == domain {
        return Ok(());
    }
    if trimmed.is_empty() {
        return Err(Refusal::NoHost);
    }
    url.set_host(Some(&trimmed)).map_err(|_| Refusal::NoHost)
}

/// Whether a host name means this machine whatever the resolver says
/// (RFC 6761: `localhost` and every name under it), in any case and with or
/// without the trailing dot.
fn is_local_name(domain: &str) -> bool {
    let name = domain.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// The scheme and literal-address rules every webhook URL meets, at
/// registration and again at every delivery. Host names are checked by the
/// resolver (`Guard`) when the call is made.
pub fn check_target(url: &url::Url, allow_loopback: bool) -> Result<(), Refusal> {
    let (loopback_host, literal) = match url.host() {
        Some(url::Host::Ipv4(ip)) => (ip.is_loopback(), Some(IpAddr::V4(ip))),
        Some(url::Host::Ipv6(ip)) => (ip.is_loopback(), Some(IpAddr::V6(ip))),
        Some(url::Host::Domain(d)) => (is_local_name(d), None),
        None => return Err(Refusal::NoHost),
    };
    match url.scheme() {
        "https" => {}
        "http" if allow_loopback && loopback_host => {}
        other => return Err(Refusal::Scheme(other.to_owned())),
    }
    match literal {
        Some(ip) if !allowed(ip, allow_loopback) => Err(Refusal::Address(ip)),
        None if loopback_host && !allow_loopback => Err(Refusal::LocalName),
        _ => Ok(()),
    }
}

/// The outcome of one delivery attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub status_code: Option<u16>,
    pub duration_ms: u64,
    /// Why it failed; `None` on a 2xx answer.
    pub error: Option<String>,
}

/// The HTTP client for customer URLs, built once per container.
pub struct Outbound {
    client: reqwest::Client,
    allow_loopback: bool,
}

impl Outbound {
    pub fn new(allow_loopback: bool) -> Result<Outbound, String> {
        Self::with_lookup(Arc::new(SystemLookup), allow_loopback)
    }

    pub fn with_lookup(lookup: Arc<dyn Lookup>, allow_loopback: bool) -> Result<Outbound, String> {
        Self::build(lookup, allow_loopback, inbox_support::tls::client_config())
    }

    /// The same guarded client, trusting the certificate authorities of a
    /// PEM file besides the public roots (the development authorization
    /// server, fetching client documents from a test's https server).
    #[cfg(feature = "dev")]
    pub fn also_trusting(allow_loopback: bool, pem: &[u8]) -> Result<Outbound, String> {
        Self::build(Arc::new(SystemLookup), allow_loopback, inbox_support::tls::client_config_also_trusting(pem)?)
    }

    fn build(lookup: Arc<dyn Lookup>, allow_loopback: bool, tls: rustls::ClientConfig) -> Result<Outbound, String> {
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .dns_resolver(Arc::new(Guard { lookup, allow_loopback }))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(TOTAL_TIMEOUT)
            .user_agent(concat!("kobana-inbox-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Outbound { client, allow_loopback })
    }

    /// Checks a URL against the scheme and literal-address rules.
    pub fn check_url(&self, url: &url::Url) -> Result<(), String> {
        check_target(url, self.allow_loopback).map_err(|refusal| refusal.to_string())
    }

    /// GETs a small JSON document (a Client ID Metadata Document) with the
    /// delivery's discipline — the checked and pinned address, no redirects,
    /// no proxy — plus a shorter timeout and a size limit: the body, or why
    /// not (an answer other than 200, a redirect, over `max_bytes`).
    pub async fn fetch_document(&self, url: &url::Url, max_bytes: usize) -> Result<bytes::Bytes, String> {
        self.check_url(url)?;
        let request = self.client.get(url.clone()).header("accept", "application/json").timeout(Duration::from_secs(5));
        let mut response = request.send().await.map_err(|e| describe(&e))?;
        let status = response.status();
        if status.is_redirection() {
            return Err(format!("the document's server answered {} (redirects are not followed)", status.as_u16()));
        }
        if status != reqwest::StatusCode::OK {
            return Err(format!("the document's server answered {}", status.as_u16()));
        }
        let mut body = bytes::BytesMut::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| describe(&e))? {
            body.extend_from_slice(&chunk);
            if body.len() > max_bytes {
                return Err(format!("the document is larger than {max_bytes} bytes"));
            }
        }
        Ok(body.freeze())
    }

    /// POSTs `body` to `url` with the signature headers. Never fails: the
    /// outcome, good or bad, is the returned attempt.
    pub async fn post(&self, url: &str, secret: &str, event_type: &str, delivery_id: &str, body: &str) -> Attempt {
        let started = Instant::now();
        let elapsed = |started: Instant| u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let parsed = match url::Url::parse(url) {
            Ok(u) => u,
            Err(_) => return Attempt { status_code: None, duration_ms: 0, error: Some("the URL is not valid".into()) },
        };
        if let Err(why) = self.check_url(&parsed) {
            return Attempt { status_code: None, duration_ms: 0, error: Some(why) };
        }
        let timestamp = inbox_support::sys::unix_now();
        let request = self
            .client
            .post(parsed)
            .header("content-type", "application/json")
            .header("x-kobana-signature", signature(secret, timestamp, body))
            .header("x-kobana-event", event_type)
            .header("x-kobana-delivery", delivery_id)
            .body(body.to_owned());
        let mut response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                return Attempt { status_code: None, duration_ms: elapsed(started), error: Some(describe(&e)) };
            }
        };
        let status = response.status();
        // Read a bounded amount so the connection can be reused, then stop.
        let mut read = 0usize;
        while read < MAX_RESPONSE_BYTES {
            match response.chunk().await {
                Ok(Some(chunk)) => read += chunk.len(),
                _ => break,
            }
        }
        let error = if status.is_success() {
            None
        } else if status.is_redirection() {
            Some(format!("receiver answered {} (redirects are not followed)", status.as_u16()))
        } else {
            Some(format!("receiver answered {}", status.as_u16()))
        };
        Attempt { status_code: Some(status.as_u16()), duration_ms: elapsed(started), error }
    }
}

/// A readable cause, without the URL's query (it may carry a customer
/// token) and without what name resolution found: a refused name gets one
/// generic sentence (in a VPC with private DNS the addresses would map the
/// internal network for whoever reads the delivery); the detail is logged.
fn describe(error: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut cause = if error.is_timeout() {
        "the receiver did not answer in time".to_owned()
    } else if error.is_connect() {
        "could not connect to the receiver".to_owned()
    } else {
        "the request failed".to_owned()
    };
    let mut source = error.source();
    while let Some(inner) = source {
        if let Some(refused) = inner.downcast_ref::<Refused>() {
            tracing::warn!(detail = %refused, "a webhook delivery was refused by the address guard");
            cause = REFUSED_NAME.to_owned();
            break;
        }
        source = inner.source();
    }
    cause
}

/// `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
pub fn signature(secret: &str, timestamp: u64, body: &str) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let tag = hmac::sign(&key, format!("{timestamp}.{body}").as_bytes());
    let hex = inbox_domain::hex(tag.as_ref());
    format!("t={timestamp},v1={hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> url::Url {
        url::Url::parse(text).unwrap()
    }

    #[test]
    fn names_of_this_machine_are_refused_in_every_spelling_unless_loopback_is_allowed() {
        for text in ["https://localhost/", "https://localhost./", "https://LOCALHOST./x", "https://a.localhost/"] {
            assert_eq!(check_target(&url(text), false), Err(Refusal::LocalName), "{text}");
            assert_eq!(check_target(&url(text), true), Ok(()), "{text} under the development flag");
        }
        assert_eq!(check_target(&url("https://localhost.example.com/"), false), Ok(()));
        assert_eq!(check_target(&url("https://notlocalhost/"), false), Ok(()));
    }

    #[test]
    fn host_normalisation_drops_the_trailing_dot_and_keeps_the_rest() {
        let mut u = url("https://Hooks.Example.COM./in?x=1");
        normalise_host(&mut u).unwrap();
        assert_eq!(u.as_str(), "https://hooks.example.com/in?x=1");
        let mut literal = url("https://93.184.216.34/x");
        normalise_host(&mut literal).unwrap();
        assert_eq!(literal.as_str(), "https://93.184.216.34/x");
    }
}
