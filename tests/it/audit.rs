//! The audit trail (issue 16): every change through REST or MCP leaves
//! exactly one record with who, through what, on which record and how it
//! ended; refusals before the operation, replays and declined confirmations
//! leave none; the trail is its workspace admins' only; it never holds
//! arguments, bodies or secrets.

use crate::common;

use common::{ADMIN_SCOPES, ALL_SCOPES, Harness, Req, Resp, envelope_with, send, table_dump};
use serde_json::{Value, json};

/// A token of `sub` in the demo organization with every scope, `audit:read` included.
fn auditor(h: &Harness, sub: &str) -> String {
    h.token_for(sub, "org_demo", ALL_SCOPES)
}

/// The whole trail of `ws` as the demo admin, newest first, page by page
/// (`limit` per page) with `query` as filters.
async fn trail_of(h: &Harness, ws: &str, query: &str, limit: usize) -> Vec<Value> {
    let token = auditor(h, "usr_admin");
    let mut records = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/audit?limit={limit}{query}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let resp = send(h.api("GET", &path).token(&token).header("x-workspace-id", ws)).await;
        let body = resp.json();
        assert_eq!(resp.status, 200, "GET {path}: {body}");
        records.extend(body["data"].as_array().unwrap().iter().cloned());
        match body["meta"]["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return records,
        }
    }
}

async fn trail(h: &Harness) -> Vec<Value> {
    trail_of(h, "ws_main", "", 100).await
}

/// The records in `after` that are not in `before`.
fn added(before: &[Value], after: &[Value]) -> Vec<Value> {
    after.iter().filter(|r| !before.iter().any(|b| b["id"] == r["id"])).cloned().collect()
}

/// Runs `req` and returns its answer and the one record it left.
async fn one_record(h: &Harness, req: Req<'_>) -> (Resp, Value) {
    let before = trail(h).await;
    let resp = send(req).await;
    let new = added(&before, &trail(h).await);
    assert_eq!(new.len(), 1, "exactly one record for {} {}: {new:?}", resp.status, resp.json());
    (resp, new.into_iter().next().unwrap())
}

/// Runs `req` and checks it left no record.
async fn no_record(h: &Harness, req: Req<'_>) -> Resp {
    let before = trail(h).await;
    let resp = send(req).await;
    let new = added(&before, &trail(h).await);
    assert!(new.is_empty(), "no record for {} {}: {new:?}", resp.status, resp.json());
    resp
}

/// The fields every record of the demo admin's REST call on `ws_main` has.
#[track_caller]
fn assert_rest_record(record: &Value, operation: &str, action: &str, target: &str, status: u16, changed: bool) {
    assert_eq!(record["changed"], changed, "{record}");
    assert_eq!(record["operation"], operation, "{record}");
    assert_eq!(record["action"], action, "{record}");
    assert_eq!(record["target_id"], target, "{record}");
    assert_eq!(record["status"], status, "{record}");
    assert_eq!(record["surface"], "rest", "{record}");
    assert_eq!(record["client"], Value::Null, "{record}");
    assert_eq!(record["organization"], "org_demo", "{record}");
    assert_eq!(record["workspace"], "ws_main", "{record}");
    assert_eq!(record["error_code"], Value::Null, "{record}");
    assert!(record["request_id"].as_str().is_some_and(|r| !r.is_empty()), "{record}");
    let digest = record["arguments_digest"].as_str().unwrap();
    assert!(digest.starts_with("sha256:") && digest.len() == 71, "{record}");
    let id = record["id"].as_str().unwrap();
    let at: String = record["at"].as_str().unwrap().chars().filter(char::is_ascii_digit).collect();
    assert!(id.starts_with(&format!("aud_{at}")), "the id begins with its time: {record}");
}

fn id_of(resp: &Resp) -> String {
    let body = resp.json();
    body["data"]["id"].as_str().unwrap_or_else(|| panic!("no data.id: {body}")).to_owned()
}

