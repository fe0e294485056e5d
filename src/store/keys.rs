//! The single-table key design, in one place.
//!
//! Every partition key begins with the tenant — `T#{org}` — so a record of
//! another organization can never be addressed: ids from a request are only
//! ever appended to the caller's own tenant prefix. Components that come from
//! outside (a token's `sub`) are escaped so they cannot forge a separator.
//!
//! | Item | pk | sk |
//! |---|---|---|
//! | organization (its workspace ids) | `T#{org}` | `META` |
//! | workspace | `T#{org}` | `WS#{ws}` |
//! | membership (role of a person in a workspace) | `T#{org}#U#{sub}` | `WS#{ws}` |
//! | rate-limit window | `T#{org}#RL#{sub}#{ws}` | `W#{window start, unix seconds}` |
//!
//! Items that expire carry `expires_at` (unix seconds), the table's TTL
//! attribute; reads that care about expiry also compare it, because expiry is
//! lazy.

use crate::domain::{OrgId, WorkspaceId};

pub const PK: &str = "pk";
pub const SK: &str = "sk";
pub const TTL: &str = "expires_at";
pub const GSI1: &str = "gsi1";
pub const GSI1_PK: &str = "gsi1pk";
pub const GSI1_SK: &str = "gsi1sk";

/// Escapes `%` and `#` so an outside value is one opaque key component.
pub fn escape(component: &str) -> String {
    component.replace('%', "%25").replace('#', "%23")
}

pub fn tenant(org: &OrgId) -> String {
    format!("T#{org}")
}

pub const ORG_META: &str = "META";

pub fn workspace_sk(ws: &WorkspaceId) -> String {
    format!("WS#{ws}")
}

pub fn member_pk(org: &OrgId, sub: &str) -> String {
    format!("T#{org}#U#{}", escape(sub))
}

pub fn rate_pk(org: &OrgId, sub: &str, ws: &str) -> String {
    format!("T#{org}#RL#{}#{}", escape(sub), escape(ws))
}

pub fn rate_sk(window_start: u64) -> String {
    format!("W#{window_start}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_values_cannot_forge_a_separator() {
        let org = OrgId::parse("org_a").unwrap();
        assert_eq!(member_pk(&org, "x#WS#y"), "T#org_a#U#x%23WS%23y");
        assert_ne!(member_pk(&org, "a%23b"), member_pk(&org, "a#b"));
    }
}
