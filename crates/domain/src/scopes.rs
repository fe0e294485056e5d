//! OAuth scopes. There is no hierarchy: a write scope does not imply the read
//! scope, so a token says exactly what it may do.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    InboxesRead,
    InboxesWrite,
    EmailsRead,
    EmailsWrite,
    WebhooksRead,
    WebhooksWrite,
    /// The organization's mail-receiving pipeline (a machine client).
    EmailsIngest,
    /// The workspace's audit trail (workspace admins).
    AuditRead,
    /// Organization administration: workspaces, members, mail pipelines,
    /// organization administrators (people holding `org_admin`).
    OrgAdmin,
}

impl Scope {
    /// The scopes a person's client asks for (everything but ingestion).
    pub const USER: [Scope; 7] = [
        Scope::InboxesRead,
        Scope::InboxesWrite,
        Scope::EmailsRead,
        Scope::EmailsWrite,
        Scope::WebhooksRead,
        Scope::WebhooksWrite,
        Scope::AuditRead,
    ];

    /// Every scope: a person's, the mail pipeline's, and organization
    /// administration (asked for by administration clients, not MCP ones).
    pub const ALL: [Scope; 9] = {
        let [a, b, c, d, e, f, g] = Self::USER;
        [a, b, c, d, e, f, g, Scope::EmailsIngest, Scope::OrgAdmin]
    };

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::InboxesRead => "inboxes:read",
            Scope::InboxesWrite => "inboxes:write",
            Scope::EmailsRead => "emails:read",
            Scope::EmailsWrite => "emails:write",
            Scope::WebhooksRead => "webhooks:read",
            Scope::WebhooksWrite => "webhooks:write",
            Scope::EmailsIngest => "emails:ingest",
            Scope::AuditRead => "audit:read",
            Scope::OrgAdmin => "org:admin",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == s)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of scopes granted by a token. Unknown scope strings are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scopes(u16);

impl Scopes {
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Scopes {
        Scopes(names.into_iter().filter_map(Scope::parse).fold(0, |acc, s| acc | s.bit()))
    }

    pub fn all() -> Scopes {
        Scopes(Scope::ALL.iter().fold(0, |acc, s| acc | s.bit()))
    }

    pub fn contains(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    /// The scopes of this set that `keep` keeps (a set only ever narrows).
    pub fn retain(self, keep: impl Fn(Scope) -> bool) -> Scopes {
        Scopes(self.iter().filter(|s| keep(*s)).fold(0, |acc, s| acc | s.bit()))
    }

    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL.into_iter().filter(move |s| self.contains(*s))
    }
}

/// Space-separated, as in a `scope` claim or challenge parameter.
pub fn join(scopes: &[Scope]) -> String {
    scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_scopes_are_ignored_and_known_ones_kept() {
        let s = Scopes::from_names("emails:read offline_access inboxes:write".split(' '));
        assert!(s.contains(Scope::EmailsRead));
        assert!(s.contains(Scope::InboxesWrite));
        assert!(!s.contains(Scope::InboxesRead));
        assert_eq!(s.iter().count(), 2);
    }
}
