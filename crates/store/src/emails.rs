//! E-mails (newest first through the index) and their per-status counts.

use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};

use super::items::{Item, Keys, ListQuery, Page, Position, to_item};
use super::keys::{self};
use super::writes::{Audit, built, home, put, shard_pks};
use super::{Store, StoreError, s};
use inbox_domain::Tenant;
use inbox_domain::records::{Email, EmailStatus, Job};

/// On an e-mail item in `processing`: the id of the job that set it there
/// (not part of the e-mail's JSON). Any later write of the e-mail drops it.
pub(super) const PENDING_JOB: &str = "pending_job";

/// What a `Message-ID` ingested into an inbox became: the e-mail, and the
/// job that processed it first.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ingested {
    pub email_id: String,
    pub job_id: String,
}

/// E-mail list filters.
#[derive(Default)]
pub struct EmailFilter {
    pub inbox_id: Option<String>,
    pub status: Option<EmailStatus>,
    pub from: Option<String>,
    /// Inclusive bounds on `received_at`.
    pub after: Option<String>,
    pub before: Option<String>,
}

impl Store {
    fn email_item(t: &Tenant, email: &Email) -> Result<Item, StoreError> {
        let pk = home(t, &email.id);
        let keys = Keys::new(pk.clone(), keys::email(&email.id));
        let keys = if email.deleted_at.is_none() {
            keys.with_gsi1(keys::emails_index(&pk), keys::timeline(&email.received_at, &email.id))
        } else {
            keys
        };
        let mut item = to_item(keys, email)?;
        item.insert("from_lc".into(), s(email.from.to_lowercase()));
        // A soft-deleted e-mail leaves the table once its grace period ends;
        // an erased one's tombstone is kept as long as the audit trail.
        let expires = match (&email.deleted_at, &email.erased_by) {
            (Some(_), Some(_)) => Some(inbox_support::sys::unix_now().saturating_add(super::audit::RETENTION_SECS)),
            (Some(at), None) => inbox_domain::clock::parse_instant(at)
                .and_then(|at| u64::try_from(at.unix_timestamp()).ok())
                .map(inbox_domain::retention::deleted_expiry),
            _ => None,
        };
        if let Some(expires) = expires {
            item.insert(keys::TTL.into(), super::n(expires));
        }
        Ok(item)
    }

    /// The reference, in e-mail `email_id`'s partition, to record `id` of
    /// `kind` (`JOB`, `DLV`) that copies what the e-mail says (`keys::copy_ref`).
    pub(super) fn copy_item(t: &Tenant, email_id: &str, kind: &str, id: &str) -> Item {
        [(keys::PK.to_owned(), s(home(t, email_id))), (keys::SK.to_owned(), s(keys::copy_ref(email_id, kind, id)))]
            .into()
    }

    pub async fn get_email(&self, t: &Tenant, id: &str) -> Result<Option<Email>, StoreError> {
        Ok(self.get::<Email>(home(t, id), keys::email(id)).await?.filter(|e| e.deleted_at.is_none()))
    }

    /// An e-mail in any state: live, soft-deleted (in its grace period) or
    /// an erased one's tombstone (`erased_by` set).
    pub async fn get_email_record(&self, t: &Tenant, id: &str) -> Result<Option<Email>, StoreError> {
        self.get::<Email>(home(t, id), keys::email(id)).await
    }

    /// Replaces an e-mail over the version read (`read_updated_at`),
    /// whatever its state; `Conflict` when it moved on.
    pub(super) async fn replace_email(
        &self,
        t: &Tenant,
        email: &Email,
        read_updated_at: &str,
        audit: Option<&Audit<'_>>,
    ) -> Result<(), StoreError> {
        let put = built(
            Put::builder()
                .table_name(self.table())
                .set_item(Some(Self::email_item(t, email)?))
                .condition_expression("attribute_exists(pk) AND updated_at = :read")
                .expression_attribute_values(":read", s(read_updated_at))
                .build(),
        )?;
        self.transact_audited(t, vec![TransactWriteItem::builder().put(put).build()], audit).await
    }

