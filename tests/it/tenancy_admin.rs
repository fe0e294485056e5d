//! Running it for a real customer: the organization administration (REST
//! under `/api/v1/org` and the `admin` command line), the errors of people
//! not set up yet, archived workspaces, and tokens shaped like those of the
//! identity providers docs/operations.md gives recipes for.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::{self, ADMIN_SCOPES, Harness, ISSUER, MCP_RESOURCE, send};

/// Runs `kobana-inbox-mcp admin <args>` against the harness's table: exit
/// code, stdout, stderr.
pub(crate) fn cli(h: &Harness, args: &str) -> (i32, String, String) {
    cli_args(h, &args.split(' ').filter(|a| !a.is_empty()).collect::<Vec<_>>())
}

/// `cli` with the arguments as given (one may hold a space or a newline).
fn cli_args(h: &Harness, args: &[&str]) -> (i32, String, String) {
    cli_env(h, args, &[])
}

/// `cli_args` with more environment (`ATTACHMENTS_BUCKET`, say).
pub(crate) fn cli_env(h: &Harness, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kobana-inbox-mcp"))
        .arg("admin")
        .args(args)
        .envs(env.iter().copied())
        .env("TABLE_NAME", &h.table)
        .env("DYNAMODB_ENDPOINT", common::dynamodb_endpoint())
        .env("AWS_REGION", "us-east-1")
        .env("USER", "ops")
        .output()
        .expect("the binary runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// Every item's key and its attributes' names and values, sorted: the table's content.
async fn keys(table: &str) -> Vec<String> {
    let mut items: Vec<String> = common::table_dump_sorted(table).await;
    items.sort();
    items
}

/// The JSON a successful command printed.
fn printed(out: &(i32, String, String)) -> Value {
    assert_eq!(out.0, 0, "stdout {} stderr {}", out.1, out.2);
    serde_json::from_str(&out.1).unwrap_or_else(|e| panic!("{e}: {}", out.1))
}

/// A token of `sub` in `org` for both audiences.
fn token(h: &Harness, sub: &str, org: &str, scopes: &str) -> String {
    h.token_for(sub, org, scopes)
}

fn tools(resp: &common::Resp) -> Vec<String> {
    resp.result()["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_deployment_is_set_up_from_an_empty_table_with_the_cli_alone() {
    let h = Harness::empty();
    h.app().await;
    printed(&cli(&h, "org create --org org_acme --name Acme"));
    printed(&cli(&h, "org-admin add --org org_acme --subject auth0|boss"));
    let created = printed(&cli(&h, "workspace create --org org_acme --name Billing --slug billing"));
    let ws = created["data"]["id"].as_str().unwrap().to_owned();
    assert!(ws.starts_with("ws_"), "{created}");
    let member =
        printed(&cli(&h, &format!("member set --org org_acme --workspace {ws} --subject auth0|ana --role admin")));
    assert_eq!(member["data"]["role"], "admin");

    // Ana's token lists the tools and reads the workspace through MCP (one workspace: no header).
    let ana = token(&h, "auth0|ana", "org_acme", ADMIN_SCOPES);
    let resp = send(h.stateless(json!(1), "tools/list", json!({})).token(&ana).without("x-workspace-id")).await;
    assert!(tools(&resp).contains(&"inboxes_upsert".to_owned()), "{}", resp.json());
    let read = json!({"uri": "kobana://inbox/workspace"});
    let resp = send(h.stateless(json!(2), "resources/read", read).token(&ana).without("x-workspace-id")).await;
    let text = resp.result()["contents"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["data"]["id"], ws.as_str());

    // The organization administrator adds a second member through REST.
    let boss = token(&h, "auth0|boss", "org_acme", "org:admin");
    let path = format!("/org/workspaces/{ws}/members/auth0%7Cbob");
    let resp = send(h.api("PUT", &path).token(&boss).without("x-workspace-id").json(&json!({"role": "viewer"}))).await;
    assert_eq!((resp.status, resp.json()["data"]["subject"].as_str()), (201, Some("auth0|bob")), "{}", resp.json());
    let bob = token(&h, "auth0|bob", "org_acme", ADMIN_SCOPES);
    let resp = send(h.stateless(json!(3), "tools/list", json!({})).token(&bob).without("x-workspace-id")).await;
    assert!(tools(&resp).contains(&"emails_list".to_owned()) && !tools(&resp).contains(&"inboxes_upsert".to_owned()));

    // The workspace's trail: the CLI's change (surface cli, the `--as` default) and the REST one.
    let auditor = token(&h, "auth0|ana", "org_acme", common::ALL_SCOPES);
    let trail = send(h.api("GET", "/audit").token(&auditor).without("x-workspace-id")).await.json();
    let records = trail["data"].as_array().unwrap();
    let by = |surface: &str| records.iter().filter(|r| r["surface"] == surface).cloned().collect::<Vec<_>>();
    let cli_records = by("cli");
    assert!(cli_records.iter().any(|r| r["operation"] == "member_set" && r["subject"] == "cli:ops"), "{trail}");
    assert!(
        cli_records.iter().any(|r| r["operation"] == "workspace_create" && r["action"] == "admin workspace create")
    );
    assert!(by("rest").iter().any(|r| r["operation"] == "member_set" && r["subject"] == "auth0|boss"), "{trail}");
    // The audit_list tool shows the CLI's changes too.
    let call = json!({"name": "audit_list", "arguments": {}});
    let resp = send(h.stateless(json!(4), "tools/call", call).token(&auditor).without("x-workspace-id")).await;
    let listed = &resp.result()["structuredContent"]["data"];
    assert!(listed.as_array().unwrap().iter().any(|r| r["surface"] == "cli"), "{}", resp.json());
    // The organization's own trail has the administrator's grant.
    let org_trail = send(h.api("GET", "/org/audit").token(&boss)).await.json();
    assert!(org_trail["data"].as_array().unwrap().iter().any(|r| r["operation"] == "org_admin_add"), "{org_trail}");
}

#[tokio::test]
async fn every_administration_change_leaves_one_record_in_the_trail_it_changes() {
    let h = Harness::new();
    let boss = token(&h, "usr_admin", "org_demo", "org:admin");
    let auditor = token(&h, "usr_admin", "org_demo", common::ALL_SCOPES);
    let trail = |path: &'static str| {
        let (h, auditor) = (&h, auditor.clone());
        async move {
            let listed = send(h.api("GET", &format!("{path}?limit=100")).token(&auditor)).await.json();
            listed["data"].as_array().map_or(0, Vec::len)
        }
    };
    let changes: [(&str, &str, Value, &str); 5] = [
        ("PUT", "/org/workspaces/ws_main/members/usr_new", json!({"role": "viewer"}), "/audit"),
        ("PUT", "/org/workspaces/ws_main/pipelines/svc_other", Value::Null, "/audit"),
        ("PATCH", "/org/workspaces/ws_main", json!({"name": "Main office"}), "/audit"),
        ("PUT", "/org/admins/usr_operator", Value::Null, "/org/audit"),
        ("PUT", "/org", json!({"name": "Demo Co Ltd"}), "/org/audit"),
    ];
    for (method, path, body, where_) in changes {
        let before = trail(where_).await;
        let mut req = h.api(method, path).token(&boss);
        if !body.is_null() {
            req = req.json(&body);
        }
        let resp = send(req).await;
        assert!(resp.status < 300, "{method} {path}: {}", resp.json());
        assert_eq!(trail(where_).await, before + 1, "{method} {path}: one record in {where_}");
    }
}

#[tokio::test]
async fn the_cli_says_what_went_wrong_with_its_exit_code_and_a_dry_run_writes_nothing() {
    let h = Harness::new();
    h.app().await;
    let (code, _, err) = cli(&h, "member set --org org_demo --workspace ws_main --subject x");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("required arguments were not provided:\n  --role <ROLE>"), "{err}");
    let (code, out, _) = cli(&h, "member remove --help");
    assert!(code == 0 && out.contains("Usage: kobana-inbox-mcp admin member remove"), "{out}");
    let (code, _, err) = cli(&h, "member remove --org org_demo --workspace ws_main --subject usr_admin");
    assert_eq!(code, 3, "{err}");
    assert!(err.starts_with("last_admin:"), "{err}");
    let (code, _, err) = cli(&h, "workspace archive --org org_demo --workspace ws_nope");
    assert!(code == 3 && err.starts_with("not_found:"), "{err}");

    let before = keys(&h.table).await;
    let out = cli(&h, "member set --org org_demo --workspace ws_main --subject usr_new --role operator --dry-run");
    assert_eq!(out.0, 0, "{}", out.2);
    assert!(out.1.starts_with("dry run: nothing was written"), "{}", out.1);
    assert!(out.1.contains("sk=MEMBER#usr_new") && out.1.contains("role=operator"), "{}", out.1);
    assert!(out.1.contains("sk=AUD#"), "the audit record is part of the change: {}", out.1);
    let after = keys(&h.table).await;
    let new: Vec<&String> = after.iter().filter(|i| !before.contains(i)).collect();
    let gone: Vec<&String> = before.iter().filter(|i| !after.contains(i)).collect();
    assert!(new.is_empty() && gone.is_empty(), "a dry run writes nothing: new {new:?}, gone {gone:?}");
}

/// Runs a dry run and checks that the table, audit records included, is
/// exactly as before: exit code, stdout, stderr.
async fn dry(h: &Harness, line: &str) -> (i32, String, String) {
    let before = keys(&h.table).await;
    let out = cli(h, line);
    assert_eq!(keys(&h.table).await, before, "{line} wrote: {out:?}");
    out
}

#[tokio::test]
async fn a_dry_run_writes_nothing_not_even_an_audit_record_and_answers_what_the_real_run_would() {
    let h = Harness::new();
    h.app().await;
    let pipeline = inbox::seed::MAIL_PIPELINE;
    // Nothing to do: the answer of the real run, and that nothing would change.
    for line in [
        "member set --org org_demo --workspace ws_main --subject usr_operator --role operator --dry-run".to_owned(),
        "org-admin add --org org_demo --subject usr_admin --dry-run".into(),
        format!("pipeline register --org org_demo --workspace ws_main --subject {pipeline} --dry-run"),
    ] {
        let out = dry(&h, &line).await;
        assert_eq!(out.0, 0, "{line}: {}", out.2);
        assert!(out.1.starts_with("dry run: nothing was written; nothing would change"), "{line}: {}", out.1);
        assert!(out.1.contains("changed=false"), "{line}: the record the real run writes is shown: {}", out.1);
    }
    // Refused: the real run's refusal, read before any write.
    for (line, code) in [
        ("member remove --org org_demo --workspace ws_main --subject usr_nobody --dry-run", "not_found:"),
        ("member remove --org org_demo --workspace ws_ops --subject usr_admin --dry-run", "last_admin:"),
        ("member set --org org_demo --workspace ws_ops --subject usr_admin --role viewer --dry-run", "last_admin:"),
        ("workspace create --org org_demo --name Again --slug main --dry-run", "slug_taken:"),
        ("pipeline unregister --org org_demo --workspace ws_main --subject svc_nobody --dry-run", "not_found:"),
        ("org-admin remove --org org_demo --subject usr_nobody --dry-run", "not_found:"),
        ("org-admin remove --org org_demo --subject usr_admin --dry-run", "last_org_admin:"),
        ("workspace rename --org org_demo --workspace ws_nope --name X --dry-run", "not_found:"),
    ] {
        let out = dry(&h, line).await;
        assert_eq!(out.0, 3, "{line}: {out:?}");
        assert!(out.2.starts_with(code), "{line}: {}", out.2);
        assert!(out.1.starts_with("dry run: nothing was written; the real run would be refused"), "{line}: {}", out.1);
        // The real run gives the same answer (and writes the refusal's record).
        let real = cli(&h, line.trim_end_matches(" --dry-run"));
        assert_eq!((real.0, real.2.split(':').next()), (3, code.split(':').next()), "{line}: {real:?}");
    }
    // A change: described, not made.
    let out = dry(&h, "workspace rename --org org_demo --workspace ws_main --name Renamed --dry-run").await;
    assert!(out.0 == 0 && out.1.starts_with("dry run: nothing was written; the change would write:"), "{out:?}");
    assert!(out.1.contains("Renamed"), "{}", out.1);
}

#[tokio::test]
async fn a_flag_value_that_looks_like_a_flag_or_holds_a_control_character_is_refused_and_changes_nothing() {
    let h = Harness::new();
    h.app().await;
    let before = keys(&h.table).await;
    // `--dry-run` is not a name: nothing is renamed.
    let (code, _, err) = cli(&h, "workspace rename --org org_demo --workspace ws_main --name --dry-run");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--name needs a value"), "{err}");
    for subject in ["ops\nforged: a second line", "ops\r", "ops\u{1b}[31m", "ops\u{2028}", "ops\u{202e}"] {
        let args = ["member", "set", "--org", "org_demo", "--workspace", "ws_main", "--subject", "usr_new", "--role"];
        let (code, _, err) = cli_args(&h, &[&args[..], &["viewer", "--as", subject]].concat());
        assert_eq!(code, 2, "{subject:?}: {err}");
        assert!(err.contains("--as must not contain control characters"), "{err}");
        let (code, _, err) =
            cli_args(&h, &["workspace", "rename", "--org", "org_demo", "--workspace", "ws_main", "--name", subject]);
        assert_eq!(code, 2, "{subject:?}: {err}");
    }
    assert_eq!(keys(&h.table).await, before, "nothing was written");
}

#[tokio::test]
async fn help_asked_for_is_success_on_stdout_at_every_level_and_usage_errors_stay_exit_2() {
    let h = Harness::empty();
    for (line, wanted) in [
        ("--help", "workspace shards"),
        ("-h", "org-admin add"),
        ("help", "member set"),
        ("workspace --help", "Rename a workspace"),
        ("member --help", "Take a person out of a workspace"),
        ("member set --help", "Usage: kobana-inbox-mcp admin member set [OPTIONS] --org <ORG>"),
        ("workspace shards --help", "Usage: kobana-inbox-mcp admin workspace shards [OPTIONS] --org <ORG>"),
        ("org-admin list --org org_demo --help", "Usage: kobana-inbox-mcp admin org-admin list"),
    ] {
        let (code, out, err) = cli(&h, line);
        assert_eq!(code, 0, "{line}: {err}");
        assert!(out.contains(wanted) && err.is_empty(), "{line}: {out} / {err}");
    }
    for (line, wanted) in [
        ("", "Usage: kobana-inbox-mcp admin <COMMAND>"),
        ("member promote --org org_demo", "unrecognized subcommand 'promote'"),
        ("member set --org org_demo", "required arguments were not provided:\n  --workspace <WORKSPACE>"),
        ("workspace shards --org org_demo --workspace ws_main --count many", "--count must be a whole number"),
    ] {
        let (code, out, err) = cli(&h, line);
        assert_eq!(code, 2, "{line}: {out}");
        assert!(err.contains(wanted) && out.is_empty(), "{line}: {err}");
    }
    let top = Command::new(env!("CARGO_BIN_EXE_kobana-inbox-mcp")).args(["admin", "--help"]).output().unwrap();
    assert_eq!(top.status.code(), Some(0));
    // The operator's CLI says which release it is (docs/operations.md, "Versions").
    let version = Command::new(env!("CARGO_BIN_EXE_kobana-inbox-mcp")).arg("--version").output().unwrap();
    assert_eq!(version.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&version.stdout), format!("kobana-inbox-mcp {}\n", env!("CARGO_PKG_VERSION")));
}

