//! The product's records, in the JSON shape the API shows. Stored items are
//! these plus their keys (see `store::keys`); fields that must never be shown
//! (a webhook's sealed secret) live only in the store. A field without a
//! value is shown as `null`, never left out (`inbox_api::schemas`), except
//! `deleted_at` (deleted records are never shown) and a job's `lease_until`
//! (only while it runs) and `extension` (only on a job of a kind the product
//! does not define); `#[serde(default)]` reads items written before a
//! field existed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An enum whose values are written as fixed strings (JSON, DynamoDB items,
/// query parameters, schemas): the variants and their names in one list,
/// with `ALL`, `NAMES`, `as_str`, `parse` and its JSON Schema made from it, so no other place
/// writes the names again. Exported: `mcp` names its task and result types with it too.
#[macro_export]
macro_rules! wire_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        /// Its schema, from the same list: a string that is one of `NAMES`.
        impl $crate::schemars::JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(stringify!($name))
            }

            fn json_schema(_: &mut $crate::schemars::SchemaGenerator) -> $crate::schemars::Schema {
                $crate::schemars::json_schema!({"type": "string", "enum": $name::NAMES})
            }
        }
    };
}

pub use crate::wire_enum;

wire_enum! {
    pub enum InboxStatus {
        Active = "active",
        Paused = "paused",
    }
}

