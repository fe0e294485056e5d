//! Organization administration, for the people who hold `org_admin` in
//! their organization (scope `org:admin`): its workspaces (create, list,
//! get, rename, archive — never a hard delete), each workspace's members and
//! mail pipeline registrations, the organization's administrators, and the
//! organization's own audit trail. Routes under `/org`, no `X-Workspace-Id`:
//! the workspace is the path's `{id}`.
//!
//! Not MCP tools: an agent does not administer tenancy. The command line
//! (`kobana-inbox-mcp admin …`) calls these same operations.
//!
//! Each change writes its audit record in its transaction: in the trail of
//! the workspace it changes, or, for the organization's administrators, in
//! the organization's own trail (`GET /org/audit`). A workspace keeps at
//! least one admin once it has one, and the organization at least one
//! administrator (409 `last_admin`, `last_org_admin`). A membership change
//! takes effect within the membership cache's lifetime
//! (`MEMBERSHIP_CACHE_SECS`, 30 s by default); `org_admin` is read on every
//! administration call, so taking it away takes effect at once.
//!
//! Every condition a change's transaction checks (a slug taken, the last
//! admin, a grant that is not there) is also read before it, and refused
//! with the same answer: the transaction's condition still settles a race,
//! and a dry run (`admin … --dry-run`, which writes nothing) answers what
//! the real run would.
//!
//! `WORKSPACE_SHARDS` (raising a workspace's write shards) is the
//! operator's, run by `admin workspace shards` only: it is in no route
//! table, so no token reaches it.

use http::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::error::ApiError;
use super::input;
use super::operation::{NO_FILTERS, Operation, Verb, operation};
use super::page::page_request;
use super::schemas::{Record, Shape};
use super::shape::{Name, Slug, body};
use super::{ApiResponse, Ctx, Input, Needs, Op};
use inbox_domain::ids::Kind;
use inbox_domain::records::{Grant, Member, Workspace, WorkspaceStatus};
use inbox_domain::{Role, Scope, Tenant, WorkspaceId};
use inbox_store::{Removal, StoreError};
use inbox_support::sys::{new_id, now_string};

/// The operations of this module.
pub static OPERATIONS: &[Op] = &[
    &NAME,
    &WORKSPACES,
    &WORKSPACE_CREATE,
    &WORKSPACE_GET,
    &WORKSPACE_RENAME,
    &WORKSPACE_ARCHIVE,
    &MEMBERS,
    &MEMBER_SET,
    &MEMBER_REMOVE,
    &PIPELINES,
    &PIPELINE_REGISTER,
    &PIPELINE_UNREGISTER,
    &ADMINS,
    &ADMIN_ADD,
    &ADMIN_REMOVE,
    &AUDIT,
];

const ORG: Needs = Needs::Org(Scope::OrgAdmin);

pub static NAME: Operation = Operation {
    summary: "Name the organization (the first call creates its record: the command line's `org create`)",
    body: Some(body!(NameBody)),
    answers: &[(StatusCode::OK, Shape::Data(Record::Organization))],
    ..operation("org_name", Verb::Put, "/org", ORG, |ctx, input| Box::pin(name(ctx, input)))
};

pub static WORKSPACES: Operation = Operation {
    summary: "List the organization's workspaces",
    list: Some(NO_FILTERS),
    answers: &[(StatusCode::OK, Shape::Page(Record::OrgWorkspace))],
    ..operation("org_workspaces_list", Verb::Get, "/org/workspaces", ORG, |ctx, input| Box::pin(workspaces(ctx, input)))
};

pub static WORKSPACE_CREATE: Operation = Operation {
    summary: "Create a workspace (its id is chosen by the server)",
    body: Some(body!(CreateBody)),
    answers: &[(StatusCode::CREATED, Shape::Data(Record::OrgWorkspace))],
    ..operation("workspace_create", Verb::Post, "/org/workspaces", ORG, |ctx, input| Box::pin(create(ctx, input)))
};

pub static WORKSPACE_GET: Operation = Operation {
    summary: "Get a workspace",
    id_of: "workspace",
    answers: &[(StatusCode::OK, Shape::Data(Record::OrgWorkspace))],
    ..operation("workspace_get", Verb::Get, "/org/workspaces/{id}", ORG, |ctx, input| Box::pin(get(ctx, input.id())))
};

