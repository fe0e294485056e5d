//! The worker's personal-data duties (LGPD):
//!
//! - `sweep`: the daily retention purge (an EventBridge schedule on AWS, a
//!   timer in local mode). For every workspace of every organization, the
//!   live e-mails received before its retention's cutoff lose their subject,
//!   body and files (`Email::purge_content`); reads hide that content from
//!   the moment it expires, so nothing depends on when this runs.
//! - `run_data_request`: a data subject's export (one JSON document in the
//!   object store) or erasure (every e-mail naming them, as
//!   `Store::erase_email`), found through the identifier index.
//! - `email_removed`: an e-mail item the table's TTL removed (a soft-deleted
//!   one's grace period ended) takes its files and index entries with it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::Runner;
use inbox_domain::records::{DataRequestKind, Email, EmailStatus, JobStatus};
use inbox_domain::{OrgId, Role, Tenant, WorkspaceId};
use inbox_store::{Hit, StoreError, StoredDataRequest};
use inbox_support::sys::now_string;

/// What one sweep did.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Swept {
    pub workspaces: usize,
    /// E-mails whose content was purged.
    pub purged: usize,
    /// Files deleted with them.
    pub files: usize,
    /// Workspaces whose sweep stopped on an error (the next one takes them on).
    pub unfinished: usize,
}

/// How many e-mails one page of the sweep reads, and how many pages each
/// shard of a workspace gets per sweep (the rest waits for the next day;
/// reads hide it meanwhile).
const PAGE: usize = 100;
const PAGES: usize = 50;

/// Purges the content past retention at `now` in every workspace.
pub async fn sweep(runner: &Runner, now: OffsetDateTime) -> Result<Swept, StoreError> {
    let mut swept = Swept::default();
    for org in runner.store.organizations().await? {
        let workspaces = runner.store.org_workspaces(&org).await?;
        for ws in &workspaces.all {
            let tenant = Tenant {
                shards: workspaces.shards.get(ws).copied().unwrap_or_default(),
                retention_days: workspaces.retention(ws),
                ..Tenant::new(org.clone(), ws.clone(), Role::Viewer)
            };
            // One workspace's trouble does not hold up the others.
            match sweep_workspace(runner, &tenant, now, &mut swept).await {
                Ok(()) => swept.workspaces += 1,
                Err(e) => {
                    tracing::warn!(workspace = %ws, error = %e, "retention sweep of a workspace stopped; the next sweep takes it on");
                    swept.unfinished += 1;
                }
            }
        }
    }
    // Data-subject requests whose runs the stream's retries did not finish.
    for (org, id) in runner.store.queued_data_requests().await? {
        if let Err(e) = run_data_request(runner, &org, &id).await {
            tracing::warn!(request = %id, error = %e, "a data request could not be recorded; the next run takes it on");
        }
    }
    tracing::info!(
        workspaces = swept.workspaces,
        purged = swept.purged,
        files = swept.files,
        unfinished = swept.unfinished,
        "retention sweep done"
    );
    Ok(swept)
}

async fn sweep_workspace(
    runner: &Runner,
    t: &Tenant,
    now: OffsetDateTime,
    swept: &mut Swept,
) -> Result<(), StoreError> {
    let cutoff = inbox_domain::retention::cutoff(now, t.retention_days);
    let at = inbox_domain::clock::format(now);
    for shard in 0..t.shards.read_count() {
        let mut start = None;
        for _ in 0..PAGES {
            let (page, next) = runner.store.emails_past_retention(t, shard, &cutoff, PAGE, start.take()).await?;
            purge_page(runner, t, page, &at, swept).await?;
            match next {
                Some(key) => start = Some(key),
                None => break,
            }
        }
    }
    Ok(())
}

