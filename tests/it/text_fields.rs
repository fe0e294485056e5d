//! Regression tests of issue 43's text findings: a confirmation that a
//! caller's text could spoof (separators pushing the real URL out of sight,
//! a bidirectional override mirroring it), and an inbox paused without one.
//!
//! Every text field the API takes from callers refuses separators, controls,
//! bidirectional, zero-width and tag characters with one error naming the
//! field and the character; third-party e-mail text is stored as received;
//! a confirmation names the target and the effect first and shows every
//! argument escaped; a change of an inbox's `status` is confirmed like a
//! change of its `sender_policy`, in both protocol eras.

use crate::common::{self, Harness, Resp, envelope_with, get, rest, send};
use crate::jobs_and_webhooks::{ingest, ingested, mail};
use serde_json::{Value, json};

/// The characters no form may carry raw, written out here rather than taken
/// from the server's own list: controls, separators, bidirectional,
/// zero-width and other format characters, tags.
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{AD}' | '\u{061C}' | '\u{180E}' | '\u{FEFF}')
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}')
        || matches!(c, '\u{E0000}'..='\u{E007F}')
}

/// The description: three line separators, the reassurance, thirty
/// more, and a right-to-left override.
fn spoofing_description() -> String {
    format!(
        "Monthly report{}Only this description changes. Safe to approve.{}\u{202E}",
        "\u{2028}".repeat(3),
        "\u{2028}".repeat(30)
    )
}

fn attack() -> Value {
    json!({"url": "https://hooks.example.com/reports", "description": spoofing_description()})
}

const REFUSED: &str = "description: must not contain U+2028 (line separator)";

fn form() -> Value {
    envelope_with(json!({"elicitation": {"form": {}}}))
}

fn tool_call<'a>(h: &'a Harness, id: i64, name: &str, args: &Value) -> crate::common::Req<'a> {
    h.stateless_with(json!(id), "tools/call", json!({"name": name, "arguments": args}), form())
}

/// A tool's error body, checked to be a complete (not `input_required`) result.
#[track_caller]
fn tool_error(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("resultType").is_none_or(|t| t == "complete"), "asked nothing: {result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{result}"));
    serde_json::from_str(text).unwrap()
}

/// Nothing of the spoofing text was stored anywhere in the table.
async fn nothing_stored(h: &Harness) {
    let items = common::table_dump(&h.table).await;
    assert!(!items.iter().any(|item| item.contains("Monthly report")), "the description was stored");
    let (_, hooks) = rest(h, "GET", "/webhooks").await;
    assert!(!hooks.to_string().contains("hooks.example.com/reports"), "{hooks}");
}

#[tokio::test]
async fn the_spoofing_webhook_description_is_refused_over_rest_naming_the_field_and_the_character() {
    let h = Harness::new();
    let resp = send(h.api("PUT", "/webhooks").json(&attack())).await;
    let body = resp.json();
    assert_eq!(resp.status, 422, "{body}");
    assert_eq!(body["error"]["code"], "validation_failed", "{body}");
    assert_eq!(body["error"]["message"], REFUSED, "{body}");
    assert_eq!(body["error"]["details"]["field"], "description", "{body}");
    nothing_stored(&h).await;
}

#[tokio::test]
async fn the_spoofing_webhook_description_is_refused_over_mcp_before_any_confirmation_in_both_eras() {
    let h = Harness::new();
    let params = json!({"name": "webhooks_upsert", "arguments": attack()});
    // 2026-07-28 with form elicitation: no form is ever shown for it.
    let resp = send(h.stateless_with(json!(1), "tools/call", params.clone(), form())).await;
    let error = tool_error(&resp.assert_stateless_ok(json!(1)));
    assert_eq!(error["error"]["code"], "validation_failed", "{error}");
    assert_eq!(error["error"]["message"], REFUSED, "{error}");
    assert_eq!(error["error"]["details"]["field"], "description", "{error}");
    // The 2025 eras: the same error, not a confirmation_required.
    for (id, version) in [(2, Some("2025-06-18")), (3, None)] {
        let resp = send(h.handshake(json!(id), "tools/call", params.clone(), version)).await;
        let error = tool_error(&resp.result());
        assert_eq!(error["error"]["message"], REFUSED, "{version:?}: {error}");
    }
    nothing_stored(&h).await;
}