pub static WORKSPACE_RENAME: Operation = Operation {
    summary: "Rename a workspace",
    id_of: "workspace",
    body: Some(body!(NameBody)),
    answers: &[(StatusCode::OK, Shape::Data(Record::OrgWorkspace))],
    ..operation("workspace_rename", Verb::Patch, "/org/workspaces/{id}", ORG, |ctx, input| Box::pin(rename(ctx, input)))
};

pub static WORKSPACE_ARCHIVE: Operation = Operation {
    summary: "Archive a workspace: its admins still read it; nothing in it changes and no mail is ingested",
    id_of: "workspace",
    answers: &[(StatusCode::OK, Shape::Data(Record::OrgWorkspace))],
    may_change_nothing: true,
    ..operation("workspace_archive", Verb::Post, "/org/workspaces/{id}/archive", ORG, |ctx, input| {
        Box::pin(archive(ctx, input.id()))
    })
};

pub static MEMBERS: Operation = Operation {
    summary: "List a workspace's members and their roles",
    id_of: "workspace",
    list: Some(NO_FILTERS),
    answers: &[(StatusCode::OK, Shape::Page(Record::Member))],
    ..operation("members_list", Verb::Get, "/org/workspaces/{id}/members", ORG, |ctx, input| {
        Box::pin(members(ctx, input))
    })
};

pub static MEMBER_SET: Operation = Operation {
    summary: "Add a person to a workspace, or change their role",
    id_of: "workspace",
    body: Some(body!(MemberBody)),
    answers: &[(StatusCode::CREATED, Shape::Data(Record::Member)), (StatusCode::OK, Shape::Data(Record::Member))],
    may_change_nothing: true,
    ..operation("member_set", Verb::Put, "/org/workspaces/{id}/members/{sub}", ORG, |ctx, input| {
        Box::pin(member_set(ctx, input))
    })
};

pub static MEMBER_REMOVE: Operation = Operation {
    summary: "Take a person out of a workspace (never its last admin)",
    id_of: "workspace",
    answers: &[(StatusCode::OK, Shape::Revoked)],
    ..operation("member_remove", Verb::Delete, "/org/workspaces/{id}/members/{sub}", ORG, |ctx, input| {
        Box::pin(member_remove(ctx, input.id(), input.sub()))
    })
};

pub static PIPELINES: Operation = Operation {
    summary: "List the machine clients registered as a workspace's mail pipeline",
    id_of: "workspace",
    list: Some(NO_FILTERS),
    answers: &[(StatusCode::OK, Shape::Page(Record::Grant))],
    ..operation("pipelines_list", Verb::Get, "/org/workspaces/{id}/pipelines", ORG, |ctx, input| {
        Box::pin(pipelines(ctx, input))
    })
};

pub static PIPELINE_REGISTER: Operation = Operation {
    summary: "Register a machine client's subject as a workspace's mail pipeline (it may ingest e-mails there)",
    id_of: "workspace",
    answers: &[(StatusCode::CREATED, Shape::Data(Record::Grant)), (StatusCode::OK, Shape::Data(Record::Grant))],
    may_change_nothing: true,
    ..operation("pipeline_register", Verb::Put, "/org/workspaces/{id}/pipelines/{sub}", ORG, |ctx, input| {
        Box::pin(pipeline_register(ctx, input.id(), input.sub()))
    })
};

pub static PIPELINE_UNREGISTER: Operation = Operation {
    summary: "Take back a mail pipeline registration",
    id_of: "workspace",
    answers: &[(StatusCode::OK, Shape::Revoked)],
    ..operation("pipeline_unregister", Verb::Delete, "/org/workspaces/{id}/pipelines/{sub}", ORG, |ctx, input| {
        Box::pin(pipeline_unregister(ctx, input.id(), input.sub()))
    })
};

pub static ADMINS: Operation = Operation {
    summary: "List the organization's administrators (who holds org_admin)",
    list: Some(NO_FILTERS),
    answers: &[(StatusCode::OK, Shape::Page(Record::Grant))],
    ..operation("org_admins_list", Verb::Get, "/org/admins", ORG, |ctx, input| Box::pin(admins(ctx, input)))
};

