//! Address classification for outbound calls: which IP addresses a webhook
//! may reach. Only globally routable unicast addresses are public; loopback,
//! private, link-local (including the cloud metadata address), CGNAT,
//! multicast, unspecified, documentation, benchmarking and reserved ranges,
//! the 6to4 relay anycast range, IPv6 unique-local and link-local, Teredo,
//! local-use NAT64, and the IPv4-mapped, NAT64 and 6to4 forms of all of
//! these are refused.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..=127).contains(&b)) // CGNAT 100.64.0.0/10
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments 192.0.0.0/24
        || (a == 198 && (b == 18 || b == 19)) // benchmarking 198.18.0.0/15
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast 192.88.99.0/24 (deprecated)
        || a >= 240) // reserved 240.0.0.0/4
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    // NAT64 well-known prefix 64:ff9b::/96 embeds an IPv4 address.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return is_public_v4(v4(s[6], s[7]));
    }
    // 6to4 2002::/16 embeds the IPv4 address of its gateway in bits 16-47.
    if s[0] == 0x2002 {
        return is_public_v4(v4(s[1], s[2]));
    }
    // Local-use NAT64 64:ff9b:1::/48 (translated inside a network) and
    // Teredo 2001::/32 (an obfuscated IPv4 tunnel): never a customer's receiver.
    if (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) || (s[0] == 0x2001 && s[1] == 0) {
        return false;
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated) fec0::/10
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation 2001:db8::/32
        || s[0..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible ::a.b.c.d (deprecated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_ranges() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "198.18.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "::127.0.0.1",
            "2002:a9fe:a9fe::1",
            "2002:7f00:1::1",
            "2002:0a00:0001::",
            "64:ff9b:1::a9fe:a9fe",
            "64:ff9b:1:2::5db8:d822",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001::1",
            "192.88.99.1",
        ] {
            assert!(!is_public(bad.parse().unwrap()), "{bad} must be refused");
        }
        for good in
            ["93.184.216.34", "8.8.8.8", "2606:2800:220:1::1", "::ffff:8.8.8.8", "2002:5db8:d822::1", "2001:4860::8888"]
        {
            assert!(is_public(good.parse().unwrap()), "{good} is public");
        }
    }
}
