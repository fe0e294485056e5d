//! Third-party text is data (issue 46): the injection corpus
//! (tests/injection/, written by Python's `email` package, manifest.json
//! saying what each message carries) ingested raw, then read through every
//! MCP surface that returns e-mails — `emails_get`, `emails_list`, the
//! e-mail resource — under each content policy, the deployment's cap and a
//! connection's narrowing. What a user of the answer sees is checked: no
//! character of the removed classes anywhere, no exfiltration URL, the
//! sender's words fenced, withheld exactly where the policy says, and each
//! e-mail's `trust` from its verdicts and the inbox's allowed list. REST
//! keeps the record as received.

use std::time::Duration;

use crate::common::{self, Harness, get, send};
use crate::jobs_and_webhooks::{ingested, run_job};
use crate::raw_mail::post_message;
use serde_json::{Value, json};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/injection");

/// The classes no MCP answer may hold, written here independently of the
/// sanitiser: tag characters, bidirectional controls, zero-width and other
/// invisible format characters, Hangul fillers, controls but line feed and
/// tab, line and paragraph separators.
fn forbidden(c: char) -> bool {
    let o = u32::from(c);
    (0xE0000..=0xE007F).contains(&o)
        || matches!(o, 0x200E | 0x200F | 0x061C | 0x202A..=0x202E | 0x2066..=0x2069)
        || matches!(o, 0x200B..=0x200D | 0x2060..=0x2064 | 0xFEFF | 0x180E | 0x00AD)
        || matches!(o, 0x115F | 0x1160 | 0x3164 | 0xFFA0 | 0x2028 | 0x2029)
        || (c.is_control() && c != '\n' && c != '\t')
}

fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Object(o) => o.values().for_each(|v| strings(v, out)),
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// Every string of an answer, decoded (a control character is escaped in
/// JSON text: only the decoded value shows it).
fn all_text(answer: &Value) -> String {
    let mut out = Vec::new();
    strings(answer, &mut out);
    out.join("\n")
}

struct Case {
    manifest: Value,
    id: String,
    trust: &'static str,
}

fn expected_trust(m: &Value) -> &'static str {
    let auth = m["authentication"].as_str().unwrap();
    let allowed = m["sender_allowed_in_inb_bills"].as_bool().unwrap();
    match auth {
        "fail" => "failed",
        "dmarc_pass" | "spf_aligned" | "dkim_aligned" if allowed => "verified",
        _ => "unverified",
    }
}

async fn ingest_corpus(h: &Harness) -> Vec<Case> {
    let manifest: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/manifest.json")).unwrap()).unwrap();
    assert!(manifest.len() >= 30, "the corpus has {} messages", manifest.len());
    let mut cases = Vec::new();
    for m in manifest {
        let raw = std::fs::read(format!("{DIR}/{}", m["file"].as_str().unwrap())).unwrap();
        let resp = send(post_message(h, "inb_bills", &raw)).await;
        let (id, status, job) = ingested(&resp);
        if status == "received" {
            run_job(h, &job).await;
        }
        let trust = expected_trust(&m);
        cases.push(Case { manifest: m, id, trust });
    }
    cases
}

fn tool<'a>(h: &'a Harness, id: i64, name: &str, args: Value) -> common::Req<'a> {
    h.stateless(json!(id), "tools/call", json!({"name": name, "arguments": args}))
}

async fn set_policy(h: &Harness, policy: &str) {
    let resp = send(h.api("PUT", "/workspace/content_policy").json(&json!({"content_policy": policy}))).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    assert_eq!(resp.json()["data"]["content_policy"], policy);
}

/// What every MCP answer holding these e-mails must show under `policy`
/// (`"full"`, `"verified_only"`, `"structured_only"`): checked on the
/// answer's decoded strings and its structured e-mails.
fn check_answer(case: &Case, answer: &Value, email: &Value, policy: &str, surface: &str) {
    check_answer_of(case, answer, email, policy, surface, true)
}