pub static ADMIN_ADD: Operation = Operation {
    summary: "Make a person an organization administrator (org_admin)",
    answers: &[(StatusCode::CREATED, Shape::Data(Record::Grant)), (StatusCode::OK, Shape::Data(Record::Grant))],
    may_change_nothing: true,
    ..operation("org_admin_add", Verb::Put, "/org/admins/{sub}", ORG, |ctx, input| {
        Box::pin(admin_add(ctx, input.sub()))
    })
};

pub static ADMIN_REMOVE: Operation = Operation {
    summary: "Take org_admin away from a person (never from the last one)",
    answers: &[(StatusCode::OK, Shape::Revoked)],
    ..operation("org_admin_remove", Verb::Delete, "/org/admins/{sub}", ORG, |ctx, input| {
        Box::pin(admin_remove(ctx, input.sub()))
    })
};

pub static AUDIT: Operation = Operation {
    summary: "The organization's own audit trail (its administrators added and removed), newest first",
    list: Some(super::audit::FILTERS),
    answers: &[(StatusCode::OK, Shape::Page(Record::AuditRecord))],
    ..operation("org_audit_list", Verb::Get, "/org/audit", ORG, |ctx, input| Box::pin(super::audit::list(ctx, input)))
};

/// Not in `OPERATIONS` (no route, no tool): the command line's
/// `admin workspace shards`, audited like every other administration change.
pub static WORKSPACE_SHARDS: Operation = Operation {
    summary: "Raise a workspace's write shards (operators)",
    id_of: "workspace",
    body: Some(body!(ShardsBody)),
    answers: &[(StatusCode::OK, Shape::Data(Record::OrgWorkspace))],
    may_change_nothing: true,
    ..operation("workspace_shards", Verb::Put, "/org/workspaces/{id}/shards", ORG, |ctx, input| {
        Box::pin(shards(ctx, input))
    })
};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NameBody {
    name: Name,
}

async fn name(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let body: NameBody = input.body()?;
    let name = body.name.into_string();
    let org = ctx.tenant.org.to_string();
    ctx.store.set_org_name(&ctx.tenant.org, &name, Some(&ctx.audit(&org, StatusCode::OK)?)).await?;
    Ok(ApiResponse::ok(StatusCode::OK, json!({"data": {"id": org, "name": name}})))
}

fn no_workspace() -> ApiError {
    ApiError::NotFound { what: "Workspace" }
}

/// A token subject from the path: 1 to 255 characters of a caller's text.
fn subject(value: &str) -> Result<String, ApiError> {
    let value = input::caller_text("sub", value)?;
    if value.is_empty() || value.len() > 255 {
        return Err(ApiError::invalid("sub", "must be a token subject (1 to 255 characters)"));
    }
    Ok(value.to_owned())
}

/// The workspace `id` of the caller's organization, or 404.
async fn load(ctx: &Ctx<'_>, id: &str) -> Result<(WorkspaceId, Workspace), ApiError> {
    let ws = WorkspaceId::parse(id).ok_or_else(no_workspace)?;
    let found =
        super::fetch(Kind::Workspace, "Workspace", id, async || ctx.store.get_workspace(&ctx.tenant.org, &ws).await)
            .await?;
    Ok((ws, found))
}

/// The workspace as the tenant of a change: its trail gets the record.
fn tenant_of(ctx: &Ctx<'_>, ws: WorkspaceId) -> Tenant {
    Tenant::new(ctx.tenant.org.clone(), ws, Role::Admin)
}

fn page_of<T: serde::Serialize>(items: &[T], next: serde_json::Value) -> ApiResponse {
    ApiResponse::ok(StatusCode::OK, json!({"data": items, "meta": {"next_cursor": next}}))
}

async fn workspaces(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let params = input.params()?;
    let page = page_request(ctx.secrets, ctx.tenant, "org/workspaces", &params)?;
    let found = ctx.store.list_workspaces(&ctx.tenant.org, page.limit, page.start.clone()).await?;
    Ok(page_of(&found.items, page.next_cursor(ctx.secrets, ctx.tenant, found.next)))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    name: Name,
    /// Lowercase letters, digits and -; unique in the organization
    slug: Slug,
}

