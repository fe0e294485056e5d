//! Reads and writes of the workspace's records: inboxes (with their slug
//! claims), allowed senders, e-mails, webhooks (with their URL claims),
//! deliveries and jobs. Uniqueness (one inbox per slug, one webhook per URL)
//! is a claim item taken with a conditional put before the record is
//! written, so two racing upserts cannot both create (see `api::inboxes`).
//! Updates from PATCH-like calls are conditional on the `updated_at` they
//! read (optimistic concurrency).

use aws_sdk_dynamodb::types::{AttributeValue, ConditionCheck, Delete, Put, ReturnValue, TransactWriteItem};

use super::items::{Item, Keys, ListQuery, Page, Position, to_item};
use super::keys::{self, PK, SK};
use super::{Store, StoreError, s};
use crate::domain::Tenant;
use crate::domain::records::{AllowedSender, Delivery, Email, Inbox, Job, JobStatus, Webhook};

fn ws_pk(t: &Tenant) -> String {
    keys::ws(&t.org, &t.workspace)
}

fn built<T, E: std::fmt::Display>(r: Result<T, E>) -> Result<T, StoreError> {
    r.map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn put(table: &str, item: Item, condition: Option<&str>) -> Result<TransactWriteItem, StoreError> {
    let put = built(
        Put::builder()
            .table_name(table)
            .set_item(Some(item))
            .set_condition_expression(condition.map(Into::into))
            .build(),
    )?;
    Ok(TransactWriteItem::builder().put(put).build())
}

/// A webhook as stored: the record plus its sealed signing secret.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StoredWebhook {
    #[serde(flatten)]
    pub webhook: Webhook,
    /// The signing secret, sealed (see `crate::secrets`).
    pub secret_sealed: String,
}

/// Inbox list filters.
pub struct InboxFilter {
    pub status: Option<String>,
    /// Lowercase substring of slug or name.
    pub q: Option<String>,
}

/// E-mail list filters.
#[derive(Default)]
pub struct EmailFilter {
    pub inbox_id: Option<String>,
    pub status: Option<String>,
    pub from: Option<String>,
    /// Inclusive bounds on `received_at`.
    pub after: Option<String>,
    pub before: Option<String>,
}

impl Store {
    async fn transact(&self, items: Vec<TransactWriteItem>) -> Result<(), StoreError> {
        self.client().transact_write_items().set_transact_items(Some(items)).send().await?;
        Ok(())
    }

