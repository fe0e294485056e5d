//! Long operations end to end (issue 6): the job runner against the local
//! database, e-mail processing through REST and MCP, signed webhook
//! deliveries to a local receiver, the stream worker's handling of duplicate
//! records, the ingestion route, and the outbound client's refusal of every
//! address class it must never reach (SSRF), redirects, hangs and huge answers.

use crate::common;

use std::collections::{BTreeSet, VecDeque};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_lc_rs::hmac;
use common::{Harness, Req, Resp, envelope_with, get, rest, send};
use http_body_util::BodyExt as _;
use inbox::domain::records::JobStatus;
use inbox::domain::{OrgId, Role, Tenant, WorkspaceId};
use inbox::outbound::{Lookup, Outbound};
use inbox::worker::Ran;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// The tenant jobs of the demo workspace run as.
pub(crate) fn ws_main() -> Tenant {
    Tenant {
        org: OrgId::parse("org_demo").expect("org id"),
        workspace: WorkspaceId::parse("ws_main").expect("workspace id"),
        role: Role::Viewer,
        archived: false,
        shards: Default::default(),
        content_policy: Default::default(),
        retention_days: inbox::domain::retention::DEFAULT_DAYS,
    }
}

/// Runs a job the way the worker does.
pub(crate) async fn run_job(h: &Harness, id: &str) -> Ran {
    let app = h.app().await;
    Box::pin(inbox::worker::run(&app.runner, &ws_main(), id))
        .await
        .unwrap_or_else(|e| panic!("job {id} not recorded: {e}"))
}

/// The job of a 202 answer, after checking the answer's shape.
#[track_caller]
pub(crate) fn accepted_job(resp: &Resp, kind: &str) -> Value {
    let body = resp.json();
    assert_eq!(resp.status, 202, "body {body}");
    let job = body["data"]["job"].clone();
    let id = job["id"].as_str().unwrap_or_else(|| panic!("no job id: {body}"));
    assert!(id.starts_with("job_"), "{body}");
    assert_eq!(job["status"], "queued", "{body}");
    assert_eq!(job["kind"], kind, "{body}");
    assert_eq!(job["attempts"], 0, "{body}");
    assert_eq!(resp.header("location"), Some(format!("/api/v1/jobs/{id}").as_str()), "Location of the job");
    job
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().unwrap_or_else(|| panic!("no id: {value}")).to_owned()
}

/// Starts a reprocess of `email` through REST: the queued job's id.
pub(crate) async fn reprocess(h: &Harness, email: &str) -> String {
    let resp = send(h.api("POST", &format!("/emails/{email}/reprocess"))).await;
    let job = accepted_job(&resp, "email.reprocess");
    assert_eq!(job["subject_id"], email);
    id_of(&job)
}

/// Registers a webhook for `url` (every subscribable event): its id and signing secret.
pub(crate) async fn register_webhook(h: &Harness, url: &str) -> (String, String) {
    let resp = send(h.api("PUT", "/webhooks").json(&json!({"url": url}))).await;
    let body = resp.json();
    assert_eq!(resp.status, 201, "PUT /webhooks {url}: {body}");
    let secret = body["data"]["secret"].as_str().unwrap_or_else(|| panic!("no secret: {body}")).to_owned();
    (id_of(&body["data"]), secret)
}

/// Follows a job with `GET /jobs/{id}` until it is final (bounded).
async fn wait_final(h: &Harness, id: &str) -> Value {
    for _ in 0..100 {
        let job = get(h, &format!("/jobs/{id}")).await["data"].clone();
        if job["status"] == "succeeded" || job["status"] == "failed" {
            return job;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("job {id} did not finish: {}", get(h, &format!("/jobs/{id}")).await);
}

/// The deliveries of a webhook, newest first.
async fn deliveries(h: &Harness, webhook: &str) -> Vec<Value> {
    get(h, &format!("/webhooks/{webhook}/deliveries")).await["data"]
        .as_array()
        .unwrap_or_else(|| panic!("deliveries of {webhook} are not a list"))
        .clone()
}

fn keys(value: &Value) -> BTreeSet<String> {
    value.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

fn hex_decode(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

/// Checks `X-Kobana-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`
/// against `body` with `secret`, computing the HMAC here.
fn signature_verifies(header: &str, secret: &str, body: &[u8]) -> bool {
    let mut t = None;
    let mut v1 = None;
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", value)) => t = Some(value),
            Some(("v1", value)) => v1 = Some(value),
            _ => return false,
        }
    }
    let (Some(t), Some(v1)) = (t, v1) else { return false };
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let Some(tag) = hex_decode(v1) else { return false };
    let mut message = format!("{t}.").into_bytes();
    message.extend_from_slice(body);
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    hmac::verify(&key, &message, &tag).is_ok()
}

// ------------------------------------------------------------ the receiver

/// One request a receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    path: String,
    headers: http::HeaderMap,
    body: Vec<u8>,
}

impl Hit {
    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_else(|| panic!("no {name} header: {self:?}"))
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
}

/// A webhook receiver on loopback that records every request and answers
/// 200 (or the status it was started with).
pub(crate) struct Receiver {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub(crate) async fn start() -> Receiver {
        Receiver::answering(200).await
    }

    pub(crate) async fn answering(status: u16) -> Receiver {
        let status = http::StatusCode::from_u16(status).expect("a valid status");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
        let addr = listener.local_addr().expect("receiver address");
        let hits = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&hits);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let recorded = Arc::clone(&recorded);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                        let recorded = Arc::clone(&recorded);
                        async move {
                            let (parts, body) = req.into_parts();
                            let body = body.collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
                            recorded.lock().expect("hits lock").push(Hit {
                                path: parts.uri.path().to_owned(),
                                headers: parts.headers,
                                body,
                            });
                            let mut response =
                                http::Response::new(http_body_util::Full::new(bytes::Bytes::from_static(b"ok")));
                            *response.status_mut() = status;
                            Ok::<_, std::convert::Infallible>(response)
                        }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        });
        Receiver { addr, hits, task }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.hits.lock().expect("hits lock").clone()
    }

    /// The requests that carried event `event_type`.
    pub(crate) fn events(&self, event_type: &str) -> Vec<Hit> {
        self.hits().into_iter().filter(|h| h.headers.get("x-kobana-event").is_some_and(|v| v == event_type)).collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How many connections reached `listener` (nobody accepts them meanwhile).
/// A connection is complete in the kernel before the client's call returns,
/// so a short bounded wait sees every one that was made.
async fn connections_made(listener: &TcpListener) -> usize {
    let mut count = 0;
    while let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await {
        count += 1;
    }
    count
}

/// Reads one HTTP/1.1 request (headers and a Content-Length body).
async fn read_request(stream: &mut TcpStream) -> Vec<u8> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap_or(0)))
                .unwrap_or(0);
            if data.len() >= end + 4 + length {
                return data;
            }
        }
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return data,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    }
}

// ------------------------------------------------------------ the resolver

/// A resolver that answers fixed addresses, in turn (the last answer repeats),
/// and counts the questions.
struct FakeLookup {
    answers: Mutex<VecDeque<Vec<IpAddr>>>,
    calls: AtomicUsize,
}

impl FakeLookup {
    fn new(answers: &[&[&str]]) -> Arc<FakeLookup> {
        let answers = answers
            .iter()
            .map(|a| a.iter().map(|ip| ip.parse().unwrap_or_else(|_| panic!("bad test address {ip}"))).collect())
            .collect();
        Arc::new(FakeLookup { answers: Mutex::new(answers), calls: AtomicUsize::new(0) })
    }

