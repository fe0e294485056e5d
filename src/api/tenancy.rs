//! Which workspace a request acts on, and with which role.
//!
//! The organization comes from the verified token; `X-Workspace-Id` picks one
//! of its workspaces. The header is required when the organization has more
//! than one workspace and optional when it has exactly one. A workspace the
//! caller is not a member of — including every workspace of another
//! organization, which cannot even be addressed under the caller's tenant
//! prefix — is "not found", never "forbidden".

use crate::auth::Principal;
pub use crate::domain::Tenant;
use crate::domain::WorkspaceId;
use crate::store::{Store, StoreError};

pub const HEADER: &str = "x-workspace-id";
/// The header as documented to users.
pub const HEADER_NAME: &str = "X-Workspace-Id";

#[derive(Debug, thiserror::Error)]
pub enum TenancyError {
    /// No header, and the organization has several workspaces: the ids the caller may pick.
    #[error("X-Workspace-Id is required")]
    Required { workspaces: Vec<WorkspaceId> },
    /// The named workspace does not exist for this caller.
    #[error("workspace not found")]
    NotFound { workspaces: Vec<WorkspaceId> },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Resolves the tenant: one read with the header, one round of two reads without.
pub async fn resolve(store: &Store, principal: &Principal, header: Option<&str>) -> Result<Tenant, TenancyError> {
    let org = &principal.org;
    if let Some(value) = header {
        let found = match WorkspaceId::parse(value) {
            Some(ws) => store.membership(org, &principal.sub, &ws).await?.map(|role| (ws, role)),
            None => None,
        };
        return match found {
            Some((workspace, role)) => Ok(Tenant { org: org.clone(), workspace, role }),
            None => Err(TenancyError::NotFound { workspaces: member_of(store, principal).await? }),
        };
    }
    let (all, mine) = tokio::join!(store.org_workspaces(org), store.memberships(org, &principal.sub));
    let (all, mine) = (all?, mine?);
    match all.as_slice() {
        [only] => match mine.into_iter().find(|(ws, _)| ws == only) {
            Some((workspace, role)) => Ok(Tenant { org: org.clone(), workspace, role }),
            None => Err(TenancyError::NotFound { workspaces: Vec::new() }),
        },
        _ => Err(TenancyError::Required { workspaces: mine.into_iter().map(|(ws, _)| ws).collect() }),
    }
}

async fn member_of(store: &Store, principal: &Principal) -> Result<Vec<WorkspaceId>, StoreError> {
    Ok(store.memberships(&principal.org, &principal.sub).await?.into_iter().map(|(ws, _)| ws).collect())
}

/// Resolves the workspace for a machine client (the organization's
/// mail-receiving pipeline). Ingestion is bound to the pipeline: the token's
/// subject must be registered as an ingestion client of the workspace (an
/// item beside its memberships), so a person's token that happens to carry
/// `emails:ingest` cannot write into a workspace. The workspace is named by
/// the header, or is the organization's only one; an unregistered workspace
/// is "not found", like a workspace a person is not a member of.
pub async fn resolve_machine(
    store: &Store,
    principal: &Principal,
    header: Option<&str>,
) -> Result<Tenant, TenancyError> {
    let (org, sub) = (&principal.org, principal.sub.as_str());
    let tenant = |workspace| Tenant { org: org.clone(), workspace, role: crate::domain::Role::Viewer };
    if let Some(value) = header {
        if let Some(ws) = WorkspaceId::parse(value)
            && store.is_ingestion_client(org, sub, &ws).await?
        {
            return Ok(tenant(ws));
        }
        return Err(TenancyError::NotFound { workspaces: store.ingestion_workspaces(org, sub).await? });
    }
    let (all, registered) = tokio::join!(store.org_workspaces(org), store.ingestion_workspaces(org, sub));
    let (all, registered) = (all?, registered?);
    match all.as_slice() {
        [only] if registered.contains(only) => Ok(tenant(only.clone())),
        [_] => Err(TenancyError::NotFound { workspaces: registered }),
        _ => Err(TenancyError::Required { workspaces: registered }),
    }
}
