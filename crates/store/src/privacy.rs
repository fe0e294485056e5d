//! Personal data (LGPD): the index of the identifiers e-mails name, the
//! erasure of an e-mail with every copy of what it said, the reads of the
//! retention purge, data-subject requests, and the purge of an organization.
//!
//! The index holds digests only (`keys`: `T#{org}#DS#{digest}#{n}` lists the
//! e-mails naming one identifier, `IDX#{email}#{digest}` in the e-mail's
//! partition lists what one e-mail names, for its erasure). A hit is a hint:
//! whoever reads one reads the e-mail too, and an e-mail since erased or
//! removed is skipped.

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, DeleteRequest, PutRequest, WriteRequest};
use serde::{Deserialize, Serialize};

use super::items::Item;
use super::keys::{self, PK, SK};
use super::writes::{Audit, home, put, shard_pks};
use super::{Store, StoreError, s};
use inbox_domain::records::{DataRequest, Email, JobStatus};
use inbox_domain::{OrgId, Tenant, WorkspaceId};

/// One e-mail the index says names an identifier.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Hit {
    pub workspace: WorkspaceId,
    pub email_id: String,
}

/// What an erasure removed, for the caller's evidence.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Erasure {
    /// The e-mail had been erased before (this call removed only what was left).
    pub already_erased: bool,
    /// Attachment files deleted from the object store.
    pub files: usize,
    /// Jobs whose result copied the e-mail's decoded data, emptied.
    pub jobs: usize,
    /// Webhook deliveries whose stored event copied it, emptied.
    pub deliveries: usize,
    /// Index entries removed.
    pub index_entries: usize,
    /// When it was erased (this call, or the one before).
    pub erased_at: String,
}

/// A data-subject request as stored: the record, the organization, and the
/// digests to look up (one per server secret, so a rotation still finds
/// what the previous secret indexed). Never shown.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredDataRequest {
    #[serde(flatten)]
    pub request: DataRequest,
    pub org_id: String,
    pub digests: Vec<String>,
    /// While running: when the runner's claim lapses (unix seconds) and
    /// another run may take it over, where it left off.
    #[serde(default)]
    pub lease_until: Option<u64>,
}

/// How long a run of a data-subject request holds it: under the worker's
/// timeout, so a run the timeout ends is taken over by the redelivery.
pub const DATA_REQUEST_LEASE_SECS: u64 = 110;

/// What an organization's purge found (or, on a dry run, would remove), by
/// kind of item (the sort key's first component), and what it kept.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct OrgPurge {
    pub items: BTreeMap<String, u64>,
    /// Audit records kept for their legal period (they expire by the table's TTL).
    pub audit_records_kept: u64,
    pub files: u64,
}

/// E-mails stored from this time on have their copies referenced
/// (`keys::copy_ref`); older ones' copies are found by reading the
/// workspace's jobs and deliveries.
pub const REFERENCED_SINCE: &str = "2026-12-06T21:00:00.000Z";

/// How often a batch write's unprocessed items are sent again.
const BATCH_RETRIES: u32 = 8;

impl Store {
    /// Writes the index entries of `email_id` for `digests` (both sides).
    pub async fn index_identifiers(&self, t: &Tenant, email_id: &str, digests: &[String]) -> Result<(), StoreError> {
        let mut requests = Vec::with_capacity(digests.len() * 2);
        for digest in digests {
            let lookup: Item = [
                (PK.to_owned(), s(keys::subject_index(&t.org, digest, keys::subject_part(email_id)))),
                (SK.to_owned(), s(keys::subject_hit(&t.workspace, email_id))),
            ]
            .into();
            let own: Item =
                [(PK.to_owned(), s(home(t, email_id))), (SK.to_owned(), s(keys::email_identifier(email_id, digest)))]
                    .into();
            for item in [lookup, own] {
                let put = PutRequest::builder().set_item(Some(item)).build().map_err(corrupt)?;
                requests.push(WriteRequest::builder().put_request(put).build());
            }
        }
        self.batch_write(requests).await
    }

