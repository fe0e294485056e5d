//! Personal data (LGPD): retention that hides content the moment it expires
//! and a purge that removes it for good; erasure that leaves no byte of an
//! e-mail anywhere the service copied it; a data subject's export and
//! erasure found through the identifier index, never across organizations;
//! and an organization's purge that removes its items and files and nothing
//! of another's.

use std::collections::BTreeSet;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::common::{self, Harness, get, send, table_dump_sorted};
use crate::jobs_and_webhooks::{ingested, run_job};
use crate::raw_mail::post_message;
use inbox::domain::records::JobStatus;
use inbox::worker::Ran;

/// A CPF and a CNPJ with valid check digits, and another CPF.
const CPF: &str = "529.982.247-25";
const CNPJ: &str = "11.222.333/0001-81";
const OTHER_CPF: &str = "123.456.789-09";

/// The demo organization's administrator, with `org:admin`.
fn org_admin(h: &Harness) -> String {
    h.token_for("usr_admin", "org_demo", common::ALL_SCOPES)
}

/// A GET of the organization's routes that must succeed.
async fn org_get(h: &Harness, path: &str) -> Value {
    let resp = send(h.api("GET", path).token(&org_admin(h))).await;
    assert_eq!(resp.status, 200, "GET {path}: {}", String::from_utf8_lossy(&resp.body));
    resp.json()
}

fn harness() -> Harness {
    // Policy changes (retention) seen at once.
    Harness::with_config(|c| c.membership_cache = Duration::ZERO)
}

/// A one-page PDF whose text layer is `text` (Helvetica, uncompressed).
fn pdf(text: &str) -> Vec<u8> {
    let content = format!("BT /F1 10 Tf 40 700 Td ({text}) Tj ET");
    let objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_vec(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()).into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n", i + 1).into_bytes());
        out.extend(body);
        out.extend(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).into_bytes());
    for o in offsets {
        out.extend(format!("{o:010} 00000 n \n").into_bytes());
    }
    out.extend(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).into_bytes(),
    );
    out
}

/// A static Pix code ("copia e cola") whose key is `key`.
fn pix_code(key: &str) -> String {
    let field = |id: &str, value: &str| format!("{id}{:02}{value}", value.len());
    let account = field("00", "br.gov.bcb.pix") + &field("01", key);
    let body = field("00", "01")
        + &field("26", &account)
        + &field("52", "0000")
        + &field("53", "986")
        + &field("54", "150.00")
        + &field("58", "BR")
        + &field("59", "FULANO DE TAL")
        + &field("60", "SAO PAULO")
        + &field("62", &field("05", "***"))
        + "6304";
    let crc = inbox::domain::pix::crc16(body.as_bytes());
    format!("{body}{crc:04X}")
}

/// A raw message from `from` with `subject`, `body` and one PDF attachment.
fn message(from: &str, subject: &str, body: &str, pdf_bytes: &[u8], date: &str) -> Vec<u8> {
    let encoded = base64::engine::general_purpose::STANDARD.encode(pdf_bytes);
    let lines: Vec<&str> =
        encoded.as_bytes().chunks(76).map(|c| std::str::from_utf8(c).expect("base64 is ASCII")).collect();
    format!(
        "From: {from}\r\nTo: receipts@inbox.example\r\nSubject: {subject}\r\nDate: {date}\r\n\
         Message-ID: <{}@sender.example>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"B\"\r\n\r\n\
         --B\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n\
         --B\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"fatura.pdf\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{}\r\n--B--\r\n",
        inbox::sys::new_id(inbox::domain::ids::Kind::Event),
        lines.join("\r\n"),
    )
    .into_bytes()
}

/// An RFC 2822 date `days` ago.
fn days_ago(days: i64) -> String {
    let at = inbox::sys::now() - time::Duration::days(days);
    at.format(&time::format_description::well_known::Rfc2822).expect("a date")
}

/// Ingests `raw` into `inb_receipts` and runs its job; the e-mail's id.
async fn ingest_and_process(h: &Harness, raw: &[u8]) -> String {
    let resp = send(post_message(h, "inb_receipts", raw)).await;
    let (id, _, job) = ingested(&resp);
    assert_eq!(run_job(h, &job).await, Ran::Finished(JobStatus::Succeeded));
    id
}

