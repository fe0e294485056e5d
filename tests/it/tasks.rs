//! The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) over the
//! job queue, through the real handler: negotiation, task creation after the
//! confirmation round trip, `tasks/get` in every job state, `tasks/cancel`
//! (and `POST /api/v1/jobs/{id}/cancel`) stopping a queued job's effect,
//! tenant and scope isolation, routing headers, and the 2025 eras unchanged.

use crate::common;
use crate::jobs_and_webhooks::{Receiver, run_job, ws_main};

use common::{ADMIN_SCOPES, Harness, Req, Resp, envelope_with, rest, send};
use inbox::domain::records::{JobErrorKind, JobStatus};
use inbox::worker::Ran;
use serde_json::{Value, json};

const EXT: &str = "io.modelcontextprotocol/tasks";

/// Client capabilities: form elicitation (the long tools are destructive)
/// and, with `tasks`, the tasks extension.
fn caps(tasks: bool) -> Value {
    if tasks {
        json!({"elicitation": {"form": {}}, "extensions": {EXT: {}}})
    } else {
        json!({"elicitation": {"form": {}}})
    }
}

fn rpc<'a>(h: &'a Harness, id: i64, method: &str, params: Value, tasks: bool) -> Req<'a> {
    h.stateless_with(json!(id), method, params, envelope_with(caps(tasks)))
}

fn task_req<'a>(h: &'a Harness, id: i64, method: &str, task_id: &str) -> Req<'a> {
    rpc(h, id, method, json!({"taskId": task_id}), true)
}

fn accept() -> Value {
    json!({"confirm": {"action": "accept", "content": {"confirm": true}}})
}

/// A long tool through the confirmation round trip: the round-2 answer.
async fn confirmed(h: &Harness, id: i64, tool: &str, args: &Value, tasks: bool) -> Resp {
    let resp = send(rpc(h, id, "tools/call", json!({"name": tool, "arguments": args}), tasks)).await;
    // The user is asked before anything exists.
    let result = resp.assert_stateless_result(json!(id), "input_required");
    assert!(result.get("taskId").is_none(), "{result}");
    let state = result["requestState"].as_str().unwrap_or_else(|| panic!("no requestState: {result}")).to_owned();
    let params = json!({"name": tool, "arguments": args, "requestState": state, "inputResponses": accept()});
    send(rpc(h, id + 1, "tools/call", params, tasks)).await
}

/// A webhook pointing at `receiver`: its id.
async fn webhook_for(h: &Harness, receiver: &Receiver) -> String {
    let resp = send(h.api("PUT", "/webhooks").json(&json!({"url": receiver.url()}))).await;
    let body = resp.json();
    assert_eq!(resp.status, 201, "{body}");
    body["data"]["id"].as_str().unwrap_or_else(|| panic!("no id: {body}")).to_owned()
}

/// Checks a flat `CreateTaskResult` and returns its task id.
#[track_caller]
fn created_task(resp: &Resp, id: i64) -> String {
    let result = resp.assert_stateless_result(json!(id), "task");
    assert_eq!(result["status"], "working", "{result}");
    for absent in ["task", "result", "requestState", "content", "isError", "structuredContent"] {
        assert!(result.get(absent).is_none(), "no {absent} in a CreateTaskResult: {result}");
    }
    assert_task_fields(&result);
    result["taskId"].as_str().unwrap_or_else(|| panic!("no taskId: {result}")).to_owned()
}

/// The fields every task view carries.
#[track_caller]
fn assert_task_fields(task: &Value) {
    let id = task["taskId"].as_str().unwrap_or_else(|| panic!("no taskId: {task}"));
    assert!(id.starts_with("job_"), "the task id is the job id: {task}");
    for stamp in ["createdAt", "lastUpdatedAt"] {
        let text = task[stamp].as_str().unwrap_or_else(|| panic!("no {stamp}: {task}"));
        assert!(
            time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).is_ok(),
            "{stamp} is not ISO 8601: {text}"
        );
    }
    assert!(task["ttlMs"].as_u64().is_some_and(|ttl| ttl > 0), "ttlMs a positive integer: {task}");
    assert!(task["pollIntervalMs"].as_u64().is_some_and(|p| p > 0), "pollIntervalMs an integer: {task}");
    assert!(task["statusMessage"].is_string(), "{task}");
}

