//! Property tests (issue 15), on stable in `make test`: rules checked over
//! generated inputs, not the few someone thought of. Boleto lines and
//! barcodes round-trip and a single changed digit is refused; cursors open
//! only for the route, filters and workspace they were made for; a path
//! argument, percent-encoded, never reaches another route; a confirmation is
//! bound to its tool, arguments, person and workspace; concurrent upserts of
//! one slug make one record; a client's time is refused or written as itself.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use common::{Harness, send};
use inbox::api::page::page_request;
use inbox::api::{Param, Route, emails, inboxes, senders};
use inbox::domain::boleto::{mod11_bank, parse};
use inbox::domain::clock::{format, parse_instant};
use inbox::domain::{OrgId, Role, Tenant, WorkspaceId};
use inbox::secrets::Secrets;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use proptest::prelude::*;
use serde_json::{Value, json};
use time::macros::date;

fn digits(text: &str) -> Vec<u8> {
    text.bytes().map(|b| b - b'0').collect()
}

fn text(digits: &[u8]) -> String {
    digits.iter().map(|d| char::from(b'0' + d)).collect()
}

/// A valid bank barcode from its fields (the general check digit computed).
pub(crate) fn bank_barcode(bank: u16, factor: u16, amount: u64, free: &[u8]) -> String {
    let body = format!("{bank:03}9{factor:04}{amount:010}{}", text(free));
    let without = digits(&body);
    let dv = mod11_bank(&without);
    format!("{}{dv}{}", &body[..4], &body[4..])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A barcode and the digitable line derived from it validate to the same
    /// slip; any single changed digit of the line is refused, except that the
    /// general check digit (modulo 11, where three remainders all give 1)
    /// cannot see every change of the factor and amount when it is 1.
    #[test]
    fn a_bank_line_round_trips_and_a_changed_digit_is_refused(
        // A leading 8 makes a utility (not bank) barcode.
        bank in prop_oneof![1u16..800, 900u16..1000],
        factor in 1000u16..10000,
        amount in 1u64..10_000_000_000,
        free in proptest::collection::vec(0u8..10, 25),
        at in 0usize..47,
        shift in 1u8..10,
    ) {
        let received = date!(2026 - 12 - 01);
        let barcode = bank_barcode(bank, factor, amount, &free);
        let slip = parse(&barcode, received).expect("a valid barcode");
        prop_assert_eq!(slip.digitable_line.len(), 47);
        let again = parse(&slip.digitable_line, received).expect("its line validates");
        prop_assert_eq!(&again.barcode, &barcode);
        prop_assert_eq!(again.amount_cents, Some(amount));
        prop_assert_eq!(again.due_date, slip.due_date);

        let mut line = digits(&slip.digitable_line);
        line[at] = (line[at] + shift) % 10;
        let changed = parse(&text(&line), received);
        let general_is_one = slip.digitable_line.as_bytes()[32] == b'1';
        prop_assert!(changed.is_err() || (at > 32 && general_is_one), "accepted a change at {}: {:?}", at, changed);
    }

    /// A cursor opens only for the workspace, route and filters it was made for.
    #[test]
    fn a_cursor_is_bound_to_its_workspace_route_and_filters(
        key in "[A-Z#0-9_]{1,24}",
        status in "[a-z]{1,10}",
        other in "[a-z]{1,10}",
        change in 0u8..4,
    ) {
        let secrets = Secrets::new(&["property-signing-secret-0123456789abcdef".to_owned()]);
        let tenant = |ws: &str| Tenant {
            org: OrgId::parse("org_demo").unwrap(),
            workspace: WorkspaceId::parse(ws).unwrap(),
            role: Role::Admin,
            archived: false,
            shards: Default::default(),
            content_policy: Default::default(),
            retention_days: inbox::domain::retention::DEFAULT_DAYS,
        };
        let filters = |value: &str| BTreeMap::from([("status".to_owned(), value.to_owned())]);
        let made = page_request(&secrets, &tenant("ws_main"), "emails", &filters(&status)).unwrap();
        let position: HashMap<String, String> = HashMap::from([("sk".to_owned(), key.clone())]);
        let cursor = made.next_cursor(&secrets, &tenant("ws_main"), Some(position.clone()));
        let cursor = cursor.as_str().unwrap().to_owned();
        let with = |mut params: BTreeMap<String, String>| {
            params.insert("cursor".into(), cursor.clone());
            params
        };
        let same = page_request(&secrets, &tenant("ws_main"), "emails", &with(filters(&status))).unwrap();
        prop_assert_eq!(same.start, Some(position));
        let refused = match change {
            0 => page_request(&secrets, &tenant("ws_ops"), "emails", &with(filters(&status))),
            1 => page_request(&secrets, &tenant("ws_main"), "webhooks", &with(filters(&status))),
            2 if other != status => page_request(&secrets, &tenant("ws_main"), "emails", &with(filters(&other))),
            _ => page_request(&secrets, &tenant("ws_main"), "emails", &with(BTreeMap::new())),
        };
        let code = refused.err().map(|e| e.body()["error"]["code"].clone());
        prop_assert_eq!(code, Some(json!("invalid_cursor")));
    }

    /// A path argument, percent-encoded as a client does, stays in its
    /// segment: whatever it contains (`/`, `..`, `?`, `%`), it is that
    /// route's parameter and never another route.
    #[test]
    fn an_encoded_path_argument_never_reaches_another_route(id in "\\PC{1,24}", sender in "\\PC{1,24}") {
        let enc = |s: &str| utf8_percent_encode(s, NON_ALPHANUMERIC).to_string();
        let route = Route::parse("GET", &format!("/inboxes/{}", enc(&id))).unwrap();
        prop_assert_eq!(route, Route::new(&inboxes::GET).with(Param::Id, id.clone()).unwrap());
        let route = Route::parse("DELETE", &format!("/inboxes/{}/senders/{}", enc(&id), enc(&sender))).unwrap();
        let remove = Route::new(&senders::REMOVE).with(Param::Id, id.clone()).unwrap();
        prop_assert_eq!(route, remove.with(Param::Sender, sender).unwrap());
        let route = Route::parse("POST", &format!("/emails/{}/reprocess", enc(&id))).unwrap();
        prop_assert_eq!(route, Route::new(&emails::REPROCESS).with(Param::Id, id).unwrap());
    }

    /// Any RFC 3339 time or date a client sends as a filter bound or a
    /// `received_at` is either refused or written in the fixed sortable form,
    /// which reads back as the same instant; never a panic (one once was, for
    /// a time whose UTC year is 10000).
    #[test]
    fn a_time_from_a_client_is_refused_or_written_fixed_width_as_the_same_instant(
        // The edges of the four-digit years most of all, where an offset
        // moves the UTC time out of them.
        year in prop_oneof![Just(0u32), Just(9999u32), 0u32..=9999],
        month in prop_oneof![Just(1u32), Just(12u32), 0u32..=13],
        day in prop_oneof![Just(1u32), Just(31u32), 0u32..=32],
        (hour, minute, second) in (0u32..=24, 0u32..=60, 0u32..=60),
        fraction in proptest::option::of("[0-9]{1,9}"),
        offset in proptest::option::of((prop_oneof![Just('+'), Just('-')], 0u32..=23, 0u32..=59)),
        date_only in proptest::bool::weighted(0.1),
    ) {
        let mut text = format!("{year:04}-{month:02}-{day:02}");
        if !date_only {
            text.push_str(&format!("T{hour:02}:{minute:02}:{second:02}"));
            if let Some(fraction) = &fraction {
                text.push_str(&format!(".{fraction}"));
            }
            match offset {
                Some((sign, h, m)) => text.push_str(&format!("{sign}{h:02}:{m:02}")),
                None => text.push('Z'),
            }
        }
        if let Some(instant) = parse_instant(&text) {
            let written = format(instant);
            prop_assert_eq!(written.len(), 24, "{} -> {}", text, written);
            let back = parse_instant(&written).unwrap();
            // The fixed form keeps milliseconds.
            let millis = instant.replace_nanosecond(instant.nanosecond() / 1_000_000 * 1_000_000).unwrap();
            prop_assert_eq!(back, millis);
        } else {
            // Refusing is right only for what is not a time: a real calendar
            // day and clock time, away from the years an offset can push out
            // of 0000-9999, must be taken (a parser refusing everything
            // would otherwise pass).
            let real_day = u8::try_from(month)
                .ok()
                .and_then(|m| time::Month::try_from(m).ok())
                .zip(u8::try_from(day).ok())
                .is_some_and(|(m, d)| time::Date::from_calendar_date(i32::try_from(year).unwrap_or(0), m, d).is_ok());
            let real_clock = date_only || (hour < 24 && minute < 60 && second < 60);
            let inner_year = (1..=9998).contains(&year);
            prop_assert!(!(real_day && real_clock && inner_year), "a valid time was refused: {}", text);
        }
    }
}