wire_enum! {
    /// Who may send to an inbox.
    pub enum SenderPolicy {
        Anyone = "anyone",
        AllowedOnly = "allowed_only",
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Inbox {
    pub id: String,
    pub slug: String,
    pub name: String,
    pub status: InboxStatus,
    pub sender_policy: SenderPolicy,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
    // Never shown: deleted records are never returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub deleted_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AllowedSender {
    pub inbox_id: String,
    /// A lowercase address (`billing@acme.com`) or domain (`@acme.com`).
    #[schemars(description = "A lowercase address or @domain")]
    pub sender: String,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
}

wire_enum! {
    pub enum EmailStatus {
        Received = "received",
        Processing = "processing",
        Processed = "processed",
        Failed = "failed",
        Rejected = "rejected",
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Attachment {
    pub name: String,
    pub size: u64,
    pub content_type: String,
    /// The SHA-256 of its bytes (hex); `null` when the pipeline described
    /// the attachment without them (the JSON form of ingestion).
    #[serde(default)]
    pub sha256: Option<String>,
    /// Whether its bytes are kept: `GET /api/v1/emails/{id}/attachments/{n}`
    /// downloads them. Not for a rejected sender's e-mail.
    #[serde(default)]
    pub stored: bool,
    /// What processing made of it; `null` until processed.
    #[serde(default)]
    pub reading: Option<Reading>,
}

wire_enum! {
    /// What processing made of an attachment: `read` (a PDF's text layer was
    /// searched), `not_pdf` (only PDFs are read), `not_stored` (no bytes to
    /// read), or why a PDF gave no text.
    pub enum Reading {
        Read = "read",
        NotPdf = "not_pdf",
        NotStored = "not_stored",
        PdfNoText = "pdf_no_text",
        PdfEncrypted = "pdf_encrypted",
        PdfUnreadable = "pdf_unreadable",
    }
}

/// What e-mail processing found: one bill — a validated boleto, a checked
/// Pix code, or both (a boleto híbrido).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Extracted {
    /// Where it was found: `body`, or `attachment:<n>` (the e-mail's
    /// `attachments[n]`, a PDF).
    #[serde(default = "body_source")]
    pub source: String,
    /// The boleto's line, digits only; `null` for a bill that is a Pix code only.
    pub digitable_line: Option<String>,
    /// The boleto's 44-digit barcode; `null` for a bill that is a Pix code only.
    pub barcode: Option<String>,
    /// `None` for a utility slip whose value field is a reference quantity.
    #[schemars(description = "null for a utility slip whose value field is a reference quantity")]
    pub amount_cents: Option<u64>,
    #[serde(default)]
    #[schemars(extend("format" = "date"))]
    pub due_date: Option<String>,
    #[serde(default)]
    pub bank_code: Option<String>,
    /// The Pix code beside the boleto (a "boleto híbrido"), when the text has one.
    #[serde(default)]
    pub pix: Option<crate::pix::Pix>,
    /// Whether that Pix code fixes an amount other than the boleto's.
    #[serde(default)]
    pub amounts_disagree: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Email {
    pub id: String,
    pub inbox_id: String,
    pub from: String,
    pub to: String,
    /// Third-party text.
    pub subject: String,
    #[schemars(extend("format" = "date-time"))]
    pub received_at: String,
    /// The message's `Message-ID`, without its angle brackets: one e-mail per
    /// `Message-ID` and inbox. `null` when the pipeline gave none.
    #[serde(default)]
    pub message_id: Option<String>,
    /// The receiving server's SPF, DKIM and DMARC verdicts on the sender
    /// (`Authentication-Results` of a raw message); `null` when it gave none.
    #[serde(default)]
    pub authentication: Option<crate::mailauth::Authentication>,
    /// How far the sender is authenticated (`provenance`): decided at
    /// ingestion; e-mails stored before it was kept read as `unverified`.
    #[serde(default)]
    pub trust: crate::provenance::Trust,
    pub status: EmailStatus,
    /// The body: third-party text.
    pub text: String,
    pub attachments: Vec<Attachment>,
    /// The first bill found (the body first, then each PDF attachment in
    /// order); `null` until processed, or when none was found.
    pub extracted: Option<Extracted>,
    /// Every different bill found, `extracted` first: a message may carry
    /// several (two PDFs, two banks). Empty until processed.
    #[serde(default)]
    pub bills: Vec<Extracted>,
    /// A `processed` e-mail with no bill: why — a PDF that could not be read
    /// (`pdf_no_text`, `pdf_encrypted`, `pdf_unreadable`), the first one's.
    #[serde(default)]
    pub reason: Option<Reading>,
    pub error: Option<String>,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
    /// When the workspace's retention (`retention_days`) purged the e-mail's
    /// content: its subject, body, attachments' names and files are gone;
    /// what the server decoded (`extracted`, `bills`) stays. Absent until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub content_purged_at: Option<String>,
    // Never shown: deleted records are never returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub deleted_at: Option<String>,
    /// On an erased e-mail's tombstone only (never shown): who erased it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub erased_by: Option<String>,
}

impl Email {
    /// Drops the content retention does not keep: subject, body, the
    /// attachments' names and files (their type, size and digest stay: they
    /// name no one). The sender, the times and what was decoded stay.
    pub fn purge_content(&mut self, at: &str) {
        self.subject.clear();
        self.text.clear();
        for attachment in &mut self.attachments {
            attachment.name.clear();
            attachment.stored = false;
        }
        self.content_purged_at = Some(at.to_owned());
    }

    /// What is left of this e-mail once erased (`at`, by `by`): its id, inbox,
    /// status and times, nothing it said or named. It is deleted too, so it
    /// is never shown.
    #[must_use]
    pub fn tombstone(&self, at: &str, by: &str) -> Email {
        Email {
            id: self.id.clone(),
            inbox_id: self.inbox_id.clone(),
            from: String::new(),
            to: String::new(),
            subject: String::new(),
            received_at: self.received_at.clone(),
            message_id: None,
            authentication: None,
            trust: crate::provenance::Trust::default(),
            status: self.status,
            text: String::new(),
            attachments: Vec::new(),
            extracted: None,
            bills: Vec::new(),
            reason: None,
            error: None,
            created_at: self.created_at.clone(),
            updated_at: at.to_owned(),
            content_purged_at: None,
            deleted_at: Some(self.deleted_at.clone().unwrap_or_else(|| at.to_owned())),
            erased_by: Some(by.to_owned()),
        }
    }
}

/// What a job's result becomes once the e-mail it copied was erased.
pub fn erased_result(email_id: &str) -> Value {
    serde_json::json!({"email_id": email_id, "erased": true})
}

fn body_source() -> String {
    "body".into()
}

wire_enum! {
    pub enum EventType {
        EmailProcessed = "email.processed",
        EmailFailed = "email.failed",
        EmailRejected = "email.rejected",
        WebhookTest = "webhook.test",
    }
}

impl EventType {
    /// The events a webhook can subscribe to (`webhook.test` goes to the tested webhook only).
    pub const SUBSCRIBABLE: [EventType; 3] =
        [EventType::EmailProcessed, EventType::EmailFailed, EventType::EmailRejected];
}

wire_enum! {
    pub enum WebhookStatus {
        Active = "active",
        Disabled = "disabled",
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Webhook {
    pub id: String,
    pub url: String,
    #[schemars(schema_with = "subscribable_events")]
    pub events: Vec<EventType>,
    pub status: WebhookStatus,
    #[serde(default)]
    pub description: Option<String>,
    /// The last four characters of the signing secret; the secret itself is shown once.
    pub secret_last4: String,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
    // Never shown: deleted records are never returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub deleted_at: Option<String>,
}

wire_enum! {
    pub enum DeliveryStatus {
        Pending = "pending",
        Succeeded = "succeeded",
        Failed = "failed",
    }
}

/// One attempt to deliver an event to a webhook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Delivery {
    pub id: String,
    pub webhook_id: String,
    pub event_id: String,
    pub event_type: EventType,
    pub status: DeliveryStatus,
    pub status_code: Option<u16>,
    pub duration_ms: Option<u64>,
    pub error: Option<String>,
    /// 1 for the first attempt; a resend is a new delivery with the next number.
    #[schemars(range(min = 1))]
    pub attempt: u32,
    /// The delivery this one resends, if any.
    #[serde(default)]
    pub resend_of: Option<String>,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
}

wire_enum! {
    pub enum JobKind {
        EmailProcess = "email.process",
        EmailReprocess = "email.reprocess",
        WebhookTest = "webhook.test",
        DeliveryResend = "delivery.resend",
        /// A job of a kind the product does not define, started by a tool of
        /// another MCP catalogue and run by whoever registered its kind with
        /// the worker (`JobExtension`, `inbox_worker::Extensions`). The
        /// product never makes one; a deployment that registers none fails
        /// it as an operation that cannot be done.
        Extension = "extension",
    }
}

impl JobKind {
    /// The kinds the REST API's own operations create: what `/api/v1`
    /// documents (every kind but `extension`).
    pub const API: [JobKind; 4] =
        [JobKind::EmailProcess, JobKind::EmailReprocess, JobKind::WebhookTest, JobKind::DeliveryResend];
}

/// A webhook's events as the API shows them: subscribable ones only.
fn subscribable_events(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names = EventType::SUBSCRIBABLE.map(EventType::as_str);
    schemars::json_schema!({"type": "array", "items": {"type": "string", "enum": names}})
}

/// A job's kind as the API shows it: the product's kinds (`JobKind::API`).
fn api_job_kinds(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "enum": JobKind::API.map(JobKind::as_str)})
}

/// What a job did: an object, once it succeeded.
fn job_result(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["object", "null"], "description": "What the job did, once it succeeded"})
}

wire_enum! {
    pub enum JobStatus {
        Queued = "queued",
        Running = "running",
        Succeeded = "succeeded",
        Failed = "failed",
        /// Cancelled while queued: it never ran and never will.
        Cancelled = "cancelled",
    }
}

wire_enum! {
    /// Why a failed job failed: what a client may do about it.
    pub enum JobErrorKind {
        /// The operation cannot be done (its subject was deleted, the webhook is
        /// disabled): starting it again gives the same answer.
        Operation = "operation",
        /// The service failed to run it (storage kept failing through every
        /// attempt): starting it again may work.
        Platform = "platform",
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Job {
    pub id: String,
    #[schemars(schema_with = "api_job_kinds")]
    pub kind: JobKind,
    pub subject_id: String,
    pub status: JobStatus,
    pub attempts: u32,
    #[schemars(schema_with = "job_result")]
    pub result: Option<Value>,
    pub error: Option<String>,
    /// Set on failed jobs.
    #[serde(default)]
    #[schemars(
        description = "Why a failed job failed: operation (it cannot be done) or platform (starting it again may work)"
    )]
    pub error_kind: Option<JobErrorKind>,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
    /// While running: when the claim lapses and another runner may take over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", description = "While running: when the runner's claim lapses (Unix seconds)")]
    pub lease_until: Option<u64>,
    /// While running: what it is doing now ("Reading 2 PDF attachments",
    /// "Notifying 1 webhook"), as the worker last wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", description = "While running: what it is doing now")]
    pub stage: Option<String>,
    /// What an extension job carries (`JobKind::Extension` only): never
    /// shown by the API, whose jobs are the product's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub extension: Option<JobExtension>,
}

/// What a job of a kind the product does not define (`JobKind::Extension`)
/// carries beyond a job: its own kind and data, opaque here and owned by the
/// code that registered a runner for that kind (a binary that serves another
/// MCP catalogue gives the composition root both), and the state of a job
/// started as an MCP task that asks the client for input while it runs (the
/// tasks extension's `input_required`: `inbox_mcp::tasks`). The product's own jobs
/// never ask for input and cannot be stopped once running, so this state
/// lives here, not on every job. A job that waits is `running` without a
/// lease: no runner takes it until every request is answered, which puts it
/// back in the queue.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobExtension {
    /// Which extension the job belongs to: the name its runner was registered under.
    pub kind: String,
    /// What its runner needs, as it wrote it when the job was created.
    #[serde(default)]
    pub data: Value,
    /// The input requests still unanswered, by key.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub awaiting: serde_json::Map<String, Value>,
    /// The client's answers so far, by key.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub responses: serde_json::Map<String, Value>,
    /// A cancellation was asked for while it ran: it stops at its next check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancel_requested: bool,
}

