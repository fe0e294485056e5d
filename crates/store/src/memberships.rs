//! Organizations, workspaces and memberships.

use aws_sdk_dynamodb::types::AttributeValue;

use super::items::Item;
use super::keys::{self, PK, SK};
use super::{Store, StoreError, get_s, s};
use inbox_domain::provenance::ContentPolicy;
use inbox_domain::shards::RaiseRefused;
use inbox_domain::{OrgId, Role, Shards, Tenant, WorkspaceId};

/// An organization's workspaces, as every request's resolution reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrgWorkspaces {
    /// The organization exists (it was created).
    pub exists: bool,
    pub all: Vec<WorkspaceId>,
    pub archived: Vec<WorkspaceId>,
    /// The write shards of workspaces that have more than one.
    pub shards: std::collections::BTreeMap<WorkspaceId, Shards>,
    /// The content policies workspaces chose (`ContentPolicy::default()` for
    /// the others).
    pub policies: std::collections::BTreeMap<WorkspaceId, ContentPolicy>,
    /// The retention (days) workspaces chose (`retention::DEFAULT_DAYS` for the others).
    pub retention: std::collections::BTreeMap<WorkspaceId, u32>,
}

impl OrgWorkspaces {
    /// A workspace's content policy.
    pub fn policy(&self, ws: &WorkspaceId) -> ContentPolicy {
        self.policies.get(ws).copied().unwrap_or_default()
    }

    /// A workspace's retention of e-mail content, in days.
    pub fn retention(&self, ws: &WorkspaceId) -> u32 {
        self.retention.get(ws).copied().unwrap_or(inbox_domain::retention::DEFAULT_DAYS)
    }
}

/// The organization item's `retention_days` map: workspace id → days.
const RETENTION: &str = "retention_days";

/// The organization item's `content_policies` map: workspace id → policy name.
const CONTENT_POLICIES: &str = "content_policies";

/// The organization item's `write_shards` map: workspace id → `{count, previous, changed_at}`.
pub(super) const WRITE_SHARDS: &str = "write_shards";

/// One workspace's entry of `write_shards`, when well-formed.
pub(super) fn shards_of(value: &AttributeValue) -> Option<Shards> {
    let AttributeValue::M(fields) = value else { return None };
    let number = |name: &str| match fields.get(name) {
        Some(AttributeValue::N(n)) => n.parse::<u64>().ok(),
        _ => None,
    };
    let count = u16::try_from(number("count")?).ok()?;
    let previous = u16::try_from(number("previous")?).ok()?;
    Some(Shards { count, previous, changed_at: number("changed_at")? })
}