/// `kobana-inbox-mcp admin … | head` and `openapi | head`: a reader that closes the pipe
/// early ends the command quietly (success, no panic), as any Unix tool.
#[tokio::test]
async fn a_reader_that_closes_the_pipe_early_is_no_panic() {
    let h = Harness::new();
    h.app().await;
    for args in [vec!["openapi"], vec!["admin", "org-admin", "list", "--org", "org_demo"], vec!["--help"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kobana-inbox-mcp"))
            .args(&args)
            .env("TABLE_NAME", &h.table)
            .env("DYNAMODB_ENDPOINT", common::dynamodb_endpoint())
            .env("AWS_REGION", "us-east-1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The read end closes before the command has written anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !stderr.contains("panicked"), "{args:?}: {:?} {stderr}", out.status);
    }
}

#[tokio::test]
async fn raising_a_workspaces_shards_leaves_a_record_in_its_trail_like_every_administration_change() {
    let h = Harness::new();
    h.app().await;
    let out = printed(&cli(&h, "workspace shards --org org_demo --workspace ws_main --count 4 --as ops@example"));
    assert_eq!((out["data"]["count"].as_u64(), out["data"]["previous"].as_u64()), (Some(4), Some(1)), "{out}");
    let (code, _, err) = cli(&h, "workspace shards --org org_demo --workspace ws_main --count 2");
    assert!(code == 3 && err.starts_with("invalid_count:"), "{err}");
    let (code, _, err) = cli(&h, "workspace shards --org org_demo --workspace ws_main --count 4 --dry-run");
    assert!(code == 2 && err.contains("unexpected argument '--dry-run'"), "{err}");

    let auditor = token(&h, "usr_admin", "org_demo", common::ALL_SCOPES);
    let trail = send(h.api("GET", "/audit?limit=100").token(&auditor)).await.json();
    let records: Vec<&Value> =
        trail["data"].as_array().unwrap().iter().filter(|r| r["operation"] == "workspace_shards").collect();
    assert_eq!(records.len(), 1, "the raise: {trail}");
    let raised = records[0];
    assert_eq!(raised["changed"], true, "{raised}");
    assert_eq!(
        (&raised["surface"], &raised["action"], &raised["subject"], &raised["target_id"]),
        (&json!("cli"), &json!("admin workspace shards"), &json!("ops@example"), &json!("ws_main")),
        "{raised}"
    );
    // A refusal is recorded where every refused administration call is: the organization's trail.
    let boss = token(&h, "usr_admin", "org_demo", "org:admin");
    let org_trail = send(h.api("GET", "/org/audit?limit=100").token(&boss)).await.json();
    let refused: Vec<&Value> =
        org_trail["data"].as_array().unwrap().iter().filter(|r| r["operation"] == "workspace_shards").collect();
    assert_eq!(refused.len(), 1, "{org_trail}");
    assert_eq!(
        (&refused[0]["status"], &refused[0]["error_code"], &refused[0]["changed"]),
        (&json!(409), &json!("invalid_count"), &json!(false)),
        "{org_trail}"
    );
}

#[tokio::test]
async fn a_dry_run_store_refuses_a_write_that_does_not_describe_itself() {
    let h = Harness::new();
    let store = h.app().await.store.dry_run();
    let before = keys(&h.table).await;
    let (org, ws) =
        (inbox::domain::OrgId::parse("org_demo").unwrap(), inbox::domain::WorkspaceId::parse("ws_main").unwrap());
    assert!(store.set_write_shards(&org, &ws, 8, 0).await.is_err(), "its updates are refused, not sent");
    let item = [("pk", "T#x"), ("sk", "X")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), aws_sdk_dynamodb::types::AttributeValue::S(v.into())))
        .collect();
    assert!(store.put_raw(item).await.is_err());
    assert!(store.get_workspace(&org, &ws).await.unwrap().is_some(), "reads still read the table");
    assert_eq!(keys(&h.table).await, before);
    assert!(store.described_writes().is_empty());
}