// ------------------------------------------------ through the real handler

/// One runtime and one harness for the cases of a property (each case is a
/// few requests; a harness per case would seed a table per case).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap())
}

fn form() -> Value {
    common::envelope_with(json!({"elicitation": {"form": {}}}))
}

/// How round 2 differs from what round 1 confirmed.
#[derive(Debug, Clone, Copy)]
enum Change {
    Arguments,
    Tool,
    Person,
    Workspace,
    State,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// A confirmation's `requestState` is bound to the tool, its arguments,
    /// the person and the workspace: any change is -32602 and nothing runs.
    #[test]
    fn a_confirmation_is_bound_to_what_was_confirmed(
        change in prop_oneof![
            Just(Change::Arguments), Just(Change::Tool), Just(Change::Person), Just(Change::Workspace), Just(Change::State)
        ],
        flip in 0usize..64,
    ) {
        static HARNESS: OnceLock<Harness> = OnceLock::new();
        let h = HARNESS.get_or_init(Harness::new);
        let outcome: Result<(), TestCaseError> = runtime().block_on(async {
            let args = json!({"id": "eml_energy_nov"});
            let round1 = send(h.stateless_with(json!(1), "tools/call", json!({"name": "emails_delete", "arguments": args}), form())).await;
            let state = round1.result()["requestState"].as_str().expect("a requestState").to_owned();
            let accept = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
            let (name, arguments, state) = match change {
                Change::Arguments => ("emails_delete", json!({"id": "eml_telecom_nov"}), state),
                Change::Tool => ("webhooks_delete", json!({"id": "eml_energy_nov"}), state),
                Change::State => {
                    let mut bytes = state.into_bytes();
                    let i = flip % bytes.len();
                    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
                    ("emails_delete", args.clone(), String::from_utf8(bytes).unwrap())
                }
                Change::Person | Change::Workspace => ("emails_delete", args.clone(), state),
            };
            let params = json!({"name": name, "arguments": arguments, "requestState": state, "inputResponses": accept});
            let mut req = h.stateless_with(json!(2), "tools/call", params, form());
            if let Change::Person = change {
                req = req.token(&h.token_for("usr_operator", "org_demo", common::ADMIN_SCOPES));
            }
            if let Change::Workspace = change {
                req = req.header("x-workspace-id", "ws_ops");
            }
            let resp = send(req).await;
            let body = resp.json();
            // A person without the role gets the role error before the state is read.
            let refused = body["error"]["code"] == -32602
                || (matches!(change, Change::Person) && body["result"]["structuredContent"]["error"]["code"] == "forbidden");
            prop_assert!(refused, "{:?}: {}", change, body);
            let still = send(h.api("GET", "/emails/eml_energy_nov")).await;
            prop_assert_eq!(still.status, 200, "nothing was deleted");
            Ok(())
        });
        outcome?;
    }

    /// Concurrent upserts of one new slug make one record: one 201, the rest 200.
    #[test]
    fn concurrent_upserts_of_one_slug_make_one_record(n in 2usize..8, salt in 0u32..1_000_000) {
        static HARNESS: OnceLock<Harness> = OnceLock::new();
        let h = HARNESS.get_or_init(Harness::new);
        let slug = format!("race-{salt}-{n}");
        let outcome: Result<(), TestCaseError> = runtime().block_on(async {
            let body = json!({"slug": slug, "name": "Race"});
            let calls = (0..n).map(|_| send(h.api("PUT", "/inboxes").json(&body)));
            let statuses: Vec<u16> = futures_util::future::join_all(calls).await.iter().map(|r| r.status).collect();
            prop_assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 1, "{:?}", statuses);
            prop_assert!(statuses.iter().all(|s| matches!(s, 200 | 201)), "{:?}", statuses);
            let listed = send(h.api("GET", &format!("/inboxes?q={slug}"))).await.json();
            let same: Vec<&Value> = listed["data"].as_array().unwrap().iter().filter(|i| i["slug"] == slug.as_str()).collect();
            prop_assert_eq!(same.len(), 1, "{}", listed);
            Ok(())
        });
        outcome?;
    }
}
