//! The mail benchmark's reader: what the product does with a raw bill
//! e-mail, without the database. `make bench` (`BENCH_ONLY=mail` for this
//! measurement alone) runs it beside a Python peer doing the same
//! (scripts/bench_mail_peer.py) on the same messages, one core each.
//!
//! Per message, the work of ingestion then processing, in their order:
//! `inbox_mail::read` of the raw message (what `POST /inboxes/{id}/emails`
//! does with a `message/rfc822` body), the SHA-256 of every attachment
//! (ingestion records it), then for every attachment that looks like a PDF
//! (its type or its name, as the worker decides) `inbox_mail::pdf::text`
//! and the boleto and Pix search in its text (`inbox_domain::boleto::all`,
//! `inbox_domain::pix::find_all`), then the same search in the body's text.
//! The reception date given to the boleto search is the message's `Date`.
//! Not done: storing the attachments and the record, the job, the webhook.
//!
//! Commands (each prints one JSON object):
//!
//! - `throughput SECONDS FILE...`: one warm-up pass over the files, then
//!   passes over them, one message at a time on this thread, until SECONDS
//!   of wall-clock time have gone (at least one pass); the thread's CPU
//!   time (`/proc/thread-self/schedstat`, nanoseconds) over the measured
//!   passes, and what each message gave (its bills' barcodes and Pix codes,
//!   or the first PDF's reason).
//! - `memory FILE`: reads one message once and prints the process's peak
//!   resident memory (VmHWM, what `getrusage`'s `ru_maxrss` reports) before
//!   the file is read, once it is read, once it is parsed, and at the end.
//!
//! The allocator is the server's and the worker's (mimalloc).

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use inbox_domain::{boleto, pix};
use inbox_mail::Received;
use serde_json::{Value, json};
use time::{Date, OffsetDateTime};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What one message gave: every bill's barcode, then every Pix code, each
/// once and in order; the first unreadable PDF's reason; a refusal.
#[derive(Default)]
struct Outcome {
    found: Vec<String>,
    reason: Option<&'static str>,
    refused: Option<String>,
}

impl Outcome {
    fn json(&self) -> Value {
        json!({"found": self.found, "reason": self.reason, "refused": self.refused})
    }

    fn add(&mut self, item: String) {
        if !self.found.contains(&item) {
            self.found.push(item);
        }
    }
}

/// Whether an attachment is read as a PDF (the worker's `looks_like_pdf`).
fn looks_like_pdf(attachment: &inbox_mail::Attachment) -> bool {
    attachment.content_type.eq_ignore_ascii_case("application/pdf")
        || attachment.name.to_ascii_lowercase().ends_with(".pdf")
}

/// The boleto and Pix search of one text (the worker's `bills_in`).
fn search(text: &str, received: Date, outcome: &mut Outcome) {
    if let Ok(slips) = boleto::all(text, received) {
        for slip in slips {
            outcome.add(slip.barcode);
        }
    }
    for code in pix::find_all(text) {
        outcome.add(code.payload);
    }
}

/// Ingestion's part: the message read, each attachment's digest taken.
fn ingest(raw: &[u8]) -> Result<Received, inbox_mail::Refusal> {
    let message = inbox_mail::read(raw)?;
    for attachment in &message.attachments {
        black_box(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &attachment.bytes));
    }
    Ok(message)
}

/// Processing's part: every PDF's text searched, then the body's.
fn process(message: &Received) -> Outcome {
    let received = message
        .date
        .and_then(|t| OffsetDateTime::from_unix_timestamp(t).ok())
        .unwrap_or_else(OffsetDateTime::now_utc)
        .date();
    let mut outcome = Outcome::default();
    for attachment in message.attachments.iter().filter(|a| looks_like_pdf(a)) {
        match inbox_mail::pdf::text(&attachment.bytes) {
            Ok(text) => search(&text, received, &mut outcome),
            Err(unread) => {
                outcome.reason.get_or_insert(unread.reason());
            }
        }
    }
    search(&message.text, received, &mut outcome);
    outcome
}

fn one(raw: &[u8]) -> Outcome {
    match ingest(raw) {
        Ok(message) => process(&message),
        Err(refusal) => Outcome { refused: Some(refusal.to_string()), ..Outcome::default() },
    }
}

/// This thread's CPU time so far, in nanoseconds.
fn thread_cpu_ns() -> Result<u64, String> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").map_err(|e| e.to_string())?;
    stat.split_whitespace().next().and_then(|ns| ns.parse().ok()).ok_or_else(|| format!("schedstat: {stat:?}"))
}

/// The process's peak resident memory so far (VmHWM), in KiB.
fn peak_kib() -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| "no VmHWM in /proc/self/status".to_owned())
}

fn throughput(seconds: f64, files: &[String]) -> Result<Value, String> {
    let messages: Vec<Vec<u8>> =
        files.iter().map(|f| std::fs::read(f).map_err(|e| format!("{f}: {e}"))).collect::<Result<_, _>>()?;
    let outcomes: Vec<Value> = messages.iter().map(|raw| one(raw).json()).collect();
    let budget = Duration::from_secs_f64(seconds);
    let (started, cpu_before) = (Instant::now(), thread_cpu_ns()?);
    let mut count = 0u64;
    loop {
        for raw in &messages {
            black_box(one(black_box(raw)));
        }
        count += messages.len() as u64;
        if started.elapsed() >= budget {
            break;
        }
    }
    let (wall, cpu) = (started.elapsed().as_secs_f64(), thread_cpu_ns()? - cpu_before);
    #[expect(clippy::cast_precision_loss, reason = "nanoseconds of a few seconds: exact in f64")]
    let cpu = cpu as f64 / 1e9;
    Ok(json!({"messages": count, "cpu_s": cpu, "wall_s": wall, "outcomes": outcomes}))
}

fn memory(file: &str) -> Result<Value, String> {
    let before = peak_kib()?;
    let raw = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let read = peak_kib()?;
    let message = ingest(&raw).map_err(|r| r.to_string())?;
    let parsed = peak_kib()?;
    let outcome = process(&message);
    let end = peak_kib()?;
    Ok(json!({
        "bytes": raw.len(), "attachments": message.attachments.len(),
        "peak_kib": {"start": before, "file_read": read, "parsed": parsed, "end": end},
        "outcome": outcome.json(),
    }))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [command, seconds, files @ ..] if command == "throughput" && !files.is_empty() => {
            seconds.parse().map_err(|_| format!("not seconds: {seconds}")).and_then(|s| throughput(s, files))
        }
        [command, file] if command == "memory" => memory(file),
        _ => Err("usage: mail_bench throughput SECONDS FILE... | mail_bench memory FILE".to_owned()),
    };
    match result {
        Ok(value) => {
            println!("{value}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mail_bench: {e}");
            ExitCode::FAILURE
        }
    }
}