    /// Writes a new record unless one with its key exists; false when it does.
    async fn insert_new(&self, item: Item) -> Result<bool, StoreError> {
        match self.put_conditional(item, "attribute_not_exists(pk)", &[]).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Replaces a live record; with `previous_updated_at`, only if it is
    /// unchanged since it was read (PATCH), otherwise last writer wins (upsert).
    async fn replace_live(&self, item: Item, previous_updated_at: Option<&str>) -> Result<(), StoreError> {
        let condition = "attribute_exists(pk) AND attribute_not_exists(deleted_at)";
        match previous_updated_at {
            Some(prev) => {
                self.put_conditional(item, &format!("{condition} AND updated_at = :prev"), &[(":prev", s(prev))]).await
            }
            None => self.put_conditional(item, condition, &[]).await,
        }
    }

    async fn put_conditional(
        &self,
        item: Item,
        condition: &str,
        values: &[(&str, AttributeValue)],
    ) -> Result<(), StoreError> {
        let mut request =
            self.client().put_item().table_name(self.table()).set_item(Some(item)).condition_expression(condition);
        for (k, v) in values {
            request = request.expression_attribute_values(*k, v.clone());
        }
        request.send().await?;
        Ok(())
    }

    // ------------------------------------------------------------ inboxes

    pub async fn get_inbox(&self, t: &Tenant, id: &str) -> Result<Option<Inbox>, StoreError> {
        Ok(self.get::<Inbox>(ws_pk(t), keys::inbox(id)).await?.filter(|i| i.deleted_at.is_none()))
    }

    pub async fn list_inboxes(
        &self,
        t: &Tenant,
        filter: &InboxFilter,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<Inbox>, StoreError> {
        let mut q = ListQuery::base(ws_pk(t), "INB#".into());
        q.and("attribute_not_exists(deleted_at)");
        if let Some(status) = &filter.status {
            q.and("#status = :status");
            q.name("#status", "status");
            q.value(":status", s(status.clone()));
        }
        if let Some(text) = &filter.q {
            // `search` is a reserved word in expressions: always via a name placeholder.
            q.and("contains(#search, :q)");
            q.name("#search", "search");
            q.value(":q", s(text.clone()));
        }
        self.list(&q, limit, start).await
    }

    /// The id of the live inbox that owns `slug`, if any.
    pub async fn slug_owner(&self, t: &Tenant, slug: &str) -> Result<Option<String>, StoreError> {
        #[derive(serde::Deserialize)]
        struct Claim {
            inbox_id: String,
        }
        Ok(self.get::<Claim>(ws_pk(t), keys::slug(slug)).await?.map(|c| c.inbox_id))
    }

    fn inbox_item(t: &Tenant, inbox: &Inbox) -> Result<Item, StoreError> {
        let mut item = to_item(Keys::new(ws_pk(t), keys::inbox(&inbox.id)), inbox)?;
        item.insert("search".into(), s(format!("{} {}", inbox.slug, inbox.name).to_lowercase()));
        Ok(item)
    }

    /// Claims `sk` (a uniqueness claim: slug or URL) for `owner`, recording
    /// it under `owner_attr`. False when the claim exists. One conditional put.
    pub async fn claim(&self, t: &Tenant, sk: String, owner_attr: &str, owner: &str) -> Result<bool, StoreError> {
        let mut claim = Item::new();
        claim.insert(PK.into(), s(ws_pk(t)));
        claim.insert(SK.into(), s(sk));
        claim.insert(owner_attr.into(), s(owner));
        match self.put_conditional(claim, "attribute_not_exists(pk)", &[]).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Drops a claim if `owner` still holds it (a stale claim of a deleted record).
    pub async fn release_claim(&self, t: &Tenant, sk: String, owner_attr: &str, owner: &str) -> Result<(), StoreError> {
        let result = self
            .client()
            .delete_item()
            .table_name(self.table())
            .key(PK, s(ws_pk(t)))
            .key(SK, s(sk))
            .condition_expression("#o = :id")
            .expression_attribute_names("#o", owner_attr)
            .expression_attribute_values(":id", s(owner))
            .send()
            .await;
        match result.map_err(StoreError::from) {
            Ok(_) | Err(StoreError::Conflict) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Writes a new inbox unless one with its id exists; false when it does.
    pub async fn insert_inbox(&self, t: &Tenant, inbox: &Inbox) -> Result<bool, StoreError> {
        self.insert_new(Self::inbox_item(t, inbox)?).await
    }

    /// An inbox, deleted or not.
    pub async fn get_inbox_any(&self, t: &Tenant, id: &str) -> Result<Option<Inbox>, StoreError> {
        self.get::<Inbox>(ws_pk(t), keys::inbox(id)).await
    }

    /// Replaces a live inbox (see `replace_live`).
    pub async fn update_inbox(&self, t: &Tenant, inbox: &Inbox, previous: Option<&str>) -> Result<(), StoreError> {
        self.replace_live(Self::inbox_item(t, inbox)?, previous).await
    }

    /// Soft-deletes an inbox and frees its slug, in one transaction.
    pub async fn delete_inbox(&self, t: &Tenant, inbox: &Inbox) -> Result<(), StoreError> {
        let mut deleted = inbox.clone();
        deleted.deleted_at = Some(deleted.updated_at.clone());
        let release = built(
            Delete::builder()
                .table_name(self.table())
                .key(PK, s(ws_pk(t)))
                .key(SK, s(keys::slug(&inbox.slug)))
                .condition_expression("inbox_id = :id")
                .expression_attribute_values(":id", s(inbox.id.clone()))
                .build(),
        )?;
        self.transact(vec![
            put(
                self.table(),
                Self::inbox_item(t, &deleted)?,
                Some("attribute_exists(pk) AND attribute_not_exists(deleted_at)"),
            )?,
            TransactWriteItem::builder().delete(release).build(),
        ])
        .await
    }

    // ------------------------------------------------------------ allowed senders

    /// Allows `sender`; returns false when it was already allowed.
    pub async fn add_sender(&self, t: &Tenant, sender: &AllowedSender) -> Result<bool, StoreError> {
        let item = to_item(Keys::new(ws_pk(t), keys::sender(&sender.inbox_id, &sender.sender)), sender)?;
        match self.put_conditional(item, "attribute_not_exists(pk)", &[]).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict) => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub async fn list_senders(
        &self,
        t: &Tenant,
        inbox_id: &str,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<AllowedSender>, StoreError> {
        self.list(&ListQuery::base(ws_pk(t), keys::sender_prefix(inbox_id)), limit, start).await
    }

    /// Whether `sender` is allowed, as an address or by its domain (one batch read).
    pub async fn sender_allowed(&self, t: &Tenant, inbox_id: &str, address: &str) -> Result<bool, StoreError> {
        let domain = address.rsplit_once('@').map(|(_, d)| format!("@{d}")).unwrap_or_default();
        let (a, d) = tokio::join!(
            self.get::<AllowedSender>(ws_pk(t), keys::sender(inbox_id, address)),
            self.get::<AllowedSender>(ws_pk(t), keys::sender(inbox_id, &domain)),
        );
        Ok(a?.is_some() || d?.is_some())
    }

    /// Stops allowing `sender`; returns false when it was not allowed.
    pub async fn remove_sender(&self, t: &Tenant, inbox_id: &str, sender: &str) -> Result<bool, StoreError> {
        let out = self
            .client()
            .delete_item()
            .table_name(self.table())
            .key(PK, s(ws_pk(t)))
            .key(SK, s(keys::sender(inbox_id, sender)))
            .return_values(ReturnValue::AllOld)
            .send()
            .await?;
        Ok(out.attributes.is_some_and(|a| !a.is_empty()))
    }

    // ------------------------------------------------------------ e-mails

    fn email_item(t: &Tenant, email: &Email) -> Result<Item, StoreError> {
        let pk = ws_pk(t);
        let keys = Keys::new(pk.clone(), keys::email(&email.id));
        let keys = if email.deleted_at.is_none() {
            keys.with_gsi1(keys::emails_index(&pk), keys::timeline(&email.received_at, &email.id))
        } else {
            keys
        };
        let mut item = to_item(keys, email)?;
        item.insert("from_lc".into(), s(email.from.to_lowercase()));
        Ok(item)
    }

    pub async fn get_email(&self, t: &Tenant, id: &str) -> Result<Option<Email>, StoreError> {
        Ok(self.get::<Email>(ws_pk(t), keys::email(id)).await?.filter(|e| e.deleted_at.is_none()))
    }

    pub async fn list_emails(
        &self,
        t: &Tenant,
        filter: &EmailFilter,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<Email>, StoreError> {
        let mut q = ListQuery::gsi1(keys::emails_index(&ws_pk(t)), ws_pk(t), &keys::email(""));
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
            q.value(":status", s(status.clone()));
        }
        if let Some(from) = &filter.from {
            q.and("from_lc = :from");
            q.value(":from", s(from.to_lowercase()));
        }
        self.list(&q, limit, start).await
    }

    /// Writes an e-mail as it is now (creation and updates by the worker).
    pub async fn put_email(&self, t: &Tenant, email: &Email) -> Result<(), StoreError> {
        self.client().put_item().table_name(self.table()).set_item(Some(Self::email_item(t, email)?)).send().await?;
        Ok(())
    }

    /// Stores a new e-mail and its processing job in one transaction.
    pub async fn create_email_with_job(&self, t: &Tenant, email: &Email, job: &Job) -> Result<(), StoreError> {
        self.transact(vec![
            put(self.table(), Self::email_item(t, email)?, Some("attribute_not_exists(pk)"))?,
            self.job_put(t, job)?,
        ])
        .await
    }

    /// Soft-deletes a live e-mail that still has `previous_updated_at`; it leaves every list.
    pub async fn delete_email(&self, t: &Tenant, email: &Email, previous_updated_at: &str) -> Result<(), StoreError> {
        self.replace_live(Self::email_item(t, email)?, Some(previous_updated_at)).await
    }

    /// Stores `email` (its new state) and `job` in one transaction, if the
    /// e-mail is live and unchanged since `previous_updated_at`.
    pub async fn enqueue_email_job(
        &self,
        t: &Tenant,
        email: &Email,
        previous_updated_at: &str,
        job: &Job,
    ) -> Result<(), StoreError> {
        let put_email = built(
            Put::builder()
                .table_name(self.table())
                .set_item(Some(Self::email_item(t, email)?))
                .condition_expression(
                    "attribute_exists(pk) AND attribute_not_exists(deleted_at) AND updated_at = :prev",
                )
                .expression_attribute_values(":prev", s(previous_updated_at))
                .build(),
        )?;
        self.transact(vec![TransactWriteItem::builder().put(put_email).build(), self.job_put(t, job)?]).await
    }

    // ------------------------------------------------------------ webhooks

    fn webhook_item(t: &Tenant, stored: &StoredWebhook) -> Result<Item, StoreError> {
        to_item(Keys::new(ws_pk(t), keys::webhook(&stored.webhook.id)), stored)
    }

    pub async fn get_webhook(&self, t: &Tenant, id: &str) -> Result<Option<StoredWebhook>, StoreError> {
        Ok(self.get::<StoredWebhook>(ws_pk(t), keys::webhook(id)).await?.filter(|w| w.webhook.deleted_at.is_none()))
    }

    pub async fn list_webhooks(
        &self,
        t: &Tenant,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<StoredWebhook>, StoreError> {
        let mut q = ListQuery::base(ws_pk(t), "WHK#".into());
        q.and("attribute_not_exists(deleted_at)");
        self.list(&q, limit, start).await
    }

    pub async fn url_owner(&self, t: &Tenant, url_digest: &str) -> Result<Option<String>, StoreError> {
        #[derive(serde::Deserialize)]
        struct Claim {
            webhook_id: String,
        }
        Ok(self.get::<Claim>(ws_pk(t), keys::url_claim(url_digest)).await?.map(|c| c.webhook_id))
    }

    /// Writes a new webhook unless one with its id exists; false when it does.
    pub async fn insert_webhook(&self, t: &Tenant, stored: &StoredWebhook) -> Result<bool, StoreError> {
        self.insert_new(Self::webhook_item(t, stored)?).await
    }

    /// A webhook, deleted or not.
    pub async fn get_webhook_any(&self, t: &Tenant, id: &str) -> Result<Option<StoredWebhook>, StoreError> {
        self.get::<StoredWebhook>(ws_pk(t), keys::webhook(id)).await
    }

    /// Replaces a live webhook (see `replace_live`).
    pub async fn update_webhook(
        &self,
        t: &Tenant,
        stored: &StoredWebhook,
        previous: Option<&str>,
    ) -> Result<(), StoreError> {
        self.replace_live(Self::webhook_item(t, stored)?, previous).await
    }

    pub async fn delete_webhook(&self, t: &Tenant, stored: &StoredWebhook, url_digest: &str) -> Result<(), StoreError> {
        let mut deleted = stored.clone();
        deleted.webhook.deleted_at = Some(deleted.webhook.updated_at.clone());
        let release = built(
            Delete::builder()
                .table_name(self.table())
                .key(PK, s(ws_pk(t)))
                .key(SK, s(keys::url_claim(url_digest)))
                .condition_expression("webhook_id = :id")
                .expression_attribute_values(":id", s(stored.webhook.id.clone()))
                .build(),
        )?;
        self.transact(vec![
            put(
                self.table(),
                Self::webhook_item(t, &deleted)?,
                Some("attribute_exists(pk) AND attribute_not_exists(deleted_at)"),
            )?,
            TransactWriteItem::builder().delete(release).build(),
        ])
        .await
    }

    /// Writes `job` if the record at `sk` is live (one transaction).
    pub async fn enqueue_job_for(&self, t: &Tenant, sk: String, job: &Job) -> Result<(), StoreError> {
        let check = built(
            ConditionCheck::builder()
                .table_name(self.table())
                .key(PK, s(ws_pk(t)))
                .key(SK, s(sk))
                .condition_expression("attribute_exists(pk) AND attribute_not_exists(deleted_at)")
                .build(),
        )?;
        self.transact(vec![TransactWriteItem::builder().condition_check(check).build(), self.job_put(t, job)?]).await
    }

    // ------------------------------------------------------------ deliveries

    pub async fn get_delivery(&self, t: &Tenant, id: &str) -> Result<Option<Delivery>, StoreError> {
        self.get::<Delivery>(ws_pk(t), keys::delivery(id)).await
    }

    pub async fn put_delivery(&self, t: &Tenant, delivery: &Delivery, payload: &str) -> Result<(), StoreError> {
        let pk = ws_pk(t);
        let keys = Keys::new(pk.clone(), keys::delivery(&delivery.id)).with_gsi1(
            keys::deliveries_index(&pk, &delivery.webhook_id),
            keys::timeline(&delivery.created_at, &delivery.id),
        );
        let mut item = to_item(keys, delivery)?;
        item.insert("payload".into(), s(payload));
        self.client().put_item().table_name(self.table()).set_item(Some(item)).send().await?;
        Ok(())
    }

    /// The event body a delivery sent (for resends).
    pub async fn delivery_payload(&self, t: &Tenant, id: &str) -> Result<Option<String>, StoreError> {
        #[derive(serde::Deserialize)]
        struct Payload {
            payload: String,
        }
        Ok(self.get::<Payload>(ws_pk(t), keys::delivery(id)).await?.map(|p| p.payload))
    }

    pub async fn list_deliveries(
        &self,
        t: &Tenant,
        webhook_id: &str,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<Delivery>, StoreError> {
        self.list(
            &ListQuery::gsi1(keys::deliveries_index(&ws_pk(t), webhook_id), ws_pk(t), &keys::delivery("")),
            limit,
            start,
        )
        .await
    }

    // ------------------------------------------------------------ jobs

    /// A job item: queued jobs are also in the queue index (for the local
    /// runner), and every job names its tenant (for the stream worker).
    fn job_item(t: &Tenant, job: &Job) -> Result<Item, StoreError> {
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

    fn job_put(&self, t: &Tenant, job: &Job) -> Result<TransactWriteItem, StoreError> {
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
    pub async fn claim_job(&self, t: &Tenant, id: &str, lease_secs: u64) -> Result<Option<Job>, StoreError> {
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

impl Store {
    /// Records that `key` was used; false when it had been already (until
    /// `expires_at`, unix seconds). One conditional write.
    pub async fn use_once(&self, t: &Tenant, key: &str, expires_at: u64) -> Result<bool, StoreError> {
        let mut item = Item::new();
        item.insert(PK.into(), s(ws_pk(t)));
        item.insert(SK.into(), s(keys::once(key)));
        item.insert(keys::TTL.into(), super::n(expires_at));
        let now = crate::sys::unix_now();
        let result = self
            .client()
            .put_item()
            .table_name(self.table())
            .set_item(Some(item))
            // Expiry is lazy: an expired record counts as absent.
            .condition_expression("attribute_not_exists(pk) OR #ttl < :now")
            .expression_attribute_names("#ttl", keys::TTL)
            .expression_attribute_values(":now", super::n(now))
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(e) => match StoreError::from(e) {
                StoreError::Conflict => Ok(false),
                other => Err(other),
            },
        }
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
        let mut start = None;
        for _ in 0..MAX_PAGES {
            let out = self
                .client()
                .query()
                .table_name(self.table())
                .index_name(keys::GSI1)
                .key_condition_expression("#kp = :kp")
                .expression_attribute_names("#kp", keys::GSI1_PK)
                .expression_attribute_names("#st", "status")
                .expression_attribute_values(":kp", s(keys::emails_index(&ws_pk(t))))
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
                None => return Ok(counts),
                Some(key) => start = Some(key),
            }
        }
        counts.truncated = true;
        Ok(counts)
    }

    /// The display name of a workspace.
    pub async fn workspace_name(&self, t: &Tenant) -> Result<Option<String>, StoreError> {
        #[derive(serde::Deserialize)]
        struct Ws {
            name: String,
        }
        Ok(self.get::<Ws>(keys::tenant(&t.org), keys::workspace_sk(&t.workspace)).await?.map(|w| w.name))
    }
}
