//! Raw messages in (issue 45, its first part): the mail pipeline posts the
//! message as received (`Content-Type: message/rfc822`), the server reads it
//! (`inbox_mail`) and stores and processes it like the JSON form. The
//! messages are the ones Python's standard `email` package wrote
//! (crates/mail/tests/messages/make.py): UTF-8 quoted-printable, ISO-8859-1
//! base64, Windows-1252, HTML only, multipart with a PDF, a forwarded bill,
//! an authenticated one, two boletos híbridos (one with the Central Bank's
//! example Pix code) — each carries the same boleto line, which its job
//! must find, and the Pix code where there is one.

use crate::common::{self, Harness, Req, get, send};
use crate::jobs_and_webhooks::{ingested, run_job};
use inbox::domain::records::JobStatus;
use inbox::worker::Ran;
use serde_json::{Value, json};

const MESSAGES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/mail/tests/messages");

pub(crate) fn post_message<'a>(h: &'a Harness, inbox: &str, raw: &[u8]) -> Req<'a> {
    let token = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    h.api("POST", &format!("/inboxes/{inbox}/emails"))
        .token(&token)
        .header("x-workspace-id", "ws_main")
        .header("content-type", "message/rfc822")
        .raw(raw)
}

fn messages() -> Vec<(String, Vec<u8>, Value)> {
    messages_in(MESSAGES)
}

/// Every `.eml` of `dir` with the `.json` of what it must yield, by name.
pub(crate) fn messages_in(dir: &str) -> Vec<(String, Vec<u8>, Value)> {
    let mut found: Vec<(String, Vec<u8>, Value)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|entry| {
            let path = entry.unwrap().path();
            (path.extension()? == "eml").then(|| {
                let expect = std::fs::read_to_string(path.with_extension("json")).unwrap();
                let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&path).unwrap(), serde_json::from_str(&expect).unwrap())
            })
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

#[tokio::test]
async fn every_generated_message_is_ingested_raw_and_its_boleto_found() {
    let h = Harness::new();
    let all = messages();
    assert_eq!(all.len(), 9);
    for (name, raw, expect) in all {
        let resp = send(post_message(&h, "inb_receipts", &raw)).await;
        let (email_id, status, job_id) = ingested(&resp);
        assert_eq!(status, "received", "{name}");
        let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
        assert_eq!(stored["from"], expect["from"], "{name}: {stored}");
        assert_eq!(stored["to"], expect["to"], "{name}: {stored}");
        assert_eq!(stored["subject"], expect["subject"], "{name}: {stored}");
        assert_eq!(stored["message_id"], expect["message_id"], "{name}: {stored}");
        let verdicts = expect.get("verdicts").cloned().unwrap_or(Value::Null);
        assert_eq!(stored["authentication"], verdicts, "{name}: the receiving server's verdicts");
        assert_eq!(stored["received_at"], expect["date"].as_str().unwrap().replace('Z', ".000Z"), "{name}");
        let names: Vec<&Value> = expect["attachments"].as_array().unwrap().iter().map(|a| &a["name"]).collect();
        let stored_names: Vec<&Value> = stored["attachments"].as_array().unwrap().iter().map(|a| &a["name"]).collect();
        assert_eq!(stored_names, names, "{name}");

        assert_eq!(run_job(&h, &job_id).await, Ran::Finished(JobStatus::Succeeded), "{name}");
        let stored = get(&h, &format!("/emails/{email_id}")).await["data"].clone();
        assert_eq!(stored["status"], "processed", "{name}: {stored}");
        assert_eq!(stored["extracted"]["digitable_line"], "34191091233456780000701234567897116560000015990", "{name}");
        assert_eq!(stored["extracted"]["amount_cents"], 15_990, "{name}");
        // A Pix code beside the line is kept with it, the generator's fields exactly.
        // The payload kept is the one the generator wrote into the text.
        let mut pix = expect.get("pix").cloned().unwrap_or(Value::Null);
        if let Some(fields) = pix.as_object_mut() {
            let written =
                expect["text_has"].as_array().unwrap().iter().find(|t| t.as_str().unwrap().starts_with("000201"));
            fields.insert("payload".into(), written.unwrap().clone());
        }
        assert_eq!(stored["extracted"]["pix"], pix, "{name}");
        assert_eq!(stored["extracted"]["source"], "body", "{name}: the line is in the text");
        assert_eq!(stored["bills"].as_array().unwrap().len(), 1, "{name}: {stored}");
        let disagree = expect.get("amounts_disagree").cloned().unwrap_or(Value::Bool(false));
        assert_eq!(stored["extracted"]["amounts_disagree"], disagree, "{name}");
    }
}

