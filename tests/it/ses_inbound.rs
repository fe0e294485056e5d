//! Mail received by SES (issue 45, part 5): the receipt rule's S3 action has
//! stored the raw message under `inbound/<SES message id>` in the bucket, and
//! its Lambda action hands the worker SES's event (`events/worker-ses-inbound.json`,
//! shaped as SES's documented Lambda event). Here the message is put into the
//! local server's S3 as the S3 action would, and the event given to the
//! worker's handler (`inbox::inbound`), which ingests it into each
//! recipient's inbox through the REST pipeline's own operation.
//!
//! Addresses are `<inbox slug>.<workspace id>.<organization id>@<domain>`; a
//! workspace takes SES mail once its organization registered
//! `ses.amazonaws.com` as a mail pipeline (`take_ses_mail`).

use crate::common::{self, Harness, get, send, unique_table};
use crate::jobs_and_webhooks::run_job;
use inbox::domain::records::JobStatus;
use inbox::inbound::{self, Dropped, Inbound, Outcome};
use inbox::worker::Ran;
use serde_json::{Value, json};

const EVENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/events/worker-ses-inbound.json");
const BILLS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bills");
const MESSAGES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/mail/tests/messages");
const DOMAIN: &str = "inbound.kobana.example";

/// The address of inbox `slug` in workspace `ws` of organization `org`.
fn address(slug: &str, ws: &str, org: &str) -> String {
    format!("{slug}.{ws}.{org}@{DOMAIN}")
}

/// The recorded event for SES message `ses_id`, delivered to `recipients`.
fn event(ses_id: &str, recipients: &[&str]) -> Value {
    let first = recipients.first().copied().unwrap_or_default();
    let text =
        std::fs::read_to_string(EVENT).unwrap().replace("{{MESSAGE_ID}}", ses_id).replace("{{RECIPIENT}}", first);
    let mut event: Value = serde_json::from_str(&text).unwrap();
    event["Records"][0]["ses"]["receipt"]["recipients"] = json!(recipients);
    event["Records"][0]["ses"]["mail"]["destination"] = json!(recipients);
    event
}

/// A harness whose bucket is its own, so what it holds is this test's alone.
fn harness() -> Harness {
    let bucket = unique_table().replace('_', "-");
    Harness::with_config(move |c| c.store.bucket = bucket.clone())
}

/// The worker's SES handler over the harness's store and secrets.
async fn inbound(h: &Harness) -> Inbound {
    let app = h.app().await;
    Inbound::new(app.store.clone(), std::sync::Arc::clone(&app.secrets))
}

/// What the organization's administrator does once: register SES as a mail
/// pipeline of workspace `ws` (the REST administration route).
async fn take_ses_mail(h: &Harness, org: &str, admin: &str, ws: &str) {
    let token = h.token_for(admin, org, "org:admin");
    let path = format!("/org/workspaces/{ws}/pipelines/{}", inbound::SUBJECT);
    let resp = send(h.api("PUT", &path).token(&token).without("x-workspace-id")).await;
    assert!(resp.status == 200 || resp.status == 201, "{}", resp.json());
}

/// Stores `raw` as the receipt rule's S3 action does.
async fn store_raw(h: &Harness, ses_id: &str, raw: &[u8]) {
    let app = h.app().await;
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, raw);
    let key = format!("{}{ses_id}", inbound::KEY_PREFIX);
    app.store.objects().put(&key, raw.to_vec(), "message/rfc822", digest.as_ref()).await.unwrap();
}

/// Every key of the harness's bucket under `prefix`.
async fn keys(h: &Harness, prefix: &str) -> Vec<String> {
    h.app().await.store.objects().keys_under(prefix).await.unwrap()
}

/// `raw` as SES stores it: its own trace and verdict headers on top.
fn as_stored_by_ses(raw: &[u8], ses_id: &str, recipient: &str) -> Vec<u8> {
    let head = format!(
        "Return-Path: <secretaria@clube.example.com>\r\n\
         Received: from mail.clube.example.com (mail.clube.example.com [203.0.113.25])\r\n by inbound-smtp.us-east-1.amazonaws.com with SMTP id {ses_id}\r\n for {recipient};\r\n Sat, 21 Nov 2026 19:05:02 +0000 (UTC)\r\n\
         X-SES-Spam-Verdict: PASS\r\n\
         X-SES-Virus-Verdict: PASS\r\n\
         Received-SPF: pass (spfCheck: domain of clube.example.com designates 203.0.113.25 as permitted sender) client-ip=203.0.113.25;\r\n\
         Authentication-Results: amazonses.com;\r\n spf=pass (spfCheck: domain of clube.example.com designates 203.0.113.25 as permitted sender) client-ip=203.0.113.25;\r\n dkim=fail header.i=@clube.example.com;\r\n dmarc=none header.from=clube.example.com;\r\n\
         X-SES-RECEIPT: AEFBQUFBQUFBQUFHbFo0VU81VzVuYmRDNm51example\r\n"
    );
    [head.as_bytes(), raw].concat()
}

