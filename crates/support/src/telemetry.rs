//! Logging: JSON lines on Lambda (CloudWatch), readable lines locally. The
//! filter comes from `RUST_LOG` (default `info`). Every line logged while a
//! request runs names it under `span` — `{"request_id", "http_method",
//! "name": "request"}` — and what the request turned out to be — path, era,
//! method, tool, task, person, workspace, status, DynamoDB calls — is noted
//! on a `RequestLine` as it is learnt and written once, in the request's one
//! `answered` line. (Recording each of those on a span instead had the JSON
//! formatter re-read and re-write the span's fields at every record: a third
//! of a cheap request's CPU.) Bodies and credential headers are never logged.
//!
//! The request's identity is kept in a task-local beside its `RequestLine`
//! (`in_request`), and `JsonLine` writes it as the `span` a tracing span
//! named `request` would give: opening, entering, leaving and closing a span
//! on every request was a sixteenth of a `server/discover`'s instructions
//! (`make profile`). The readable format has no such hook, so there the
//! request is a real span, as before. A line inside a request names the
//! request even when a library's span is entered (the SDK's spans are at
//! `debug`); outside one, the current span as tracing-subscriber's JSON
//! format names it (on Lambda, the runtime's invocation span).
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

use serde_json::{Map, Value};
use tracing::Instrument as _;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::{FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

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

/// The request running on this task: who it is, and its line so far.
struct Running {
    request_id: String,
    http_method: String,
    line: RefCell<RequestLine>,
}

tokio::task_local! {
    static RUNNING: Running;
}

/// Whether lines are the readable format (its requests are real spans).
static READABLE: AtomicBool = AtomicBool::new(false);

/// Runs `request` as the request `request_id`: every line it logs names it,
/// and it starts with an empty `RequestLine` (`note`, `take_line`).
pub async fn in_request<T>(request_id: &str, http_method: &str, request: impl std::future::Future<Output = T>) -> T {
    let span = if READABLE.load(Ordering::Relaxed) {
        tracing::info_span!("request", request_id = %request_id, http_method = %http_method)
    } else {
        tracing::Span::none()
    };
    let running =
        Running { request_id: request_id.to_owned(), http_method: http_method.to_owned(), line: RefCell::default() };
    RUNNING.scope(running, request).instrument(span).await
}

/// Spawns `work` on a task of its own that runs as the running request (as
/// it is outside one): a spawned task is outside the request's scope, and
/// this way its lines still name the request. What it notes goes to a line
/// of its own, which no `answered` line reads.
pub fn spawn_in_request<F>(work: F) -> tokio::task::JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let identity = RUNNING.try_with(|running| (running.request_id.clone(), running.http_method.clone())).ok();
    tokio::spawn(async move {
        match identity {
            Some((request_id, http_method)) => in_request(&request_id, &http_method, work).await,
            None => work.await,
        }
    })
}

/// Notes something on the running request's line (nothing outside a request).
pub fn note(f: impl FnOnce(&mut RequestLine)) {
    let _ = RUNNING.try_with(|running| f(&mut running.line.borrow_mut()));
}

/// What the running request noted, taken for its `answered` line (empty
/// outside a request).
pub fn take_line() -> RequestLine {
    RUNNING.try_with(|running| running.line.take()).unwrap_or_default()
}

/// The CloudWatch namespace of every metric.
pub const NAMESPACE: &str = "KobanaInbox";

static METRICS_ON: AtomicBool = AtomicBool::new(false);

/// Turns metric lines on or off for this process.
pub fn enable_metrics(on: bool) {
    METRICS_ON.store(on, Ordering::Relaxed);
}

/// Whether metric lines are written (what a line's values need not be
/// gathered for when they are not).
pub fn metrics_on() -> bool {
    METRICS_ON.load(Ordering::Relaxed)
}

