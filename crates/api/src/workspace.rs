//! `GET /workspace`: the current workspace at a glance — its inboxes and how
//! many e-mails each holds per status. Needs `inboxes:read` and `emails:read`.
//! The inbox list and the counts are read in parallel.
//!
//! `PUT /workspace/content_policy`: how much third-party text MCP answers
//! carry in this workspace (`domain::provenance::ContentPolicy`), changed by
//! a workspace admin only, and over MCP only once the person confirms
//! (`workspace_content_policy_set` is destructive): loosening it hands an
//! agent more text written by outsiders. The deployment's cap
//! (`CONTENT_POLICY_CAP`) still applies on top of whatever is set here.
//!
//! `PUT /workspace/retention`: how many days e-mail content is kept
//! (`domain::retention`), changed by a workspace admin, confirmed over MCP
//! (`workspace_retention_set` is destructive: shortening it purges content
//! at once for reads, and for good at the next daily purge).

use http::StatusCode;
use serde_json::{Map, Value, json};

use super::error::ApiError;
use super::operation::{Operation, Tool, Verb, operation};
use super::schemas::{Record, Shape};
use super::shape::body;
use super::{ApiResponse, Ctx, Input, Needs, Op, check};
use inbox_domain::provenance::ContentPolicy;
use inbox_domain::records::EmailStatus;
use inbox_domain::{Permission, Scope};
use inbox_store::InboxFilter;
use schemars::JsonSchema;
use serde::Deserialize;

/// The operations of this module (the summary is a resource for agents, not a tool).
pub static OPERATIONS: &[Op] = &[&GET, &CONTENT_POLICY, &RETENTION];

pub static CONTENT_POLICY: Operation = Operation {
    summary: "Set how much e-mail text written by outsiders MCP answers carry in this workspace",
    body: Some(body!(ContentPolicyBody)),
    answers: &[(StatusCode::OK, Shape::ContentPolicy)],
    may_change_nothing: true,
    tool: Some(Tool::destructive(
        "workspace_content_policy_set",
        "Set content policy",
        "Set the workspace's content policy: full (every e-mail's subject and body, sanitised and fenced), verified_only (only verified senders' text) or structured_only (no e-mail text, only what the server decoded). Destructive: the user is asked to confirm.",
        "Agents connected to this workspace will see e-mail text written by outsiders as this policy says (the deployment's cap still applies).",
    )),
    ..operation(
        "workspace_content_policy_set",
        Verb::Put,
        "/workspace/content_policy",
        Needs::Role(Scope::InboxesWrite, Permission::Administer),
        |ctx, input| Box::pin(set_content_policy(ctx, input)),
    )
};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ContentPolicyBody {
    /// full, verified_only or structured_only
    content_policy: ContentPolicy,
}

async fn set_content_policy(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let body = input.body::<ContentPolicyBody>()?;
    let tenant = ctx.tenant;
    // The change's record goes on the workspace's trail (also when nothing
    // changed). Requests see it once their container's tenancy cache turns
    // (`MEMBERSHIP_CACHE_SECS`, 30 s).
    let audit = ctx.audit(tenant.workspace.as_str(), StatusCode::OK)?;
    let previous = ctx.store.set_content_policy(tenant, body.content_policy, Some(&audit)).await?;
    Ok(ApiResponse::ok(
        StatusCode::OK,
        json!({"data": {
            "workspace_id": tenant.workspace.as_str(),
            "content_policy": body.content_policy.as_str(),
            "previous": previous.as_str(),
        }}),
    ))
}