/// Each characters class the rule names, in each text field the API takes
/// from callers: one error, naming the field and the code point.
#[tokio::test]
async fn every_callers_text_field_refuses_separators_controls_bidi_zero_width_and_tag_characters() {
    let h = Harness::new();
    let org_admin = h.token_for("usr_admin", "org_demo", common::ALL_SCOPES);
    let bad = [
        ('\u{2029}', "U+2029 (paragraph separator)"),
        ('\u{202E}', "U+202E (right-to-left override)"),
        ('\u{2067}', "U+2067 (right-to-left isolate)"),
        ('\u{200B}', "U+200B (zero width space)"),
        ('\u{FEFF}', "U+FEFF (zero width no-break space)"),
        ('\u{E0041}', "U+E0041 (tag character)"),
        ('\u{1B}', "U+001B (escape)"),
        ('\n', "U+000A (line feed)"),
        ('\u{85}', "U+0085 (control character)"),
        ('\u{AD}', "U+00AD (invisible format character)"),
    ];
    for (c, named) in bad {
        let t = |s: &str| format!("{s}{c}x");
        // (method, path, body, field): a body field or path segment, 422.
        let cases: Vec<(&str, String, Option<Value>, &str)> = vec![
            ("PUT", "/inboxes".into(), Some(json!({"slug": "new-one", "name": t("Contas")})), "name"),
            ("PUT", "/inboxes".into(), Some(json!({"slug": t("new"), "name": "Contas"})), "slug"),
            ("PATCH", "/inboxes/inb_bills".into(), Some(json!({"name": t("Contas")})), "name"),
            (
                "PUT",
                "/webhooks".into(),
                Some(json!({"url": "https://hooks.example.com/a", "description": t("d")})),
                "description",
            ),
            ("PUT", "/webhooks".into(), Some(json!({"url": t("https://hooks.example.com/a")})), "url"),
            (
                "PUT",
                "/webhooks".into(),
                Some(json!({"url": "https://hooks.example.com/a", "events": [t("email.processed")]})),
                "events[0]",
            ),
            ("POST", "/inboxes/inb_bills/senders".into(), Some(json!({"sender": t("@acme.com")})), "sender"),
            ("PUT", "/org".into(), Some(json!({"name": t("Demo")})), "name"),
            ("POST", "/org/workspaces".into(), Some(json!({"name": t("Ops"), "slug": "ops"})), "name"),
            ("POST", "/org/workspaces".into(), Some(json!({"name": "Ops", "slug": t("ops")})), "slug"),
            ("PATCH", "/org/workspaces/ws_main".into(), Some(json!({"name": t("Main")})), "name"),
            ("PUT", format!("/org/admins/{}", encode(&t("usr_x"))), None, "sub"),
            (
                "PUT",
                format!("/org/workspaces/ws_main/members/{}", encode(&t("usr_x"))),
                Some(json!({"role": "viewer"})),
                "sub",
            ),
            ("PUT", format!("/org/workspaces/ws_main/pipelines/{}", encode(&t("svc_x"))), None, "sub"),
            ("DELETE", format!("/inboxes/inb_bills/senders/{}", encode(&t("@acme.com"))), None, "sender"),
        ];
        for (method, path, body, field) in cases {
            let mut req = h.api(method, &path).token(&org_admin);
            if let Some(body) = &body {
                req = req.json(body);
            }
            let resp = send(req).await;
            let answer = resp.json();
            assert_eq!(resp.status, 422, "{method} {path} {body:?}: {answer}");
            assert_eq!(answer["error"]["code"], "validation_failed", "{answer}");
            assert_eq!(answer["error"]["message"], format!("{field}: must not contain {named}"), "{method} {path}");
            assert_eq!(answer["error"]["details"]["field"], field, "{answer}");
        }
        // Free-text filters: the same message, as the query parameter error it is.
        for (path, name) in [("/inboxes?q=", "q"), ("/audit?subject=", "subject")] {
            let resp = send(h.api("GET", &format!("{path}{}", encode(&t("a")))).token(&org_admin)).await;
            let answer = resp.json();
            assert_eq!(resp.status, 400, "{path}: {answer}");
            assert_eq!(answer["error"]["code"], "invalid_parameter", "{answer}");
            assert_eq!(answer["error"]["message"], format!("{name}: must not contain {named}"), "{answer}");
        }
    }
    // Refused changes change nothing.
    let (_, inbox) = rest(&h, "GET", "/inboxes/inb_bills").await;
    assert_eq!(inbox["data"]["name"], "Contas a pagar", "{inbox}");
    let (_, hooks) = rest(&h, "GET", "/webhooks").await;
    assert_eq!(hooks["data"].as_array().map(Vec::len), Some(1), "{hooks}");
    let workspaces = send(h.api("GET", "/org/workspaces").token(&org_admin)).await.json();
    assert!(!workspaces.to_string().contains("\"Ops"), "{workspaces}");
}