impl Job {
    /// An extension job that waits for the client's input.
    pub fn is_awaiting_input(&self) -> bool {
        self.status == JobStatus::Running && self.extension.as_ref().is_some_and(|x| !x.awaiting.is_empty())
    }
}

wire_enum! {
    /// Where a change was asked for.
    pub enum Surface {
        Rest = "rest",
        Mcp = "mcp",
        /// The administration command line (`kobana-inbox-mcp admin …`).
        Cli = "cli",
    }
}

wire_enum! {
    /// An archived workspace keeps its data for its admins to read; nothing
    /// in it changes and no mail is ingested into it.
    pub enum WorkspaceStatus {
        Active = "active",
        Archived = "archived",
    }
}

/// A workspace of an organization, as its administrators see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Workspace {
    /// Chosen by the server (`ws_…`).
    pub id: String,
    pub name: String,
    /// Unique in the organization; never changes.
    pub slug: String,
    pub status: WorkspaceStatus,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
}

/// A person's role in a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Member {
    /// The token subject (`sub`) of the person.
    pub subject: String,
    pub role: crate::Role,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
}

/// A machine client registered as a workspace's mail pipeline, or a person
/// holding `org_admin`: a subject and since when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Grant {
    /// The token subject (sub) it is granted to.
    pub subject: String,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
}

