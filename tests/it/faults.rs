//! DynamoDB in trouble, for real: each test runs its own local DynamoDB
//! (the same moto server `make test` uses, on a port of its own) and stops
//! it mid-run — frozen (SIGSTOP), then killed, then started again empty —
//! under a small bounded load. The server keeps its deployed time bounds
//! (`StoreTimeouts::LAMBDA`, `DEFAULT_REQUEST_TIMEOUT`), and every answer must
//! come within 5 s: 200 for what needs no data, 503 with `Retry-After` for
//! what does, never a 500 and never a hang.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Harness, Resp};

/// The bound the issue sets for every answer, whatever the table does.
const BOUND: Duration = Duration::from_secs(5);

/// A local DynamoDB this test owns (ended by PID when dropped).
struct OwnDb {
    port: u16,
    child: Child,
}

impl OwnDb {
    fn start_on(port: u16) -> OwnDb {
        let root = env!("CARGO_MANIFEST_DIR");
        let python = format!("{root}/.local/venv/bin/python");
        assert!(
            std::path::Path::new(&python).exists(),
            "{python} is missing: `make test` (scripts/db.sh) installs the local DynamoDB"
        );
        let child = Command::new(python)
            .args([format!("{root}/scripts/moto_server.py"), "127.0.0.1".into(), port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the local DynamoDB");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the local DynamoDB did not start on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        OwnDb { port, child }
    }

    fn start() -> OwnDb {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        Self::start_on(port)
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill").args([format!("-{name}"), self.child.id().to_string()]).status().unwrap();
        assert!(status.success(), "kill -{name}");
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for OwnDb {
    fn drop(&mut self) {
        // A frozen process must be thawed to die on SIGTERM; SIGKILL needs no thaw.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A harness on `db` with the deployed time bounds.
fn harness(db: &OwnDb) -> Harness {
    let endpoint = db.endpoint();
    Harness::with_config(move |c| {
        c.store.endpoint = Some(endpoint.clone());
        c.store.timeouts = inbox::store::StoreTimeouts::LAMBDA;
        c.request_timeout = inbox::config::DEFAULT_REQUEST_TIMEOUT;
        c.rate_limit_per_minute = 120;
        // A lease written by a request that timed out may still land once the
        // table thaws; a short lease lets the redelivery take over in the test.
        c.job_lease_secs = 2;
    })
}

/// One request of the load, what it needs, and how it was answered.
struct Answer {
    what: &'static str,
    needs_data: bool,
    resp: Resp,
    took: Duration,
}

/// A bounded burst: discovery (needs no data), reads and a write, at once.
async fn burst(h: &Harness) -> Vec<Answer> {
    let app = h.app().await;
    let requests: Vec<(&'static str, bool, lambda_http::Request)> = vec![
        ("server/discover", false, h.stateless(json!(1), "server/discover", json!({})).build()),
        (
            "tools/call emails_get",
            true,
            h.stateless(json!(2), "tools/call", json!({"name": "emails_get", "arguments": {"id": "eml_energy_nov"}}))
                .build(),
        ),
        ("GET /emails", true, h.api("GET", "/emails").build()),
        // Not "no completions": storage trouble is the server's 503.
        (
            "completion/complete",
            true,
            h.stateless(
                json!(3),
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "kobana://inbox/emails/{id}"}, "argument": {"name": "id", "value": "eml_"}}),
            )
            .build(),
        ),
        ("POST reprocess", true, h.api("POST", "/emails/eml_energy_nov/reprocess").build()),
        ("PUT /inboxes", true, h.api("PUT", "/inboxes").json(&json!({"slug": "during-fault", "name": "F"})).build()),
    ];
    let mut tasks = Vec::new();
    for (what, needs_data, req) in requests {
        let app = std::sync::Arc::clone(&app);
        tasks.push(tokio::spawn(async move {
            let started = Instant::now();
            let resp = Resp::from(Box::pin(inbox::edge::handle(&app.edge, req)).await);
            Answer { what, needs_data, resp, took: started.elapsed() }
        }));
    }
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    answers
}

/// Every answer bounded; no 5xx but 503, each 503 with `Retry-After` and the
/// surface's error shape; what needs no data is a 200.
#[track_caller]
fn assert_bounded(answers: &[Answer], phase: &str) {
    for a in answers {
        let body = String::from_utf8_lossy(&a.resp.body).into_owned();
        assert!(a.took < BOUND, "{phase}: {} took {:?}", a.what, a.took);
        assert!(a.resp.status == 200 || a.resp.status == 503, "{phase}: {} answered {}: {body}", a.what, a.resp.status);
        if a.resp.status == 503 {
            let retry = a.resp.header("retry-after").and_then(|v| v.parse::<u64>().ok());
            assert!(retry.is_some_and(|s| s >= 1), "{phase}: {} 503 without Retry-After", a.what);
            let json = a.resp.json();
            let shaped = json["error"]["code"] == 50300 || json["error"]["code"] == "unavailable";
            assert!(shaped, "{phase}: {} 503 body {json}", a.what);
        }
        if !a.needs_data {
            assert_eq!(a.resp.status, 200, "{phase}: {} needs no data: {body}", a.what);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_then_dead_then_empty_table_gets_bounded_503s_and_no_half_written_change() {
    let db = OwnDb::start();
    let h = harness(&db);
    let app = h.app().await;
    // Warm: keys fetched, memberships cached, everything answers.
    for a in burst(&h).await {
        assert!(a.resp.is_ok_status(), "warm-up: {} answered {}", a.what, a.resp.status);
    }

    // 1. Frozen: connections are accepted, nothing is answered.
    db.signal("STOP");
    let frozen = burst(&h).await;
    assert_bounded(&frozen, "frozen");
    let statuses: Vec<(&str, u16)> = frozen.iter().map(|a| (a.what, a.resp.status)).collect();
    assert!(frozen.iter().filter(|a| a.needs_data).all(|a| a.resp.status == 503), "frozen: {statuses:?}");
    db.signal("CONT");

    // 2. Dead: connections are refused.
    let mut db = db;
    let port = db.port;
    let _ = db.child.kill();
    let _ = db.child.wait();
    let dead = burst(&h).await;
    assert_bounded(&dead, "dead");
    let statuses: Vec<(&str, u16)> = dead.iter().map(|a| (a.what, a.resp.status)).collect();
    assert!(dead.iter().filter(|a| a.needs_data).all(|a| a.resp.status == 503), "dead: {statuses:?}");
    drop(db);

    // 3. Back, empty: the table is created and seeded again; service resumes.
    let _back = OwnDb::start_on(port);
    app.store.create_table().await.expect("table");
    inbox::seed::seed(&app.store, &app.secrets).await.expect("seed");
    let reprocess = h.api("POST", "/emails/eml_energy_nov/reprocess").send().await;
    assert_eq!(reprocess.status, 202, "{}", reprocess.json());
    // Exactly one job: a second request finds the e-mail processing.
    let again = h.api("POST", "/emails/eml_energy_nov/reprocess").send().await;
    assert_eq!((again.status, again.json()["error"]["code"].clone()), (409, json!("already_processing")));
    let job_id = reprocess.json()["data"]["job"]["id"].as_str().unwrap().to_owned();
    let tenant = inbox::domain::Tenant {
        org: inbox::domain::OrgId::parse("org_demo").unwrap(),
        workspace: inbox::domain::WorkspaceId::parse("ws_main").unwrap(),
        role: inbox::domain::Role::Viewer,
        archived: false,
        shards: Default::default(),
        content_policy: Default::default(),
        retention_days: inbox::domain::retention::DEFAULT_DAYS,
    };
    let ran = Box::pin(inbox::worker::run(&app.runner, &tenant, &job_id)).await.unwrap();
    assert_eq!(ran, inbox::worker::Ran::Finished(inbox::domain::records::JobStatus::Succeeded));
    let ran = Box::pin(inbox::worker::run(&app.runner, &tenant, &job_id)).await.unwrap();
    assert_eq!(ran, inbox::worker::Ran::Skipped, "the effect runs once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_batch_whose_job_cannot_be_recorded_is_redelivered_and_then_runs_once() {
    let db = OwnDb::start();
    let h = harness(&db);
    let app = h.app().await;
    let resp = h.api("POST", "/emails/eml_energy_nov/reprocess").send().await;
    assert_eq!(resp.status, 202, "{}", resp.json());
    let job_id = resp.json()["data"]["job"]["id"].as_str().unwrap().to_owned();
    let record = json!({
        "eventID": "1", "eventName": "INSERT", "eventVersion": "1.1", "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/inbox/stream/2026-01-01T00:00:00.000",
        "dynamodb": {
            "ApproximateCreationDateTime": 1_700_000_000, "SizeBytes": 10,
            "Keys": {"pk": {"S": "T#org_demo#W#ws_main"}, "sk": {"S": format!("JOB#{job_id}")}},
            "NewImage": {
                "pk": {"S": "T#org_demo#W#ws_main"}, "sk": {"S": format!("JOB#{job_id}")},
                "id": {"S": job_id.clone()}, "org_id": {"S": "org_demo"}, "workspace_id": {"S": "ws_main"}
            },
            "SequenceNumber": "700", "StreamViewType": "NEW_IMAGE"
        }
    });
    let batch = || -> aws_lambda_events::event::dynamodb::Event {
        serde_json::from_value(json!({"Records": [record.clone()]})).unwrap()
    };
    db.signal("STOP");
    let started = Instant::now();
    let response = Box::pin(inbox::worker::stream::handle(&app.runner, batch())).await;
    assert!(started.elapsed() < Duration::from_secs(15), "the batch is bounded: {:?}", started.elapsed());
    let failed: Vec<String> =
        response.batch_item_failures.iter().map(|f| f.item_identifier.clone().unwrap_or_default()).collect();
    assert_eq!(failed, ["700"], "the record is handed back for redelivery");
    db.signal("CONT");
    // Redelivered until it runs: a lease written by the timed-out attempt may
    // have landed when the table thawed, and then the job is `Busy` (handed
    // back again) until that lease lapses. Bounded: a few leases' time.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let response = Box::pin(inbox::worker::stream::handle(&app.runner, batch())).await;
        if response.batch_item_failures.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "the job never ran after the table came back");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let job = h.api("GET", &format!("/jobs/{job_id}")).send().await.json();
    assert_eq!(job["data"]["status"], "succeeded", "{job}");
    // A further redelivery runs nothing.
    let response = Box::pin(inbox::worker::stream::handle(&app.runner, batch())).await;
    assert!(response.batch_item_failures.is_empty());
    assert_eq!(h.api("GET", &format!("/jobs/{job_id}")).send().await.json(), json!({"data": job["data"]}));
    let email = h.api("GET", "/emails/eml_energy_nov").send().await.json();
    assert_eq!(email["data"]["status"], "processed", "{email}");
}

/// While it names a reason, the proxy cancels each `TransactWriteItems` with
/// that reason for every item (as DynamoDB does when it throttles a
/// transaction or another transaction holds one of its items).
type CancelWith = std::sync::Arc<std::sync::Mutex<Option<&'static str>>>;

async fn cancelling_proxy() -> (crate::common::proxy::Interposer, CancelWith) {
    use crate::common::proxy::{Interposer, Rule, RuleFn, cancelled};
    let cancel: CancelWith = std::sync::Arc::default();
    let reason = std::sync::Arc::clone(&cancel);
    let rule: std::sync::Arc<RuleFn> =
        std::sync::Arc::new(move |operation: &str, body: &serde_json::Value| match *reason.lock().unwrap() {
            Some(code) if operation == "TransactWriteItems" => {
                cancelled(code, body["TransactItems"].as_array().map_or(1, Vec::len))
            }
            _ => Rule::Forward,
        });
    (Interposer::start(rule).await, cancel)
}

#[tokio::test]
async fn a_transaction_cancelled_by_throttling_or_a_concurrent_one_is_a_503_not_a_refusal() {
    let (proxy, cancel) = cancelling_proxy().await;
    let endpoint = proxy.endpoint.clone();
    let h = Harness::with_config(move |c| c.store.endpoint = Some(endpoint.clone()));
    h.app().await;
    let senders = "/inboxes/inb_bills/senders";
    let auditor = h.token_for("usr_admin", "org_demo", crate::common::ALL_SCOPES);
    for reason in ["ThrottlingError", "TransactionConflict", "ValidationError"] {
        *cancel.lock().unwrap() = Some(reason);
        let calls = [
            ("POST", senders.to_owned(), Some(json!({"sender": "new@acme.example.com"}))),
            ("DELETE", format!("{senders}/cobranca@telecom.example.com"), None),
            ("PATCH", "/inboxes/inb_bills".to_owned(), Some(json!({"name": "Renamed"}))),
            ("POST", "/webhooks/whk_demo/rotate_secret".to_owned(), None),
        ];
        for (method, path, body) in calls {
            let mut req = h.api(method, &path);
            if let Some(body) = &body {
                req = req.json(body);
            }
            let resp = Box::pin(req.send()).await;
            // Not "already allowed" (200), "not found" (404) or "changed meanwhile" (409).
            assert_eq!(resp.status, 503, "{reason}: {method} {path}: {}", resp.json());
            assert!(resp.header("retry-after").is_some(), "{reason}: {method} {path}");
        }
        *cancel.lock().unwrap() = None;
        let listed = Box::pin(h.api("GET", senders).send()).await.json();
        let senders_now: Vec<&str> =
            listed["data"].as_array().unwrap().iter().map(|s| s["sender"].as_str().unwrap()).collect();
        assert!(!senders_now.contains(&"new@acme.example.com"), "{reason}: {senders_now:?}");
        assert!(senders_now.contains(&"cobranca@telecom.example.com"), "{reason}: {senders_now:?}");
        let trail = Box::pin(h.api("GET", "/audit").token(&auditor).send()).await.json();
        assert_eq!(trail["data"], json!([]), "{reason}: nothing changed, nothing refused by an operation");
    }
    // A failed condition is still the operation's refusal.
    *cancel.lock().unwrap() = Some("ConditionalCheckFailed");
    let resp = Box::pin(h.api("PATCH", "/inboxes/inb_bills").json(&json!({"name": "Renamed"})).send()).await;
    assert_eq!(resp.status, 409, "{}", resp.json());
}