#[tokio::test]
async fn organization_administration_is_refused_to_everyone_else() {
    let h = Harness::new();
    // A workspace admin without org_admin, with the scope.
    let operator = token(&h, "usr_operator", "org_demo", "org:admin");
    let resp = send(h.api("GET", "/org/workspaces").token(&operator)).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (403, Some("forbidden")), "{}", resp.json());
    // An organization administrator without the scope.
    let unscoped = token(&h, "usr_admin", "org_demo", ADMIN_SCOPES);
    let resp = send(h.api("GET", "/org/workspaces").token(&unscoped)).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (403, Some("insufficient_scope")));
    // Another organization's administrator: their own organization only.
    let other = token(&h, "usr_other", "org_other", "org:admin");
    let listed = send(h.api("GET", "/org/workspaces").token(&other)).await.json();
    let ids: Vec<&str> = listed["data"].as_array().unwrap().iter().map(|w| w["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["ws_other"]);
    let resp = send(h.api("GET", "/org/workspaces/ws_main").token(&other)).await;
    assert_eq!(resp.status, 404, "{}", resp.json());
    let path = "/org/workspaces/ws_main/members/usr_other";
    let resp = send(h.api("PUT", path).token(&other).json(&json!({"role": "admin"}))).await;
    assert_eq!(resp.status, 404, "{}", resp.json());
    let viewer = send(h.api("GET", "/org/workspaces/ws_main/members/usr_viewer").token(&other)).await;
    assert_eq!(viewer.status, 405);
}

#[tokio::test]
async fn the_last_admin_and_the_last_organization_administrator_stay() {
    let h = Harness::new();
    let boss = token(&h, "usr_admin", "org_demo", "org:admin");
    let resp = send(h.api("DELETE", "/org/workspaces/ws_main/members/usr_admin").token(&boss)).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (409, Some("last_admin")));
    let demote = json!({"role": "viewer"});
    let resp = send(h.api("PUT", "/org/workspaces/ws_main/members/usr_admin").token(&boss).json(&demote)).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (409, Some("last_admin")));
    let resp = send(h.api("DELETE", "/org/admins/usr_admin").token(&boss)).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (409, Some("last_org_admin")));
    // With a second one, the first can go.
    let promote = json!({"role": "admin"});
    let resp = send(h.api("PUT", "/org/workspaces/ws_main/members/usr_operator").token(&boss).json(&promote)).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    let resp = send(h.api("DELETE", "/org/workspaces/ws_main/members/usr_admin").token(&boss)).await;
    assert_eq!((resp.status, resp.json()["data"]["deleted"].as_bool()), (200, Some(true)), "{}", resp.json());
    assert_eq!(send(h.api("PUT", "/org/admins/usr_second").token(&boss)).await.status, 201);
    assert_eq!(send(h.api("PUT", "/org/admins/usr_second").token(&boss)).await.status, 200, "again: nothing to do");
    let resp = send(h.api("DELETE", "/org/admins/usr_admin").token(&boss)).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    // No longer an administrator: refused at once.
    assert_eq!(send(h.api("GET", "/org/admins").token(&boss)).await.status, 403);
}

