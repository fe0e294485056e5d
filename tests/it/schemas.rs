//! The published shapes (issue 13): every tool's `outputSchema` in the eras
//! that have one, and the OpenAPI 3.1 document of `/api/v1` — served without a
//! token, listing every route of the route table and nothing else, its
//! schemas valid JSON Schema. (Every answer the other tests produce is
//! checked against these schemas by the harness: `common::shapes`.)

use crate::common;

use common::shapes::assert_conforms;
use common::{Harness, send};
use inbox::api::operations;
use serde_json::{Value, json};

async fn tools(h: &Harness, version: &str) -> Vec<Value> {
    let resp = if version == "2026-07-28" {
        send(h.stateless(json!(1), "tools/list", json!({}))).await
    } else {
        let header = (version != "2025-03-26").then_some(version);
        send(h.handshake(json!(1), "tools/list", json!({}), header)).await
    };
    assert_eq!(resp.status, 200, "{}", resp.json());
    resp.json()["result"]["tools"].as_array().unwrap_or_else(|| panic!("no tools: {}", resp.json())).clone()
}

#[tokio::test]
async fn every_tool_has_an_object_output_schema_where_the_era_has_structured_results() {
    let h = Harness::new();
    for version in ["2026-07-28", "2025-06-18"] {
        let tools = tools(&h, version).await;
        assert_eq!(tools.len(), 24, "{version}");
        for tool in &tools {
            let schema = &tool["outputSchema"];
            assert_eq!(schema["type"], "object", "{version} {}: {schema}", tool["name"]);
            assert!(jsonschema::validator_for(schema).is_ok(), "{version} {}: not a valid schema", tool["name"]);
        }
    }
    for tool in tools(&h, "2025-03-26").await {
        assert!(tool.get("outputSchema").is_none(), "2025-03-26 has no outputSchema: {tool}");
    }
}

/// Every place in a schema where `type` is an array (`["string","null"]`), or a subschema
/// carries no validation keyword at all, or a `$ref` leaves the document.
fn unportable(schema: &Value, path: &str, found: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if map.get("type").is_some_and(Value::is_array) {
                found.push(format!("{path}: type {}", map["type"]));
            }
            if map.get("$ref").and_then(Value::as_str).is_some_and(|r| !r.starts_with('#')) {
                found.push(format!("{path}: remote $ref"));
            }
            for (key, value) in map {
                unportable(value, &format!("{path}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                unportable(item, &format!("{path}/{i}"), found);
            }
        }
        _ => {}
    }
}

/// What model providers read is the `inputSchema`: some map it onto a dialect with one
/// `type` per schema (the OpenAPI subset of Gemini's function declarations), so no input
/// schema has a type union or a remote `$ref` (the MCP Inspector's `--strict` portability
/// lint). An `outputSchema` keeps `["string","null"]` for a nullable field: it is read by
/// the client's JSON Schema validator (2020-12, MCP's default dialect), which takes type
/// arrays, and the `anyOf` spelling the lint suggests is no more portable to a dialect
/// without `null` (docs/protocol.md, "Decisions where the protocol is silent").
#[tokio::test]
async fn input_schemas_use_one_type_per_schema_for_model_providers() {
    let h = Harness::new();
    for version in ["2026-07-28", "2025-06-18", "2025-03-26"] {
        let mut found = Vec::new();
        let mut nullable_outputs = 0;
        for tool in tools(&h, version).await {
            unportable(&tool["inputSchema"], &format!("{}/inputSchema", tool["name"]), &mut found);
            let mut outputs = Vec::new();
            unportable(&tool["outputSchema"], "", &mut outputs);
            nullable_outputs += outputs.len();
        }
        assert_eq!(found, Vec::<String>::new(), "{version}");
        if version != "2025-03-26" {
            assert!(nullable_outputs > 0, "{version}: output schemas do mark nullable fields as type arrays");
        }
    }
}

#[tokio::test]
async fn a_destructive_tool_declares_the_declined_answer_too() {
    let h = Harness::new();
    let tools = tools(&h, "2026-07-28").await;
    let delete = tools.iter().find(|t| t["name"] == "emails_delete").unwrap();
    let schema = &delete["outputSchema"];
    assert_conforms(schema, &json!({"data": {"id": "eml_1", "deleted": true}}), "deleted");
    assert_conforms(schema, &json!({"result": "not_confirmed", "message": "Nothing was done."}), "declined");
    let validator = jsonschema::validator_for(schema).unwrap();
    assert!(!validator.is_valid(&json!({"data": {"id": "eml_1"}})), "a wrong shape is refused");
}

#[tokio::test]
async fn the_openapi_document_is_served_without_a_token_and_lists_every_route_once() {
    let h = Harness::new();
    let resp = send(h.request("GET", "/api/v1/openapi.json").without("authorization")).await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("application/json"));
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    let document = resp.json();
    assert_eq!(document["openapi"], "3.1.0");
    assert_eq!(document["info"]["version"], env!("CARGO_PKG_VERSION"));

    let mut listed: Vec<(String, String)> = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            listed.push((method.to_ascii_uppercase(), path.clone()));
            let responses = operation["responses"].as_object().unwrap();
            for status in ["401", "403", "429", "503"] {
                assert!(responses.contains_key(status), "{method} {path} lists {status}");
            }
            assert!(operation["security"].as_array().is_some_and(|s| !s.is_empty()), "{method} {path}");
        }
    }
    listed.sort();
    let mut routes: Vec<(String, String)> =
        operations().map(|op| (op.method.as_str().to_owned(), op.template.as_str().to_owned())).collect();
    routes.sort();
    assert_eq!(listed, routes, "every route of the table, and nothing else");
    assert_eq!(routes.len(), 49);

    // Every component is a valid JSON Schema, and every reference names one.
    let components = document["components"]["schemas"].as_object().unwrap();
    for (name, schema) in components {
        assert!(jsonschema::validator_for(schema).is_ok(), "component {name}");
    }
    let text = document.to_string();
    for reference in text.split("\"$ref\":\"").skip(1) {
        let target = reference.split('"').next().unwrap();
        let resolved = document.pointer(target.trim_start_matches('#'));
        assert!(resolved.is_some(), "dangling $ref {target}");
    }
}

#[tokio::test]
async fn the_openapi_document_is_the_same_for_every_caller_and_reveals_no_data() {
    let h = Harness::new();
    let anonymous = send(h.request("GET", "/api/v1/openapi.json").without("authorization")).await;
    let admin = send(h.request("GET", "/api/v1/openapi.json")).await;
    assert_eq!(anonymous.body, admin.body);
    let text = String::from_utf8(anonymous.body).unwrap();
    for secret in ["ws_main", "org_demo", "inb_bills", "eml_", "whk_demo"] {
        assert!(!text.contains(secret), "the document names {secret}");
    }
    // Other methods on it are not served without a token.
    let resp = send(h.request("POST", "/api/v1/openapi.json").without("authorization")).await;
    assert_eq!(resp.status, 401);
}
