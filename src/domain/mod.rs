//! Pure types and rules of the product, with no I/O: OAuth scopes, workspace
//! roles and what each role may do, and the identifiers that scope every
//! record to a tenant. Nothing here knows HTTP, JSON-RPC or DynamoDB.

pub mod boleto;
pub mod clock;
pub mod ids;
pub mod records;
pub mod roles;
pub mod scopes;

pub use ids::{OrgId, WorkspaceId};
pub use roles::{Permission, Role};
pub use scopes::{Scope, Scopes};

/// The tenant a request acts on: a workspace of the caller's organization,
/// and the caller's role there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    pub org: OrgId,
    pub workspace: WorkspaceId,
    pub role: Role,
}