#[tokio::test]
async fn every_rest_change_leaves_exactly_one_record_with_who_what_and_how() {
    let h = Harness::new();
    let app = h.app().await;

    // Inboxes: create, update by slug, patch; senders: add, add again, remove; delete.
    let body = json!({"slug": "audited", "name": "Audited"});
    let (resp, r) = one_record(&h, h.api("PUT", "/inboxes").json(&body)).await;
    assert_eq!(resp.status, 201);
    let inbox = id_of(&resp);
    assert_rest_record(&r, "inboxes_upsert", "PUT /inboxes", &inbox, 201, true);
    assert_eq!(r["subject"], "usr_admin");
    let (_, r) = one_record(&h, h.api("PUT", "/inboxes").json(&json!({"slug": "audited", "name": "Renamed"}))).await;
    assert_rest_record(&r, "inboxes_upsert", "PUT /inboxes", &inbox, 200, true);
    let (_, r) = one_record(&h, h.api("PATCH", &format!("/inboxes/{inbox}")).json(&json!({"name": "Again"}))).await;
    assert_rest_record(&r, "inbox_update", "PATCH /inboxes/{id}", &inbox, 200, true);
    let senders = format!("/inboxes/{inbox}/senders");
    let (_, r) = one_record(&h, h.api("POST", &senders).json(&json!({"sender": "billing@acme.com"}))).await;
    assert_rest_record(&r, "senders_add", "POST /inboxes/{id}/senders", &inbox, 201, true);
    // Allowed already: nothing changes, the call is still recorded (alone).
    let (resp, r) = one_record(&h, h.api("POST", &senders).json(&json!({"sender": "billing@acme.com"}))).await;
    assert_eq!(resp.status, 200);
    assert_rest_record(&r, "senders_add", "POST /inboxes/{id}/senders", &inbox, 200, false);
    let (_, r) = one_record(&h, h.api("DELETE", &format!("{senders}/billing@acme.com"))).await;
    assert_rest_record(&r, "sender_remove", "DELETE /inboxes/{id}/senders/{sender}", &inbox, 200, true);
    let (_, r) = one_record(&h, h.api("DELETE", &format!("/inboxes/{inbox}"))).await;
    assert_rest_record(&r, "inbox_delete", "DELETE /inboxes/{id}", &inbox, 200, true);

    // E-mails: reprocess, delete.
    let (resp, r) = one_record(&h, h.api("POST", "/emails/eml_broken_line/reprocess")).await;
    assert_eq!(resp.status, 202, "{}", resp.json());
    assert_rest_record(&r, "email_reprocess", "POST /emails/{id}/reprocess", "eml_broken_line", 202, true);
    let (_, r) = one_record(&h, h.api("DELETE", "/emails/eml_receipt_1")).await;
    assert_rest_record(&r, "email_delete", "DELETE /emails/{id}", "eml_receipt_1", 200, true);

    // Webhooks: create, rotate, test, resend, delete.
    let (resp, r) =
        one_record(&h, h.api("PUT", "/webhooks").json(&json!({"url": "https://hooks.example.com/audit"}))).await;
    assert_eq!(resp.status, 201);
    let webhook = id_of(&resp);
    assert_rest_record(&r, "webhooks_upsert", "PUT /webhooks", &webhook, 201, true);
    let (_, r) = one_record(&h, h.api("POST", &format!("/webhooks/{webhook}/rotate_secret"))).await;
    assert_rest_record(&r, "webhook_rotate_secret", "POST /webhooks/{id}/rotate_secret", &webhook, 200, true);
    let (_, r) = one_record(&h, h.api("POST", "/webhooks/whk_demo/test")).await;
    assert_rest_record(&r, "webhook_test", "POST /webhooks/{id}/test", "whk_demo", 202, true);
    let (_, r) = one_record(&h, h.api("POST", "/webhook_deliveries/dlv_demo_failed/resend")).await;
    assert_rest_record(&r, "delivery_resend", "POST /webhook_deliveries/{id}/resend", "dlv_demo_failed", 202, true);
    let (_, r) = one_record(&h, h.api("DELETE", &format!("/webhooks/{webhook}"))).await;
    assert_rest_record(&r, "webhook_delete", "DELETE /webhooks/{id}", &webhook, 200, true);

    // Jobs: cancel a queued one.
    let job = inbox::api::jobs::new_job(inbox::domain::records::JobKind::WebhookTest, "whk_demo");
    app.store.put_job(&crate::jobs_and_webhooks::ws_main(), &job).await.unwrap();
    let (resp, r) = one_record(&h, h.api("POST", &format!("/jobs/{}/cancel", job.id))).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    assert_rest_record(&r, "job_cancel", "POST /jobs/{id}/cancel", &job.id, 200, true);
    // Cancelled again: nothing to do, one record that says so.
    let (resp, r) = one_record(&h, h.api("POST", &format!("/jobs/{}/cancel", job.id))).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    assert_rest_record(&r, "job_cancel", "POST /jobs/{id}/cancel", &job.id, 200, false);

    // Ingestion, by the mail pipeline (a machine client).
    let pipeline = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    let mail =
        json!({"from": "a@b.example.com", "to": "contas@demo.inbox.kobana.com.br", "subject": "Oi", "text": "Olá"});
    let ingest = h.api("POST", "/inboxes/inb_receipts/emails").token(&pipeline).header("x-workspace-id", "ws_main");
    let (resp, r) = one_record(&h, ingest.json(&mail)).await;
    assert_eq!(resp.status, 202, "{}", resp.json());
    let email = resp.json()["data"]["email"]["id"].as_str().unwrap().to_owned();
    assert_rest_record(&r, "email_ingest", "POST /inboxes/{id}/emails", &email, 202, true);
    assert_eq!(r["subject"], "svc_mailpipe");

    // Reads leave nothing.
    no_record(&h, h.api("GET", "/inboxes")).await;
    no_record(&h, h.api("GET", "/emails/eml_telecom_nov")).await;
}