/// `tasks/get` that must succeed: the task.
async fn get_task(h: &Harness, id: i64, task_id: &str) -> Value {
    let resp = send(task_req(h, id, "tasks/get", task_id)).await;
    let task = resp.assert_stateless_ok(json!(id));
    assert_eq!(task["resultType"], "complete", "{task}");
    assert_eq!(task["taskId"], task_id, "{task}");
    assert_task_fields(&task);
    task
}

/// The `CallToolResult` a completed task inlines, checked: its payload.
#[track_caller]
fn inlined(task: &Value, is_error: bool) -> Value {
    assert_eq!(task["status"], "completed", "{task}");
    assert!(task.get("error").is_none(), "{task}");
    let result = &task["result"];
    assert_eq!(result["resultType"], "complete", "the inlined result says what it is: {task}");
    assert_eq!(result["isError"], is_error, "{task}");
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text content: {task}"));
    let parsed: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("text is not JSON ({e}): {text}"));
    assert_eq!(result["structuredContent"], parsed, "{task}");
    parsed
}

/// A `webhooks_test` task, created through MCP with the extension.
async fn test_task(h: &Harness, webhook: &str) -> String {
    let resp = confirmed(h, 100, "webhooks_test", &json!({"id": webhook}), true).await;
    created_task(&resp, 101)
}

#[track_caller]
fn assert_not_found(resp: &Resp, id: i64, task_id: &str) {
    resp.assert_error(200, -32602, json!(id));
    let error = &resp.json()["error"];
    assert_eq!(error["message"], "Task not found", "{error}");
    assert_eq!(error["data"], json!({"taskId": task_id}), "nothing hints where it lives: {error}");
}

// ---------------------------------------------------------------------------
// Negotiation
// ---------------------------------------------------------------------------

#[tokio::test]
async fn discover_advertises_the_extension_and_the_handshake_era_does_not() {
    let h = Harness::new();
    let caps =
        send(h.stateless(json!(1), "server/discover", json!({}))).await.assert_stateless_ok(json!(1))["capabilities"]
            .clone();
    assert_eq!(caps["extensions"][EXT], json!({}), "{caps}");
    assert!(caps.get("tasks").is_none(), "never the old capabilities.tasks slot: {caps}");

    let params =
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let resp = send(h.handshake(json!(2), "initialize", params, None)).await;
    let caps = resp.json()["result"]["capabilities"].clone();
    assert!(caps.get("extensions").is_none() && caps.get("tasks").is_none(), "2025 eras have no tasks: {caps}");
}

#[tokio::test]
async fn without_the_extension_every_tasks_method_is_missing_capability_naming_it() {
    let h = Harness::new();
    for (i, method) in ["tasks/get", "tasks/update", "tasks/cancel"].into_iter().enumerate() {
        let id = i64::try_from(i).unwrap() + 1;
        let resp = send(rpc(&h, id, method, json!({"taskId": "job_demo"}), false)).await;
        resp.assert_error(400, -32021, json!(id));
        let data = &resp.json()["error"]["data"];
        assert_eq!(data, &json!({"requiredCapabilities": {"extensions": {EXT: {}}}}), "{method}");
    }
    // A declaration that is not an object declares nothing.
    let env = envelope_with(json!({"extensions": {EXT: true}}));
    let resp = send(h.stateless_with(json!(9), "tasks/get", json!({"taskId": "job_demo"}), env)).await;
    resp.assert_error(400, -32021, json!(9));
}

