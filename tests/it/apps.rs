//! MCP Apps (`io.modelcontextprotocol/ui`): the boleto card and the
//! confirmation view, offered only to 2026-07-28 clients that declare the
//! extension with `text/html;profile=mcp-app`; every other client's answers
//! are byte for byte what they were. The confirmation view's token is held
//! to the same rules as a `requestState`. (The views themselves run in a
//! browser under a host page in `interop/apps_views.mjs`.)

use serde_json::{Value, json};

use crate::common::{ADMIN_SCOPES, Harness, Resp, envelope_with, get, send};
use crate::mcp_tools::mcp;

const UI: &str = "io.modelcontextprotocol/ui";
const MIME: &str = "text/html;profile=mcp-app";

fn views() -> Value {
    json!({"extensions": {UI: {"mimeTypes": [MIME]}}})
}

async fn rpc(h: &Harness, id: i64, method: &str, params: Value, caps: Value) -> Resp {
    mcp(h.stateless_with(json!(id), method, params, envelope_with(caps))).await
}

async fn body(h: &Harness, id: i64, method: &str, params: Value, caps: Value) -> String {
    String::from_utf8(rpc(h, id, method, params, caps).await.body).unwrap()
}

#[tokio::test]
async fn clients_that_do_not_draw_views_get_every_answer_as_before() {
    let h = Harness::new();
    let others = [
        json!({}),
        json!({"extensions": {UI: {}}}),
        json!({"extensions": {UI: {"mimeTypes": ["text/html+mcp"]}}}),
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
    ];
    for method in ["server/discover", "tools/list", "resources/list"] {
        let plain = body(&h, 1, method, json!({}), json!({})).await;
        assert!(!plain.contains(UI) && !plain.contains("ui://"), "{method}: {plain}");
        for caps in &others[1..3] {
            assert_eq!(body(&h, 1, method, json!({}), caps.clone()).await, plain, "{method} with {caps}");
        }
    }
    // A destructive call still asks through the form; the view's tools do not exist.
    let asked = rpc(
        &h,
        2,
        "tools/call",
        json!({"name": "emails_delete", "arguments": {"id": "eml_receipt_1"}}),
        json!({"elicitation": {"form": {}}}),
    )
    .await;
    assert_eq!(asked.result()["resultType"], "input_required");
    let unknown =
        rpc(&h, 3, "tools/call", json!({"name": "confirmation_approve", "arguments": {"token": "x"}}), json!({})).await;
    unknown.assert_error(200, -32602, json!(3));
    assert!(others[0].is_object());
}

