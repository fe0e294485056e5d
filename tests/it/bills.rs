//! The bill corpus (`tests/bills`, made by `tests/bills/make.py`): e-mails
//! written by Python's standard `email` package around PDF boletos rendered
//! by an independent generator (pycobranca: Itaú, Banco do Brasil,
//! Santander, Caixa, Bradesco, Sicoob, Sicredi), Pix codes built by pix-utils,
//! and hostile PDFs (a scan, an encrypted one, a broken one, a 1 GiB
//! decompression bomb, 10,000 pages). Each message is ingested raw, as the
//! mail pipeline sends it, its job run, and the record compared with the
//! generator's values; a second, independent oracle (boleto-utils, with
//! brazilian-utils as a third opinion) agrees on every line found. Then the
//! attachments' bytes: kept under the tenant, downloaded by a short-lived
//! link, never written twice for one message.

use crate::common::{Harness, get, send, unique_table};
use crate::jobs_and_webhooks::{ingested, run_job};
use crate::raw_mail::{messages_in, post_message};
use inbox::domain::records::JobStatus;
use inbox::worker::Ran;
use serde_json::{Value, json};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bills");

fn digits(text: &str) -> String {
    text.chars().filter(char::is_ascii_digit).collect()
}

/// A harness whose attachments go to a bucket of its own, so that what the
/// bucket holds is this test's alone.
fn with_own_bucket() -> (Harness, String) {
    let bucket = unique_table().replace('_', "-");
    let name = bucket.clone();
    (Harness::with_config(move |c| c.store.bucket = name.clone()), bucket)
}

/// Ingests `raw` into the demo receipts inbox and runs its job: the e-mail's id and record.
async fn ingest_and_process(h: &Harness, name: &str, raw: &[u8]) -> (String, Value) {
    let resp = send(post_message(h, "inb_receipts", raw)).await;
    let (email_id, status, job_id) = ingested(&resp);
    assert_eq!(status, "received", "{name}");
    assert_eq!(run_job(h, &job_id).await, Ran::Finished(JobStatus::Succeeded), "{name}: never a failed job");
    let stored = get(h, &format!("/emails/{email_id}")).await["data"].clone();
    (email_id, stored)
}

/// What the server must report for one bill of the generator's list.
fn expected_bill(bill: &Value) -> Value {
    let pix = match &bill["pix"] {
        Value::Null => Value::Null,
        pix => json!({
            "payload": pix["payload"],
            "key": pix["key"],
            "merchant_name": pix["merchant_name"],
            "merchant_city": pix["city"],
            "amount_cents": pix["amount_cents"],
            "txid": pix["txid"],
            "url": null,
        }),
    };
    json!({
        "source": bill["source"],
        "digitable_line": digits(bill["digitable_line"].as_str().unwrap()),
        "barcode": bill["barcode"],
        "amount_cents": bill["amount_cents"],
        "due_date": bill["due_date"],
        "bank_code": bill["bank_code"],
        "pix": pix,
        "amounts_disagree": bill.get("amounts_disagree").cloned().unwrap_or(json!(false)),
    })
}