#[tokio::test]
async fn without_the_extension_a_long_tool_answers_with_its_job_as_before() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let webhook = webhook_for(&h, &receiver).await;
    let resp = confirmed(&h, 1, "webhooks_test", &json!({"id": webhook}), false).await;
    let result = resp.assert_stateless_ok(json!(2));
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["data"]["job"]["status"], "queued", "{result}");
    assert!(result.get("taskId").is_none(), "{result}");
}

#[tokio::test]
async fn read_tools_stay_synchronous_with_the_extension() {
    let h = Harness::new();
    // A v1 client's `task` hint is tolerated and promotes nothing.
    let params = json!({"name": "jobs_get", "arguments": {"id": "job_demo"}, "task": {"ttl": 60_000}});
    let resp = send(rpc(&h, 1, "tools/call", params, true)).await;
    let result = resp.assert_stateless_ok(json!(1));
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(result["structuredContent"]["data"]["id"], "job_demo", "{result}");
}

// ---------------------------------------------------------------------------
// Creation and polling
// ---------------------------------------------------------------------------

#[tokio::test]
async fn confirmation_first_then_a_task_that_tasks_get_follows_to_its_result() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let webhook = webhook_for(&h, &receiver).await;
    let resp = confirmed(&h, 1, "webhooks_test", &json!({"id": webhook}), true).await;
    let task_id = created_task(&resp, 2);
    assert!(receiver.hits().is_empty(), "answered before the job ran");

    // Durable at once: the task and its job are readable right away.
    let task = get_task(&h, 3, &task_id).await;
    assert_eq!(task["status"], "working", "{task}");
    assert!(task.get("result").is_none() && task.get("error").is_none(), "{task}");
    let (status, job) = rest(&h, "GET", &format!("/jobs/{task_id}")).await;
    assert_eq!((status, job["data"]["status"].as_str()), (200, Some("queued")), "{job}");
    assert_eq!(job["data"]["kind"], "webhook.test", "{job}");

    assert_eq!(run_job(&h, &task_id).await, Ran::Finished(JobStatus::Succeeded));
    let task = get_task(&h, 4, &task_id).await;
    let payload = inlined(&task, false);
    assert_eq!(payload["data"]["job"]["status"], "succeeded", "{payload}");
    assert_eq!(payload["data"]["job"]["result"]["delivery"]["status"], "succeeded", "{payload}");
    assert_eq!(payload["data"]["job"], rest(&h, "GET", &format!("/jobs/{task_id}")).await.1["data"]);
    assert_eq!(receiver.events("webhook.test").len(), 1, "delivered once");
    assert!(task["lastUpdatedAt"].as_str() >= task["createdAt"].as_str(), "{task}");
}

