//! Mail received by Amazon SES: the worker Lambda's second kind of event,
//! beside the table's stream. `src/bin/worker.rs` tells the two apart by the
//! records' `eventSource` (`is_mail_event`), so receiving mail adds no build
//! artefact; this module is the SES half, composed here (layer 5) because it
//! needs both the operations (`api`) and the bucket (`store`), which the
//! worker crate (beside `api`, layer 3) may not name.
//!
//! **How a message arrives.** With `InboundMailDomain` set, the stack's
//! receipt rule (template.yaml) runs two actions in order: an S3 action
//! storing the raw message as `inbound/<SES message id>` in the attachments
//! bucket, then a Lambda action invoking the worker asynchronously (`Event`)
//! with SES's event. A Lambda action rather than an S3 event notification on
//! the object because only SES's event carries what the product needs beside
//! the bytes: the envelope recipients (where the mail was delivered, Bcc
//! included, which the headers need not name) and SES's verdicts
//! (`spfVerdict`, `dkimVerdict`, `dmarcVerdict`, `spamVerdict`,
//! `virusVerdict`); neither the stored object nor an S3 event holds them.
//!
//! **Addresses.** An inbox's address under the receiving domain is
//! `<inbox slug>.<workspace id>.<organization id>@<InboundMailDomain>`
//! (`bills.ws_main.org_demo@inbound.example.com`): no routing table to keep,
//! and every part is looked up inside the tenant the address names, the way
//! a request's ids are — the organization's registered workspaces, then the
//! slug in that workspace — so an address can only ever reach an inbox of
//! the organization it names. None of the three can hold a `.` (slugs are
//! `[a-z0-9-]`, tenant ids `[A-Za-z0-9_-]`), so the split is unambiguous.
//! The slug is read in any case (slugs are lowercase); the workspace and
//! organization ids are compared as written (mail programs keep a local
//! part's case, RFC 5321 §2.4). A recipient that names no inbox is dropped
//! and counted, never logged: an address may be a person's.
//!
//! **Ingestion.** Each recipient's inbox gets the message through the same
//! operation as the REST mail pipeline (`api::emails::INGEST` through
//! `api::invoke`: authorization, the audit record, the `Message-ID` dedupe,
//! the sender policy, the attachments), as a machine principal: subject
//! `SUBJECT`, scope `emails:ingest`, in the organization the address names,
//! resolved into its workspace as any pipeline is (`resolve_pipeline`). So a
//! workspace takes SES mail only once its organization registered
//! `ses.amazonaws.com` as one of its mail pipelines (`admin pipeline register
//! --subject ses.amazonaws.com`), and unregistering it stops the mail. The
//! audit record is the pipeline's: `POST /inboxes/{id}/emails` by that
//! subject, the Lambda request id as its request id.
//!
//! **Verdicts.** SES's SPF, DKIM and DMARC verdicts become the e-mail's
//! `authentication`, written as the `Authentication-Results` value the
//! receiving server would write (`amazonses.com; spf=…; dkim=…; dmarc=…`)
//! and read by the parser that reads that header (`receipt`): `PASS` is
//! `pass`, `FAIL` `fail`, `GRAY` (no policy, not signed) `none`,
//! `PROCESSING_FAILED` `temperror`; `DISABLED` and anything else leave the
//! method out (read as `none`). They replace the message's own header, which
//! a sender can write. A `virusVerdict` of `FAIL` stores the e-mail
//! `rejected` (`VIRUS`), its attachments never written and its job only
//! notifying (`email.rejected`); the spam verdict is not acted on (the
//! inbox's sender policy decides who may send). A message without a
//! `Message-ID` gets `<SES message id>@amazonses.com` as one, so SES's
//! at-least-once invocations make one e-mail.
//!
//! **Failures.** Lambda retries a failed asynchronous invocation twice, then
//! hands the event to the worker's on-failure queue. So only what a retry can
//! cure fails the invocation (`Transient`: the table or the bucket
//! unavailable); everything else is final, logged by the SES message id (no
//! address, subject or body) and counted (`InboundMail` by `Outcome`, and
//! `InboundDropped`, which the template alarms on, for a message that could
//! not be taken at all: over the raw-message limit, unreadable, or an event
//! that is not SES's). A message over `gate::MAX_MESSAGE_BYTES` (what REST
//! takes, and what the worker reads an attachment back within) is dropped:
//! SES accepts up to 40 MB.
//!
//! **The raw message** is deleted from `inbound/` once its outcome is final
//! (ingested, refused, dropped): the e-mail's record and its attachments are
//! what is kept, and a second invocation for it finds it gone (`Gone`). One
//! whose handling kept failing stays, for an operator to replay with the
//! event from the on-failure queue. Keys there are `inbound/` and an SES
//! message id (no `/`), so they never meet an attachment's
//! `{org}/{ws}/{email}/{n}`, even an organization's named `inbound`.

