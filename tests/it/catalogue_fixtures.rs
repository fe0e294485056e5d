//! The pipeline serving another catalogue — the conformance fixtures
//! (`inbox_conformance`), through the same handler — and what that
//! catalogue needs of it: `input_required` asking for sampling and roots (kinds
//! of request the catalogue defines, `inbox::mcp::input::Kind`) as
//! well as a form, over several rounds with a sealed `requestState`, on
//! `prompts/get` and `resources/read` as well as `tools/call`, only for what
//! the client declared; tasks (extension jobs of the kind the catalogue
//! registers with the worker) whose tool asks for input while it runs
//! (`input_required` on `tasks/get`, answered through `tasks/update`, partly
//! or whole), stop while running on `tasks/cancel`, and fail as the
//! platform's fault; `Mcp-Param-*` headers for tools that declare
//! `x-mcp-header`. Every assertion is about the answer a client gets.

use crate::common;
use crate::jobs_and_webhooks::{run_job, ws_main};

use common::{Harness, Req, Resp, envelope_with, send};
use inbox::worker::Ran;
use serde_json::{Value, json};

const EXT: &str = "io.modelcontextprotocol/tasks";
const FIXTURES: &str = "kobana-inbox-conformance-fixtures";

/// Every capability a client may declare: all three kinds of input, and tasks.
fn everything() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {"listChanged": true}, "extensions": {EXT: {}}})
}

fn rpc<'a>(h: &'a Harness, id: i64, method: &str, params: Value, caps: Value) -> Req<'a> {
    h.stateless_with(json!(id), method, params, envelope_with(caps))
}

fn tool<'a>(h: &'a Harness, id: i64, name: &str, extra: Value) -> Req<'a> {
    let mut params = json!({"name": name, "arguments": {}});
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    rpc(h, id, "tools/call", params, everything())
}

/// A successful stateless answer of the fixture server: its `resultType`.
#[track_caller]
fn result_of(resp: &Resp, result_type: &str) -> Value {
    let body = resp.json();
    assert_eq!(resp.status, 200, "{body}");
    let result = resp.result();
    assert_eq!(result["resultType"], result_type, "{result}");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], FIXTURES, "{result}");
    result
}

/// The text of a complete tool result.
#[track_caller]
fn text_of(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {result}")).to_owned()
}

#[tokio::test]
async fn the_pipeline_serves_the_catalogue_it_is_given_under_that_servers_name() {
    let h = Harness::fixtures();
    let discover = result_of(&send(rpc(&h, 1, "server/discover", json!({}), json!({}))).await, "complete");
    assert!(discover["instructions"].as_str().unwrap().contains("conformance fixture server"), "{discover}");
    let listed = result_of(&send(rpc(&h, 2, "tools/list", json!({}), json!({}))).await, "complete");
    let names: Vec<&str> = listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.first(), Some(&"test_simple_text"));
    assert!(names.contains(&"slow_compute") && !names.contains(&"emails_list"), "{names:?}");
    assert_eq!(listed["ttlMs"], 0, "a listing is still decorated as the product's is");

    let text = result_of(&send(tool(&h, 3, "test_simple_text", json!({}))).await, "complete");
    assert_eq!(text["content"], json!([{"type": "text", "text": "This is a simple text response for testing."}]));

    // The handshake era too, with its own shapes (no resultType, no decoration).
    let init = send(h.handshake(
        json!(4),
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        None,
    ))
    .await;
    assert_eq!(init.result()["serverInfo"]["name"], FIXTURES);
    let image =
        send(h.handshake(json!(5), "tools/call", json!({"name": "test_image_content"}), Some("2025-06-18"))).await;
    let image = image.result();
    assert_eq!(image["content"][0]["mimeType"], "image/png");
    assert!(image.get("resultType").is_none(), "{image}");
}

