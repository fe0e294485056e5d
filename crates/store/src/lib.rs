//! DynamoDB access: the only code that imports `aws_sdk_dynamodb`. One table
//! (see `keys` for its design); each aggregate has its own module. Every call
//! is counted per request (`round_trips`) so the request span can log it.

mod audit;
pub mod authz;
pub mod cache;
#[cfg(feature = "dev")]
pub mod capacity;
mod confirmations;
mod deliveries;
mod dry_run;
mod emails;
pub mod idempotency;
mod inboxes;
pub mod items;
mod jobs;
mod keys;
mod memberships;
pub mod objects;
mod org;
pub mod privacy;
pub mod rate_limit;
mod senders;
#[cfg(feature = "dev")]
pub mod snapshot;
pub mod stream;
mod table;
mod webhooks;
mod writes;

pub use audit::AuditFilter;
pub use emails::{EmailCounts, EmailFilter, Ingested};
pub use inboxes::InboxFilter;
pub use jobs::ToCancel;
pub use memberships::OrgWorkspaces;
pub use org::Removal;
pub use privacy::{Erasure, Hit, OrgPurge, StoredDataRequest};
pub use webhooks::StoredWebhook;
pub use writes::Audit;

use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{Credentials, Region};
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::AttributeValue;

/// One DynamoDB call more on the running request's log line (`dynamodb_calls`).
pub fn count_round_trip() {
    inbox_support::telemetry::note(|line| line.dynamodb_calls += 1);
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("conflict")]
    Conflict,
    #[error("throttled by DynamoDB")]
    Throttled,
    /// DynamoDB or the attachments bucket could not be reached or failed;
    /// the SDK's error is kept as the source, and the message shows its
    /// whole chain for the logs.
    #[error("store unavailable: {}", DisplayErrorContext(.0.as_ref()))]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("stored item is malformed: {0}")]
    Corrupt(String),
    /// A list was asked to start from a position outside it (a client's cursor).
    #[error("the start position is not in this list")]
    InvalidPosition,
    /// A workspace's write shards were raised again within the grace of the
    /// last raise (`inbox_domain::Shards::raise`); `from`: when it is possible.
    #[error("the write shards were raised less than 25 h ago: the next raise is possible from {from} (unix seconds)")]
    ShardsRaisedRecently { from: u64 },
}

impl<E, R> From<SdkError<E, R>> for StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    fn from(error: SdkError<E, R>) -> Self {
        match error.as_service_error().and_then(|e| e.code()) {
            Some("ConditionalCheckFailedException" | "TransactionCanceledException") => StoreError::Conflict,
            Some("ProvisionedThroughputExceededException" | "ThrottlingException" | "RequestLimitExceeded") => {
                StoreError::Throttled
            }
            _ => StoreError::Unavailable(Box::new(error)),
        }
    }
}

/// Where the table lives.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    pub table: String,
    pub region: String,
    /// A local DynamoDB-compatible server; `None` means AWS with the default credential chain.
    /// The attachments bucket is reached there too (the local server emulates S3).
    pub endpoint: Option<String>,
    /// The attachments bucket (`objects`): `ATTACHMENTS_BUCKET`.
    pub bucket: String,
    pub timeouts: StoreTimeouts,
    /// How long the busy path's configuration reads are kept (`cache`;
    /// `CONFIG_CACHE_SECS`, default 5).
    pub cache_secs: u64,
    /// Whether every call passes the capacity tests' recorder (`capacity`):
    /// the test suite's configuration (`Config::local`) only, and only in
    /// builds with the `dev` feature. A server started from the environment
    /// (`make run`, `make bench`, a Lambda) calls DynamoDB without it.
    pub record_calls: bool,
}

/// How long one DynamoDB call may take, all retries included. Sized so a
/// request that makes a call or two is answered inside the request budget
/// (`Config::request_timeout`) whatever the table does: a hung table costs
/// `attempt` per try, a refused connection `connect`, and the SDK's standard
/// retry (exponential backoff with jitter) stops at `attempts` tries or at
/// `operation`, whichever comes first.
#[derive(Debug, Clone, Copy)]
pub struct StoreTimeouts {
    pub connect: Duration,
    pub attempt: Duration,
    pub operation: Duration,
    pub attempts: u32,
}

impl StoreTimeouts {
    /// The deployed defaults: DynamoDB answers in milliseconds, so a second
    /// per try is already a fault.
    pub const LAMBDA: StoreTimeouts = StoreTimeouts {
        connect: Duration::from_millis(1000),
        attempt: Duration::from_millis(1000),
        operation: Duration::from_millis(3000),
        attempts: 3,
    };
}

#[derive(Clone)]
pub struct Store {
    client: Client,
    table: String,
    /// A dry run (`admin --dry-run`, `dry_run`): writes are described here
    /// instead of written; reads still read the table.
    dry_run: Option<std::sync::Arc<dry_run::Described>>,
    /// Configuration the busy path reads again and again (`cache`).
    cache: std::sync::Arc<cache::ReadCache>,
    /// Attachment bytes.
    objects: objects::Objects,
}