use std::sync::Arc;
use std::time::Duration;

use aws_lambda_events::event::ses::{SimpleEmailEvent, SimpleEmailReceipt, SimpleEmailService, SimpleEmailVerdict};
use serde_json::Value;

use crate::api::audit::Origin;
use crate::api::emails::{self, Receipt};
use crate::api::error::ApiError;
use crate::api::tenancy::{MembershipCache, TenancyError};
use crate::api::{self, Input, Media, Param, Route, Services};
use crate::auth::Principal;
use crate::domain::ids::{Kind, is_id};
use crate::domain::mailauth::Verdict;
use crate::domain::records::{EmailStatus, Surface};
use crate::domain::{OrgId, Scope, Scopes, Tenant, WorkspaceId};
use crate::secrets::Secrets;
use crate::store::objects::MAX_OBJECT_BYTES;
use crate::store::{Store, StoreError};

/// Where the receipt rule's S3 action stores raw messages.
pub const KEY_PREFIX: &str = "inbound/";

/// The machine principal SES mail is ingested as: the subject an
/// organization registers as a workspace's mail pipeline to take SES mail
/// there. SES's own service principal, which no identity provider issues.
pub const SUBJECT: &str = "ses.amazonaws.com";

/// The `authserv-id` of the verdicts (what SES writes in the
/// `Authentication-Results` it adds to a stored message).
pub const AUTHSERV_ID: &str = "amazonses.com";

/// The error of an e-mail refused for a virus.
pub const VIRUS: &str = "the receiving server (Amazon SES) found a virus in this message: it was not processed and its attachments were not kept";

// The limit a raw message is held to is REST's, and the bucket's reads stop
// at it: one number, so a message taken here never holds an attachment the
// worker cannot read back.
const _: () = assert!(MAX_OBJECT_BYTES == crate::gate::MAX_MESSAGE_BYTES);

/// Whether a worker invocation's payload is SES's: its records say
/// `"eventSource": "aws:ses"` (the table's stream batches say `aws:dynamodb`).
pub fn is_mail_event(payload: &Value) -> bool {
    let first = payload.get("Records").and_then(Value::as_array).and_then(|records| records.first());
    first.and_then(|record| record.get("eventSource")).and_then(Value::as_str) == Some("aws:ses")
}

/// An inbox's address, as its local part names it (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub slug: String,
    pub workspace: WorkspaceId,
    pub org: OrgId,
}

impl Address {
    /// The inbox `recipient` names, if it is one of this scheme's addresses
    /// (the domain is the receipt rule's to check: it only passes its own).
    pub fn parse(recipient: &str) -> Option<Address> {
        let recipient = recipient.trim().trim_start_matches('<').trim_end_matches('>');
        let (local, domain) = recipient.rsplit_once('@')?;
        if domain.is_empty() {
            return None;
        }
        let mut parts = local.split('.');
        let (slug, workspace, org) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let slug = slug.to_ascii_lowercase();
        let slug_ok = (2..=63).contains(&slug.len())
            && slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && slug.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric());
        // A workspace id the server chose (`ws_…`): never the organization's
        // own trail, which no pipeline can be registered for anyway.
        if !slug_ok || !is_id(Kind::Workspace, workspace) {
            return None;
        }
        Some(Address { slug, workspace: WorkspaceId::parse(workspace)?, org: OrgId::parse(org)? })
    }
}