pub static RETENTION: Operation = Operation {
    summary: "Set how many days this workspace keeps e-mail content (subject, body, attachments)",
    body: Some(body!(RetentionBody)),
    answers: &[(StatusCode::OK, Shape::Retention)],
    may_change_nothing: true,
    tool: Some(Tool::destructive(
        "workspace_retention_set",
        "Set retention",
        "Set how many days (1 to 3650, counted from reception) the workspace keeps e-mails' subjects, bodies and attachments; past it they are purged, the decoded bills kept. Destructive: the user is asked to confirm.",
        "E-mail content older than this many days will be hidden at once and purged for good at the next daily purge.",
    )),
    ..operation(
        "workspace_retention_set",
        Verb::Put,
        "/workspace/retention",
        Needs::Role(Scope::InboxesWrite, Permission::Administer),
        |ctx, input| Box::pin(set_retention(ctx, input)),
    )
};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RetentionBody {
    /// Days e-mail content is kept, counted from reception: 1 to 3650
    #[schemars(range(min = 1, max = 3650))]
    retention_days: u32,
}

async fn set_retention(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let body = input.body::<RetentionBody>()?;
    let days = body.retention_days;
    if !(inbox_domain::retention::MIN_DAYS..=inbox_domain::retention::MAX_DAYS).contains(&days) {
        return Err(ApiError::invalid("retention_days", "must be from 1 to 3650 days"));
    }
    let tenant = ctx.tenant;
    // Requests see it once their container's tenancy cache turns
    // (`MEMBERSHIP_CACHE_SECS`, 30 s), like the content policy.
    let audit = ctx.audit(tenant.workspace.as_str(), StatusCode::OK)?;
    let previous = ctx.store.set_retention(tenant, days, Some(&audit)).await?;
    Ok(ApiResponse::ok(
        StatusCode::OK,
        json!({"data": {"workspace_id": tenant.workspace.as_str(), "retention_days": days, "previous": previous}}),
    ))
}

pub static GET: Operation = Operation {
    summary: "The workspace at a glance: inboxes and e-mail counts by status",
    answers: &[(StatusCode::OK, Shape::Data(Record::Workspace))],
    ..operation(
        "workspace",
        Verb::Get,
        "/workspace",
        Needs::Handler {
            any: &[Scope::InboxesRead, Scope::EmailsRead],
            who: "Scopes `inboxes:read` and `emails:read`; role viewer or above.",
        },
        |ctx, _| Box::pin(get(ctx)),
    )
};

async fn get(ctx: &Ctx<'_>) -> Result<ApiResponse, ApiError> {
    let missing: Vec<Scope> =
        [Scope::InboxesRead, Scope::EmailsRead].into_iter().filter(|s| !ctx.principal.has(*s)).collect();
    if !missing.is_empty() {
        return Err(ApiError::InsufficientScope { scopes: missing });
    }
    check(ctx, Scope::InboxesRead, Permission::Read)?;
    let store = &ctx.store;
    let filter = InboxFilter { status: None, q: None };
    let (name, inboxes, counts) = tokio::join!(
        store.workspace_name(ctx.tenant),
        store.list_inboxes(ctx.tenant, &filter, 100, None),
        store.count_emails(ctx.tenant),
    );
    let (inboxes, counts) = (inboxes?, counts?);
    let zero = || EmailStatus::NAMES.iter().map(|s| ((*s).to_owned(), Value::from(0))).collect::<Map<_, _>>();
    let mut total = zero();
    let listed: Vec<Value> = inboxes
        .items
        .iter()
        .map(|inbox| {
            let mut per_status = zero();
            if let Some(found) = counts.by_inbox.get(&inbox.id) {
                for (status, n) in found {
                    per_status.insert(status.clone(), Value::from(*n));
                    let sum = total.get(status).and_then(Value::as_u64).unwrap_or(0) + n;
                    total.insert(status.clone(), Value::from(sum));
                }
            }
            json!({"id": inbox.id, "slug": inbox.slug, "name": inbox.name, "status": inbox.status, "email_counts": per_status})
        })
        .collect();
    Ok(ApiResponse::ok(
        StatusCode::OK,
        json!({"data": {
            "id": ctx.tenant.workspace.as_str(),
            "name": name?,
            "content_policy": ctx.tenant.content_policy.as_str(),
            "retention_days": ctx.tenant.retention_days,
            "inboxes": listed,
            "email_counts": total,
            "counts_truncated": counts.truncated,
            "more_inboxes": inboxes.next.is_some(),
        }}),
    ))
}