#[tokio::test]
async fn a_message_id_ingested_twice_into_one_inbox_is_one_email() {
    let h = Harness::new();
    let (_, raw, _) = messages().into_iter().find(|(name, ..)| name == "mixed-pdf").unwrap();
    let first = send(post_message(&h, "inb_receipts", &raw)).await;
    let (email_id, _, job_id) = ingested(&first);
    let again = send(post_message(&h, "inb_receipts", &raw)).await;
    let (email_again, _, job_again) = ingested(&again);
    assert_eq!((email_again, job_again), (email_id.clone(), job_id), "the same e-mail and job");
    // The second call changed nothing, and its record says so.
    let auditor = h.token_for("usr_admin", "org_demo", common::ALL_SCOPES);
    let trail = send(h.api("GET", "/audit?limit=5").token(&auditor)).await.json();
    let ingestions: Vec<&Value> =
        trail["data"].as_array().unwrap().iter().filter(|r| r["operation"] == "email_ingest").collect();
    assert_eq!(ingestions.len(), 2, "{trail}");
    assert_eq!(
        (ingestions[0]["changed"].clone(), ingestions[0]["status"].clone()),
        (json!(false), json!(202)),
        "{trail}"
    );
    assert_eq!(ingestions[1]["changed"], true, "{trail}");
    let listed = get(&h, "/emails?inbox_id=inb_receipts").await;
    let count = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["message_id"] == "mixed-pdf@telecom.example.com")
        .count();
    assert_eq!(count, 1, "{listed}");

    // The JSON form names the same message: the same e-mail too.
    let token = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    let body = json!({"from": "cobranca@telecom.example.com", "to": "contas@demo.inbox.kobana.com.br",
                      "subject": "Fatura com anexo", "text": "", "message_id": "mixed-pdf@telecom.example.com"});
    let req =
        h.api("POST", "/inboxes/inb_receipts/emails").token(&token).header("x-workspace-id", "ws_main").json(&body);
    let (email_json, ..) = ingested(&send(req).await);
    assert_eq!(email_json, email_id);
    // With its angle brackets, as a pipeline may copy the header: the same message.
    let bracketed = json!({"from": "cobranca@telecom.example.com", "to": "contas@demo.inbox.kobana.com.br",
                           "subject": "Fatura com anexo", "text": "", "message_id": " <mixed-pdf@telecom.example.com> "});
    let req = h
        .api("POST", "/inboxes/inb_receipts/emails")
        .token(&token)
        .header("x-workspace-id", "ws_main")
        .json(&bracketed);
    assert_eq!(ingested(&send(req).await).0, email_id);

    // Another inbox takes it as an e-mail of its own.
    let (other, ..) = ingested(&send(post_message(&h, "inb_bills", &raw)).await);
    assert_ne!(other, email_id);
}

#[tokio::test]
async fn what_is_no_message_is_400_and_a_wrong_media_type_is_refused_storing_nothing() {
    let h = Harness::new();
    h.app().await;
    let before = common::table_dump_sorted(&h.table).await;
    for raw in [&b""[..], b"\x00\x01\x02\x03", b"just some text\r\nwith lines\r\n"] {
        let resp = send(post_message(&h, "inb_receipts", raw)).await;
        assert_eq!(resp.status, 400, "{raw:?}: {}", resp.json());
        let code = resp.json()["error"]["code"].clone();
        assert!(code == "invalid_message" || code == "invalid_body", "{raw:?}: {}", resp.json());
    }
    let no_sender = b"To: contas@demo.inbox.kobana.com.br\r\nSubject: hi\r\n\r\nbody\r\n";
    let resp = send(post_message(&h, "inb_receipts", no_sender)).await;
    assert_eq!(resp.status, 422, "{}", resp.json());
    assert_eq!(resp.json()["error"]["details"]["field"], "from");

    let token = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    let resp = send(
        h.api("POST", "/inboxes/inb_receipts/emails")
            .token(&token)
            .header("x-workspace-id", "ws_main")
            .header("content-type", "text/plain")
            .raw(b"From: a@b.example\r\n\r\nx"),
    )
    .await;
    assert_eq!(resp.status, 400, "{}", resp.json());
    assert_eq!(resp.json()["error"]["code"], "unsupported_media_type");
    // Only ingestion takes a message.
    let resp =
        send(h.api("PUT", "/inboxes").header("content-type", "message/rfc822").raw(b"From: a@b.example\r\n\r\nx"))
            .await;
    assert_eq!(resp.json()["error"]["code"], "unsupported_media_type", "{}", resp.json());
    let after: Vec<String> =
        common::table_dump_sorted(&h.table).await.into_iter().filter(|i| !i.contains("AUD#aud_")).collect();
    let before: Vec<String> = before.into_iter().filter(|i| !i.contains("AUD#aud_")).collect();
    assert_eq!(after, before, "nothing but audit records written");
}