#[tokio::test]
async fn emails_reprocess_and_resend_become_tasks_too() {
    let h = Harness::new();
    let resp = confirmed(&h, 1, "emails_reprocess", &json!({"id": "eml_energy_nov"}), true).await;
    let task_id = created_task(&resp, 2);
    assert_eq!(run_job(&h, &task_id).await, Ran::Finished(JobStatus::Succeeded));
    let payload = inlined(&get_task(&h, 3, &task_id).await, false);
    assert_eq!(payload["data"]["job"]["result"]["extracted"]["amount_cents"], 48_750, "{payload}");

    let receiver = Receiver::start().await;
    let webhook = webhook_for(&h, &receiver).await;
    let first = test_task(&h, &webhook).await;
    assert_eq!(run_job(&h, &first).await, Ran::Finished(JobStatus::Succeeded));
    let delivery = inlined(&get_task(&h, 4, &first).await, false)["data"]["job"]["result"]["delivery"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let resp = confirmed(&h, 5, "webhook_deliveries_resend", &json!({"id": delivery}), true).await;
    let resend = created_task(&resp, 6);
    assert_eq!(run_job(&h, &resend).await, Ran::Finished(JobStatus::Succeeded));
    let payload = inlined(&get_task(&h, 7, &resend).await, false);
    assert_eq!(payload["data"]["job"]["result"]["delivery"]["resend_of"], delivery.as_str(), "{payload}");
    assert_eq!(receiver.events("webhook.test").len(), 2);
}

#[tokio::test]
async fn a_product_failure_is_a_completed_task_with_is_error() {
    let h = Harness::new();
    // The receiver refuses: the job ran fine, its effect failed.
    let receiver = Receiver::answering(500).await;
    let webhook = webhook_for(&h, &receiver).await;
    let task_id = test_task(&h, &webhook).await;
    assert_eq!(run_job(&h, &task_id).await, Ran::Finished(JobStatus::Succeeded));
    let payload = inlined(&get_task(&h, 1, &task_id).await, true);
    assert_eq!(payload["error"]["code"], "delivery_failed", "{payload}");
    assert!(payload["error"]["message"].as_str().unwrap().contains("500"), "{payload}");
    assert_eq!(payload["data"]["job"]["result"]["delivery"]["status_code"], 500, "{payload}");

    // The boleto does not parse.
    let resp = confirmed(&h, 2, "emails_reprocess", &json!({"id": "eml_broken_line"}), true).await;
    let task_id = created_task(&resp, 3);
    assert_eq!(run_job(&h, &task_id).await, Ran::Finished(JobStatus::Succeeded));
    let payload = inlined(&get_task(&h, 4, &task_id).await, true);
    assert_eq!(payload["error"]["code"], "extraction_failed", "{payload}");

    // The operation cannot be done any more: the webhook was disabled meanwhile.
    let ok = Receiver::start().await;
    let webhook = webhook_for(&h, &ok).await;
    let task_id = test_task(&h, &webhook).await;
    let resp = send(h.api("PUT", "/webhooks").json(&json!({"url": ok.url(), "status": "disabled"}))).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    assert_eq!(run_job(&h, &task_id).await, Ran::Finished(JobStatus::Failed));
    let task = get_task(&h, 5, &task_id).await;
    let payload = inlined(&task, true);
    assert_eq!(payload["error"]["code"], "job_failed", "{payload}");
    assert_eq!(payload["data"]["job"]["error_kind"], "operation", "{payload}");
    assert!(ok.hits().is_empty());
}

#[tokio::test]
async fn a_platform_failure_is_a_failed_task_with_a_json_rpc_error() {
    let h = Harness::new();
    let app = h.app().await;
    let mut job = inbox::api::jobs::new_job(inbox::domain::records::JobKind::WebhookTest, "whk_demo");
    job.status = JobStatus::Failed;
    job.attempts = 4;
    job.error = Some("gave up after 4 attempts: throttled by DynamoDB".into());
    job.error_kind = Some(JobErrorKind::Platform);
    app.store.put_job(&ws_main(), &job).await.unwrap();

    let task = get_task(&h, 1, &job.id).await;
    assert_eq!(task["status"], "failed", "{task}");
    assert_eq!(task["error"], json!({"code": -32603, "message": "gave up after 4 attempts: throttled by DynamoDB"}));
    assert!(task.get("result").is_none(), "{task}");
}

// ---------------------------------------------------------------------------
// Cancellation
// ---------------------------------------------------------------------------

#[tokio::test]
async fn cancelling_a_queued_task_stops_its_effect_and_is_idempotent() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let webhook = webhook_for(&h, &receiver).await;
    let task_id = test_task(&h, &webhook).await;

    for id in [1, 2] {
        let resp = send(task_req(&h, id, "tasks/cancel", &task_id)).await;
        let ack = resp.assert_stateless_ok(json!(id));
        let fields: Vec<&String> = ack.as_object().unwrap().keys().filter(|k| *k != "_meta").collect();
        assert_eq!(fields, vec!["resultType"], "an empty acknowledgement: {ack}");
        assert_eq!(ack["resultType"], "complete");
    }
    let task = get_task(&h, 3, &task_id).await;
    assert_eq!(task["status"], "cancelled", "{task}");
    assert!(task.get("result").is_none() && task.get("error").is_none(), "{task}");

    assert_eq!(run_job(&h, &task_id).await, Ran::Skipped, "a cancelled job is never run");
    assert!(receiver.hits().is_empty(), "nothing was sent");
    let (_, deliveries) = rest(&h, "GET", &format!("/webhooks/{webhook}/deliveries")).await;
    assert_eq!(deliveries["data"], json!([]), "nothing was recorded");
    let (status, job) = rest(&h, "GET", &format!("/jobs/{task_id}")).await;
    assert_eq!((status, job["data"]["status"].as_str()), (200, Some("cancelled")), "{job}");
    assert_eq!(job["data"]["attempts"], 0, "{job}");
}

