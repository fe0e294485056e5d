//! What the worker reads of the table's stream: which item a record is
//! about, in the table's own attribute names (they are named only in
//! `store`). The worker decides what to do with it.

use serde::Deserialize;

use super::keys;
use inbox_domain::{OrgId, Role, Tenant, WorkspaceId};

/// The item a stream record is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamItem {
    /// A new job (an `INSERT`), with the tenant it belongs to (its item names it).
    NewJob { tenant: Tenant, id: String },
    /// An audit record: its partition and sort key.
    Audit { partition: String, record: String },
    /// Anything else.
    Other,
}

#[derive(Deserialize)]
struct Keys {
    pk: String,
    sk: String,
}

#[derive(Deserialize)]
struct JobImage {
    id: String,
    org_id: String,
    workspace_id: String,
}

/// Reads a record's keys and, for a new job, its new image. `Err` names what
/// could not be read (a job item without a valid tenant, say): a defect, to
/// be logged by the caller.
pub fn item_of(
    event_name: &str,
    keys: serde_dynamo::Item,
    new_image: serde_dynamo::Item,
) -> Result<StreamItem, String> {
    let Ok(Keys { pk, sk }) = serde_dynamo::from_item::<_, Keys>(keys) else { return Ok(StreamItem::Other) };
    if sk.starts_with(keys::AUDIT_PREFIX) {
        return Ok(StreamItem::Audit { partition: pk, record: sk });
    }
    if event_name != "INSERT" || !sk.starts_with(&keys::job("")) {
        return Ok(StreamItem::Other);
    }
    let image = serde_dynamo::from_item::<_, JobImage>(new_image).map_err(|e| format!("job item {sk}: {e}"))?;
    match (OrgId::parse(&image.org_id), WorkspaceId::parse(&image.workspace_id)) {
        (Some(org), Some(workspace)) => {
            Ok(StreamItem::NewJob { tenant: Tenant::new(org, workspace, Role::Viewer), id: image.id })
        }
        _ => Err(format!("job item {} names no valid tenant", image.id)),
    }
}