/// Ingests a JSON e-mail into `inb_receipts` and runs its job; its id.
async fn ingest_json(h: &Harness, from: &str, subject: &str, text: &str) -> String {
    let token = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    let resp = send(
        h.api("POST", "/inboxes/inb_receipts/emails")
            .token(&token)
            .header("x-workspace-id", "ws_main")
            .json(&json!({"from": from, "to": "receipts@inbox.example", "subject": subject, "text": text})),
    )
    .await;
    let (id, _, job) = ingested(&resp);
    assert_eq!(run_job(h, &job).await, Ran::Finished(JobStatus::Succeeded));
    id
}

async fn files_of(h: &Harness, email_id: &str) -> Vec<String> {
    h.app().await.store.objects().keys_under(&format!("org_demo/ws_main/{email_id}/")).await.unwrap()
}

/// Every item of the table that holds `needle` anywhere.
async fn items_holding(h: &Harness, needle: &str) -> Vec<String> {
    table_dump_sorted(&h.table).await.into_iter().filter(|item| item.contains(needle)).collect()
}

#[tokio::test]
async fn content_past_retention_is_hidden_at_once_and_the_daily_purge_removes_it() {
    let h = harness();
    let set = send(h.api("PUT", "/workspace/retention").json(&json!({"retention_days": 3}))).await;
    assert_eq!(set.status, 200, "{}", String::from_utf8_lossy(&set.body));
    assert_eq!(set.json()["data"], json!({"workspace_id": "ws_main", "retention_days": 3, "previous": 365}));
    assert_eq!(get(&h, "/workspace").await["data"]["retention_days"], 3);

    // Retention counts from when the inbox stored an e-mail, not from the
    // date its sender wrote: one dated a year ago is kept three days from now.
    let line = "34191.09123 34567.800007 01234.567897 1 16560000015990";
    let raw = message("billing@telecom.example", "Fatura nova", "Segue a fatura nova.", &pdf(line), &days_ago(365));
    let fresh = ingest_and_process(&h, &raw).await;
    assert_eq!(files_of(&h, &fresh).await.len(), 1);
    let kept = get(&h, &format!("/emails/{fresh}")).await["data"].clone();
    assert_eq!(kept["subject"], "Fatura nova");
    assert!(kept.get("content_purged_at").is_none(), "{kept}");

    // The demo e-mails were stored in November: past three days already.
    // Before any purge ran, reads hide their content...
    let read = get(&h, "/emails/eml_telecom_nov").await["data"].clone();
    assert_eq!((read["subject"].as_str(), read["text"].as_str()), (Some(""), Some("")), "{read}");
    assert_eq!(read["attachments"][0]["name"], "", "{read}");
    assert_eq!(read["content_purged_at"], "2026-11-24T10:15:00.000Z", "stored 11-21, kept three days: {read}");
    assert_eq!(read["extracted"]["digitable_line"], "34191091233456780000701234567897116560000015990", "kept");
    let listed = get(&h, "/emails?inbox_id=inb_bills").await;
    let in_list = listed["data"].as_array().unwrap().iter().find(|e| e["id"] == "eml_telecom_nov").unwrap().clone();
    assert_eq!(in_list["subject"], "", "{in_list}");
    // ... and reprocessing has nothing left to read.
    let again = send(h.api("POST", "/emails/eml_telecom_nov/reprocess")).await;
    assert_eq!((again.status, again.json()["error"]["code"].clone()), (409, json!("content_purged")));
    // The table still holds it (the purge has not run).
    assert!(!items_holding(&h, "Sua fatura de novembro").await.is_empty());

    // The purge at today's time: the demo e-mails' content goes (but the one
    // being processed: the next purge takes it); the fresh one stays.
    let runner = &h.app().await.runner;
    let swept = inbox::worker::privacy::sweep(runner, inbox::sys::now()).await.unwrap();
    assert_eq!((swept.purged, swept.workspaces), (5, 3), "{swept:?}");
    assert!(items_holding(&h, "Sua fatura de novembro").await.is_empty(), "the subject is gone from the table");
    let after = get(&h, "/emails/eml_telecom_nov").await["data"].clone();
    assert_eq!(after["content_purged_at"], read["content_purged_at"], "the same moment as reads showed");
    assert_eq!(after["extracted"], read["extracted"]);
    assert_eq!(files_of(&h, &fresh).await.len(), 1);
    assert!(!items_holding(&h, "Fatura nova").await.is_empty());

    // The clock moves four days: the fresh one is past retention too, files and all.
    let later = inbox::sys::now() + time::Duration::days(4);
    let swept = inbox::worker::privacy::sweep(runner, later).await.unwrap();
    assert_eq!(swept.purged, 1, "{swept:?}");
    assert_eq!(swept.files, 1, "{swept:?}");
    assert!(items_holding(&h, "Fatura nova").await.is_empty());
    assert!(items_holding(&h, "Segue a fatura nova.").await.is_empty(), "the body is gone from the table");
    assert!(files_of(&h, &fresh).await.is_empty(), "the file is gone from the object store");
    // A purge finds nothing more to do.
    assert_eq!(inbox::worker::privacy::sweep(runner, later).await.unwrap().purged, 0);
}