#[tokio::test]
async fn every_bill_of_the_corpus_is_found_with_the_generators_values_and_the_oracle_agrees() {
    let h = Harness::new();
    let corpus: Vec<_> = messages_in(CORPUS).into_iter().filter(|(_, _, e)| e.get("reason").is_none()).collect();
    assert_eq!(corpus.len(), 8, "the corpus's bill messages");
    let mut banks = std::collections::BTreeSet::new();
    let mut bills_seen = 0;
    for (name, raw, expect) in corpus {
        let (_, stored) = ingest_and_process(&h, &name, &raw).await;
        assert_eq!(stored["status"], "processed", "{name}: {stored}");
        assert_eq!(stored["reason"], Value::Null, "{name}");
        assert_eq!(stored["from"], expect["from"], "{name}");
        assert_eq!(stored["subject"], expect["subject"], "{name}");
        assert_eq!(stored["message_id"], expect["message_id"], "{name}");
        assert_eq!(stored["received_at"], expect["date"].as_str().unwrap().replace('Z', ".000Z"), "{name}");

        let wanted: Vec<Value> = expect["bills"].as_array().unwrap().iter().map(expected_bill).collect();
        assert_eq!(stored["bills"], json!(wanted), "{name}: every bill, where its document is");
        assert_eq!(stored["extracted"], wanted[0], "{name}: extracted is the first bill");

        // The second oracle, run on the generator's values when the corpus
        // was made, agrees with what the server found, field by field.
        for (bill, found) in expect["bills"].as_array().unwrap().iter().zip(stored["bills"].as_array().unwrap()) {
            let oracle = &bill["oracle"];
            assert_eq!(oracle["line_valid"], true, "{name}: {oracle}");
            assert_eq!(oracle["agrees_with_generator"], true, "{name}: {oracle}");
            assert_eq!(oracle["barcode_from_line"], found["barcode"], "{name}");
            assert_eq!(oracle["amount_cents"], found["amount_cents"], "{name}");
            assert_eq!(oracle["due_date"], found["due_date"], "{name}");
            assert_eq!(oracle["bank_code"], found["bank_code"], "{name}");
            let third = &oracle["third_opinion"];
            assert_eq!(third["line_valid"], true, "{name}: {third}");
            assert_eq!(third["line_digits"], found["digitable_line"], "{name}");
            banks.insert(found["bank_code"].as_str().unwrap().to_owned());
            bills_seen += 1;
        }

        // Every attachment described as the sender's bytes are, kept, and read if a PDF.
        let files = stored["attachments"].as_array().unwrap();
        let expected = expect["attachments"].as_array().unwrap();
        assert_eq!(files.len(), expected.len(), "{name}");
        for (file, want) in files.iter().zip(expected) {
            assert_eq!(file["name"], want["filename"], "{name}");
            assert_eq!(file["size"], want["size"], "{name}");
            assert_eq!(file["sha256"], want["sha256"], "{name}");
            assert_eq!(file["content_type"], want["content_type"], "{name}");
            assert_eq!(file["stored"], true, "{name}");
            let reading = if want["content_type"] == "application/pdf" { "read" } else { "not_pdf" };
            assert_eq!(file["reading"], reading, "{name}");
        }
    }
    assert_eq!(bills_seen, 9, "nine boletos in eight messages");
    assert!(banks.len() >= 6, "{banks:?}");
}

#[tokio::test]
async fn a_scan_an_encrypted_a_broken_a_bomb_and_ten_thousand_pages_are_processed_with_their_reason() {
    let h = Harness::new();
    let hostile: Vec<_> = messages_in(CORPUS).into_iter().filter(|(_, _, e)| e.get("reason").is_some()).collect();
    let names: Vec<&str> = hostile.iter().map(|(n, ..)| n.as_str()).collect();
    assert_eq!(names, ["bomb", "broken", "encrypted", "many-pages", "scan"]);
    for (name, raw, expect) in hostile {
        let (_, stored) = ingest_and_process(&h, &name, &raw).await;
        assert_eq!(stored["status"], "processed", "{name}: a PDF not read is no failure of the e-mail: {stored}");
        assert_eq!(stored["extracted"], Value::Null, "{name}");
        assert_eq!(stored["bills"], json!([]), "{name}");
        assert_eq!(stored["reason"], expect["reason"], "{name}");
        assert_eq!(stored["error"], Value::Null, "{name}");
        assert_eq!(stored["attachments"][0]["reading"], expect["reason"], "{name}");
        assert_eq!(stored["attachments"][0]["stored"], true, "{name}: kept, for a person to open");
    }
}