    fn fixed(addresses: &[&str]) -> Arc<FakeLookup> {
        Self::new(&[addresses])
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Lookup for FakeLookup {
    fn lookup(&self, _host: &str) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + '_>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut answers = self.answers.lock().expect("answers lock");
        let answer = if answers.len() > 1 { answers.pop_front() } else { answers.front().cloned() };
        let answer = answer.unwrap_or_default();
        Box::pin(async move { Ok(answer) })
    }
}

fn outbound(lookup: Arc<FakeLookup>, allow_loopback: bool) -> Outbound {
    Outbound::with_lookup(lookup, allow_loopback).expect("outbound client")
}

const BODY: &str = r#"{"id":"evt_test","type":"webhook.test","created_at":"2026-11-20T09:00:00.000Z","data":{}}"#;

/// One delivery attempt of a fixed test event.
async fn post(outbound: &Outbound, url: &str) -> inbox::outbound::Attempt {
    outbound.post(url, "whsec_test", "webhook.test", "dlv_test", BODY).await
}

#[track_caller]
fn assert_refused(attempt: &inbox::outbound::Attempt, what: &str) {
    assert_eq!(attempt.status_code, None, "{what}: no answer may be read: {attempt:?}");
    let error = attempt.error.as_deref().unwrap_or_else(|| panic!("{what} must fail: {attempt:?}"));
    assert!(error.contains("refused"), "{what}: the error must say it was refused: {attempt:?}");
}

/// Every address class a webhook must never reach.
const REFUSED: [&str; 21] = [
    "10.0.0.1",
    "10.255.255.254",
    "172.16.0.1",
    "172.31.255.1",
    "192.168.1.1",
    "127.0.0.1",
    "127.10.20.30",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "::1",
    "fc00::1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    // 6to4 around the metadata address, local-use NAT64, Teredo, the 6to4 relay range.
    "2002:a9fe:a9fe::1",
    "64:ff9b:1::a9fe:a9fe",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "2001::1",
    "192.88.99.1",
];

fn literal_url(ip: &str) -> String {
    if ip.contains(':') { format!("https://[{ip}]/hook") } else { format!("https://{ip}/hook") }
}

// ---------------------------------------------------------------------------
// 1. End to end through REST
// ---------------------------------------------------------------------------

#[tokio::test]
async fn reprocessing_an_email_extracts_the_boleto_and_delivers_a_signed_email_processed_event() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (webhook, secret) = register_webhook(&h, &receiver.url()).await;

    let job_id = reprocess(&h, "eml_energy_nov").await;
    assert_eq!(
        get(&h, "/emails/eml_energy_nov").await["data"]["status"],
        "processing",
        "processing until the job runs"
    );
    assert!(receiver.hits().is_empty(), "nothing is sent before the job runs");

    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Succeeded));

    let job = get(&h, &format!("/jobs/{job_id}")).await["data"].clone();
    assert_eq!(job["status"], "succeeded", "{job}");
    assert_eq!(job["attempts"], 1, "{job}");
    assert_eq!(job["error"], Value::Null, "{job}");
    assert_eq!(job["result"]["status"], "processed", "{job}");
    assert_eq!(job["result"]["extracted"]["amount_cents"], 48_750, "{job}");

    let email = get(&h, "/emails/eml_energy_nov").await["data"].clone();
    assert_eq!(email["status"], "processed", "{email}");
    assert_eq!(email["error"], Value::Null, "{email}");
    let extracted = &email["extracted"];
    assert_eq!(extracted["amount_cents"], 48_750, "{email}");
    assert_eq!(extracted["due_date"], "2026-12-15", "{email}");
    assert_eq!(extracted["bank_code"], "001", "{email}");
    assert_eq!(extracted["digitable_line"], "00190000090234567890412345678176616610000048750", "{email}");
    assert_eq!(extracted["barcode"].as_str().map(str::len), Some(44), "{email}");

    let hits = receiver.hits();
    assert_eq!(hits.len(), 1, "exactly one request: {hits:?}");
    let hit = &hits[0];
    assert_eq!(hit.path, "/hook");
    assert_eq!(hit.header("x-kobana-event"), "email.processed");
    assert!(hit.header("content-type").starts_with("application/json"), "{hit:?}");
    let event = hit.json();
    assert_eq!(keys(&event), BTreeSet::from(["id", "type", "created_at", "data"].map(String::from)), "{event}");
    assert!(event["id"].as_str().is_some_and(|id| id.starts_with("evt_")), "{event}");
    assert_eq!(event["type"], "email.processed", "{event}");
    assert!(event["created_at"].is_string(), "{event}");
    assert_eq!(event["data"]["email_id"], "eml_energy_nov", "{event}");
    assert_eq!(event["data"]["inbox_id"], "inb_bills", "{event}");
    assert_eq!(event["data"]["status"], "processed", "{event}");
    assert_eq!(event["data"]["extracted"]["amount_cents"], 48_750, "{event}");
    assert_eq!(event["data"]["extracted"]["due_date"], "2026-12-15", "{event}");

    let signature = hit.header("x-kobana-signature");
    assert!(signature_verifies(signature, &secret, &hit.body), "signature {signature} must verify with the secret");
    let t: u64 = signature
        .strip_prefix("t=")
        .and_then(|rest| rest.split(',').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("signature {signature} starts with t=<unix>"));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    assert!(t.abs_diff(now) < 600, "t={t} is the time of sending (now {now})");
    assert!(!signature_verifies(signature, "whsec_someone_else", &hit.body), "the check itself must discriminate");
    let mut tampered = hit.body.clone();
    tampered.push(b' ');
    assert!(!signature_verifies(signature, &secret, &tampered), "a changed body must not verify");

    let listed = deliveries(&h, &webhook).await;
    assert_eq!(listed.len(), 1, "one delivery recorded: {listed:?}");
    let delivery = &listed[0];
    assert_eq!(delivery["status"], "succeeded", "{delivery}");
    assert_eq!(delivery["status_code"], 200, "{delivery}");
    assert_eq!(delivery["error"], Value::Null, "{delivery}");
    assert_eq!(delivery["event_type"], "email.processed", "{delivery}");
    assert_eq!(delivery["event_id"], event["id"], "{delivery}");
    assert_eq!(delivery["attempt"], 1, "{delivery}");
    assert!(delivery["duration_ms"].is_u64(), "{delivery}");
    assert_eq!(hit.header("x-kobana-delivery"), delivery["id"].as_str().unwrap_or(""), "the delivery id is sent");

    // The demo webhook points at a host that does not resolve here: its
    // attempt is recorded as failed, and did not keep the job from finishing.
    let demo = deliveries(&h, "whk_demo").await;
    let attempt = demo
        .iter()
        .find(|d| d["event_id"] == event["id"])
        .unwrap_or_else(|| panic!("the demo webhook's attempt is recorded: {demo:?}"));
    assert_eq!(attempt["status"], "failed", "{attempt}");
    assert_eq!(attempt["status_code"], Value::Null, "{attempt}");
    assert!(attempt["error"].as_str().is_some_and(|e| !e.is_empty()), "{attempt}");
}

#[tokio::test]
async fn reprocessing_a_broken_line_fails_the_email_naming_field_2s_check_digit_and_sends_email_failed() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (webhook, secret) = register_webhook(&h, &receiver.url()).await;

    let job_id = reprocess(&h, "eml_broken_line").await;
    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Succeeded), "the job ran; the e-mail failed");

    let email = get(&h, "/emails/eml_broken_line").await["data"].clone();
    assert_eq!(email["status"], "failed", "{email}");
    assert_eq!(email["extracted"], Value::Null, "{email}");
    let error = email["error"].as_str().unwrap_or_else(|| panic!("no error: {email}"));
    assert!(
        error.contains("field 2") && error.contains("check digit"),
        "the error names field 2's check digit: {error}"
    );

    let job = get(&h, &format!("/jobs/{job_id}")).await["data"].clone();
    assert_eq!(job["status"], "succeeded", "{job}");
    assert_eq!(job["result"]["status"], "failed", "{job}");
    assert_eq!(job["result"]["error"], email["error"], "{job}");

    let hits = receiver.hits();
    assert_eq!(hits.len(), 1, "exactly one request: {hits:?}");
    assert_eq!(hits[0].header("x-kobana-event"), "email.failed");
    let event = hits[0].json();
    assert_eq!(event["type"], "email.failed", "{event}");
    assert_eq!(event["data"]["email_id"], "eml_broken_line", "{event}");
    assert_eq!(event["data"]["status"], "failed", "{event}");
    assert_eq!(event["data"]["error"], email["error"], "{event}");
    assert!(signature_verifies(hits[0].header("x-kobana-signature"), &secret, &hits[0].body));

    let listed = deliveries(&h, &webhook).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!((&listed[0]["event_type"], &listed[0]["status"]), (&json!("email.failed"), &json!("succeeded")));
}

