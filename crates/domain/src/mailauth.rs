//! What the receiving mail server said of a message's sender: the SPF, DKIM
//! and DMARC results of its `Authentication-Results` header (RFC 8601),
//! kept with the e-mail. The header is read as written by the server that
//! received the message for the customer (the topmost one: the pipeline's
//! own); a sender can write such a header too, which is why a pipeline's
//! server must remove incoming ones (RFC 8601, section 5) — the product
//! trusts the pipeline to, as it trusts it to say who the sender is.
//!
//! A method that appears several times (two DKIM signatures) counts as
//! passed when any of its results passed; a method the header does not
//! name is `none`.

use serde::{Deserialize, Serialize};

use crate::wire_enum;

wire_enum! {
    /// One method's result (RFC 8601 and the methods' own registries).
    pub enum Verdict {
        Pass = "pass",
        Fail = "fail",
        SoftFail = "softfail",
        Neutral = "neutral",
        None = "none",
        TempError = "temperror",
        PermError = "permerror",
        Policy = "policy",
    }
}

/// The verdicts on one message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Authentication {
    pub spf: Verdict,
    pub dkim: Verdict,
    pub dmarc: Verdict,
    /// The server that wrote them (the header's authserv-id).
    pub by: String,
}

/// The header's `;`-separated parts with RFC 5322 comments (`(…)`, nested)
/// removed, read as RFC 8601 tokenises them: a `;` or `(` inside a quoted
/// string (a property value such as `smtp.mailfrom="a;dkim=pass"@x`, which
/// the sender chooses) is text, and a backslash escapes the next character
/// in a quoted string or a comment.
fn parts(header: &str) -> Vec<String> {
    let (mut parts, mut current) = (Vec::new(), String::new());
    let (mut quoted, mut depth, mut escaped) = (false, 0usize, false);
    for c in header.chars() {
        if escaped {
            escaped = false;
            if depth == 0 {
                current.push(c);
            }
            continue;
        }
        match c {
            '\\' if quoted || depth > 0 => escaped = true,
            '"' if depth == 0 => {
                quoted = !quoted;
                current.push(c);
            }
            '(' if !quoted => depth += 1,
            ')' if !quoted && depth > 0 => depth -= 1,
            ';' if !quoted && depth == 0 => parts.push(std::mem::take(&mut current)),
            _ if depth == 0 => current.push(c),
            _ => {}
        }
    }
    parts.push(current);
    parts
}

/// The verdicts of an `Authentication-Results` header value, if it has an
/// authserv-id.
pub fn parse(header: &str) -> Option<Authentication> {
    let parts = parts(header);
    let mut parts = parts.iter();
    let by = parts.next()?.split_whitespace().next()?.to_owned();
    let (mut spf, mut dkim, mut dmarc) = (None, None, None);
    for part in parts {
        // The result is the part's first token: `method=result`; what
        // follows are its properties, whose values the sender may choose.
        let Some((method, result)) = part.split_whitespace().next().and_then(|t| t.split_once('=')) else {
            continue;
        };
        let method = method.split('/').next().unwrap_or_default().to_ascii_lowercase();
        let Some(verdict) = Verdict::parse(&result.to_ascii_lowercase()) else { continue };
        match method.as_str() {
            // One message, one SPF and one DMARC evaluation: the first stands.
            "spf" => {
                spf.get_or_insert(verdict);
            }
            "dmarc" => {
                dmarc.get_or_insert(verdict);
            }
            // Several signatures: the message passed DKIM if one of them did.
            "dkim" if dkim.is_none() || verdict == Verdict::Pass => dkim = Some(verdict),
            _ => {}
        }
    }
    Some(Authentication {
        spf: spf.unwrap_or(Verdict::None),
        dkim: dkim.unwrap_or(Verdict::None),
        dmarc: dmarc.unwrap_or(Verdict::None),
        by: by.chars().take(255).collect(),
    })
}

/// Whether a passing SPF result (its `smtp.mailfrom`) or a passing DKIM
/// signature (its `header.d`, else `header.i`) of the header is for a domain
/// aligned with `from_domain` (`domains_aligned`). Only the
/// first SPF result counts, as in `parse`.
pub fn aligned(header: &str, from_domain: &str) -> bool {
    let mut spf_seen = false;
    for part in parts(header).iter().skip(1) {
        let mut tokens = part.split_whitespace();
        let Some((method, result)) = tokens.next().and_then(|t| t.split_once('=')) else { continue };
        let method = method.split('/').next().unwrap_or_default().to_ascii_lowercase();
        let passed = result.eq_ignore_ascii_case("pass");
        let wanted: &[&str] = match method.as_str() {
            "spf" if !spf_seen => {
                spf_seen = true;
                &["smtp.mailfrom"]
            }
            "dkim" => &["header.d", "header.i"],
            _ => continue,
        };
        if !passed {
            continue;
        }
        let properties: Vec<(String, String)> = tokens
            .filter_map(|t| t.split_once('='))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.trim_matches('"').to_owned()))
            .collect();
        let domain = wanted.iter().find_map(|name| properties.iter().find(|(k, _)| k == name).map(|(_, v)| v));
        let domain = domain.map(|v| v.rsplit_once('@').map_or(v.as_str(), |(_, d)| d));
        if domain.is_some_and(|d| domains_aligned(d, from_domain)) {
            return true;
        }
    }
    false
}