/// Purges one page's e-mails (one being processed is left for the next sweep).
async fn purge_page(
    runner: &Runner,
    t: &Tenant,
    page: Vec<Email>,
    at: &str,
    swept: &mut Swept,
) -> Result<(), StoreError> {
    for mut email in page {
        // A job is reading it: the next sweep takes it.
        if email.status == EmailStatus::Processing {
            continue;
        }
        let read = std::mem::replace(&mut email.updated_at, at.to_owned());
        // The moment it expired, as reads have shown it since (`retention::hide_expired`).
        let expired = inbox_domain::retention::expiry(&email.created_at, t.retention_days);
        email.purge_content(expired.as_deref().unwrap_or(at));
        // The record first: a reprocess that lands meanwhile keeps its files to read.
        match runner.store.put_purged_email(t, &email, &read).await {
            Ok(()) => {
                let prefix = format!("{}/{}/{}/", t.org, t.workspace, email.id);
                let files = runner.store.objects().keys_under(&prefix).await?;
                runner.store.objects().delete(&files).await?;
                swept.purged += 1;
                swept.files += files.len();
            }
            // Changed meanwhile: the next sweep looks again.
            Err(StoreError::Conflict) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// An e-mail item removed by the table's TTL: its files and index entries go too.
pub async fn email_removed(runner: &Runner, t: &Tenant, id: &str) -> Result<(), StoreError> {
    let files = runner.store.objects().keys_under(&format!("{}/{}/{id}/", t.org, t.workspace)).await?;
    runner.store.objects().delete(&files).await?;
    runner.store.drop_identifiers(t, id).await?;
    // Its copies (job results, stored events) through its references; the
    // record is gone, so only referenced copies can be found.
    let t = runner.with_shards(t).await?;
    runner.store.scrub_copies(&t, id, inbox_store::privacy::REFERENCED_SINCE).await?;
    Ok(())
}

/// What running a data-subject request came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestRan {
    Finished(JobStatus),
    /// Taken or finished before: nothing was done.
    Skipped,
}

/// Runs data-subject request `id` of `org` once (a redelivered stream
/// record finds it taken). An error means its outcome could not be recorded.
pub async fn run_data_request(runner: &Runner, org: &OrgId, id: &str) -> Result<RequestRan, StoreError> {
    let Some(mut stored) = runner.store.lease_data_request(org, id).await? else {
        return Ok(RequestRan::Skipped);
    };
    let outcome = match stored.request.kind {
        DataRequestKind::Export => export(runner, org, &stored).await,
        DataRequestKind::Erase => erase(runner, org, &mut stored).await,
    };
    match outcome {
        Ok(count) => {
            stored.request.status = JobStatus::Succeeded;
            stored.request.emails = count;
            stored.request.error = None;
        }
        Err(RunError::TooMany(found)) => {
            stored.request.status = JobStatus::Failed;
            stored.request.error = Some(format!(
                "{found} e-mails name this identifier, more than one export holds ({MAX_EXPORT}); it is the organization's own or a biller's, not a person's"
            ));
        }
        Err(RunError::Store(e)) => {
            // The storage error is for the log; the requester reads a sentence.
            tracing::error!(request = %id, error = %e, "data request failed");
            stored.request.status = JobStatus::Failed;
            stored.request.error = Some("the service could not complete this request; make it again".into());
        }
    }
    stored.request.updated_at = now_string();
    stored.lease_until = None;
    runner.store.put_data_request(org, &stored).await?;
    tracing::info!(request = %id, kind = stored.request.kind.as_str(), status = stored.request.status.as_str(), emails = stored.request.emails, "data request done");
    Ok(RequestRan::Finished(stored.request.status))
}

/// The most e-mails one export holds (its document is made in memory).
pub const MAX_EXPORT: usize = 10_000;

/// Why a run did not finish.
enum RunError {
    Store(StoreError),
    /// An export of more e-mails than `MAX_EXPORT`.
    TooMany(usize),
}

impl From<StoreError> for RunError {
    fn from(e: StoreError) -> Self {
        RunError::Store(e)
    }
}

/// The e-mails the index lists under any of the request's digests, by workspace.
async fn hits(
    runner: &Runner,
    org: &OrgId,
    stored: &StoredDataRequest,
) -> Result<BTreeMap<WorkspaceId, BTreeSet<String>>, StoreError> {
    let mut by_workspace: BTreeMap<WorkspaceId, BTreeSet<String>> = BTreeMap::new();
    for digest in &stored.digests {
        for Hit { workspace, email_id } in runner.store.identifier_hits(org, digest).await? {
            by_workspace.entry(workspace).or_default().insert(email_id);
        }
    }
    Ok(by_workspace)
}

/// The workspace's tenant as the runner sees it (its write shards).
async fn tenant(runner: &Runner, org: &OrgId, ws: &WorkspaceId) -> Result<Tenant, StoreError> {
    runner.with_shards(&Tenant::new(org.clone(), ws.clone(), Role::Viewer)).await
}

/// Writes one JSON document with every e-mail the request finds (those
/// soft-deleted but not yet removed included, marked); how many.
async fn export(runner: &Runner, org: &OrgId, stored: &StoredDataRequest) -> Result<u64, RunError> {
    let mut emails: Vec<Value> = Vec::new();
    // Content past its workspace's retention is exported as reads show it: gone.
    let retention = runner.store.org_workspaces(org).await?;
    let now = inbox_support::sys::now();
    let found = hits(runner, org, stored).await?;
    let total: usize = found.values().map(BTreeSet::len).sum();
    if total > MAX_EXPORT {
        return Err(RunError::TooMany(total));
    }
    for (ws, ids) in found {
        let t = tenant(runner, org, &ws).await?;
        for id in ids {
            let Some(mut email) = runner.store.get_email_record(&t, &id).await? else { continue };
            if email.erased_by.is_some() {
                continue;
            }
            inbox_domain::retention::hide_expired(&mut email, retention.retention(&ws), now);
            emails.push(exported(&ws, email));
        }
    }
    let count = emails.len() as u64;
    let document = json!({
        "request": {
            "id": stored.request.id, "kind": "export", "identifier": stored.request.identifier,
            "organization": org.as_str(), "generated_at": now_string(),
        },
        "emails": emails,
    });
    let bytes = serde_json::to_vec_pretty(&document).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &bytes);
    let key = inbox_store::privacy::export_key(org, &stored.request.id);
    runner.store.objects().put(&key, bytes, "application/json", digest.as_ref()).await?;
    Ok(count)
}

/// One e-mail as the export shows it: the record as the API would, its
/// workspace, and whether it was deleted (and is in its grace period).
fn exported(ws: &WorkspaceId, email: Email) -> Value {
    let deleted_at = email.deleted_at.clone();
    let mut record = serde_json::to_value(&email).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut record {
        fields.remove("deleted_at");
    }
    json!({"workspace_id": ws.as_str(), "deleted_at": deleted_at, "email": record})
}

/// Erases every e-mail the request finds; how many were erased by it (by
/// this run and the runs before it, whose count it carries on: an erasure
/// already done is skipped at the cost of one read). The count and the
/// lease are written every `PROGRESS_EVERY` e-mails, so a run the timeout
/// ends is taken over where it stood.
async fn erase(runner: &Runner, org: &OrgId, stored: &mut StoredDataRequest) -> Result<u64, RunError> {
    const PROGRESS_EVERY: u64 = 25;
    let by = format!("data request {}", stored.request.id);
    let mut erased = stored.request.emails;
    for (ws, ids) in hits(runner, org, stored).await? {
        let t = tenant(runner, org, &ws).await?;
        for id in ids {
            if runner.store.get_email_record(&t, &id).await?.is_none_or(|e| e.erased_by.is_some()) {
                continue;
            }
            if runner.store.erase_email(&t, &id, &by, None).await?.is_some_and(|e| !e.already_erased) {
                erased += 1;
                if erased.is_multiple_of(PROGRESS_EVERY) {
                    stored.request.emails = erased;
                    stored.request.updated_at = now_string();
                    stored.lease_until =
                        Some(inbox_support::sys::unix_now() + inbox_store::privacy::DATA_REQUEST_LEASE_SECS);
                    runner.store.put_data_request(org, stored).await?;
                }
            }
        }
    }
    Ok(erased)
}
