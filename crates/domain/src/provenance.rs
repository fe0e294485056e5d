//! Where an e-mail's text comes from, and how much of it an agent may read.
//!
//! **Trust** (`trust` on every e-mail): `verified` when the receiving
//! server's verdicts authenticate the sender's domain — DMARC `pass`, or
//! SPF or DKIM `pass` for a domain aligned with the `From` address (the same
//! domain or one a subdomain of the other; sibling subdomains are not
//! aligned (`mailauth::domains_aligned`), which errs toward `unverified`) — **and** the sender is on the
//! inbox's allowed list (an address or its `@domain`); `failed` when DMARC
//! failed, or when neither SPF nor DKIM passed and one of them failed;
//! `unverified` otherwise (no verdicts at all — a JSON ingestion, a message
//! without `Authentication-Results` — or verdicts that authenticate nothing,
//! or an authenticated sender the inbox does not list). An inbox that takes
//! mail from anyone still lists no one: its mail is at most `unverified`
//! unless the sender is listed too. Decided once, at ingestion, from the
//! list as it is then.
//!
//! **Content policy** (a workspace's `content_policy`, capped by the
//! deployment and narrowed by a connection): how much third-party text MCP
//! hands an agent. `full`: every e-mail's subject and body, sanitised and
//! fenced; `verified_only` (new workspaces): those of `verified` e-mails
//! only, the rest withheld; `structured_only`: none at all, only what the
//! server decoded (amounts, due dates, banks, Pix keys, status, trust). The
//! strictest of the three sources applies (`ContentPolicy::stricter`): no
//! request can loosen what the workspace or the operator set.

use crate::mailauth::{Authentication, Verdict};
use crate::wire_enum;

wire_enum! {
    /// How far an e-mail's sender is authenticated (see the module docs).
    #[derive(Default)]
    pub enum Trust {
        Verified = "verified",
        #[default]
        Unverified = "unverified",
        Failed = "failed",
    }
}

wire_enum! {
    /// How much third-party text MCP answers carry (see the module docs),
    /// from the loosest to the strictest; a workspace that never chose has
    /// `verified_only`.
    #[derive(Default)]
    pub enum ContentPolicy {
        Full = "full",
        #[default]
        VerifiedOnly = "verified_only",
        StructuredOnly = "structured_only",
    }
}

impl ContentPolicy {
    /// The stricter of two policies.
    pub fn stricter(self, other: ContentPolicy) -> ContentPolicy {
        self.max(other)
    }

    /// Whether an e-mail of `trust` may show its subject and body.
    pub fn shows(self, trust: Trust) -> bool {
        match self {
            ContentPolicy::Full => true,
            ContentPolicy::VerifiedOnly => trust == Trust::Verified,
            ContentPolicy::StructuredOnly => false,
        }
    }
}

/// The trust of an e-mail from `from`, with the receiving server's
/// `verdicts`, whether one of its passing SPF or DKIM results is for a domain
/// aligned with `from`'s (`aligned`), and whether the inbox lists the sender.
pub fn trust(verdicts: Option<&Authentication>, aligned: bool, listed: bool) -> Trust {
    let Some(v) = verdicts else { return Trust::Unverified };
    if v.dmarc == Verdict::Fail {
        return Trust::Failed;
    }
    let passed = |verdict: Verdict| verdict == Verdict::Pass;
    if !passed(v.spf) && !passed(v.dkim) && (v.spf == Verdict::Fail || v.dkim == Verdict::Fail) {
        return Trust::Failed;
    }
    let authenticated = passed(v.dmarc) || ((passed(v.spf) || passed(v.dkim)) && aligned);
    if authenticated && listed { Trust::Verified } else { Trust::Unverified }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth(spf: Verdict, dkim: Verdict, dmarc: Verdict) -> Authentication {
        Authentication { spf, dkim, dmarc, by: "mx.example".into() }
    }

    #[test]
    fn trust_follows_the_verdicts_the_alignment_and_the_list() {
        use Verdict::{Fail, None as No, Pass, SoftFail};
        assert_eq!(trust(None, true, true), Trust::Unverified);
        assert_eq!(trust(Some(&auth(No, No, Pass)), false, true), Trust::Verified);
        assert_eq!(trust(Some(&auth(No, No, Pass)), false, false), Trust::Unverified, "not listed");
        assert_eq!(trust(Some(&auth(Pass, No, No)), true, true), Trust::Verified, "SPF aligned");
        assert_eq!(trust(Some(&auth(No, Pass, No)), true, true), Trust::Verified, "DKIM aligned");
        assert_eq!(trust(Some(&auth(Pass, Pass, No)), false, true), Trust::Unverified, "passes, not aligned");
        assert_eq!(trust(Some(&auth(Pass, Pass, Fail)), true, true), Trust::Failed, "DMARC fail wins");
        assert_eq!(trust(Some(&auth(Fail, Fail, No)), true, true), Trust::Failed);
        assert_eq!(trust(Some(&auth(Fail, Pass, No)), true, true), Trust::Verified, "DKIM passed");
        assert_eq!(trust(Some(&auth(SoftFail, No, No)), true, true), Trust::Unverified);
        assert_eq!(trust(Some(&auth(No, No, No)), true, true), Trust::Unverified);
    }

    #[test]
    fn the_strictest_policy_applies_and_says_what_it_shows() {
        use ContentPolicy::*;
        assert_eq!(Full.stricter(VerifiedOnly), VerifiedOnly);
        assert_eq!(StructuredOnly.stricter(Full), StructuredOnly);
        assert_eq!(VerifiedOnly.stricter(VerifiedOnly), VerifiedOnly);
        assert!(Full.shows(Trust::Failed));
        assert!(VerifiedOnly.shows(Trust::Verified) && !VerifiedOnly.shows(Trust::Unverified));
        assert!(!StructuredOnly.shows(Trust::Verified));
        assert_eq!(ContentPolicy::default(), VerifiedOnly);
    }
}