#[tokio::test]
async fn a_refused_change_is_recorded_only_when_the_operation_refused_it() {
    let h = Harness::new();
    // 404, 409, 422: the operation ran and refused; its status and code are recorded.
    let (resp, r) = one_record(&h, h.api("DELETE", "/inboxes/inb_nope")).await;
    assert_eq!(resp.status, 404);
    assert_eq!((r["status"].as_u64(), r["error_code"].as_str()), (Some(404), Some("not_found")), "{r}");
    assert_eq!((r["target_id"].as_str(), r["changed"].as_bool()), (Some("inb_nope"), Some(false)));
    let (resp, r) = one_record(&h, h.api("POST", "/emails/eml_rent_dec/reprocess")).await;
    assert_eq!(resp.status, 409);
    assert_eq!((r["status"].as_u64(), r["error_code"].as_str()), (Some(409), Some("already_processing")), "{r}");
    let (resp, r) = one_record(&h, h.api("PUT", "/webhooks").json(&json!({"url": "https://10.0.0.7/in"}))).await;
    assert_eq!(resp.status, 422, "{}", resp.json());
    assert_eq!((r["status"].as_u64(), r["error_code"].as_str()), (Some(422), Some("validation_failed")), "{r}");
    assert_eq!(r["target_id"], Value::Null, "{r}");

    // Refused before the operation ran: nothing recorded.
    let bad = no_record(&h, h.api("PUT", "/inboxes").json(&json!({"slug": "x1", "name": "X", "colour": "red"}))).await;
    assert_eq!(bad.status, 400);
    let viewer = h.token_for("usr_viewer", "org_demo", ADMIN_SCOPES);
    let refused = no_record(&h, h.api("DELETE", "/inboxes/inb_bills").token(&viewer)).await;
    assert_eq!(refused.status, 403);
    let unscoped = h.token_for("usr_admin", "org_demo", "inboxes:read");
    let refused = no_record(&h, h.api("DELETE", "/inboxes/inb_bills").token(&unscoped)).await;
    assert_eq!(refused.status, 403);
    let anonymous = no_record(&h, h.api("DELETE", "/inboxes/inb_bills").without("authorization")).await;
    assert_eq!(anonymous.status, 401);
}

#[tokio::test]
async fn an_idempotent_replay_writes_no_second_record() {
    let h = Harness::new();
    let body = json!({"slug": "once", "name": "Once"});
    let (first, _) = one_record(&h, h.api("PUT", "/inboxes").header("idempotency-key", "k-1").json(&body)).await;
    let replay = no_record(&h, h.api("PUT", "/inboxes").header("idempotency-key", "k-1").json(&body)).await;
    assert_eq!((first.status, replay.status), (201, 201));
    assert_eq!(first.json(), replay.json());
}

fn mcp_call<'a>(h: &'a Harness, id: i64, name: &str, params: Value, token: &str) -> Req<'a> {
    let mut params = params;
    params["name"] = json!(name);
    h.stateless_with(json!(id), "tools/call", params, envelope_with(json!({"elicitation": {"form": {}}}))).token(token)
}

