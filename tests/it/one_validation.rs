//! One validation for both surfaces (`inbox_api::shape`): every operation's
//! body is a Rust type whose schema is published, and a REST body and a
//! tool's arguments are checked against it by the same checker. The cases
//! are generated from the published schemas: for every body field, each of
//! its rules broken once (one character, item or unit past a bound; a wrong
//! JSON type; an unknown and a missing field). Each case goes over REST and,
//! where the operation has a tool, over MCP; both answer the same code for
//! the same field, and nothing is written.

use crate::common::{self, Harness, send};
use inbox::api::{Op, operations, schemas};
use inbox_api::route::Param;
use serde_json::{Map, Value, json};

/// A value the schema accepts (the checker's view: deserialising it may
/// still refuse it, after the check).
fn valid(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match schema["type"].as_str() {
        Some("string") if schema["format"] == "date-time" => json!("2026-01-02T03:04:05Z"),
        Some("string") => {
            let min = schema["minLength"].as_u64().unwrap_or(1).max(3);
            let max = schema["maxLength"].as_u64().unwrap_or(min);
            json!("a".repeat(usize::try_from(min.min(max)).unwrap()))
        }
        Some("integer") => json!(schema["minimum"].as_u64().unwrap_or(0)),
        Some("array") => {
            let n = schema["minItems"].as_u64().unwrap_or(0);
            let items = &schema["items"];
            match items["enum"].as_array() {
                Some(values) => json!(values.iter().take(usize::try_from(n).unwrap()).collect::<Vec<_>>()),
                None => json!((0..n).map(|_| valid(items)).collect::<Vec<_>>()),
            }
        }
        Some("object") => {
            let mut object = Map::new();
            for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                object.insert(name.into(), valid(&schema["properties"][name]));
            }
            Value::Object(object)
        }
        other => panic!("no valid value for {other:?}: {schema}"),
    }
}

/// One broken rule: the body, the field the answer must name, and whether
/// it is a value rule (422 `validation_failed`) or the shape.
struct Case {
    label: String,
    body: Value,
    field: String,
    value_rule: bool,
}

fn with(base: &Value, name: &str, value: Value) -> Value {
    let mut body = base.clone();
    body[name] = value;
    body
}

fn cases(schema: &Value) -> Vec<Case> {
    let base = valid(schema);
    let mut out = Vec::new();
    let mut push = |label: String, body: Value, field: &str, value_rule: bool| {
        out.push(Case { label, body, field: field.to_owned(), value_rule });
    };
    push("an unknown field".into(), with(&base, "zzz", json!(1)), "zzz", false);
    for (name, rule) in schema["properties"].as_object().unwrap() {
        let label = |what: &str| format!("{name}: {what}");
        let count = |key: &str| rule[key].as_u64().map(|n| usize::try_from(n).unwrap());
        if schema["required"].as_array().is_some_and(|r| r.contains(&json!(name))) {
            let mut body = base.clone();
            body.as_object_mut().unwrap().remove(name);
            push(label("missing"), body, name, false);
        }
        let wrong = if rule["type"] == "string" { json!(5) } else { json!("five") };
        push(label("wrong JSON type"), with(&base, name, wrong), name, false);
        push(label("null"), with(&base, name, Value::Null), name, false);
        if let Some(max) = count("maxLength") {
            push(label("one character too many"), with(&base, name, json!("a".repeat(max + 1))), name, true);
        }
        if let Some(min) = count("minLength").filter(|m| *m > 0) {
            push(label("one character too few"), with(&base, name, json!("a".repeat(min - 1))), name, true);
        }
        if let Some(min) = rule["minimum"].as_i64() {
            push(label("below the minimum"), with(&base, name, json!(min - 1)), name, true);
        }
        if let Some(max) = count("maxItems") {
            let item = rule["items"]["enum"].as_array().map_or_else(|| valid(&rule["items"]), |e| e[0].clone());
            push(label("one item too many"), with(&base, name, json!(vec![item; max + 1])), name, true);
        }
        if let Some(min) = count("minItems").filter(|m| *m > 0) {
            let items: Vec<Value> = (0..min - 1).map(|_| valid(&rule["items"])).collect();
            push(label("one item too few"), with(&base, name, json!(items)), name, true);
        }
        if rule["enum"].is_array() {
            push(label("not one of its values"), with(&base, name, json!("zzz")), name, true);
        }
    }
    out
}

/// The REST path of `op` with its parameters filled in (an id of the
/// demo workspace's: the body is checked before any record is read).
fn path(op: Op) -> String {
    let mut path = op.template.as_str().to_owned();
    for param in op.template.params() {
        let value = match param {
            Param::Id if path.starts_with("/org/") => "ws_main",
            Param::Id => "inb_billing",
            Param::Sub => "usr_new",
            Param::Sender => "@acme.com",
            Param::Attachment => "0",
        };
        path = path.replace(&format!("{{{}}}", param.name()), value);
    }
    path
}