#[tokio::test]
async fn a_webhook_not_subscribed_to_an_event_or_disabled_gets_nothing() {
    let h = Harness::new();
    let subscribed = Receiver::start().await;
    let other = Receiver::start().await;
    register_webhook(&h, &subscribed.url()).await;
    let resp = send(h.api("PUT", "/webhooks").json(&json!({"url": other.url(), "events": ["email.rejected"]}))).await;
    assert_eq!(resp.status, 201, "{}", resp.json());
    let disabled = Receiver::start().await;
    let resp = send(h.api("PUT", "/webhooks").json(&json!({"url": disabled.url(), "status": "disabled"}))).await;
    assert_eq!(resp.status, 201, "{}", resp.json());

    let job_id = reprocess(&h, "eml_energy_nov").await;
    run_job(&h, &job_id).await;
    assert_eq!(subscribed.events("email.processed").len(), 1);
    assert!(other.hits().is_empty(), "a webhook subscribed to email.rejected only: {:?}", other.hits());
    assert!(disabled.hits().is_empty(), "a disabled webhook: {:?}", disabled.hits());
}

#[tokio::test]
async fn the_local_poller_finishes_a_queued_job_on_its_own() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    register_webhook(&h, &receiver.url()).await;
    let job_id = reprocess(&h, "eml_energy_nov").await;

    let poller = tokio::spawn(inbox::worker::poll(
        std::sync::Arc::clone(&h.app().await.runner),
        Duration::from_millis(50),
        Duration::ZERO,
    ));
    let job = wait_final(&h, &job_id).await;
    poller.abort();

    assert_eq!(job["status"], "succeeded", "{job}");
    assert_eq!(job["attempts"], 1, "{job}");
    assert_eq!(get(&h, "/emails/eml_energy_nov").await["data"]["status"], "processed");
    assert_eq!(receiver.events("email.processed").len(), 1, "{:?}", receiver.hits());
}

#[tokio::test]
async fn resending_a_delivery_sends_the_same_event_again_as_a_new_attempt() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (webhook, secret) = register_webhook(&h, &receiver.url()).await;
    let job_id = reprocess(&h, "eml_energy_nov").await;
    run_job(&h, &job_id).await;
    let first = deliveries(&h, &webhook).await;
    assert_eq!(first.len(), 1, "{first:?}");
    let first_id = id_of(&first[0]);

    let resp = send(h.api("POST", &format!("/webhook_deliveries/{first_id}/resend"))).await;
    let job = accepted_job(&resp, "delivery.resend");
    assert_eq!(job["subject_id"], json!(first_id));
    assert_eq!(run_job(&h, &id_of(&job)).await, Ran::Finished(JobStatus::Succeeded));

    let hits = receiver.hits();
    assert_eq!(hits.len(), 2, "the original and the resend: {hits:?}");
    assert_eq!(hits[1].json(), hits[0].json(), "the same event, same id");
    assert!(signature_verifies(hits[1].header("x-kobana-signature"), &secret, &hits[1].body));
    let listed = deliveries(&h, &webhook).await;
    assert_eq!(listed.len(), 2, "a new attempt is recorded: {listed:?}");
    let resent = listed.iter().find(|d| d["id"] != json!(first_id)).unwrap_or_else(|| panic!("{listed:?}"));
    assert_eq!(resent["attempt"], 2, "{resent}");
    assert_eq!(resent["resend_of"], json!(first_id), "{resent}");
    assert_eq!(resent["event_id"], first[0]["event_id"], "{resent}");
    assert_eq!(resent["status"], "succeeded", "{resent}");
    assert_eq!(hits[1].header("x-kobana-delivery"), resent["id"].as_str().unwrap_or(""));
    assert!(listed.iter().any(|d| d == &first[0]), "the first attempt is kept as it was: {listed:?}");
}

// ---------------------------------------------------------------------------
// 2. The same through MCP
// ---------------------------------------------------------------------------

fn tool_call<'a>(h: &'a Harness, id: i64, name: &str, params: Value) -> Req<'a> {
    let mut params = params;
    params["name"] = json!(name);
    h.stateless_with(json!(id), "tools/call", params, envelope_with(json!({"elicitation": {}})))
}

/// The JSON payload of a successful tool result.
#[track_caller]
fn tool_payload(resp: &Resp, id: i64) -> Value {
    let result = resp.assert_stateless_ok(json!(id));
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text content: {result}"));
    common::third_party::check_text(text, &result["structuredContent"]);
    result["structuredContent"].clone()
}

#[tokio::test]
async fn emails_reprocess_confirmed_through_mcp_answers_at_once_and_jobs_get_later_shows_it_succeeded() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (_, secret) = register_webhook(&h, &receiver.url()).await;
    let args = json!({"id": "eml_energy_nov"});

    let resp = send(tool_call(&h, 1, "emails_reprocess", json!({"arguments": args}))).await;
    let body = resp.json();
    assert_eq!(resp.status, 200, "{body}");
    let result = resp.result();
    assert_eq!(result["resultType"], "input_required", "the user is asked first: {result}");
    assert_eq!(result["inputRequests"]["confirm"]["params"]["mode"], "form", "{result}");
    let state = result["requestState"].as_str().unwrap_or_else(|| panic!("no requestState: {result}")).to_owned();
    assert_eq!(get(&h, "/emails/eml_energy_nov").await["data"]["status"], "received", "nothing ran before confirming");

    let accept = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let resp = send(tool_call(
        &h,
        2,
        "emails_reprocess",
        json!({"arguments": args, "requestState": state, "inputResponses": accept}),
    ))
    .await;
    let payload = tool_payload(&resp, 2);
    let job = payload["data"]["job"].clone();
    assert_eq!(job["status"], "queued", "answered at once, before the job ran: {payload}");
    assert_eq!(job["kind"], "email.reprocess", "{payload}");
    assert_eq!(job["subject_id"], "eml_energy_nov", "{payload}");
    let job_id = id_of(&job);
    assert!(receiver.hits().is_empty(), "nothing delivered before the job runs");

    let resp = send(tool_call(&h, 3, "jobs_get", json!({"arguments": {"id": job_id}}))).await;
    assert_eq!(tool_payload(&resp, 3)["data"]["status"], "queued");

    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Succeeded));

    let resp = send(tool_call(&h, 4, "jobs_get", json!({"arguments": {"id": job_id}}))).await;
    let shown = tool_payload(&resp, 4)["data"].clone();
    assert_eq!(shown["status"], "succeeded", "{shown}");
    assert_eq!(shown["attempts"], 1, "{shown}");
    assert_eq!(shown["result"]["extracted"]["amount_cents"], 48_750, "{shown}");
    assert_eq!(shown, get(&h, &format!("/jobs/{job_id}")).await["data"], "jobs_get shows what GET /jobs shows");

    let resp = send(tool_call(&h, 5, "emails_get", json!({"arguments": {"id": "eml_energy_nov"}}))).await;
    let email = tool_payload(&resp, 5)["data"].clone();
    assert_eq!(email["status"], "processed", "{email}");
    assert_eq!(email["extracted"]["due_date"], "2026-12-15", "{email}");

    let events = receiver.events("email.processed");
    assert_eq!(events.len(), 1, "{:?}", receiver.hits());
    assert!(signature_verifies(events[0].header("x-kobana-signature"), &secret, &events[0].body));
}

// ---------------------------------------------------------------------------
// 3. The stream worker and duplicate deliveries
// ---------------------------------------------------------------------------