#[tokio::test]
async fn a_tool_call_names_the_tool_and_the_client_and_digests_like_rest() {
    let h = Harness::new();
    let admin = h.admin_token();
    let args = json!({"slug": "from-mcp", "name": "From MCP"});
    let (resp, r) = one_record(&h, mcp_call(&h, 1, "inboxes_upsert", json!({"arguments": args}), &admin)).await;
    let created = resp.json()["result"]["structuredContent"]["data"].clone();
    assert_eq!(r["surface"], "mcp", "{r}");
    assert_eq!(r["action"], "inboxes_upsert");
    assert_eq!(r["operation"], "inboxes_upsert");
    assert_eq!(r["client"], json!({"name": "test-client", "version": "1.0.0"}));
    assert_eq!(r["target_id"], created["id"], "{r}");
    assert_eq!(r["status"], 201);
    assert_eq!(r["subject"], "usr_admin");
    // The same arguments through REST (keys in another order): the same digest.
    let (_, rest) =
        one_record(&h, h.api("PUT", "/inboxes").json(&json!({"name": "From MCP", "slug": "from-mcp"}))).await;
    assert_eq!(rest["arguments_digest"], r["arguments_digest"]);
    assert_eq!(rest["status"], 200);

    // The 2025 eras send clientInfo once, with initialize: no client.
    let handshake = h.handshake(
        json!(3),
        "tools/call",
        json!({"name": "inboxes_update", "arguments": {"id": created["id"], "name": "Handshake"}}),
        Some("2025-06-18"),
    );
    let (_, r) = one_record(&h, handshake).await;
    assert_eq!((r["surface"].as_str(), r["action"].as_str()), (Some("mcp"), Some("inboxes_update")), "{r}");
    assert_eq!(r["client"], Value::Null, "{r}");

    // A destructive tool: asking and a declined confirmation leave nothing;
    // the confirmed call leaves one record.
    let rotate = json!({"arguments": {"id": "whk_demo"}});
    let ask = no_record(&h, mcp_call(&h, 4, "webhooks_rotate_secret", rotate.clone(), &admin)).await;
    let state = ask.json()["result"]["requestState"].as_str().unwrap().to_owned();
    let mut declined = rotate.clone();
    declined["requestState"] = json!(state);
    declined["inputResponses"] = json!({"confirm": {"action": "decline"}});
    let resp = no_record(&h, mcp_call(&h, 5, "webhooks_rotate_secret", declined, &admin)).await;
    assert_eq!(resp.json()["result"]["structuredContent"]["result"], "not_confirmed");
    let ask = send(mcp_call(&h, 6, "webhooks_rotate_secret", rotate.clone(), &admin)).await;
    let mut accepted = rotate;
    accepted["requestState"] = ask.json()["result"]["requestState"].clone();
    accepted["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let (resp, r) = one_record(&h, mcp_call(&h, 7, "webhooks_rotate_secret", accepted, &admin)).await;
    assert_eq!(resp.json()["result"]["isError"], false, "{}", resp.json());
    assert_eq!((r["action"].as_str(), r["target_id"].as_str()), (Some("webhooks_rotate_secret"), Some("whk_demo")));
}

/// Calls a tool as the demo admin, confirming it when it asks.
async fn call_confirmed(h: &Harness, id: i64, name: &str, args: &Value) -> Resp {
    let admin = h.admin_token();
    let first = send(mcp_call(h, id, name, json!({"arguments": args}), &admin)).await;
    let result = first.json()["result"].clone();
    if result["resultType"] != "input_required" {
        return first;
    }
    let params = json!({"arguments": args, "requestState": result["requestState"],
                        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    send(mcp_call(h, id + 1, name, params, &admin)).await
}

#[tokio::test]
async fn every_changing_tool_leaves_exactly_one_record_naming_it() {
    let h = Harness::new();
    let created = call_confirmed(&h, 1, "inboxes_upsert", &json!({"slug": "by-tool", "name": "By tool"})).await;
    let inbox = created.json()["result"]["structuredContent"]["data"]["id"].as_str().unwrap().to_owned();
    let hook = call_confirmed(&h, 3, "webhooks_upsert", &json!({"url": "https://hooks.example.com/by-tool"})).await;
    let webhook = hook.json()["result"]["structuredContent"]["data"]["id"].as_str().unwrap().to_owned();
    let calls: Vec<(&str, Value, &str, &str)> = vec![
        ("inboxes_upsert", json!({"slug": "by-tool", "name": "Again"}), "inboxes_upsert", &inbox),
        ("inboxes_update", json!({"id": inbox, "name": "Updated"}), "inbox_update", &inbox),
        ("inbox_senders_add", json!({"id": inbox, "sender": "x@y.example.com"}), "senders_add", &inbox),
        ("inbox_senders_remove", json!({"id": inbox, "sender": "x@y.example.com"}), "sender_remove", &inbox),
        ("inboxes_delete", json!({"id": inbox}), "inbox_delete", &inbox),
        ("emails_reprocess", json!({"id": "eml_broken_line"}), "email_reprocess", "eml_broken_line"),
        ("emails_delete", json!({"id": "eml_receipt_1"}), "email_delete", "eml_receipt_1"),
        ("webhooks_upsert", json!({"url": "https://hooks.example.com/by-tool"}), "webhooks_upsert", &webhook),
        ("webhooks_rotate_secret", json!({"id": webhook}), "webhook_rotate_secret", &webhook),
        ("webhooks_test", json!({"id": "whk_demo"}), "webhook_test", "whk_demo"),
        ("webhook_deliveries_resend", json!({"id": "dlv_demo_failed"}), "delivery_resend", "dlv_demo_failed"),
        ("webhooks_delete", json!({"id": webhook}), "webhook_delete", &webhook),
        ("workspace_content_policy_set", json!({"content_policy": "full"}), "workspace_content_policy_set", "ws_main"),
        ("workspace_retention_set", json!({"retention_days": 400}), "workspace_retention_set", "ws_main"),
        ("emails_erase", json!({"id": "eml_rent_dec"}), "email_erase", "eml_rent_dec"),
    ];
    for (i, (tool, args, operation, target)) in calls.iter().enumerate() {
        let before = trail(&h).await;
        let resp = call_confirmed(&h, 10 + 2 * i64::try_from(i).unwrap(), tool, args).await;
        assert_eq!(resp.json()["result"]["isError"], false, "{tool}: {}", resp.json());
        let new = added(&before, &trail(&h).await);
        assert_eq!(new.len(), 1, "{tool}: {new:?}");
        let r = &new[0];
        assert_eq!((r["action"].as_str(), r["operation"].as_str()), (Some(*tool), Some(*operation)), "{r}");
        assert_eq!((r["surface"].as_str(), r["target_id"].as_str()), (Some("mcp"), Some(*target)), "{r}");
        assert_eq!(r["client"], json!({"name": "test-client", "version": "1.0.0"}), "{r}");
        assert_eq!((r["subject"].as_str(), r["workspace"].as_str()), (Some("usr_admin"), Some("ws_main")), "{r}");
        assert_eq!(r["error_code"], Value::Null, "{r}");
    }

    // Every tool that is not read-only was exercised above.
    let listed = send(h.stateless(json!(99), "tools/list", json!({}))).await;
    let mut changing: Vec<String> = listed.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["annotations"]["readOnlyHint"] == false)
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    changing.sort();
    let mut exercised: Vec<String> = calls.iter().map(|c| c.0.to_owned()).collect();
    exercised.sort();
    exercised.dedup();
    assert_eq!(changing, exercised);
}

#[tokio::test]
async fn a_task_cancelled_through_mcp_is_recorded_as_tasks_cancel() {
    let h = Harness::new();
    let app = h.app().await;
    let job = inbox::api::jobs::new_job(inbox::domain::records::JobKind::WebhookTest, "whk_demo");
    app.store.put_job(&crate::jobs_and_webhooks::ws_main(), &job).await.unwrap();
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let cancel = h.stateless_with(json!(1), "tasks/cancel", json!({"taskId": job.id}), envelope_with(tasks));
    let (resp, r) = one_record(&h, cancel).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    assert_eq!((r["surface"].as_str(), r["action"].as_str()), (Some("mcp"), Some("tasks/cancel")), "{r}");
    assert_eq!((r["operation"].as_str(), r["target_id"].as_str()), (Some("job_cancel"), Some(job.id.as_str())));
}

#[tokio::test]
async fn the_trail_is_its_workspace_admins_only() {
    let h = Harness::new();
    let (_, main_record) = one_record(&h, h.api("DELETE", "/emails/eml_receipt_1")).await;
    let id = main_record["id"].as_str().unwrap();
    let get = format!("/audit/{id}");

    // The record, to an admin of ws_main with audit:read.
    let resp = send(h.api("GET", &get).token(&auditor(&h, "usr_admin"))).await;
    assert_eq!((resp.status, &resp.json()["data"]), (200, &main_record));

    // Not from ws_ops (the same admin), which has a trail of its own.
    let ops = auditor(&h, "usr_admin");
    let resp = send(h.api("DELETE", "/emails/eml_ops_1").token(&ops).header("x-workspace-id", "ws_ops")).await;
    assert_eq!(resp.status, 200);
    let ops_trail = trail_of(&h, "ws_ops", "", 100).await;
    assert_eq!(ops_trail.len(), 1, "{ops_trail:?}");
    assert_eq!(ops_trail[0]["workspace"], "ws_ops");
    assert!(trail(&h).await.iter().all(|r| r["workspace"] == "ws_main"));
    let resp = send(h.api("GET", &get).token(&ops).header("x-workspace-id", "ws_ops")).await;
    assert_eq!(resp.status, 404, "{}", resp.json());

    // Not from another organization.
    let other = h.token_for("usr_other", "org_other", ALL_SCOPES);
    let resp = send(h.api("GET", &get).token(&other).header("x-workspace-id", "ws_other")).await;
    assert_eq!(resp.status, 404);
    let resp = send(h.api("GET", "/audit").token(&other).header("x-workspace-id", "ws_other")).await;
    assert_eq!((resp.status, resp.json()["data"].clone()), (200, json!([])));

    // Not to a viewer or an operator, even with audit:read; not without the scope.
    for sub in ["usr_viewer", "usr_operator"] {
        let resp = send(h.api("GET", "/audit").token(&auditor(&h, sub))).await;
        assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (403, Some("forbidden")), "{sub}");
    }
    let resp = send(h.api("GET", "/audit").token(&h.admin_token())).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (403, Some("insufficient_scope")));

    // Over MCP: the tool is listed for an admin with the scope only; the
    // resource is "not found" to anyone else.
    let listed = |token: String| {
        let h = &h;
        async move {
            let resp = send(h.stateless(json!(1), "tools/list", json!({})).token(&token)).await;
            resp.json()["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "audit_list")
        }
    };
    assert!(listed(auditor(&h, "usr_admin")).await);
    assert!(!listed(auditor(&h, "usr_viewer")).await);
    assert!(!listed(h.admin_token()).await);
    let uri = format!("kobana://inbox/audit/{id}");
    let read = |token: String, ws: &'static str| {
        let h = &h;
        let uri = uri.clone();
        async move {
            let req = h.stateless(json!(2), "resources/read", json!({"uri": uri})).token(&token);
            send(req.header("x-workspace-id", ws)).await
        }
    };
    let resp = read(auditor(&h, "usr_admin"), "ws_main").await;
    let text = resp.json()["result"]["contents"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["data"], main_record);
    let resp = read(auditor(&h, "usr_admin"), "ws_ops").await;
    assert_eq!(resp.json()["error"]["code"], -32602, "{}", resp.json());
    let resp = read(auditor(&h, "usr_viewer"), "ws_main").await;
    assert_eq!(resp.json()["error"]["code"], -32602, "{}", resp.json());
}

