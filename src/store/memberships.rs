//! Organizations, workspaces and memberships.

use aws_sdk_dynamodb::types::AttributeValue;

use super::items::Item;
use super::keys::{self, PK, SK};
use super::{Store, StoreError, get_s, s};
use crate::domain::{OrgId, Role, Tenant, WorkspaceId};

/// An organization's workspaces, as every request's resolution reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrgWorkspaces {
    /// The organization exists (it was created).
    pub exists: bool,
    pub all: Vec<WorkspaceId>,
    pub archived: Vec<WorkspaceId>,
}

impl Store {
    /// Every workspace the caller belongs to, with the role (one query).
    pub async fn memberships(&self, org: &OrgId, sub: &str) -> Result<Vec<(WorkspaceId, Role)>, StoreError> {
        let items = self.subject_items(org, sub, keys::WORKSPACE_PREFIX).await?;
        Ok(items
            .iter()
            .filter_map(|item| {
                let ws = get_s(item, "workspace_id").ok().and_then(WorkspaceId::parse)?;
                Some((ws, get_s(item, "role").ok().and_then(Role::parse)?))
            })
            .collect())
    }

    /// The items of a subject's partition whose sort key starts with `prefix`.
    async fn subject_items(&self, org: &OrgId, sub: &str, prefix: &str) -> Result<Vec<Item>, StoreError> {
        let out = self
            .client()
            .query()
            .table_name(self.table())
            .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#sk", SK)
            .expression_attribute_values(":pk", s(keys::member_pk(org, sub)))
            .expression_attribute_values(":prefix", s(prefix))
            .send()
            .await?;
        Ok(out.items.unwrap_or_default())
    }

    /// Every workspace of an organization and those archived (one read).
    pub async fn org_workspaces(&self, org: &OrgId) -> Result<OrgWorkspaces, StoreError> {
        let out = self
            .client()
            .get_item()
            .table_name(self.table())
            .key(PK, s(keys::tenant(org)))
            .key(SK, s(keys::ORG_META))
            .send()
            .await?;
        let ids = |name: &str| {
            let mut ids: Vec<WorkspaceId> = match out.item.as_ref().and_then(|i| i.get(name)) {
                Some(AttributeValue::Ss(ids)) => ids.iter().filter_map(|w| WorkspaceId::parse(w)).collect(),
                _ => Vec::new(),
            };
            ids.sort();
            ids
        };
        Ok(OrgWorkspaces { exists: out.item.is_some(), all: ids("workspace_ids"), archived: ids("archived_ids") })
    }

    /// Whether `sub` is registered as the mail pipeline of `ws` (one read).
    pub async fn is_ingestion_client(&self, org: &OrgId, sub: &str, ws: &WorkspaceId) -> Result<bool, StoreError> {
        let out = self
            .client()
            .get_item()
            .table_name(self.table())
            .key(PK, s(keys::member_pk(org, sub)))
            .key(SK, s(keys::ingest_sk(ws)))
            .send()
            .await?;
        Ok(out.item.is_some())
    }

    /// Every workspace `sub` may ingest into (one query).
    pub async fn ingestion_workspaces(&self, org: &OrgId, sub: &str) -> Result<Vec<WorkspaceId>, StoreError> {
        let items = self.subject_items(org, sub, keys::INGEST_PREFIX).await?;
        let mut found: Vec<WorkspaceId> =
            items.iter().filter_map(|item| get_s(item, "workspace_id").ok().and_then(WorkspaceId::parse)).collect();
        found.sort();
        Ok(found)
    }
}

impl Store {
    /// The display name of a workspace.
    pub async fn workspace_name(&self, t: &Tenant) -> Result<Option<String>, StoreError> {
        #[derive(serde::Deserialize)]
        struct Ws {
            name: String,
        }
        Ok(self.get::<Ws>(keys::tenant(&t.org), keys::workspace_sk(&t.workspace)).await?.map(|w| w.name))
    }
}