/// One EMF event: its dimension sets (each a list of property names), its
/// metrics (name, unit, value) and its properties (dimension values first).
pub struct Emf<'a> {
    pub dimensions: &'a [&'a [&'a str]],
    pub metrics: &'a [(&'a str, &'a str, f64)],
    pub properties: &'a [(&'a str, Value)],
}

impl Emf<'_> {
    /// The line as JSON text (what `emit` writes), written member by member:
    /// a function writes one on every request, and building it as a value
    /// tree first (a map, a dozen strings, then the text) cost about as much
    /// as the rest of a cheap request's own work. Property and metric names
    /// are distinct from each other and from `_aws` (each call site's own).
    pub fn line(&self, timestamp_ms: u64) -> Vec<u8> {
        let mut line = JsonMembers::object(512);
        line.key("_aws");
        line.0.extend_from_slice(br#"{"Timestamp":"#);
        line.json(timestamp_ms);
        line.0.extend_from_slice(br#","CloudWatchMetrics":[{"Namespace":"#);
        line.json(NAMESPACE);
        line.0.extend_from_slice(br#","Dimensions":"#);
        line.json(self.dimensions);
        line.0.extend_from_slice(br#","Metrics":["#);
        for (i, (name, unit, _)) in self.metrics.iter().enumerate() {
            if i > 0 {
                line.0.push(b',');
            }
            line.0.extend_from_slice(br#"{"Name":"#);
            line.json(name);
            line.0.extend_from_slice(br#","Unit":"#);
            line.json(unit);
            line.0.push(b'}');
        }
        line.0.extend_from_slice(b"]}]}");
        for (name, value) in self.properties {
            line.value(name, value);
        }
        for (name, _, value) in self.metrics {
            line.value(name, value);
        }
        line.0.push(b'}');
        line.0
    }

    /// The line, parsed (what a reader of the log sees).
    pub fn to_json(&self, timestamp_ms: u64) -> Value {
        serde_json::from_slice(&self.line(timestamp_ms)).unwrap_or(Value::Null)
    }

    /// Writes the line on stdout, when metrics are on.
    pub fn emit(&self) {
        if !metrics_on() {
            return;
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let mut line = self.line(u64::try_from(now).unwrap_or(u64::MAX));
        line.push(b'\n');
        // One write of one line: lines of concurrent requests do not interleave.
        let _ = std::io::stdout().lock().write_all(&line);
    }
}

/// The log filter: at most the first 256 characters of a client's string,
/// without the characters that hide, reorder or break text
/// (`domain::text::is_hidden`: controls, separators, bidirectional and
/// zero-width characters, tags): what a log line or a terminal may
/// be shown of text a caller chose (a path before the caller is
/// authenticated, what the development servers were sent). Nothing in it can
/// end a line, move the cursor, recolour or reorder what follows.
pub fn loggable(text: &str) -> String {
    const MAX: usize = 256;
    let mut kept = text.chars().filter(|c| !inbox_domain::text::is_hidden(*c));
    let mut out: String = kept.by_ref().take(MAX).collect();
    if kept.next().is_some() {
        out.push('…');
    }
    out
}

/// A caller's text as a readable line prints it: through the log filter
/// (`loggable`), then quoted as the JSON log lines write a string (a `"` or
/// `\` in it escaped), so where it starts and ends shows.
pub fn quoted(text: &str) -> String {
    let mut out = JsonMembers(Vec::with_capacity(text.len() + 2));
    out.json(loggable(text));
    out.text().into_owned()
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
    // try_init: a second initialisation (tests, embedding) keeps the first
    // subscriber, and with it the first one's idea of what a request is.
    let installed = match format {
        LogFormat::Json => builder.fmt_fields(JsonSpanFields).event_format(JsonLine).try_init(),
        // Colours on a terminal only: a log file or a pipe gets plain text.
        LogFormat::Pretty => {
            builder.compact().with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).try_init()
        }
    };
    if installed.is_ok() {
        READABLE.store(format == LogFormat::Pretty, Ordering::Relaxed);
    }
}

/// The JSON line of an event, as tracing-subscriber's JSON format writes it
/// with `flatten_event` and `with_current_span` (`timestamp`, `level`, the
/// event's fields, `target`, and the current span's fields with its `name`
/// under `span`), written straight into the line. That format parses the
/// span's stored fields back into a JSON tree and writes them again at every
/// event; here they are copied as they were stored (`JsonSpanFields` keeps
/// them as JSON object text). Half the cost of a request's line (`make profile`).
pub struct JsonLine;

/// How a span's fields are kept for `JsonLine`: as the text of a JSON object,
/// written member by member when the span opens (tracing-subscriber's
/// `JsonFields` collects them into a map of JSON values first). Fields
/// recorded later are merged in, a field recorded again keeping its last
/// value, as `JsonFields` does.
pub struct JsonSpanFields;

impl<'w> FormatFields<'w> for JsonSpanFields {
    fn format_fields<R: RecordFields>(&self, mut writer: Writer<'w>, fields: R) -> std::fmt::Result {
        writer.write_str(&JsonMembers::recorded(fields).text())
    }

    fn add_fields(
        &self,
        current: &'w mut FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> std::fmt::Result {
        let members = JsonMembers::recorded(fields);
        // Rare (this product's spans get their fields when they open): the
        // two objects merged as values, so a repeated field keeps one member.
        let mut merged: Map<String, Value> = serde_json::from_str(&current.fields).unwrap_or_default();
        let added: Map<String, Value> = serde_json::from_slice(&members.0).map_err(|_| std::fmt::Error)?;
        merged.extend(added);
        current.fields = serde_json::to_string(&merged).map_err(|_| std::fmt::Error)?;
        Ok(())
    }
}

impl<S, N> FormatEvent<S, N> for JsonLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> std::fmt::Result {
        let timestamp = timestamp(time::OffsetDateTime::now_utc());
        let meta = event.metadata();
        let mut line = JsonMembers::object(256);
        // ASCII digits and separators only.
        line.value("timestamp", std::str::from_utf8(&timestamp).unwrap_or_default());
        line.value("level", meta.level().as_str());
        event.record(&mut line);
        line.value("target", meta.target());
        let in_request = RUNNING.try_with(|running| {
            // The members in the order a `request` span's would be.
            line.key("span");
            line.0.extend_from_slice(br#"{"request_id":"#);
            line.json(running.request_id.as_str());
            line.0.extend_from_slice(br#","http_method":"#);
            line.json(running.http_method.as_str());
            line.0.extend_from_slice(br#","name":"request"}"#);
        });
        // Outside a request, the current span, as tracing-subscriber's JSON format names it.
        if in_request.is_err()
            && let Some(span) = event.parent().and_then(|id| ctx.span(id)).or_else(|| ctx.lookup_current())
        {
            line.key("span");
            let extensions = span.extensions();
            // `JsonSpanFields` stores the span's fields as a JSON object's text.
            let stored = extensions.get::<FormattedFields<N>>().map_or("", |f| f.fields.as_str());
            match stored.strip_suffix('}') {
                Some(open) if open.starts_with('{') => {
                    line.0.extend_from_slice(open.as_bytes());
                    if open.len() > 1 {
                        line.0.push(b',');
                    }
                }
                _ => line.0.push(b'{'),
            }
            line.json("name");
            line.0.push(b':');
            line.json(span.metadata().name());
            line.0.push(b'}');
        }
        line.0.extend_from_slice(b"}\n");
        writer.write_str(&line.text())
    }
}

/// `at` as tracing-subscriber's `SystemTime` writes it — RFC 3339, UTC,
/// microseconds: `2026-12-05T02:05:19.649630Z` — digit by digit: every line
/// has one, and going through `core::fmt` cost more than the rest of a
/// `server/discover` line's formatting (`make profile`). Years are written
/// with four digits (the clock gives no other).
fn timestamp(at: time::OffsetDateTime) -> [u8; 27] {
    let mut out = *b"0000-00-00T00:00:00.000000Z";
    let mut put = |end: usize, width: usize, mut n: u32| {
        for i in (end - width..end).rev() {
            if let Some(b) = out.get_mut(i) {
                *b = b'0' + (n % 10) as u8;
            }
            n /= 10;
        }
    };
    let (hour, minute, second, micro) = at.to_hms_micro();
    put(4, 4, at.year().clamp(0, 9999).unsigned_abs());
    put(7, 2, u32::from(u8::from(at.month())));
    put(10, 2, u32::from(at.day()));
    put(13, 2, u32::from(hour));
    put(16, 2, u32::from(minute));
    put(19, 2, u32::from(second));
    put(26, 6, micro);
    out
}

/// A JSON object being written member by member (`JsonLine`), and the
/// visitor of an event's fields: strings, numbers and booleans keep their
/// JSON types, anything else is its `Debug` text (the `message` included);
/// `log.*` fields (the `log` crate's metadata) are left out, as
/// tracing-subscriber's JSON format does.
struct JsonMembers(Vec<u8>);

impl JsonMembers {
    /// An object opened, with room for `capacity` bytes.
    fn object(capacity: usize) -> Self {
        let mut bytes = Vec::with_capacity(capacity);
        bytes.push(b'{');
        JsonMembers(bytes)
    }

    /// A span's fields as a whole object.
    fn recorded(fields: impl RecordFields) -> Self {
        let mut members = JsonMembers::object(64);
        fields.record(&mut members);
        members.0.push(b'}');
        members
    }

    /// What was written, as text. Every byte is JSON made from `str`s, so
    /// valid UTF-8: the check is the fast one (`from_utf8`), and the lossy
    /// conversion only a fallback that cannot lose anything here.
    fn text(&self) -> std::borrow::Cow<'_, str> {
        std::str::from_utf8(&self.0).map_or_else(|_| String::from_utf8_lossy(&self.0), std::borrow::Cow::Borrowed)
    }

    /// Writes `value` as serde_json writes it (as tracing-subscriber's JSON
    /// format does: a float that is not finite is `null`).
    fn json(&mut self, value: impl serde::Serialize) {
        // Writing a string, a number or a boolean into a Vec cannot fail.
        let _ = value.serialize(&mut serde_json::Serializer::new(&mut self.0));
    }

    fn key(&mut self, name: &str) {
        if self.0.len() > 1 {
            self.0.push(b',');
        }
        // A field's name is nearly always an identifier, which JSON takes as
        // it is (a line has a dozen of them); anything else is escaped.
        if name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')) {
            self.0.push(b'"');
            self.0.extend_from_slice(name.as_bytes());
            self.0.push(b'"');
        } else {
            self.json(name);
        }
        self.0.push(b':');
    }

    fn value(&mut self, name: &str, value: impl serde::Serialize) {
        self.key(name);
        self.json(value);
    }
}

impl Visit for JsonMembers {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !field.name().starts_with("log.") {
            self.value(field.name(), value);
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.value(field.name(), value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.value(field.name(), value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.value(field.name(), value);
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.value(field.name(), value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if !field.name().starts_with("log.") {
            // Escaped as it is formatted (serde_json's `collect_str`): no
            // text in between.
            self.value(field.name(), format_args!("{value:?}"));
        }
    }
}

/// A decoding error's message without the values it quotes, for logs and
/// for errors that reach them. serde names the value it refused (`invalid
/// type: string "Maria <maria@example.com>", expected a sequence`), and the
/// values this service decodes are addresses, subjects and headers: each quoted string becomes `"…"` (and an
/// unknown variant's or a character's value `` `…` ``), so the line still says
/// which rule failed and where, never what a sender wrote.
pub fn without_values(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push_str("\"…\"");
                while let Some(inner) = chars.next() {
                    match inner {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '`' if out.ends_with("variant ") || out.ends_with("character ") => {
                out.push_str("`…`");
                for inner in chars.by_ref() {
                    if inner == '`' {
                        break;
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::Value;

    /// The metric line written member by member is the document EMF asks
    /// for: the same as the one built as a value, names and strings that
    /// need escaping, and a value that is not a finite number (`null`).
    #[test]
    fn a_metric_line_is_the_emf_document_it_stands_for() {
        let emf = super::Emf {
            dimensions: &[&["Surface", "Status\"Class"], &["Surface"]],
            metrics: &[("Requests", "Count", 1.0), ("Latency", "Milliseconds", 0.25), ("Odd", "Count", f64::NAN)],
            properties: &[
                ("Surface", Value::from("mcp")),
                ("Status\"Class", Value::from("2xx")),
                ("RequestId", Value::from("r-\"1\"\n")),
                ("Status", Value::from(200u16)),
            ],
        };
        let text = String::from_utf8(emf.line(1_800_000_000_000)).unwrap();
        assert!(!text.contains('\n'), "one line: {text}");
        let expected = serde_json::json!({
            "_aws": {"Timestamp": 1_800_000_000_000u64, "CloudWatchMetrics": [{
                "Namespace": super::NAMESPACE,
                "Dimensions": [["Surface", "Status\"Class"], ["Surface"]],
                "Metrics": [
                    {"Name": "Requests", "Unit": "Count"},
                    {"Name": "Latency", "Unit": "Milliseconds"},
                    {"Name": "Odd", "Unit": "Count"},
                ],
            }]},
            "Surface": "mcp", "Status\"Class": "2xx", "RequestId": "r-\"1\"\n", "Status": 200,
            "Requests": 1.0, "Latency": 0.25, "Odd": null,
        });
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected, "{text}");
        assert_eq!(emf.to_json(1_800_000_000_000), expected);
    }

    /// A writer the test reads back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn events() {
        tracing::info!(kind = "outside", "before any span");
        let span =
            tracing::info_span!("request", request_id = %"4f2a", http_method = %"POST", late = tracing::field::Empty);
        let _entered = span.enter();
        tracing::info!("before the span's last field");
        span.record("late", 7);
        span.record("http_method", "GET");
        tracing::info!(
            path = "/mcp",
            status = 200u16,
            calls = -1i64,
            ratio = 0.5,
            whole = 2.0,
            nan = f64::NAN,
            ok = true,
            quoted = "a \"b\"\n\u{1}",
            "spaced \"name\"" = 3,
            debug = ?vec![1, 2],
            shown = %"a \"b\"\n\u{1}\\ é",
            debug_text = ?"a \"b\"\t",
            "answered"
        );
        let empty = tracing::info_span!("inner");
        let _inner = empty.enter();
        tracing::warn!(error = %"boom", "failed: {}", 42);
    }

    /// The lines `format` writes for `events`, parsed, without their timestamps.
    fn lines(json_line: bool) -> Vec<Value> {
        lines_of(json_line, events)
    }

    /// The lines `format` writes for what `events` logs, parsed, without their timestamps.
    fn lines_of(json_line: bool, events: impl FnOnce()) -> Vec<Value> {
        let out = Captured::default();
        let writer = out.clone();
        let builder = tracing_subscriber::fmt().with_writer(move || writer.clone());
        let dispatch = if json_line {
            tracing::Dispatch::new(builder.fmt_fields(super::JsonSpanFields).event_format(super::JsonLine).finish())
        } else {
            tracing::Dispatch::new(
                builder.json().with_current_span(true).with_span_list(false).flatten_event(true).finish(),
            )
        };
        tracing::dispatcher::with_default(&dispatch, events);
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|line| {
                let mut value: Value = serde_json::from_str(line).unwrap();
                let stamp = value.as_object_mut().unwrap().remove("timestamp").unwrap();
                assert!(stamp.as_str().unwrap().ends_with('Z'), "{stamp}");
                value
            })
            .collect()
    }

    #[test]
    fn timestamps_are_what_tracing_subscribers_system_time_writes() {
        let format =
            time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");
        for unix_micros in [0i128, 951_782_400_123_456, 1_764_901_519_649_630, 253_402_300_799_999_999] {
            let at = time::OffsetDateTime::from_unix_timestamp_nanos(unix_micros * 1000).unwrap();
            let ours = super::timestamp(at);
            assert_eq!(std::str::from_utf8(&ours).unwrap(), at.format(format).unwrap());
        }
        // The clock's own: the shape tracing-subscriber's `SystemTime` gives.
        let mut theirs = String::new();
        tracing_subscriber::fmt::time::FormatTime::format_time(
            &tracing_subscriber::fmt::time::SystemTime,
            &mut tracing_subscriber::fmt::format::Writer::new(&mut theirs),
        )
        .unwrap();
        let shape = |text: &[u8]| text.iter().map(|b| if b.is_ascii_digit() { b'9' } else { *b }).collect::<Vec<u8>>();
        let ours = super::timestamp(time::OffsetDateTime::now_utc());
        assert_eq!(shape(&ours), shape(theirs.as_bytes()), "{theirs}");
    }

    #[test]
    fn json_lines_say_what_tracing_subscribers_json_format_says() {
        let ours = lines(true);
        assert_eq!(ours.len(), 4);
        assert_eq!(ours, lines(false));
        assert_eq!(
            ours[1]["span"],
            serde_json::json!({"request_id": "4f2a", "http_method": "POST", "name": "request"})
        );
        assert_eq!(
            ours[2]["span"],
            serde_json::json!({"request_id": "4f2a", "http_method": "GET", "late": 7, "name": "request"})
        );
        assert_eq!(ours[2]["quoted"], "a \"b\"\n\u{1}");
        // A name that is not an identifier is escaped like any other string.
        assert_eq!(ours[2]["spaced \"name\""], 3);
        assert_eq!(ours[2]["calls"], -1);
        assert_eq!(ours[3]["span"], serde_json::json!({"name": "inner"}));
        assert_eq!(ours[3]["message"], "failed: 42");
        assert!(ours[0].get("span").is_none());
    }

    #[test]
    fn a_request_is_named_on_its_lines_as_its_span_would_name_it() {
        // What tracing-subscriber's JSON format writes inside a `request` span…
        let spanned = lines_of(false, || {
            let span = tracing::info_span!("request", request_id = %"r-\"1\"", http_method = %"POST");
            let _entered = span.enter();
            tracing::info!(status = 200u16, "answered");
            tracing::warn!(error = %"boom", "inside");
        });
        // …`JsonLine` writes inside `in_request`, with no span, even under a library's span.
        let mut noted = None;
        let ours = lines_of(true, || {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            runtime.block_on(super::in_request("r-\"1\"", "POST", async {
                super::note(|line| line.sub = Some("user_1".into()));
                tracing::info!(status = 200u16, "answered");
                let library = tracing::info_span!("library", id = 3);
                let _entered = library.enter();
                tracing::warn!(error = %"boom", "inside");
                noted = Some(super::take_line());
            }));
        });
        assert_eq!(ours.len(), 2);
        assert_eq!(ours, spanned);
        assert_eq!(
            ours[1]["span"],
            serde_json::json!({"request_id": "r-\"1\"", "http_method": "POST", "name": "request"})
        );
        // The request's line is its own; outside a request there is none to note on.
        assert_eq!(noted.and_then(|line| line.sub).as_deref(), Some("user_1"));
        super::note(|line| line.sub = Some("nobody".into()));
        assert_eq!(super::take_line().sub, None);
        // Outside a request, the current span is named as before.
        let outside = lines_of(true, || {
            let library = tracing::info_span!("library", id = 3);
            let _entered = library.enter();
            tracing::info!("outside");
        });
        assert_eq!(outside[0]["span"], serde_json::json!({"id": 3, "name": "library"}));
    }
}
