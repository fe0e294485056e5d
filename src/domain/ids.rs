//! Tenant identifiers. They come from tokens (`org_id`) and headers
//! (`X-Workspace-Id`), so they are checked before they reach a key: letters,
//! digits, `_` and `-`, 1 to 64 characters. That keeps `#` (the key
//! separator) and path characters out of every key built from them.

use std::fmt;

fn well_formed(s: &str) -> bool {
    (1..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

macro_rules! tenant_id {
    ($name:ident) => {
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub fn parse(s: &str) -> Option<Self> {
                well_formed(s).then(|| Self(s.to_owned()))
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

tenant_id!(OrgId);
tenant_id!(WorkspaceId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_and_traversal_are_refused() {
        assert!(OrgId::parse("org_demo").is_some());
        for bad in ["", "a#b", "../x", "a/b", "a%2Fb", "ç", &"x".repeat(65)] {
            assert!(WorkspaceId::parse(bad).is_none(), "{bad}");
        }
    }
}
