//! A workspace's write shards (`inbox::domain::shards`): records spread over
//! partitions that all begin with the tenant, lists read every shard and
//! merge newest first with cursors that span shards, records made before
//! (shard 0) stay where they are, keyed records are found across a change,
//! and the count only grows.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::{Harness, send};
use crate::jobs_and_webhooks::{ingest, ingested, mail};

fn ids() -> (inbox::domain::OrgId, inbox::domain::WorkspaceId) {
    (inbox::domain::OrgId::parse("org_demo").unwrap(), inbox::domain::WorkspaceId::parse("ws_main").unwrap())
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
    let h = Harness::new();
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