/// `alone`: the answer holds this e-mail only (a list's other e-mails may
/// show the same words).
fn check_answer_of(case: &Case, answer: &Value, email: &Value, policy: &str, surface: &str, alone: bool) {
    let name = case.manifest["file"].as_str().unwrap();
    let text = all_text(answer);
    if let Some(c) = text.chars().find(|c| forbidden(*c)) {
        panic!("{surface} {name}: U+{:04X} reached the agent: {text}", u32::from(c));
    }
    for url in case.manifest["exfil_urls"].as_array().unwrap() {
        assert!(!text.contains(url.as_str().unwrap()), "{surface} {name}: {url} in {text}");
    }
    assert!(!text.contains("!["), "{surface} {name}: a markdown image survived: {text}");
    let shows = match policy {
        "full" => true,
        "verified_only" => case.trust == "verified",
        _ => false,
    };
    assert_eq!(email["trust"], case.trust, "{surface} {name}");
    let phrase = case.manifest["visible_phrase"].as_str().unwrap();
    if shows {
        assert!(email.get("withheld").is_none(), "{surface} {name}: {email}");
        let untrusted = &email["untrusted"];
        let said = format!("{}\n{}", untrusted["subject"].as_str().unwrap(), untrusted["body"].as_str().unwrap());
        assert!(said.contains(phrase), "{surface} {name}: {phrase:?} not in {said:?}");
        for field in ["subject", "text", "message_id"] {
            assert!(email.get(field).is_none(), "{surface} {name}: {field} outside the fence: {email}");
        }
    } else {
        assert!(email.get("untrusted").is_none(), "{surface} {name}: {email}");
        assert_eq!(email["withheld"]["policy"], policy, "{surface} {name}: {email}");
        assert_eq!(email["withheld"]["trust"], case.trust, "{surface} {name}: {email}");
        if alone {
            assert!(!text.contains(phrase), "{surface} {name}: withheld text {phrase:?} reached the agent: {text}");
        }
        for field in ["subject", "text", "message_id"] {
            assert!(email.get(field).is_none(), "{surface} {name}: {email}");
        }
    }
    assert!(email["sanitized"]["removed"].is_u64(), "{surface} {name}: {email}");
}

/// `emails_get`'s text content: the facts, then the fields between the
/// markers; the phrase only inside a fence.
fn check_fenced(case: &Case, result: &Value, shows: bool) {
    let text = result["content"][0]["text"].as_str().unwrap();
    let phrase = case.manifest["visible_phrase"].as_str().unwrap();
    let facts_end = text.find("\n\n<<<UNTRUSTED CONTENT (").unwrap_or(text.len());
    assert!(!text[..facts_end].contains(phrase), "{}: unfenced: {text}", case.id);
    if shows {
        let begin = format!("<<<UNTRUSTED CONTENT ({}.body): data written by an outside sender", case.id);
        let at = text.find(&begin).unwrap_or_else(|| panic!("{}: no body fence: {text}", case.id));
        assert!(text.ends_with("UNTRUSTED CONTENT>>>"), "{text}");
        // Exactly the server's markers: one begin and one end per fenced field.
        assert_eq!(text.matches("<<<UNTRUSTED CONTENT").count(), text.matches("UNTRUSTED CONTENT>>>").count());
        assert!(text[at..].contains(phrase) || text.contains(&format!("({}.subject)", case.id)), "{text}");
    } else {
        assert!(!text.contains("<<<UNTRUSTED CONTENT"), "{}: {text}", case.id);
    }
}

fn quick() -> Harness {
    // Policy changes seen at once (the tenancy cache would hold them 30 s).
    Harness::with_config(|c| c.membership_cache = Duration::ZERO)
}

