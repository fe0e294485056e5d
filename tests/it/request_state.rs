//! `requestState` held to the rules of the 2026-07-28 text (basic/patterns/mrtr):
//! the rows of docs/security.md's "requestState" table that other files do
//! not already test — the state bound to the connection's narrowing, sealed
//! for one purpose, opaque to whoever holds it, and every `input_required`
//! answer carrying its requests and its state, neither round cacheable.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::common::{Harness, Resp, envelope_with, get};
use crate::mcp_tools::{accept, ask, mcp, retry, tool_result};

const ARGS: &str = "eml_energy_nov";

fn args() -> Value {
    json!({"id": ARGS})
}

/// Round 1 of `emails_delete` on `path` with `headers`: the interim result.
async fn round_one(h: &Harness, id: i64, path: &str, headers: &[(&str, &str)]) -> Resp {
    let mut req = h
        .stateless_with(
            json!(id),
            "tools/call",
            json!({"name": "emails_delete", "arguments": args()}),
            envelope_with(json!({"elicitation": {"form": {}}})),
        )
        .path(path);
    for (name, value) in headers {
        req = req.header(name, value);
    }
    mcp(req).await
}

fn state_of(resp: &Resp) -> String {
    let result = resp.result();
    assert_eq!(result["resultType"], "input_required", "{result}");
    result["requestState"].as_str().unwrap_or_else(|| panic!("no requestState: {result}")).to_owned()
}

#[tokio::test]
async fn a_state_minted_on_one_connection_runs_on_no_narrower_or_wider_one() {
    let h = Harness::new();
    let wide = ask(&h, 1, "emails_delete", &args(), ARGS).await;
    let elsewhere: [(&str, &[(&str, &str)]); 4] = [
        ("/mcp/x/emails", &[]),
        ("/mcp", &[("x-mcp-toolsets", "emails")]),
        ("/mcp", &[("x-mcp-content-policy", "structured_only")]),
        ("/mcp/x/emails,webhooks", &[]),
    ];
    for (i, (path, headers)) in elsewhere.iter().enumerate() {
        let id = 10 + i64::try_from(i).unwrap_or(0);
        let mut req = retry(&h, id, "emails_delete", &args(), &wide, accept()).path(path);
        for (name, value) in *headers {
            req = req.header(name, value);
        }
        mcp(req).await.assert_error(200, -32602, json!(id));
    }
    assert_eq!(get(&h, &format!("/emails/{ARGS}")).await["data"]["id"], ARGS, "nothing ran");

    // Minted on the narrow connection, it runs there and nowhere else.
    let narrow = state_of(&round_one(&h, 20, "/mcp/x/emails", &[]).await);
    mcp(retry(&h, 21, "emails_delete", &args(), &narrow, accept())).await.assert_error(200, -32602, json!(21));
    let ran = mcp(retry(&h, 22, "emails_delete", &args(), &narrow, accept()).path("/mcp/x/emails")).await;
    tool_result(&ran, 22, false);
}

#[tokio::test]
async fn a_token_the_server_sealed_for_another_purpose_is_no_state() {
    let h = Harness::new();
    let listed =
        mcp(h.stateless(json!(1), "tools/call", json!({"name": "emails_list", "arguments": {"limit": 1}}))).await;
    let cursor = tool_result(&listed, 1, false)["meta"]["next_cursor"].as_str().unwrap_or_default().to_owned();
    assert!(cursor.starts_with("v1."), "a sealed cursor: {cursor}");
    mcp(retry(&h, 2, "emails_delete", &args(), &cursor, accept())).await.assert_error(200, -32602, json!(2));
    assert_eq!(get(&h, &format!("/emails/{ARGS}")).await["data"]["id"], ARGS, "nothing ran");
}

#[tokio::test]
async fn a_state_tells_whoever_holds_it_nothing() {
    let h = Harness::new();
    let state = ask(&h, 1, "emails_delete", &args(), ARGS).await;
    let mut seen = Vec::new();
    for part in state.split('.') {
        seen.extend(base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part).unwrap_or_default());
    }
    let seen = String::from_utf8_lossy(&seen);
    for secret in ["usr_admin", "org_demo", "ws_main", "emails_delete", ARGS, "tools/call"] {
        assert!(!seen.contains(secret) && !state.contains(secret), "{secret} readable in the state");
    }
    // Two rounds of the same call get two different states (a fresh nonce each).
    assert_ne!(ask(&h, 2, "emails_delete", &args(), ARGS).await, state);
}

#[tokio::test]
async fn every_input_required_answer_carries_its_requests_and_its_state_and_no_round_is_cacheable() {
    let h = Harness::new();
    let first = round_one(&h, 1, "/mcp", &[]).await;
    let result = first.result();
    assert!(result["inputRequests"].as_object().is_some_and(|r| !r.is_empty()), "{result}");
    assert!(result["requestState"].as_str().is_some_and(|s| !s.is_empty()), "{result}");
    let second = mcp(retry(&h, 2, "emails_delete", &args(), &state_of(&first), accept())).await;
    tool_result(&second, 2, false);
    for resp in [&first, &second] {
        let result = resp.result();
        assert!(result.get("ttlMs").is_none() && result.get("cacheScope").is_none(), "{result}");
        let cache = resp.headers.get("cache-control").and_then(|v| v.to_str().ok()).unwrap_or_default();
        assert_eq!(cache, "no-store");
    }
}