#[tokio::test]
async fn secrets_and_bodies_never_enter_the_trail() {
    let h = Harness::new();
    let (resp, _) =
        one_record(&h, h.api("PUT", "/webhooks").json(&json!({"url": "https://hooks.example.com/s"}))).await;
    let webhook = id_of(&resp);
    let mut secrets = vec![resp.json()["data"]["secret"].as_str().unwrap().to_owned()];
    let (resp, _) = one_record(&h, h.api("POST", &format!("/webhooks/{webhook}/rotate_secret"))).await;
    secrets.push(resp.json()["data"]["secret"].as_str().unwrap().to_owned());
    let pipeline = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    let body_text = "Confidencial: senha do cofre 8812-XYZ-AUDIT";
    let mail = json!({"from": "a@b.example.com", "to": "contas@demo.inbox.kobana.com.br",
                      "subject": "Assunto sigiloso AUDIT-42", "text": body_text});
    let ingest = h.api("POST", "/inboxes/inb_receipts/emails").token(&pipeline).header("x-workspace-id", "ws_main");
    let (resp, _) = one_record(&h, ingest.json(&mail)).await;
    assert_eq!(resp.status, 202);

    let secret_like: Vec<&str> =
        secrets.iter().map(String::as_str).chain([body_text, "AUDIT-42", "8812-XYZ"]).collect();
    let listed = serde_json::to_string(&trail(&h).await).unwrap();
    let stored: Vec<String> = table_dump(&h.table).await.into_iter().filter(|item| item.contains("S(\"AUD#")).collect();
    assert_eq!(stored.len(), 3, "{stored:?}");
    for needle in secret_like {
        assert!(!listed.contains(needle), "{needle} is in the trail");
        assert!(!stored.iter().any(|item| item.contains(needle)), "{needle} is in a stored record");
    }
}

