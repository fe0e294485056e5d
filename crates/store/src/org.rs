//! Organization administration: organizations, workspaces, members, mail
//! pipeline registrations and organization administrators.
//!
//! Every change is one transaction with its audit record. A grant is written
//! under the person (what requests read) and under what it is about (what
//! the administration lists read), in the same transaction. Two counters keep
//! the "never the last one" rules safe under concurrent calls: `admins` on a
//! workspace (its members with the admin role) and `org_admins` on the
//! organization; taking one away is conditional on more than one being left.

use aws_sdk_dynamodb::types::{AttributeValue, Delete, Put, TransactWriteItem, Update};

use super::items::{Item, Keys, ListQuery, Page, Position, to_item};
use super::keys::{self, PK, SK};
use super::writes::{Audit, built, put};
use super::{Store, StoreError, n, s};
use inbox_domain::records::{Grant, Member, Workspace, WorkspaceStatus};
use inbox_domain::{OrgId, Role, Shards, Tenant, WorkspaceId};

/// Why a grant could not be taken away.
#[derive(Debug, PartialEq, Eq)]
pub enum Removal {
    Removed,
    /// There was nothing to take away.
    NotFound,
    /// It is the last one (the last admin of a workspace, the last
    /// organization administrator).
    LastOne,
}

fn item_with(pk: String, sk: String, record: &impl serde::Serialize) -> Result<Item, StoreError> {
    to_item(Keys::new(pk, sk), record)
}

fn delete(table: &str, pk: String, sk: String, condition: Option<&str>) -> Result<TransactWriteItem, StoreError> {
    let delete = built(
        Delete::builder()
            .table_name(table)
            .key(PK, s(pk))
            .key(SK, s(sk))
            .set_condition_expression(condition.map(Into::into))
            .build(),
    )?;
    Ok(TransactWriteItem::builder().delete(delete).build())
}

/// `ADD {counter} :by` on an item, conditional on more than one being left
/// when taking one away.
fn count(table: &str, pk: String, sk: String, counter: &str, by: i64) -> Result<TransactWriteItem, StoreError> {
    let mut update = Update::builder()
        .table_name(table)
        .key(PK, s(pk))
        .key(SK, s(sk))
        .update_expression("ADD #c :by")
        .expression_attribute_names("#c", counter)
        .expression_attribute_values(":by", n(by));
    if by < 0 {
        update = update.condition_expression("#c > :one").expression_attribute_values(":one", n(1));
    }
    Ok(TransactWriteItem::builder().update(built(update.build())?).build())
}

fn tenant_of(org: &OrgId, ws: &WorkspaceId) -> Tenant {
    Tenant::new(org.clone(), ws.clone(), Role::Admin)
}

impl Store {
    /// Names the organization, creating its record when it has none yet.
    pub async fn set_org_name(&self, org: &OrgId, name: &str, audit: Option<&Audit<'_>>) -> Result<(), StoreError> {
        let update = built(
            Update::builder()
                .table_name(self.table())
                .key(PK, s(keys::tenant(org)))
                .key(SK, s(keys::ORG_META))
                .update_expression("SET #name = :name, created_at = if_not_exists(created_at, :now)")
                .expression_attribute_names("#name", "name")
                .expression_attribute_values(":name", s(name))
                .expression_attribute_values(":now", s(inbox_support::sys::now_string()))
                .build(),
        )?;
        let items = vec![TransactWriteItem::builder().update(update).build()];
        self.transact_audited(&Tenant::organization(org.clone()), items, audit).await
    }

    /// Whether `sub` holds `org_admin` in the organization (one read).
    pub async fn is_org_admin(&self, org: &OrgId, sub: &str) -> Result<bool, StoreError> {
        Ok(self.item(keys::member_pk(org, sub), keys::ORG_ADMIN.into()).await?.is_some())
    }

    /// An organization administrator, as listed.
    pub async fn get_org_admin(&self, org: &OrgId, sub: &str) -> Result<Option<Grant>, StoreError> {
        self.get(keys::tenant(org), keys::org_admin_listed(sub)).await
    }

