//! What each kind of job does.
//!
//! - `email.process` / `email.reprocess`: find the bills — boletos
//!   (`domain::boleto`) and Pix codes (`domain::pix`) — in the body and in the
//!   text layer of every stored PDF attachment (`inbox_mail::pdf`), store the
//!   result (replacing any previous one), and send `email.processed` or
//!   `email.failed`. A `rejected` e-mail being
//!   processed for the first time only sends `email.rejected`.
//!   The CPFs and CNPJs it names are indexed by their digest for
//!   data-subject requests (`store::privacy`).
//! - `webhook.test`: send `webhook.test` to that webhook.
//! - `delivery.resend`: send a delivery's event again, as a new attempt.
//!
//! Events go to every active webhook of the workspace subscribed to them
//! (`webhook.test` only to the tested one), all at once, each attempt
//! recorded as a delivery.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use time::Date;

use super::EffectError;
use super::Runner;
use inbox_domain::Tenant;
use inbox_domain::boleto;
use inbox_domain::clock::parse_instant;
use inbox_domain::ids::Kind;
use inbox_domain::personal::{self, Identifier};
use inbox_domain::records::{
    Attachment, Delivery, DeliveryStatus, Email, EmailStatus, EventType, Extracted, Job, JobKind, Reading,
    WebhookStatus,
};
use inbox_mail::pdf::Unread;
use inbox_store::objects::Objects;
use inbox_store::privacy::identifier_digests;
use inbox_store::{StoreError, StoredWebhook};
use inbox_support::sys::new_id;
use inbox_support::sys::now_string;

pub async fn apply(runner: &Runner, t: &Tenant, job: &Job) -> Result<Value, EffectError> {
    match job.kind {
        JobKind::EmailProcess | JobKind::EmailReprocess => process_email(runner, t, job).await,
        JobKind::WebhookTest => test_webhook(runner, t, job).await,
        JobKind::DeliveryResend => resend(runner, t, job).await,
        // `super::run` gives these to the `ExtensionJobs` registered for their kind.
        JobKind::Extension => Err(EffectError::Permanent("an extension job has no effect of its own".into())),
    }
}

/// Records what job `id` is doing now, for `tasks/get` and `GET /jobs/{id}`
/// (`Job::stage`). Progress is not worth failing a job for: a write that
/// fails is logged and the job runs on.
async fn stage(runner: &Runner, t: &Tenant, id: &str, what: String) {
    if let Err(e) = runner.store.set_job_stage(t, id, &what).await {
        tracing::warn!(job = %id, error = %e, "a job's stage was not recorded");
    }
}

/// "1 webhook", "2 webhooks".
fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 { format!("1 {one}") } else { format!("{n} {many}") }
}

/// Why an e-mail job wrote nothing: the e-mail changed while it ran.
pub const SUPERSEDED: &str =
    "the e-mail was deleted or changed while this job ran; nothing was written and no event was sent";