/// What became of a message for one recipient (or of the whole message, when
/// it was not read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Stored in the recipient's inbox, or found there already (the same
    /// message delivered before); `rejected` for a virus or a sender the
    /// inbox does not allow.
    Ingested { email_id: String, job_id: String, rejected: bool },
    /// Not stored, and it never will be.
    Dropped(Dropped),
}

/// Why a message (or one recipient's copy) was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    /// The event is not one SES writes (no usable message id, no recipient).
    Malformed,
    /// The address names no inbox, or its workspace takes no SES mail.
    UnknownRecipient,
    /// The raw message is not in the bucket: an earlier invocation for the
    /// same event handled it (and deleted it).
    Gone,
    /// Over the raw-message limit.
    TooLarge,
    /// Not a message the ingestion reads (no header section, a `From` that
    /// is no address, over its limits).
    Unreadable,
    /// The inbox takes no mail now (paused, deleted, its workspace archived).
    Refused,
}

impl Outcome {
    /// The `Outcome` dimension of its metric.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Ingested { rejected: false, .. } => "ingested",
            Outcome::Ingested { rejected: true, .. } => EmailStatus::Rejected.as_str(),
            Outcome::Dropped(Dropped::Malformed) => "malformed",
            Outcome::Dropped(Dropped::UnknownRecipient) => "unknown_recipient",
            Outcome::Dropped(Dropped::Gone) => "gone",
            Outcome::Dropped(Dropped::TooLarge) => "too_large",
            Outcome::Dropped(Dropped::Unreadable) => "unreadable",
            Outcome::Dropped(Dropped::Refused) => "refused",
        }
    }

    /// A message that could not be taken at all: what `InboundDropped`
    /// counts, and an operator should look at. Unknown recipients are the
    /// world's mistakes (or spam), a gone message a duplicate, a refusal
    /// the inbox's own state.
    fn alarming(&self) -> bool {
        matches!(self, Outcome::Dropped(Dropped::Malformed | Dropped::TooLarge | Dropped::Unreadable))
    }
}

/// A failure a retry can cure (the table or the bucket unavailable): the
/// invocation fails, and Lambda invokes again.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Transient(String);

/// Who gets one message: the recipient's inbox, in its tenant, and the
/// principal ingesting there.
struct Target {
    principal: Principal,
    tenant: Tenant,
    inbox_id: String,
}

impl Target {
    fn same_inbox(&self, other: &Target) -> bool {
        (&self.tenant.org, &self.tenant.workspace, &self.inbox_id)
            == (&other.tenant.org, &other.tenant.workspace, &other.inbox_id)
    }
}

/// What handling SES mail needs, built once per container from the worker's
/// store and secrets: the operations' services (no issuer, no edge).
pub struct Inbound {
    services: Services,
}

impl Inbound {
    pub fn new(store: Store, secrets: Arc<Secrets>) -> Inbound {
        Inbound {
            services: Services {
                store,
                secrets,
                // Ingestion makes no outbound call; the worker's deliveries have their own client.
                webhook_allow_loopback: false,
                // A pipeline's workspace is resolved without it (`resolve_pipeline`).
                memberships: MembershipCache::new(Duration::ZERO),
            },
        }
    }

