//! The capacity model, measured, and the hot-key simulation.
//!
//! Every DynamoDB request of the busy path — an ingestion (REST, as the
//! mail pipeline, with an `Idempotency-Key`), its job run by the worker
//! (extraction, write-back, a signed delivery to a webhook, audit), and the
//! customer reading it back (a get, and a list every tenth) — is recorded
//! (`inbox::store::capacity`) and turned into read and write units per
//! partition key value with DynamoDB's rules:
//!
//! - an item's size is the sum of its attribute names and values (strings
//!   in UTF-8 bytes, numbers about one byte per two digits plus one, maps
//!   and lists three bytes plus their elements);
//! - a write costs one unit per KB of the larger of the old and new item,
//!   twice inside a transaction (a condition check too); every write that
//!   touches an index entry (put on the new key, delete from an old one)
//!   costs the same on the index partition;
//! - a read costs one unit per 4 KB (half for an eventually consistent one);
//!   a query sums the items it reads.
//!
//! Then a model of DynamoDB's per-key limits (1,000 write and 3,000 read
//! units per second per partition key value, table and index alike) is driven
//! with those units: 10,000 organizations with Zipf-distributed load (s = 1),
//! the busiest ingesting 2,000 e-mails per second. Keys that begin with the
//! tenant carry their own organization's load; any other key carries every
//! organization's. A workspace's write-heavy records (e-mails, jobs,
//! deliveries, audit, idempotency and single-use markers) spread over its N
//! write shards: the model gives each organization the smallest N (a power of
//! two, at most `MAX_SHARDS`) that keeps its hottest key under half its
//! limit (a principal's rate-limit counters each take their even share of its
//! requests), and fails when none does, or when any key is shared by every
//! organization. Writes `.local/capacity.json` (what `scripts/capacity.py`
//! turns into docs/capacity.md).

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use crate::common::{Harness, send};
use crate::jobs_and_webhooks::{Receiver, ingest, ingested, mail, run_job};

/// DynamoDB's per-partition-key limits, per second.
const WRITE_LIMIT: f64 = 1000.0;
const READ_LIMIT: f64 = 3000.0;
/// The share of a limit the busiest key may use.
const HEADROOM: f64 = 0.5;
const ORGANIZATIONS: usize = 10_000;
const BUSIEST_RATE: f64 = 2000.0;
/// The most write shards a workspace may be given.
const MAX_SHARDS: u32 = 256;
/// The shards the measured workspace has (the model scales to any N).
const MEASURED_SHARDS: u16 = 16;
/// Ingestions measured.
const SAMPLES: usize = 24;

/// Sort-key prefixes of a workspace's write-heavy records: the ones its
/// write shards spread.
/// (`CPY#` and `IDX#`: what an e-mail's erasure reads, in the e-mail's shard.)
const SHARDED_RECORDS: [&str; 8] = ["EML#", "JOB#", "DLV#", "AUD#", "IDEM#", "ONCE#", "CPY#", "IDX#"];
/// Index partitions that list write-heavy records.
const SHARDED_LISTS: [&str; 2] = ["#EML", "#DLV"];

/// DynamoDB's size of an attribute value (DynamoDB JSON).
fn value_size(value: &Value) -> usize {
    let Some((kind, inner)) = value.as_object().and_then(|o| o.iter().next()) else { return 0 };
    match (kind.as_str(), inner) {
        ("S", Value::String(s)) => s.len(),
        ("N", Value::String(n)) => n.chars().filter(char::is_ascii_digit).count().div_ceil(2) + 1,
        ("B", Value::String(b)) => b.len() * 3 / 4,
        ("SS" | "NS", Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::len).sum(),
        ("L", Value::Array(items)) => 3 + items.iter().map(|v| value_size(v) + 1).sum::<usize>(),
        ("M", Value::Object(map)) => 3 + map.iter().map(|(k, v)| k.len() + value_size(v) + 1).sum::<usize>(),
        _ => 1,
    }
}

