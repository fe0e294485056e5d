//! Pure types and rules of the product, with no I/O: OAuth scopes, workspace
//! roles and what each role may do, the identifiers that scope every
//! record to a tenant, and the characters a caller's text may not hold.
//! Nothing here knows HTTP, JSON-RPC or DynamoDB.

pub mod boleto;
pub mod clock;
pub mod ids;
pub mod mailauth;
pub mod personal;
pub mod pix;
pub mod provenance;
pub mod records;
pub mod retention;
pub mod roles;
pub mod scopes;
pub mod shards;
pub mod text;

// For `wire_enum!`, which implements `JsonSchema` in the crates that use it.
pub use schemars;

pub use ids::{OrgId, WorkspaceId};
pub use roles::{Permission, Role};
pub use scopes::{Scope, Scopes};
pub use shards::Shards;

/// The tenant a request acts on: a workspace of the caller's organization,
/// and the caller's role there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    pub org: OrgId,
    pub workspace: WorkspaceId,
    pub role: Role,
    /// The workspace is archived: its admins read it, nothing changes in it.
    pub archived: bool,
    /// How its write-heavy records spread over partitions.
    pub shards: Shards,
    /// How much third-party text MCP answers carry here (the workspace's
    /// setting; the deployment's cap and a connection's narrowing apply on top).
    pub content_policy: provenance::ContentPolicy,
    /// How many days e-mail content is kept here (`retention`).
    pub retention_days: u32,
}

impl Tenant {
    /// A workspace acted on with `role`, not archived.
    pub fn new(org: OrgId, workspace: WorkspaceId, role: Role) -> Tenant {
        Tenant {
            org,
            workspace,
            role,
            archived: false,
            shards: Shards::default(),
            content_policy: provenance::ContentPolicy::default(),
            retention_days: retention::DEFAULT_DAYS,
        }
    }

    /// The organization itself, for its administrators: the changes made to
    /// it (workspaces created, administrators added) have their audit trail
    /// under a workspace id no workspace can have (`ORG_TRAIL`: ids the
    /// server chooses begin with `ws_`).
    pub fn organization(org: OrgId) -> Tenant {
        Tenant::new(org, WorkspaceId::org_trail(), Role::Admin)
    }

    pub fn is_organization(&self) -> bool {
        self.workspace == WorkspaceId::org_trail()
    }
}

/// Lowercase hexadecimal of `bytes`: digests, key ids, nonces and signatures
/// are written this one way.
#[expect(clippy::indexing_slicing, reason = "a nibble is at most 15 and DIGITS has 16 entries")]
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_is_lowercase_two_digits_a_byte() {
        assert_eq!(super::hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(super::hex(&[]), "");
    }
}