/// `shards` as a `write_shards` entry.
pub(super) fn shards_value(shards: &Shards) -> AttributeValue {
    AttributeValue::M(
        [
            ("count".to_owned(), AttributeValue::N(shards.count.to_string())),
            ("previous".to_owned(), AttributeValue::N(shards.previous.to_string())),
            ("changed_at".to_owned(), AttributeValue::N(shards.changed_at.to_string())),
        ]
        .into_iter()
        .collect(),
    )
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
        let shards = match out.item.as_ref().and_then(|i| i.get(WRITE_SHARDS)) {
            Some(AttributeValue::M(map)) => {
                map.iter().filter_map(|(ws, value)| Some((WorkspaceId::parse(ws)?, shards_of(value)?))).collect()
            }
            _ => std::collections::BTreeMap::new(),
        };
        let policies = match out.item.as_ref().and_then(|i| i.get(CONTENT_POLICIES)) {
            Some(AttributeValue::M(map)) => map
                .iter()
                .filter_map(|(ws, value)| {
                    let AttributeValue::S(name) = value else { return None };
                    Some((WorkspaceId::parse(ws)?, ContentPolicy::parse(name)?))
                })
                .collect(),
            _ => std::collections::BTreeMap::new(),
        };
        let retention = match out.item.as_ref().and_then(|i| i.get(RETENTION)) {
            Some(AttributeValue::M(map)) => map
                .iter()
                .filter_map(|(ws, value)| {
                    let AttributeValue::N(days) = value else { return None };
                    Some((WorkspaceId::parse(ws)?, days.parse::<u32>().ok()?))
                })
                .collect(),
            _ => std::collections::BTreeMap::new(),
        };
        Ok(OrgWorkspaces {
            exists: out.item.is_some(),
            all: ids("workspace_ids"),
            archived: ids("archived_ids"),
            shards,
            policies,
            retention,
        })
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

impl Store {
    /// Raises the write shards of workspace `ws` to `count` at `now`
    /// (`inbox_domain::shards`): the new count is read at once and written
    /// after the delay. `NotFound`: not a workspace of the organization;
    /// `Conflict`: a lower count than the workspace may already use, over
    /// the maximum, or a concurrent change (read again and retry);
    /// `ShardsRaisedRecently`: the last raise's grace has not passed
    /// (`Shards::raise`: one raise per grace, so no keyed record is lost).
    pub async fn set_write_shards(
        &self,
        org: &OrgId,
        ws: &WorkspaceId,
        count: u16,
        now: u64,
    ) -> Result<Shards, StoreError> {
        let current = self.org_workspaces(org).await?;
        if !current.all.contains(ws) {
            return Err(StoreError::NotFound);
        }
        let old = current.shards.get(ws).copied().unwrap_or_default();
        let new = old.raise(count, now).map_err(|refused| match refused {
            RaiseRefused::InvalidCount => StoreError::Conflict,
            RaiseRefused::TooSoon { from } => StoreError::ShardsRaisedRecently { from },
        })?;
        if new == old {
            return Ok(old);
        }
        let key = |request: aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder| {
            request.table_name(self.table()).key(PK, s(keys::tenant(org))).key(SK, s(keys::ORG_META))
        };
        self.ensure_org_map(org, WRITE_SHARDS).await?;
        key(self.client().update_item())
            .update_expression("SET #m.#ws = :new")
            .condition_expression("attribute_not_exists(#m.#ws) OR #m.#ws.#count = :old")
            .expression_attribute_names("#m", WRITE_SHARDS)
            .expression_attribute_names("#ws", ws.as_str())
            .expression_attribute_names("#count", "count")
            .expression_attribute_values(":new", shards_value(&new))
            .expression_attribute_values(":old", AttributeValue::N(old.count.to_string()))
            .send()
            .await?;
        Ok(new)
    }

    /// Creates the organization item's map attribute `name` when it has none:
    /// an update cannot create a map and a member of it at once.
    async fn ensure_org_map(&self, org: &OrgId, name: &str) -> Result<(), StoreError> {
        self.client()
            .update_item()
            .table_name(self.table())
            .key(PK, s(keys::tenant(org)))
            .key(SK, s(keys::ORG_META))
            .update_expression("SET #m = if_not_exists(#m, :empty)")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_names("#m", name)
            .expression_attribute_values(":empty", AttributeValue::M(std::collections::HashMap::new()))
            .send()
            .await?;
        Ok(())
    }

    /// Sets a workspace's content policy on the organization's item (where
    /// every request's tenant resolution reads it, cached per container);
    /// the policy it had before. `NotFound` for a workspace the organization
    /// does not list.
    pub async fn set_content_policy(
        &self,
        t: &Tenant,
        policy: ContentPolicy,
        audit: Option<&super::Audit<'_>>,
    ) -> Result<ContentPolicy, StoreError> {
        let (org, ws) = (&t.org, &t.workspace);
        let current = self.org_workspaces(org).await?;
        if !current.all.contains(ws) {
            return Err(StoreError::NotFound);
        }
        let key = |request: aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder| {
            request.table_name(self.table()).key(PK, s(keys::tenant(org))).key(SK, s(keys::ORG_META))
        };
        self.ensure_org_map(org, CONTENT_POLICIES).await?;
        key(self.client().update_item())
            .update_expression("SET #m.#ws = :p")
            .expression_attribute_names("#m", CONTENT_POLICIES)
            .expression_attribute_names("#ws", ws.as_str())
            .expression_attribute_values(":p", s(policy.as_str()))
            .send()
            .await?;
        if audit.is_some() {
            self.transact_audited(t, Vec::new(), audit).await?;
        }
        Ok(current.policy(ws))
    }

    /// Sets a workspace's retention of e-mail content (days) on the
    /// organization's item, read with the tenancy like its content policy;
    /// the retention it had before. `NotFound` for a workspace the
    /// organization does not list.
    pub async fn set_retention(
        &self,
        t: &Tenant,
        days: u32,
        audit: Option<&super::Audit<'_>>,
    ) -> Result<u32, StoreError> {
        let (org, ws) = (&t.org, &t.workspace);
        let current = self.org_workspaces(org).await?;
        if !current.all.contains(ws) {
            return Err(StoreError::NotFound);
        }
        self.ensure_org_map(org, RETENTION).await?;
        self.client()
            .update_item()
            .table_name(self.table())
            .key(PK, s(keys::tenant(org)))
            .key(SK, s(keys::ORG_META))
            .update_expression("SET #m.#ws = :d")
            .expression_attribute_names("#m", RETENTION)
            .expression_attribute_names("#ws", ws.as_str())
            .expression_attribute_values(":d", super::n(u64::from(days)))
            .send()
            .await?;
        if audit.is_some() {
            self.transact_audited(t, Vec::new(), audit).await?;
        }
        Ok(current.retention(ws))
    }
}