#[tokio::test]
async fn a_removed_member_loses_access_within_the_membership_cache_lifetime() {
    let ttl = std::time::Duration::from_millis(600);
    let h = Harness::with_config(move |c| c.membership_cache = ttl);
    let boss = token(&h, "usr_admin", "org_demo", "org:admin");
    let viewer = token(&h, "usr_viewer", "org_demo", ADMIN_SCOPES);
    assert_eq!(send(h.api("GET", "/inboxes").token(&viewer)).await.status, 200);
    let resp = send(h.api("DELETE", "/org/workspaces/ws_main/members/usr_viewer").token(&boss)).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    tokio::time::sleep(ttl + std::time::Duration::from_millis(100)).await;
    let resp = send(h.api("GET", "/inboxes").token(&viewer)).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (403, Some("no_membership")), "{}", resp.json());
}

#[tokio::test]
async fn a_person_who_is_not_set_up_is_told_so_on_rest_and_mcp() {
    let h = Harness::new();
    let stranger = token(&h, "usr_stranger", "org_demo", ADMIN_SCOPES);
    let resp = send(h.api("GET", "/inboxes").token(&stranger).without("x-workspace-id")).await;
    let body = resp.json();
    assert_eq!((resp.status, body["error"]["code"].as_str()), (403, Some("no_membership")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("ask an administrator to add you"));
    assert_eq!(body["error"]["details"]["organization"], "org_demo");
    let resp = send(h.stateless(json!(1), "tools/list", json!({})).token(&stranger).without("x-workspace-id")).await;
    assert_eq!(resp.status, 403, "{}", resp.json());
    assert_eq!(resp.json()["error"]["data"]["code"], "no_membership", "{}", resp.json());

    // An organization without any workspace says that instead.
    let newcomer = token(&h, "usr_first", "org_new", ADMIN_SCOPES);
    let resp = send(h.api("GET", "/inboxes").token(&newcomer).without("x-workspace-id")).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (403, Some("no_workspace")), "{}", resp.json());
    let resp = send(h.stateless(json!(2), "tools/list", json!({})).token(&newcomer).without("x-workspace-id")).await;
    assert_eq!(resp.json()["error"]["data"]["code"], "no_workspace", "{}", resp.json());
}