    pub async fn list_org_admins(
        &self,
        org: &OrgId,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<Grant>, StoreError> {
        self.list(&ListQuery::base(keys::tenant(org), keys::ORG_ADMIN_PREFIX.into()), limit, start).await
    }

    /// Makes `grant.subject` an organization administrator; false when they
    /// already are (nothing is written). The first one's write creates the
    /// organization's record.
    pub async fn add_org_admin(
        &self,
        org: &OrgId,
        grant: &Grant,
        audit: Option<&Audit<'_>>,
    ) -> Result<bool, StoreError> {
        let table = self.table();
        let person = item_with(keys::member_pk(org, &grant.subject), keys::ORG_ADMIN.into(), grant)?;
        let listed = item_with(keys::tenant(org), keys::org_admin_listed(&grant.subject), grant)?;
        let items = vec![
            // Already one: the condition fails and nothing of the transaction is written.
            put(table, person, Some("attribute_not_exists(pk)"))?,
            put(table, listed, None)?,
            count(table, keys::tenant(org), keys::ORG_META.into(), "org_admins", 1)?,
        ];
        match self.transact_audited(&Tenant::organization(org.clone()), items, audit).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict) => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub async fn remove_org_admin(&self, org: &OrgId, sub: &str, audit: &Audit<'_>) -> Result<Removal, StoreError> {
        let table = self.table();
        let items = vec![
            delete(table, keys::member_pk(org, sub), keys::ORG_ADMIN.into(), Some("attribute_exists(pk)"))?,
            delete(table, keys::tenant(org), keys::org_admin_listed(sub), None)?,
            count(table, keys::tenant(org), keys::ORG_META.into(), "org_admins", -1)?,
        ];
        match self.transact_audited(&Tenant::organization(org.clone()), items, Some(audit)).await {
            Ok(()) => Ok(Removal::Removed),
            // A failed condition: not an administrator, or the last one (still one after it).
            Err(StoreError::Conflict) if self.is_org_admin(org, sub).await? => Ok(Removal::LastOne),
            Err(StoreError::Conflict) => Ok(Removal::NotFound),
            Err(e) => Err(e),
        }
    }

    pub async fn list_workspaces(
        &self,
        org: &OrgId,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<Workspace>, StoreError> {
        self.list(&ListQuery::base(keys::tenant(org), keys::WORKSPACE_PREFIX.into()), limit, start).await
    }

    pub async fn get_workspace(&self, org: &OrgId, ws: &WorkspaceId) -> Result<Option<Workspace>, StoreError> {
        self.get(keys::tenant(org), keys::workspace_sk(ws)).await
    }

    /// Whether a workspace of the organization has `slug` (one read: what
    /// `create_workspace`'s condition checks, read first so that a dry run
    /// answers as the real run would).
    pub async fn workspace_slug_taken(&self, org: &OrgId, slug: &str) -> Result<bool, StoreError> {
        Ok(self.item(keys::tenant(org), keys::workspace_slug(slug)).await?.is_some())
    }

    /// Raises workspace `ws`'s write shards (`set_write_shards`) and, when
    /// that changed them, writes the call's audit record right after, in
    /// the workspace's trail. The raise is two updates of the
    /// organization's record, not one transaction, so the record follows
    /// the change instead of sharing its transaction. Nothing to do (the
    /// count it has): no record here; the caller writes the call's lone one.
    pub async fn raise_write_shards(
        &self,
        org: &OrgId,
        ws: &WorkspaceId,
        count: u16,
        now: u64,
        audit: &Audit<'_>,
    ) -> Result<Shards, StoreError> {
        let before = self.org_workspaces(org).await?.shards.get(ws).copied().unwrap_or_default();
        let after = self.set_write_shards(org, ws, count, now).await?;
        if after != before {
            self.transact_audited(&tenant_of(org, ws), Vec::new(), Some(audit)).await?;
        }
        Ok(after)
    }

    /// Creates a workspace with its slug reserved and its id added to the
    /// organization's; `Conflict` when the slug is taken.
    pub async fn create_workspace(
        &self,
        org: &OrgId,
        w: &Workspace,
        audit: Option<&Audit<'_>>,
    ) -> Result<(), StoreError> {
        let table = self.table();
        let ws = WorkspaceId::parse(&w.id).ok_or_else(|| StoreError::Corrupt("a workspace id".into()))?;
        let mut record = item_with(keys::tenant(org), keys::workspace_sk(&ws), w)?;
        record.insert("workspace_id".into(), s(ws.as_str()));
        record.insert("admins".into(), n(0));
        let mut slug = Item::new();
        slug.insert(PK.into(), s(keys::tenant(org)));
        slug.insert(SK.into(), s(keys::workspace_slug(&w.slug)));
        slug.insert("workspace_id".into(), s(ws.as_str()));
        let listed = built(
            Update::builder()
                .table_name(table)
                .key(PK, s(keys::tenant(org)))
                .key(SK, s(keys::ORG_META))
                .update_expression("ADD workspace_ids :ws")
                .expression_attribute_values(":ws", AttributeValue::Ss(vec![ws.as_str().to_owned()]))
                .build(),
        )?;
        let items = vec![
            put(table, record, Some("attribute_not_exists(pk)"))?,
            put(table, slug, Some("attribute_not_exists(pk)"))?,
            TransactWriteItem::builder().update(listed).build(),
        ];
        self.transact_audited(&tenant_of(org, &ws), items, audit).await
    }

    /// Writes a workspace's new name or status, if it is unchanged since it
    /// was read (`Conflict` otherwise); archiving adds it to the
    /// organization's archived ids, which every request's resolution reads.
    pub async fn update_workspace(
        &self,
        org: &OrgId,
        w: &Workspace,
        previous_updated_at: &str,
        audit: &Audit<'_>,
    ) -> Result<(), StoreError> {
        let table = self.table();
        let ws = WorkspaceId::parse(&w.id).ok_or_else(|| StoreError::Corrupt("a workspace id".into()))?;
        let update = built(
            Update::builder()
                .table_name(table)
                .key(PK, s(keys::tenant(org)))
                .key(SK, s(keys::workspace_sk(&ws)))
                .update_expression("SET #name = :name, #status = :status, updated_at = :now")
                .condition_expression("updated_at = :prev")
                .expression_attribute_names("#name", "name")
                .expression_attribute_names("#status", "status")
                .expression_attribute_values(":name", s(&w.name))
                .expression_attribute_values(":status", s(w.status.as_str()))
                .expression_attribute_values(":now", s(&w.updated_at))
                .expression_attribute_values(":prev", s(previous_updated_at))
                .build(),
        )?;
        let mut items = vec![TransactWriteItem::builder().update(update).build()];
        if w.status == WorkspaceStatus::Archived {
            let archived = built(
                Update::builder()
                    .table_name(table)
                    .key(PK, s(keys::tenant(org)))
                    .key(SK, s(keys::ORG_META))
                    .update_expression("ADD archived_ids :ws")
                    .expression_attribute_values(":ws", AttributeValue::Ss(vec![ws.as_str().to_owned()]))
                    .build(),
            )?;
            items.push(TransactWriteItem::builder().update(archived).build());
        }
        self.transact_audited(&tenant_of(org, &ws), items, Some(audit)).await
    }

    /// The admins of a workspace (its `admins` counter).
    pub async fn workspace_admins(&self, org: &OrgId, ws: &WorkspaceId) -> Result<u64, StoreError> {
        let item = self.item(keys::tenant(org), keys::workspace_sk(ws)).await?;
        Ok(match item.as_ref().and_then(|i| i.get("admins")) {
            Some(AttributeValue::N(count)) => count.parse().unwrap_or(0),
            _ => 0,
        })
    }

    pub async fn list_members(
        &self,
        t: &Tenant,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<Member>, StoreError> {
        self.list(&ListQuery::base(keys::ws(&t.org, &t.workspace), keys::MEMBER_PREFIX.into()), limit, start).await
    }

    pub async fn get_member(&self, t: &Tenant, sub: &str) -> Result<Option<Member>, StoreError> {
        self.get(keys::ws(&t.org, &t.workspace), keys::member_listed(sub)).await
    }

    /// Gives `member.subject` the role `member.role` in the workspace `t`;
    /// `previous` is the role read before (`None`: not a member). Conditional
    /// on that reading, and on the workspace keeping an admin when an admin
    /// stops being one: `Conflict` otherwise.
    pub async fn set_member(
        &self,
        t: &Tenant,
        member: &Member,
        previous: Option<Role>,
        audit: Option<&Audit<'_>>,
    ) -> Result<(), StoreError> {
        let table = self.table();
        let mut person = Item::new();
        person.insert(PK.into(), s(keys::member_pk(&t.org, &member.subject)));
        person.insert(SK.into(), s(keys::workspace_sk(&t.workspace)));
        person.insert("workspace_id".into(), s(t.workspace.as_str()));
        person.insert("sub".into(), s(&member.subject));
        person.insert("role".into(), s(member.role.as_str()));
        let listed = item_with(keys::ws(&t.org, &t.workspace), keys::member_listed(&member.subject), member)?;
        let listed = match previous {
            None => put(table, listed, Some("attribute_not_exists(pk)"))?,
            Some(role) => {
                let put = built(
                    Put::builder()
                        .table_name(table)
                        .set_item(Some(listed))
                        .condition_expression("#role = :prev")
                        .expression_attribute_names("#role", "role")
                        .expression_attribute_values(":prev", s(role.as_str()))
                        .build(),
                )?;
                TransactWriteItem::builder().put(put).build()
            }
        };
        let mut items = vec![put(table, person, None)?, listed];
        let was_admin = previous == Some(Role::Admin);
        let is_admin = member.role == Role::Admin;
        if was_admin != is_admin {
            let by = if is_admin { 1 } else { -1 };
            items.push(count(table, keys::tenant(&t.org), keys::workspace_sk(&t.workspace), "admins", by)?);
        }
        self.transact_audited(t, items, audit).await
    }

    /// Takes `sub` out of the workspace `t`, where they had the role `previous`.
    pub async fn remove_member(
        &self,
        t: &Tenant,
        sub: &str,
        previous: Role,
        audit: &Audit<'_>,
    ) -> Result<(), StoreError> {
        let table = self.table();
        let listed = built(
            Delete::builder()
                .table_name(table)
                .key(PK, s(keys::ws(&t.org, &t.workspace)))
                .key(SK, s(keys::member_listed(sub)))
                .condition_expression("#role = :prev")
                .expression_attribute_names("#role", "role")
                .expression_attribute_values(":prev", s(previous.as_str()))
                .build(),
        )?;
        let mut items = vec![
            delete(table, keys::member_pk(&t.org, sub), keys::workspace_sk(&t.workspace), None)?,
            TransactWriteItem::builder().delete(listed).build(),
        ];
        if previous == Role::Admin {
            items.push(count(table, keys::tenant(&t.org), keys::workspace_sk(&t.workspace), "admins", -1)?);
        }
        self.transact_audited(t, items, Some(audit)).await
    }

    pub async fn list_pipelines(
        &self,
        t: &Tenant,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<Grant>, StoreError> {
        self.list(&ListQuery::base(keys::ws(&t.org, &t.workspace), keys::PIPELINE_PREFIX.into()), limit, start).await
    }

    /// A mail pipeline registration, as listed.
    pub async fn get_pipeline(&self, t: &Tenant, sub: &str) -> Result<Option<Grant>, StoreError> {
        self.get(keys::ws(&t.org, &t.workspace), keys::pipeline_listed(sub)).await
    }

    /// Registers `grant.subject` as a mail pipeline of the workspace `t`;
    /// false when it already is (nothing is written).
    pub async fn register_pipeline(
        &self,
        t: &Tenant,
        grant: &Grant,
        audit: Option<&Audit<'_>>,
    ) -> Result<bool, StoreError> {
        let table = self.table();
        let mut person = Item::new();
        person.insert(PK.into(), s(keys::member_pk(&t.org, &grant.subject)));
        person.insert(SK.into(), s(keys::ingest_sk(&t.workspace)));
        person.insert("workspace_id".into(), s(t.workspace.as_str()));
        person.insert("sub".into(), s(&grant.subject));
        let listed = item_with(keys::ws(&t.org, &t.workspace), keys::pipeline_listed(&grant.subject), grant)?;
        let items = vec![put(table, person, Some("attribute_not_exists(pk)"))?, put(table, listed, None)?];
        match self.transact_audited(t, items, audit).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Takes back a registration; false when there was none.
    pub async fn unregister_pipeline(&self, t: &Tenant, sub: &str, audit: &Audit<'_>) -> Result<bool, StoreError> {
        let table = self.table();
        let items = vec![
            delete(table, keys::member_pk(&t.org, sub), keys::ingest_sk(&t.workspace), Some("attribute_exists(pk)"))?,
            delete(table, keys::ws(&t.org, &t.workspace), keys::pipeline_listed(sub), None)?,
        ];
        match self.transact_audited(t, items, Some(audit)).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict) => Ok(false),
            Err(e) => Err(e),
        }
    }
}