/// What one text gave: its boletos and Pix codes as bills, or why none.
fn bills_in(text: &str, source: &str, received: Date) -> (Vec<Extracted>, Option<boleto::BoletoError>) {
    let (slips, error) = match boleto::all(text, received) {
        Ok(slips) => (slips, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let mut codes = inbox_domain::pix::find_all(text).into_iter();
    let mut bills: Vec<Extracted> = slips
        .into_iter()
        .map(|slip| {
            // A Pix code in the same text as a boleto is the same bill's (a
            // boleto híbrido): the first code goes with the first boleto, and
            // so on; codes left over are bills of their own.
            let pix = codes.next();
            let pix_amount = pix.as_ref().and_then(|p| p.amount_cents);
            Extracted {
                source: source.to_owned(),
                digitable_line: Some(slip.digitable_line),
                barcode: Some(slip.barcode),
                amount_cents: slip.amount_cents,
                due_date: slip.due_date.map(|d| d.to_string()),
                bank_code: slip.bank_code,
                amounts_disagree: pix_amount.is_some_and(|amount| Some(amount) != slip.amount_cents),
                pix,
            }
        })
        .collect();
    bills.extend(codes.map(|pix| Extracted {
        source: source.to_owned(),
        digitable_line: None,
        barcode: None,
        amount_cents: pix.amount_cents,
        due_date: None,
        bank_code: None,
        amounts_disagree: false,
        pix: Some(pix),
    }));
    (bills, error)
}

/// Whether two bills are the same one (the boleto in its PDF and again in
/// the body): the same barcode, or else the same Pix code.
fn same_bill(a: &Extracted, b: &Extracted) -> bool {
    match (&a.barcode, &b.barcode) {
        (Some(x), Some(y)) => x == y,
        _ => matches!((&a.pix, &b.pix), (Some(x), Some(y)) if x.payload == y.payload),
    }
}

/// Adds `bill` to `bills` unless it is one of them; then what it adds to
/// that one is kept: a Pix code beside the line in the body completes the
/// boleto read from the PDF (the amounts compared again).
fn merge(bills: &mut Vec<Extracted>, bill: Extracted) {
    let Some(known) = bills.iter_mut().find(|b| same_bill(b, &bill)) else {
        bills.push(bill);
        return;
    };
    if known.pix.is_none()
        && known.barcode.is_some()
        && let Some(pix) = bill.pix.filter(|_| bill.barcode.is_some())
    {
        known.amounts_disagree = pix.amount_cents.is_some_and(|amount| Some(amount) != known.amount_cents);
        known.pix = Some(pix);
    }
}

/// Whether an attachment is a PDF by its type or its name (senders label
/// PDFs `application/octet-stream` often enough).
fn looks_like_pdf(attachment: &Attachment) -> bool {
    attachment.content_type.eq_ignore_ascii_case("application/pdf")
        || attachment.name.to_ascii_lowercase().ends_with(".pdf")
}

/// Reads every stored PDF attachment and the body for bills, and records
/// the outcome on the e-mail: `processed` with every different bill (the
/// attachments' in their order, then the body's: a boleto is reported
/// where its document is, with a Pix code the body adds); `processed` with
/// none and the first PDF's reason when a PDF could not be read; `failed`
/// with the body's most precise error otherwise.
///
/// Returns the CPFs and CNPJs the PDFs' text names (their text is not kept:
/// the data-subject index is the only trace of it).
pub async fn read_bills(
    runner: &Runner,
    t: &Tenant,
    email: &mut Email,
    job_id: Option<&str>,
) -> Result<BTreeSet<Identifier>, EffectError> {
    let received = received_date(email);
    let pdfs = email.attachments.iter().filter(|a| a.stored && looks_like_pdf(a)).count();
    if let (Some(id), true) = (job_id, pdfs > 0) {
        stage(runner, t, id, format!("Reading {}", count(pdfs, "PDF attachment", "PDF attachments"))).await;
    }
    let mut named = BTreeSet::new();
    let mut bills = Vec::new();
    let mut reason = None;
    for n in 0..email.attachments.len() {
        let Some(attachment) = email.attachments.get(n) else { break };
        let reading = if !looks_like_pdf(attachment) {
            Reading::NotPdf
        } else if !attachment.stored {
            Reading::NotStored
        } else {
            match runner.store.objects().get(&Objects::key(t, &email.id, n)).await? {
                None => Reading::NotStored,
                Some(bytes) => {
                    // CPU-bound and bounded (`inbox_mail::pdf`): off the runtime's threads.
                    let read = tokio::task::spawn_blocking(move || inbox_mail::pdf::text(&bytes)).await;
                    match read.unwrap_or_else(|_| Err(Unread::Unreadable("the reader stopped".into()))) {
                        Ok(text) => {
                            named.extend(personal::find_all(&text));
                            for bill in bills_in(&text, &format!("attachment:{n}"), received).0 {
                                merge(&mut bills, bill);
                            }
                            Reading::Read
                        }
                        Err(unread) => {
                            let reading = match unread {
                                Unread::NoText => Reading::PdfNoText,
                                Unread::Encrypted => Reading::PdfEncrypted,
                                Unread::Unreadable(_) => Reading::PdfUnreadable,
                            };
                            // The reason's code, not the reader's message (which may quote the file).
                            tracing::info!(email_id = %email.id, attachment = n, reason = reading.as_str(), "PDF not read");
                            reason.get_or_insert(reading);
                            reading
                        }
                    }
                }
            }
        };
        if let Some(attachment) = email.attachments.get_mut(n) {
            attachment.reading = Some(reading);
        }
    }
    let (in_body, body_error) = bills_in(&email.text, "body", received);
    for bill in in_body {
        merge(&mut bills, bill);
    }
    email.extracted = bills.first().cloned();
    email.reason = None;
    email.error = None;
    if !bills.is_empty() {
        email.status = EmailStatus::Processed;
    } else if let Some(reason) = reason {
        email.status = EmailStatus::Processed;
        email.reason = Some(reason);
    } else {
        email.status = EmailStatus::Failed;
        email.error = Some(body_error.unwrap_or(boleto::BoletoError::NotFound).to_string());
    }
    email.bills = bills;
    Ok(named)
}

/// Every CPF and CNPJ the e-mail names: in its sender, subject and body,
/// its bills' Pix keys, and `in_files` (its PDFs' text).
pub fn identifiers(email: &Email, mut in_files: BTreeSet<Identifier>) -> BTreeSet<Identifier> {
    for text in [&email.from, &email.subject, &email.text] {
        in_files.extend(personal::find_all(text));
    }
    let keys = email.bills.iter().filter_map(|b| b.pix.as_ref()?.key.as_deref());
    in_files.extend(keys.filter_map(|key| Identifier::parse(key).ok()));
    in_files
}

fn received_date(email: &Email) -> Date {
    parse_instant(&email.received_at).map_or_else(|| inbox_support::sys::now().date(), |t| t.date())
}

async fn process_email(runner: &Runner, t: &Tenant, job: &Job) -> Result<Value, EffectError> {
    let Some(mut email) = runner.store.get_email(t, &job.subject_id).await? else {
        return Err(EffectError::Permanent("the e-mail was deleted".into()));
    };
    let digests_of = |email: &Email, in_files| -> Vec<String> {
        identifiers(email, in_files)
            .iter()
            .filter_map(|id| identifier_digests(&runner.secrets, &t.org, id).into_iter().next())
            .collect()
    };
    let event = if email.status == EmailStatus::Rejected && job.kind == JobKind::EmailProcess {
        // A rejected message still holds what its sender wrote (its files
        // were not kept): a data subject's request must find it too.
        runner.store.index_identifiers(t, &email.id, &digests_of(&email, BTreeSet::new())).await?;
        EventType::EmailRejected
    } else {
        let in_files = read_bills(runner, t, &mut email, Some(&job.id)).await?;
        // Indexed before the e-mail is written: should the write lose to a
        // delete or a newer reprocess, an entry too many is a hint that
        // leads nowhere (its readers read the e-mail), never a miss.
        runner.store.index_identifiers(t, &email.id, &digests_of(&email, in_files)).await?;
        let read_version = std::mem::replace(&mut email.updated_at, now_string());
        // Over the version read only: a delete or a newer reprocess that
        // landed meanwhile wins, and this job ends without notifying.
        match runner.store.put_processed_email(t, &email, &read_version).await {
            Ok(()) => {}
            Err(StoreError::Conflict) => {
                // Erased meanwhile: the entries just written must go too.
                if let Some(now) = runner.store.get_email_record(t, &email.id).await?
                    && now.erased_by.is_some()
                {
                    runner.store.drop_identifiers(t, &email.id).await?;
                }
                return Err(EffectError::Permanent(SUPERSEDED.into()));
            }
            Err(e) => return Err(e.into()),
        }
        if email.status == EmailStatus::Processed { EventType::EmailProcessed } else { EventType::EmailFailed }
    };
    let data = json!({
        "email_id": email.id, "inbox_id": email.inbox_id, "status": email.status, "from": email.from,
        "received_at": email.received_at, "extracted": email.extracted, "bills": email.bills,
        "reason": email.reason, "error": email.error,
    });
    // Erased while this ran: the erasure marked the job, and writing its
    // result empties it and the events sent meanwhile (`Store::put_job`).
    let deliveries = notify(runner, t, event, data, None, Some(&job.id), Some(&email.id)).await?;
    Ok(json!({
        "email_id": email.id, "status": email.status, "extracted": email.extracted, "bills": email.bills,
        "reason": email.reason, "error": email.error, "deliveries": deliveries,
    }))
}

async fn test_webhook(runner: &Runner, t: &Tenant, job: &Job) -> Result<Value, EffectError> {
    let webhook_id = job.subject_id.as_str();
    let Some(webhook) = runner.store.get_webhook(t, webhook_id).await? else {
        return Err(EffectError::Permanent("the webhook was deleted".into()));
    };
    refuse_disabled(&webhook)?;
    let data =
        json!({"webhook_id": webhook.webhook.id, "message": "This is a test event from Kobana Autonomous Inbox."});
    let deliveries = notify(runner, t, EventType::WebhookTest, data, Some(webhook), Some(&job.id), None).await?;
    let delivery = deliveries.into_iter().next().unwrap_or(Value::Null);
    Ok(json!({"delivery": delivery}))
}

async fn resend(runner: &Runner, t: &Tenant, job: &Job) -> Result<Value, EffectError> {
    let delivery_id = job.subject_id.as_str();
    let (previous, payload) =
        tokio::join!(runner.store.get_delivery(t, delivery_id), runner.store.delivery_payload(t, delivery_id));
    let (previous, payload) = (previous?, payload?);
    let Some(previous) = previous else {
        return Err(EffectError::Permanent("the delivery no longer exists".into()));
    };
    let Some(payload) = payload else {
        return Err(EffectError::Permanent(
            "the event this delivery sent was erased with its e-mail; it cannot be sent again".into(),
        ));
    };
    let Some(webhook) = runner.store.get_webhook(t, &previous.webhook_id).await? else {
        return Err(EffectError::Permanent("the delivery's webhook was deleted".into()));
    };
    refuse_disabled(&webhook)?;
    stage(runner, t, &job.id, "Sending the event again to 1 webhook".to_owned()).await;
    // The event is about the e-mail it names, if any: the new copy is referenced like the first.
    let about = serde_json::from_str::<Value>(&payload)
        .ok()
        .and_then(|event| event.pointer("/data/email_id").and_then(Value::as_str).map(str::to_owned));
    let delivery = deliver(
        runner,
        t,
        &webhook,
        &previous.event_id,
        previous.event_type,
        &payload,
        previous.attempt + 1,
        Some(previous.id.clone()),
        about.as_deref(),
    )
    .await?;
    Ok(json!({"delivery": delivery}))
}

/// A webhook disabled after the job was enqueued receives nothing: the job
/// fails with the reason and no delivery is recorded.
fn refuse_disabled(webhook: &StoredWebhook) -> Result<(), EffectError> {
    match webhook.webhook.status {
        WebhookStatus::Active => Ok(()),
        WebhookStatus::Disabled => Err(EffectError::Permanent("the webhook is disabled".into())),
    }
}

/// Builds the event and delivers it to `only`, or to every subscribed webhook.
async fn notify(
    runner: &Runner,
    t: &Tenant,
    event_type: EventType,
    data: Value,
    only: Option<StoredWebhook>,
    job_id: Option<&str>,
    about: Option<&str>,
) -> Result<Vec<Value>, EffectError> {
    let event_id = new_id(Kind::Event);
    let payload = json!({"id": event_id, "type": event_type, "created_at": now_string(), "data": data}).to_string();
    let targets = match only {
        Some(w) => vec![w],
        None => subscribed(runner, t, event_type).await?,
    };
    if let (Some(id), false) = (job_id, targets.is_empty()) {
        stage(runner, t, id, format!("Notifying {}", count(targets.len(), "webhook", "webhooks"))).await;
    }
    let sends = targets.iter().map(|w| deliver(runner, t, w, &event_id, event_type, &payload, 1, None, about));
    let results = futures_util::future::join_all(sends).await;
    results.into_iter().collect()
}

/// Active webhooks of the workspace subscribed to `event_type` (kept a few
/// seconds per container: `store::cache`).
async fn subscribed(runner: &Runner, t: &Tenant, event_type: EventType) -> Result<Vec<StoredWebhook>, EffectError> {
    Ok(runner
        .store
        .all_webhooks(t)
        .await?
        .into_iter()
        .filter(|w| w.webhook.status == WebhookStatus::Active && w.webhook.events.contains(&event_type))
        .collect())
}

/// One attempt: send, then record it as a delivery.
#[expect(clippy::too_many_arguments, reason = "an attempt is fully described by these")]
async fn deliver(
    runner: &Runner,
    t: &Tenant,
    webhook: &StoredWebhook,
    event_id: &str,
    event_type: EventType,
    payload: &str,
    attempt: u32,
    resend_of: Option<String>,
    about: Option<&str>,
) -> Result<Value, EffectError> {
    let id = inbox_support::sys::new_id_in(Kind::Delivery, &t.shards);
    let outcome = match runner.secrets.unseal(&webhook.secret_sealed) {
        Some(secret) => runner.outbound.post(&webhook.webhook.url, &secret, event_type.as_str(), &id, payload).await,
        None => inbox_outbound::Attempt {
            status_code: None,
            duration_ms: 0,
            error: Some("the webhook's secret cannot be read; rotate it".into()),
        },
    };
    let delivery = Delivery {
        id,
        webhook_id: webhook.webhook.id.clone(),
        event_id: event_id.to_owned(),
        event_type,
        status: if outcome.error.is_none() { DeliveryStatus::Succeeded } else { DeliveryStatus::Failed },
        status_code: outcome.status_code,
        duration_ms: Some(outcome.duration_ms),
        error: outcome.error,
        attempt,
        resend_of,
        created_at: now_string(),
    };
    runner.store.put_delivery(t, &delivery, payload, about).await?;
    delivery_metrics(t, &delivery);
    serde_json::to_value(&delivery).map_err(|e| EffectError::Permanent(e.to_string()))
}

/// One EMF line per delivery attempt: `Deliveries` and `DeliveryLatency`, by
/// outcome and event type.
fn delivery_metrics(t: &Tenant, delivery: &Delivery) {
    let outcome = match delivery.status {
        DeliveryStatus::Succeeded => DeliveryStatus::Succeeded.as_str(),
        DeliveryStatus::Pending | DeliveryStatus::Failed => DeliveryStatus::Failed.as_str(),
    };
    #[expect(clippy::cast_precision_loss, reason = "a delivery lasts at most seconds: exact in f64")]
    let latency = delivery.duration_ms.unwrap_or(0) as f64;
    inbox_support::telemetry::Emf {
        dimensions: &[&["Outcome"], &["EventType", "Outcome"]],
        metrics: &[("Deliveries", "Count", 1.0), ("DeliveryLatency", "Milliseconds", latency)],
        properties: &[
            ("Outcome", Value::from(outcome)),
            ("EventType", Value::from(delivery.event_type.as_str())),
            ("StatusCode", delivery.status_code.map_or(Value::Null, Value::from)),
            ("DeliveryId", Value::from(delivery.id.as_str())),
            ("Workspace", Value::from(t.workspace.as_str())),
        ],
    }
    .emit();
}