#[tokio::test]
async fn cancelling_a_finished_task_is_acknowledged_and_changes_nothing() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let webhook = webhook_for(&h, &receiver).await;
    let task_id = test_task(&h, &webhook).await;
    assert_eq!(run_job(&h, &task_id).await, Ran::Finished(JobStatus::Succeeded));
    let before = get_task(&h, 1, &task_id).await;

    // The extension (and its official client): cancelling a task in a
    // terminal status is acknowledged, and the task stays as it was.
    let resp = send(task_req(&h, 2, "tasks/cancel", &task_id)).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    assert_eq!(resp.json()["id"], json!(2));
    assert!(resp.json().get("error").is_none(), "{}", resp.json());
    assert_eq!(resp.result()["resultType"], "complete", "{}", resp.json());
    let after = get_task(&h, 3, &task_id).await;
    assert_eq!(after["status"], "completed", "{after}");
    assert_eq!(after["result"], before["result"]);
    assert_eq!(after["lastUpdatedAt"], before["lastUpdatedAt"]);
    assert_eq!(run_job(&h, &task_id).await, Ran::Skipped, "nothing runs again");

    // REST keeps its answer: a cancel that cancels nothing is a conflict there.
    let (status, body) = rest(&h, "POST", &format!("/jobs/{task_id}/cancel")).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "job_not_cancellable", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("succeeded"), "{body}");
}

#[tokio::test]
async fn rest_cancel_of_a_reprocess_puts_the_email_back_and_the_worker_skips_it() {
    let h = Harness::new();
    let (_, before) = rest(&h, "GET", "/emails/eml_telecom_nov").await;
    assert_eq!(before["data"]["status"], "processed", "{before}");
    let resp = send(h.api("POST", "/emails/eml_telecom_nov/reprocess")).await;
    assert_eq!(resp.status, 202, "{}", resp.json());
    let job_id = resp.json()["data"]["job"]["id"].as_str().unwrap().to_owned();
    let (_, during) = rest(&h, "GET", "/emails/eml_telecom_nov").await;
    assert_eq!(during["data"]["status"], "processing");

    let (status, body) = rest(&h, "POST", &format!("/jobs/{job_id}/cancel")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["status"], "cancelled", "{body}");
    assert_eq!(body["data"]["id"], job_id.as_str(), "{body}");
    let (status, again) = rest(&h, "POST", &format!("/jobs/{job_id}/cancel")).await;
    assert_eq!((status, &again["data"]["status"]), (200, &json!("cancelled")), "idempotent: {again}");

    let (_, after) = rest(&h, "GET", "/emails/eml_telecom_nov").await;
    assert_eq!(after["data"]["status"], "processed", "its status before the reprocess: {after}");
    assert_eq!(after["data"]["extracted"], before["data"]["extracted"], "its data untouched");
    assert_eq!(run_job(&h, &job_id).await, Ran::Skipped);
    let (_, still) = rest(&h, "GET", "/emails/eml_telecom_nov").await;
    assert_eq!(still["data"]["status"], "processed");
    // And it can be reprocessed again.
    assert_eq!(send(h.api("POST", "/emails/eml_telecom_nov/reprocess")).await.status, 202);
}