#[tokio::test]
async fn filters_pages_and_retention() {
    let h = Harness::new();
    let operator = h.token_for("usr_operator", "org_demo", ADMIN_SCOPES);
    one_record(&h, h.api("POST", "/emails/eml_broken_line/reprocess").token(&operator)).await;
    one_record(&h, h.api("POST", "/webhooks/whk_demo/test")).await;
    one_record(&h, h.api("DELETE", "/emails/eml_receipt_1")).await;
    one_record(&h, h.api("POST", "/webhooks/whk_demo/test").token(&operator)).await;

    let all = trail_of(&h, "ws_main", "", 100).await;
    assert_eq!(all.len(), 4);
    let ids: Vec<&str> = all.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let mut newest_first = ids.clone();
    newest_first.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(ids, newest_first, "newest first");
    // One per page: the same records, none twice.
    assert_eq!(trail_of(&h, "ws_main", "", 1).await, all);

    let by_operator = trail_of(&h, "ws_main", "&subject=usr_operator", 100).await;
    assert_eq!(by_operator.len(), 2);
    assert!(by_operator.iter().all(|r| r["subject"] == "usr_operator"));
    let on_webhook = trail_of(&h, "ws_main", "&target_id=whk_demo", 1).await;
    assert_eq!(on_webhook.len(), 2);
    assert!(on_webhook.iter().all(|r| r["operation"] == "webhook_test"));
    let both = trail_of(&h, "ws_main", "&target_id=whk_demo&subject=usr_admin", 100).await;
    assert_eq!(both.len(), 1);

    let oldest = all.last().unwrap()["at"].as_str().unwrap().to_owned();
    let newest = all[0]["at"].as_str().unwrap().to_owned();
    assert_eq!(trail_of(&h, "ws_main", &format!("&since={oldest}&until={newest}"), 100).await, all);
    assert_eq!(trail_of(&h, "ws_main", &format!("&until={oldest}"), 100).await.last(), all.last());
    assert!(trail_of(&h, "ws_main", "&since=2999-01-01", 100).await.is_empty());
    assert!(trail_of(&h, "ws_main", "&until=2001-01-01", 100).await.is_empty());

    let token = auditor(&h, "usr_admin");
    let bad = [
        "target_id=../x",
        "since=yesterday",
        "since=2026-02-02&until=2026-01-01",
        "subject=",
        "actor=me",
        "until=9999-12-31T23:59:59-23:59",
    ];
    for bad in bad {
        let resp = send(h.api("GET", &format!("/audit?{bad}")).token(&token)).await;
        assert_eq!(resp.status, 400, "{bad}: {}", resp.json());
    }
    let resp = send(h.api("GET", "/audit/aud_nope").token(&token)).await;
    assert_eq!(resp.status, 404);

    // Kept 400 days by the table's TTL.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let stored: Vec<String> = table_dump(&h.table).await.into_iter().filter(|item| item.contains("S(\"AUD#")).collect();
    assert_eq!(stored.len(), 4);
    for item in stored {
        let tail = item.split("\"expires_at\": N(\"").nth(1).unwrap_or_else(|| panic!("no expires_at: {item}"));
        let expires: u64 = tail.split('"').next().unwrap().parse().unwrap();
        let days = expires.saturating_sub(now) / 86_400;
        assert!((399..=400).contains(&days), "kept {days} days: {item}");
    }
}