/// The MCP client that asked, as it named itself (`clientInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClientInfo {
    pub name: String,
    pub version: String,
}

impl ClientInfo {
    /// The longest name or version kept: they come from the client.
    pub const MAX_CHARS: usize = 128;

    /// The client's own description of itself, cut to a bounded length,
    /// with control characters (NUL, ESC, CR, LF, …) and bidirectional
    /// controls (U+202E and its kin) removed: a stored record must not be
    /// able to forge lines or reorder text in a terminal or a SIEM.
    pub fn bounded(name: &str, version: &str) -> ClientInfo {
        let cut = |s: &str| s.chars().filter(|c| !super::text::is_hidden(*c)).take(Self::MAX_CHARS).collect::<String>();
        ClientInfo { name: cut(name), version: cut(version) }
    }
}

/// One change asked of a workspace, as its audit trail keeps it: who asked,
/// through what, about which record, with which arguments (a digest of them,
/// never the arguments) and how it ended. Written in the same transaction as
/// the change it describes; a refused change, which changed nothing, alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AuditRecord {
    /// `aud_` then the time (17 digits) then randomness: ids sort by time.
    pub id: String,
    #[schemars(extend("format" = "date-time"))]
    pub at: String,
    pub request_id: String,
    pub organization: String,
    pub workspace: String,
    /// The token's `sub`: the person, or the mail pipeline's client.
    pub subject: String,
    /// The MCP client (`null` for REST, and in the 2025 eras, whose
    /// `clientInfo` is sent once with `initialize` and not kept).
    pub client: Option<ClientInfo>,
    pub surface: Surface,
    /// The tool (or `tasks/cancel`) for MCP, `METHOD /route` for REST, the
    /// command (`admin member set`) for the command line.
    pub action: String,
    /// The API operation, the same whichever surface asked (`webhook_rotate_secret`).
    pub operation: String,
    /// The record changed (or, for a refused change, named).
    pub target_id: Option<String>,
    /// `sha256:` and the hex digest of the operation's arguments (see `api::audit`).
    #[schemars(
        description = "SHA-256 of the operation's arguments, never the arguments",
        regex(pattern = r"^sha256:[0-9a-f]{64}$")
    )]
    pub arguments_digest: String,
    /// The HTTP status of the outcome (a tool's is its operation's).
    #[schemars(range(min = 100, max = 599))]
    pub status: u16,
    /// The error code of a refused change.
    pub error_code: Option<String>,
    /// Whether the call changed anything: the record was written with the
    /// change. False for a refusal and for a call with nothing to do.
    pub changed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_status_names_are_their_json_names() {
        for status in
            [JobStatus::Queued, JobStatus::Running, JobStatus::Succeeded, JobStatus::Failed, JobStatus::Cancelled]
        {
            assert_eq!(serde_json::to_value(status).unwrap(), Value::from(status.as_str()));
        }
    }

    #[test]
    fn a_product_job_reads_and_writes_without_an_extension() {
        let stored = serde_json::json!({
            "id": "job_1", "kind": "webhook.test", "subject_id": "wh_1", "status": "queued", "attempts": 0,
            "result": null, "error": null, "error_kind": null,
            "created_at": "2026-12-04T10:00:00.000Z", "updated_at": "2026-12-04T10:00:00.000Z",
        });
        let job: Job = serde_json::from_value(stored.clone()).unwrap();
        assert_eq!(job.extension, None);
        assert_eq!(serde_json::to_value(&job).unwrap(), stored, "written exactly as read");
        assert!(!job.is_awaiting_input());
    }

    #[test]
    fn an_extension_job_waits_while_it_has_requests_pending() {
        let mut job: Job = serde_json::from_value(serde_json::json!({
            "id": "job_1", "kind": "extension", "subject_id": "a_tool", "status": "running", "attempts": 1,
            "result": null, "error": null, "created_at": "2026-12-04T10:00:00.000Z",
            "updated_at": "2026-12-04T10:00:00.000Z", "extension": {"kind": "some.kind", "data": {"n": 1}},
        }))
        .unwrap();
        assert!(!job.is_awaiting_input());
        let extension = job.extension.as_mut().unwrap();
        assert_eq!((extension.kind.as_str(), &extension.data), ("some.kind", &serde_json::json!({"n": 1})));
        extension.awaiting.insert("confirm".into(), serde_json::json!({"method": "elicitation/create"}));
        assert!(job.is_awaiting_input());
        let written = serde_json::to_value(&job).unwrap();
        assert_eq!(written["extension"]["awaiting"]["confirm"]["method"], "elicitation/create");
        assert!(
            written["extension"].get("responses").is_none() && written["extension"].get("cancel_requested").is_none()
        );
    }

    #[test]
    fn client_names_lose_control_and_bidirectional_characters() {
        let info = ClientInfo::bounded("evil\u{0}\u{1b}[31m\r\nFAKE\u{202e}txt.exe\u{2066}\u{85}", "1\u{7f}.0\u{200f}");
        assert_eq!(info.name, "evil[31mFAKEtxt.exe");
        assert_eq!(info.version, "1.0");
        let long = "é".repeat(300);
        assert_eq!(ClientInfo::bounded(&long, "").name.chars().count(), ClientInfo::MAX_CHARS);
        assert_eq!(ClientInfo::bounded("Claude Code", "2.1.0").name, "Claude Code", "ordinary names are kept");
    }
}

wire_enum! {
    /// What a data subject asked for (LGPD art. 18): a copy of what the
    /// organization holds that names them, or its erasure.
    pub enum DataRequestKind {
        Export = "export",
        Erase = "erase",
    }
}

/// A data subject's request, run by the worker: every e-mail of the
/// organization that names a CPF or CNPJ, exported as one JSON document or
/// erased. The identifier itself is never stored: only its keyed digest
/// (hidden) and a masked form (`personal::Identifier::masked`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DataRequest {
    pub id: String,
    pub kind: DataRequestKind,
    /// The identifier, masked: its kind and last two characters.
    pub identifier: String,
    /// queued, running, succeeded or failed.
    pub status: JobStatus,
    /// The e-mails found (export) or erased (erase); 0 until it ran.
    pub emails: u64,
    pub error: Option<String>,
    /// The organization administrator who asked.
    pub requested_by: String,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
}