/// A DynamoDB stream record as Lambda delivers it, for the item `sk` of `ws_main`.
pub(crate) fn stream_record(event_name: &str, sequence: &str, sk: &str, id: &str) -> Value {
    json!({
        "eventID": sequence,
        "eventName": event_name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": {
            "ApproximateCreationDateTime": 1_700_000_000,
            "Keys": {"pk": {"S": "T#org_demo#W#ws_main"}, "sk": {"S": sk}},
            "NewImage": {
                "pk": {"S": "T#org_demo#W#ws_main"},
                "sk": {"S": sk},
                "id": {"S": id},
                "org_id": {"S": "org_demo"},
                "workspace_id": {"S": "ws_main"},
                "status": {"S": "queued"}
            },
            "SequenceNumber": sequence,
            "SizeBytes": 10,
            "StreamViewType": "NEW_IMAGE"
        },
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/inbox/stream/2026-01-01T00:00:00.000"
    })
}

fn stream_event(records: Vec<Value>) -> aws_lambda_events::event::dynamodb::Event {
    serde_json::from_value(json!({"Records": records})).expect("a stream event")
}

/// Hands a batch to the worker's stream handler; the sequence numbers it asks to get again.
pub(crate) async fn handle_stream(h: &Harness, records: Vec<Value>) -> Vec<String> {
    let app = h.app().await;
    let response = Box::pin(inbox::worker::stream::handle(&app.runner, stream_event(records))).await;
    response.batch_item_failures.into_iter().map(|f| f.item_identifier.unwrap_or_default()).collect()
}

/// Starts `webhook.test` for `webhook`: the queued job's id.
async fn test_webhook(h: &Harness, webhook: &str) -> String {
    let resp = send(h.api("POST", &format!("/webhooks/{webhook}/test"))).await;
    let job = accepted_job(&resp, "webhook.test");
    assert_eq!(job["subject_id"], webhook);
    id_of(&job)
}

#[tokio::test]
async fn a_changed_or_removed_audit_record_is_reported_and_its_expiry_is_not() {
    let h = Harness::new();
    h.app().await;
    let sk = "AUD#aud_20261204120000000_tampered";
    let modified = stream_record("MODIFY", "301", sk, "aud_20261204120000000_tampered");
    let removed = stream_record("REMOVE", "302", sk, "aud_20261204120000000_tampered");
    let logs = crate::common::capture_logs(async {
        assert!(handle_stream(&h, vec![modified, removed]).await.is_empty(), "nothing to deliver again");
    })
    .await;
    assert_eq!(logs.matches("an audit record was changed or removed").count(), 2, "{logs}");
    assert!(logs.contains(sk) && logs.contains("MODIFY") && logs.contains("REMOVE"), "{logs}");

    let mut expired = stream_record("REMOVE", "303", sk, "aud_20261204120000000_tampered");
    expired["userIdentity"] = json!({"type": "Service", "principalId": "dynamodb.amazonaws.com"});
    let other = stream_record("MODIFY", "304", "EML#eml_energy_nov", "eml_energy_nov");
    let logs = crate::common::capture_logs(async {
        handle_stream(&h, vec![expired, other]).await;
    })
    .await;
    assert!(!logs.contains("an audit record"), "expiry and other items are not reported: {logs}");
}

#[tokio::test]
async fn a_job_record_delivered_twice_by_the_stream_sends_its_webhook_test_once() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (webhook, secret) = register_webhook(&h, &receiver.url()).await;
    let job_id = test_webhook(&h, &webhook).await;
    let record = stream_record("INSERT", "111", &format!("JOB#{job_id}"), &job_id);

    assert_eq!(handle_stream(&h, vec![record.clone()]).await, Vec::<String>::new(), "no batch item failures");
    assert_eq!(handle_stream(&h, vec![record]).await, Vec::<String>::new(), "the redelivery is no failure either");

    let hits = receiver.hits();
    assert_eq!(hits.len(), 1, "one webhook.test request: {hits:?}");
    assert_eq!(hits[0].header("x-kobana-event"), "webhook.test");
    let event = hits[0].json();
    assert_eq!(event["type"], "webhook.test", "{event}");
    assert_eq!(event["data"]["webhook_id"], json!(webhook), "{event}");
    assert!(signature_verifies(hits[0].header("x-kobana-signature"), &secret, &hits[0].body));

    let listed = deliveries(&h, &webhook).await;
    assert_eq!(listed.len(), 1, "one delivery recorded: {listed:?}");
    assert_eq!((&listed[0]["event_type"], &listed[0]["status"]), (&json!("webhook.test"), &json!("succeeded")));
    let job = get(&h, &format!("/jobs/{job_id}")).await["data"].clone();
    assert_eq!(job["status"], "succeeded", "{job}");
    assert_eq!(job["attempts"], 1, "claimed once: {job}");
    assert_eq!(job["result"]["delivery"]["id"], listed[0]["id"], "{job}");
}

#[tokio::test]
async fn a_job_record_duplicated_inside_one_batch_sends_its_webhook_test_once() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (webhook, _) = register_webhook(&h, &receiver.url()).await;
    let job_id = test_webhook(&h, &webhook).await;
    let sk = format!("JOB#{job_id}");

    let failures = handle_stream(
        &h,
        vec![stream_record("INSERT", "111", &sk, &job_id), stream_record("INSERT", "112", &sk, &job_id)],
    )
    .await;
    assert_eq!(failures, Vec::<String>::new(), "no batch item failures");
    assert_eq!(receiver.events("webhook.test").len(), 1, "{:?}", receiver.hits());
    assert_eq!(deliveries(&h, &webhook).await.len(), 1);
    assert_eq!(get(&h, &format!("/jobs/{job_id}")).await["data"]["attempts"], 1);
}

#[tokio::test]
async fn stream_records_that_are_not_new_jobs_are_ignored() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (webhook, _) = register_webhook(&h, &receiver.url()).await;
    let job_id = test_webhook(&h, &webhook).await;
    let email_before = get(&h, "/emails/eml_energy_nov").await;

    let failures = handle_stream(
        &h,
        vec![
            // A new e-mail item, not a job.
            stream_record("INSERT", "201", "EML#eml_energy_nov", "eml_energy_nov"),
            // A job item that changed or went away: only new job items run.
            stream_record("MODIFY", "202", &format!("JOB#{job_id}"), &job_id),
            stream_record("REMOVE", "203", &format!("JOB#{job_id}"), &job_id),
        ],
    )
    .await;
    assert_eq!(failures, Vec::<String>::new());
    assert!(receiver.hits().is_empty(), "nothing sent: {:?}", receiver.hits());
    assert_eq!(get(&h, "/emails/eml_energy_nov").await, email_before, "the e-mail is untouched");
    let job = get(&h, &format!("/jobs/{job_id}")).await["data"].clone();
    assert_eq!((&job["status"], &job["attempts"]), (&json!("queued"), &json!(0)), "the job was not run: {job}");

    // The same job's INSERT does run it: the records above were ignored, not broken.
    let failures = handle_stream(&h, vec![stream_record("INSERT", "204", &format!("JOB#{job_id}"), &job_id)]).await;
    assert_eq!(failures, Vec::<String>::new());
    assert_eq!(receiver.events("webhook.test").len(), 1);
}

// ---------------------------------------------------------------------------
// 4. Ingestion
// ---------------------------------------------------------------------------

/// A `POST /inboxes/{inbox}/emails` as the organization's mail pipeline.
pub(crate) fn ingest<'a>(h: &'a Harness, inbox: &str, body: &Value) -> Req<'a> {
    let token = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    h.api("POST", &format!("/inboxes/{inbox}/emails")).token(&token).header("x-workspace-id", "ws_main").json(body)
}

pub(crate) fn mail(from: &str) -> Value {
    json!({
        "from": from,
        "to": "contas@demo.inbox.kobana.com.br",
        "subject": "Conta de energia - dezembro/2026",
        "text": format!("Segue a sua conta de energia.\n{}\n", inbox::seed::LINE_ENERGY),
        "received_at": "2026-11-28T10:00:00Z",
        "attachments": [{"name": "boleto.pdf", "size": 1000, "content_type": "application/pdf"}]
    })
}

/// The ingested e-mail's id and status from a 202 answer, and its job.
#[track_caller]
pub(crate) fn ingested(resp: &Resp) -> (String, String, String) {
    let body = resp.json();
    let job = accepted_job(resp, "email.process");
    let email = &body["data"]["email"];
    let id = email["id"].as_str().unwrap_or_else(|| panic!("no e-mail id: {body}")).to_owned();
    assert!(id.starts_with("eml_"), "{body}");
    assert_eq!(job["subject_id"], json!(id), "{body}");
    let status = email["status"].as_str().unwrap_or_else(|| panic!("no e-mail status: {body}")).to_owned();
    (id, status, id_of(&job))
}

