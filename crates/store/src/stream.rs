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
    /// A new data-subject request (an `INSERT`).
    NewDataRequest { org: OrgId, id: String },
    /// An e-mail item removed (a soft-deleted e-mail's grace period ended,
    /// or an erased one's tombstone expired): its files and index entries
    /// are to go too.
    EmailRemoved { tenant: Tenant, id: String },
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
    if event_name == "REMOVE"
        && let Some(id) = sk.strip_prefix(&keys::email(""))
    {
        return match workspace_of(&pk) {
            Some((org, workspace)) => {
                Ok(StreamItem::EmailRemoved { tenant: Tenant::new(org, workspace, Role::Viewer), id: id.to_owned() })
            }
            None => Err(format!("e-mail item {sk} is in no workspace's partition")),
        };
    }
    if event_name == "INSERT" && sk.starts_with(keys::DATA_REQUEST_PREFIX) {
        #[derive(Deserialize)]
        struct RequestImage {
            id: String,
            org_id: String,
        }
        let image =
            serde_dynamo::from_item::<_, RequestImage>(new_image).map_err(|e| format!("data request {sk}: {e}"))?;
        return match OrgId::parse(&image.org_id) {
            Some(org) => Ok(StreamItem::NewDataRequest { org, id: image.id }),
            None => Err(format!("data request {} names no valid organization", image.id)),
        };
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

/// The organization and workspace of a workspace partition or shard
/// (`T#{org}#W#{ws}` or `T#{org}#W#{ws}#S{n}`).
fn workspace_of(pk: &str) -> Option<(OrgId, WorkspaceId)> {
    let rest = pk.strip_prefix("T#")?;
    let (org, rest) = rest.split_once("#W#")?;
    let ws = rest.split('#').next()?;
    Some((OrgId::parse(org)?, WorkspaceId::parse(ws)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::AttributeValue;

    fn item(pairs: &[(&str, &str)]) -> serde_dynamo::Item {
        let map: std::collections::HashMap<String, AttributeValue> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), AttributeValue::S((*v).to_owned()))).collect();
        serde_dynamo::Item::from(map)
    }

    #[test]
    fn a_removed_email_names_its_workspace_from_any_shard() {
        for pk in ["T#org_a#W#ws_main", "T#org_a#W#ws_main#S3"] {
            let read = item_of("REMOVE", item(&[("pk", pk), ("sk", "EML#eml_1")]), item(&[]));
            let StreamItem::EmailRemoved { tenant, id } = read.unwrap() else { panic!("{pk}: not a removed e-mail") };
            assert_eq!((tenant.org.as_str(), tenant.workspace.as_str(), id.as_str()), ("org_a", "ws_main", "eml_1"));
        }
        // Not in a workspace's partition: a defect to report.
        assert!(item_of("REMOVE", item(&[("pk", "T#org_a"), ("sk", "EML#eml_1")]), item(&[])).is_err());
        // A new or changed e-mail is nothing for the worker.
        let changed = item_of("MODIFY", item(&[("pk", "T#org_a#W#ws_main"), ("sk", "EML#eml_1")]), item(&[]));
        assert_eq!(changed.unwrap(), StreamItem::Other);
    }

    #[test]
    fn a_new_data_request_names_its_organization_from_its_image() {
        let keys = item(&[("pk", "T#org_a"), ("sk", "DSR#dsr_1")]);
        let image = item(&[("id", "dsr_1"), ("org_id", "org_a")]);
        let read = item_of("INSERT", keys.clone(), image).unwrap();
        assert_eq!(read, StreamItem::NewDataRequest { org: OrgId::parse("org_a").unwrap(), id: "dsr_1".into() });
        assert!(item_of("INSERT", keys.clone(), item(&[("id", "dsr_1"), ("org_id", "no/org")])).is_err());
        // Its later changes (running, succeeded) are not run again.
        assert_eq!(item_of("MODIFY", keys, item(&[])).unwrap(), StreamItem::Other);
    }
}