    /// The e-mails of `org` the index lists under `digest`.
    pub async fn identifier_hits(&self, org: &OrgId, digest: &str) -> Result<Vec<Hit>, StoreError> {
        let reads =
            (0..keys::SUBJECT_PARTITIONS).map(|part| self.partition(keys::subject_index(org, digest, part), None));
        let mut items = Vec::new();
        for read in futures_util::future::join_all(reads).await {
            items.extend(read?);
        }
        Ok(items
            .iter()
            .filter_map(|item| {
                let sk = super::get_s(item, SK).ok()?;
                let (ws, email_id) = sk.split_once('#')?;
                Some(Hit { workspace: WorkspaceId::parse(ws)?, email_id: email_id.to_owned() })
            })
            .collect())
    }

    /// Every item of one partition (keys only with `prefix` of the sort key).
    async fn partition(&self, pk: String, prefix: Option<&str>) -> Result<Vec<Item>, StoreError> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let mut query = self
                .client()
                .query()
                .table_name(self.table())
                .expression_attribute_names("#pk", PK)
                .expression_attribute_values(":pk", s(pk.as_str()))
                .set_exclusive_start_key(start.take());
            query = match prefix {
                Some(prefix) => query
                    .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
                    .expression_attribute_names("#sk", SK)
                    .expression_attribute_values(":prefix", s(prefix)),
                None => query.key_condition_expression("#pk = :pk"),
            };
            let out = query.send().await?;
            items.extend(out.items.unwrap_or_default());
            match out.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => return Ok(items),
            }
        }
    }

    /// Every item a scan shaped by `shape` (its filter, projection, names
    /// and values) returns, page after page.
    async fn scan_all(&self, shape: impl Fn(ScanFluentBuilder) -> ScanFluentBuilder) -> Result<Vec<Item>, StoreError> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let scan = self.client().scan().table_name(self.table()).set_exclusive_start_key(start.take());
            let out = shape(scan).send().await?;
            items.extend(out.items.unwrap_or_default());
            match out.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => return Ok(items),
            }
        }
    }

    /// BatchWriteItem in chunks of 25, unprocessed items sent again with backoff.
    async fn batch_write(&self, requests: Vec<WriteRequest>) -> Result<(), StoreError> {
        for chunk in requests.chunks(25) {
            let mut pending = chunk.to_vec();
            let mut backoff = Duration::from_millis(50);
            for attempt in 0..=BATCH_RETRIES {
                let out = self
                    .client()
                    .batch_write_item()
                    .request_items(self.table(), std::mem::take(&mut pending))
                    .send()
                    .await?;
                pending = out.unprocessed_items.and_then(|mut m| m.remove(self.table())).unwrap_or_default();
                if pending.is_empty() {
                    break;
                }
                if attempt == BATCH_RETRIES {
                    return Err(StoreError::Throttled);
                }
                tokio::time::sleep(backoff).await;
                backoff *= 2;
            }
        }
        Ok(())
    }

    async fn delete_keys(&self, keys: Vec<(String, String)>) -> Result<(), StoreError> {
        let requests = keys
            .into_iter()
            .map(|(pk, sk)| {
                let delete = DeleteRequest::builder().key(PK, s(pk)).key(SK, s(sk)).build().map_err(corrupt)?;
                Ok(WriteRequest::builder().delete_request(delete).build())
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        self.batch_write(requests).await
    }

    /// Erases e-mail `id` now: its files, then the record (a tombstone is
    /// left: id, inbox, status, times, `erased_by`), then every copy — the
    /// index entries, the results of its jobs and the events its webhooks
    /// were sent. Safe to call again (an erasure that failed halfway is
    /// finished by the next call). `None` for an e-mail that never existed
    /// (or whose tombstone expired).
    pub async fn erase_email(
        &self,
        t: &Tenant,
        id: &str,
        by: &str,
        audit: Option<&Audit<'_>>,
    ) -> Result<Option<Erasure>, StoreError> {
        let mut erasure = Erasure::default();
        let Some(mut email) = self.get_email_record(t, id).await? else { return Ok(None) };
        // The files first: should this fail, the record still names them
        // and the next call finds them.
        let files = self.objects().keys_under(&format!("{}/{}/{id}/", t.org, t.workspace)).await?;
        self.objects().delete(&files).await?;
        erasure.files = files.len();
        let mut written = false;
        for attempt in 0..4 {
            if attempt > 0 {
                let Some(again) = self.get_email_record(t, id).await? else { return Ok(None) };
                email = again;
            }
            if email.erased_by.is_some() {
                erasure.already_erased = true;
                erasure.erased_at = email.updated_at.clone();
                // Its trail still gets the call's record (an API call's; a data request has its own).
                if audit.is_some() {
                    self.transact_audited(t, Vec::new(), audit).await?;
                }
                written = true;
                break;
            }
            let tombstone = email.tombstone(&inbox_support::sys::now_string(), by);
            // Changed meanwhile (a job wrote its result): read again.
            if super::applied(self.replace_email(t, &tombstone, &email.updated_at, audit).await)? {
                erasure.erased_at = tombstone.updated_at;
                written = true;
                break;
            }
        }
        if !written {
            return Err(StoreError::Throttled);
        }
        erasure.index_entries = self.drop_identifiers(t, id).await?;
        // The e-mail as it was read: a tombstone keeps its `created_at`.
        let (jobs, deliveries) = self.scrub_copies(t, id, &email.created_at).await?;
        (erasure.jobs, erasure.deliveries) = (jobs, deliveries);
        Ok(Some(erasure))
    }

    /// Removes e-mail `id`'s index entries (both sides); how many.
    pub async fn drop_identifiers(&self, t: &Tenant, id: &str) -> Result<usize, StoreError> {
        let own = self.partition(home(t, id), Some(&keys::email_identifiers(id))).await?;
        let prefix = keys::email_identifiers(id);
        let mut doomed = Vec::with_capacity(own.len() * 2);
        for item in &own {
            let Ok(sk) = super::get_s(item, SK) else { continue };
            if let Some(digest) = sk.strip_prefix(&prefix) {
                doomed.push((
                    keys::subject_index(&t.org, digest, keys::subject_part(id)),
                    keys::subject_hit(&t.workspace, id),
                ));
            }
            doomed.push((home(t, id), sk.to_owned()));
        }
        let count = doomed.len();
        self.delete_keys(doomed).await?;
        Ok(count)
    }

    /// Empties what jobs and deliveries copied from e-mail `id` (stored at
    /// `created_at`): a job's
    /// result (decoded bills, status) becomes `{"email_id", "erased": true}`,
    /// a delivery's stored event is removed (it can no longer be resent).
    /// They are found by the references written beside the e-mail
    /// (`keys::copy_ref`), so an erasure reads what it empties and nothing
    /// else; an e-mail stored before those references were written
    /// (`REFERENCED_SINCE`) has its copies found by reading the workspace's
    /// jobs and deliveries once. How many jobs and deliveries were emptied.
    pub async fn scrub_copies(&self, t: &Tenant, id: &str, created_at: &str) -> Result<(usize, usize), StoreError> {
        let refs = self.partition(home(t, id), Some(&keys::copy_refs(id))).await?;
        let mut jobs = Vec::new();
        let mut deliveries = Vec::new();
        for item in &refs {
            let Ok(sk) = super::get_s(item, SK) else { continue };
            match sk.strip_prefix(&keys::copy_refs(id)).and_then(|rest| rest.split_once('#')) {
                Some(("JOB", job)) => jobs.push(job.to_owned()),
                Some(("DLV", delivery)) => deliveries.push(delivery.to_owned()),
                _ => {}
            }
        }
        if created_at < REFERENCED_SINCE {
            let (old_jobs, old_deliveries) = self.copies_by_scan(t, id).await?;
            jobs.extend(old_jobs);
            deliveries.extend(old_deliveries);
        }
        jobs.sort();
        jobs.dedup();
        deliveries.sort();
        deliveries.dedup();
        let (mut emptied_jobs, mut emptied_deliveries) = (0, 0);
        let erased: AttributeValue =
            serde_dynamo::to_attribute_value(inbox_domain::records::erased_result(id)).map_err(corrupt)?;
        for job in &jobs {
            // A job still running has no result yet: it is marked, and its
            // runner writes no result over the mark (`Store::put_job`).
            let update = self
                .client()
                .update_item()
                .table_name(self.table())
                .key(PK, s(home(t, job)))
                .key(SK, s(keys::job(job)))
                .update_expression("SET #r = :erased, copies_erased = :t")
                .condition_expression("attribute_exists(pk)")
                .expression_attribute_names("#r", "result")
                .expression_attribute_values(":erased", erased.clone())
                .expression_attribute_values(":t", AttributeValue::Bool(true))
                .send()
                .await;
            emptied_jobs += usize::from(super::applied(update.map_err(StoreError::from))?);
        }
        for delivery in &deliveries {
            let update = self
                .client()
                .update_item()
                .table_name(self.table())
                .key(PK, s(home(t, delivery)))
                .key(SK, s(keys::delivery(delivery)))
                .update_expression("REMOVE payload SET payload_erased = :t")
                .condition_expression("attribute_exists(payload)")
                .expression_attribute_values(":t", AttributeValue::Bool(true))
                .send()
                .await;
            emptied_deliveries += usize::from(super::applied(update.map_err(StoreError::from))?);
        }
        // The references stay (ids only): a copy written after this (a
        // delivery still being sent) is found by the next scrub.
        Ok((emptied_jobs, emptied_deliveries))
    }

    /// The jobs and deliveries of the workspace about e-mail `id`, found by
    /// reading them all (e-mails stored before `REFERENCED_SINCE`).
    async fn copies_by_scan(&self, t: &Tenant, id: &str) -> Result<(Vec<String>, Vec<String>), StoreError> {
        let (mut jobs, mut deliveries) = (Vec::new(), Vec::new());
        for pk in shard_pks(t) {
            for item in self.partition(pk.clone(), Some(keys::JOB_PREFIX)).await? {
                if super::get_s(&item, "subject_id").is_ok_and(|subject| subject == id) {
                    jobs.extend(super::get_s(&item, "id").ok().map(str::to_owned));
                }
            }
            for item in self.partition(pk, Some(keys::DELIVERY_PREFIX)).await? {
                let Ok(payload) = super::get_s(&item, "payload") else { continue };
                let about = serde_json::from_str::<serde_json::Value>(payload).ok().and_then(|event| {
                    event.pointer("/data/email_id").and_then(serde_json::Value::as_str).map(str::to_owned)
                });
                if about.as_deref() == Some(id) {
                    deliveries.extend(super::get_s(&item, "id").ok().map(str::to_owned));
                }
            }
        }
        Ok((jobs, deliveries))
    }

    /// One page of shard `shard`'s live e-mails stored before `cutoff` whose
    /// content is still there (the retention purge's work, oldest first),
    /// and where the next page starts.
    pub async fn emails_past_retention(
        &self,
        t: &Tenant,
        shard: u16,
        cutoff: &str,
        limit: usize,
        start: Option<Item>,
    ) -> Result<(Vec<Email>, Option<Item>), StoreError> {
        let pk = keys::ws_shard(&t.org, &t.workspace, shard);
        let out = self
            .client()
            .query()
            .table_name(self.table())
            .index_name(keys::GSI1)
            // Received no later than a few minutes after it was stored
            // (`received_at` is never in the future), so the timeline bounds
            // what to read; retention counts from `created_at`.
            .key_condition_expression("#kp = :kp AND #ks < :late")
            .filter_expression("attribute_not_exists(content_purged_at) AND created_at < :cut")
            .expression_attribute_names("#kp", keys::GSI1_PK)
            .expression_attribute_names("#ks", keys::GSI1_SK)
            .expression_attribute_values(":kp", s(keys::emails_index(&pk)))
            .expression_attribute_values(":late", s(late_bound(cutoff)))
            .expression_attribute_values(":cut", s(cutoff))
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .set_exclusive_start_key(start)
            .send()
            .await?;
        let emails = out
            .items
            .unwrap_or_default()
            .into_iter()
            .map(super::items::from_item::<Email>)
            .collect::<Result<_, _>>()?;
        Ok((emails, out.last_evaluated_key.filter(|key| !key.is_empty())))
    }

    /// Writes an e-mail whose content retention purged, over the version
    /// read; `Conflict` when it moved on (a reprocess, a delete: the next
    /// sweep looks again).
    pub async fn put_purged_email(&self, t: &Tenant, email: &Email, read_updated_at: &str) -> Result<(), StoreError> {
        self.replace_email(t, email, read_updated_at, None).await
    }

    /// Every organization with a record (`META`): the daily purge's list. A
    /// scan of the table, once a day (its cost is the table's size).
    pub async fn organizations(&self) -> Result<Vec<OrgId>, StoreError> {
        let items = self
            .scan_all(|scan| {
                scan.filter_expression("#sk = :meta")
                    .projection_expression("#pk")
                    .expression_attribute_names("#pk", PK)
                    .expression_attribute_names("#sk", SK)
                    .expression_attribute_values(":meta", s(keys::ORG_META))
            })
            .await?;
        let mut orgs: Vec<OrgId> = items
            .iter()
            .filter_map(|item| super::get_s(item, PK).ok()?.strip_prefix("T#").and_then(OrgId::parse))
            .collect();
        orgs.sort();
        Ok(orgs)
    }

    /// Removes every item and file of `org` but its audit records (kept
    /// their legal period; they expire by the table's TTL), or on a dry run
    /// only counts them. Finds the items by a scan of the table: an
    /// organization's partitions include keys no list names (rate windows,
    /// the identifier index), and an offboarding is rare. Nothing of another
    /// organization matches: every key of `org` is `T#{org}` or begins with
    /// `T#{org}#`, and every file key with `{org}/`.
    pub async fn purge_org(&self, org: &OrgId, dry_run: bool) -> Result<OrgPurge, StoreError> {
        let mut purge = OrgPurge::default();
        let mut doomed = Vec::new();
        let items = self
            .scan_all(|scan| {
                scan.filter_expression("#pk = :t OR begins_with(#pk, :prefix)")
                    .projection_expression("#pk, #sk")
                    .expression_attribute_names("#pk", PK)
                    .expression_attribute_names("#sk", SK)
                    .expression_attribute_values(":t", s(keys::tenant(org)))
                    .expression_attribute_values(":prefix", s(keys::tenant_prefix(org)))
            })
            .await?;
        for item in &items {
            let (Ok(pk), Ok(sk)) = (super::get_s(item, PK), super::get_s(item, SK)) else { continue };
            if sk.starts_with(keys::AUDIT_PREFIX) {
                purge.audit_records_kept += 1;
                continue;
            }
            *purge.items.entry(item_kind(pk, sk)).or_default() += 1;
            doomed.push((pk.to_owned(), sk.to_owned()));
        }
        let mut files = self.objects().keys_under(&format!("{org}/")).await?;
        files.extend(self.objects().keys_under(&export_prefix(org)).await?);
        purge.files = files.len() as u64;
        if !dry_run {
            for chunk in files.chunks(100) {
                self.objects().delete(chunk).await?;
            }
            self.delete_keys(doomed).await?;
        }
        Ok(purge)
    }

    /// Stores a new data-subject request (queued), with its record on the
    /// organization's trail.
    pub async fn create_data_request(
        &self,
        request: &StoredDataRequest,
        org: &OrgId,
        audit: &Audit<'_>,
    ) -> Result<(), StoreError> {
        let item = data_request_item(org, request)?;
        let insert = put(self.table(), item, Some("attribute_not_exists(pk)"))?;
        self.transact_audited(&Tenant::organization(org.clone()), vec![insert], Some(audit)).await
    }

    pub async fn get_data_request(&self, org: &OrgId, id: &str) -> Result<Option<StoredDataRequest>, StoreError> {
        self.get::<StoredDataRequest>(keys::tenant(org), keys::data_request(id)).await
    }

    pub async fn put_data_request(&self, org: &OrgId, request: &StoredDataRequest) -> Result<(), StoreError> {
        let item = data_request_item(org, request)?;
        self.client().put_item().table_name(self.table()).set_item(Some(item)).send().await?;
        Ok(())
    }

    /// Takes a request to run: `queued → running`, or a `running` one whose
    /// lease lapsed (a run that ended midway: it goes on where that one
    /// left off). `None` when another runner holds it or it finished: a
    /// redelivered record runs once at a time.
    pub async fn lease_data_request(&self, org: &OrgId, id: &str) -> Result<Option<StoredDataRequest>, StoreError> {
        let now = inbox_support::sys::unix_now();
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .key(PK, s(keys::tenant(org)))
            .key(SK, s(keys::data_request(id)))
            .update_expression("SET #st = :running, updated_at = :at, lease_until = :lease")
            .condition_expression("#st = :queued OR (#st = :running AND lease_until < :now)")
            .expression_attribute_names("#st", "status")
            .expression_attribute_values(":running", s(JobStatus::Running.as_str()))
            .expression_attribute_values(":queued", s(JobStatus::Queued.as_str()))
            .expression_attribute_values(":lease", super::n(now + DATA_REQUEST_LEASE_SECS))
            .expression_attribute_values(":now", super::n(now))
            .expression_attribute_values(":at", s(inbox_support::sys::now_string()))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllNew)
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

    /// Data-subject requests to run: queued, or running with a lapsed lease
    /// (a scan: the local runner's view, and on AWS the daily run's, which
    /// takes over a request the stream's retries did not finish).
    pub async fn queued_data_requests(&self) -> Result<Vec<(OrgId, String)>, StoreError> {
        let now = inbox_support::sys::unix_now();
        let items = self
            .scan_all(|scan| {
                scan.filter_expression(
                    "begins_with(#sk, :dsr) AND (#st = :queued OR (#st = :running AND lease_until < :now))",
                )
                .expression_attribute_names("#sk", SK)
                .expression_attribute_names("#st", "status")
                .expression_attribute_values(":dsr", s(keys::DATA_REQUEST_PREFIX))
                .expression_attribute_values(":queued", s(JobStatus::Queued.as_str()))
                .expression_attribute_values(":running", s(JobStatus::Running.as_str()))
                .expression_attribute_values(":now", super::n(now))
            })
            .await?;
        Ok(items
            .iter()
            .filter_map(|item| {
                let org = OrgId::parse(super::get_s(item, "org_id").ok()?)?;
                Some((org, super::get_s(item, "id").ok()?.to_owned()))
            })
            .collect())
    }
}

/// The latest `received_at` an e-mail stored before `cutoff` can have: the
/// ingestion takes a time at most `retention::FUTURE_SKEW_SECS` ahead.
fn late_bound(cutoff: &str) -> String {
    inbox_domain::clock::parse_instant(cutoff)
        .map(|at| inbox_domain::clock::format(at + time::Duration::seconds(inbox_domain::retention::FUTURE_SKEW_SECS)))
        .map_or_else(|| "~".to_owned(), |bound| format!("{bound}#~"))
}

/// Where an organization's export documents are kept: apart from the
/// attachments, under a prefix the bucket's lifecycle expires after 7 days.
/// No organization's files can be under it: an organization id has no `.`.
pub fn export_prefix(org: &OrgId) -> String {
    format!("data.requests/{org}/")
}

pub fn export_key(org: &OrgId, id: &str) -> String {
    format!("{}{id}.json", export_prefix(org))
}

fn data_request_item(org: &OrgId, request: &StoredDataRequest) -> Result<Item, StoreError> {
    super::items::to_item(super::items::Keys::new(keys::tenant(org), keys::data_request(&request.request.id)), request)
}

/// An item's kind for a purge's evidence: its sort key's first component
/// (`EML`, `JOB`, `MEMBER`, …), the identifier index as `DS`, a rate window
/// as `RATE`.
fn item_kind(pk: &str, sk: &str) -> String {
    if pk.contains("#DS#") {
        return "DS".into();
    }
    if pk.contains("#RL#") || pk.contains("#RLI#") {
        return "RATE".into();
    }
    sk.split('#').next().unwrap_or(sk).to_owned()
}

fn corrupt(e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(e.to_string())
}

/// The digests `id` is indexed under in `org` (`Secrets::digests`: one per
/// configured secret, the current first). The organization is part of what
/// is digested, so the same CPF has unrelated keys in two organizations.
pub fn identifier_digests(
    secrets: &inbox_support::secrets::Secrets,
    org: &OrgId,
    id: &inbox_domain::personal::Identifier,
) -> Vec<String> {
    secrets.digests("data-subject", &format!("{org}\0{}", id.canonical()))
}
