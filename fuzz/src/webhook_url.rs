//! Webhook URL validation. Invariants: a URL it accepts is https, has a host
//! that is not this machine by name, and, when the host is an address
//! literal, that address is public (never loopback, private, link-local,
//! metadata, CGNAT, reserved, or their IPv6/IPv4-mapped/NAT64 forms).

use inbox::api::webhooks::parse_url;
use inbox::outbound::addresses::is_public;

/// The invariants on one input (panics when one is broken).
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(url) = parse_url(text, false) else { return };
    assert_eq!(url.scheme(), "https", "{url}");
    match url.host() {
        Some(url::Host::Ipv4(ip)) => assert!(is_public(ip.into()), "{url}"),
        Some(url::Host::Ipv6(ip)) => assert!(is_public(ip.into()), "{url}"),
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            assert!(name != "localhost" && !name.ends_with(".localhost"), "{url}");
        }
        None => panic!("accepted without a host: {url}"),
    }
    assert!(url.as_str().len() <= 2048, "{url}");
}
