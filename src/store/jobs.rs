//! Jobs: written with the change they are about, leased by one runner at a
//! time, finished with their outcome. Queued jobs are also in the sparse queue
//! index (the local runner reads it); every job item names its tenant (the
//! stream worker reads it).

use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, TransactWriteItem};

use super::items::{Item, Keys, to_item};
use super::keys::{self, PK, SK};
use super::writes::{put, ws_pk};
use super::{Store, StoreError, s};
use crate::domain::Tenant;
use crate::domain::records::{Job, JobStatus};

impl Store {
    /// A job item: queued jobs are also in the queue index (for the local
    /// runner), and every job names its tenant (for the stream worker).
    pub(super) fn job_item(t: &Tenant, job: &Job) -> Result<Item, StoreError> {
        let keys = Keys::new(ws_pk(t), keys::job(&job.id));
        let keys = if job.status == JobStatus::Queued {
            keys.with_gsi1(keys::QUEUE, keys::timeline(&job.created_at, &job.id))
        } else {
            keys
        };
        let mut item = to_item(keys, job)?;
        item.insert("org_id".into(), s(t.org.as_str()));
        item.insert("workspace_id".into(), s(t.workspace.as_str()));
        Ok(item)
    }

    pub(super) fn job_put(&self, t: &Tenant, job: &Job) -> Result<TransactWriteItem, StoreError> {
        put(self.table(), Self::job_item(t, job)?, Some("attribute_not_exists(pk)"))
    }

    /// Writes a job as it is now.
    pub async fn put_job(&self, t: &Tenant, job: &Job) -> Result<(), StoreError> {
        self.client().put_item().table_name(self.table()).set_item(Some(Self::job_item(t, job)?)).send().await?;
        Ok(())
    }

    /// Takes a job to run: `queued → running`, or a `running` job whose lease
    /// lapsed. Counts the attempt and leaves the queue index. `None` when
    /// another runner has it or it is finished: a redelivered job runs once.
    pub async fn lease_job(&self, t: &Tenant, id: &str, lease_secs: u64) -> Result<Option<Job>, StoreError> {
        let now = crate::sys::unix_now();
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .key(PK, s(ws_pk(t)))
            .key(SK, s(keys::job(id)))
            .update_expression("SET #st = :running, attempts = attempts + :one, lease_until = :lease, updated_at = :at REMOVE gsi1pk, gsi1sk")
            .condition_expression("#st = :queued OR (#st = :running AND lease_until < :now)")
            .expression_attribute_names("#st", "status")
            .expression_attribute_values(":running", s("running"))
            .expression_attribute_values(":queued", s("queued"))
            .expression_attribute_values(":one", super::n(1))
            .expression_attribute_values(":lease", super::n(now + lease_secs))
            .expression_attribute_values(":now", super::n(now))
            .expression_attribute_values(":at", s(crate::sys::now_string()))
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

    /// Queued jobs of every tenant, oldest first (the local runner's view).
    pub async fn queued_jobs(&self, limit: i32) -> Result<Vec<(Tenant, String)>, StoreError> {
        let out = self
            .client()
            .query()
            .table_name(self.table())
            .index_name(keys::GSI1)
            .key_condition_expression("#kp = :q")
            .expression_attribute_names("#kp", keys::GSI1_PK)
            .expression_attribute_values(":q", s(keys::QUEUE))
            .limit(limit)
            .send()
            .await?;
        let mut jobs = Vec::new();
        for item in out.items.unwrap_or_default() {
            let text = |n: &str| match item.get(n) {
                Some(AttributeValue::S(v)) => Some(v.clone()),
                _ => None,
            };
            let org = text("org_id").and_then(|o| crate::domain::OrgId::parse(&o));
            let ws = text("workspace_id").and_then(|w| crate::domain::WorkspaceId::parse(&w));
            if let (Some(org), Some(workspace), Some(id)) = (org, ws, text("id")) {
                jobs.push((Tenant { org, workspace, role: crate::domain::Role::Viewer }, id));
            }
        }
        Ok(jobs)
    }

    pub async fn get_job(&self, t: &Tenant, id: &str) -> Result<Option<Job>, StoreError> {
        self.get::<Job>(ws_pk(t), keys::job(id)).await
    }
}

/// Whether a stream record's sort key is a job's (what the worker runs).
pub fn is_job_key(sk: &str) -> bool {
    sk.starts_with(&keys::job(""))
}
