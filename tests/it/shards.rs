//! A workspace's write shards (`inbox::domain::shards`): records spread over
//! partitions that all begin with the tenant, lists read every shard and
//! merge newest first with cursors that span shards, records made before
//! (shard 0) stay where they are, keyed records are found across a change,
//! the count only grows, and a second raise waits until the first one's
//! grace has passed (so no keyed record is lost to two raises in a day).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::{Harness, get, send};
use crate::jobs_and_webhooks::{accepted_job, ingest, ingested, mail, run_job};
use crate::mcp_tools::{accept, ask, mcp, retry, tool_result};

fn ids() -> (inbox::domain::OrgId, inbox::domain::WorkspaceId) {
    (inbox::domain::OrgId::parse("org_demo").unwrap(), inbox::domain::WorkspaceId::parse("ws_main").unwrap())
}

/// A harness whose requests read the workspace's shards every time (no
/// tenancy cache), so the next request sees a raise.
fn uncached() -> Harness {
    Harness::with_config(|c| c.membership_cache = std::time::Duration::ZERO)
}

/// Raises `ws_main`'s shards 1 → 4 two write delays ago (four shards are
/// written to now), then tries 4 → 16 one write delay ago: the answer to
/// the second raise, and when the first one's grace ends.
async fn raise_twice_within_a_day(h: &Harness) -> (Result<inbox::domain::Shards, inbox::store::StoreError>, u64) {
    let store = h.app().await.store.clone();
    let (org, ws) = ids();
    let delay = inbox::domain::Shards::WRITE_DELAY_SECS;
    let now = inbox::sys::unix_now();
    let four = store.set_write_shards(&org, &ws, 4, now - 2 * delay - 2).await.expect("1 → 4");
    assert_eq!((four.count, four.previous), (4, 1));
    (
        store.set_write_shards(&org, &ws, 16, now - delay - 1).await,
        four.changed_at + inbox::domain::Shards::KEYED_GRACE_SECS,
    )
}

/// Every page of `path` (`limit` per page), following `next_cursor`.
async fn all_pages(h: &Harness, path: &str, limit: usize) -> Vec<Value> {
    let mut found = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let separator = if path.contains('?') { '&' } else { '?' };
        let url = match &cursor {
            Some(c) => format!(
                "{path}{separator}limit={limit}&cursor={}",
                url::form_urlencoded::byte_serialize(c.as_bytes()).collect::<String>()
            ),
            None => format!("{path}{separator}limit={limit}"),
        };
        let resp =
            send(h.api("GET", &url).token(&h.token_for("usr_admin", "org_demo", crate::common::ALL_SCOPES))).await;
        let body = resp.json();
        assert_eq!(resp.status, 200, "{url}: {body}");
        let page = body["data"].as_array().cloned().unwrap_or_default();
        assert!(page.len() <= limit, "{body}");
        found.extend(page);
        match body["meta"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return found,
        }
    }
    panic!("{path}: more than 100 pages");
}