#[tokio::test]
async fn sampling_and_roots_are_asked_for_and_their_answers_complete_the_call() {
    let h = Harness::fixtures();
    let asked = result_of(&send(tool(&h, 1, "test_input_required_result_sampling", json!({}))).await, "input_required");
    let request = &asked["inputRequests"]["capital_question"];
    assert_eq!(request["method"], "sampling/createMessage", "{asked}");
    assert_eq!(request["params"]["maxTokens"], 100);
    assert!(asked.get("ttlMs").is_none() && asked.get("content").is_none(), "{asked}");
    let answer = json!({"role": "assistant", "content": {"type": "text", "text": "Paris."}, "model": "m", "stopReason": "endTurn"});
    let params = json!({"inputResponses": {"capital_question": answer}});
    let done = result_of(&send(tool(&h, 2, "test_input_required_result_sampling", params)).await, "complete");
    assert_eq!(text_of(&done), "The model answered: Paris.");

    // An answer that is not a sampling result is the client's mistake.
    let params = json!({"inputResponses": {"capital_question": {"roots": []}}});
    send(tool(&h, 3, "test_input_required_result_sampling", params)).await.assert_error(200, -32602, json!(3));

    let asked =
        result_of(&send(tool(&h, 4, "test_input_required_result_list_roots", json!({}))).await, "input_required");
    assert_eq!(asked["inputRequests"]["client_roots"], json!({"method": "roots/list", "params": {}}));
    let roots = json!({"client_roots": {"roots": [{"uri": "file:///work", "name": "Work"}]}});
    let done = result_of(
        &send(tool(&h, 5, "test_input_required_result_list_roots", json!({"inputResponses": roots}))).await,
        "complete",
    );
    assert_eq!(text_of(&done), "The client's roots: file:///work");
}

#[tokio::test]
async fn only_what_the_client_declared_is_asked_and_a_missing_capability_is_32021() {
    let h = Harness::fixtures();
    let sampling_only = envelope_with(json!({"sampling": {}}));
    let params = json!({"name": "test_input_required_result_capabilities", "arguments": {}});
    let resp = send(h.stateless_with(json!(1), "tools/call", params.clone(), sampling_only)).await;
    let asked = result_of(&resp, "input_required");
    let methods: Vec<&str> =
        asked["inputRequests"].as_object().unwrap().values().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["sampling/createMessage"], "{asked}");

    // Asking for sampling from a client that cannot answer it: 400 -32021, naming the capability.
    let params = json!({"name": "test_input_required_result_sampling", "arguments": {}});
    let resp = send(h.stateless_with(json!(2), "tools/call", params, envelope_with(json!({"elicitation": {}})))).await;
    resp.assert_error(400, -32021, json!(2));
    assert_eq!(resp.json()["error"]["data"]["requiredCapabilities"], json!({"sampling": {}}));
}

#[tokio::test]
async fn several_rounds_each_bring_a_new_state_and_a_changed_state_is_refused() {
    let h = Harness::fixtures();
    let name = "test_input_required_result_multi_round";
    let round1 = result_of(&send(tool(&h, 1, name, json!({}))).await, "input_required");
    let state1 = round1["requestState"].as_str().unwrap().to_owned();
    assert!(round1["inputRequests"]["step1"].is_object(), "{round1}");

    let answer = |field: &str, value: &str| json!({"action": "accept", "content": {field: value}});
    let params = json!({"requestState": state1, "inputResponses": {"step1": answer("name", "Alice")}});
    let round2 = result_of(&send(tool(&h, 2, name, params)).await, "input_required");
    let state2 = round2["requestState"].as_str().unwrap().to_owned();
    assert_ne!(state1, state2, "each round seals its own state");
    assert!(round2["inputRequests"]["step2"].is_object(), "{round2}");

    let params = json!({"requestState": state2, "inputResponses": {"step2": answer("color", "blue")}});
    let done = result_of(&send(tool(&h, 3, name, params)).await, "complete");
    assert_eq!(text_of(&done), "Alice's favourite colour is blue");

    // A state changed by the client, or brought to another tool, is -32602 with one fixed message.
    for (id, tool_name, state) in
        [(4, name, format!("{state2}x")), (5, "test_input_required_result_request_state", state2)]
    {
        let params = json!({"requestState": state, "inputResponses": {"step2": answer("color", "red")}});
        let resp = send(tool(&h, id, tool_name, params)).await;
        resp.assert_error(200, -32602, json!(id));
        assert_eq!(resp.json()["error"]["message"], "Invalid or expired requestState");
    }
}

