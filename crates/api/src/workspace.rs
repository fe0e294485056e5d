//! `GET /workspace`: the current workspace at a glance — its inboxes and how
//! many e-mails each holds per status. Needs `inboxes:read` and `emails:read`.
//! The inbox list and the counts are read in parallel.

use http::StatusCode;
use serde_json::{Map, Value, json};

use super::error::ApiError;
use super::operation::{Operation, Verb, operation};
use super::schemas::{Record, Shape};
use super::{ApiResponse, Ctx, Needs, Op, check};
use inbox_domain::records::EmailStatus;
use inbox_domain::{Permission, Scope};
use inbox_store::InboxFilter;

/// The operations of this module (the summary is a resource for agents, not a tool).
pub static OPERATIONS: &[Op] = &[&GET];

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
            "inboxes": listed,
            "email_counts": total,
            "counts_truncated": counts.truncated,
            "more_inboxes": inboxes.next.is_some(),
        }}),
    ))
}