#[tokio::test]
async fn records_spread_over_the_shards_and_lists_read_them_all_once_newest_first_across_pages() {
    let h = Harness::new();
    let (org, ws) = ids();
    // Changed long ago: written to at once.
    h.app().await.store.set_write_shards(&org, &ws, 4, 0).await.expect("shards");
    let before: BTreeSet<String> =
        all_pages(&h, "/emails", 50).await.iter().filter_map(|e| e["id"].as_str().map(str::to_owned)).collect();
    let mut made = BTreeSet::new();
    for i in 0..14 {
        let mut body = mail("contas@energia.example.com");
        body["received_at"] = Value::from(format!("2026-11-28T10:{i:02}:00Z"));
        let (id, _, _) = ingested(&send(ingest(&h, "inb_bills", &body)).await);
        made.insert(id);
    }
    assert!(made.iter().any(|id| id.contains("_s")), "some e-mails are in shards 1 to 3: {made:?}");
    // Every shard's partition begins with the tenant.
    let dump = crate::common::table_dump(&h.table).await;
    let sharded: BTreeSet<&str> =
        ["#S1\"", "#S2\"", "#S3\""].into_iter().filter(|s| dump.iter().any(|i| i.contains(s))).collect();
    assert!(!sharded.is_empty(), "items in shard partitions");
    assert!(
        dump.iter()
            .filter(|i| i.contains("#S1\"") || i.contains("#S2\"") || i.contains("#S3\""))
            .all(|i| i.contains("T#org_demo#W#ws_main#S"))
    );

    let listed = all_pages(&h, "/emails", 5).await;
    let listed_ids: Vec<String> = listed.iter().filter_map(|e| e["id"].as_str().map(str::to_owned)).collect();
    let unique: BTreeSet<String> = listed_ids.iter().cloned().collect();
    assert_eq!(unique.len(), listed_ids.len(), "no e-mail twice: {listed_ids:?}");
    let expected: BTreeSet<String> = before.union(&made).cloned().collect();
    assert_eq!(unique, expected, "every e-mail once, the ones from before the shards too");
    let times: Vec<&str> = listed.iter().filter_map(|e| e["received_at"].as_str()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first: {times:?}");

    // A sharded e-mail reads, and deletes, like any other.
    let one = made.iter().find(|id| id.contains("_s")).unwrap();
    assert_eq!(send(h.api("GET", &format!("/emails/{one}"))).await.status, 200);
    assert_eq!(send(h.api("DELETE", &format!("/emails/{one}"))).await.status, 200);
    assert_eq!(send(h.api("GET", &format!("/emails/{one}"))).await.status, 404);

    // The audit trail, over its shards too: every record once, newest first.
    let audit = all_pages(&h, "/audit", 3).await;
    assert!(!audit.is_empty());
    let audit_ids: Vec<&str> = audit.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(audit_ids.iter().collect::<BTreeSet<_>>().len(), audit_ids.len(), "{audit_ids:?}");
    let plain: Vec<String> = audit_ids.iter().map(|id| id.split("_s").next().unwrap_or(id).to_owned()).collect();
    assert!(plain.windows(2).all(|w| w[0] >= w[1]), "newest first: {audit_ids:?}");
    assert!(audit_ids.iter().any(|id| id.contains("_s")), "{audit_ids:?}");
}

#[tokio::test]
async fn a_cursor_from_before_a_change_of_shards_goes_on_where_it_was() {
    let h = Harness::new();
    let store = h.app().await.store.clone();
    let (org, ws) = ids();
    let one = inbox::domain::Tenant::new(org.clone(), ws.clone(), inbox::domain::Role::Admin);
    let filter = inbox::store::EmailFilter::default();
    let whole = store.list_emails(&one, &filter, 50, None).await.expect("list");
    let first = store.list_emails(&one, &filter, 2, None).await.expect("first page");
    let position = first.next.expect("a second page");
    // Now the workspace has four shards; the old position is a position in shard 0.
    let four = inbox::domain::Tenant { shards: inbox::domain::Shards { count: 4, previous: 1, changed_at: 0 }, ..one };
    let rest = store.list_emails(&four, &filter, 50, Some(position)).await.expect("the rest");
    let ids = |emails: &[inbox::domain::records::Email]| emails.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
    let mut walked = ids(&first.items);
    walked.extend(ids(&rest.items));
    assert_eq!(walked, ids(&whole.items), "nothing skipped or repeated");
    // A position from another list is refused.
    let foreign = inbox::store::items::Position::from([("pk".to_owned(), "T#org_other#W#ws_other".to_owned())]);
    assert!(matches!(
        store.list_emails(&four, &filter, 2, Some(foreign)).await,
        Err(inbox::store::StoreError::InvalidPosition)
    ));
}

#[tokio::test]
async fn the_count_only_grows_and_a_raised_count_is_written_after_its_delay() {
    let h = Harness::new();
    let store = h.app().await.store.clone();
    let (org, ws) = ids();
    let now = 1_800_000_000;
    let raised = store.set_write_shards(&org, &ws, 8, now).await.expect("raise");
    assert_eq!((raised.count, raised.previous, raised.changed_at), (8, 1, now));
    assert_eq!(raised.write_count(now), 1, "not written at once");
    assert_eq!(raised.write_count(now + inbox::domain::Shards::WRITE_DELAY_SECS), 8);
    let stored = store.org_workspaces(&org).await.expect("org").shards[&ws];
    assert_eq!(stored, raised, "what every request now reads");
    for refused in [4, 0, 257] {
        assert!(
            matches!(store.set_write_shards(&org, &ws, refused, now).await, Err(inbox::store::StoreError::Conflict)),
            "{refused}"
        );
    }
    let nowhere = inbox::domain::WorkspaceId::parse("ws_nowhere").unwrap();
    assert!(matches!(store.set_write_shards(&org, &nowhere, 8, now).await, Err(inbox::store::StoreError::NotFound)));
    assert_eq!(store.org_workspaces(&org).await.expect("org").shards[&ws], raised, "unchanged by the refusals");
}

#[tokio::test]
async fn an_idempotency_key_used_before_a_change_of_shards_still_replays_after_it() {
    let h = uncached();
    let (org, ws) = ids();
    let mut first = Vec::new();
    for i in 0..8 {
        let resp = send(
            ingest(&h, "inb_bills", &mail("contas@energia.example.com")).header("idempotency-key", &format!("k-{i}")),
        )
        .await;
        first.push(ingested(&resp).0);
    }
    // Raised a little over the write delay ago: new keys go to the new shards,
    // and these are still found where one shard put them.
    let changed = inbox::sys::unix_now() - inbox::domain::Shards::WRITE_DELAY_SECS - 1;
    h.app().await.store.set_write_shards(&org, &ws, 8, changed).await.expect("shards");
    for (i, email) in first.iter().enumerate() {
        let resp = send(
            ingest(&h, "inb_bills", &mail("contas@energia.example.com")).header("idempotency-key", &format!("k-{i}")),
        )
        .await;
        assert_eq!(resp.status, 202, "{}", resp.json());
        assert_eq!(resp.json()["data"]["email"]["id"].as_str(), Some(email.as_str()), "the same answer, replayed");
    }
}

#[tokio::test]
async fn filtered_lists_and_a_webhooks_deliveries_page_across_shards_without_gaps() {
    let h = Harness::new();
    let (org, ws) = ids();
    h.app().await.store.set_write_shards(&org, &ws, 8, 0).await.expect("shards");
    let receiver = crate::jobs_and_webhooks::Receiver::start().await;
    let resp = send(h.api("PUT", "/webhooks").json(&serde_json::json!({"url": receiver.url()}))).await;
    assert_eq!(resp.status, 201, "{}", resp.json());
    let webhook = resp.json()["data"]["id"].as_str().unwrap().to_owned();
    let mut processed = BTreeSet::new();
    for i in 0..12 {
        let mut body = mail("contas@energia.example.com");
        body["received_at"] = Value::from(format!("2026-11-29T09:{i:02}:00Z"));
        let (id, _, job) = ingested(&send(ingest(&h, "inb_bills", &body)).await);
        // Every other one is processed (and delivered); the rest stay received.
        if i % 2 == 0 {
            crate::jobs_and_webhooks::run_job(&h, &job).await;
            processed.insert(id);
        }
    }
    let listed = all_pages(&h, "/emails?status=processed&inbox_id=inb_bills", 2).await;
    let ids: Vec<String> = listed.iter().filter_map(|e| e["id"].as_str().map(str::to_owned)).collect();
    assert!(listed.iter().all(|e| e["status"] == "processed"), "{listed:?}");
    let mine: BTreeSet<String> = ids.iter().filter(|id| processed.contains(*id)).cloned().collect();
    assert_eq!(mine, processed, "every processed e-mail of this test, once");
    assert_eq!(ids.iter().collect::<BTreeSet<_>>().len(), ids.len(), "none twice: {ids:?}");
    let times: Vec<&str> = listed.iter().filter_map(|e| e["received_at"].as_str()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first: {times:?}");

    let deliveries = all_pages(&h, &format!("/webhooks/{webhook}/deliveries"), 2).await;
    assert_eq!(deliveries.len(), processed.len(), "one delivery per processed e-mail: {deliveries:?}");
    let delivery_ids: BTreeSet<&str> = deliveries.iter().filter_map(|d| d["id"].as_str()).collect();
    assert_eq!(delivery_ids.len(), deliveries.len());
    let created: Vec<&str> = deliveries.iter().filter_map(|d| d["created_at"].as_str()).collect();
    assert!(created.windows(2).all(|w| w[0] >= w[1]), "newest first: {created:?}");
    // Each delivery reads back by its id, wherever its shard.
    for id in delivery_ids {
        assert_eq!(send(h.api("GET", &format!("/webhook_deliveries/{id}"))).await.status, 200, "{id}");
    }
}

#[tokio::test]
async fn a_reprocess_replayed_by_its_idempotency_key_after_raises_one_to_four_to_sixteen_runs_nothing_again() {
    let h = uncached();
    let path = "/emails/eml_energy_nov/reprocess";
    // Four keys, each a reprocess run to its end under one shard: every
    // record is in shard 0, where four shards put one key in four.
    let mut first = Vec::new();
    for i in 0..4 {
        let resp = send(h.api("POST", path).header("idempotency-key", &format!("reprocess-{i}"))).await;
        let job = accepted_job(&resp, "email.reprocess");
        run_job(&h, job["id"].as_str().unwrap()).await;
        first.push(resp.json());
    }
    let jobs = |dump: &[String]| dump.iter().filter(|i| i.contains("\"JOB#")).count();
    let jobs_before = jobs(&crate::common::table_dump(&h.table).await);

    let (refused, grace_ends) = raise_twice_within_a_day(&h).await;
    for (i, answer) in first.iter().enumerate() {
        let resp = send(h.api("POST", path).header("idempotency-key", &format!("reprocess-{i}"))).await;
        assert_eq!((resp.status, &resp.json()), (202, answer), "reprocess-{i}: the first run's answer");
    }
    assert_eq!(jobs(&crate::common::table_dump(&h.table).await), jobs_before, "no job enqueued again");
    let runs: Vec<Value> = all_pages(&h, "/audit", 50)
        .await
        .into_iter()
        .filter(|r| r["operation"] == "email_reprocess" && r["changed"] == true)
        .collect();
    assert_eq!(runs.len(), 4, "one changing reprocess per key in the trail: {runs:?}");

    assert!(
        matches!(refused, Err(inbox::store::StoreError::ShardsRaisedRecently { from }) if from == grace_ends),
        "{refused:?}"
    );
    let (org, ws) = ids();
    assert_eq!(h.app().await.store.org_workspaces(&org).await.expect("org").shards[&ws].count, 4, "still four");
}

#[tokio::test]
async fn a_confirmation_used_before_raises_one_to_four_to_sixteen_cannot_be_used_again_after_them() {
    let h = uncached();
    let args = serde_json::json!({"id": "whk_demo"});
    // Six confirmations, each used once under one shard: their markers are
    // in shard 0 (their nonces are random; four shards put one in four there).
    let mut used = Vec::new();
    for i in 0..6 {
        let state = ask(&h, 10 * i, "webhooks_rotate_secret", &args, "whk_demo").await;
        let resp = mcp(retry(&h, 10 * i + 1, "webhooks_rotate_secret", &args, &state, accept())).await;
        tool_result(&resp, 10 * i + 1, false);
        used.push(state);
    }
    let rotated = get(&h, "/webhooks/whk_demo").await;

    let _ = raise_twice_within_a_day(&h).await;
    for (i, state) in (100..).zip(&used) {
        let resp = mcp(retry(&h, i, "webhooks_rotate_secret", &args, state, accept())).await;
        resp.assert_error(200, -32602, serde_json::json!(i));
    }
    assert_eq!(get(&h, "/webhooks/whk_demo").await, rotated, "the secret was not rotated again");
}

#[tokio::test]
async fn the_admin_command_refuses_a_second_raise_within_a_day_with_shards_raised_recently() {
    let h = Harness::new();
    let (org, ws) = ids();
    let store = h.app().await.store.clone();
    let (code, out, err) =
        crate::tenancy_admin::cli(&h, "workspace shards --org org_demo --workspace ws_main --count 4");
    assert_eq!(code, 0, "{out} {err}");
    let raised = store.org_workspaces(&org).await.expect("org").shards[&ws];
    assert_eq!((raised.count, raised.previous), (4, 1));

    let (code, out, err) =
        crate::tenancy_admin::cli(&h, "workspace shards --org org_demo --workspace ws_main --count 16");
    assert_eq!(code, 3, "refused by the operation: {out} {err}");
    assert!(err.starts_with("shards_raised_recently: "), "{err}");
    let from = raised.changed_at + inbox::domain::Shards::KEYED_GRACE_SECS;
    assert!(err.contains(&format!("from {from} ")), "says when: {err}");
    assert_eq!(store.org_workspaces(&org).await.expect("org").shards[&ws], raised, "unchanged");
    // The count it has is no raise: answered as it is.
    let (code, out, err) =
        crate::tenancy_admin::cli(&h, "workspace shards --org org_demo --workspace ws_main --count 4");
    assert_eq!(code, 0, "{out} {err}");
    // Once the grace has passed, the raise is made.
    assert_eq!(store.set_write_shards(&org, &ws, 16, from).await.expect("after the grace").count, 16);
}