#[tokio::test]
async fn prompts_and_resources_may_ask_too_and_only_their_complete_results_are_cacheable() {
    let h = Harness::fixtures();
    let params = json!({"name": "test_input_required_result_prompt"});
    let asked = result_of(&send(rpc(&h, 1, "prompts/get", params, everything())).await, "input_required");
    assert_eq!(asked["inputRequests"]["user_context"]["method"], "elicitation/create");
    let params = json!({"name": "test_input_required_result_prompt",
        "inputResponses": {"user_context": {"action": "accept", "content": {"context": "invoices"}}}});
    let prompt = result_of(&send(rpc(&h, 2, "prompts/get", params, everything())).await, "complete");
    assert_eq!(prompt["messages"][0]["content"]["text"], "Use this context: invoices");

    let uri = "test://confirmed-resource";
    let asked =
        result_of(&send(rpc(&h, 3, "resources/read", json!({"uri": uri}), everything())).await, "input_required");
    assert!(asked.get("ttlMs").is_none() && asked.get("cacheScope").is_none(), "{asked}");
    let params = json!({"uri": uri, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    let read = result_of(&send(rpc(&h, 4, "resources/read", params, everything())).await, "complete");
    assert_eq!(read["contents"][0]["text"], "Read after the user confirmed.");
    assert_eq!((read["ttlMs"].as_u64(), read["cacheScope"].as_str()), (Some(0), Some("private")));

    // The lists never ask.
    let prompts = result_of(&send(rpc(&h, 5, "prompts/list", json!({}), everything())).await, "complete");
    assert!(prompts["prompts"].as_array().unwrap().len() >= 5);
}

/// Starts `name` as a task: its id.
async fn task(h: &Harness, id: i64, name: &str, arguments: Value) -> String {
    let resp = send(rpc(h, id, "tools/call", json!({"name": name, "arguments": arguments}), everything())).await;
    let created = result_of(&resp, "task");
    assert_eq!(created["status"], "working", "{created}");
    assert!(created.get("requestState").is_none() && created.get("inputRequests").is_none(), "{created}");
    created["taskId"].as_str().unwrap().to_owned()
}

async fn task_call(h: &Harness, id: i64, method: &str, params: Value) -> Resp {
    send(rpc(h, id, method, params, everything())).await
}

#[tokio::test]
async fn a_task_that_asks_waits_in_input_required_until_tasks_update_answers_it() {
    let h = Harness::fixtures();
    let id = task(&h, 1, "confirm_delete", json!({"filename": "report.txt"})).await;
    assert_eq!(run_job(&h, &id).await, Ran::AwaitingInput);

    let waiting = result_of(&task_call(&h, 2, "tasks/get", json!({"taskId": id})).await, "complete");
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    assert_eq!(waiting["inputRequests"]["confirm"]["method"], "elicitation/create");
    assert!(waiting.get("result").is_none() && waiting.get("requestState").is_none(), "{waiting}");

    // inputResponses must be an object.
    let resp = task_call(&h, 3, "tasks/update", json!({"taskId": id, "inputResponses": [1]})).await;
    resp.assert_error(200, -32602, json!(3));

    let answers = json!({"confirm": {"action": "accept", "content": {"confirm": true}}, "other": {"ignored": true}});
    let ack = result_of(
        &task_call(&h, 4, "tasks/update", json!({"taskId": id, "inputResponses": answers})).await,
        "complete",
    );
    for absent in ["taskId", "status", "result", "inputRequests"] {
        assert!(ack.get(absent).is_none(), "an acknowledgement only: {ack}");
    }
    let queued = result_of(&task_call(&h, 5, "tasks/get", json!({"taskId": id})).await, "complete");
    assert_eq!(queued["status"], "working", "answered, it runs on: {queued}");

    assert!(matches!(run_job(&h, &id).await, Ran::Finished(_)));
    let done = result_of(&task_call(&h, 6, "tasks/get", json!({"taskId": id})).await, "complete");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["resultType"], "complete");
    assert!(text_of(&done["result"]).starts_with("Deleted report.txt"), "{done}");

    // A task that waits for nothing takes no answer.
    let resp = task_call(&h, 7, "tasks/update", json!({"taskId": id, "inputResponses": answers})).await;
    resp.assert_error(200, -32602, json!(7));
}

#[tokio::test]
async fn a_partial_answer_leaves_only_the_unanswered_request_pending() {
    let h = Harness::fixtures();
    let id = task(&h, 1, "multi_input", json!({})).await;
    assert_eq!(run_job(&h, &id).await, Ran::AwaitingInput);
    let waiting = result_of(&task_call(&h, 2, "tasks/get", json!({"taskId": id})).await, "complete");
    let mut keys: Vec<String> = waiting["inputRequests"].as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, ["first", "second"]);

    let first = json!({"first": {"action": "accept", "content": {"name": "one", "confirm": true}}});
    result_of(&task_call(&h, 3, "tasks/update", json!({"taskId": id, "inputResponses": first})).await, "complete");
    let still = result_of(&task_call(&h, 4, "tasks/get", json!({"taskId": id})).await, "complete");
    assert_eq!(still["status"], "input_required");
    assert_eq!(still["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["second"]);

    let second = json!({"second": {"action": "accept", "content": {"name": "two", "confirm": true}}});
    result_of(&task_call(&h, 5, "tasks/update", json!({"taskId": id, "inputResponses": second})).await, "complete");
    assert!(matches!(run_job(&h, &id).await, Ran::Finished(_)));
    let done = result_of(&task_call(&h, 6, "tasks/get", json!({"taskId": id})).await, "complete");
    assert_eq!(done["status"], "completed");
    assert!(text_of(&done["result"]).starts_with("Both answered"), "{done}");
}

#[tokio::test]
async fn a_running_tool_task_stops_when_cancelled_and_a_finished_ones_cancel_is_acknowledged() {
    let h = Harness::fixtures();
    let id = task(&h, 1, "slow_compute", json!({"seconds": 60, "label": "long"})).await;
    let app = h.app().await;
    let running = {
        let (app, id) = (std::sync::Arc::clone(&app), id.clone());
        tokio::spawn(async move { Box::pin(inbox::worker::run(&app.runner, &ws_main(), &id)).await })
    };
    // Wait until the runner has it.
    for _ in 0..100 {
        let job = app.store.get_job(&ws_main(), &id).await.unwrap().unwrap();
        if job.status == inbox::domain::records::JobStatus::Running {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let ack = result_of(&task_call(&h, 2, "tasks/cancel", json!({"taskId": id})).await, "complete");
    assert!(ack.get("status").is_none(), "{ack}");
    let ran = tokio::time::timeout(std::time::Duration::from_secs(10), running).await.unwrap().unwrap().unwrap();
    assert_eq!(ran, Ran::Finished(inbox::domain::records::JobStatus::Cancelled));
    let cancelled = result_of(&task_call(&h, 3, "tasks/get", json!({"taskId": id})).await, "complete");
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled.get("result").is_none(), "{cancelled}");

    let quick = task(&h, 4, "slow_compute", json!({"seconds": 0})).await;
    assert!(matches!(run_job(&h, &quick).await, Ran::Finished(_)));
    result_of(&task_call(&h, 5, "tasks/cancel", json!({"taskId": quick})).await, "complete");
    let done = result_of(&task_call(&h, 6, "tasks/get", json!({"taskId": quick})).await, "complete");
    assert_eq!(done["status"], "completed", "a finished task stays as it finished: {done}");
}

#[tokio::test]
async fn a_tool_error_completes_the_task_and_a_platform_failure_fails_it() {
    let h = Harness::fixtures();
    let failing = task(&h, 1, "failing_job", json!({})).await;
    let broken = task(&h, 2, "protocol_error_job", json!({})).await;
    run_job(&h, &failing).await;
    run_job(&h, &broken).await;
    let failing = result_of(&task_call(&h, 3, "tasks/get", json!({"taskId": failing})).await, "complete");
    assert_eq!((failing["status"].as_str(), failing["result"]["isError"].as_bool()), (Some("completed"), Some(true)));
    let broken = result_of(&task_call(&h, 4, "tasks/get", json!({"taskId": broken})).await, "complete");
    assert_eq!(broken["status"], "failed", "{broken}");
    assert_eq!(broken["error"]["code"], -32603);
    assert!(broken.get("result").is_none(), "{broken}");

    // Without the extension, a tool that runs only as a task cannot run: 400 -32021 naming it.
    let params = json!({"name": "failing_job", "arguments": {}});
    let resp = send(h.stateless_with(json!(5), "tools/call", params, envelope_with(json!({})))).await;
    resp.assert_error(400, -32021, json!(5));
    assert_eq!(resp.json()["error"]["data"]["requiredCapabilities"], json!({"extensions": {EXT: {}}}));
}

#[tokio::test]
async fn answers_gathered_before_a_task_reach_the_task() {
    let h = Harness::fixtures();
    let asked = result_of(&send(tool(&h, 1, "test_tool_with_task", json!({}))).await, "input_required");
    assert!(asked.get("taskId").is_none(), "{asked}");
    let answers = json!({"inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}}});
    let created = result_of(&send(tool(&h, 2, "test_tool_with_task", answers)).await, "task");
    let id = created["taskId"].as_str().unwrap().to_owned();
    run_job(&h, &id).await;
    let done = result_of(&task_call(&h, 3, "tasks/get", json!({"taskId": id})).await, "complete");
    assert!(text_of(&done["result"]).contains("Alice"), "{done}");
}

#[tokio::test]
async fn a_custom_header_must_mirror_its_argument() {
    let h = Harness::fixtures();
    let call = |id: i64, query: &str, header: Option<&str>| {
        let params = json!({"name": "test_header_param", "arguments": {"query": query}});
        let req = h.stateless_with(json!(id), "tools/call", params, envelope_with(json!({})));
        match header {
            Some(value) => req.header("mcp-param-query", value),
            None => req,
        }
    };
    let ok = send(call(1, "Hello", Some("=?base64?SGVsbG8=?="))).await;
    assert_eq!(text_of(&result_of(&ok, "complete")), "query = Hello");
    let literal = send(call(2, "=?base64?SGVsbG8=", Some("=?base64?SGVsbG8="))).await;
    result_of(&literal, "complete");
    for (id, header) in
        [(3, None), (4, Some("Goodbye")), (5, Some("=?base64?SGVsbG8?=")), (6, Some("=?base64?SGVs!!!bG8=?="))]
    {
        let resp = send(call(id, "Hello", header)).await;
        resp.assert_error(400, -32020, json!(id));
        assert_eq!(resp.json()["error"]["data"]["header"], "Mcp-Param-Query");
    }
}

#[tokio::test]
async fn in_the_handshake_era_a_tool_that_would_ask_says_why_it_cannot() {
    let h = Harness::fixtures();
    let resp = send(h.handshake(
        json!(1),
        "tools/call",
        json!({"name": "test_input_required_result_elicitation"}),
        Some("2025-06-18"),
    ))
    .await;
    let result = resp.result();
    assert_eq!(result["isError"], true, "{result}");
    assert!(text_of(&result).contains("needs protocol 2026-07-28"), "{result}");
    // A tool that only runs as a task says so as a tool error (no -32021 in that era).
    let resp = send(h.handshake(json!(2), "tools/call", json!({"name": "failing_job"}), Some("2025-06-18"))).await;
    assert_eq!(resp.result()["isError"], true);
    assert_eq!(resp.header("mcp-protocol-version"), Some("2025-06-18"));
}