fn bill(name: &str) -> Vec<u8> {
    std::fs::read(format!("{BILLS}/{name}.eml")).unwrap()
}

/// The one outcome of an invocation that ingested: its e-mail, its job and whether it was rejected.
#[track_caller]
fn ingested(outcomes: &[Outcome]) -> (String, String, bool) {
    match outcomes {
        [Outcome::Ingested { email_id, job_id, rejected }] => (email_id.clone(), job_id.clone(), *rejected),
        other => panic!("expected one ingestion, got {other:?}"),
    }
}

#[tokio::test]
async fn a_bill_received_by_ses_lands_in_its_inbox_with_the_verdicts_and_is_processed() {
    let h = harness();
    take_ses_mail(&h, "org_demo", "usr_admin", "ws_main").await;
    let recipient = address("receipts", "ws_main", "org_demo");
    let ses_id = "o3vrnil0e2ic28trm7dfhrc2v0cnbeccl4nbp0g1";
    store_raw(&h, ses_id, &as_stored_by_ses(&bill("two-boletos"), ses_id, &recipient)).await;
    let event = event(ses_id, &[&recipient]);
    assert!(inbound::is_mail_event(&event), "the worker takes it for SES's");

    let outcomes = inbound(&h).await.on_event(event, "lambda-req-1").await.unwrap();
    let (email_id, job_id, rejected) = ingested(&outcomes);
    assert!(!rejected);

    let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
    assert_eq!(stored["inbox_id"], "inb_receipts", "{stored}");
    assert_eq!(stored["status"], "received", "{stored}");
    assert_eq!(stored["from"], "secretaria@clube.example.com");
    assert_eq!(stored["message_id"], "two-boletos.20261121@clube.example.com");
    // SES's verdicts, from its event: PASS, FAIL, GRAY.
    assert_eq!(
        stored["authentication"],
        json!({"spf": "pass", "dkim": "fail", "dmarc": "none", "by": "amazonses.com"})
    );
    let files: Vec<&Value> = stored["attachments"].as_array().unwrap().iter().collect();
    assert_eq!(files.len(), 3, "{stored}");
    assert!(files.iter().all(|f| f["stored"] == true), "{stored}");
    assert_eq!(keys(&h, &format!("org_demo/ws_main/{email_id}/")).await.len(), 3, "the attachments are kept");
    assert_eq!(keys(&h, inbound::KEY_PREFIX).await, Vec::<String>::new(), "the raw message is gone once ingested");

    // Its job processes it like any other ingestion's.
    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Succeeded));
    let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
    assert_eq!(stored["status"], "processed", "{stored}");
    assert_eq!(stored["bills"].as_array().unwrap().len(), 2, "both boletos: {stored}");

    // The audit record is the pipeline's: SES's subject, the ingestion route, the Lambda request.
    let auditor = h.token_for("usr_admin", "org_demo", common::ALL_SCOPES);
    let trail = send(h.api("GET", &format!("/audit?target_id={email_id}")).token(&auditor)).await.json();
    let records: Vec<&Value> =
        trail["data"].as_array().unwrap().iter().filter(|r| r["operation"] == "email_ingest").collect();
    assert_eq!(records.len(), 1, "{trail}");
    let record = records[0];
    assert_eq!(record["subject"], inbound::SUBJECT, "{record}");
    assert_eq!(record["operation"], "email_ingest", "{record}");
    assert_eq!(record["action"], "POST /inboxes/{id}/emails", "{record}");
    assert_eq!(record["request_id"], "lambda-req-1", "{record}");
    assert_eq!((record["status"].clone(), record["changed"].clone()), (json!(202), json!(true)), "{record}");
}