fn item_size(item: &Value) -> usize {
    item.as_object().map_or(0, |map| map.iter().map(|(k, v)| k.len() + value_size(v)).sum())
}

fn text<'a>(item: &'a Value, attribute: &str) -> Option<&'a str> {
    item.get(attribute).and_then(|v| v.get("S")).and_then(Value::as_str)
}

type Dump = HashMap<(String, String), Value>;

async fn dump(table: &str) -> Dump {
    let client = crate::common::dynamodb_client();
    let mut items = Dump::new();
    let mut start = None;
    loop {
        let out = client.scan().table_name(table).set_exclusive_start_key(start).send().await.expect("scan");
        for item in out.items.unwrap_or_default() {
            let value: Value = serde_json::from_str(&inbox::store::snapshot::item_line(&item)).expect("item json");
            let key =
                (text(&value, "pk").unwrap_or_default().to_owned(), text(&value, "sk").unwrap_or_default().to_owned());
            items.insert(key, value);
        }
        match out.last_evaluated_key {
            Some(key) if !key.is_empty() => start = Some(key),
            _ => return items,
        }
    }
}

/// Units on one partition key value: written and read, fixed and sharded.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
struct Load {
    write: f64,
    read: f64,
    /// The part of `write` (and `read`) the workspace's write shards spread.
    sharded_write: f64,
    sharded_read: f64,
}

/// Units per key class (`class`).
type Units = BTreeMap<String, Load>;

/// The rate budget both principals get here (people's and the mail
/// pipeline's), so that the modelled traffic is never refused.
const RATE_BUDGET: u32 = 1_000_000;

/// Units per key class: `table T#…` or `gsi1 …`, with a shard number
/// (`#S{n}`) taken out, so the shards of one partition are one class, and
/// a budget's rate-limit counters (`T#{org}#RL#{sub}#{n}`, `T#{org}#RLI#{sub}#{n}`) one class too.
fn class(index: &str, key: &str) -> String {
    let mut unsharded: Vec<&str> = key
        .split('#')
        .filter(|part| !(part.len() > 1 && part.starts_with('S') && part[1..].bytes().all(|b| b.is_ascii_digit())))
        .collect();
    if unsharded.len() == 5 && is_rate_limit(unsharded[2]) && unsharded[4].bytes().all(|b| b.is_ascii_digit()) {
        unsharded.truncate(4);
    }
    format!("{index} {}", unsharded.join("#"))
}

/// A rate-limit budget's key kind: a person's (`RL`) or a registered
/// pipeline's ingestion (`RLI`).
fn is_rate_limit(kind: &str) -> bool {
    kind == "RL" || kind == "RLI"
}

/// The keys one class's load spreads over whatever the write shards: a
/// budget's rate-limit counters. Each request counts on one counter drawn at
/// random (`store::rate_limit`), so each carries an even share; the model
/// takes that share, not how one short run's few draws happened to fall.
fn counters(class: &str) -> f64 {
    if class.split('#').any(is_rate_limit) {
        f64::from(RATE_BUDGET.div_ceil(inbox::store::rate_limit::PER_COUNTER))
    } else {
        1.0
    }
}

fn add(units: &mut Units, index: &str, key: &str, write: f64, read: f64, sharded: bool) {
    let load = units.entry(class(index, key)).or_default();
    load.write += write;
    load.read += read;
    if sharded {
        load.sharded_write += write;
        load.sharded_read += read;
    }
}

fn kb(size: usize) -> f64 {
    size.max(1).div_ceil(1024) as f64
}

fn is_sharded_record(sk: &str) -> bool {
    SHARDED_RECORDS.iter().any(|p| sk.starts_with(p))
}

fn is_sharded_list(gsi: &str) -> bool {
    SHARDED_LISTS.iter().any(|suffix| gsi.ends_with(suffix)) || gsi.contains("#DLV")
}