#[tokio::test]
async fn rest_cancel_needs_the_subjects_write_scope_and_the_operator_role() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let webhook = webhook_for(&h, &receiver).await;
    let task_id = test_task(&h, &webhook).await;
    let path = format!("/jobs/{task_id}/cancel");

    let viewer = h.token_for("usr_viewer", "org_demo", ADMIN_SCOPES);
    let resp = send(h.api("POST", &path).token(&viewer)).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (403, Some("forbidden")), "{}", resp.json());

    let no_write = h.token_for("usr_admin", "org_demo", "webhooks:read emails:read emails:write");
    let resp = send(h.api("POST", &path).token(&no_write)).await;
    assert_eq!(resp.status, 403, "{}", resp.json());
    assert_eq!(resp.json()["error"]["code"], "insufficient_scope", "{}", resp.json());

    let resp = send(h.api("POST", &path).header("x-workspace-id", "ws_ops")).await;
    assert_eq!(resp.status, 404, "another workspace: {}", resp.json());
    let other = h.token_for("usr_other", "org_other", ADMIN_SCOPES);
    let resp = send(h.api("POST", &path).token(&other).without("x-workspace-id")).await;
    assert_eq!(resp.status, 404, "another organization: {}", resp.json());
    let (status, _) = rest(&h, "POST", "/jobs/job_nope/cancel").await;
    assert_eq!(status, 404);
    let (status, body) = rest(&h, "GET", "/jobs/x/cancel").await;
    assert_eq!((status, body["error"]["code"].as_str()), (405, Some("method_not_allowed")), "{body}");

    let operator = h.token_for("usr_operator", "org_demo", ADMIN_SCOPES);
    let resp = send(h.api("POST", &path).token(&operator)).await;
    assert_eq!((resp.status, resp.json()["data"]["status"].as_str()), (200, Some("cancelled")), "{}", resp.json());
}

#[tokio::test]
async fn tasks_cancel_by_a_reader_who_may_not_act_says_why_and_changes_nothing() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let webhook = webhook_for(&h, &receiver).await;
    let task_id = test_task(&h, &webhook).await;

    let viewer = h.token_for("usr_viewer", "org_demo", ADMIN_SCOPES);
    let resp = send(task_req(&h, 1, "tasks/cancel", &task_id).token(&viewer)).await;
    resp.assert_error(403, 40300, json!(1));
    let read_only = h.token_for("usr_admin", "org_demo", "webhooks:read emails:read");
    let resp = send(task_req(&h, 2, "tasks/cancel", &task_id).token(&read_only)).await;
    resp.assert_error(403, 40300, json!(2));
    assert!(resp.header("www-authenticate").is_some_and(|c| c.contains("webhooks:write")), "step-up challenge");
    // Cannot read it either: it does not exist for them.
    let emails_only = h.token_for("usr_admin", "org_demo", "emails:read emails:write");
    assert_not_found(&send(task_req(&h, 3, "tasks/cancel", &task_id).token(&emails_only)).await, 3, &task_id);

    assert_eq!(get_task(&h, 4, &task_id).await["status"], "working", "still queued");
}

// ---------------------------------------------------------------------------
// Isolation, parameters, headers, methods
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_task_is_not_found_from_another_workspace_organization_or_scope() {
    let h = Harness::new();
    let receiver = Receiver::start().await;
    let webhook = webhook_for(&h, &receiver).await;
    let task_id = test_task(&h, &webhook).await;

    let resp = send(task_req(&h, 1, "tasks/get", &task_id).header("x-workspace-id", "ws_ops")).await;
    assert_not_found(&resp, 1, &task_id);
    let resp = send(task_req(&h, 2, "tasks/cancel", &task_id).header("x-workspace-id", "ws_ops")).await;
    assert_not_found(&resp, 2, &task_id);
    let other = h.token_for("usr_other", "org_other", ADMIN_SCOPES);
    let resp = send(task_req(&h, 3, "tasks/get", &task_id).token(&other).without("x-workspace-id")).await;
    assert_not_found(&resp, 3, &task_id);
    let emails_only = h.token_for("usr_admin", "org_demo", "emails:read emails:write");
    let resp = send(task_req(&h, 4, "tasks/get", &task_id).token(&emails_only)).await;
    assert_not_found(&resp, 4, &task_id);
    for (id, unknown) in [(5, "job_nope"), (6, "../jobs/x"), (7, "whk_demo"), (8, "")] {
        assert_not_found(&send(task_req(&h, id, "tasks/get", unknown)).await, id, unknown);
    }
    // Nothing changed for its owner.
    assert_eq!(get_task(&h, 9, &task_id).await["status"], "working");
    assert_eq!(run_job(&h, &task_id).await, Ran::Finished(JobStatus::Succeeded));
}