#[tokio::test]
async fn a_kept_attachment_is_downloaded_by_a_short_lived_link_to_the_senders_bytes() {
    let h = Harness::new();
    let (_, raw, expect) = messages_in(CORPUS).into_iter().find(|(n, ..)| n == "two-boletos").unwrap();
    let (email_id, _) = ingest_and_process(&h, "two-boletos", &raw).await;
    let resp = send(h.api("GET", &format!("/emails/{email_id}/attachments/2"))).await;
    assert_eq!(resp.status, 302, "{}", String::from_utf8_lossy(&resp.body));
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    let location = resp.header("location").unwrap().to_owned();
    let data = resp.json()["data"].clone();
    assert_eq!(data["url"], location.as_str());
    assert_eq!(data["name"], "reserva-salao.pdf");
    assert_eq!(data["content_type"], "application/pdf");
    assert_eq!(data["sha256"], expect["attachments"][2]["sha256"]);
    assert_eq!(data["size"], expect["attachments"][2]["size"]);
    assert!(location.contains("X-Amz-Expires=300"), "{location}");

    // The link itself needs no token, and names the file for a browser to save.
    let fetched = reqwest::get(&location).await.unwrap();
    assert_eq!(fetched.status(), 200);
    let disposition = fetched.headers()["content-disposition"].to_str().unwrap().to_owned();
    assert!(disposition.starts_with("attachment;") && disposition.contains("reserva-salao.pdf"), "{disposition}");
    let bytes = fetched.bytes().await.unwrap();
    let pdf = std::fs::read(format!("{CORPUS}/{}", expect["bills"][1]["pdf"].as_str().unwrap())).unwrap();
    assert!(bytes[..] == pdf[..], "the sender's bytes, unchanged");

    // No such attachment, a non-canonical position, or a file only described: 404.
    for n in ["3", "02", "-1", "x", "99"] {
        let resp = send(h.api("GET", &format!("/emails/{email_id}/attachments/{n}"))).await;
        assert_eq!(resp.status, 404, "{n}: {}", String::from_utf8_lossy(&resp.body));
        assert_eq!(resp.json()["error"]["code"], "not_found");
    }
    let seeded = send(h.api("GET", "/emails/eml_telecom_nov/attachments/0")).await;
    assert_eq!(seeded.status, 404, "a JSON ingestion describes files it does not carry");
    // Another workspace's reader cannot name it.
    let other = h.token_for("usr_other", "org_other", "emails:read");
    let path = format!("/emails/{email_id}/attachments/2");
    let foreign = send(h.api("GET", &path).token(&other).header("x-workspace-id", "ws_other")).await;
    assert_eq!(foreign.status, 404, "{}", String::from_utf8_lossy(&foreign.body));
    assert!(foreign.header("location").is_none());
}

#[tokio::test]
async fn a_message_ingested_twice_keeps_its_files_once_and_a_rejected_senders_none() {
    let (h, bucket) = with_own_bucket();
    let (_, raw, _) = messages_in(CORPUS).into_iter().find(|(n, ..)| n == "two-boletos").unwrap();
    let (first, ..) = ingested(&send(post_message(&h, "inb_receipts", &raw)).await);
    let (again, ..) = ingested(&send(post_message(&h, "inb_receipts", &raw)).await);
    assert_eq!(first, again);
    let app = h.app().await;
    let objects = app.store.objects();
    assert_eq!(objects.bucket(), bucket);
    let mut keys = objects.keys_under("").await.unwrap();
    keys.sort();
    let expected: Vec<String> = (0..3).map(|n| format!("org_demo/ws_main/{first}/{n}")).collect();
    assert_eq!(keys, expected, "the duplicate's files were removed");

    // An inbox that takes allowed senders only: a stranger's message is
    // stored as rejected, its files not at all.
    let stranger = String::from_utf8(raw).unwrap().replace("secretaria@clube.example.com", "x@stranger.example.com");
    let resp =
        send(post_message(&h, "inb_bills", stranger.replace("two-boletos.2026", "stranger.2026").as_bytes())).await;
    let (rejected, status, _) = ingested(&resp);
    assert_eq!(status, "rejected");
    let stored = get(&h, &format!("/emails/{rejected}")).await["data"].clone();
    assert!(stored["attachments"].as_array().unwrap().iter().all(|a| a["stored"] == false), "{stored}");
    assert_eq!(objects.keys_under(&format!("org_demo/ws_main/{rejected}/")).await.unwrap(), Vec::<String>::new());
}
