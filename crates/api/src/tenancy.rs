//! Which workspace a request acts on, and with which role.
//!
//! The organization comes from the verified token; `X-Workspace-Id` picks one
//! of its workspaces. The header is required when the organization has more
//! than one workspace and optional when it has exactly one. A workspace the
//! caller is not a member of — including every workspace of another
//! organization, which cannot even be addressed under the caller's tenant
//! prefix — is "not found", never "forbidden". A person with no membership
//! at all in the organization is told so (`NoMembership`), and so is one
//! whose organization has no workspace yet (`NoWorkspace`): what the first
//! user of a new deployment sees, with what to do about it.
//!
//! Organization administration (`Needs::OrgAdmin`) acts on the organization
//! itself: its callers hold `org_admin` there (`resolve_org_admin`).

use std::sync::Arc;
use std::time::Duration;

use inbox_auth::Principal;
pub use inbox_domain::Tenant;
use inbox_domain::{OrgId, Role, WorkspaceId};
use inbox_store::{OrgWorkspaces, Store, StoreError};
use inbox_support::expiring::Expiring;

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
    /// The person belongs to no workspace of the organization.
    #[error("no membership")]
    NoMembership { org: OrgId },
    /// The organization has no workspace at all (or does not exist yet).
    #[error("no workspace")]
    NoWorkspace { org: OrgId },
    /// Organization administration by someone who does not hold `org_admin`.
    #[error("not an organization administrator")]
    NotOrgAdmin { org: OrgId },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A person's memberships and their organization's workspaces, remembered
/// per container for `ttl` (`MEMBERSHIP_CACHE_SECS`): a warm request resolves
/// its workspace without a round trip. The price is the delay before a
/// change (a revoked membership, a new one, a changed role) takes effect: at
/// most `ttl`. A zero `ttl` reads the table every time.
/// A person's workspaces, with the role in each.
type Memberships = Arc<Vec<(WorkspaceId, Role)>>;

pub struct MembershipCache {
    people: Expiring<(OrgId, String), Memberships>,
    orgs: Expiring<OrgId, Arc<OrgWorkspaces>>,
}

impl MembershipCache {
    pub fn new(ttl: Duration) -> MembershipCache {
        MembershipCache { people: Expiring::new(ttl), orgs: Expiring::new(ttl) }
    }

    /// Every workspace the person belongs to, with the role (one query when cold).
    async fn memberships(&self, store: &Store, principal: &Principal) -> Result<Memberships, StoreError> {
        let key = (principal.org.clone(), principal.sub.clone());
        self.people
            .get_or_load(key, async || store.memberships(&principal.org, &principal.sub).await.map(Arc::new))
            .await
    }

    /// Every workspace of the organization, and those archived (one read when cold).
    async fn workspaces(&self, store: &Store, org: &OrgId) -> Result<Arc<OrgWorkspaces>, StoreError> {
        self.orgs.get_or_load(org.clone(), async || store.org_workspaces(org).await.map(Arc::new)).await
    }
}

/// The reads `resolve` makes side by side when its cache is cold (the
/// organization's workspaces, the person's memberships): connections a
/// container's first request uses at once, which INIT opens on Lambda
/// (`Store::prime`).
pub const COLD_READS: usize = 2;

/// Resolves the tenant from the person's memberships and the organization's
/// workspaces: no round trip when warm, one round of reads in parallel when
/// cold (`COLD_READS`). An archived workspace resolves, marked so
/// (`Tenant::archived`): what may still be done there is the operation's to say.
pub async fn resolve(
    store: &Store,
    cache: &MembershipCache,
    principal: &Principal,
    header: Option<&str>,
) -> Result<Tenant, TenancyError> {
    let org = &principal.org;
    let (all, mine) = tokio::join!(cache.workspaces(store, org), cache.memberships(store, principal));
    let (all, mine) = (all?, mine?);
    let tenant = |(workspace, role): (WorkspaceId, Role)| Tenant {
        org: org.clone(),
        archived: all.archived.contains(&workspace),
        shards: all.shards.get(&workspace).copied().unwrap_or_default(),
        content_policy: all.policy(&workspace),
        retention_days: all.retention(&workspace),
        workspace,
        role,
    };
    // Memberships of workspaces the organization no longer lists do not count.
    let mine: Vec<(WorkspaceId, Role)> = mine.iter().filter(|(ws, _)| all.all.contains(ws)).cloned().collect();
    let ids = |mine: &[(WorkspaceId, Role)]| mine.iter().map(|(ws, _)| ws.clone()).collect::<Vec<_>>();
    if all.all.is_empty() {
        return Err(TenancyError::NoWorkspace { org: org.clone() });
    }
    if mine.is_empty() {
        return Err(TenancyError::NoMembership { org: org.clone() });
    }
    if let Some(value) = header {
        let found = WorkspaceId::parse(value).and_then(|ws| mine.iter().find(|(w, _)| *w == ws).cloned());
        return found.map(tenant).ok_or_else(|| TenancyError::NotFound { workspaces: ids(&mine) });
    }
    match (all.all.as_slice(), mine.as_slice()) {
        ([_], [only]) => Ok(tenant(only.clone())),
        _ => Err(TenancyError::Required { workspaces: ids(&mine) }),
    }
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
    let (all, registered) = tokio::join!(store.org_workspaces(org), store.ingestion_workspaces(org, sub));
    let (all, registered) = (all?, registered?);
    let tenant = |workspace: WorkspaceId| Tenant {
        org: org.clone(),
        archived: all.archived.contains(&workspace),
        shards: all.shards.get(&workspace).copied().unwrap_or_default(),
        content_policy: all.policy(&workspace),
        retention_days: all.retention(&workspace),
        workspace,
        role: Role::Viewer,
    };
    if let Some(value) = header {
        return match WorkspaceId::parse(value).filter(|ws| registered.contains(ws)) {
            Some(ws) => Ok(tenant(ws)),
            None => Err(TenancyError::NotFound { workspaces: registered }),
        };
    }
    match all.all.as_slice() {
        [only] if registered.contains(only) => Ok(tenant(only.clone())),
        [_] => Err(TenancyError::NotFound { workspaces: registered }),
        _ => Err(TenancyError::Required { workspaces: registered }),
    }
}

/// The organization itself, for a caller who holds `org_admin` there (one
/// read, never cached: taking the role away takes effect at once).
pub async fn resolve_org_admin(store: &Store, principal: &Principal) -> Result<Tenant, TenancyError> {
    let org = &principal.org;
    if store.is_org_admin(org, &principal.sub).await? {
        Ok(Tenant::organization(org.clone()))
    } else {
        Err(TenancyError::NotOrgAdmin { org: org.clone() })
    }
}