#[tokio::test]
async fn tasks_methods_need_a_task_id_string() {
    let h = Harness::new();
    for (id, params) in [(1, json!({})), (2, json!({"taskId": 7})), (3, json!({"taskId": null}))] {
        let resp = send(rpc(&h, id, "tasks/get", params, true)).await;
        resp.assert_error(200, -32602, json!(id));
        assert!(resp.json()["error"]["message"].as_str().unwrap().contains("taskId"), "{}", resp.json());
    }
}

#[tokio::test]
async fn tasks_update_is_invalid_params_since_no_task_asks_for_input() {
    let h = Harness::new();
    let params = json!({"taskId": "job_demo", "inputResponses": {"x": {"action": "accept"}}});
    let resp = send(rpc(&h, 1, "tasks/update", params, true)).await;
    resp.assert_error(200, -32602, json!(1));
    let params = json!({"taskId": "job_nope", "inputResponses": {}});
    assert_not_found(&send(rpc(&h, 2, "tasks/update", params, true)).await, 2, "job_nope");
}

#[tokio::test]
async fn tasks_get_mirrors_the_task_id_in_mcp_name() {
    let h = Harness::new();
    let resp = send(task_req(&h, 1, "tasks/get", "job_demo").without("mcp-name")).await;
    resp.assert_error(400, -32020, json!(1));
    let resp = send(task_req(&h, 2, "tasks/get", "job_demo").header("mcp-name", "job_other")).await;
    resp.assert_error(400, -32020, json!(2));
    assert_eq!(resp.json()["error"]["data"]["headerValue"], "job_other");
    let resp = send(task_req(&h, 3, "tasks/cancel", "job_demo").header("mcp-name", "job_other")).await;
    resp.assert_error(400, -32020, json!(3));
    let resp = send(task_req(&h, 4, "tasks/update", "job_demo").without("mcp-name")).await;
    resp.assert_error(400, -32020, json!(4));
    let task = get_task(&h, 5, "job_demo").await;
    assert_eq!(task["status"], "completed", "the seeded job is a finished task: {task}");
}

#[tokio::test]
async fn other_tasks_methods_and_the_2025_eras_have_none() {
    let h = Harness::new();
    for (id, method) in [(1, "tasks/result"), (2, "tasks/list")] {
        send(task_req(&h, id, method, "job_demo")).await.assert_error(404, -32601, json!(id));
    }
    for (id, version) in [(3, Some("2025-06-18")), (4, None)] {
        let resp = send(h.handshake(json!(id), "tasks/get", json!({"taskId": "job_demo"}), version)).await;
        resp.assert_error(200, -32601, json!(id));
    }
    let resp = send(h.handshake(json!(5), "tools/list", json!({}), Some("2025-06-18"))).await;
    let tools = resp.json()["result"]["tools"].clone();
    let reprocess = tools.as_array().unwrap().iter().find(|t| t["name"] == "emails_reprocess").unwrap().clone();
    assert!(reprocess["description"].as_str().unwrap().contains("tasks/get"), "the listing says so: {reprocess}");
}