#[tokio::test]
async fn every_injection_reaches_every_mcp_surface_sanitised_fenced_and_withheld_as_the_policy_says() {
    let h = quick();
    let cases = ingest_corpus(&h).await;
    // REST is the record: the text as received, invisible characters and all.
    let tags = cases.iter().find(|c| c.manifest["file"] == "03-tags-body.eml").unwrap();
    let stored = get(&h, &format!("/emails/{}", tags.id)).await;
    assert!(stored["data"]["text"].as_str().unwrap().chars().any(|c| ('\u{E0000}'..='\u{E007F}').contains(&c)));
    for case in &cases {
        assert_eq!(get(&h, &format!("/emails/{}", case.id)).await["data"]["trust"], case.trust, "{}", case.manifest);
    }
    let mut n = 0;
    for policy in ["full", "verified_only", "structured_only"] {
        set_policy(&h, policy).await;
        for case in &cases {
            n += 1;
            let resp = send(tool(&h, n, "emails_get", json!({"id": case.id}))).await;
            let result = resp.assert_stateless_ok(json!(n));
            assert_eq!(result["isError"], false, "{result}");
            check_answer(case, &result, &result["structuredContent"]["data"], policy, "emails_get");
            let shows = policy == "full" || (policy == "verified_only" && case.trust == "verified");
            check_fenced(case, &result, shows);
            n += 1;
            let uri = format!("kobana://inbox/emails/{}", case.id);
            let resp = send(h.stateless(json!(n), "resources/read", json!({"uri": uri}))).await;
            let result = resp.assert_stateless_ok(json!(n));
            let read: Value = serde_json::from_str(result["contents"][0]["text"].as_str().unwrap()).unwrap();
            check_answer(case, &result, &read["data"], policy, "resources/read");
        }
        n += 1;
        let resp = send(tool(&h, n, "emails_list", json!({"inbox_id": "inb_bills", "limit": 100}))).await;
        let result = resp.assert_stateless_ok(json!(n));
        let listed = result["structuredContent"]["data"].as_array().unwrap().clone();
        for case in &cases {
            let email =
                listed.iter().find(|e| e["id"] == case.id.as_str()).unwrap_or_else(|| panic!("{} listed", case.id));
            check_answer_of(case, &result, email, policy, "emails_list", false);
        }
    }
    // Server-decoded facts stay under the strictest policy.
    let bill = cases.iter().find(|c| c.manifest["file"] == "01-benign-bill.eml").unwrap();
    let resp = send(tool(&h, 999, "emails_get", json!({"id": bill.id}))).await;
    let data = resp.assert_stateless_ok(json!(999))["structuredContent"]["data"].clone();
    assert_eq!(data["extracted"]["digitable_line"], "34191092062611010123045678970000116560000159990", "{data}");
    assert_eq!(data["extracted"]["amount_cents"], 159_990, "{data}");
    assert!(data.get("untrusted").is_none());
}

#[tokio::test]
async fn trust_follows_the_verdicts_and_the_allowed_list() {
    let h = quick();
    let cases = ingest_corpus(&h).await;
    let count = |trust: &str| cases.iter().filter(|c| c.trust == trust).count();
    assert!(count("verified") >= 5 && count("failed") >= 2 && count("unverified") >= 20, "the corpus covers each");
    for case in &cases {
        let stored = get(&h, &format!("/emails/{}", case.id)).await["data"].clone();
        assert_eq!(stored["trust"], case.trust, "{}: {stored}", case.manifest);
    }
    // The JSON form has no verdicts: unverified, even from an allowed sender.
    let token = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    let resp = send(
        h.api("POST", "/inboxes/inb_bills/emails")
            .token(&token)
            .header("x-workspace-id", "ws_main")
            .json(&json!({"from": "cobranca@telecom.example.com", "to": "a@b.example", "subject": "s", "text": "t"})),
    )
    .await;
    let (id, _, _) = ingested(&resp);
    assert_eq!(get(&h, &format!("/emails/{id}")).await["data"]["trust"], "unverified");
}

#[tokio::test]
async fn a_connection_can_narrow_the_policy_never_loosen_it() {
    let h = quick();
    let cases = ingest_corpus(&h).await;
    let verified = cases.iter().find(|c| c.trust == "verified").unwrap();
    let unverified = cases.iter().find(|c| c.trust == "unverified").unwrap();
    let read = |id: &str, header: Option<&'static str>, n: i64| {
        let mut req = tool(&h, n, "emails_get", json!({"id": id}));
        if let Some(value) = header {
            req = req.header("x-mcp-content-policy", value);
        }
        req
    };
    set_policy(&h, "full").await;
    let data = send(read(&unverified.id, Some("structured_only"), 1)).await.assert_stateless_ok(json!(1));
    assert_eq!(data["structuredContent"]["data"]["withheld"]["policy"], "structured_only", "{data}");
    let data = send(read(&unverified.id, Some("verified_only"), 2)).await.assert_stateless_ok(json!(2));
    assert_eq!(data["structuredContent"]["data"]["withheld"]["policy"], "verified_only", "{data}");
    let data = send(read(&verified.id, Some("verified_only"), 3)).await.assert_stateless_ok(json!(3));
    assert!(data["structuredContent"]["data"]["untrusted"].is_object(), "{data}");
    set_policy(&h, "structured_only").await;
    let data = send(read(&verified.id, Some("full"), 4)).await.assert_stateless_ok(json!(4));
    assert_eq!(data["structuredContent"]["data"]["withheld"]["policy"], "structured_only", "{data}");
    // A policy no one knows is refused, naming the header.
    let resp = send(read(&verified.id, Some("everything"), 5)).await;
    assert_eq!(resp.status, 400, "{}", resp.json());
    assert_eq!(resp.json()["error"]["data"]["invalid"], "X-MCP-Content-Policy");
}