#[tokio::test]
async fn the_events_verdicts_replace_the_messages_own_authentication_results() {
    let h = harness();
    take_ses_mail(&h, "org_demo", "usr_admin", "ws_main").await;
    let recipient = address("receipts", "ws_main", "org_demo");
    // The message says pass three times (a header its sender could write);
    // SES's event says otherwise.
    let raw = std::fs::read(format!("{MESSAGES}/authenticated.eml")).unwrap();
    store_raw(&h, "authenticated0001", &raw).await;
    let mut event = event("authenticated0001", &[&recipient]);
    event["Records"][0]["ses"]["receipt"]["dmarcVerdict"] = json!({"status": "FAIL"});
    event["Records"][0]["ses"]["receipt"]["dmarcPolicy"] = json!("reject");
    event["Records"][0]["ses"]["receipt"]["spfVerdict"] = json!({"status": "PROCESSING_FAILED"});
    let (email_id, ..) = ingested(&inbound(&h).await.on_event(event, "r").await.unwrap());
    let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
    assert_eq!(
        stored["authentication"],
        json!({"spf": "temperror", "dkim": "fail", "dmarc": "fail", "by": "amazonses.com"}),
        "{stored}"
    );
}

#[tokio::test]
async fn a_virus_found_by_ses_stores_the_email_rejected_without_its_files_and_it_is_never_processed() {
    let h = harness();
    take_ses_mail(&h, "org_demo", "usr_admin", "ws_main").await;
    let recipient = address("receipts", "ws_main", "org_demo");
    store_raw(&h, "virus0001", &bill("two-boletos")).await;
    let mut event = event("virus0001", &[&recipient]);
    event["Records"][0]["ses"]["receipt"]["virusVerdict"] = json!({"status": "FAIL"});

    let (email_id, job_id, rejected) = ingested(&inbound(&h).await.on_event(event, "r").await.unwrap());
    assert!(rejected);
    let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
    assert_eq!(stored["status"], "rejected", "{stored}");
    assert_eq!(stored["error"], inbound::VIRUS, "{stored}");
    assert!(stored["attachments"].as_array().unwrap().iter().all(|f| f["stored"] == false), "{stored}");
    assert_eq!(keys(&h, "").await, Vec::<String>::new(), "no object kept: no attachment, no raw message");

    // Its job notifies the rejection and reads nothing.
    assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Succeeded));
    let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
    assert_eq!(stored["status"], "rejected", "{stored}");
    assert_eq!((stored["extracted"].clone(), stored["bills"].clone()), (Value::Null, json!([])), "{stored}");
}

#[tokio::test]
async fn unknown_recipients_store_nothing_anywhere_and_are_logged_without_their_address() {
    let h = harness();
    take_ses_mail(&h, "org_demo", "usr_admin", "ws_main").await;
    let before = common::table_dump_sorted(&h.table).await;
    let recipients = [
        // No inbox with this slug in the workspace.
        address("maria-silva", "ws_main", "org_demo"),
        // A workspace whose organization did not register SES there.
        address("operations", "ws_ops", "org_demo"),
        // Not this scheme at all.
        format!("maria.silva@{DOMAIN}"),
        format!("maria@{DOMAIN}"),
    ];
    let recipients: Vec<&str> = recipients.iter().map(String::as_str).collect();
    store_raw(&h, "unknown0001", &bill("two-boletos")).await;
    let handler = inbound(&h).await;
    let mut outcomes = Vec::new();
    let logs = common::capture_logs(async {
        outcomes = handler.on_event(event("unknown0001", &recipients), "r").await.unwrap();
    })
    .await;
    assert_eq!(outcomes, vec![Outcome::Dropped(Dropped::UnknownRecipient); 4]);
    assert_eq!(common::table_dump_sorted(&h.table).await, before, "nothing written, in any tenant");
    assert_eq!(keys(&h, "").await, Vec::<String>::new(), "the raw message is not kept either");
    assert!(logs.contains("unknown0001") && logs.contains("unknown_recipient"), "{logs}");
    assert!(!logs.contains("maria") && !logs.contains(DOMAIN), "an address is not logged: {logs}");
}

