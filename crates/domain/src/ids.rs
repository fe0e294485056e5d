//! Tenant identifiers. They come from tokens (`org_id`) and headers
//! (`X-Workspace-Id`), so they are checked before they reach a key: letters,
//! digits, `_` and `-`, 1 to 64 characters. That keeps `#` (the key
//! separator) and path characters out of every key built from them.

use std::fmt;

fn well_formed(s: &str) -> bool {
    (1..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

macro_rules! tenant_id {
    ($name:ident, $reserved:expr) => {
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub fn parse(s: &str) -> Option<Self> {
                let reserved: &[&str] = &$reserved;
                (well_formed(s) && !reserved.contains(&s)).then(|| Self(s.to_owned()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

// An organization's files are under `{org}/` in the attachments bucket;
// SES's raw messages are under `inbound/`: no organization may be called so.
tenant_id!(OrgId, ["inbound"]);
tenant_id!(WorkspaceId, []);

impl WorkspaceId {
    /// Where an organization's own changes are recorded (`Tenant::organization`):
    /// a well-formed id no workspace has, since the server names workspaces `ws_…`.
    pub fn org_trail() -> WorkspaceId {
        WorkspaceId("_org".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_and_traversal_are_refused() {
        assert!(OrgId::parse("org_demo").is_some());
        assert!(OrgId::parse("inbound").is_none(), "the bucket's SES prefix");
        assert!(WorkspaceId::parse("inbound").is_some());
        for bad in ["", "a#b", "../x", "a/b", "a%2Fb", "ç", &"x".repeat(65)] {
            assert!(WorkspaceId::parse(bad).is_none(), "{bad}");
        }
    }
}

/// Record id prefixes: every id says what it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Inbox,
    Email,
    Webhook,
    Delivery,
    Job,
    Event,
    Audit,
    Workspace,
    DataRequest,
}

impl Kind {
    pub fn prefix(self) -> &'static str {
        match self {
            Kind::Inbox => "inb",
            Kind::Email => "eml",
            Kind::Webhook => "whk",
            Kind::Delivery => "dlv",
            Kind::Job => "job",
            Kind::Event => "evt",
            Kind::Audit => "aud",
            Kind::Workspace => "ws",
            Kind::DataRequest => "dsr",
        }
    }
}

const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The opaque id made of 22 random bytes: the prefix and 22 base-62
/// characters (about 131 random bits). The bytes come from the caller
/// (`inbox_support::sys::new_id` reads the system RNG), so this stays pure.
pub fn id_from(kind: Kind, random: &[u8; 22]) -> String {
    let tail: String =
        random.iter().filter_map(|b| ALPHABET.get(usize::from(*b) % ALPHABET.len())).map(|c| char::from(*c)).collect();
    format!("{}_{tail}", kind.prefix())
}

/// Whether `s` is a well-formed id of `kind`: its prefix, `_`, then 1 to 40
/// letters, digits and `_`. Anything else (`../`, `%2F`, another prefix) cannot
/// name a record, so it never reaches a key.
pub fn is_id(kind: Kind, s: &str) -> bool {
    s.strip_prefix(kind.prefix()).and_then(|rest| rest.strip_prefix('_')).is_some_and(|tail| {
        (1..=40).contains(&tail.len()) && tail.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// `id` placed in write shard `shard` (`crate::shards`): shard 0
/// is the id itself (so every id made before shards is in shard 0), any
/// other adds `_s{shard}`.
pub fn with_shard(id: String, shard: u16) -> String {
    if shard == 0 { id } else { format!("{id}_s{shard}") }
}

/// The write shard an id names (0 when it names none).
pub fn shard_of(id: &str) -> u16 {
    id.rsplit_once("_s")
        .filter(|(_, n)| (1..=3).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()) && !n.starts_with('0'))
        .and_then(|(_, n)| n.parse::<u16>().ok())
        .filter(|n| *n < crate::shards::MAX_SHARDS)
        .unwrap_or(0)
}

#[cfg(test)]
mod id_tests {
    use super::*;

    #[test]
    fn ids_are_well_formed_and_follow_their_bytes() {
        let a = id_from(Kind::Email, &[7; 22]);
        assert!(is_id(Kind::Email, &a), "{a}");
        assert_eq!(a, "eml_7777777777777777777777");
        assert_ne!(a, id_from(Kind::Email, &[8; 22]));
        assert!(!is_id(Kind::Inbox, &a));
        assert!(is_id(Kind::Inbox, "inb_bills"));
        assert!(is_id(Kind::Email, "eml_energy_nov"));
        for bad in ["inb_", "inb_../x", "inb_a%2Fb", "inb-a", "inb_a/b", "inb_a#b", "inb_a.b"] {
            assert!(!is_id(Kind::Inbox, bad), "{bad}");
        }
    }

    #[test]
    fn an_id_names_its_shard_and_ids_without_one_are_in_shard_0() {
        let id = id_from(Kind::Email, &[7; 22]);
        assert_eq!(shard_of(&id), 0);
        assert_eq!(with_shard(id.clone(), 0), id);
        let sharded = with_shard(id.clone(), 13);
        assert!(is_id(Kind::Email, &sharded), "{sharded}");
        assert_eq!(shard_of(&sharded), 13);
        assert_eq!(shard_of(&with_shard(id, 255)), 255);
        for unsharded in ["eml_receipt_1", "eml_energy_nov", "eml_x_s0", "eml_x_s007", "eml_x_s256", "eml_x_s"] {
            assert_eq!(shard_of(unsharded), 0, "{unsharded}");
        }
    }
}
