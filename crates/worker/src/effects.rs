//! What each kind of job does.
//!
//! - `email.process` / `email.reprocess`: extract the boleto from the body
//!   (`domain::boleto`), store the result (replacing any previous one), and
//!   send `email.processed` or `email.failed`. A `rejected` e-mail being
//!   processed for the first time only sends `email.rejected`.
//! - `webhook.test`: send `webhook.test` to that webhook.
//! - `delivery.resend`: send a delivery's event again, as a new attempt.
//!
//! Events go to every active webhook of the workspace subscribed to them
//! (`webhook.test` only to the tested one), all at once, each attempt
//! recorded as a delivery.

use serde_json::{Value, json};
use time::Date;

use super::EffectError;
use super::Runner;
use inbox_domain::Tenant;
use inbox_domain::boleto;
use inbox_domain::clock::parse_instant;
use inbox_domain::ids::Kind;
use inbox_domain::records::{
    Delivery, DeliveryStatus, Email, EmailStatus, EventType, Extracted, Job, JobKind, WebhookStatus,
};
use inbox_store::{StoreError, StoredWebhook};
use inbox_support::sys::new_id;
use inbox_support::sys::now_string;

pub async fn apply(runner: &Runner, t: &Tenant, job: &Job) -> Result<Value, EffectError> {
    match job.kind {
        JobKind::EmailProcess | JobKind::EmailReprocess => process_email(runner, t, job).await,
        JobKind::WebhookTest => test_webhook(runner, t, &job.subject_id).await,
        JobKind::DeliveryResend => resend(runner, t, &job.subject_id).await,
        // `super::run` gives these to the `ExtensionJobs` registered for their kind.
        JobKind::Extension => Err(EffectError::Permanent("an extension job has no effect of its own".into())),
    }
}

/// Why an e-mail job wrote nothing: the e-mail changed while it ran.
pub const SUPERSEDED: &str =
    "the e-mail was deleted or changed while this job ran; nothing was written and no event was sent";

/// Applies the extraction outcome to the e-mail.
pub fn apply_extraction(email: &mut Email, outcome: Result<boleto::Slip, boleto::BoletoError>) {
    match outcome {
        Ok(slip) => {
            email.status = EmailStatus::Processed;
            // A Pix code in the same text is the same bill's (a boleto
            // híbrido): the first one found is kept beside the slip.
            let pix = inbox_domain::pix::find_all(&email.text).into_iter().next();
            let pix_amount = pix.as_ref().and_then(|p| p.amount_cents);
            email.extracted = Some(Extracted {
                digitable_line: slip.digitable_line,
                barcode: slip.barcode,
                amount_cents: slip.amount_cents,
                due_date: slip.due_date.map(|d| d.to_string()),
                bank_code: slip.bank_code,
                amounts_disagree: pix_amount.is_some_and(|amount| Some(amount) != slip.amount_cents),
                pix,
            });
            email.error = None;
        }
        Err(error) => {
            email.status = EmailStatus::Failed;
            email.extracted = None;
            email.error = Some(error.to_string());
        }
    }
}

fn received_date(email: &Email) -> Date {
    parse_instant(&email.received_at).map_or_else(|| inbox_support::sys::now().date(), |t| t.date())
}

async fn process_email(runner: &Runner, t: &Tenant, job: &Job) -> Result<Value, EffectError> {
    let Some(mut email) = runner.store.get_email(t, &job.subject_id).await? else {
        return Err(EffectError::Permanent("the e-mail was deleted".into()));
    };
    let event = if email.status == EmailStatus::Rejected && job.kind == JobKind::EmailProcess {
        EventType::EmailRejected
    } else {
        let outcome = boleto::extract(&email.text, received_date(&email));
        let read_version = std::mem::replace(&mut email.updated_at, now_string());
        apply_extraction(&mut email, outcome);
        // Over the version read only: a delete or a newer reprocess that
        // landed meanwhile wins, and this job ends without notifying.
        match runner.store.put_processed_email(t, &email, &read_version).await {
            Ok(()) => {}
            Err(StoreError::Conflict) => return Err(EffectError::Permanent(SUPERSEDED.into())),
            Err(e) => return Err(e.into()),
        }
        if email.status == EmailStatus::Processed { EventType::EmailProcessed } else { EventType::EmailFailed }
    };
    let data = json!({
        "email_id": email.id, "inbox_id": email.inbox_id, "status": email.status, "from": email.from,
        "received_at": email.received_at, "extracted": email.extracted, "error": email.error,
    });
    let deliveries = notify(runner, t, event, data, None).await?;
    Ok(
        json!({"email_id": email.id, "status": email.status, "extracted": email.extracted, "error": email.error, "deliveries": deliveries}),
    )
}

async fn test_webhook(runner: &Runner, t: &Tenant, webhook_id: &str) -> Result<Value, EffectError> {
    let Some(webhook) = runner.store.get_webhook(t, webhook_id).await? else {
        return Err(EffectError::Permanent("the webhook was deleted".into()));
    };
    refuse_disabled(&webhook)?;
    let data =
        json!({"webhook_id": webhook.webhook.id, "message": "This is a test event from Kobana Autonomous Inbox."});
    let deliveries = notify(runner, t, EventType::WebhookTest, data, Some(webhook)).await?;
    let delivery = deliveries.into_iter().next().unwrap_or(Value::Null);
    Ok(json!({"delivery": delivery}))
}

async fn resend(runner: &Runner, t: &Tenant, delivery_id: &str) -> Result<Value, EffectError> {
    let (previous, payload) =
        tokio::join!(runner.store.get_delivery(t, delivery_id), runner.store.delivery_payload(t, delivery_id));
    let (Some(previous), Some(payload)) = (previous?, payload?) else {
        return Err(EffectError::Permanent("the delivery no longer exists".into()));
    };
    let Some(webhook) = runner.store.get_webhook(t, &previous.webhook_id).await? else {
        return Err(EffectError::Permanent("the delivery's webhook was deleted".into()));
    };
    refuse_disabled(&webhook)?;
    let delivery = deliver(
        runner,
        t,
        &webhook,
        &previous.event_id,
        previous.event_type,
        &payload,
        previous.attempt + 1,
        Some(previous.id.clone()),
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
) -> Result<Vec<Value>, EffectError> {
    let event_id = new_id(Kind::Event);
    let payload = json!({"id": event_id, "type": event_type, "created_at": now_string(), "data": data}).to_string();
    let targets = match only {
        Some(w) => vec![w],
        None => subscribed(runner, t, event_type).await?,
    };
    let sends = targets.iter().map(|w| deliver(runner, t, w, &event_id, event_type, &payload, 1, None));
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
    runner.store.put_delivery(t, &delivery, payload).await?;
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