#[tokio::test]
async fn the_audit_list_tool_reads_the_same_trail() {
    let h = Harness::new();
    one_record(&h, h.api("DELETE", "/emails/eml_receipt_1")).await;
    one_record(&h, h.api("POST", "/webhooks/whk_demo/test")).await;
    let token = auditor(&h, "usr_admin");
    let args = json!({"arguments": {"target_id": "whk_demo"}});
    let resp = send(mcp_call(&h, 1, "audit_list", args, &token)).await;
    let result = &resp.json()["result"];
    assert_eq!(result["isError"], false, "{result}");
    let via_rest = trail_of(&h, "ws_main", "&target_id=whk_demo", 100).await;
    assert_eq!(result["structuredContent"]["data"], json!(via_rest));
    // Listing the trail is a read: it leaves no record.
    let all = trail(&h).await;
    assert_eq!(all.len(), 2);

    // Completions of the resource template's id: the records, by id prefix.
    let complete = |token: String, value: String| {
        let h = &h;
        async move {
            let params = json!({"ref": {"type": "ref/resource", "uri": "kobana://inbox/audit/{id}"},
                                "argument": {"name": "id", "value": value}});
            let resp = send(h.stateless(json!(5), "completion/complete", params).token(&token)).await;
            resp.json()["result"]["completion"]["values"].clone()
        }
    };
    let mut ids: Vec<Value> = all.iter().map(|r| r["id"].clone()).collect();
    ids.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    assert_eq!(complete(token.clone(), "aud_".into()).await, json!(ids));
    let newest = all[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(complete(token, newest.clone()).await, json!([newest]));
    assert_eq!(complete(h.admin_token(), "aud_".into()).await, json!([]), "without audit:read: nothing");
}

#[tokio::test]
async fn racing_upserts_leave_one_record_each() {
    let h = Harness::new();
    let body = json!({"slug": "raced", "name": "Raced"});
    let calls = (0..5).map(|_| send(h.api("PUT", "/inboxes").json(&body)));
    let answers = futures_util::future::join_all(calls).await;
    let mut statuses: Vec<u16> = answers.iter().map(|r| r.status).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 200, 200, 200, 201]);
    let records = trail(&h).await;
    let mut recorded: Vec<u64> = records.iter().map(|r| r["status"].as_u64().unwrap()).collect();
    recorded.sort_unstable();
    assert_eq!(recorded, [200, 200, 200, 200, 201], "{records:?}");
    let id = answers[0].json()["data"]["id"].clone();
    assert!(records.iter().all(|r| r["target_id"] == id));
}

#[tokio::test]
async fn only_a_caller_who_could_make_the_change_has_a_refusal_recorded() {
    let h = Harness::new();
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    // A viewer (every scope) cancelling made-up jobs: 404s, nothing recorded.
    let viewer = h.token_for("usr_viewer", "org_demo", ADMIN_SCOPES);
    let resp = no_record(&h, h.api("POST", "/jobs/job_madeup/cancel").token(&viewer)).await;
    assert_eq!(resp.status, 404);
    let long = "x".repeat(5000);
    let cancel = h.stateless_with(json!(1), "tasks/cancel", json!({"taskId": long}), envelope_with(tasks.clone()));
    no_record(&h, cancel.token(&viewer)).await;
    // An operator's refused cancel is recorded; a target that is not a record id is not kept.
    let operator = h.token_for("usr_operator", "org_demo", ADMIN_SCOPES);
    let (resp, r) = one_record(&h, h.api("POST", "/jobs/job_madeup/cancel").token(&operator)).await;
    assert_eq!(resp.status, 404);
    assert_eq!((r["target_id"].as_str(), r["error_code"].as_str()), (Some("job_madeup"), Some("not_found")), "{r}");
    let cancel = h.stateless_with(json!(2), "tasks/cancel", json!({"taskId": long}), envelope_with(tasks));
    let (_, r) = one_record(&h, cancel.token(&operator)).await;
    assert_eq!((r["target_id"].clone(), r["action"].as_str()), (Value::Null, Some("tasks/cancel")), "{r}");
    assert_eq!(r["changed"], false);

    // Refused before the operation on MCP: arguments outside the schema, a
    // read-only connection's cancel, a role that may not.
    let admin = h.admin_token();
    let bad_args = json!({"arguments": {"id": "inb_bills", "name": 42}});
    let resp = no_record(&h, mcp_call(&h, 3, "inboxes_update", bad_args, &admin)).await;
    assert_eq!(resp.json()["result"]["isError"], true);
    let app = h.app().await;
    let job = inbox::api::jobs::new_job(inbox::domain::records::JobKind::WebhookTest, "whk_demo");
    app.store.put_job(&crate::jobs_and_webhooks::ws_main(), &job).await.unwrap();
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let cancel = h.stateless_with(json!(4), "tasks/cancel", json!({"taskId": job.id}), envelope_with(tasks));
    no_record(&h, cancel.path("/mcp/readonly")).await;
    let args = json!({"arguments": {"slug": "nope", "name": "Nope"}});
    let resp = no_record(&h, mcp_call(&h, 5, "inboxes_upsert", args, &operator)).await;
    assert_eq!(resp.json()["result"]["structuredContent"]["error"]["code"], "forbidden");
}