/// Whether two domains are aligned: equal, or one a subdomain of the other
/// (case-insensitive).
pub fn domains_aligned(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim_end_matches('.').to_ascii_lowercase(), b.trim_end_matches('.').to_ascii_lowercase());
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let under = |child: &str, parent: &str| child.strip_suffix(parent).is_some_and(|rest| rest.ends_with('.'));
    a == b || under(&a, &b) || under(&b, &a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_providers_header_reads_with_its_comments_and_properties() {
        let header = "mx.google.com;
       dkim=pass header.i=@telecom.example.com header.s=s1 header.b=AbCd;
       spf=pass (google.com: domain of cobranca@telecom.example.com designates 192.0.2.1 as permitted sender) smtp.mailfrom=cobranca@telecom.example.com;
       dmarc=pass (p=REJECT sp=REJECT dis=NONE) header.from=telecom.example.com";
        let found = parse(header).unwrap();
        assert_eq!((found.spf, found.dkim, found.dmarc), (Verdict::Pass, Verdict::Pass, Verdict::Pass));
        assert_eq!(found.by, "mx.google.com");
    }

    #[test]
    fn failures_missing_methods_and_a_second_signature() {
        let found =
            parse("mx.example; spf=softfail smtp.mailfrom=x@y.example; dkim=fail; dkim=pass header.d=y.example")
                .unwrap();
        assert_eq!((found.spf, found.dkim, found.dmarc), (Verdict::SoftFail, Verdict::Pass, Verdict::None));
        let none = parse("mx.example 1; none").unwrap();
        assert_eq!(
            (none.spf, none.dkim, none.dmarc, none.by.as_str()),
            (Verdict::None, Verdict::None, Verdict::None, "mx.example")
        );
        let odd = parse("mx.example; SPF=FAIL; dmarc=bogus; arc=pass").unwrap();
        assert_eq!((odd.spf, odd.dmarc), (Verdict::Fail, Verdict::None));
        assert_eq!(parse(""), None);
        // A sender's quoted local part cannot add a verdict or hide the real ones.
        let forged =
            parse(r#"mx; spf=fail smtp.mailfrom="a;dkim=pass x"@evil.example; dkim=fail; dmarc=fail"#).unwrap();
        assert_eq!((forged.spf, forged.dkim, forged.dmarc), (Verdict::Fail, Verdict::Fail, Verdict::Fail));
        let paren = parse(r#"mx; spf=pass smtp.mailfrom="a(b"@x.example; dmarc=fail"#).unwrap();
        assert_eq!((paren.spf, paren.dmarc), (Verdict::Pass, Verdict::Fail));
        let escaped = parse(r"mx; spf=pass (a \) b; dkim=pass) ; dmarc=none").unwrap();
        assert_eq!((escaped.spf, escaped.dkim, escaped.dmarc), (Verdict::Pass, Verdict::None, Verdict::None));
        assert_eq!(parse("   ;spf=pass"), None);
    }

    #[test]
    fn alignment_reads_the_passing_results_domains() {
        let header =
            "mx.example; spf=pass smtp.mailfrom=bounce@mail.telecom.example.com; dkim=pass header.d=other.example";
        assert!(aligned(header, "telecom.example.com"));
        assert!(!aligned(
            "mx.example; spf=pass smtp.mailfrom=x@other.example; dkim=pass header.d=other.example",
            "telecom.example.com"
        ));
        assert!(aligned("mx.example; spf=none; dkim=pass header.i=@telecom.example.com", "telecom.example.com"));
        assert!(!aligned(
            "mx.example; spf=fail smtp.mailfrom=telecom.example.com; dkim=fail header.d=telecom.example.com",
            "telecom.example.com"
        ));
        // A quoted local part naming the domain is the sender's text, not a property.
        assert!(!aligned(
            "mx.example; spf=pass smtp.mailfrom=\"x header.d=telecom.example.com\"@evil.example",
            "telecom.example.com"
        ));
        assert!(!aligned("", "telecom.example.com"));
    }

    #[test]
    fn alignment_is_the_same_domain_or_a_subdomain() {
        assert!(domains_aligned("telecom.example.com", "TELECOM.example.com."));
        assert!(domains_aligned("bounce.telecom.example.com", "telecom.example.com"));
        assert!(domains_aligned("telecom.example.com", "mail.telecom.example.com"));
        assert!(!domains_aligned("a.example.com", "b.example.com"));
        assert!(!domains_aligned("evil-telecom.example.com", "telecom.example.com"));
        assert!(!domains_aligned("", "x.example"));
    }
}
