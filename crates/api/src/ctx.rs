//! What an operation may use: `Services` (built once per container: the
//! store, the server's secrets, the outbound URL rule) and, per call, `Ctx`
//! (those plus the verified caller and the workspace acted on). An operation
//! sees nothing else of the process: no configuration, no HTTP, no MCP.

use std::sync::Arc;

use super::audit::{Change, Origin};
use super::error::ApiError;
use super::tenancy::{self, TenancyError};
use inbox_auth::Principal;
use inbox_domain::Tenant;
use inbox_store::Store;
use inbox_support::secrets::Secrets;

/// The API's dependencies, built once per container by the composition root.
pub struct Services {
    pub store: Store,
    pub secrets: Arc<Secrets>,
    /// Webhook URLs may point at loopback over plain HTTP (local runs and tests).
    pub webhook_allow_loopback: bool,
    /// Memberships remembered per container (see `tenancy::MembershipCache`).
    pub memberships: tenancy::MembershipCache,
}

/// One call of an operation: the services, the verified caller (never the
/// token), the workspace acted on, and where the call comes from (for the
/// audit trail).
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub store: &'a Store,
    pub secrets: &'a Secrets,
    pub webhook_allow_loopback: bool,
    pub principal: &'a Principal,
    pub tenant: &'a Tenant,
    pub origin: Origin<'a>,
    /// While `dispatch` runs a changing operation: what its record says.
    pub(super) change: Option<&'a Change<'a>>,
}

impl Services {
    pub fn ctx<'a>(&'a self, principal: &'a Principal, tenant: &'a Tenant, origin: Origin<'a>) -> Ctx<'a> {
        Ctx {
            store: &self.store,
            secrets: &self.secrets,
            webhook_allow_loopback: self.webhook_allow_loopback,
            principal,
            tenant,
            origin,
            change: None,
        }
    }

    /// The workspace a person acts on, with their role (see `tenancy::resolve`).
    pub async fn resolve(&self, principal: &Principal, header: Option<&str>) -> Result<Tenant, TenancyError> {
        tenancy::resolve(&self.store, &self.memberships, principal, header).await
    }

    /// The workspace a mail pipeline ingests into (see `tenancy::resolve_machine`).
    pub async fn resolve_pipeline(&self, principal: &Principal, header: Option<&str>) -> Result<Tenant, TenancyError> {
        tenancy::resolve_machine(&self.store, principal, header).await
    }

    /// The organization, for its administrators (see `tenancy::resolve_org_admin`).
    pub async fn resolve_org_admin(&self, principal: &Principal) -> Result<Tenant, TenancyError> {
        tenancy::resolve_org_admin(&self.store, principal).await
    }
}

impl From<TenancyError> for ApiError {
    fn from(error: TenancyError) -> Self {
        let ids = |w: Vec<inbox_domain::WorkspaceId>| w.into_iter().map(|w| w.to_string()).collect::<Vec<_>>();
        match error {
            TenancyError::Required { workspaces } => ApiError::WorkspaceRequired { workspaces: ids(workspaces) },
            TenancyError::NotFound { workspaces } => ApiError::WorkspaceNotFound { workspaces: ids(workspaces) },
            TenancyError::NoMembership { org } => ApiError::NoMembership { org: org.to_string() },
            TenancyError::NoWorkspace { org } => ApiError::NoWorkspace { org: org.to_string() },
            TenancyError::NotOrgAdmin { org } => ApiError::Forbidden {
                message: format!("You are not an administrator of organization {org} (org_admin)"),
            },
            TenancyError::Store(e) => e.into(),
        }
    }
}