impl Store {
    pub async fn connect(config: &StoreConfig) -> Store {
        let t = config.timeouts;
        let timeouts = aws_config::timeout::TimeoutConfig::builder()
            .connect_timeout(t.connect)
            .operation_attempt_timeout(t.attempt)
            .operation_timeout(t.operation)
            .build();
        let retry = aws_config::retry::RetryConfig::standard()
            .with_max_attempts(t.attempts.max(1))
            .with_initial_backoff(Duration::from_millis(50))
            .with_max_backoff(Duration::from_millis(500));
        let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .region(Region::new(config.region.clone()))
            .timeout_config(timeouts)
            .retry_config(retry)
            // Stalled-stream protection watches a body's throughput while it
            // streams (an S3 download); a DynamoDB call's body is one small
            // JSON document, and every call is already bounded by the attempt
            // and operation timeouts above. Off, each call skips its body
            // wrappers, their clock reads and their grace-period timer.
            .stalled_stream_protection(aws_config::stalled_stream_protection::StalledStreamProtectionConfig::disabled())
            .http_client(inbox_support::tls::sdk_http_client());
        if let Some(endpoint) = &config.endpoint {
            // The local server accepts any credentials; never look for real ones.
            loader = loader
                .endpoint_url(endpoint)
                .credentials_provider(Credentials::new("local", "local", None, None, "local"));
        }
        let sdk = loader.load().await;
        // The test suite's clients keep what a test asks them to (`capacity`).
        #[cfg(feature = "dev")]
        let client = if config.record_calls {
            Client::from_conf(aws_sdk_dynamodb::config::Builder::from(&sdk).interceptor(capacity::Recorder).build())
        } else {
            Client::new(&sdk)
        };
        #[cfg(not(feature = "dev"))]
        let client = Client::new(&sdk);
        // An attachment is megabytes, not a DynamoDB call's kilobytes: its
        // calls get tries of their own length (still inside a request's budget).
        let s3 = aws_sdk_s3::config::Builder::from(&sdk)
            .timeout_config(
                aws_config::timeout::TimeoutConfig::builder()
                    .connect_timeout(t.connect)
                    .operation_attempt_timeout(t.attempt.max(Duration::from_secs(5)))
                    .operation_timeout(t.operation.max(Duration::from_secs(15)))
                    .build(),
            )
            // The local server answers path-style URLs only.
            .force_path_style(config.endpoint.is_some())
            // Only what S3 requires: `put` sends the SHA-256 it checks itself.
            .request_checksum_calculation(aws_sdk_s3::config::RequestChecksumCalculation::WhenRequired)
            .response_checksum_validation(aws_sdk_s3::config::ResponseChecksumValidation::WhenRequired)
            .build();
        Store {
            client,
            table: config.table.clone(),
            dry_run: None,
            cache: std::sync::Arc::new(cache::ReadCache::new(config.cache_secs)),
            objects: objects::Objects::new(aws_sdk_s3::Client::from_conf(s3), config.bucket.clone()),
        }
    }

    /// The same table, for a dry run (`dry_run`): its client refuses every
    /// call that is not a read, and the write primitives describe what they
    /// would write (one line per item) instead of writing it.
    pub fn dry_run(&self) -> Store {
        let config = self.client.config().to_builder().interceptor(dry_run::ReadOnly).build();
        Store { client: Client::from_conf(config), dry_run: Some(std::sync::Arc::default()), ..self.clone() }
    }

    /// What a dry run would have written, in order.
    pub fn described_writes(&self) -> Vec<String> {
        self.dry_run.as_ref().map(|d| d.lines()).unwrap_or_default()
    }

    /// Whether a dry run would have changed anything (more than the audit
    /// record of a call that changed nothing).
    pub fn described_a_change(&self) -> bool {
        self.dry_run.as_ref().is_some_and(|d| d.changes())
    }

    /// In a dry run, keeps what a write would write (`change`: part of a
    /// change, not a lone audit record) and says so: the caller then
    /// answers as if written. Outside one, false: the caller writes.
    pub(crate) fn describe(&self, change: bool, lines: impl FnOnce() -> Vec<String>) -> bool {
        match &self.dry_run {
            Some(described) => {
                described.add(change, lines());
                true
            }
            None => false,
        }
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    /// The attachments bucket.
    pub fn objects(&self) -> &objects::Objects {
        &self.objects
    }

    /// Opens `connections` connections to the table side by side, each with
    /// one read of a key nothing writes (`keys::prime`: this container's own,
    /// so no two containers read one key), and waits for them. Called at
    /// INIT on Lambda: the TCP and TLS handshakes and the SDK's first-call
    /// set-up are then done while INIT waits for the issuer's keys anyway,
    /// and the first request's reads find their connections open. A read
    /// that fails is left to the first request, which would meet the same
    /// trouble and answers it as every request does (503); INIT goes on.
    pub async fn prime(&self, connections: usize) {
        let key = keys::prime(&inbox_domain::hex(&inbox_support::sys::random::<8>()));
        let reads = (0..connections).map(|_| {
            self.client()
                .get_item()
                .table_name(self.table())
                .key(keys::PK, s(key.as_str()))
                .key(keys::SK, s(key.as_str()))
                .send()
        });
        for result in futures_util::future::join_all(reads).await {
            if let Err(error) = result {
                tracing::debug!(error = %DisplayErrorContext(&error), "priming a table connection failed");
            }
        }
    }

    pub(crate) fn client(&self) -> &Client {
        count_round_trip();
        &self.client
    }
}

/// A conditional write's outcome: whether it was applied (`false` when its
/// condition failed; any other error stays one).
pub(crate) fn applied<T>(result: Result<T, StoreError>) -> Result<bool, StoreError> {
    match result {
        Ok(_) => Ok(true),
        Err(StoreError::Conflict) => Ok(false),
        Err(e) => Err(e),
    }
}

pub(crate) fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

pub(crate) fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

pub(crate) fn get_s<'a>(
    item: &'a std::collections::HashMap<String, AttributeValue>,
    name: &str,
) -> Result<&'a str, StoreError> {
    match item.get(name) {
        Some(AttributeValue::S(v)) => Ok(v),
        _ => Err(StoreError::Corrupt(format!("missing string attribute {name}"))),
    }
}
