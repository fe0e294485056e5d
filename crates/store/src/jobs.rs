//! Jobs: written with the change they are about (in the write shard their
//! id names), leased by one runner at a time, finished with their outcome.
//! Every job item names its tenant: the stream worker reads it on AWS, and
//! the local runner finds queued jobs by scanning its local table (no key is
//! shared by every tenant's jobs).

use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, TransactWriteItem, Update};

use super::emails::PENDING_JOB;
use super::items::{Item, Keys, from_item, to_item};
use super::keys::{self, PK, SK};
use super::writes::{Audit, built, home, put};
use super::{Store, StoreError, s};
use inbox_domain::Tenant;
use inbox_domain::records::{EmailStatus, Job, JobKind, JobStatus};

/// A job read for cancelling (`Store::job_to_cancel`).
pub struct ToCancel {
    pub job: Job,
    /// The e-mail status to put back (e-mail jobs that set `processing`).
    restore: Option<String>,
}

/// The condition of `restore_item`: the e-mail is live, in `processing`,
/// and the job it waits for is this one (or unnamed, on items written
/// before e-mails named their pending job).
const PENDING_ON: &str = "attribute_not_exists(deleted_at) AND #st = :processing \
     AND (#pending = :job OR attribute_not_exists(#pending))";

/// On an e-mail job's item: the e-mail's status before the job set it to
/// `processing`, put back if the job is cancelled. Not part of the job's JSON.
const RESTORE: &str = "restore_status";

impl Store {
    /// A job item, in its shard; every job names its tenant (for the stream
    /// worker and the local runner).
    pub(super) fn job_item(t: &Tenant, job: &Job) -> Result<Item, StoreError> {
        let keys = Keys::new(home(t, &job.id), keys::job(&job.id));
        let mut item = to_item(keys, job)?;
        item.insert("org_id".into(), s(t.org.as_str()));
        item.insert("workspace_id".into(), s(t.workspace.as_str()));
        Ok(item)
    }

    pub(super) fn job_put(&self, t: &Tenant, job: &Job) -> Result<TransactWriteItem, StoreError> {
        put(self.table(), Self::job_item(t, job)?, Some("attribute_not_exists(pk)"))
    }

    /// `job_put` for a job that set its e-mail to `processing`, remembering
    /// the status to put back should the job be cancelled.
    pub(super) fn job_put_restoring(
        &self,
        t: &Tenant,
        job: &Job,
        restore: EmailStatus,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut item = Self::job_item(t, job)?;
        item.insert(RESTORE.into(), s(restore.as_str()));
        put(self.table(), item, Some("attribute_not_exists(pk)"))
    }

    /// A job as `cancel_job` needs it: read once, with what a cancellation
    /// would put back. `None`: no such job.
    pub async fn job_to_cancel(&self, t: &Tenant, id: &str) -> Result<Option<ToCancel>, StoreError> {
        let out = self
            .client()
            .get_item()
            .table_name(self.table())
            .key(PK, s(home(t, id)))
            .key(SK, s(keys::job(id)))
            .consistent_read(true)
            .send()
            .await?;
        let Some(item) = out.item else { return Ok(None) };
        let restore = match item.get(RESTORE) {
            Some(AttributeValue::S(status)) => Some(status.clone()),
            _ => None,
        };
        Ok(Some(ToCancel { job: from_item(item)?, restore }))
    }

    /// Cancels a queued job: `queued → cancelled`, out of the queue index, so
    /// no runner ever leases it. An e-mail the job had set to `processing`
    /// gets its previous status back in the same transaction, but only while
    /// it is still this job's (`PENDING_JOB`): an e-mail that moved on (a
    /// runner processed it, it was deleted) is left as it is, and never
    /// vetoes the cancellation. A job that is no longer queued is left as it
    /// is. Returns the job as it now is (`None`: it is gone); its status says
    /// whether it was cancelled.
    pub async fn cancel_job(&self, t: &Tenant, read: ToCancel, audit: &Audit<'_>) -> Result<Option<Job>, StoreError> {
        let ToCancel { mut job, restore } = read;
        let is_email_job = matches!(job.kind, JobKind::EmailProcess | JobKind::EmailReprocess);
        let mut restore = restore.filter(|_| is_email_job);
        // At most two rounds: with the e-mail's restore, then — if the job is
        // still queued, so it was the e-mail's condition that failed (it moved
        // on) — without it.
        for _ in 0..2 {
            if job.status != JobStatus::Queued {
                return Ok(Some(job));
            }
            let now = inbox_support::sys::now_string();
            let mut items = vec![self.cancel_item(t, &job.id, &now)?];
            if let Some(restore) = &restore {
                items.push(self.restore_item(t, &job, restore, &now)?);
            }
            match self.transact_audited(t, items, Some(audit)).await {
                Ok(()) => {
                    job.status = JobStatus::Cancelled;
                    job.updated_at = now;
                    return Ok(Some(job));
                }
                // A runner leased the job first, or the e-mail moved on: look again.
                Err(StoreError::Conflict) => match self.get_job(t, &job.id).await? {
                    Some(now_is) => job = now_is,
                    None => return Ok(None),
                },
                Err(e) => return Err(e),
            }
            restore = None;
        }
        // Still queued after a round with the job's condition alone: not a refusal.
        if job.status == JobStatus::Queued { Err(StoreError::Throttled) } else { Ok(Some(job)) }
    }