    /// One worker invocation whose payload is SES's (`is_mail_event`): an
    /// event that does not read as SES's is logged and dropped (a retry
    /// would read it no better).
    pub async fn on_event(&self, payload: Value, request_id: &str) -> Result<Vec<Outcome>, Transient> {
        let ses_id = payload.pointer("/Records/0/ses/mail/messageId").and_then(Value::as_str).map(loggable);
        match serde_json::from_value::<SimpleEmailEvent>(payload) {
            Ok(event) => self.handle(event, request_id).await,
            Err(error) => {
                let error = crate::telemetry::without_values(&error.to_string());
                tracing::error!(ses_message_id = ses_id.as_deref(), %error, "inbound mail: not an SES event; dropped");
                let outcome = Outcome::Dropped(Dropped::Malformed);
                count(&outcome, ses_id.as_deref());
                Ok(vec![outcome])
            }
        }
    }

    /// Every message of an SES event (SES sends one), each recipient's
    /// outcome in order.
    pub async fn handle(&self, event: SimpleEmailEvent, request_id: &str) -> Result<Vec<Outcome>, Transient> {
        let mut outcomes = Vec::new();
        for record in event.records {
            outcomes.extend(self.message(record.ses, request_id).await?);
        }
        Ok(outcomes)
    }

    async fn message(&self, ses: SimpleEmailService, request_id: &str) -> Result<Vec<Outcome>, Transient> {
        let id = ses.mail.message_id.as_deref().filter(|id| is_ses_id(id));
        let (Some(id), false) = (id, ses.receipt.recipients.is_empty()) else {
            let ses_id = ses.mail.message_id.as_deref().map(loggable);
            tracing::error!(
                ses_message_id = ses_id.as_deref(),
                "inbound mail: no usable message id or no recipient; dropped"
            );
            let outcome = Outcome::Dropped(Dropped::Malformed);
            count(&outcome, ses_id.as_deref());
            return Ok(vec![outcome]);
        };
        let key = format!("{KEY_PREFIX}{id}");
        // The recipients first: a message for no inbox is never read.
        let mut targets: Vec<Target> = Vec::new();
        let mut outcomes = Vec::new();
        for recipient in &ses.receipt.recipients {
            match self.target(recipient).await? {
                // The same inbox named twice (a list and its alias): one e-mail.
                Some(target) if targets.iter().any(|t| t.same_inbox(&target)) => {}
                Some(target) => targets.push(target),
                None => outcomes.push(self.outcome(id, Outcome::Dropped(Dropped::UnknownRecipient), None)),
            }
        }
        if targets.is_empty() {
            self.discard(&key, id).await;
            return Ok(outcomes);
        }
        let raw = match self.services.store.objects().get(&key).await {
            Ok(Some(raw)) => raw,
            Ok(None) => {
                outcomes.push(self.outcome(id, Outcome::Dropped(Dropped::Gone), None));
                return Ok(outcomes);
            }
            // The one refusal of `get`: the object is over the limit (its
            // size is read from the answer's length, before the body).
            Err(StoreError::Corrupt(_)) => {
                outcomes.push(self.outcome(id, Outcome::Dropped(Dropped::TooLarge), None));
                self.discard(&key, id).await;
                return Ok(outcomes);
            }
            Err(error) => return Err(transient(id, &error)),
        };
        let receipt = receipt(&ses.receipt, id);
        for target in &targets {
            let outcome = self.ingest(target, &raw, &receipt, request_id).await.map_err(|e| transient(id, &e))?;
            outcomes.push(self.outcome(id, outcome, Some(&target.tenant)));
        }
        self.discard(&key, id).await;
        Ok(outcomes)
    }

    /// The inbox `recipient` names, if it names one whose workspace takes
    /// SES mail; `None` for any other address.
    async fn target(&self, recipient: &str) -> Result<Option<Target>, Transient> {
        let Some(address) = Address::parse(recipient) else { return Ok(None) };
        let scopes = Scopes::from_names([Scope::EmailsIngest.as_str()]);
        let principal = Principal::new(SUBJECT.into(), SUBJECT.into(), address.org.clone(), scopes);
        // The workspace as a pipeline's is resolved: registered for SUBJECT
        // in the organization the address names, or not found.
        let tenant = match self.services.resolve_pipeline(&principal, Some(address.workspace.as_str())).await {
            Ok(tenant) => tenant,
            Err(TenancyError::Store(error)) => return Err(Transient(format!("resolving a recipient: {error}"))),
            Err(_) => return Ok(None),
        };
        let inbox = self.services.store.slug_owner(&tenant, &address.slug).await;
        let inbox = inbox.map_err(|error| Transient(format!("resolving a recipient: {error}")))?;
        Ok(inbox.map(|inbox_id| Target { principal, tenant, inbox_id }))
    }

