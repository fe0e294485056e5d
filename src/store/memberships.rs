//! Organizations, workspaces and memberships.

use aws_sdk_dynamodb::types::AttributeValue;

use super::items::Item;
use super::keys::{self, PK, SK};
use super::{Store, StoreError, get_s, s};
use crate::domain::{OrgId, Role, Tenant, WorkspaceId};

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

    /// The ids of every workspace of an organization (one read).
    pub async fn org_workspaces(&self, org: &OrgId) -> Result<Vec<WorkspaceId>, StoreError> {
        let out = self
            .client()
            .get_item()
            .table_name(self.table())
            .key(PK, s(keys::tenant(org)))
            .key(SK, s(keys::ORG_META))
            .send()
            .await?;
        let mut ids: Vec<WorkspaceId> = match out.item.as_ref().and_then(|i| i.get("workspace_ids")) {
            Some(AttributeValue::Ss(ids)) => ids.iter().filter_map(|w| WorkspaceId::parse(w)).collect(),
            _ => Vec::new(),
        };
        ids.sort();
        Ok(ids)
    }

    /// Creates or renames a workspace and records it on its organization.
    pub async fn put_workspace(&self, org: &OrgId, ws: &WorkspaceId, name: &str) -> Result<(), StoreError> {
        self.client()
            .put_item()
            .table_name(self.table())
            .item(PK, s(keys::tenant(org)))
            .item(SK, s(keys::workspace_sk(ws)))
            .item("workspace_id", s(ws.as_str()))
            .item("name", s(name))
            .send()
            .await?;
        self.client()
            .update_item()
            .table_name(self.table())
            .key(PK, s(keys::tenant(org)))
            .key(SK, s(keys::ORG_META))
            .update_expression("ADD workspace_ids :ws")
            .expression_attribute_values(":ws", AttributeValue::Ss(vec![ws.as_str().to_owned()]))
            .send()
            .await?;
        Ok(())
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

    /// Registers `sub` (a machine client) as the mail pipeline of `ws`.
    pub async fn put_ingestion_client(&self, org: &OrgId, sub: &str, ws: &WorkspaceId) -> Result<(), StoreError> {
        self.client()
            .put_item()
            .table_name(self.table())
            .item(PK, s(keys::member_pk(org, sub)))
            .item(SK, s(keys::ingest_sk(ws)))
            .item("workspace_id", s(ws.as_str()))
            .item("sub", s(sub))
            .send()
            .await?;
        Ok(())
    }

    pub async fn put_membership(&self, org: &OrgId, sub: &str, ws: &WorkspaceId, role: Role) -> Result<(), StoreError> {
        self.client()
            .put_item()
            .table_name(self.table())
            .item(PK, s(keys::member_pk(org, sub)))
            .item(SK, s(keys::workspace_sk(ws)))
            .item("workspace_id", s(ws.as_str()))
            .item("sub", s(sub))
            .item("role", s(role.as_str()))
            .send()
            .await?;
        Ok(())
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