async fn create(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let body: CreateBody = input.body()?;
    let (name, slug) = (body.name.into_string(), body.slug.into_string());
    let id = new_id(Kind::Workspace);
    let ws = WorkspaceId::parse(&id).ok_or(ApiError::Unavailable)?;
    let now = now_string();
    let workspace =
        Workspace { id, name, slug, status: WorkspaceStatus::Active, created_at: now.clone(), updated_at: now };
    let slug_taken = || ApiError::Conflict {
        code: "slug_taken",
        message: format!("The organization already has a workspace with slug {}", workspace.slug),
    };
    if ctx.store.workspace_slug_taken(&ctx.tenant.org, &workspace.slug).await? {
        return Err(slug_taken());
    }
    let target = tenant_of(ctx, ws);
    let ctx = Ctx { tenant: &target, ..*ctx };
    let audit = ctx.audit(&workspace.id, StatusCode::CREATED)?;
    match ctx.store.create_workspace(&target.org, &workspace, Some(&audit)).await {
        Ok(()) => ApiResponse::data(StatusCode::CREATED, &workspace),
        Err(StoreError::Conflict) => Err(slug_taken()),
        Err(e) => Err(e.into()),
    }
}

async fn get(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    ApiResponse::data(StatusCode::OK, &load(ctx, id).await?.1)
}

async fn rename(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let body: NameBody = input.body()?;
    let name = body.name.into_string();
    let (ws, mut workspace) = load(ctx, input.id()).await?;
    let previous = std::mem::replace(&mut workspace.updated_at, now_string());
    workspace.name = name;
    change(ctx, ws, &workspace, &previous).await?;
    ApiResponse::data(StatusCode::OK, &workspace)
}

async fn archive(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let (ws, mut workspace) = load(ctx, id).await?;
    if workspace.status == WorkspaceStatus::Archived {
        // Nothing to do: the call's record is written alone.
        return ApiResponse::data(StatusCode::OK, &workspace);
    }
    let previous = std::mem::replace(&mut workspace.updated_at, now_string());
    workspace.status = WorkspaceStatus::Archived;
    change(ctx, ws, &workspace, &previous).await?;
    ApiResponse::data(StatusCode::OK, &workspace)
}

/// Writes a workspace's new name or status, recorded in its own trail.
async fn change(ctx: &Ctx<'_>, ws: WorkspaceId, workspace: &Workspace, previous: &str) -> Result<(), ApiError> {
    let target = tenant_of(ctx, ws);
    let ctx = Ctx { tenant: &target, ..*ctx };
    let audit = ctx.audit(&workspace.id, StatusCode::OK)?;
    match ctx.store.update_workspace(&target.org, workspace, previous, &audit).await {
        Ok(()) => Ok(()),
        Err(StoreError::Conflict) => Err(ApiError::Conflict {
            code: "conflict",
            message: "The workspace changed while the request ran; read it again and retry".into(),
        }),
        Err(e) => Err(e.into()),
    }
}