    /// The ingestion of `raw` into the target's inbox, as the REST pipeline's
    /// (`api::invoke` of `INGEST`), with SES's receipt. `Err` only for what
    /// a retry can cure.
    async fn ingest(
        &self,
        target: &Target,
        raw: &[u8],
        receipt: &Receipt,
        request_id: &str,
    ) -> Result<Outcome, ApiError> {
        let route = Route::new(&emails::INGEST).with(Param::Id, target.inbox_id.as_str())?;
        let input = Input::rest_as(&route, None, raw, Media::Message);
        let origin = Origin { request_id, surface: Surface::Rest, client: None, via: None };
        let ctx = self.services.ctx(&target.principal, &target.tenant, origin);
        // Boxed: the ingestion's future is large, and it runs inside the
        // worker's handler future.
        match Box::pin(emails::receiving(receipt.clone(), api::invoke(&ctx, &input))).await {
            Ok(answer) => Ok(ingested(&answer)),
            Err(error) if retryable(&error) => Err(error),
            // 400 and 422: the message itself cannot be taken.
            Err(ApiError::BadRequest { .. } | ApiError::Unprocessable { .. }) => {
                Ok(Outcome::Dropped(Dropped::Unreadable))
            }
            Err(error) => {
                tracing::info!(inbox_id = %target.inbox_id, code = error_code(&error), "inbound mail: the inbox refused it");
                Ok(Outcome::Dropped(Dropped::Refused))
            }
        }
    }

    /// Logs and counts one outcome (ids only: no address, subject or body).
    fn outcome(&self, ses_id: &str, outcome: Outcome, tenant: Option<&Tenant>) -> Outcome {
        let (org, workspace) = (tenant.map(|t| t.org.as_str()), tenant.map(|t| t.workspace.as_str()));
        match &outcome {
            Outcome::Ingested { email_id, job_id, .. } => tracing::info!(
                ses_message_id = ses_id,
                outcome = outcome.name(),
                org,
                workspace,
                email_id,
                job_id,
                "inbound mail"
            ),
            Outcome::Dropped(_) if outcome.alarming() => {
                tracing::error!(
                    ses_message_id = ses_id,
                    outcome = outcome.name(),
                    org,
                    workspace,
                    "inbound mail dropped"
                );
            }
            Outcome::Dropped(_) => {
                tracing::info!(
                    ses_message_id = ses_id,
                    outcome = outcome.name(),
                    org,
                    workspace,
                    "inbound mail dropped"
                );
            }
        }
        count(&outcome, Some(ses_id));
        outcome
    }

    /// Deletes the raw message once its outcome is final. A delete that
    /// fails is logged: the bucket's lifecycle rule removes it in the end,
    /// and failing the invocation for it would ingest the message again.
    async fn discard(&self, key: &str, ses_id: &str) {
        if let Err(error) = self.services.store.objects().delete(&[key.to_owned()]).await {
            tracing::warn!(ses_message_id = ses_id, %error, "inbound mail: the raw message was left in the bucket");
        }
    }
}

/// What SES found, as the ingestion reads it (`emails::Receipt`; the
/// verdicts' mapping is in the module docs).
pub fn receipt(found: &SimpleEmailReceipt, ses_id: &str) -> Receipt {
    let mut verdicts = AUTHSERV_ID.to_owned();
    for (method, verdict) in
        [("spf", &found.spf_verdict), ("dkim", &found.dkim_verdict), ("dmarc", &found.dmarc_verdict)]
    {
        if let Some(result) = result(verdict) {
            verdicts.push_str(&format!("; {method}={}", result.as_str()));
        }
    }
    let virus = status(&found.virus_verdict).is_some_and(|s| s.eq_ignore_ascii_case("FAIL"));
    Receipt {
        authentication: Some(verdicts),
        message_id: Some(format!("{ses_id}@{AUTHSERV_ID}")),
        refused: virus.then(|| VIRUS.to_owned()),
    }
}