    fn cancel_item(&self, t: &Tenant, id: &str, now: &str) -> Result<TransactWriteItem, StoreError> {
        let cancel = built(
            Update::builder()
                .table_name(self.table())
                .key(PK, s(home(t, id)))
                .key(SK, s(keys::job(id)))
                // REMOVE: a job queued before jobs left the queue index leaves it now.
                .update_expression("SET #st = :cancelled, updated_at = :at REMOVE gsi1pk, gsi1sk")
                .condition_expression("#st = :queued")
                .expression_attribute_names("#st", "status")
                .expression_attribute_values(":cancelled", s(JobStatus::Cancelled.as_str()))
                .expression_attribute_values(":queued", s(JobStatus::Queued.as_str()))
                .expression_attribute_values(":at", s(now))
                .build(),
        )?;
        Ok(TransactWriteItem::builder().update(cancel).build())
    }

    /// Puts an e-mail's status from before `job` back, on the condition that
    /// it is still `job`'s (items written before the marker existed: still
    /// `processing`), live.
    fn restore_item(&self, t: &Tenant, job: &Job, restore: &str, now: &str) -> Result<TransactWriteItem, StoreError> {
        let email = built(
            Update::builder()
                .table_name(self.table())
                .key(PK, s(home(t, &job.subject_id)))
                .key(SK, s(keys::email(&job.subject_id)))
                .update_expression("SET #st = :restore, updated_at = :at REMOVE #pending")
                .condition_expression(PENDING_ON)
                .expression_attribute_names("#st", "status")
                .expression_attribute_names("#pending", PENDING_JOB)
                .expression_attribute_values(":restore", s(restore))
                .expression_attribute_values(":processing", s(EmailStatus::Processing.as_str()))
                .expression_attribute_values(":job", s(job.id.as_str()))
                .expression_attribute_values(":at", s(now))
                .build(),
        )?;
        Ok(TransactWriteItem::builder().update(email).build())
    }

    /// Writes a new job (an extension job, `JobKind::Extension`: the REST
    /// operations write theirs with the change they are about); `Conflict`
    /// if the id is taken.
    pub async fn insert_job(&self, t: &Tenant, job: &Job) -> Result<(), StoreError> {
        self.client()
            .put_item()
            .table_name(self.table())
            .set_item(Some(Self::job_item(t, job)?))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await?;
        Ok(())
    }

    /// Writes a job as it is now, on the condition that nobody wrote it since
    /// it was read (its `updated_at` is still `read_at`); `Conflict` otherwise.
    pub async fn replace_job(&self, t: &Tenant, job: &Job, read_at: &str) -> Result<(), StoreError> {
        self.client()
            .put_item()
            .table_name(self.table())
            .set_item(Some(Self::job_item(t, job)?))
            .condition_expression("updated_at = :read_at")
            .expression_attribute_values(":read_at", s(read_at))
            .send()
            .await?;
        Ok(())
    }

    /// Records what a running job is doing now (`Job::stage`), for whoever
    /// follows it; only while it is still running. Best effort: a job whose
    /// stage was not written runs on.
    pub async fn set_job_stage(&self, t: &Tenant, id: &str, stage: &str) -> Result<(), StoreError> {
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .key(PK, s(home(t, id)))
            .key(SK, s(keys::job(id)))
            .update_expression("SET stage = :stage, updated_at = :at")
            .condition_expression("#st = :running")
            .expression_attribute_names("#st", "status")
            .expression_attribute_values(":stage", s(stage))
            .expression_attribute_values(":running", s(JobStatus::Running.as_str()))
            .expression_attribute_values(":at", s(inbox_support::sys::now_string()))
            .send()
            .await;
        super::applied(result.map_err(StoreError::from)).map(|_| ())
    }