/// Percent-encodes a path segment (every byte but unreserved ASCII).
fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~@".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[tokio::test]
async fn letters_of_every_script_and_emoji_stay_allowed_in_names() {
    let h = Harness::new();
    let name = "Contas — Açaí ação مرحبا שלום 中文 😀";
    let resp = send(h.api("PATCH", "/inboxes/inb_bills").json(&json!({"name": name}))).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    assert_eq!(get(&h, "/inboxes/inb_bills").await["data"]["name"], name);
}

#[tokio::test]
async fn third_party_email_text_is_stored_as_received_with_its_invisible_characters() {
    let h = Harness::new();
    let mut email = mail("contas@energia.example.com");
    let subject = "Conta\u{202E}fdp.exe\u{200B} de energia";
    let text = format!("Pague\u{2028}hoje\u{E0041}.\n{}\n", inbox::seed::LINE_ENERGY);
    email["subject"] = json!(subject);
    email["text"] = json!(text);
    email["attachments"][0]["name"] = json!("boleto\u{202E}fdp.pdf");
    let (id, status, _) = ingested(&send(ingest(&h, "inb_receipts", &email)).await);
    assert_eq!(status, "received");
    let stored = get(&h, &format!("/emails/{id}")).await;
    assert_eq!(stored["data"]["subject"], subject, "{stored}");
    assert_eq!(stored["data"]["text"], text, "{stored}");
    assert_eq!(stored["data"]["attachments"][0]["name"], "boleto\u{202E}fdp.pdf", "{stored}");
}

/// Every string in a value, keys included.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            strings(v, out);
        }),
        _ => {}
    }
}

/// The form of an `input_required` answer: its message, after checking that
/// nothing anywhere in the answer carries a hidden character raw.
#[track_caller]
fn confirmation_message(resp: &Resp, id: i64) -> String {
    let result = resp.assert_stateless_result(json!(id), "input_required");
    let mut all = Vec::new();
    strings(&result, &mut all);
    for s in &all {
        assert!(!s.chars().any(is_hidden), "a raw hidden character in the form: {s:?}");
    }
    result["inputRequests"]["confirm"]["params"]["message"].as_str().unwrap_or_else(|| panic!("{result}")).to_owned()
}

#[tokio::test]
async fn a_confirmation_names_the_target_and_the_effect_before_any_text_of_the_callers() {
    let h = Harness::new();
    let args = json!({"url": "https://hooks.example.com/reports", "description": "Monthly report",
                      "events": ["email.processed"]});
    let message = confirmation_message(&send(tool_call(&h, 1, "webhooks_upsert", &args)).await, 1);
    assert!(
        message
            .starts_with("Create or update webhook: url \"https://hooks.example.com/reports\" in workspace ws_main."),
        "the action and its target first: {message}"
    );
    let effect = message.find("will be sent to this URL").unwrap_or_else(|| panic!("the effect: {message}"));
    let description = message.find("description \"Monthly report\"").unwrap_or_else(|| panic!("{message}"));
    assert!(effect < description, "the effect before the caller's text: {message}");
    // An inbox change: the id first, the new status after the effect.
    let args = json!({"id": "inb_bills", "status": "paused", "name": "Contas"});
    let message = confirmation_message(&send(tool_call(&h, 2, "inboxes_update", &args)).await, 2);
    assert!(message.starts_with("Update inbox: id \"inb_bills\" in workspace ws_main."), "{message}");
    assert!(message.find("refuses all new mail").unwrap() < message.find("status \"paused\"").unwrap(), "{message}");
}

