//! Narrowing a connection (issue 16): read-only and toolsets, by header and
//! by path, in both eras — listing and calling — and never widening.

use crate::common;

use common::{ADMIN_SCOPES, Harness, Req, Resp, envelope_with, send};
use serde_json::{Value, json};

fn names(resp: &Resp) -> Vec<String> {
    let tools =
        resp.json()["result"]["tools"].as_array().unwrap_or_else(|| panic!("no tools: {}", resp.json())).clone();
    tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

fn list<'a>(h: &'a Harness, era: &str) -> Req<'a> {
    if era == "2026-07-28" {
        h.stateless(json!(1), "tools/list", json!({}))
    } else {
        h.handshake(json!(1), "tools/list", json!({}), Some(era))
    }
}

fn call<'a>(h: &'a Harness, era: &str, name: &str, args: Value) -> Req<'a> {
    let params = json!({"name": name, "arguments": args});
    if era == "2026-07-28" {
        h.stateless_with(json!(2), "tools/call", params, envelope_with(json!({"elicitation": {"form": {}}})))
    } else {
        h.handshake(json!(2), "tools/call", params, Some(era))
    }
}

#[track_caller]
fn assert_unknown_tool(resp: &Resp, name: &str) {
    let body = resp.json();
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert_eq!(body["error"]["data"]["name"], name, "{body}");
    assert!(body.get("result").is_none(), "no confirmation asked, nothing run: {body}");
}

#[tokio::test]
async fn read_only_lists_and_calls_only_read_only_tools_by_header_and_by_path_in_both_eras() {
    let h = Harness::new();
    let all = names(&send(list(&h, "2026-07-28")).await);
    for era in ["2026-07-28", "2025-06-18"] {
        for (label, narrowed) in
            [("header", list(&h, era).header("x-mcp-readonly", "true")), ("path", list(&h, era).path("/mcp/readonly"))]
        {
            let resp = send(narrowed).await;
            let listed = names(&resp);
            assert!(!listed.is_empty() && listed.len() < all.len(), "{era} {label}: {listed:?}");
            let tools = resp.json()["result"]["tools"].clone();
            for tool in tools.as_array().unwrap() {
                assert_eq!(tool["annotations"]["readOnlyHint"], true, "{era} {label}: {tool}");
            }
            assert!(listed.contains(&"emails_get".to_owned()) && !listed.contains(&"emails_delete".to_owned()));
        }
        // A destructive tool is refused before any confirmation is asked.
        let resp =
            send(call(&h, era, "emails_delete", json!({"id": "eml_energy_nov"})).header("x-mcp-readonly", "true"))
                .await;
        assert_unknown_tool(&resp, "emails_delete");
        let resp = send(call(&h, era, "emails_delete", json!({"id": "eml_energy_nov"})).path("/mcp/readonly")).await;
        assert_unknown_tool(&resp, "emails_delete");
        // Read tools still work.
        let resp = send(call(&h, era, "emails_get", json!({"id": "eml_energy_nov"})).path("/mcp/readonly")).await;
        assert_eq!(resp.json()["result"]["isError"], false, "{}", resp.json());
    }
    assert_eq!(send(h.api("GET", "/emails/eml_energy_nov")).await.status, 200, "nothing was deleted");
}

#[tokio::test]
async fn toolsets_list_and_call_only_their_tools_by_header_and_by_path() {
    let h = Harness::new();
    for era in ["2026-07-28", "2025-06-18"] {
        let listed = names(&send(list(&h, era).header("x-mcp-toolsets", "emails, jobs")).await);
        assert!(!listed.is_empty(), "{era}");
        assert!(listed.iter().all(|n| n.starts_with("emails_") || n == "jobs_get"), "{era}: {listed:?}");
        assert!(listed.contains(&"jobs_get".to_owned()));
        let listed = names(&send(list(&h, era).path("/mcp/x/webhooks")).await);
        assert!(listed.iter().all(|n| n.starts_with("webhook")), "{era}: {listed:?}");
        let resp = send(call(&h, era, "inboxes_list", json!({})).path("/mcp/x/webhooks")).await;
        assert_unknown_tool(&resp, "inboxes_list");
        // Path and header intersect.
        let resp = send(list(&h, era).path("/mcp/x/webhooks,emails").header("x-mcp-toolsets", "emails")).await;
        assert!(names(&resp).iter().all(|n| n.starts_with("emails_")), "{}", resp.json());
        // jobs_get works under `jobs` alone (reading a job needs its subject's read scope).
        let resp = send(call(&h, era, "jobs_get", json!({"id": "job_demo"})).header("x-mcp-toolsets", "jobs")).await;
        assert_eq!(resp.json()["result"]["isError"], false, "{}", resp.json());
    }
}