#[tokio::test]
async fn a_client_that_draws_views_is_told_and_finds_the_card_and_the_confirmation_view() {
    let h = Harness::new();
    let discover = rpc(&h, 1, "server/discover", json!({}), views()).await.result();
    assert_eq!(discover["capabilities"]["extensions"][UI], json!({}), "{discover}");
    assert!(discover["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object());

    let tools = rpc(&h, 2, "tools/list", json!({}), views()).await.result()["tools"].clone();
    let tool =
        |name: &str| tools.as_array().unwrap().iter().find(|t| t["name"] == name).cloned().unwrap_or(Value::Null);
    assert_eq!(tool("emails_get")["_meta"]["ui"]["resourceUri"], "ui://kobana-inbox/boleto-card.html");
    assert_eq!(tool("emails_get")["_meta"]["ui/resourceUri"], "ui://kobana-inbox/boleto-card.html");
    for destructive in ["emails_delete", "emails_erase", "webhooks_upsert", "workspace_retention_set"] {
        assert_eq!(
            tool(destructive)["_meta"]["ui"]["resourceUri"],
            "ui://kobana-inbox/confirmation.html",
            "{destructive}"
        );
        let shapes = tool(destructive)["outputSchema"]["anyOf"].as_array().cloned().unwrap_or_default();
        assert!(shapes.iter().any(|s| s["properties"]["result"]["const"] == "confirmation_pending"), "{destructive}");
    }
    assert!(tool("emails_list").get("_meta").is_none());
    for app_only in ["confirmation_approve", "confirmation_decline"] {
        assert_eq!(tool(app_only)["_meta"]["ui"]["visibility"], json!(["app"]), "{app_only}");
    }
    // A reader is offered no view to confirm with.
    let viewer = h.token_for("usr_viewer", "org_demo", ADMIN_SCOPES);
    let read_only =
        mcp(h.stateless_with(json!(3), "tools/list", json!({}), envelope_with(views())).token(&viewer)).await;
    assert!(!String::from_utf8_lossy(&read_only.body).contains("confirmation_approve"));

    let listed = rpc(&h, 4, "resources/list", json!({}), views()).await.result()["resources"].clone();
    let uris: Vec<&str> = listed.as_array().unwrap().iter().filter_map(|r| r["uri"].as_str()).collect();
    assert!(
        uris.contains(&"ui://kobana-inbox/boleto-card.html") && uris.contains(&"ui://kobana-inbox/confirmation.html")
    );
    for (uri, clipboard) in
        [("ui://kobana-inbox/boleto-card.html", true), ("ui://kobana-inbox/confirmation.html", false)]
    {
        let read = rpc(&h, 5, "resources/read", json!({"uri": uri}), views()).await.result();
        let page = &read["contents"][0];
        assert_eq!((page["uri"].as_str(), page["mimeType"].as_str()), (Some(uri), Some(MIME)), "{read}");
        let html = page["text"].as_str().unwrap_or_default();
        assert!(html.starts_with("<!doctype html>") && html.contains("Content-Security-Policy"), "{uri}");
        assert_eq!(page["_meta"]["ui"]["csp"], json!({"connectDomains": [], "resourceDomains": []}));
        assert_eq!(page["_meta"]["ui"]["permissions"]["clipboardWrite"].is_object(), clipboard, "{uri}");
    }
}

/// A destructive call from a client that draws views: the pending result,
/// its structured content and its token.
async fn pending(h: &Harness, id: i64, tool: &str, email: &str) -> (Value, String) {
    let resp = rpc(h, id, "tools/call", json!({"name": tool, "arguments": {"id": email}}), views()).await;
    let result = resp.result();
    assert_eq!(
        (result["resultType"].as_str(), result["isError"].as_bool()),
        (Some("complete"), Some(false)),
        "{result}"
    );
    let token = result["_meta"]["br.com.kobana/confirmation"]["token"].as_str().unwrap_or_default().to_owned();
    assert!(!token.is_empty(), "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Nothing was done yet") && !text.contains(&token),
        "the model is not handed the token: {text}"
    );
    (result["structuredContent"].clone(), token)
}

async fn answer(h: &Harness, id: i64, tool: &str, token: &str) -> Resp {
    rpc(h, id, "tools/call", json!({"name": tool, "arguments": {"token": token}}), views()).await
}

#[tokio::test]
async fn the_confirmation_view_shows_server_facts_and_its_approval_runs_the_call_once() {
    let h = Harness::new();
    let (asked, token) = pending(&h, 1, "emails_delete", "eml_telecom_nov").await;
    assert_eq!(asked["result"], "confirmation_pending");
    let confirmation = &asked["confirmation"];
    assert_eq!(confirmation["target"], json!({"id": "eml_telecom_nov"}));
    assert_eq!(
        (confirmation["tool"].as_str(), confirmation["workspace"].as_str()),
        (Some("emails_delete"), Some("ws_main"))
    );
    let facts = confirmation["facts"].as_str().unwrap_or_default();
    assert!(facts.contains("R$ 159,90") && facts.contains("bank 341"), "the bill as decoded: {facts}");
    assert!(!facts.contains("Sua fatura"), "never the subject: {facts}");
    assert_eq!(get(&h, "/emails/eml_telecom_nov").await["data"]["id"], "eml_telecom_nov", "nothing done yet");

    let done = answer(&h, 2, "confirmation_approve", &token).await;
    let result = done.result();
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["data"], json!({"id": "eml_telecom_nov", "deleted": true}), "{result}");
    assert_eq!(send(h.api("GET", "/emails/eml_telecom_nov")).await.status, 404);
    // Once: the same token again, or declined afterwards, is refused.
    answer(&h, 3, "confirmation_approve", &token).await.assert_error(200, -32602, json!(3));
    answer(&h, 4, "confirmation_decline", &token).await.assert_error(200, -32602, json!(4));
}