async fn members(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let params = input.params()?;
    let (ws, _) = load(ctx, input.id()).await?;
    let page = page_request(ctx.secrets, ctx.tenant, &format!("org/members/{ws}"), &params)?;
    let found = ctx.store.list_members(&tenant_of(ctx, ws), page.limit, page.start.clone()).await?;
    Ok(page_of(&found.items, page.next_cursor(ctx.secrets, ctx.tenant, found.next)))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MemberBody {
    role: Role,
}

fn last_admin(ws: &WorkspaceId) -> ApiError {
    ApiError::Conflict {
        code: "last_admin",
        message: format!("This is the last admin of workspace {ws}: make someone else admin first"),
    }
}

async fn member_set(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let sub = subject(input.sub())?;
    let body: MemberBody = input.body()?;
    let (ws, _) = load(ctx, input.id()).await?;
    let target = tenant_of(ctx, ws.clone());
    let ctx = Ctx { tenant: &target, ..*ctx };
    let found = ctx.store.get_member(&target, &sub).await?;
    if let Some(member) = found.as_ref().filter(|m| m.role == body.role) {
        // Already so: nothing is written (the call's record is, alone).
        return ApiResponse::data(StatusCode::OK, member);
    }
    let previous = found.map(|m| m.role);
    if previous == Some(Role::Admin) && only_admin(&ctx, &ws).await? {
        return Err(last_admin(&ws));
    }
    let member = Member { subject: sub, role: body.role, updated_at: now_string() };
    let status = if previous.is_some() { StatusCode::OK } else { StatusCode::CREATED };
    let audit = ctx.audit(ws.as_str(), status)?;
    match ctx.store.set_member(&target, &member, previous, Some(&audit)).await {
        Ok(()) => ApiResponse::data(status, &member),
        // The transaction keeps an admin: a failed condition there is the last one.
        Err(StoreError::Conflict) if previous == Some(Role::Admin) && only_admin(&ctx, &ws).await? => {
            Err(last_admin(&ws))
        }
        Err(StoreError::Conflict) => Err(ApiError::Conflict {
            code: "conflict",
            message: "The membership changed while the request ran; read it again and retry".into(),
        }),
        Err(e) => Err(e.into()),
    }
}

/// Whether the workspace has one admin or none: read before a change that
/// takes one away (its transaction checks it again), and after one that
/// failed its condition, to say why.
async fn only_admin(ctx: &Ctx<'_>, ws: &WorkspaceId) -> Result<bool, ApiError> {
    Ok(ctx.store.workspace_admins(&ctx.tenant.org, ws).await? <= 1)
}

fn revoked(subject: &str) -> ApiResponse {
    ApiResponse::ok(StatusCode::OK, json!({"data": {"subject": subject, "deleted": true}}))
}

async fn member_remove(ctx: &Ctx<'_>, id: &str, sub: &str) -> Result<ApiResponse, ApiError> {
    let sub = subject(sub)?;
    let (ws, _) = load(ctx, id).await?;
    let target = tenant_of(ctx, ws.clone());
    let ctx = Ctx { tenant: &target, ..*ctx };
    let member = ctx.store.get_member(&target, &sub).await?.ok_or(ApiError::NotFound { what: "Member" })?;
    if member.role == Role::Admin && only_admin(&ctx, &ws).await? {
        return Err(last_admin(&ws));
    }
    let audit = ctx.audit(ws.as_str(), StatusCode::OK)?;
    match ctx.store.remove_member(&target, &sub, member.role, &audit).await {
        Ok(()) => Ok(revoked(&sub)),
        Err(StoreError::Conflict) if member.role == Role::Admin && only_admin(&ctx, &ws).await? => Err(last_admin(&ws)),
        Err(StoreError::Conflict) => Err(ApiError::NotFound { what: "Member" }),
        Err(e) => Err(e.into()),
    }
}

async fn pipelines(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let params = input.params()?;
    let (ws, _) = load(ctx, input.id()).await?;
    let page = page_request(ctx.secrets, ctx.tenant, &format!("org/pipelines/{ws}"), &params)?;
    let found = ctx.store.list_pipelines(&tenant_of(ctx, ws), page.limit, page.start.clone()).await?;
    Ok(page_of(&found.items, page.next_cursor(ctx.secrets, ctx.tenant, found.next)))
}

async fn pipeline_register(ctx: &Ctx<'_>, id: &str, sub: &str) -> Result<ApiResponse, ApiError> {
    let sub = subject(sub)?;
    let (ws, _) = load(ctx, id).await?;
    let target = tenant_of(ctx, ws.clone());
    let ctx = Ctx { tenant: &target, ..*ctx };
    if let Some(existing) = ctx.store.get_pipeline(&target, &sub).await? {
        // Registered already: nothing is written (the call's record is, alone).
        return ApiResponse::data(StatusCode::OK, &existing);
    }
    let grant = Grant { subject: sub, created_at: now_string() };
    let audit = ctx.audit(ws.as_str(), StatusCode::CREATED)?;
    match ctx.store.register_pipeline(&target, &grant, Some(&audit)).await? {
        true => ApiResponse::data(StatusCode::CREATED, &grant),
        // Registered by a concurrent call in between.
        false => ApiResponse::data(StatusCode::OK, &grant),
    }
}

async fn pipeline_unregister(ctx: &Ctx<'_>, id: &str, sub: &str) -> Result<ApiResponse, ApiError> {
    let sub = subject(sub)?;
    let (ws, _) = load(ctx, id).await?;
    let target = tenant_of(ctx, ws.clone());
    let ctx = Ctx { tenant: &target, ..*ctx };
    if ctx.store.get_pipeline(&target, &sub).await?.is_none() {
        return Err(ApiError::NotFound { what: "Pipeline registration" });
    }
    let audit = ctx.audit(ws.as_str(), StatusCode::OK)?;
    if ctx.store.unregister_pipeline(&target, &sub, &audit).await? {
        Ok(revoked(&sub))
    } else {
        Err(ApiError::NotFound { what: "Pipeline registration" })
    }
}

async fn admins(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let params = input.params()?;
    let page = page_request(ctx.secrets, ctx.tenant, "org/admins", &params)?;
    let found = ctx.store.list_org_admins(&ctx.tenant.org, page.limit, page.start.clone()).await?;
    Ok(page_of(&found.items, page.next_cursor(ctx.secrets, ctx.tenant, found.next)))
}

async fn admin_add(ctx: &Ctx<'_>, sub: &str) -> Result<ApiResponse, ApiError> {
    let sub = subject(sub)?;
    if let Some(existing) = ctx.store.get_org_admin(&ctx.tenant.org, &sub).await? {
        // Holds it already: nothing is written (the call's record is, alone).
        return ApiResponse::data(StatusCode::OK, &existing);
    }
    let grant = Grant { subject: sub, created_at: now_string() };
    let audit = ctx.audit(&grant.subject, StatusCode::CREATED)?;
    match ctx.store.add_org_admin(&ctx.tenant.org, &grant, Some(&audit)).await {
        Ok(true) => ApiResponse::data(StatusCode::CREATED, &grant),
        Ok(false) => ApiResponse::data(StatusCode::OK, &grant),
        Err(e) => Err(e.into()),
    }
}

async fn admin_remove(ctx: &Ctx<'_>, sub: &str) -> Result<ApiResponse, ApiError> {
    let sub = subject(sub)?;
    let org = &ctx.tenant.org;
    let not_found = || ApiError::NotFound { what: "Organization administrator" };
    let last_one = || ApiError::Conflict {
        code: "last_org_admin",
        message: format!("{sub} is the last administrator of organization {org}: add another one first"),
    };
    if ctx.store.get_org_admin(org, &sub).await?.is_none() {
        return Err(not_found());
    }
    if ctx.store.list_org_admins(org, 2, None).await?.items.len() < 2 {
        return Err(last_one());
    }
    let audit = ctx.audit(&sub, StatusCode::OK)?;
    match ctx.store.remove_org_admin(org, &sub, &audit).await? {
        Removal::Removed => Ok(revoked(&sub)),
        Removal::NotFound => Err(not_found()),
        Removal::LastOne => Err(last_one()),
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ShardsBody {
    #[schemars(range(min = 1))]
    count: u16,
}

/// `admin workspace shards`: the store's rules (`Store::set_write_shards`),
/// their refusals as answers.
async fn shards(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let body: ShardsBody = input.body()?;
    let (ws, _) = load(ctx, input.id()).await?;
    let target = tenant_of(ctx, ws.clone());
    let ctx = Ctx { tenant: &target, ..*ctx };
    let audit = ctx.audit(ws.as_str(), StatusCode::OK)?;
    let now = inbox_support::sys::unix_now();
    match ctx.store.raise_write_shards(&target.org, &ws, body.count, now, &audit).await {
        Ok(s) => Ok(ApiResponse::ok(
            StatusCode::OK,
            json!({"data": {"workspace": ws.as_str(), "count": s.count, "previous": s.previous,
                "read_now": s.read_count(), "written_from": s.changed_at + inbox_domain::Shards::WRITE_DELAY_SECS}}),
        )),
        Err(StoreError::NotFound) => Err(no_workspace()),
        Err(StoreError::Conflict) => Err(ApiError::Conflict {
            code: "invalid_count",
            message: format!(
                "The count only grows, from what the workspace has to at most {}",
                inbox_domain::shards::MAX_SHARDS
            ),
        }),
        Err(StoreError::ShardsRaisedRecently { from }) => Err(ApiError::Conflict {
            code: "shards_raised_recently",
            message: format!(
                "{ws}'s write shards were raised less than {} h ago; raise them again from {from} (unix seconds) \
                 — docs/capacity.md, \"Raising a workspace's write shards\"",
                inbox_domain::Shards::KEYED_GRACE_SECS / 3600
            ),
        }),
        Err(e) => Err(e.into()),
    }
}