#[tokio::test]
async fn the_mail_pipeline_ingests_an_email_from_an_allowed_sender_and_its_job_processes_it() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    register_webhook(&h, &receiver.url()).await;

    let resp = send(ingest(&h, "inb_bills", &mail("Contas@Energia.example.com"))).await;
    let (email_id, status, job_id) = ingested(&resp);
    assert_eq!(status, "received", "@energia.example.com is allowed");

    let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
    assert_eq!(stored["status"], "received", "{stored}");
    assert_eq!(stored["inbox_id"], "inb_bills", "{stored}");
    assert_eq!(stored["from"], "contas@energia.example.com", "{stored}");
    assert_eq!(stored["subject"], "Conta de energia - dezembro/2026", "{stored}");
    assert_eq!(stored["error"], Value::Null, "{stored}");

    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Succeeded));
    let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
    assert_eq!(stored["status"], "processed", "{stored}");
    assert_eq!(stored["extracted"]["amount_cents"], 48_750, "{stored}");
    assert_eq!(stored["extracted"]["due_date"], "2026-12-15", "{stored}");
    let events = receiver.events("email.processed");
    assert_eq!(events.len(), 1, "{:?}", receiver.hits());
    assert_eq!(events[0].json()["data"]["email_id"], json!(email_id));
}

#[tokio::test]
async fn a_job_of_a_workspace_archived_after_it_was_queued_is_ended_without_running() {
    // Archived ids read fresh by the API too: no container cache in between.
    let h = Harness::with_config(|c| c.membership_cache = Duration::ZERO);
    let receiver = Receiver::start().await;
    register_webhook(&h, &receiver.url()).await;
    let resp = send(ingest(&h, "inb_bills", &mail("contas@energia.example.com"))).await;
    let (email_id, status, job_id) = ingested(&resp);
    assert_eq!(status, "received");
    // The runner has not read the workspace yet (a warm one sees the archive
    // within `worker::SHARDS_CACHE_SECS`, the tenancy caches' lifetime).

    let boss = h.token_for("usr_admin", "org_demo", "org:admin");
    let resp = send(h.api("POST", "/org/workspaces/ws_main/archive").token(&boss)).await;
    assert_eq!((resp.status, resp.json()["data"]["status"].as_str()), (200, Some("archived")), "{}", resp.json());

    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Failed));
    let job = get(&h, &format!("/jobs/{job_id}")).await["data"].clone();
    assert_eq!((job["status"].as_str(), job["error_kind"].as_str()), (Some("failed"), Some("operation")), "{job}");
    assert!(job["error"].as_str().is_some_and(|e| e.contains("archived")), "the job says why: {job}");
    let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
    assert_eq!(stored["status"], "received", "not processed: {stored}");
    assert_eq!(stored["extracted"], Value::Null, "{stored}");
    assert!(receiver.hits().is_empty(), "nothing was sent: {:?}", receiver.hits());
    assert_eq!(run_job(&h, &job_id).await, Ran::Skipped, "an ended job is not run again");
}

#[tokio::test]
async fn an_email_from_a_sender_not_listed_is_rejected_and_its_job_sends_email_rejected() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (_, secret) = register_webhook(&h, &receiver.url()).await;

    let resp = send(ingest(&h, "inb_bills", &mail("billing@unknown-vendor.example.org"))).await;
    let (email_id, status, job_id) = ingested(&resp);
    assert_eq!(status, "rejected");

    let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
    assert_eq!(stored["status"], "rejected", "{stored}");
    let error = stored["error"].as_str().unwrap_or_else(|| panic!("a rejected e-mail says why: {stored}"));
    assert!(error.contains("billing@unknown-vendor.example.org"), "the error names the sender: {error}");

    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Succeeded));
    let events = receiver.events("email.rejected");
    assert_eq!(events.len(), 1, "{:?}", receiver.hits());
    assert_eq!(receiver.hits().len(), 1, "only email.rejected: {:?}", receiver.hits());
    let event = events[0].json();
    assert_eq!(event["type"], "email.rejected", "{event}");
    assert_eq!(event["data"]["email_id"], json!(email_id), "{event}");
    assert_eq!(event["data"]["status"], "rejected", "{event}");
    assert!(signature_verifies(events[0].header("x-kobana-signature"), &secret, &events[0].body));

    let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
    assert_eq!(stored["status"], "rejected", "a rejected e-mail is not extracted: {stored}");
    assert_eq!(stored["extracted"], Value::Null, "{stored}");
}

#[tokio::test]
async fn an_inbox_open_to_anyone_accepts_any_sender() {
    let h = Harness::new();
    let resp = send(ingest(&h, "inb_receipts", &mail("someone@anywhere.example.net"))).await;
    let (_, status, _) = ingested(&resp);
    assert_eq!(status, "received");
}

#[tokio::test]
async fn ingestion_needs_the_emails_ingest_scope() {
    let h = Harness::new();
    let before = get(&h, "/emails?limit=100").await;
    let person = h.token_for("usr_admin", "org_demo", "emails:read emails:write inboxes:read inboxes:write");
    let resp = send(ingest(&h, "inb_bills", &mail("contas@energia.example.com")).token(&person)).await;
    let body = resp.json();
    assert_eq!(resp.status, 403, "{body}");
    assert_eq!(body["error"]["code"], "insufficient_scope", "{body}");
    let challenge = resp.header("www-authenticate").unwrap_or_else(|| panic!("no challenge: {body}"));
    assert!(challenge.contains("insufficient_scope") && challenge.contains("emails:ingest"), "{challenge}");
    assert_eq!(get(&h, "/emails?limit=100").await, before, "nothing was stored");
}

#[tokio::test]
async fn ingestion_refuses_bad_bodies_and_stores_nothing() {
    let h = Harness::new();
    let before = get(&h, "/emails?limit=100").await;
    let mut unknown_field = mail("contas@energia.example.com");
    unknown_field["priority"] = json!("high");
    let mut bad_from = mail("contas@energia.example.com");
    bad_from["from"] = json!("not an address");
    let mut bad_received_at = mail("contas@energia.example.com");
    bad_received_at["received_at"] = json!("yesterday");
    let mut date_only = mail("contas@energia.example.com");
    date_only["received_at"] = json!("2026-11-28");
    // Valid RFC 3339 whose UTC time is in year 10000.
    let mut past_9999 = mail("contas@energia.example.com");
    past_9999["received_at"] = json!("9999-12-31T23:59:59-23:59");
    let mut missing_text = mail("contas@energia.example.com");
    if let Some(fields) = missing_text.as_object_mut() {
        fields.remove("text");
    }
    let cases = [
        ("unknown field", unknown_field, 400, "invalid_body"),
        ("missing text", missing_text, 400, "invalid_body"),
        ("bad from", bad_from, 422, "validation_failed"),
        ("bad received_at", bad_received_at, 422, "validation_failed"),
        ("date-only received_at", date_only, 422, "validation_failed"),
        ("received_at past year 9999 in UTC", past_9999, 422, "validation_failed"),
    ];
    for (what, body, status, code) in cases {
        let resp = send(ingest(&h, "inb_bills", &body)).await;
        let answer = resp.json();
        assert_eq!((resp.status, &answer["error"]["code"]), (status, &json!(code)), "{what}: {answer}");
    }
    let resp = send(ingest(&h, "inb_bills", &json!({})).text("{not json")).await;
    assert_eq!(resp.status, 400, "{}", String::from_utf8_lossy(&resp.body));
    assert_eq!(get(&h, "/emails?limit=100").await, before, "nothing was stored");
}

#[tokio::test]
async fn ingestion_into_an_inbox_of_another_workspace_or_organization_is_404() {
    let h = Harness::new();
    for inbox in ["inb_ops", "inb_other", "inb_missing"] {
        let resp = send(ingest(&h, inbox, &mail("contas@energia.example.com"))).await;
        let body = resp.json();
        assert_eq!((resp.status, &body["error"]["code"]), (404, &json!("not_found")), "{inbox}: {body}");
    }
}