fn status(verdict: &SimpleEmailVerdict) -> Option<&str> {
    verdict.status.as_deref()
}

/// RFC 8601's result for one of SES's verdicts.
fn result(verdict: &SimpleEmailVerdict) -> Option<Verdict> {
    match status(verdict)?.to_ascii_uppercase().as_str() {
        "PASS" => Some(Verdict::Pass),
        "FAIL" => Some(Verdict::Fail),
        "GRAY" => Some(Verdict::None),
        "PROCESSING_FAILED" => Some(Verdict::TempError),
        _ => None,
    }
}

/// An SES message id: letters, digits and `-` (what the S3 action names the
/// object after; anything else is no key of ours to read).
fn is_ses_id(id: &str) -> bool {
    (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// A value from the event, as a log line may show it.
fn loggable(text: &str) -> String {
    crate::telemetry::loggable(text)
}

/// What the ingestion's 202 says: the e-mail, its status, its job.
fn ingested(answer: &api::ApiResponse) -> Outcome {
    let email = answer.body.pointer("/data/email");
    let field = |name: &str| email.and_then(|email| email.get(name)).and_then(Value::as_str);
    let (email_id, status) = (field("id"), field("status"));
    let job_id = answer.job.as_ref().map(|job| job.id.clone());
    if email_id.is_none() || job_id.is_none() {
        tracing::error!("inbound mail: an ingestion answered without its e-mail or job");
    }
    Outcome::Ingested {
        email_id: email_id.unwrap_or_default().to_owned(),
        job_id: job_id.unwrap_or_default(),
        rejected: status == Some(EmailStatus::Rejected.as_str()),
    }
}

/// Whether a retry can cure the ingestion's failure: storage unavailable
/// (503), or the `Message-ID` race of two deliveries at once (409
/// `conflict`: the retry finds the first one's e-mail).
fn retryable(error: &ApiError) -> bool {
    matches!(error, ApiError::Unavailable | ApiError::Conflict { code: "conflict", .. })
}

fn error_code(error: &ApiError) -> String {
    error.body().pointer("/error/code").and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn transient(ses_id: &str, error: &dyn std::fmt::Display) -> Transient {
    tracing::warn!(ses_message_id = ses_id, %error, "inbound mail: failed for now; Lambda invokes again");
    Transient(format!("inbound mail {ses_id}: {error}"))
}

/// The metric line of one outcome (`InboundMail` by `Outcome`, and
/// `InboundDropped` without dimensions for the alarm).
fn count(outcome: &Outcome, ses_id: Option<&str>) {
    let mut metrics = vec![("InboundMail", "Count", 1.0)];
    if outcome.alarming() {
        metrics.push(("InboundDropped", "Count", 1.0));
    }
    crate::telemetry::Emf {
        dimensions: &[&["Outcome"], &[]],
        metrics: &metrics,
        properties: &[("Outcome", Value::from(outcome.name())), ("SesMessageId", Value::from(ses_id))],
    }
    .emit();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_names_slug_workspace_and_organization_and_nothing_else() {
        let found = Address::parse("Bills.ws_main.org_demo@inbound.example.com").unwrap();
        assert_eq!(found.slug, "bills");
        assert_eq!((found.workspace.as_str(), found.org.as_str()), ("ws_main", "org_demo"));
        assert_eq!(Address::parse("<bills.ws_main.org_demo@x.example>").unwrap().slug, "bills");
        for refused in [
            "bills@inbound.example.com",
            "bills.ws_main@inbound.example.com",
            "bills.ws_main.org_demo.extra@inbound.example.com",
            "bills.ws_main.org_demo@",
            "bills.ws_main.org_demo",
            "bills._org.org_demo@x.example",
            "bills.main.org_demo@x.example",
            "b.ws_main.org_demo@x.example",
            "bi_lls.ws_main.org_demo@x.example",
            "bills.ws_main.org#demo@x.example",
            "bills.ws_main.@x.example",
            "",
        ] {
            assert_eq!(Address::parse(refused), None, "{refused}");
        }
    }

    fn verdict(status: &str) -> SimpleEmailVerdict {
        serde_json::from_value(serde_json::json!({"status": status})).unwrap()
    }

    fn receipt_with(spf: &str, dkim: &str, dmarc: &str, virus: &str) -> SimpleEmailReceipt {
        let mut found = SimpleEmailReceipt::default();
        found.spf_verdict = verdict(spf);
        found.dkim_verdict = verdict(dkim);
        found.dmarc_verdict = verdict(dmarc);
        found.virus_verdict = verdict(virus);
        found
    }

    #[test]
    fn verdicts_become_an_authentication_results_value_the_header_parser_reads() {
        let made = receipt(&receipt_with("PASS", "FAIL", "GRAY", "PASS"), "abc123");
        assert_eq!(made.authentication.as_deref(), Some("amazonses.com; spf=pass; dkim=fail; dmarc=none"));
        let read = crate::domain::mailauth::parse(made.authentication.as_deref().unwrap()).unwrap();
        assert_eq!((read.spf, read.dkim, read.dmarc), (Verdict::Pass, Verdict::Fail, Verdict::None));
        assert_eq!(read.by, "amazonses.com");
        assert_eq!(made.message_id.as_deref(), Some("abc123@amazonses.com"));
        assert_eq!(made.refused, None);

        let odd = receipt(&receipt_with("PROCESSING_FAILED", "DISABLED", "whatever", "FAIL"), "x");
        assert_eq!(odd.authentication.as_deref(), Some("amazonses.com; spf=temperror"));
        assert_eq!(odd.refused.as_deref(), Some(VIRUS));
        let unscanned = receipt(&receipt_with("PASS", "PASS", "PASS", "PROCESSING_FAILED"), "x");
        assert_eq!(unscanned.refused, None, "only a virus found refuses the message");
    }

    #[test]
    fn an_event_that_is_not_sess_is_logged_without_the_values_it_holds() {
        let odd = serde_json::json!({"Records": [{"eventSource": "aws:ses", "ses": {"mail": {
            "commonHeaders": {"from": "Maria Silva <maria.silva@example.com>", "subject": ["Fatura \"março\""]},
        }}}]});
        let error = serde_json::from_value::<SimpleEmailEvent>(odd).unwrap_err().to_string();
        assert!(error.contains("maria.silva@example.com"), "serde quotes the value: {error}");
        let logged = crate::telemetry::without_values(&error);
        assert!(!logged.contains("maria") && !logged.contains("Silva"), "{logged}");
        assert!(logged.contains("invalid type: string \"…\""), "the rule that failed stays: {logged}");

        assert_eq!(crate::telemetry::without_values(r#"a "b \" c" d"#), r#"a "…" d"#);
        assert_eq!(
            crate::telemetry::without_values("unknown variant `Fatura`, expected `A`"),
            "unknown variant `…`, expected `A`"
        );
        assert_eq!(crate::telemetry::without_values("missing field `mail`"), "missing field `mail`");
        assert_eq!(crate::telemetry::without_values("cut \"off"), "cut \"…\"");
    }

    #[test]
    fn ses_events_are_told_from_stream_batches_by_their_source() {
        assert!(is_mail_event(&serde_json::json!({"Records": [{"eventSource": "aws:ses"}]})));
        assert!(!is_mail_event(&serde_json::json!({"Records": [{"eventSource": "aws:dynamodb"}]})));
        assert!(!is_mail_event(&serde_json::json!({"Records": []})));
        assert!(!is_mail_event(&serde_json::json!({})));
    }
}