#[tokio::test]
async fn retention_is_between_one_day_and_ten_years_and_an_admins_change() {
    let h = harness();
    for (bad, status) in [
        (json!({"retention_days": 0}), 422),
        (json!({"retention_days": 3651}), 422),
        (json!({"retention_days": "30"}), 400),
        (json!({}), 400),
    ] {
        let resp = send(h.api("PUT", "/workspace/retention").json(&bad)).await;
        assert_eq!(resp.status, status, "{bad}: {}", String::from_utf8_lossy(&resp.body));
        assert_eq!(
            resp.json()["error"]["details"]["field"],
            "retention_days",
            "{bad}: {}",
            String::from_utf8_lossy(&resp.body)
        );
    }
    assert_eq!(get(&h, "/workspace").await["data"]["retention_days"], 365, "nothing changed");
    let operator = h.token_for("usr_operator", "org_demo", common::ALL_SCOPES);
    let resp = send(h.api("PUT", "/workspace/retention").token(&operator).json(&json!({"retention_days": 30}))).await;
    assert_eq!(resp.status, 403, "{}", String::from_utf8_lossy(&resp.body));
}

#[tokio::test]
async fn an_erased_email_leaves_no_byte_of_what_it_said_anywhere() {
    let h = harness();
    let receiver = crate::jobs_and_webhooks::Receiver::start().await;
    crate::jobs_and_webhooks::register_webhook(&h, &receiver.url()).await;
    let sender = "maria.erasable@sender.example";
    let subject = "Cobranca unica Zyxwvut";
    let body = "Corpo irrepetivel Qponmlk com a linha 34191.09123 34567.800007 01234.567897 1 16560000015990";
    let raw = message(sender, subject, body, &pdf(&format!("CPF {CPF} Pix {}", pix_code("52998224725"))), &days_ago(1));
    let id = ingest_and_process(&h, &raw).await;
    assert_eq!(files_of(&h, &id).await.len(), 1);
    for needle in [sender, "Zyxwvut", "Qponmlk"] {
        assert!(!items_holding(&h, needle).await.is_empty(), "{needle} is stored before");
    }
    let delivered = items_holding(&h, "email.processed").await;
    assert!(delivered.iter().any(|item| item.contains(&id)), "the webhook event copied it");

    // Deleted first (soft), then erased: both are allowed.
    assert_eq!(send(h.api("DELETE", &format!("/emails/{id}"))).await.status, 200);
    let resp = send(h.api("POST", &format!("/emails/{id}/erase"))).await;
    assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
    let data = resp.json()["data"].clone();
    assert_eq!((data["erased"].clone(), data["already_erased"].clone()), (json!(true), json!(false)), "{data}");
    assert_eq!(data["files"], 1, "{data}");
    assert_eq!(data["jobs"], 1, "{data}");
    // The test webhook's and the demo webhook's stored events.
    assert_eq!(data["deliveries"], 2, "{data}");
    assert!(data["index_entries"].as_u64().unwrap() >= 2, "{data}");

    // The body's line is in the demo e-mails too: the unique words and the Pix merchant stand for it.
    for needle in [sender, "Zyxwvut", "Qponmlk", "FULANO DE TAL"] {
        assert_eq!(items_holding(&h, needle).await, Vec::<String>::new(), "{needle} is left in the table");
    }
    assert!(files_of(&h, &id).await.is_empty(), "the file is left in the object store");
    // What remains: a tombstone with its id, times and who erased it.
    let tombstone = items_holding(&h, &format!("EML#{id}")).await;
    assert_eq!(tombstone.len(), 1, "{tombstone:?}");
    assert!(tombstone[0].contains("usr_admin") && tombstone[0].contains("expires_at"), "{tombstone:?}");
    assert_eq!(send(h.api("GET", &format!("/emails/{id}"))).await.status, 404);
    // A resend of the delivery cannot send what is gone.
    // Again: answered, nothing left to remove.
    let again = send(h.api("POST", &format!("/emails/{id}/erase"))).await;
    assert_eq!(again.status, 200, "{}", String::from_utf8_lossy(&again.body));
    assert_eq!(again.json()["data"]["already_erased"], true);
    assert_eq!(again.json()["data"]["files"], 0);
    // Unknown and foreign e-mails are not found; the trail has the erasure.
    assert_eq!(send(h.api("POST", "/emails/eml_other_1/erase")).await.status, 404);
    let trail = send(h.api("GET", "/audit?limit=5").token(&org_admin(&h))).await.json();
    assert!(
        trail["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["operation"] == "email_erase" && r["target_id"] == json!(id)),
        "{trail}"
    );
    // An operator may not erase.
    let operator = h.token_for("usr_operator", "org_demo", common::ALL_SCOPES);
    assert_eq!(send(h.api("POST", "/emails/eml_demo_1/erase").token(&operator)).await.status, 403);
}

/// Runs every queued data-subject request (what the stream does on AWS).
async fn run_requests(h: &Harness) {
    let app = h.app().await;
    for (org, id) in app.store.queued_data_requests().await.unwrap() {
        let ran = inbox::worker::privacy::run_data_request(&app.runner, &org, &id).await.unwrap();
        assert_eq!(ran, inbox::worker::privacy::RequestRan::Finished(JobStatus::Succeeded), "{id}");
    }
}

async fn data_request(h: &Harness, kind: &str, identifier: &str) -> String {
    let resp = send(
        h.api("POST", "/org/data_requests").token(&org_admin(h)).json(&json!({"kind": kind, "identifier": identifier})),
    )
    .await;
    assert_eq!(resp.status, 202, "{}", String::from_utf8_lossy(&resp.body));
    let data = resp.json()["data"].clone();
    assert_eq!(data["status"], "queued", "{data}");
    assert!(
        !String::from_utf8_lossy(&resp.body).contains("52998224725")
            && !String::from_utf8_lossy(&resp.body).contains("982.247"),
        "the identifier is masked"
    );
    data["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_data_subjects_export_and_erasure_find_exactly_the_emails_that_name_them() {
    let h = harness();
    // In the body; in an attachment's Pix key (the decoded bill); a
    // formatted CNPJ in the subject; another person; another organization.
    let in_body =
        ingest_json(&h, "cobranca@loja.example", "Sua compra", &format!("Cliente CPF {CPF}, obrigado.")).await;
    let in_file = ingest_and_process(
        &h,
        &message("pix@banco.example", "Pix", "Segue o Pix em anexo.", &pdf(&pix_code("52998224725")), &days_ago(1)),
    )
    .await;
    let with_cnpj = ingest_json(&h, "nf@fornecedor.example", &format!("NF do CNPJ {CNPJ}"), "Nota fiscal.").await;
    let someone_else = ingest_json(&h, "x@loja.example", "Outra", &format!("CPF {OTHER_CPF}")).await;
    let other_org = {
        let token = h.token_for("svc_mailpipe", "org_other", "emails:ingest");
        let resp =
            send(h.api("POST", "/inboxes/inb_other/emails").token(&token).header("x-workspace-id", "ws_other").json(
                &json!({"from": "a@b.example", "to": "c@d.example", "subject": "s", "text": format!("CPF {CPF}")}),
            ))
            .await;
        let (id, _, job) = ingested(&resp);
        let app = h.app().await;
        let tenant = inbox::domain::Tenant::new(
            inbox::domain::OrgId::parse("org_other").unwrap(),
            inbox::domain::WorkspaceId::parse("ws_other").unwrap(),
            inbox::domain::Role::Viewer,
        );
        inbox::worker::run(&app.runner, &tenant, &job).await.unwrap();
        id
    };
    // The index holds digests, never the number.
    assert!(items_holding(&h, "52998224725").await.iter().all(|i| !i.contains("#DS#")));

    // Export by the bare digits: the two e-mails naming the CPF, no other.
    let export = data_request(&h, "export", "52998224725").await;
    run_requests(&h).await;
    let followed = org_get(&h, &format!("/org/data_requests/{export}")).await["data"].clone();
    assert_eq!((followed["status"].clone(), followed["emails"].clone()), (json!("succeeded"), json!(2)), "{followed}");
    assert_eq!(followed["identifier"], "cpf ***.***.***-25");
    assert!(followed["document"]["url"].is_string(), "{followed}");
    let app = h.app().await;
    let org = inbox::domain::OrgId::parse("org_demo").unwrap();
    let bytes = app.store.objects().get(&inbox::store::privacy::export_key(&org, &export)).await.unwrap().unwrap();
    let document: Value = serde_json::from_slice(&bytes).unwrap();
    let found: BTreeSet<&str> =
        document["emails"].as_array().unwrap().iter().map(|e| e["email"]["id"].as_str().unwrap()).collect();
    assert_eq!(found, BTreeSet::from([in_body.as_str(), in_file.as_str()]), "{document}");
    assert!(!found.contains(other_org.as_str()));
    let body_copy = document["emails"].as_array().unwrap().iter().find(|e| e["email"]["id"] == json!(in_body)).unwrap();
    assert_eq!(body_copy["email"]["text"], format!("Cliente CPF {CPF}, obrigado."), "the whole record is exported");

    // The CNPJ typed without punctuation finds the formatted one.
    let cnpj = data_request(&h, "export", "11222333000181").await;
    run_requests(&h).await;
    assert_eq!(org_get(&h, &format!("/org/data_requests/{cnpj}")).await["data"]["emails"], 1);

    // Erasure: exactly those two go; the others are untouched.
    let erase = data_request(&h, "erase", CPF).await;
    run_requests(&h).await;
    let followed = org_get(&h, &format!("/org/data_requests/{erase}")).await["data"].clone();
    assert_eq!((followed["status"].clone(), followed["emails"].clone()), (json!("succeeded"), json!(2)), "{followed}");
    assert!(followed.get("document").is_none(), "an erasure has no document");
    for gone in [&in_body, &in_file] {
        assert_eq!(send(h.api("GET", &format!("/emails/{gone}"))).await.status, 404, "{gone}");
    }
    for kept in [&with_cnpj, &someone_else] {
        assert_eq!(send(h.api("GET", &format!("/emails/{kept}"))).await.status, 200, "{kept}");
    }
    assert!(items_holding(&h, "Cliente CPF").await.is_empty());
    let other_admin = h.token_for("usr_other", "org_other", common::ALL_SCOPES);
    let still =
        send(h.api("GET", &format!("/emails/{other_org}")).token(&other_admin).header("x-workspace-id", "ws_other"))
            .await;
    assert_eq!(still.status, 200, "another organization's e-mail is untouched");
    // Another organization's administrator cannot follow this one's request.
    let foreign = send(h.api("GET", &format!("/org/data_requests/{export}")).token(&other_admin)).await;
    assert_eq!(foreign.status, 404);
}

#[tokio::test]
async fn a_data_request_refuses_what_is_no_cpf_or_cnpj_and_is_for_org_admins() {
    let h = harness();
    for (identifier, why) in [
        ("529.982.247-26", "check digits"),
        ("111.111.111-11", "repeated"),
        ("1234", "shape"),
        ("12.ABC.345/01DE-36", "check digits"),
    ] {
        let resp = send(
            h.api("POST", "/org/data_requests")
                .token(&org_admin(&h))
                .json(&json!({"kind": "export", "identifier": identifier})),
        )
        .await;
        assert_eq!(resp.status, 422, "{why}: {}", String::from_utf8_lossy(&resp.body));
        assert_eq!(
            resp.json()["error"]["details"]["field"],
            "identifier",
            "{why}: {}",
            String::from_utf8_lossy(&resp.body)
        );
        assert!(!String::from_utf8_lossy(&resp.body).contains(identifier), "the refusal does not repeat the value");
    }
    let resp = send(
        h.api("POST", "/org/data_requests")
            .token(&org_admin(&h))
            .json(&json!({"kind": "export", "identifier": "12.ABC.345/01DE-35"})),
    )
    .await;
    assert_eq!(resp.status, 202, "the alphanumeric CNPJ: {}", String::from_utf8_lossy(&resp.body));
    let viewer = h.token_for("usr_operator", "org_demo", common::ALL_SCOPES);
    let resp =
        send(h.api("POST", "/org/data_requests").token(&viewer).json(&json!({"kind": "export", "identifier": CPF})))
            .await;
    assert_eq!(resp.status, 403, "{}", String::from_utf8_lossy(&resp.body));
    assert_eq!(send(h.api("GET", "/org/data_requests/dsr_nope").token(&org_admin(&h))).await.status, 404);
}

/// A harness with a bucket of its own: a purge removes an organization's
/// files by prefix, and the demo organizations' prefixes are every test's.
fn harness_with_own_bucket() -> (Harness, String) {
    let bucket = format!("b{}", common::unique_table());
    let named = bucket.clone();
    let h = Harness::with_config(move |c| {
        c.membership_cache = Duration::ZERO;
        c.store.bucket = named.clone();
    });
    (h, bucket)
}

#[tokio::test]
async fn an_organizations_purge_removes_its_items_and_files_and_nothing_of_another() {
    let (h, _) = harness_with_own_bucket();
    let raw = message("a@sender.example", "Purged", "Body", &pdf("text"), &days_ago(1));
    let id = ingest_and_process(&h, &raw).await;
    let app = h.app().await;
    let objects = app.store.objects();
    objects.put("org_other/ws_other/eml_x/0", b"other".to_vec(), "application/pdf", &sha256(b"other")).await.unwrap();
    assert_eq!(files_of(&h, &id).await.len(), 1);
    let before = table_dump_sorted(&h.table).await;
    let demo = |item: &String| item.contains(r#"S(\"T#org_demo\")"#) || item.contains(r#"S(\"T#org_demo#"#);
    assert!(before.iter().any(&demo) && before.iter().any(|i| !demo(i)));

    let org = inbox::domain::OrgId::parse("org_demo").unwrap();
    let dry = app.store.purge_org(&org, true).await.unwrap();
    assert_eq!(table_dump_sorted(&h.table).await, before, "a dry run writes nothing");
    assert_eq!(files_of(&h, &id).await.len(), 1);
    assert!(dry.items.get("EML").copied().unwrap_or(0) >= 1, "{dry:?}");

    let done = app.store.purge_org(&org, false).await.unwrap();
    assert_eq!(done, dry, "the evidence counts what the dry run counted");
    let after = table_dump_sorted(&h.table).await;
    let expected: Vec<String> = before.iter().filter(|i| !demo(i) || i.contains(r#"S(\"AUD#"#)).cloned().collect();
    assert_eq!(after, expected, "every item of org_demo but its audit records is gone, nothing else changed");
    assert_eq!(done.audit_records_kept, after.iter().filter(|i| demo(i)).count() as u64);
    assert!(objects.keys_under("org_demo/").await.unwrap().is_empty());
    assert_eq!(objects.keys_under("org_other/").await.unwrap(), vec!["org_other/ws_other/eml_x/0".to_owned()]);
}

fn sha256(bytes: &[u8]) -> Vec<u8> {
    aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, bytes).as_ref().to_vec()
}

#[tokio::test]
async fn the_operators_purge_command_asks_for_yes_counts_on_a_dry_run_and_prints_its_evidence() {
    let (h, bucket) = harness_with_own_bucket();
    let raw = message("a@sender.example", "Purged by the CLI", "Body", &pdf("text"), &days_ago(1));
    let id = ingest_and_process(&h, &raw).await;
    let purge = |args: &[&str]| {
        let mut line = vec!["org", "purge", "--org", "org_demo"];
        line.extend_from_slice(args);
        crate::tenancy_admin::cli_env(&h, &line, &[("ATTACHMENTS_BUCKET", &bucket)])
    };
    let before = table_dump_sorted(&h.table).await;

    let (code, _, stderr) = purge(&[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--yes"), "{stderr}");
    let (code, stdout, stderr) = purge(&["--dry-run"]);
    assert_eq!(code, 0, "{stderr}");
    let evidence: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!((evidence["dry_run"].clone(), evidence["erased"].clone()), (json!(true), Value::Null), "{evidence}");
    assert!(evidence["would_erase"]["EML"].as_u64().unwrap() >= 1, "{evidence}");
    assert_eq!(evidence["files"], 1, "{evidence}");
    assert_eq!(table_dump_sorted(&h.table).await, before, "a dry run writes nothing");
    assert_eq!(files_of(&h, &id).await.len(), 1);

    let (code, stdout, stderr) = purge(&["--yes", "--as", "ops@kobana"]);
    assert_eq!(code, 0, "{stderr}");
    let evidence: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!((evidence["organization"].clone(), evidence["by"].clone()), (json!("org_demo"), json!("ops@kobana")));
    assert!(evidence["erased"]["EML"].as_u64().unwrap() >= 1, "{evidence}");
    assert!(files_of(&h, &id).await.is_empty());
    let left: Vec<String> = table_dump_sorted(&h.table)
        .await
        .into_iter()
        .filter(|i| i.contains(r#"S(\"T#org_demo"#) && !i.contains(r#"S(\"AUD#"#))
        .collect();
    assert_eq!(left, Vec::<String>::new(), "only the audit trail of org_demo is left");
    assert!(evidence["audit_records_kept"].as_u64().unwrap() >= 1, "{evidence}");
}

#[tokio::test]
async fn a_deleted_email_leaves_the_table_after_its_grace_period_and_the_stream_takes_its_files() {
    use crate::jobs_and_webhooks::{handle_stream, stream_record};
    let h = harness();
    let raw = message("pix@banco.example", "Pix", &format!("CPF {CPF}"), &pdf(&pix_code("52998224725")), &days_ago(1));
    let id = ingest_and_process(&h, &raw).await;
    assert_eq!(send(h.api("DELETE", &format!("/emails/{id}"))).await.status, 200);
    // The table's TTL will remove it 30 days after its deletion.
    let app = h.app().await;
    let item = app.store.all_items().await.unwrap().into_iter().find(
        |i| matches!(i.get("sk"), Some(aws_sdk_dynamodb::types::AttributeValue::S(sk)) if *sk == format!("EML#{id}")),
    );
    let expires = match item.as_ref().and_then(|i| i.get("expires_at")) {
        Some(aws_sdk_dynamodb::types::AttributeValue::N(n)) => n.parse::<u64>().unwrap(),
        other => panic!("no expiry on the deleted e-mail: {other:?}"),
    };
    let grace = expires.abs_diff(inbox::sys::unix_now() + 30 * 86_400);
    assert!(grace < 120, "30 days after the deletion: {expires}");
    assert!(!items_holding(&h, &format!("IDX#{id}#")).await.is_empty(), "indexed");

    // The TTL removes the item; the stream's REMOVE takes the files and the index with it.
    common::dynamodb_client()
        .delete_item()
        .table_name(&h.table)
        .key("pk", aws_sdk_dynamodb::types::AttributeValue::S("T#org_demo#W#ws_main".into()))
        .key("sk", aws_sdk_dynamodb::types::AttributeValue::S(format!("EML#{id}")))
        .send()
        .await
        .unwrap();
    let mut removed = stream_record("REMOVE", "401", &format!("EML#{id}"), &id);
    removed["userIdentity"] = json!({"type": "Service", "principalId": "dynamodb.amazonaws.com"});
    assert!(handle_stream(&h, vec![removed]).await.is_empty(), "nothing to deliver again");
    assert!(files_of(&h, &id).await.is_empty());
    assert!(items_holding(&h, &format!("IDX#{id}#")).await.is_empty());
    assert!(items_holding(&h, &format!("ws_main#{id}")).await.is_empty(), "the lookup side too");
}

#[tokio::test]
async fn a_data_request_is_run_by_the_stream_once() {
    use crate::jobs_and_webhooks::{handle_stream, stream_record};
    let h = harness();
    ingest_json(&h, "cobranca@loja.example", "Sua compra", &format!("Cliente CPF {CPF}")).await;
    let id = data_request(&h, "export", CPF).await;
    let inserted = stream_record("INSERT", "501", &format!("DSR#{id}"), &id);
    assert!(handle_stream(&h, vec![inserted.clone(), inserted]).await.is_empty());
    let followed = org_get(&h, &format!("/org/data_requests/{id}")).await["data"].clone();
    assert_eq!((followed["status"].clone(), followed["emails"].clone()), (json!("succeeded"), json!(1)), "{followed}");
    assert!(h.app().await.store.queued_data_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_email_stored_before_copies_were_referenced_has_them_found_and_emptied_all_the_same() {
    let h = harness();
    // The demo e-mail, its job and its deliveries predate the references.
    let resp = send(h.api("POST", "/emails/eml_telecom_nov/erase")).await;
    assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
    let data = resp.json()["data"].clone();
    assert_eq!(data["jobs"], 1, "{data}");
    assert!(data["deliveries"].as_u64().unwrap_or(0) >= 2, "{data}");
    let job = get(&h, "/jobs/job_demo").await["data"].clone();
    assert_eq!(job["result"], json!({"email_id": "eml_telecom_nov", "erased": true}), "{job}");
    assert!(items_holding(&h, "eml_telecom_nov").await.iter().all(|i| !i.contains(r#"\"payload\""#)), "no event left");
    // A delivery whose event was erased cannot be sent again, and says why.
    let resend = send(h.api("POST", "/webhook_deliveries/dlv_demo_failed/resend")).await;
    let job = resend.json()["data"]["job"]["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(run_job(&h, &job).await, Ran::Finished(JobStatus::Failed));
    let failed = get(&h, &format!("/jobs/{job}")).await["data"].clone();
    assert!(failed["error"].as_str().unwrap_or_default().contains("erased"), "{failed}");
}

#[tokio::test]
async fn a_data_request_whose_run_ended_midway_is_taken_over_once_its_lease_lapses() {
    let h = harness();
    ingest_json(&h, "cobranca@loja.example", "Sua compra", &format!("Cliente CPF {CPF}")).await;
    let id = data_request(&h, "erase", CPF).await;
    let app = h.app().await;
    let org = inbox::domain::OrgId::parse("org_demo").unwrap();
    // A run took it and died: while its lease holds, nobody else runs it.
    assert!(app.store.lease_data_request(&org, &id).await.unwrap().is_some());
    let held = inbox::worker::privacy::run_data_request(&app.runner, &org, &id).await.unwrap();
    assert_eq!(held, inbox::worker::privacy::RequestRan::Skipped);
    assert!(app.store.queued_data_requests().await.unwrap().is_empty(), "not to run while held");
    // Once it lapses, the next run (the stream's retry, the daily run, the local poller) takes it over.
    common::dynamodb_client()
        .update_item()
        .table_name(&h.table)
        .key("pk", aws_sdk_dynamodb::types::AttributeValue::S("T#org_demo".into()))
        .key("sk", aws_sdk_dynamodb::types::AttributeValue::S(format!("DSR#{id}")))
        .update_expression("SET lease_until = :past")
        .expression_attribute_values(":past", aws_sdk_dynamodb::types::AttributeValue::N("1".into()))
        .send()
        .await
        .unwrap();
    assert_eq!(app.store.queued_data_requests().await.unwrap(), vec![(org.clone(), id.clone())]);
    run_requests(&h).await;
    let followed = org_get(&h, &format!("/org/data_requests/{id}")).await["data"].clone();
    assert_eq!((followed["status"].clone(), followed["emails"].clone()), (json!("succeeded"), json!(1)), "{followed}");
}