#[tokio::test]
async fn an_archived_workspace_is_read_by_its_admins_and_changes_nothing() {
    // Memberships and archived ids read fresh: no container cache in between.
    let h = Harness::with_config(|c| c.membership_cache = std::time::Duration::ZERO);
    let boss = token(&h, "usr_admin", "org_demo", "org:admin");
    let resp = send(h.api("POST", "/org/workspaces/ws_main/archive").token(&boss)).await;
    assert_eq!((resp.status, resp.json()["data"]["status"].as_str()), (200, Some("archived")), "{}", resp.json());
    // Archiving it again changes nothing, and says so.
    assert_eq!(send(h.api("POST", "/org/workspaces/ws_main/archive").token(&boss)).await.status, 200);
    assert_eq!(send(h.api("GET", "/inboxes")).await.status, 200, "its admin reads it");
    let viewer = h.token_for("usr_viewer", "org_demo", ADMIN_SCOPES);
    let resp = send(h.api("GET", "/inboxes").token(&viewer)).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (403, Some("workspace_archived")));
    let body = json!({"slug": "late", "name": "Late"});
    let resp = send(h.api("PUT", "/inboxes").json(&body)).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (409, Some("workspace_archived")));
    let pipeline = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    let mail = json!({"from": "a@b.example.com", "to": "bills@acme.example.com", "subject": "s", "text": "t"});
    let resp = send(h.api("POST", "/inboxes/inb_receipts/emails").token(&pipeline).json(&mail)).await;
    assert_eq!((resp.status, resp.json()["error"]["code"].as_str()), (409, Some("workspace_archived")));
}