#[tokio::test]
async fn the_audit_toolset_and_scope_follow_the_narrowing() {
    let h = Harness::new();
    let token = auditor(&h, "usr_admin");
    let names = |resp: Resp| -> Vec<String> {
        resp.json()["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let list = |toolsets: &str| {
        h.stateless(json!(1), "tools/list", json!({})).token(&token).header("x-mcp-toolsets", toolsets)
    };
    assert_eq!(names(send(list("audit")).await), ["audit_list"]);
    assert!(!names(send(list("jobs")).await).contains(&"audit_list".to_owned()));
    // `jobs` keeps the e-mail and webhook read scopes, not audit:read: the
    // audit resource is not found through it.
    let (_, r) = one_record(&h, h.api("DELETE", "/emails/eml_receipt_1")).await;
    let uri = format!("kobana://inbox/audit/{}", r["id"].as_str().unwrap());
    let read =
        |path: &'static str| h.stateless(json!(2), "resources/read", json!({"uri": uri})).token(&token).path(path);
    assert_eq!(send(read("/mcp/x/jobs")).await.json()["error"]["code"], -32602);
    let found = send(read("/mcp/x/audit")).await.json();
    assert!(found["result"]["contents"][0]["text"].as_str().is_some(), "{found}");
    let found = send(read("/mcp/readonly")).await.json();
    assert!(found["result"]["contents"][0]["text"].as_str().is_some(), "read-only keeps a read scope: {found}");
}

#[tokio::test]
async fn the_digest_is_the_same_from_both_surfaces_for_path_arguments_too() {
    let h = Harness::new();
    let admin = h.admin_token();
    let args = json!({"id": "inb_receipts", "name": "Recibos 2"});
    let (_, by_tool) = one_record(&h, mcp_call(&h, 1, "inboxes_update", json!({"arguments": args}), &admin)).await;
    let body = json!({"name": "Recibos 2"});
    let (_, by_rest) = one_record(&h, h.api("PATCH", "/inboxes/inb_receipts").json(&body)).await;
    assert_eq!(by_tool["arguments_digest"], by_rest["arguments_digest"]);
    let (_, other) = one_record(&h, h.api("PATCH", "/inboxes/inb_bills").json(&body)).await;
    assert_ne!(other["arguments_digest"], by_rest["arguments_digest"], "the id is an argument");
    // A sender in the path (its @ percent-encoded on REST) and the tool's argument.
    let sender = json!({"arguments": {"id": "inb_bills", "sender": "@energia.example.com"}});
    let ask = send(mcp_call(&h, 2, "inbox_senders_remove", sender.clone(), &admin)).await;
    let mut confirmed = sender;
    confirmed["requestState"] = ask.json()["result"]["requestState"].clone();
    confirmed["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let (_, by_tool) = one_record(&h, mcp_call(&h, 3, "inbox_senders_remove", confirmed, &admin)).await;
    send(h.api("POST", "/inboxes/inb_bills/senders").json(&json!({"sender": "@energia.example.com"}))).await;
    let (_, by_rest) = one_record(&h, h.api("DELETE", "/inboxes/inb_bills/senders/%40energia.example.com")).await;
    assert_eq!(by_tool["arguments_digest"], by_rest["arguments_digest"]);
}

#[tokio::test]
async fn a_long_client_name_is_cut_and_a_cursor_is_bound_to_its_filters() {
    let h = Harness::new();
    let mut env = envelope_with(json!({}));
    env["io.modelcontextprotocol/clientInfo"] = json!({"name": "n".repeat(1000), "version": "v".repeat(300)});
    let args = json!({"name": "inboxes_upsert", "arguments": {"slug": "long-client", "name": "L"}});
    let (_, r) = one_record(&h, h.stateless_with(json!(1), "tools/call", args, env)).await;
    assert_eq!(r["client"]["name"], "n".repeat(128));
    assert_eq!(r["client"]["version"], "v".repeat(128));

    one_record(&h, h.api("DELETE", "/emails/eml_receipt_1")).await;
    let token = auditor(&h, "usr_admin");
    let page = send(h.api("GET", "/audit?limit=1").token(&token)).await.json();
    let cursor = page["meta"]["next_cursor"].as_str().unwrap().to_owned();
    let next = send(h.api("GET", &format!("/audit?limit=1&cursor={cursor}")).token(&token)).await;
    assert_eq!(next.status, 200);
    for other in [format!("/audit?limit=1&subject=usr_admin&cursor={cursor}"), format!("/inboxes?cursor={cursor}")] {
        let resp = send(h.api("GET", &other).token(&token)).await;
        assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (400, Some("invalid_cursor")), "{other}");
    }
    let resp =
        send(h.api("GET", &format!("/audit?limit=1&cursor={cursor}")).token(&token).header("x-workspace-id", "ws_ops"))
            .await;
    assert_eq!(resp.status, 400, "another workspace");
}

#[tokio::test]
async fn an_expired_record_is_left_out_before_the_sweeper_removes_it() {
    use aws_sdk_dynamodb::types::AttributeValue;
    let h = Harness::new();
    let (_, r) = one_record(&h, h.api("DELETE", "/emails/eml_receipt_1")).await;
    let id = r["id"].as_str().unwrap().to_owned();
    // The same item, its TTL one second past.
    let client = common::dynamodb_client();
    let past = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() - 1;
    client
        .update_item()
        .table_name(&h.table)
        .key("pk", AttributeValue::S("T#org_demo#W#ws_main".into()))
        .key("sk", AttributeValue::S(format!("AUD#{id}")))
        .update_expression("SET expires_at = :past")
        .condition_expression("attribute_exists(pk)")
        .expression_attribute_values(":past", AttributeValue::N(past.to_string()))
        .send()
        .await
        .expect("the record's item");
    assert!(trail(&h).await.is_empty());
    let resp = send(h.api("GET", &format!("/audit/{id}")).token(&auditor(&h, "usr_admin"))).await;
    assert_eq!(resp.status, 404);
}