#[tokio::test]
async fn an_address_naming_another_organizations_workspace_reaches_no_inbox() {
    let h = harness();
    // Both organizations take SES mail; both have an inbox with the slug `bills`.
    take_ses_mail(&h, "org_demo", "usr_admin", "ws_main").await;
    take_ses_mail(&h, "org_other", "usr_other", "ws_other").await;
    let crossing = [address("bills", "ws_main", "org_other"), address("bills", "ws_other", "org_demo")];
    let own = address("bills", "ws_other", "org_other");
    store_raw(&h, "cross0001", &bill("two-boletos")).await;
    let recipients = [crossing[0].as_str(), crossing[1].as_str(), own.as_str()];
    let outcomes = inbound(&h).await.on_event(event("cross0001", &recipients), "r").await.unwrap();
    let [Outcome::Dropped(Dropped::UnknownRecipient), Outcome::Dropped(Dropped::UnknownRecipient), landed] =
        outcomes.as_slice()
    else {
        panic!("{outcomes:?}")
    };
    let Outcome::Ingested { email_id, .. } = landed else { panic!("{outcomes:?}") };

    // The one e-mail is org_other's, in its own inbox; org_demo has none.
    let other = h.token_for("usr_other", "org_other", common::ADMIN_SCOPES);
    let resp =
        send(h.api("GET", &format!("/emails/{email_id}")).token(&other).header("x-workspace-id", "ws_other")).await;
    assert_eq!(resp.json()["data"]["inbox_id"], "inb_other", "{}", resp.json());
    let (status, _) = common::rest(&h, "GET", &format!("/emails/{email_id}")).await;
    assert_eq!(status, 404, "not in org_demo's ws_main");
    for ws in ["ws_main", "ws_ops"] {
        let listed = send(h.api("GET", "/emails?limit=100").header("x-workspace-id", ws)).await.json();
        let mine = listed["data"].as_array().unwrap().iter().filter(|e| e["from"] == "secretaria@clube.example.com");
        assert_eq!(mine.count(), 0, "{ws}: {listed}");
    }
    assert!(keys(&h, "org_demo/").await.is_empty(), "no attachment under org_demo");
    assert_eq!(keys(&h, &format!("org_other/ws_other/{email_id}/")).await.len(), 3);
}

#[tokio::test]
async fn the_same_event_twice_is_one_email() {
    let h = harness();
    take_ses_mail(&h, "org_demo", "usr_admin", "ws_main").await;
    let recipient = address("receipts", "ws_main", "org_demo");
    let raw = bill("two-boletos");
    store_raw(&h, "twice0001", &raw).await;
    let handler = inbound(&h).await;
    let first = handler.on_event(event("twice0001", &[&recipient]), "r1").await.unwrap();
    let (email_id, job_id, _) = ingested(&first);

    // SES invokes again: the first invocation handled the message and deleted it.
    let again = handler.on_event(event("twice0001", &[&recipient]), "r2").await.unwrap();
    assert_eq!(again, vec![Outcome::Dropped(Dropped::Gone)]);
    // Or again before the first one's delete: the Message-ID makes it the same e-mail.
    store_raw(&h, "twice0001", &raw).await;
    let third = handler.on_event(event("twice0001", &[&recipient]), "r3").await.unwrap();
    assert_eq!(ingested(&third), (email_id.clone(), job_id, false));
    // The same inbox named twice in one event (a slug is read in any case): one outcome.
    store_raw(&h, "twice0001", &raw).await;
    let shouted = format!("RECEIPTS.ws_main.org_demo@{DOMAIN}");
    let doubled = handler.on_event(event("twice0001", &[&recipient, &shouted]), "r4").await.unwrap();
    assert_eq!(ingested(&doubled).0, email_id, "{doubled:?}");

    let listed = get(&h, "/emails?inbox_id=inb_receipts&limit=100").await;
    let copies = listed["data"].as_array().unwrap().iter().filter(|e| e["from"] == "secretaria@clube.example.com");
    assert_eq!(copies.count(), 1, "{listed}");
}

#[tokio::test]
async fn a_message_without_a_message_id_is_one_email_per_ses_message() {
    let h = harness();
    take_ses_mail(&h, "org_demo", "usr_admin", "ws_main").await;
    let recipient = address("receipts", "ws_main", "org_demo");
    let raw = b"From: contas@energia.example.com\r\nTo: x@y.example\r\nSubject: Conta\r\n\r\nLinha: 34191.09123 34567.800007 01234.567897 1 16560000015990\r\n";
    let handler = inbound(&h).await;
    store_raw(&h, "noid0001", raw).await;
    let (email_id, ..) = ingested(&handler.on_event(event("noid0001", &[&recipient]), "r1").await.unwrap());
    store_raw(&h, "noid0001", raw).await;
    let (again, ..) = ingested(&handler.on_event(event("noid0001", &[&recipient]), "r2").await.unwrap());
    assert_eq!(again, email_id);
    let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
    assert_eq!(stored["message_id"], "noid0001@amazonses.com", "{stored}");
}