/// Hostile messages: each limit answers as documented (docs/rest.md, "Two forms of
/// ingestion") and stores nothing; what is odd but readable is stored as read.
#[tokio::test]
async fn hostile_messages_are_refused_by_their_limits_or_stored_as_read() {
    let h = Harness::new();
    let head = "From: cobranca@telecom.example.com\r\nTo: contas@demo.inbox.kobana.com.br\r\nSubject: s\r\n";

    // A header section over 100 KiB: 400 invalid_message.
    let big_header = format!("{head}X-Pad: {}\r\n\r\nbody\r\n", "a".repeat(100 * 1024));
    let resp = send(post_message(&h, "inb_receipts", big_header.as_bytes())).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].clone()), (400, json!("invalid_message")), "{}", resp.json());

    // A message of 3 MiB (a bill with a large PDF) is taken; one over 4 MiB is 413, before
    // anything is read. JSON keeps its 1 MiB.
    let large = format!("{head}Message-ID: <large@x.example>\r\n\r\n{}", "a".repeat(3 * 1_048_576));
    let resp = send(post_message(&h, "inb_receipts", large.as_bytes())).await;
    assert_eq!(resp.status, 202, "{}", resp.json());
    let huge = format!("{head}\r\n{}", "a".repeat(4 * 1_048_576));
    let resp = send(post_message(&h, "inb_receipts", huge.as_bytes())).await;
    assert_eq!(resp.status, 413, "{}", resp.json());
    let token = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    let json_body =
        format!(r#"{{"from":"a@b.example","to":"c@d.example","subject":"s","text":"{}"}}"#, "a".repeat(1_048_576));
    let resp = send(
        h.api("POST", "/inboxes/inb_receipts/emails")
            .token(&token)
            .header("x-workspace-id", "ws_main")
            .raw(json_body.as_bytes()),
    )
    .await;
    assert_eq!(resp.status, 413, "{}", resp.json());
    // The larger limit is ingestion's alone: elsewhere the media type buys nothing.
    let two_mib = format!("{head}\r\n{}", "a".repeat(2 * 1_048_576));
    let resp = send(h.api("PUT", "/inboxes").header("content-type", "message/rfc822").raw(two_mib.as_bytes())).await;
    assert_eq!(resp.status, 413, "{}", resp.json());
    // The JSON form's text: 256 KiB of UTF-8 at most, whatever its count of characters.
    let wide = json!({"from": "a@b.example", "to": "c@d.example", "subject": "s", "text": "ç".repeat(140_000)});
    let resp = send(
        h.api("POST", "/inboxes/inb_receipts/emails").token(&token).header("x-workspace-id", "ws_main").json(&wide),
    )
    .await;
    assert_eq!(resp.status, 422, "{}", resp.json());
    assert_eq!(resp.json()["error"]["details"]["field"], "text");

    // 51 attachments: 422 naming attachments.
    let mut many = format!("{head}MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"B\"\r\n\r\n");
    for i in 0..51 {
        many.push_str(&format!("--B\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"f{i}.pdf\"\r\n\r\n%PDF\r\n"));
    }
    many.push_str("--B--\r\n");
    let resp = send(post_message(&h, "inb_receipts", many.as_bytes())).await;
    assert_eq!(resp.status, 422, "{}", resp.json());
    assert_eq!(resp.json()["error"]["details"]["field"], "attachments");

    // Parts nested past any sense: refused as too many parts, or read; never a crash.
    let mut nested = format!("{head}MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b0\"\r\n\r\n");
    for depth in 1..60 {
        nested.push_str(&format!("--b{}\r\nContent-Type: multipart/mixed; boundary=\"b{depth}\"\r\n\r\n", depth - 1));
    }
    nested.push_str("--b59\r\nContent-Type: text/plain\r\n\r\ndeep\r\n");
    let resp = send(post_message(&h, "inb_receipts", nested.as_bytes())).await;
    assert!(resp.status == 202 || resp.status == 400, "{}: {}", resp.status, resp.json());

    // An unknown charset and a missing boundary: stored with the text as read.
    let odd = format!(
        "{head}Message-ID: <odd@x.example>\r\nContent-Type: text/plain; charset=\"x-unknown-42\"\r\n\r\nLinha: 34191.09123 34567.800007 01234.567897 1 16560000015990\r\n"
    );
    let (id, ..) = ingested(&send(post_message(&h, "inb_receipts", odd.as_bytes())).await);
    let stored = get(&h, &format!("/emails/{id}")).await["data"].clone();
    assert!(stored["text"].as_str().unwrap().contains("34191.09123"), "{stored}");
    // A Date in the future is taken as now: it would pin the e-mail atop every list.
    let future =
        format!("{head}Message-ID: <future@x.example>\r\nDate: Mon, 1 Jan 2091 00:00:00 +0000\r\n\r\nbody\r\n");
    let (id, ..) = ingested(&send(post_message(&h, "inb_receipts", future.as_bytes())).await);
    let stored = get(&h, &format!("/emails/{id}")).await["data"].clone();
    let instant = |field: &str| {
        let text = stored[field].as_str().unwrap();
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap()
    };
    assert!(
        (instant("created_at") - instant("received_at")).abs() < time::Duration::seconds(5),
        "taken as now: {stored}"
    );
    let no_boundary = format!("{head}Content-Type: multipart/mixed\r\n\r\nLinha digitável aqui\r\n");
    let resp = send(post_message(&h, "inb_receipts", no_boundary.as_bytes())).await;
    assert_eq!(resp.status, 202, "{}", resp.json());
}