    /// Writes a job as it is now — unless the e-mail it is about was erased
    /// while it ran (`Store::scrub_copies` marked it): then it is written
    /// with its result emptied, as the erasure left it, and what the job
    /// copied after the erasure (the events it sent meanwhile, referenced
    /// beside the e-mail) is emptied too.
    pub async fn put_job(&self, t: &Tenant, job: &Job) -> Result<(), StoreError> {
        let written = self
            .client()
            .put_item()
            .table_name(self.table())
            .set_item(Some(Self::job_item(t, job)?))
            .condition_expression("attribute_not_exists(copies_erased)")
            .send()
            .await;
        if super::applied(written.map_err(StoreError::from))? {
            return Ok(());
        }
        let mut emptied = job.clone();
        emptied.result = Some(inbox_domain::records::erased_result(&job.subject_id));
        let mut item = Self::job_item(t, &emptied)?;
        item.insert("copies_erased".into(), aws_sdk_dynamodb::types::AttributeValue::Bool(true));
        self.client().put_item().table_name(self.table()).set_item(Some(item)).send().await?;
        // References only: a job that ran after the erasure made its copies after them.
        self.scrub_copies(t, &job.subject_id, super::privacy::REFERENCED_SINCE).await?;
        Ok(())
    }

    /// Takes a job to run: `queued → running`, or a `running` job whose lease
    /// lapsed. Counts the attempt and leaves the queue index. `None` when
    /// another runner has it or it is finished: a redelivered job runs once.
    pub async fn lease_job(&self, t: &Tenant, id: &str, lease_secs: u64) -> Result<Option<Job>, StoreError> {
        let now = inbox_support::sys::unix_now();
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .key(PK, s(home(t, id)))
            .key(SK, s(keys::job(id)))
            .update_expression("SET #st = :running, attempts = attempts + :one, lease_until = :lease, updated_at = :at REMOVE gsi1pk, gsi1sk")
            .condition_expression("#st = :queued OR (#st = :running AND lease_until < :now)")
            .expression_attribute_names("#st", "status")
            .expression_attribute_values(":running", s(JobStatus::Running.as_str()))
            .expression_attribute_values(":queued", s(JobStatus::Queued.as_str()))
            .expression_attribute_values(":one", super::n(1))
            .expression_attribute_values(":lease", super::n(now + lease_secs))
            .expression_attribute_values(":now", super::n(now))
            .expression_attribute_values(":at", s(inbox_support::sys::now_string()))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match result {
            Ok(out) => out.attributes.map(super::items::from_item).transpose(),
            Err(e) => match StoreError::from(e) {
                StoreError::Conflict => Ok(None),
                other => Err(other),
            },
        }
    }

    /// Queued jobs of every tenant (the local runner's view): tenant, id and
    /// when each was created, oldest first. A scan of the local table, never
    /// run on AWS (the stream feeds the worker there).
    pub async fn queued_jobs(&self, limit: usize) -> Result<Vec<(Tenant, String, String)>, StoreError> {
        let mut jobs = Vec::new();
        let mut start = None;
        loop {
            let out = self
                .client()
                .scan()
                .table_name(self.table())
                .filter_expression("begins_with(#sk, :job) AND #st = :queued")
                .expression_attribute_names("#sk", SK)
                .expression_attribute_names("#st", "status")
                .expression_attribute_values(":job", s(keys::JOB_PREFIX))
                .expression_attribute_values(":queued", s(JobStatus::Queued.as_str()))
                .set_exclusive_start_key(start.take())
                .send()
                .await?;
            for item in out.items.unwrap_or_default() {
                let text = |n: &str| match item.get(n) {
                    Some(AttributeValue::S(v)) => Some(v.clone()),
                    _ => None,
                };
                let org = text("org_id").and_then(|o| inbox_domain::OrgId::parse(&o));
                let ws = text("workspace_id").and_then(|w| inbox_domain::WorkspaceId::parse(&w));
                if let (Some(org), Some(workspace), Some(id)) = (org, ws, text("id")) {
                    let created_at = text("created_at").unwrap_or_default();
                    jobs.push((Tenant::new(org, workspace, inbox_domain::Role::Viewer), id, created_at));
                }
            }
            match out.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => break,
            }
        }
        jobs.sort_by(|a, b| a.2.cmp(&b.2));
        jobs.truncate(limit);
        Ok(jobs)
    }

    pub async fn get_job(&self, t: &Tenant, id: &str) -> Result<Option<Job>, StoreError> {
        self.get::<Job>(home(t, id), keys::job(id)).await
    }
}