/// One write of `key` (old image in `before`, new image `new` or in `after`).
fn write(units: &mut Units, key: (String, String), new: Option<&Value>, before: &Dump, after: &Dump, factor: f64) {
    let old = before.get(&key);
    let new = new.or_else(|| after.get(&key));
    let size = old.map_or(0, item_size).max(new.map_or(0, item_size));
    let sharded = is_sharded_record(&key.1);
    add(units, "table", &key.0, kb(size) * factor, 0.0, sharded);
    let (old_gsi, new_gsi) = (old.and_then(|i| text(i, "gsi1pk")), new.and_then(|i| text(i, "gsi1pk")));
    if let Some(g) = new_gsi {
        add(units, "gsi1", g, kb(new.map_or(0, item_size)) * factor, 0.0, is_sharded_list(g));
    }
    if let Some(g) = old_gsi.filter(|g| Some(*g) != new_gsi) {
        add(units, "gsi1", g, kb(old.map_or(0, item_size)) * factor, 0.0, is_sharded_list(g));
    }
}

fn key_of(value: &Value) -> (String, String) {
    (text(value, "pk").unwrap_or_default().to_owned(), text(value, "sk").unwrap_or_default().to_owned())
}

/// The units of `calls` on `table`, between the dumps before and after them.
fn units_of(calls: &[inbox::store::capacity::Call], table: &str, before: &Dump, after: &Dump) -> Units {
    let mut units = Units::new();
    for call in calls {
        let body = &call.body;
        let mine = |b: &Value| b.get("TableName").and_then(Value::as_str) == Some(table);
        match call.operation.as_str() {
            "PutItem" if mine(body) => {
                write(&mut units, key_of(&body["Item"]), Some(&body["Item"]), before, after, 1.0)
            }
            "UpdateItem" | "DeleteItem" if mine(body) => {
                write(&mut units, key_of(&body["Key"]), None, before, after, 1.0)
            }
            "TransactWriteItems" => {
                for entry in body["TransactItems"].as_array().into_iter().flatten() {
                    for (kind, part) in entry.as_object().into_iter().flatten() {
                        if !mine(part) {
                            continue;
                        }
                        match kind.as_str() {
                            "Put" => write(&mut units, key_of(&part["Item"]), Some(&part["Item"]), before, after, 2.0),
                            _ => write(&mut units, key_of(&part["Key"]), None, before, after, 2.0),
                        }
                    }
                }
            }
            "GetItem" if mine(body) => {
                let key = key_of(&body["Key"]);
                let consistent = body["ConsistentRead"].as_bool() == Some(true);
                let size = before.get(&key).map_or(1, item_size);
                let read = size.div_ceil(4096).max(1) as f64 * if consistent { 1.0 } else { 0.5 };
                add(&mut units, "table", &key.0, 0.0, read, is_sharded_record(&key.1));
            }
            "Query" if mine(body) => {
                let condition = body["KeyConditionExpression"].as_str().unwrap_or_default();
                let (name, value) =
                    condition.split(" AND ").next().and_then(|c| c.split_once(" = ")).unwrap_or_default();
                let attribute = body["ExpressionAttributeNames"][name.trim()].as_str().unwrap_or(name.trim());
                let partition = text(&body["ExpressionAttributeValues"], value.trim()).unwrap_or_default();
                let index = if body.get("IndexName").is_some() { "gsi1" } else { "table" };
                let prefix = text(&body["ExpressionAttributeValues"], ":prefix").unwrap_or("");
                let limit = body["Limit"].as_u64().map_or(usize::MAX, |l| l as usize);
                let mut sizes: Vec<usize> = after
                    .values()
                    .filter(|item| text(item, attribute) == Some(partition))
                    .filter(|item| text(item, "sk").is_some_and(|sk| index == "gsi1" || sk.starts_with(prefix)))
                    .map(item_size)
                    .collect();
                sizes.truncate(limit);
                let consistent = body["ConsistentRead"].as_bool() == Some(true);
                let read =
                    sizes.iter().sum::<usize>().div_ceil(4096).max(1) as f64 * if consistent { 1.0 } else { 0.5 };
                let sharded = if index == "gsi1" { is_sharded_list(partition) } else { is_sharded_record(prefix) };
                add(&mut units, index, partition, 0.0, read, sharded);
            }
            _ => {}
        }
    }
    units
}