#[tokio::test]
async fn narrowing_never_widens_what_the_token_and_role_allow() {
    let h = Harness::new();
    let viewer = h.token_for("usr_viewer", "org_demo", ADMIN_SCOPES);
    let resp = send(list(&h, "2026-07-28").token(&viewer).header("x-mcp-toolsets", "webhooks")).await;
    let listed = names(&resp);
    assert!(!listed.contains(&"webhooks_rotate_secret".to_owned()), "{listed:?}");
    let resp = send(
        call(&h, "2026-07-28", "webhooks_rotate_secret", json!({"id": "whk_demo"}))
            .token(&viewer)
            .header("x-mcp-toolsets", "webhooks"),
    )
    .await;
    let body = resp.json();
    assert_eq!(body["result"]["structuredContent"]["error"]["code"], "forbidden", "{body}");
    // A token without the e-mail scopes gets nothing from the emails toolset.
    let webhooks_only = h.token_for("usr_admin", "org_demo", "webhooks:read webhooks:write");
    let resp = send(list(&h, "2026-07-28").token(&webhooks_only).header("x-mcp-toolsets", "emails")).await;
    assert_eq!(names(&resp), Vec::<String>::new());
}

#[tokio::test]
async fn an_unknown_toolset_or_bad_value_is_a_clear_error_naming_the_valid_ones() {
    let h = Harness::new();
    for (label, req) in [
        ("header", list(&h, "2026-07-28").header("x-mcp-toolsets", "emails,mail")),
        ("path", list(&h, "2026-07-28").path("/mcp/x/mail")),
        ("readonly", list(&h, "2026-07-28").header("x-mcp-readonly", "yes")),
    ] {
        let resp = send(req).await;
        let body = resp.json();
        assert_eq!((resp.status, body["error"]["code"].as_i64()), (400, Some(-32602)), "{label}: {body}");
        assert_eq!(
            body["error"]["data"]["toolsets"],
            json!(["inboxes", "emails", "webhooks", "jobs", "audit"]),
            "{label}"
        );
    }
}

#[tokio::test]
async fn resources_prompts_and_tasks_follow_the_narrowing() {
    let h = Harness::new();
    let templates =
        send(h.stateless(json!(1), "resources/templates/list", json!({})).header("x-mcp-toolsets", "webhooks")).await;
    let uris: Vec<String> = templates.json()["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap().to_owned())
        .collect();
    assert!(uris.iter().any(|u| u.contains("/webhooks/")) && !uris.iter().any(|u| u.contains("/emails/")), "{uris:?}");
    let resp = send(
        h.stateless(json!(2), "resources/read", json!({"uri": "kobana://inbox/emails/eml_energy_nov"}))
            .header("x-mcp-toolsets", "webhooks"),
    )
    .await;
    assert_eq!(resp.json()["error"]["code"], -32602, "{}", resp.json());
    let prompts = send(h.stateless(json!(3), "prompts/list", json!({})).header("x-mcp-toolsets", "webhooks")).await;
    let prompts = prompts.json();
    let listed: Vec<&str> =
        prompts["result"]["prompts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert!(!listed.is_empty() && listed.iter().all(|p| !p.contains("email")), "{listed:?}");

    let env = envelope_with(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
    let resp = send(
        h.stateless_with(json!(4), "tasks/cancel", json!({"taskId": "job_demo"}), env).header("x-mcp-readonly", "true"),
    )
    .await;
    assert_eq!(resp.json()["error"]["code"], -32602, "{}", resp.json());
}