// ------------------------------------------------------- identity providers

/// A token with `claims`, signed by the harness's issuer, reaches
/// `emails_list` in `workspace`.
async fn reaches_a_tool(h: &Harness, claims: Value, workspace: &str) {
    let token = h.sign(&claims);
    let call = json!({"name": "emails_list", "arguments": {"limit": 1}});
    let resp = send(h.stateless(json!(1), "tools/call", call).token(&token).header("x-workspace-id", workspace)).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    assert_eq!(resp.result()["isError"], false, "{}", resp.json());
}

fn now() -> u64 {
    inbox::sys::unix_now()
}

#[tokio::test]
async fn amazon_cognito_client_id_custom_org_claim_and_resource_server_scopes() {
    let h = Harness::with_config(|c| {
        c.auth.claims.audience_claim = "client_id".into();
        c.auth.claims.org_claim = "custom:org_id".into();
        c.auth.claims.scope_prefix = "kobana-inbox/".into();
        c.auth.mcp_audience = Some("3n4b5urk1ft4fl3mg5e62d9ado".into());
        // The REST API's own app client: a token of one does not open the other.
        c.auth.api_audience = "7q1hd0m2k5c8s3v6x9z4b7n0fe".into();
    });
    reaches_a_tool(&h, json!({
        "iss": ISSUER, "sub": "usr_admin", "token_use": "access", "client_id": "3n4b5urk1ft4fl3mg5e62d9ado",
        "username": "ana", "custom:org_id": "org_demo", "scope": "kobana-inbox/emails:read kobana-inbox/inboxes:read",
        "auth_time": now(), "iat": now(), "exp": now() + 600, "jti": "b0f0"
    }), "ws_main").await;
}