fn scaled(units: &Units, by: f64) -> Units {
    units
        .iter()
        .map(|(k, l)| {
            (
                k.clone(),
                Load {
                    write: l.write * by,
                    read: l.read * by,
                    sharded_write: l.sharded_write * by,
                    sharded_read: l.sharded_read * by,
                },
            )
        })
        .collect()
}

fn merged(into: &mut Units, from: &Units) {
    for (k, l) in from {
        let load = into.entry(k.clone()).or_default();
        load.write += l.write;
        load.read += l.read;
        load.sharded_write += l.sharded_write;
        load.sharded_read += l.sharded_read;
    }
}

/// Runs `step`, recording its DynamoDB requests: their units.
async fn measured<F: std::future::Future<Output = ()>>(h: &Harness, step: F) -> Units {
    let before = dump(&h.table).await;
    inbox::store::capacity::take(&h.table);
    step.await;
    let calls = inbox::store::capacity::take(&h.table);
    if std::env::var_os("CAPACITY_DEBUG").is_some() {
        for call in &calls {
            eprintln!("{} {}", call.operation, call.body.to_string().chars().take(300).collect::<String>());
        }
        eprintln!("--");
    }
    let after = dump(&h.table).await;
    units_of(&calls, &h.table, &before, &after)
}

/// The hottest key of one organization at `rate` ingestions per second
/// with `shards` write shards: its class, and its share of its limit.
fn hottest(per_ingestion: &Units, rate: f64, shards: u32) -> (String, f64) {
    let mut worst = (String::new(), 0.0);
    for (class, load) in per_ingestion.iter().filter(|(c, _)| c.split(' ').nth(1).is_some_and(|k| k.starts_with("T#")))
    {
        let (spread, keys) = (f64::from(shards), counters(class));
        let write = (load.write - load.sharded_write + load.sharded_write / spread) / keys * rate / WRITE_LIMIT;
        let read = (load.read - load.sharded_read + load.sharded_read / spread) / keys * rate / READ_LIMIT;
        let share = write.max(read);
        if share > worst.1 {
            worst = (class.clone(), share);
        }
    }
    worst
}