// --------------------------------------------------- pausing an inbox

fn accept() -> Value {
    json!({"confirm": {"action": "accept", "content": {"confirm": true}}})
}

async fn inbox_status(h: &Harness, id: &str) -> Value {
    get(h, &format!("/inboxes/{id}")).await["data"]["status"].clone()
}

#[tokio::test]
async fn pausing_an_inbox_over_mcp_asks_the_person_first_and_runs_once_confirmed() {
    let h = Harness::new();
    let calls = [
        ("inboxes_update", json!({"id": "inb_bills", "status": "paused"})),
        ("inboxes_upsert", json!({"slug": "bills", "name": "Contas", "status": "paused"})),
    ];
    for (i, (tool, args)) in calls.into_iter().enumerate() {
        let id = i64::try_from(i).unwrap() * 10 + 1;
        let resp = send(tool_call(&h, id, tool, &args)).await;
        let message = confirmation_message(&resp, id);
        assert!(message.contains("status \"paused\""), "{tool}: the person sees the new status: {message}");
        assert_eq!(inbox_status(&h, "inb_bills").await, "active", "{tool}: nothing ran before the confirmation");
        let state = resp.json()["result"]["requestState"].clone();
        let params = json!({"name": tool, "arguments": args, "requestState": state, "inputResponses": accept()});
        let resp = send(h.stateless_with(json!(id + 1), "tools/call", params, form())).await;
        let result = resp.assert_stateless_ok(json!(id + 1));
        assert_eq!(result["isError"], false, "{result}");
        assert_eq!(inbox_status(&h, "inb_bills").await, "paused", "{tool}: confirmed, it ran");
        // Back to active for the next tool: re-opening asks too.
        let reopen = json!({"id": "inb_bills", "status": "active"});
        let resp = send(tool_call(&h, id + 2, "inboxes_update", &reopen)).await;
        confirmation_message(&resp, id + 2);
        assert_eq!(inbox_status(&h, "inb_bills").await, "paused", "re-opening waits for the person too");
        let state = resp.json()["result"]["requestState"].clone();
        let params =
            json!({"name": "inboxes_update", "arguments": reopen, "requestState": state, "inputResponses": accept()});
        send(h.stateless_with(json!(id + 3), "tools/call", params, form())).await;
        assert_eq!(inbox_status(&h, "inb_bills").await, "active");
    }
}

#[tokio::test]
async fn pausing_an_inbox_is_confirmation_required_in_the_2025_eras_and_without_elicitation() {
    let h = Harness::new();
    let calls = [
        ("inboxes_update", json!({"id": "inb_bills", "status": "paused"})),
        ("inboxes_upsert", json!({"slug": "bills", "name": "Contas", "status": "paused"})),
    ];
    let mut id = 0;
    for version in [Some("2025-06-18"), None] {
        for (tool, args) in &calls {
            id += 1;
            let params = json!({"name": tool, "arguments": args});
            let result = send(h.handshake(json!(id), "tools/call", params, version)).await.result();
            assert_eq!(result["isError"], true, "{tool} {version:?}: {result}");
            let text = result["content"][0]["text"].as_str().unwrap();
            assert!(text.contains("confirmation_required"), "{tool} {version:?}: {text}");
        }
    }
    let params = json!({"name": "inboxes_update", "arguments": calls[0].1});
    let resp = send(h.stateless_with(json!(9), "tools/call", params, envelope_with(json!({})))).await;
    resp.assert_error(400, -32021, json!(9));
    assert_eq!(inbox_status(&h, "inb_bills").await, "active", "nothing was paused");
    // The REST API asks nothing: its callers are programs holding a write scope.
    let resp = send(h.api("PATCH", "/inboxes/inb_bills").json(&json!({"status": "paused"}))).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
}