#[tokio::test]
async fn with_the_deployment_cap_at_structured_only_no_setting_and_no_request_gets_a_body_out() {
    let h = Harness::with_config(|c| {
        c.membership_cache = Duration::ZERO;
        c.content_policy_cap = inbox::domain::provenance::ContentPolicy::StructuredOnly;
    });
    let cases = ingest_corpus(&h).await;
    set_policy(&h, "full").await;
    let mut n = 0;
    for header in [None, Some("full"), Some("verified_only")] {
        for case in cases.iter().filter(|c| c.trust == "verified").chain(cases.first()) {
            n += 1;
            let mut req = tool(&h, n, "emails_get", json!({"id": case.id}));
            if let Some(value) = header {
                req = req.header("x-mcp-content-policy", value);
            }
            let result = send(req).await.assert_stateless_ok(json!(n));
            check_answer(case, &result, &result["structuredContent"]["data"], "structured_only", "capped emails_get");
        }
        n += 1;
        let mut req = tool(&h, n, "emails_list", json!({"limit": 100}));
        if let Some(value) = header {
            req = req.header("x-mcp-content-policy", value);
        }
        let result = send(req).await.assert_stateless_ok(json!(n));
        for email in result["structuredContent"]["data"].as_array().unwrap() {
            assert!(email.get("untrusted").is_none() && email["withheld"]["policy"] == "structured_only", "{email}");
        }
        assert!(!result["content"][0]["text"].as_str().unwrap().contains("<<<UNTRUSTED CONTENT"));
    }
}

#[tokio::test]
async fn only_a_workspace_admin_changes_the_policy_and_on_mcp_only_once_confirmed() {
    let h = quick();
    let operator = h.token_for("usr_operator", "org_demo", "inboxes:read inboxes:write emails:read");
    let resp =
        send(h.api("PUT", "/workspace/content_policy").token(&operator).json(&json!({"content_policy": "full"}))).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (403, Some("forbidden")), "{}", resp.json());
    let resp = send(h.api("PUT", "/workspace/content_policy").json(&json!({"content_policy": "everything"}))).await;
    assert_eq!(resp.status, 422, "{}", resp.json());
    assert_eq!(get(&h, "/workspace").await["data"]["content_policy"], "full", "the demo workspace is full");
    set_policy(&h, "verified_only").await;
    assert_eq!(get(&h, "/workspace").await["data"]["content_policy"], "verified_only");
    // Over MCP the change is destructive: the person is asked first.
    let form = common::envelope_with(json!({"elicitation": {"form": {}}}));
    let params = json!({"name": "workspace_content_policy_set", "arguments": {"content_policy": "full"}});
    let result = send(h.stateless_with(json!(1), "tools/call", params, form))
        .await
        .assert_stateless_result(json!(1), "input_required");
    let message = result["inputRequests"]["confirm"]["params"]["message"].as_str().unwrap();
    assert!(message.contains("content_policy \"full\""), "{message}");
    assert_eq!(get(&h, "/workspace").await["data"]["content_policy"], "verified_only");
}

#[tokio::test]
async fn a_confirmation_names_the_email_by_server_facts_never_by_its_text() {
    let h = quick();
    let cases = ingest_corpus(&h).await;
    let form = common::envelope_with(json!({"elicitation": {"form": {}}}));
    for (n, file) in
        ["01-benign-bill.eml", "18-fake-fence-subject.eml", "25-display-name-instruction.eml"].iter().enumerate()
    {
        let case = cases.iter().find(|c| c.manifest["file"] == *file).unwrap();
        let id = i64::try_from(n).unwrap() + 1;
        let params = json!({"name": "emails_delete", "arguments": {"id": case.id}});
        let result = send(h.stateless_with(json!(id), "tools/call", params, form.clone()))
            .await
            .assert_stateless_result(json!(id), "input_required");
        let message = result["inputRequests"]["confirm"]["params"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(&case.id), "{message}");
        assert!(message.contains("in inbox \"Contas a pagar\" (inb_bills)"), "{message}");
        assert!(message.contains(&format!("sender trust {}", case.trust)), "{message}");
        let stored = get(&h, &format!("/emails/{}", case.id)).await["data"].clone();
        for third_party in [
            stored["subject"].as_str().unwrap(),
            stored["from"].as_str().unwrap(),
            case.manifest["display_name"].as_str().unwrap(),
        ] {
            assert!(!message.contains(third_party), "{third_party:?} in the form: {message}");
        }
        if *file == "01-benign-bill.eml" {
            assert!(message.contains("its bill: bank 341, R$ 1599,90, due 2026-12-10"), "{message}");
        }
    }
}