#[tokio::test]
async fn the_mail_pipeline_names_its_workspace_among_its_organizations_workspaces() {
    let h = Harness::new();
    let body = mail("alerts@monitor.example.com");
    let resp = send(ingest(&h, "inb_ops", &body).header("x-workspace-id", "ws_ops")).await;
    let (email_id, status, _) = ingested(&resp);
    assert_eq!(status, "received", "inb_ops accepts anyone");
    let resp = send(h.api("GET", &format!("/emails/{email_id}")).header("x-workspace-id", "ws_ops")).await;
    assert_eq!((resp.status, &resp.json()["data"]["inbox_id"]), (200, &json!("inb_ops")), "{}", resp.json());
    let (status, _) = rest(&h, "GET", &format!("/emails/{email_id}")).await;
    assert_eq!(status, 404, "stored in ws_ops, not ws_main");

    let resp = send(ingest(&h, "inb_bills", &body).without("x-workspace-id")).await;
    let answer = resp.json();
    assert_eq!((resp.status, &answer["error"]["code"]), (400, &json!("workspace_required")), "{answer}");
    let resp = send(ingest(&h, "inb_other", &body).header("x-workspace-id", "ws_other")).await;
    let answer = resp.json();
    assert_eq!((resp.status, &answer["error"]["code"]), (400, &json!("workspace_not_found")), "{answer}");
    let outsider = h.token_for("svc_mailpipe", "org_other", "emails:ingest");
    let resp = send(ingest(&h, "inb_bills", &body).token(&outsider)).await;
    let answer = resp.json();
    assert_eq!((resp.status, &answer["error"]["code"]), (400, &json!("workspace_not_found")), "{answer}");
}

// ---------------------------------------------------------------------------
// 5. Outbound safety (SSRF)
// ---------------------------------------------------------------------------

#[tokio::test]
async fn every_refused_address_class_is_refused_as_a_literal_and_as_a_resolved_name() {
    for ip in REFUSED {
        let lookup = FakeLookup::fixed(&[ip]);
        let client = outbound(Arc::clone(&lookup), false);
        assert_refused(&post(&client, &literal_url(ip)).await, &format!("literal {ip}"));
        assert_refused(&post(&client, "https://hooks.customer.example/hook").await, &format!("name resolving to {ip}"));
        assert_eq!(lookup.calls(), 1, "{ip}: the name was resolved once, by the checking resolver");
    }
}

#[tokio::test]
async fn a_refused_delivery_says_so_without_what_the_name_resolved_to() {
    for answer in [&["10.1.2.3"][..], &["127.0.0.1"], &[]] {
        let client = outbound(FakeLookup::fixed(answer), false);
        let attempt = post(&client, "https://vm.internal.example/hook").await;
        let error = attempt.error.unwrap_or_else(|| panic!("{answer:?} must be refused"));
        assert_eq!(error, inbox::outbound::REFUSED_NAME, "{answer:?}");
        for detail in ["10.1.2.3", "127.0.0.1", "vm.internal", "resolve to a refused"] {
            assert!(!error.contains(detail), "{answer:?}: {error}");
        }
    }
}

#[tokio::test]
async fn other_spellings_of_internal_addresses_are_refused() {
    let client = outbound(FakeLookup::fixed(&["93.184.216.34"]), false);
    for url in [
        "https://2130706433/hook",
        "https://0x7f.0.0.1/hook",
        "https://0177.0.0.1/hook",
        "https://127.1/hook",
        "https://[::ffff:7f00:1]/hook",
        "https://[0:0:0:0:0:ffff:a9fe:a9fe]/hook",
        "https://[::]/hook",
        "https://[fd00:ec2::254]/hook",
    ] {
        let attempt = post(&client, url).await;
        assert_eq!(attempt.status_code, None, "{url}: {attempt:?}");
        assert!(attempt.error.as_deref().is_some_and(|e| e.contains("refused")), "{url}: {attempt:?}");
    }
}

#[tokio::test]
async fn localhost_through_the_system_resolver_is_refused_without_any_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let client = Outbound::new(false).expect("outbound client");
    for url in [
        format!("https://localhost:{port}/hook"),
        format!("https://LocalHost:{port}/hook"),
        format!("https://localhost.:{port}/hook"),
        format!("https://api.localhost:{port}/hook"),
    ] {
        assert_refused(&client.post(&url, "whsec_test", "webhook.test", "dlv_test", BODY).await, &url);
    }
    assert_eq!(connections_made(&listener).await, 0);
}

#[tokio::test]
async fn a_receiver_answering_an_error_is_a_failed_attempt_with_its_status_code() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    let server = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            read_request(&mut stream).await;
            let answer = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\nConnection: close\r\n\r\noops";
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    });
    let client = outbound(FakeLookup::fixed(&["127.0.0.1"]), true);
    let attempt = post(&client, &url).await;
    server.abort();
    assert_eq!(attempt.status_code, Some(500), "{attempt:?}");
    assert!(attempt.error.as_deref().is_some_and(|e| e.contains("500")), "{attempt:?}");
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_without_any_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    for answer in [&["127.0.0.1"][..], &["::ffff:127.0.0.1"], &["127.0.0.1", "::1"]] {
        let client = outbound(FakeLookup::fixed(answer), false);
        for url in [format!("https://hooks.customer.example:{port}/hook"), format!("http://localhost:{port}/hook")] {
            assert_refused(&post(&client, &url).await, &format!("{url} resolving to {answer:?}"));
        }
    }
    assert_eq!(connections_made(&listener).await, 0, "no connection reached the loopback listener");
}

#[tokio::test]
async fn a_resolver_answering_public_then_private_is_refused_as_a_whole_without_any_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let url = format!("https://hooks.customer.example:{port}/hook");
    for answer in
        [&["93.184.216.34", "127.0.0.1"][..], &["8.8.8.8", "10.0.0.1", "127.0.0.1"], &["2606:2800:220:1::1", "::1"]]
    {
        let lookup = FakeLookup::fixed(answer);
        let client = outbound(Arc::clone(&lookup), false);
        let attempt = post(&client, &url).await;
        assert_refused(&attempt, &format!("{answer:?}"));
        assert_eq!(lookup.calls(), 1);
    }
    assert_eq!(connections_made(&listener).await, 0, "no connection to either address");
}

#[tokio::test]
async fn the_connection_goes_to_the_checked_address_and_the_name_is_resolved_once() {
    // Positive control for the tests above: with loopback allowed, the fake
    // resolver's answer is where the client connects (no second, system
    // resolution of the made-up name), and a later, different answer is not
    // asked for within the attempt.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let lookup = FakeLookup::new(&[&["127.0.0.1"], &["10.0.0.1"]]);
    let client = outbound(Arc::clone(&lookup), true);
    let attempt = post(&client, &format!("https://hooks.customer.example:{port}/hook")).await;
    assert_eq!(attempt.status_code, None, "the listener speaks no TLS: {attempt:?}");
    assert!(attempt.error.is_some(), "{attempt:?}");
    assert!(!attempt.error.as_deref().unwrap_or("").contains("refused"), "loopback is allowed here: {attempt:?}");
    assert_eq!(lookup.calls(), 1, "one resolution per attempt");
    assert!(connections_made(&listener).await >= 1, "the client connected to the checked loopback address");
}

