//! Demo data for local runs and tests, written through the store with plain
//! puts, so seeding twice changes nothing.
//!
//! | Organization | Workspace | People |
//! |---|---|---|
//! | `org_demo` | `ws_main`, `ws_ops` | `usr_admin` (admin in both), `usr_operator` (operator in `ws_main`), `usr_viewer` (viewer in `ws_main`) |
//! | `org_other` | `ws_other` | `usr_other` (admin) |

use crate::domain::{OrgId, Role, WorkspaceId};
use crate::store::{Store, StoreError};

pub const DEMO_ORG: &str = "org_demo";
pub const OTHER_ORG: &str = "org_other";

fn ids(org: &str, ws: &str) -> Result<(OrgId, WorkspaceId), StoreError> {
    match (OrgId::parse(org), WorkspaceId::parse(ws)) {
        (Some(o), Some(w)) => Ok((o, w)),
        _ => Err(StoreError::Corrupt(format!("seed ids {org}/{ws}"))),
    }
}

pub async fn seed(store: &Store) -> Result<(), StoreError> {
    let workspaces =
        [(DEMO_ORG, "ws_main", "Main"), (DEMO_ORG, "ws_ops", "Operations"), (OTHER_ORG, "ws_other", "Other Co")];
    for (org, ws, name) in workspaces {
        let (org, ws) = ids(org, ws)?;
        store.put_workspace(&org, &ws, name).await?;
    }
    let members = [
        (DEMO_ORG, "usr_admin", "ws_main", Role::Admin),
        (DEMO_ORG, "usr_admin", "ws_ops", Role::Admin),
        (DEMO_ORG, "usr_operator", "ws_main", Role::Operator),
        (DEMO_ORG, "usr_viewer", "ws_main", Role::Viewer),
        (OTHER_ORG, "usr_other", "ws_other", Role::Admin),
    ];
    for (org, sub, ws, role) in members {
        let (org, ws) = ids(org, ws)?;
        store.put_membership(&org, sub, &ws, role).await?;
    }
    Ok(())
}