#[tokio::test]
async fn auth0_api_audience_and_organizations_org_id() {
    let h = Harness::new();
    reaches_a_tool(
        &h,
        json!({
            "iss": ISSUER, "sub": "usr_admin", "aud": [MCP_RESOURCE, "https://kobana.eu.auth0.com/userinfo"],
            "azp": "Yv1c", "org_id": "org_demo", "https://kobana.example/roles": ["ops"],
            "scope": "openid profile emails:read", "permissions": ["emails:read"], "iat": now(), "exp": now() + 600
        }),
        "ws_main",
    )
    .await;
}

#[tokio::test]
async fn okta_custom_authorization_server_with_scp_as_a_list() {
    let h = Harness::with_config(|c| c.auth.claims.org_claim = "kobana_org".into());
    reaches_a_tool(
        &h,
        json!({
            "ver": 1, "iss": ISSUER, "sub": "usr_admin", "aud": MCP_RESOURCE, "cid": "0oa1", "uid": "00u1",
            "scp": ["emails:read", "offline_access"], "kobana_org": "org_demo", "iat": now(), "exp": now() + 600
        }),
        "ws_main",
    )
    .await;
}

#[tokio::test]
async fn microsoft_entra_id_tid_as_organization_and_dotted_scp() {
    let tid = "72f988bf-86f1-41af-91ab-2d7cd011db47";
    let h = Harness::with_config(|c| {
        c.auth.claims.org_claim = "tid".into();
        c.auth.claims.scope_separator = '.';
        c.auth.mcp_audience = Some("api://kobana-inbox".into());
    });
    // The tenant's first person, set up as the administration does it.
    let app = h.app().await;
    let org = inbox::domain::OrgId::parse(tid).unwrap();
    let ws = inbox::domain::records::Workspace {
        id: "ws_entra".into(),
        name: "Entra".into(),
        slug: "entra".into(),
        status: inbox::domain::records::WorkspaceStatus::Active,
        created_at: "2026-12-01T00:00:00.000Z".into(),
        updated_at: "2026-12-01T00:00:00.000Z".into(),
    };
    app.store.create_workspace(&org, &ws, None).await.unwrap();
    let t = inbox::domain::Tenant::new(
        org,
        inbox::domain::WorkspaceId::parse("ws_entra").unwrap(),
        inbox::domain::Role::Admin,
    );
    let member = inbox::domain::records::Member {
        subject: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ".into(),
        role: inbox::domain::Role::Viewer,
        updated_at: "2026-12-01T00:00:00.000Z".into(),
    };
    app.store.set_member(&t, &member, None, None).await.unwrap();
    reaches_a_tool(
        &h,
        json!({
            "iss": ISSUER, "sub": member.subject, "aud": "api://kobana-inbox", "tid": tid, "ver": "2.0",
            "oid": "00000000-0000-0000-66f3-3332eca7ea81", "azp": "c44b4083", "scp": "emails.read inboxes.read",
            "iat": now(), "nbf": now(), "exp": now() + 600
        }),
        "ws_entra",
    )
    .await;
}

#[tokio::test]
async fn keycloak_realm_with_the_organization_claim() {
    let h = Harness::with_config(|c| c.auth.claims.org_claim = "organization".into());
    reaches_a_tool(
        &h,
        json!({
            "iss": ISSUER, "sub": "usr_admin", "aud": [MCP_RESOURCE, "account"], "typ": "Bearer", "azp": "kobana-mcp",
            "organization": {"org_demo": {"id": "6b1c"}}, "scope": "profile email emails:read",
            "realm_access": {"roles": ["offline_access"]}, "iat": now(), "exp": now() + 600
        }),
        "ws_main",
    )
    .await;
}