#[tokio::test]
async fn a_cancel_over_the_rate_budget_is_refused_before_it_runs() {
    let h = Harness::with_config(|c| c.rate_limit_per_minute = 1);
    let app = h.app().await;
    let job = inbox::api::jobs::new_job(inbox::domain::records::JobKind::WebhookTest, "whk_demo");
    app.store.put_job(&ws_main(), &job).await.unwrap();
    // Start early in a fresh one-minute window so both requests share it.
    let seconds_into_minute = jsonwebtoken::get_current_timestamp() % 60;
    if seconds_into_minute > 50 {
        tokio::time::sleep(std::time::Duration::from_secs(61 - seconds_into_minute)).await;
    }
    assert_eq!(get_task(&h, 1, &job.id).await["status"], "working");
    let resp = send(task_req(&h, 2, "tasks/cancel", &job.id)).await;
    resp.assert_error(429, 42900, json!(2));
    let stored = app.store.get_job(&ws_main(), &job.id).await.unwrap().unwrap();
    assert_eq!(stored.status, JobStatus::Queued, "the refused cancel changed nothing");
}

/// A webhook receiver that holds each request until `release` is notified,
/// then answers 200: a delivery that is still going on.
async fn held_receiver() -> (String, std::sync::Arc<tokio::sync::Notify>, std::sync::Arc<tokio::sync::Notify>) {
    use std::sync::Arc;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (arrived, release) = (Arc::new(tokio::sync::Notify::new()), Arc::new(tokio::sync::Notify::new()));
    let (seen, gate) = (Arc::clone(&arrived), Arc::clone(&release));
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let (seen, gate) = (Arc::clone(&seen), Arc::clone(&gate));
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |_req: http::Request<hyper::body::Incoming>| {
                    let (seen, gate) = (Arc::clone(&seen), Arc::clone(&gate));
                    async move {
                        seen.notify_one();
                        gate.notified().await;
                        let ok = http::Response::new(http_body_util::Full::new(bytes::Bytes::from_static(b"ok")));
                        Ok::<_, std::convert::Infallible>(ok)
                    }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            });
        }
    });
    (url, arrived, release)
}

#[tokio::test]
async fn a_running_reprocess_says_what_it_is_doing_as_it_goes() {
    let h = Harness::new();
    let (url, arrived, release) = held_receiver().await;
    let hook = send(h.api("PUT", "/webhooks").json(&json!({"url": url}))).await;
    assert_eq!(hook.status, 201, "{}", hook.json());
    let resp = confirmed(&h, 1, "emails_reprocess", &json!({"id": "eml_energy_nov"}), true).await;
    let task_id = created_task(&resp, 2);
    let queued = get_task(&h, 3, &task_id).await;
    assert_eq!(
        (queued["status"].as_str(), queued["statusMessage"].as_str()),
        (Some("working"), Some("Queued; it starts shortly."))
    );

    // While the webhooks are notified (the receiver holds the delivery), the task says so.
    let watch = async {
        arrived.notified().await;
        let running = get_task(&h, 4, &task_id).await;
        // The job's REST view carries the same stage.
        let (_, job) = rest(&h, "GET", &format!("/jobs/{task_id}")).await;
        release.notify_one();
        (running, job)
    };
    let (ran, (running, job)) = tokio::join!(run_job(&h, &task_id), watch);
    assert_eq!(ran, Ran::Finished(JobStatus::Succeeded));
    assert_eq!(running["status"], "working", "{running}");
    assert_eq!(running["statusMessage"], "Notifying 2 webhooks (attempt 1).", "{running}");
    assert_eq!(job["data"]["stage"], "Notifying 2 webhooks", "{job}");
    assert!(running["pollIntervalMs"].as_u64().is_some_and(|ms| ms >= 1000), "{running}");

    let done = get_task(&h, 5, &task_id).await;
    assert_eq!(done["statusMessage"], "Finished.", "{done}");
    let (_, job) = rest(&h, "GET", &format!("/jobs/{task_id}")).await;
    assert!(job["data"].get("stage").is_none(), "a finished job is doing nothing: {job}");
    let messages: std::collections::BTreeSet<&str> =
        [&queued, &running, &done].iter().filter_map(|t| t["statusMessage"].as_str()).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
}