#[tokio::test]
async fn no_key_of_the_table_or_its_index_goes_over_half_its_limit_at_internet_scale() {
    let h = Harness::with_config(|config| {
        config.rate_limit_per_minute = RATE_BUDGET;
        config.ingest_rate_limit_per_minute = RATE_BUDGET;
        // The measurement runs far slower than the modelled traffic: cached
        // reads are kept for all of it, as they are between two requests a
        // millisecond apart (a container refreshes them every few seconds:
        // docs/capacity.md counts that separately).
        config.store.cache_secs = 3600;
    });
    let app = h.app().await;
    // The measured workspace spreads its write-heavy records over its shards.
    let org = inbox::domain::OrgId::parse("org_demo").expect("org");
    let ws = inbox::domain::WorkspaceId::parse("ws_main").expect("ws");
    app.store.set_write_shards(&org, &ws, MEASURED_SHARDS, 0).await.expect("shards");
    let receiver = Receiver::start().await;
    // One webhook, a local receiver; the demo one is disabled (no outside calls).
    let resp =
        send(h.api("PUT", "/webhooks").json(&json!({"url": "https://hooks.example.com/kobana", "status": "disabled"})))
            .await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    let resp = send(h.api("PUT", "/webhooks").json(&json!({"url": receiver.url()}))).await;
    assert_eq!(resp.status, 201, "{}", resp.json());

    // A first ingestion warms the container's caches, as a busy one is.
    let resp = send(ingest(&h, "inb_bills", &mail("contas@energia.example.com"))).await;
    let (_, _, warm_job) = ingested(&resp);
    run_job(&h, &warm_job).await;
    inbox::store::capacity::start();
    let (mut ingestion, mut processing, mut reading, mut listing) =
        (Units::new(), Units::new(), Units::new(), Units::new());
    for i in 0..SAMPLES {
        let mut email = String::new();
        let mut job = String::new();
        merged(
            &mut ingestion,
            &measured(&h, async {
                let resp = send(
                    ingest(&h, "inb_bills", &mail("contas@energia.example.com"))
                        .header("idempotency-key", &format!("mail-{i}")),
                )
                .await;
                let (id, _, job_id) = ingested(&resp);
                (email, job) = (id, job_id);
            })
            .await,
        );
        merged(
            &mut processing,
            &measured(&h, async {
                run_job(&h, &job).await;
            })
            .await,
        );
        merged(
            &mut reading,
            &measured(&h, async {
                let resp = send(h.api("GET", &format!("/emails/{email}"))).await;
                assert_eq!(resp.status, 200, "{}", resp.json());
            })
            .await,
        );
        if i % 10 == 0 {
            merged(
                &mut listing,
                &measured(&h, async {
                    let resp = send(h.api("GET", "/emails?limit=20")).await;
                    assert_eq!(resp.status, 200, "{}", resp.json());
                })
                .await,
            );
        }
    }
    inbox::store::capacity::stop();
    assert!(receiver.hits().len() >= SAMPLES, "every ingestion delivered: {}", receiver.hits().len());

    let n = SAMPLES as f64;
    let (ingestion, processing, reading) =
        (scaled(&ingestion, 1.0 / n), scaled(&processing, 1.0 / n), scaled(&reading, 1.0 / n));
    let listing = scaled(&listing, 1.0 / SAMPLES.div_ceil(10) as f64);
    // One ingestion: the call, its job, a read of it, a tenth of a list.
    let mut per_ingestion = Units::new();
    for part in [&ingestion, &processing, &reading, &scaled(&listing, 0.1)] {
        merged(&mut per_ingestion, part);
    }

    // Zipf over the organizations: rate of rank r = BUSIEST_RATE / r.
    let rates: Vec<f64> = (1..=ORGANIZATIONS).map(|r| BUSIEST_RATE / r as f64).collect();
    let total: f64 = rates.iter().sum();
    let shared: Vec<(&String, f64)> = per_ingestion
        .iter()
        .filter(|(c, _)| !c.split(' ').nth(1).is_some_and(|k| k.starts_with("T#")))
        .map(|(c, l)| (c, (l.write * total / WRITE_LIMIT).max(l.read * total / READ_LIMIT)))
        .collect();
    let mut shards_needed = Vec::new();
    for rate in &rates {
        let needed =
            (0..=MAX_SHARDS.ilog2()).map(|p| 1u32 << p).find(|&s| hottest(&per_ingestion, *rate, s).1 < HEADROOM);
        shards_needed.push(needed);
    }
    let busiest_shards = shards_needed[0].unwrap_or(MAX_SHARDS);
    let (busiest_key, busiest_share) = hottest(&per_ingestion, BUSIEST_RATE, busiest_shards);
    let (unsharded_key, unsharded_share) = hottest(&per_ingestion, BUSIEST_RATE, 1);
    let by_rank: Vec<Value> = [1usize, 2, 3, 10, 100, 1000]
        .iter()
        .map(|&r| json!({"rank": r, "rate": rates[r - 1], "shards": shards_needed[r - 1]}))
        .collect();
    let report = json!({
        "organizations": ORGANIZATIONS,
        "busiest_rate_per_s": BUSIEST_RATE,
        "service_rate_per_s": total,
        "per_ingestion_units": per_ingestion,
        "operations": {"ingest": ingestion, "process": processing, "get": reading, "list": listing},
        "busiest": {"shards": busiest_shards, "hottest_key": busiest_key, "share_of_limit": busiest_share},
        "busiest_with_one_shard": {"hottest_key": unsharded_key, "share_of_limit": unsharded_share},
        "shards_by_rank": by_rank,
        "shared_keys": shared.iter().map(|(c, s)| json!({"key": c, "share_of_limit": s})).collect::<Vec<_>>(),
    });
    std::fs::create_dir_all(".local").ok();
    std::fs::write(".local/capacity.json", serde_json::to_string_pretty(&report).unwrap_or_default()).ok();
    println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());

    assert!(shared.iter().all(|(_, share)| *share == 0.0), "keys every organization shares: {shared:?}");
    assert!(
        shards_needed.iter().all(Option::is_some),
        "an organization no shard count keeps under half its limits: {report}"
    );
    assert!(busiest_share < HEADROOM, "{report}");
}