fn path_args(op: Op) -> Map<String, Value> {
    let filled = path(op);
    let mut args = Map::new();
    let (template, actual): (Vec<&str>, Vec<&str>) =
        (op.template.as_str().split('/').collect(), filled.split('/').collect());
    for (t, a) in template.iter().zip(actual) {
        if let Some(name) = t.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            args.insert(name.to_owned(), json!(a));
        }
    }
    args
}

/// The table's items but the audit trail's (which records refused calls too).
async fn records(h: &Harness) -> Vec<String> {
    let items = common::table_dump_sorted(&h.table).await;
    items.into_iter().filter(|item| !item.contains("AUD#aud_")).collect()
}

#[tokio::test]
async fn rest_and_mcp_answer_one_violation_of_a_published_body_schema_with_one_code() {
    let h = Harness::new();
    h.app().await; // the seeded table
    let before = records(&h).await;
    let pipeline = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    let org_admin = h.token_for("usr_admin", "org_demo", common::ALL_SCOPES);
    let (mut checked, mut both) = (0, 0);
    for op in operations() {
        let Some(schema) = schemas::body(op) else { continue };
        for (n, case) in cases(&schema).into_iter().enumerate() {
            let what = format!("{} {}: {}", op.method.as_str(), op.template.as_str(), case.label);
            let token = if op.name() == "email_ingest" { &pipeline } else { &org_admin };
            let req = h.api(op.method.as_str(), &path(op)).json(&case.body).token(token);
            let resp = send(req).await;
            let (status, code) = if case.value_rule { (422, "validation_failed") } else { (400, "invalid_body") };
            assert_eq!(resp.status, status, "{what}: {}", resp.json());
            let error = &resp.json()["error"];
            assert_eq!(error["code"], code, "{what}: {error}");
            assert_eq!(error["details"]["field"], case.field.as_str(), "{what}: {error}");
            checked += 1;

            let Some(tool) = op.tool else { continue };
            let mut args = path_args(op);
            args.extend(case.body.as_object().cloned().unwrap());
            let id = json!(n + 1);
            let call = h.stateless(id.clone(), "tools/call", json!({"name": tool.name, "arguments": args}));
            let result = send(call).await.assert_stateless_ok(id);
            assert_eq!(result["isError"], true, "{what}: {result}");
            let payload = &result["structuredContent"]["error"];
            let mcp_code = if case.value_rule { "validation_failed" } else { "invalid_arguments" };
            assert_eq!(payload["code"], mcp_code, "{what} over MCP: {payload}");
            assert_eq!(payload["details"]["field"], case.field.as_str(), "{what} over MCP: {payload}");
            both += 1;
        }
    }
    // Every body operation's every rule: the count moves with the schemas, the floor says none was skipped.
    println!("one validation: {checked} REST cases, {both} of them over MCP too");
    assert!(checked >= 60 && both >= 30, "{checked} REST cases, {both} of them over MCP too");
    assert_eq!(records(&h).await, before, "a refused call changes nothing (its audit record aside)");
}

/// The two violations named when the rule was made one: a 121-character
/// inbox name (both surfaces) and a 51st attachment (the pipeline's REST).
#[tokio::test]
async fn a_long_inbox_name_and_a_51st_attachment_are_validation_failed() {
    let h = Harness::new();
    let name = "n".repeat(121);
    let resp = send(h.api("PUT", "/inboxes").json(&json!({"slug": "long-name", "name": name}))).await;
    assert_eq!(resp.status, 422, "{}", resp.json());
    assert_eq!(resp.json()["error"]["code"], "validation_failed");
    assert_eq!(resp.json()["error"]["message"], "name: must have at most 120 characters");

    let call = h.stateless(
        json!(1),
        "tools/call",
        json!({"name": "inboxes_upsert", "arguments": {"slug": "long-name", "name": name}}),
    );
    let result = send(call).await.assert_stateless_ok(json!(1));
    assert_eq!(result["structuredContent"]["error"], resp.json()["error"], "the same error, word for word");

    let attachment = json!({"name": "boleto.pdf", "size": 1, "content_type": "application/pdf"});
    let body = json!({"from": "billing@acme.com", "to": "inbox@kobana.example", "subject": "Bill", "text": "",
                      "attachments": vec![attachment; 51]});
    let pipeline = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    let resp = send(h.api("POST", "/inboxes/inb_billing/emails").token(&pipeline).json(&body)).await;
    assert_eq!(resp.status, 422, "{}", resp.json());
    assert_eq!(resp.json()["error"]["code"], "validation_failed");
    assert_eq!(resp.json()["error"]["details"]["field"], "attachments");
}