    pub async fn list_emails(
        &self,
        t: &Tenant,
        filter: &EmailFilter,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<Email>, StoreError> {
        let queries = shard_pks(t)
            .into_iter()
            .map(|pk| {
                let mut q = ListQuery::gsi1(keys::emails_index(&pk), pk, &keys::email(""));
                if filter.after.is_some() || filter.before.is_some() {
                    // `#` sorts after every character of a timestamp, `~` after `#`.
                    // Key values cannot be empty: "0" sorts before every timestamp.
                    let lo = filter.after.clone().unwrap_or_else(|| "0".to_owned());
                    let hi = filter.before.as_ref().map_or_else(|| "~".to_owned(), |b| format!("{b}#~"));
                    q.between = Some((lo, hi));
                }
                if let Some(inbox) = &filter.inbox_id {
                    q.and("inbox_id = :inbox");
                    q.value(":inbox", s(inbox.clone()));
                }
                if let Some(status) = &filter.status {
                    q.and("#status = :status");
                    q.name("#status", "status");
                    q.value(":status", s(status.as_str()));
                }
                if let Some(from) = &filter.from {
                    q.and("from_lc = :from");
                    q.value(":from", s(from.to_lowercase()));
                }
                q
            })
            .collect();
        self.list_shards(queries, limit, start).await
    }

    /// Writes an e-mail as it is now (demo data).
    pub async fn put_email(&self, t: &Tenant, email: &Email) -> Result<(), StoreError> {
        self.client().put_item().table_name(self.table()).set_item(Some(Self::email_item(t, email)?)).send().await?;
        Ok(())
    }

    /// The worker's write-back of a processed e-mail: only over the version
    /// it read (`read_updated_at`) and only while it is not deleted, so a
    /// delete or a new reprocess that landed meanwhile is never undone.
    /// `Conflict` when the e-mail moved on. Replacing the item also drops the
    /// pending job's marker (`PENDING_JOB`).
    pub async fn put_processed_email(
        &self,
        t: &Tenant,
        email: &Email,
        read_updated_at: &str,
    ) -> Result<(), StoreError> {
        self.put_conditional(
            Self::email_item(t, email)?,
            "attribute_exists(pk) AND attribute_not_exists(deleted_at) AND updated_at = :read",
            &[(":read", s(read_updated_at))],
        )
        .await
    }

    /// Stores a new e-mail and its processing job in one transaction.
    pub async fn create_email_with_job(
        &self,
        t: &Tenant,
        email: &Email,
        job: &Job,
        audit: &Audit<'_>,
    ) -> Result<(), StoreError> {
        let mut items = vec![
            put(self.table(), Self::email_item(t, email)?, Some("attribute_not_exists(pk)"))?,
            self.job_put(t, job)?,
            put(self.table(), Self::copy_item(t, &email.id, "JOB", &job.id), None)?,
        ];
        // One e-mail per `Message-ID` and inbox: a second ingestion of the
        // message fails this condition (`Conflict`; `ingested` names the
        // first).
        if let Some(message_id) = &email.message_id {
            let (pk, sk) = keys::message(&t.org, &t.workspace, &email.inbox_id, message_id);
            let record = Ingested { email_id: email.id.clone(), job_id: job.id.clone() };
            let item = to_item(Keys::new(pk, sk), &record)?;
            items.push(put(self.table(), item, Some("attribute_not_exists(pk)"))?);
        }
        self.transact_audited(t, items, Some(audit)).await
    }

    /// The e-mail `message_id` became in `inbox_id`, if it was ingested there.
    pub async fn ingested(&self, t: &Tenant, inbox_id: &str, message_id: &str) -> Result<Option<Ingested>, StoreError> {
        let (pk, sk) = keys::message(&t.org, &t.workspace, inbox_id, message_id);
        self.get::<Ingested>(pk, sk).await
    }

    /// Soft-deletes a live e-mail that still has `previous_updated_at`; it leaves every list.
    pub async fn delete_email(
        &self,
        t: &Tenant,
        email: &Email,
        previous_updated_at: &str,
        audit: &Audit<'_>,
    ) -> Result<(), StoreError> {
        self.replace_live(t, Self::email_item(t, email)?, Some(previous_updated_at), audit).await
    }

    /// Stores `email` (its new state) and `job` in one transaction, if the
    /// e-mail is live and unchanged since `previous_updated_at`. A cancelled
    /// job puts `previous_status` back.
    pub async fn enqueue_email_job(
        &self,
        t: &Tenant,
        email: &Email,
        previous_updated_at: &str,
        previous_status: EmailStatus,
        job: &Job,
        audit: &Audit<'_>,
    ) -> Result<(), StoreError> {
        // The e-mail names the job that set it to `processing`, so cancelling
        // that job puts the old status back only while it still holds.
        let mut item = Self::email_item(t, email)?;
        item.insert(PENDING_JOB.into(), s(job.id.as_str()));
        let put_email = built(
            Put::builder()
                .table_name(self.table())
                .set_item(Some(item))
                .condition_expression(
                    "attribute_exists(pk) AND attribute_not_exists(deleted_at) AND updated_at = :prev",
                )
                .expression_attribute_values(":prev", s(previous_updated_at))
                .build(),
        )?;
        let copy = put(self.table(), Self::copy_item(t, &email.id, "JOB", &job.id), None)?;
        let job = self.job_put_restoring(t, job, previous_status)?;
        self.transact_audited(t, vec![TransactWriteItem::builder().put(put_email).build(), job, copy], Some(audit))
            .await
    }
}

/// How many e-mails a workspace holds, per inbox and status.
#[derive(Debug, Default)]
pub struct EmailCounts {
    pub by_inbox: std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>>,
    /// More e-mails exist than were counted.
    pub truncated: bool,
}

impl Store {
    /// Counts live e-mails by inbox and status, reading only those two
    /// attributes, at most `MAX_PAGES` pages of the index.
    pub async fn count_emails(&self, t: &Tenant) -> Result<EmailCounts, StoreError> {
        const MAX_PAGES: usize = 10;
        let mut counts = EmailCounts::default();
        for pk in shard_pks(t) {
            if !self.count_shard(&pk, MAX_PAGES, &mut counts).await? {
                counts.truncated = true;
            }
        }
        Ok(counts)
    }

    /// Counts one shard's e-mails into `counts`; false when `pages` ran out first.
    async fn count_shard(&self, pk: &str, pages: usize, counts: &mut EmailCounts) -> Result<bool, StoreError> {
        let mut start = None;
        for _ in 0..pages {
            let out = self
                .client()
                .query()
                .table_name(self.table())
                .index_name(keys::GSI1)
                .key_condition_expression("#kp = :kp")
                .expression_attribute_names("#kp", keys::GSI1_PK)
                .expression_attribute_names("#st", "status")
                .expression_attribute_values(":kp", s(keys::emails_index(pk)))
                .projection_expression("inbox_id, #st")
                .set_exclusive_start_key(start.take())
                .send()
                .await?;
            for item in out.items.unwrap_or_default() {
                let field = |n: &str| match item.get(n) {
                    Some(AttributeValue::S(v)) => v.clone(),
                    _ => String::new(),
                };
                *counts.by_inbox.entry(field("inbox_id")).or_default().entry(field("status")).or_default() += 1;
            }
            match out.last_evaluated_key {
                None => return Ok(true),
                Some(key) => start = Some(key),
            }
        }
        Ok(false)
    }
}