/// What one recorded event (a REST route or an MCP method or tool, as API
/// Gateway sends it) costs in DynamoDB: its requests, and its read and write
/// units, table and index together. Written to `.local/capacity-events.json`
/// for `scripts/capacity.py` (docs/capacity.md's cost of a million calls).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_recorded_event_is_measured_in_read_and_write_units() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("events");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("events/")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".json") && !n.ends_with(".expected.json") && !n.starts_with("worker-"))
        .collect();
    names.sort();
    inbox::store::capacity::start();
    // Side by side: each replay has a table of its own, and takes its own requests.
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(8));
    let mut tasks = tokio::task::JoinSet::new();
    for name in names {
        let (dir, permits) = (dir.clone(), std::sync::Arc::clone(&permits));
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.expect("semaphore open");
            let h = crate::events_replay::replay_harness();
            let event = crate::events_replay::fill(&std::fs::read_to_string(dir.join(&name)).expect("event"), &h);
            let app = h.app().await;
            let before = dump(&h.table).await;
            inbox::store::capacity::take(&h.table);
            let answer = crate::events_replay::invoke(app, &event).await;
            // The rate-limit count of a read runs beside it and may land after
            // the answer: it is left out here (one write unit per counted call,
            // docs/capacity.md), so the figures do not depend on timing.
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            let calls: Vec<_> = inbox::store::capacity::take(&h.table)
                .into_iter()
                .filter(|c| !c.body.to_string().split('#').any(is_rate_limit))
                .collect();
            let after = dump(&h.table).await;
            let units = units_of(&calls, &h.table, &before, &after);
            let (write, read) = units.values().fold((0.0, 0.0), |(w, r), l| (w + l.write, r + l.read));
            let _ = crate::common::dynamodb_client().delete_table().table_name(&h.table).send().await;
            let measured = json!({"status": answer["statusCode"], "requests": calls.len(), "write_units": write, "read_units": read});
            (name.trim_end_matches(".json").to_owned(), measured)
        });
    }
    let mut measured = BTreeMap::new();
    while let Some(done) = tasks.join_next().await {
        let (name, value) = done.expect("a measurement");
        measured.insert(name, value);
    }
    inbox::store::capacity::stop();
    assert!(measured.len() >= 60, "the recorded events: {}", measured.len());
    // A call that reads or changes a record costs something; a refused one may cost nothing.
    let ingest = &measured["rest-ingest-email"];
    assert!(ingest["write_units"].as_f64().unwrap_or(0.0) >= 4.0, "{ingest}");
    std::fs::create_dir_all(".local").ok();
    let text = serde_json::to_string_pretty(&Value::from(serde_json::Map::from_iter(measured))).unwrap_or_default();
    std::fs::write(".local/capacity-events.json", text).expect("write .local/capacity-events.json");
}