#[tokio::test]
async fn plain_http_is_refused_unless_loopback_is_allowed_and_the_host_is_loopback() {
    let receiver = Receiver::start().await;
    let port = receiver.addr.port();
    let strict = outbound(FakeLookup::fixed(&["93.184.216.34"]), false);
    let dev = outbound(FakeLookup::fixed(&["93.184.216.34"]), true);

    assert_refused(&post(&strict, &format!("http://127.0.0.1:{port}/hook")).await, "http to loopback, strict");
    assert_refused(&post(&strict, "http://hooks.customer.example/hook").await, "http to a public name, strict");
    assert_refused(&post(&dev, "http://hooks.customer.example/hook").await, "http to a public name, dev flag");
    assert_refused(&post(&dev, "http://93.184.216.34/hook").await, "http to a public address, dev flag");
    assert_refused(&post(&dev, "ftp://127.0.0.1/hook").await, "another scheme");
    assert!(receiver.hits().is_empty(), "{:?}", receiver.hits());

    let parse = |u: &str| url::Url::parse(u).expect("url");
    assert!(strict.check_url(&parse("http://127.0.0.1/hook")).is_err());
    assert!(strict.check_url(&parse("https://hooks.customer.example/hook")).is_ok());
    assert!(dev.check_url(&parse("http://hooks.customer.example/hook")).is_err());
    assert!(dev.check_url(&parse("http://127.0.0.1/hook")).is_ok());
    assert!(dev.check_url(&parse("https://10.0.0.1/hook")).is_err(), "the flag allows loopback only");

    let attempt = post(&dev, &format!("http://127.0.0.1:{port}/hook")).await;
    assert_eq!((attempt.status_code, attempt.error.as_deref()), (Some(200), None), "allowed: {attempt:?}");
    let hits = receiver.hits();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].body, BODY.as_bytes());
    assert!(signature_verifies(hits[0].header("x-kobana-signature"), "whsec_test", &hits[0].body));
}

#[tokio::test]
async fn a_redirect_is_recorded_as_failed_and_not_followed() {
    let target = TcpListener::bind("127.0.0.1:0").await.expect("bind target");
    let target_url = format!("http://{}/stolen", target.local_addr().expect("addr"));
    let redirector = TcpListener::bind("127.0.0.1:0").await.expect("bind redirector");
    let redirector_url = format!("http://{}/hook", redirector.local_addr().expect("addr"));
    let answer =
        format!("HTTP/1.1 302 Found\r\nLocation: {target_url}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    let server = tokio::spawn(async move {
        while let Ok((mut stream, _)) = redirector.accept().await {
            read_request(&mut stream).await;
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    });

    let client = outbound(FakeLookup::fixed(&["127.0.0.1"]), true);
    let attempt = post(&client, &redirector_url).await;
    server.abort();
    assert_eq!(attempt.status_code, Some(302), "{attempt:?}");
    let error = attempt.error.as_deref().unwrap_or_else(|| panic!("a redirect is a failure: {attempt:?}"));
    assert!(error.contains("302") && error.contains("redirect"), "{error}");
    assert_eq!(connections_made(&target).await, 0, "the redirect target got nothing");
}

#[tokio::test]
async fn a_redirect_answered_to_a_real_delivery_is_a_failed_delivery() {
    let h = Harness::new();
    let target = Receiver::start().await;
    let redirector = TcpListener::bind("127.0.0.1:0").await.expect("bind redirector");
    let redirector_url = format!("http://{}/hook", redirector.local_addr().expect("addr"));
    let answer =
        format!("HTTP/1.1 301 Moved\r\nLocation: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", target.url());
    let server = tokio::spawn(async move {
        while let Ok((mut stream, _)) = redirector.accept().await {
            read_request(&mut stream).await;
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    });
    let (webhook, _) = register_webhook(&h, &redirector_url).await;
    let job_id = test_webhook(&h, &webhook).await;
    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Succeeded), "the job ran; the delivery failed");
    server.abort();

    let listed = deliveries(&h, &webhook).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["status"], "failed", "{listed:?}");
    assert_eq!(listed[0]["status_code"], 301, "{listed:?}");
    assert!(listed[0]["error"].as_str().is_some_and(|e| e.contains("redirect")), "{listed:?}");
    assert!(target.hits().is_empty(), "the redirect target got nothing: {:?}", target.hits());
}

#[tokio::test]
async fn a_receiver_that_never_answers_is_cut_off() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            read_request(&mut stream).await;
            held.push(stream); // never answer, never close
        }
    });
    let client = outbound(FakeLookup::fixed(&["127.0.0.1"]), true);
    let attempt = tokio::time::timeout(Duration::from_secs(30), post(&client, &url))
        .await
        .expect("the client's own timeout must end the attempt");
    server.abort();
    assert_eq!(attempt.status_code, None, "{attempt:?}");
    let error = attempt.error.as_deref().unwrap_or_else(|| panic!("a hang is a failure: {attempt:?}"));
    assert!(error.contains("did not answer in time"), "{error}");
}

#[tokio::test]
async fn a_receiver_streaming_a_huge_body_is_cut_off_and_the_attempt_completes() {
    const ANNOUNCED: usize = 50_000_000;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    let (written_tx, written_rx) = tokio::sync::oneshot::channel::<usize>();
    let server = tokio::spawn(async move {
        let Ok((mut stream, _)) = listener.accept().await else { return };
        read_request(&mut stream).await;
        let head =
            format!("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {ANNOUNCED}\r\n\r\n");
        let mut written = 0;
        if stream.write_all(head.as_bytes()).await.is_ok() {
            let chunk = vec![b'x'; 64 * 1024];
            while written < ANNOUNCED {
                let n = chunk.len().min(ANNOUNCED - written);
                if stream.write_all(&chunk[..n]).await.is_err() {
                    break;
                }
                written += n;
            }
        }
        let _ = written_tx.send(written);
    });
    let client = outbound(FakeLookup::fixed(&["127.0.0.1"]), true);
    let attempt = tokio::time::timeout(Duration::from_secs(30), post(&client, &url))
        .await
        .expect("the attempt must complete without reading the whole body");
    assert_eq!(attempt.status_code, Some(200), "{attempt:?}");
    assert_eq!(attempt.error, None, "{attempt:?}");
    let written =
        tokio::time::timeout(Duration::from_secs(30), written_rx).await.expect("the server stops").unwrap_or(ANNOUNCED);
    server.abort();
    assert!(written < ANNOUNCED, "the client stopped reading and closed: the server could write only {written} bytes");
}

#[test]
fn is_public_tells_routable_addresses_from_internal_ones() {
    for ip in REFUSED.iter().chain(&["192.0.2.1", "198.18.0.1", "255.255.255.255", "fd00::1", "ff02::1", "::"]) {
        let addr: IpAddr = ip.parse().expect("address");
        assert!(!inbox::outbound::addresses::is_public(addr), "{ip} must not be public");
    }
    for ip in
        ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:2800:220:1::1", "::ffff:8.8.8.8", "172.32.0.1", "100.128.0.1"]
    {
        let addr: IpAddr = ip.parse().expect("address");
        assert!(inbox::outbound::addresses::is_public(addr), "{ip} is public");
    }
}

// ---------------------------------------------------------------------------
// 6. Lifecycle edges
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_job_whose_email_was_deleted_ends_failed_with_a_readable_error() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    register_webhook(&h, &receiver.url()).await;
    let job_id = reprocess(&h, "eml_energy_nov").await;
    let (status, body) = rest(&h, "DELETE", "/emails/eml_energy_nov").await;
    assert_eq!(status, 200, "{body}");

    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Failed));
    let job = get(&h, &format!("/jobs/{job_id}")).await["data"].clone();
    assert_eq!(job["status"], "failed", "{job}");
    assert_eq!(job["attempts"], 1, "a permanent failure is not retried: {job}");
    let error = job["error"].as_str().unwrap_or_else(|| panic!("a failed job says why: {job}"));
    assert!(error.contains("e-mail") && error.contains("deleted"), "readable error: {error}");
    assert!(receiver.hits().is_empty(), "no event for a deleted e-mail: {:?}", receiver.hits());
    let (status, _) = rest(&h, "GET", "/emails/eml_energy_nov").await;
    assert_eq!(status, 404, "the e-mail stays deleted");
}

#[tokio::test]
async fn running_a_finished_job_again_is_skipped_and_changes_nothing() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (webhook, _) = register_webhook(&h, &receiver.url()).await;
    let job_id = reprocess(&h, "eml_energy_nov").await;
    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Succeeded));
    let job = get(&h, &format!("/jobs/{job_id}")).await;
    let email = get(&h, "/emails/eml_energy_nov").await;
    let listed = deliveries(&h, &webhook).await;

    assert_eq!(run_job(&h, &job_id).await, Ran::Skipped);
    assert_eq!(get(&h, &format!("/jobs/{job_id}")).await, job, "the job is unchanged");
    assert_eq!(get(&h, "/emails/eml_energy_nov").await, email, "the e-mail is unchanged");
    assert_eq!(deliveries(&h, &webhook).await, listed, "no new delivery");
    assert_eq!(receiver.hits().len(), 1, "no second request: {:?}", receiver.hits());
}