#[tokio::test]
async fn a_declined_view_does_nothing_and_its_token_cannot_be_approved_afterwards() {
    let h = Harness::new();
    let (_, token) = pending(&h, 1, "emails_delete", "eml_energy_nov").await;
    let declined = answer(&h, 2, "confirmation_decline", &token).await.result();
    assert_eq!(declined["structuredContent"]["result"], "not_confirmed", "{declined}");
    answer(&h, 3, "confirmation_approve", &token).await.assert_error(200, -32602, json!(3));
    assert_eq!(get(&h, "/emails/eml_energy_nov").await["data"]["id"], "eml_energy_nov", "nothing was done");
}

#[tokio::test]
async fn a_view_token_is_held_to_the_request_state_rules() {
    let h = Harness::new();
    let (_, token) = pending(&h, 1, "emails_delete", "eml_energy_nov").await;
    // Another person, another workspace, another connection, a tampered token: refused.
    let operator = h.token_for("usr_operator", "org_demo", ADMIN_SCOPES);
    let call = |id: i64, token: &str| {
        h.stateless_with(
            json!(id),
            "tools/call",
            json!({"name": "confirmation_approve", "arguments": {"token": token}}),
            envelope_with(views()),
        )
    };
    mcp(call(2, &token).token(&operator)).await.assert_error(200, -32602, json!(2));
    mcp(call(3, &token).header("x-workspace-id", "ws_ops")).await.assert_error(200, -32602, json!(3));
    mcp(call(4, &token).path("/mcp/x/emails")).await.assert_error(200, -32602, json!(4));
    mcp(call(5, &format!("{token}x"))).await.assert_error(200, -32602, json!(5));
    let other = rpc(
        &h,
        6,
        "tools/call",
        json!({"name": "confirmation_approve", "arguments": {"token": token, "id": "x"}}),
        views(),
    )
    .await;
    other.assert_error(200, -32602, json!(6));
    assert_eq!(get(&h, "/emails/eml_energy_nov").await["data"]["id"], "eml_energy_nov", "nothing was done");
    // It still works for the call it was made for.
    let done = answer(&h, 7, "confirmation_approve", &token).await.result();
    assert_eq!(done["structuredContent"]["data"]["deleted"], true, "{done}");
}

#[tokio::test]
async fn emails_get_answers_the_card_the_same_result_with_or_without_views() {
    let h = Harness::new();
    let params = json!({"name": "emails_get", "arguments": {"id": "eml_telecom_nov"}});
    let plain = rpc(&h, 1, "tools/call", params.clone(), json!({})).await.result();
    let with_views = rpc(&h, 1, "tools/call", params, views()).await.result();
    assert_eq!(plain, with_views, "the card draws the tool's own result");
    assert_eq!(with_views["structuredContent"]["data"]["extracted"]["amount_cents"], 15_990);
}

#[tokio::test]
async fn the_confirmation_view_shows_every_argument_not_only_the_target() {
    let h = Harness::new();
    let resp = rpc(
        &h,
        1,
        "tools/call",
        json!({"name": "workspace_retention_set", "arguments": {"retention_days": 1}}),
        views(),
    )
    .await;
    let confirmation = resp.result()["structuredContent"]["confirmation"].clone();
    assert_eq!(confirmation["arguments"], json!({"retention_days": "1"}), "{confirmation}");
    assert_eq!(confirmation["target"], json!({}), "{confirmation}");
    assert_eq!(get(&h, "/workspace").await["data"]["retention_days"], 365, "nothing done yet");
}
