//! Logging: JSON lines on Lambda (CloudWatch), readable lines locally. The
//! filter comes from `RUST_LOG` (default `info`). A request's span carries
//! its id and HTTP method (set once, when it opens); what the request turned
//! out to be — path, era, method, tool, task, person, workspace, status,
//! DynamoDB calls — is noted on a `RequestLine` as it is learnt and written
//! once, in the request's one `answered` line. (Recording each of those on
//! the span instead had the JSON formatter re-read and re-write the span's
//! fields at every record: a third of a cheap request's CPU.) Bodies and
//! credential headers are never logged.
//!
//! Metrics: CloudWatch Embedded Metric Format, one JSON line on stdout per
//! measured event (a request, a finished job, a webhook delivery), which
//! CloudWatch turns into metrics without any API call. Dimensions are few
//! and bounded (surface, operation from the route or method tables, status
//! class, job kind, outcome): never a tenant or a value a client chose.
//! Tenant ids ride along as properties, searchable in the log line. Off
//! unless the binary turns them on (`METRICS`, default on), so the tests'
//! in-process servers print nothing.

use std::cell::RefCell;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value, json};
use tracing_subscriber::EnvFilter;

/// What a request's `answered` line says besides its status: noted by
/// whichever layer learns it (`note`), while the request runs.
#[derive(Debug, Default)]
pub struct RequestLine {
    pub path: Option<String>,
    pub era: Option<&'static str>,
    pub method: Option<&'static str>,
    /// The tool a `tools/call` ran (the line names it).
    pub operation: Option<&'static str>,
    pub task: Option<String>,
    pub sub: Option<String>,
    pub workspace: Option<String>,
    /// DynamoDB calls the request made (`store::count_round_trip`).
    pub dynamodb_calls: u32,
}

tokio::task_local! {
    static LINE: RefCell<RequestLine>;
}

/// Runs `request` with a fresh `RequestLine`, and returns what it noted.
pub async fn with_request_line<T>(request: impl std::future::Future<Output = T>) -> (T, RequestLine) {
    LINE.scope(RefCell::default(), async {
        let out = request.await;
        (out, LINE.with(RefCell::take))
    })
    .await
}

/// Notes something on the running request's line (nothing outside a request).
pub fn note(f: impl FnOnce(&mut RequestLine)) {
    let _ = LINE.try_with(|line| f(&mut line.borrow_mut()));
}

/// The CloudWatch namespace of every metric.
pub const NAMESPACE: &str = "KobanaInbox";

static METRICS_ON: AtomicBool = AtomicBool::new(false);

/// Turns metric lines on or off for this process.
pub fn enable_metrics(on: bool) {
    METRICS_ON.store(on, Ordering::Relaxed);
}

/// One EMF event: its dimension sets (each a list of property names), its
/// metrics (name, unit, value) and its properties (dimension values first).
pub struct Emf<'a> {
    pub dimensions: &'a [&'a [&'a str]],
    pub metrics: &'a [(&'a str, &'a str, f64)],
    pub properties: &'a [(&'a str, Value)],
}

impl Emf<'_> {
    /// The line as JSON (what `emit` writes).
    pub fn to_json(&self, timestamp_ms: u64) -> Value {
        let definitions: Vec<Value> =
            self.metrics.iter().map(|(name, unit, _)| json!({"Name": name, "Unit": unit})).collect();
        let mut line = Map::new();
        line.insert(
            "_aws".into(),
            json!({"Timestamp": timestamp_ms, "CloudWatchMetrics": [
                {"Namespace": NAMESPACE, "Dimensions": self.dimensions, "Metrics": definitions}
            ]}),
        );
        for (name, value) in self.properties {
            line.insert((*name).into(), value.clone());
        }
        for (name, _, value) in self.metrics {
            line.insert((*name).into(), json!(value));
        }
        Value::Object(line)
    }

    /// Writes the line on stdout, when metrics are on.
    pub fn emit(&self) {
        if !METRICS_ON.load(Ordering::Relaxed) {
            return;
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let line = self.to_json(u64::try_from(now).unwrap_or(u64::MAX)).to_string();
        // One write of one line: lines of concurrent requests do not interleave.
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    }
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line (Lambda: CloudWatch parses them).
    Json,
    Pretty,
}

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    // try_init: a second initialisation (tests, embedding) keeps the first subscriber.
    let _ = match format {
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(false).flatten_event(true).try_init(),
        // Colours on a terminal only: a log file or a pipe gets plain text.
        LogFormat::Pretty => {
            builder.compact().with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).try_init()
        }
    };
}