#[tokio::test]
async fn a_running_job_is_left_to_its_runner_until_its_lease_lapses_then_taken_over() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (webhook, _) = register_webhook(&h, &receiver.url()).await;
    let job_id = test_webhook(&h, &webhook).await;
    let app = h.app().await;
    let tenant = ws_main();
    let now = inbox::sys::unix_now();

    // Another runner claimed it and holds a live lease.
    let mut job = app.store.get_job(&tenant, &job_id).await.expect("read job").expect("job exists");
    job.status = JobStatus::Running;
    job.attempts = 1;
    job.lease_until = Some(now + 120);
    app.store.put_job(&tenant, &job).await.expect("write job");
    assert_eq!(run_job(&h, &job_id).await, Ran::Busy, "a live lease is respected");
    assert!(receiver.hits().is_empty(), "{:?}", receiver.hits());
    assert_eq!(get(&h, &format!("/jobs/{job_id}")).await["data"]["status"], "running");

    // That runner died: its lease lapsed, the next delivery takes the job over.
    job.lease_until = Some(now - 1);
    app.store.put_job(&tenant, &job).await.expect("write job");
    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Succeeded));
    let shown = get(&h, &format!("/jobs/{job_id}")).await["data"].clone();
    assert_eq!(shown["status"], "succeeded", "{shown}");
    assert_eq!(shown["attempts"], 2, "the takeover counts as a second attempt: {shown}");
    assert_eq!(receiver.events("webhook.test").len(), 1, "{:?}", receiver.hits());
    assert_eq!(deliveries(&h, &webhook).await.len(), 1);
}

#[tokio::test]
async fn an_unknown_job_id_is_skipped() {
    let h = Harness::new();
    assert_eq!(run_job(&h, "job_does_not_exist_00000000").await, Ran::Skipped);
    let (status, body) = rest(&h, "GET", "/jobs/job_does_not_exist_00000000").await;
    assert_eq!(status, 404, "no job was created by trying to run one: {body}");
}

#[tokio::test]
async fn two_runners_claiming_one_job_at_the_same_moment_run_it_once() {
    // Needs atomic conditional writes: real DynamoDB, or the local server as
    // scripts/db.sh starts it (every action serialised).
    for _ in 0..5 {
        let h = Harness::new();
        let receiver = Receiver::start().await;
        let (webhook, _) = register_webhook(&h, &receiver.url()).await;
        let job_id = test_webhook(&h, &webhook).await;
        let app = h.app().await;
        let runners: Vec<_> = (0..4)
            .map(|_| {
                let (app, id) = (Arc::clone(&app), job_id.clone());
                tokio::spawn(async move { Box::pin(inbox::worker::run(&app.runner, &ws_main(), &id)).await })
            })
            .collect();
        let mut finished = 0;
        for runner in runners {
            match runner.await.expect("runner") {
                Ok(Ran::Finished(_)) => finished += 1,
                Ok(Ran::Skipped | Ran::Busy) => {}
                Ok(Ran::AwaitingInput) => panic!("a webhook test never waits for input"),
                Err(e) => panic!("job not recorded: {e}"),
            }
        }
        assert_eq!(finished, 1, "exactly one runner ran the job");
        assert_eq!(receiver.hits().len(), 1, "one webhook.test request");
        assert_eq!(deliveries(&h, &webhook).await.len(), 1, "one delivery recorded");
    }
}

// ---------------------------------------------------------------------------
// Hostile-review regressions: ingestion authority, disabled webhooks
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_person_token_carrying_emails_ingest_cannot_ingest_without_being_the_registered_pipeline() {
    let h = Harness::new();
    let before = get(&h, "/emails?limit=100").await;
    for (sub, ws) in
        [("usr_admin", "ws_main"), ("usr_admin", "ws_ops"), ("usr_viewer", "ws_main"), ("svc_other", "ws_main")]
    {
        let token = h.token_for(sub, "org_demo", common::ADMIN_SCOPES);
        let req =
            ingest(&h, "inb_bills", &mail("contas@energia.example.com")).token(&token).header("x-workspace-id", ws);
        let resp = send(req).await;
        let body = resp.json();
        assert_eq!((resp.status, &body["error"]["code"]), (400, &json!("workspace_not_found")), "{sub}@{ws}: {body}");
        assert_eq!(body["error"]["details"]["workspaces"], json!([]), "{sub} may ingest nowhere: {body}");
    }
    assert_eq!(get(&h, "/emails?limit=100").await, before, "nothing was stored");
    // The registered pipeline is told where it may ingest.
    let resp =
        send(ingest(&h, "inb_bills", &mail("contas@energia.example.com")).header("x-workspace-id", "ws_x")).await;
    let body = resp.json();
    assert_eq!(body["error"]["details"]["workspaces"], json!(["ws_main", "ws_ops"]), "{body}");
}

#[tokio::test]
async fn testing_or_resending_to_a_disabled_webhook_is_409_webhook_disabled_and_enqueues_nothing() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (webhook, _) = register_webhook(&h, &receiver.url()).await;
    let job_id = reprocess(&h, "eml_energy_nov").await;
    run_job(&h, &job_id).await;
    let delivery = id_of(&deliveries(&h, &webhook).await[0]);
    let resp = send(h.api("PUT", "/webhooks").json(&json!({"url": receiver.url(), "status": "disabled"}))).await;
    assert_eq!(resp.status, 200, "{}", resp.json());

    for path in [format!("/webhooks/{webhook}/test"), format!("/webhook_deliveries/{delivery}/resend")] {
        let (status, body) = rest(&h, "POST", &path).await;
        assert_eq!((status, &body["error"]["code"]), (409, &json!("webhook_disabled")), "{path}: {body}");
    }
    let app = h.app().await;
    let queued = app.store.queued_jobs(10).await.expect("queue");
    assert_eq!(queued.len(), 0, "nothing was enqueued");
    assert_eq!(receiver.hits().len(), 1, "only the first delivery: {:?}", receiver.hits());
}

#[tokio::test]
async fn the_local_runner_leaves_a_job_queued_while_it_is_held_then_runs_it() {
    let h = Harness::new();
    let job_id = reprocess(&h, "eml_energy_nov").await;
    let runner = std::sync::Arc::clone(&h.app().await.runner);
    let held = tokio::spawn(inbox::worker::poll(runner, Duration::from_millis(20), Duration::from_secs(3600)));
    tokio::time::sleep(Duration::from_millis(300)).await;
    held.abort();
    let job = get(&h, &format!("/jobs/{job_id}")).await["data"].clone();
    assert_eq!(job["status"], "queued", "held (younger than the hold): {job}");

    let runner = std::sync::Arc::clone(&h.app().await.runner);
    let poller = tokio::spawn(inbox::worker::poll(runner, Duration::from_millis(20), Duration::ZERO));
    let job = wait_final(&h, &job_id).await;
    poller.abort();
    assert_eq!(job["status"], "succeeded", "{job}");
}

#[tokio::test]
async fn a_webhook_disabled_after_its_test_was_enqueued_receives_nothing_and_the_job_says_why() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let (webhook, _) = register_webhook(&h, &receiver.url()).await;
    let job = test_webhook(&h, &webhook).await;
    let resp = send(h.api("PUT", "/webhooks").json(&json!({"url": receiver.url(), "status": "disabled"}))).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    assert_eq!(run_job(&h, &job).await, Ran::Finished(JobStatus::Failed));
    let finished = get(&h, &format!("/jobs/{job}")).await["data"].clone();
    assert!(finished["error"].as_str().is_some_and(|e| e.contains("disabled")), "{finished}");
    assert!(receiver.hits().is_empty(), "{:?}", receiver.hits());
    assert!(deliveries(&h, &webhook).await.is_empty(), "no delivery recorded");
}