#[tokio::test]
async fn a_message_too_large_or_unreadable_or_an_odd_event_is_dropped_without_failing_the_invocation() {
    let h = harness();
    take_ses_mail(&h, "org_demo", "usr_admin", "ws_main").await;
    let recipient = address("receipts", "ws_main", "org_demo");
    let handler = inbound(&h).await;
    let before = common::table_dump_sorted(&h.table).await;

    // One byte over what REST takes, as SES (which takes up to 40 MB) stored it.
    let mut large = bill("two-boletos");
    large.resize(inbox::gate::MAX_MESSAGE_BYTES + 1, b'x');
    store_raw(&h, "large0001", &large).await;
    let outcomes = handler.on_event(event("large0001", &[&recipient]), "r").await.unwrap();
    assert_eq!(outcomes, vec![Outcome::Dropped(Dropped::TooLarge)]);

    store_raw(&h, "garbage0001", b"\x00\x01\x02 no message here").await;
    let outcomes = handler.on_event(event("garbage0001", &[&recipient]), "r").await.unwrap();
    assert_eq!(outcomes, vec![Outcome::Dropped(Dropped::Unreadable)]);

    // An event that is SES's by its source but not by its shape, and one
    // whose message id could name another key: dropped, never retried.
    let odd = json!({"Records": [{"eventSource": "aws:ses", "ses": {"mail": {"messageId": "x"}}}]});
    assert_eq!(handler.on_event(odd, "r").await.unwrap(), vec![Outcome::Dropped(Dropped::Malformed)]);
    let outcomes = handler.on_event(event("../org_demo/ws_main/x", &[&recipient]), "r").await.unwrap();
    assert_eq!(outcomes, vec![Outcome::Dropped(Dropped::Malformed)]);

    assert_eq!(common::table_dump_sorted(&h.table).await, before, "nothing stored");
    assert_eq!(keys(&h, "").await, Vec::<String>::new(), "the dropped raw messages are not kept");
}

#[tokio::test]
async fn storage_trouble_fails_the_invocation_so_lambda_retries_and_the_message_stays() {
    let h = harness();
    take_ses_mail(&h, "org_demo", "usr_admin", "ws_main").await;
    let recipient = address("receipts", "ws_main", "org_demo");
    store_raw(&h, "later0001", &bill("two-boletos")).await;
    let app = h.app().await;
    let mut settings = app.config.store.clone();
    settings.endpoint = Some("http://127.0.0.1:9".into());
    settings.timeouts = inbox::store::StoreTimeouts {
        connect: std::time::Duration::from_millis(200),
        attempt: std::time::Duration::from_millis(500),
        operation: std::time::Duration::from_secs(1),
        attempts: 1,
    };
    let down = Inbound::new(inbox::store::Store::connect(&settings).await, std::sync::Arc::clone(&app.secrets));
    assert!(down.on_event(event("later0001", &[&recipient]), "r").await.is_err(), "a retry can cure it");
    assert_eq!(keys(&h, inbound::KEY_PREFIX).await, vec!["inbound/later0001".to_owned()], "kept for the retry");

    // Lambda's retry, once the table answers again.
    let (email_id, ..) = ingested(&inbound(&h).await.on_event(event("later0001", &[&recipient]), "r").await.unwrap());
    assert!(email_id.starts_with("eml_"));
}

#[test]
fn the_recorded_event_is_the_workers_mail_and_a_stream_batch_is_not() {
    let text = std::fs::read_to_string(EVENT).unwrap();
    let event: Value = serde_json::from_str(&text).unwrap();
    assert!(inbound::is_mail_event(&event));
    assert_eq!(event["Records"][0]["ses"]["receipt"]["action"]["type"], "Lambda");
    assert_eq!(event["Records"][0]["ses"]["receipt"]["action"]["invocationType"], "Event");
    let batch = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/events/worker-new-job.json")).unwrap();
    assert!(!inbound::is_mail_event(&serde_json::from_str(&batch).unwrap()));
}
