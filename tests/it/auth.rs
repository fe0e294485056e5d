//! Authentication, JWKS caching, tenancy and rate limits, against a JWKS
//! server on loopback and the local database (wire reference §6, §7 lines
//! 29, 44, 45, 58, 79–89).

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{ADMIN_SCOPES, API_AUDIENCE, Harness, ISSUER, MCP_RESOURCE, envelope};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

pub(crate) fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

/// Claims of a valid MCP token for the demo admin; tests change one thing.
pub(crate) fn claims() -> Value {
    json!({"iss": ISSUER, "sub": "usr_admin", "org_id": "org_demo", "aud": MCP_RESOURCE,
           "scope": ADMIN_SCOPES, "iat": now(), "exp": now() + 600})
}

pub(crate) fn with(mut base: Value, key: &str, value: Value) -> Value {
    base[key] = value;
    base
}

pub(crate) fn tools_list(h: &Harness) -> common::Req<'_> {
    h.stateless(json!(1), "tools/list", json!({}))
}

/// The `WWW-Authenticate` parameters of a challenge.
pub(crate) fn challenge(resp: &common::Resp) -> String {
    resp.header("www-authenticate").unwrap_or_else(|| panic!("no challenge; status {}", resp.status)).to_owned()
}

const METADATA: &str = "resource_metadata=\"http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp\"";

// §7 line 79
#[tokio::test]
async fn request_without_token_gets_401_with_resource_metadata_and_scope() {
    let h = Harness::new();
    let resp = tools_list(&h).without("authorization").send().await;
    assert_eq!(resp.status, 401);
    let c = challenge(&resp);
    assert!(c.starts_with("Bearer "), "{c}");
    assert!(c.contains(METADATA), "{c}");
    assert!(
        c.contains(
            "scope=\"inboxes:read inboxes:write emails:read emails:write webhooks:read webhooks:write audit:read\""
        ),
        "{c}"
    );
    assert!(!c.contains("error="), "no error attribute without a token: {c}");
    assert_eq!(resp.json()["error"], "invalid_token");
    assert_eq!(resp.header("cache-control"), Some("no-store"));
}

// §7 line 80
#[tokio::test]
async fn expired_token_gets_401_invalid_token() {
    let h = Harness::new();
    let token = h.sign(&with(with(claims(), "exp", json!(now() - 3600)), "iat", json!(now() - 7200)));
    let resp = tools_list(&h).token(&token).send().await;
    assert_eq!(resp.status, 401);
    let c = challenge(&resp);
    assert!(c.contains("error=\"invalid_token\""), "{c}");
    assert!(c.contains("error_description=\"The access token expired\""), "{c}");
    assert!(c.contains(METADATA), "{c}");
}

#[tokio::test]
async fn token_not_yet_valid_gets_401() {
    let h = Harness::new();
    let token = h.sign(&with(claims(), "nbf", json!(now() + 3600)));
    let resp = tools_list(&h).token(&token).send().await;
    assert_eq!(resp.status, 401);
    assert!(challenge(&resp).contains("not valid yet"));
}

#[tokio::test]
async fn token_issued_in_the_future_gets_401() {
    let h = Harness::new();
    let token = h.sign(&with(claims(), "iat", json!(now() + 3600)));
    let resp = tools_list(&h).token(&token).send().await;
    assert_eq!(resp.status, 401);
}

#[tokio::test]
async fn token_of_another_issuer_gets_401() {
    let h = Harness::new();
    let token = h.sign(&with(claims(), "iss", json!("https://evil.example.com")));
    let resp = tools_list(&h).token(&token).send().await;
    assert_eq!(resp.status, 401);
    assert!(challenge(&resp).contains("issuer"));
}

// §7 line 81
#[tokio::test]
async fn token_for_the_rest_api_audience_is_refused_on_mcp() {
    let h = Harness::new();
    let token = h.sign(&with(claims(), "aud", json!(API_AUDIENCE)));
    let resp = tools_list(&h).token(&token).send().await;
    assert_eq!(resp.status, 401);
    assert!(challenge(&resp).contains("error=\"invalid_token\""));
}

#[tokio::test]
async fn audience_array_with_this_resource_in_any_case_of_host_is_accepted() {
    let h = Harness::new();
    let token = h.sign(&with(claims(), "aud", json!(["https://other.example", "HTTP://127.0.0.1:3000/mcp/"])));
    let resp = tools_list(&h).token(&token).send().await;
    assert_eq!(resp.status, 200, "{}", resp.json());
}

#[tokio::test]
async fn token_without_org_id_or_subject_gets_401() {
    let h = Harness::new();
    let mut no_org = claims();
    no_org.as_object_mut().unwrap().remove("org_id");
    let resp = tools_list(&h).token(&h.sign(&no_org)).send().await;
    assert_eq!(resp.status, 401);
    let mut no_sub = claims();
    no_sub.as_object_mut().unwrap().remove("sub");
    let resp = tools_list(&h).token(&h.sign(&no_sub)).send().await;
    assert_eq!(resp.status, 401);
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

// §7 line 82
#[tokio::test]
async fn alg_none_token_gets_401() {
    let h = Harness::new();
    let header = b64(format!(r#"{{"alg":"none","kid":"{}"}}"#, h.issuer.kid).as_bytes());
    let token = format!("{header}.{}.", b64(claims().to_string().as_bytes()));
    let resp = tools_list(&h).token(&token).send().await;
    assert_eq!(resp.status, 401);
    assert!(challenge(&resp).contains("error=\"invalid_token\""));
}

// §7 line 82
#[tokio::test]
async fn hs256_token_signed_with_the_public_key_gets_401() {
    let h = Harness::new();
    // The classic confusion attack: HMAC keyed with the issuer's public key.
    let public = h.issuer.jwks()["keys"][0]["x"].as_str().unwrap().to_owned();
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(h.issuer.kid.clone());
    let token =
        jsonwebtoken::encode(&header, &claims(), &EncodingKey::from_secret(public.as_bytes()).unwrap()).unwrap();
    let resp = tools_list(&h).token(&token).send().await;
    assert_eq!(resp.status, 401);
    assert!(challenge(&resp).contains("algorithm"));
}

#[tokio::test]
async fn tampered_payload_gets_401() {
    let h = Harness::new();
    let token = h.sign(&with(claims(), "sub", json!("usr_viewer")));
    let parts: Vec<&str> = token.split('.').collect();
    let forged = b64(with(claims(), "sub", json!("usr_admin")).to_string().as_bytes());
    let token = format!("{}.{forged}.{}", parts[0], parts[2]);
    let resp = tools_list(&h).token(&token).send().await;
    assert_eq!(resp.status, 401);
    assert!(challenge(&resp).contains("signature"));
}

#[tokio::test]
async fn garbage_token_gets_401() {
    let h = Harness::new();
    for token in ["abc", "a.b.c", "eyJhbGciOiJFZERTQSJ9.e30.AAAA"] {
        let resp = tools_list(&h).token(token).send().await;
        assert_eq!(resp.status, 401, "{token}");
    }
}

// §7 line 83
#[tokio::test]
async fn token_in_the_query_string_only_gets_401() {
    let h = Harness::new();
    let token = h.admin_token();
    let resp = h
        .stateless(json!(1), "tools/list", json!({}))
        .without("authorization")
        .path(&format!("/mcp?access_token={token}"))
        .send()
        .await;
    assert_eq!(resp.status, 401);
}

// §7 line 83
#[tokio::test]
async fn token_in_header_and_query_gets_400_invalid_request() {
    let h = Harness::new();
    let token = h.admin_token();
    let resp = h.stateless(json!(1), "tools/list", json!({})).path(&format!("/mcp?access_token={token}")).send().await;
    assert_eq!(resp.status, 400);
    let c = challenge(&resp);
    assert!(c.contains("error=\"invalid_request\""), "{c}");
    assert!(c.contains(METADATA), "{c}");
}

#[tokio::test]
async fn two_authorization_headers_or_an_empty_token_get_400() {
    let h = Harness::new();
    let token = h.admin_token();
    let resp = tools_list(&h).append_header("authorization", &format!("Bearer {token}")).send().await;
    assert_eq!(resp.status, 400);
    let resp = tools_list(&h).header("authorization", "Bearer ").send().await;
    assert_eq!(resp.status, 400);
}

// §7 line 84
#[tokio::test]
async fn basic_authorization_gets_401_without_error_attribute() {
    let h = Harness::new();
    let resp = tools_list(&h).header("authorization", "Basic dXNlcjpwYXNz").send().await;
    assert_eq!(resp.status, 401);
    let c = challenge(&resp);
    assert!(!c.contains("error="), "{c}");
    assert!(c.contains(METADATA));
}

// §7 line 85
#[tokio::test]
async fn server_discover_without_token_gets_401() {
    let h = Harness::new();
    let resp = h.stateless(json!("d"), "server/discover", json!({})).without("authorization").send().await;
    assert_eq!(resp.status, 401);
    assert!(challenge(&resp).contains(METADATA));
}

// §7 line 86
#[tokio::test]
async fn unknown_method_without_token_gets_401_not_404() {
    let h = Harness::new();
    let resp = h.stateless(json!(1), "foo/bar", json!({})).without("authorization").send().await;
    assert_eq!(resp.status, 401);
}

// §7 line 58
#[tokio::test]
async fn initialize_without_token_gets_401_with_resource_metadata() {
    let h = Harness::new();
    let params =
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}});
    let resp = h.handshake(json!(1), "initialize", params, None).without("authorization").send().await;
    assert_eq!(resp.status, 401);
    assert!(challenge(&resp).contains("resource_metadata="));
}

// §7 line 29
#[tokio::test]
async fn notification_without_token_gets_401() {
    let h = Harness::new();
    let resp = h
        .post()
        .without("authorization")
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await;
    assert_eq!(resp.status, 401);
    assert!(resp.header("www-authenticate").is_some());
}

// §7 line 44
#[tokio::test]
async fn version_error_without_token_is_still_400_32022() {
    let h = Harness::new();
    let mut env = envelope();
    env["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let resp = h
        .stateless_with(json!(44), "tools/list", json!({}), env)
        .header("mcp-protocol-version", "2025-11-25")
        .without("authorization")
        .send()
        .await;
    resp.assert_error(400, -32022, json!(44));
}

// §7 line 45
#[tokio::test]
async fn header_body_version_mismatch_without_token_is_400_32020() {
    let h = Harness::new();
    let mut env = envelope();
    env["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let resp = h.stateless_with(json!(45), "tools/list", json!({}), env).without("authorization").send().await;
    resp.assert_error(400, -32020, json!(45));
}

// §7 line 87
#[tokio::test]
async fn protected_resource_metadata_is_public_and_complete() {
    let h = Harness::new();
    let resp = h.request("GET", "/.well-known/oauth-protected-resource/mcp").without("authorization").send().await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    assert_eq!(resp.header("content-type"), Some("application/json"));
    let doc = resp.json();
    assert_eq!(doc["resource"], MCP_RESOURCE);
    assert_eq!(doc["authorization_servers"], json!([ISSUER]));
    assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    let scopes: Vec<&str> = doc["scopes_supported"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert!(scopes.contains(&"emails:read"));
    assert!(!scopes.contains(&"offline_access"));
}

// §7 line 88
#[tokio::test]
async fn root_metadata_path_serves_the_same_document() {
    let h = Harness::new();
    let root = h.request("GET", "/.well-known/oauth-protected-resource").without("authorization").send().await;
    let mcp = h.request("GET", "/.well-known/oauth-protected-resource/mcp").without("authorization").send().await;
    assert_eq!(root.status, 200);
    assert_eq!(root.json(), mcp.json());
}

#[tokio::test]
async fn rest_api_metadata_names_the_api_audience() {
    let h = Harness::new();
    let resp = h.request("GET", "/.well-known/oauth-protected-resource/api/v1").without("authorization").send().await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.json()["resource"], API_AUDIENCE);
    assert!(resp.json()["scopes_supported"].as_array().unwrap().contains(&json!("emails:ingest")));
}

// ---------------------------------------------------------------- algorithms and the JWKS cache

pub(crate) fn jwk_for(key: &EncodingKey, alg: Algorithm, kid: &str) -> Value {
    let mut jwk = Jwk::from_encoding_key(key, alg).expect("jwk");
    jwk.common.key_id = Some(kid.into());
    serde_json::to_value(jwk).unwrap()
}

pub(crate) fn sign_with(key: &EncodingKey, alg: Algorithm, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = Some(kid.into());
    jsonwebtoken::encode(&header, claims, key).expect("sign")
}

fn rsa_key() -> EncodingKey {
    EncodingKey::from_rsa_pem(include_bytes!("fixtures/rsa-test-key.pem")).expect("rsa test key")
}

pub(crate) fn ec_key() -> EncodingKey {
    EncodingKey::from_ec_pem(include_bytes!("fixtures/ec-test-key.pem")).expect("ec test key")
}

#[tokio::test]
async fn rs256_es256_and_eddsa_tokens_are_all_accepted() {
    let h = Harness::new();
    let jwks = h.jwks().await;
    let (rsa, ec) = (rsa_key(), ec_key());
    let doc = json!({"keys": [h.issuer.jwks()["keys"][0], jwk_for(&rsa, Algorithm::RS256, "rsa-1"), jwk_for(&ec, Algorithm::ES256, "ec-1")]});
    jwks.set_document(doc.to_string());
    for token in [
        h.admin_token(),
        sign_with(&rsa, Algorithm::RS256, "rsa-1", &claims()),
        sign_with(&ec, Algorithm::ES256, "ec-1", &claims()),
    ] {
        let resp = tools_list(&h).token(&token).send().await;
        assert_eq!(resp.status, 200, "{}", resp.json());
    }
    assert_eq!(jwks.hits(), 1, "one fetch serves every key of the set");
}

#[tokio::test]
async fn a_token_whose_algorithm_differs_from_its_key_is_refused() {
    let h = Harness::new();
    let jwks = h.jwks().await;
    let rsa = rsa_key();
    // The set says kid "ec-1" is an EC key; the token claims RS256 under that kid.
    let doc = json!({"keys": [jwk_for(&ec_key(), Algorithm::ES256, "ec-1")]});
    jwks.set_document(doc.to_string());
    let resp = tools_list(&h).token(&sign_with(&rsa, Algorithm::RS256, "ec-1", &claims())).send().await;
    assert_eq!(resp.status, 401);
}

#[tokio::test]
async fn rotated_key_is_accepted_after_one_refresh() {
    let h = Harness::new();
    let jwks = h.jwks().await;
    assert_eq!(tools_list(&h).send().await.status, 200);
    assert_eq!(jwks.hits(), 1);
    // The issuer rotates: the new key is published under a new kid.
    let ec = ec_key();
    jwks.set_document(json!({"keys": [jwk_for(&ec, Algorithm::ES256, "rotated")]}).to_string());
    let resp = tools_list(&h).token(&sign_with(&ec, Algorithm::ES256, "rotated", &claims())).send().await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    assert_eq!(jwks.hits(), 2);
    // Warm: no more fetches.
    for _ in 0..3 {
        assert_eq!(
            tools_list(&h).token(&sign_with(&ec, Algorithm::ES256, "rotated", &claims())).send().await.status,
            200
        );
    }
    assert_eq!(jwks.hits(), 2);
}

#[tokio::test]
async fn warm_requests_fetch_no_keys() {
    let h = Harness::new();
    let jwks = h.jwks().await;
    for _ in 0..5 {
        assert_eq!(tools_list(&h).send().await.status, 200);
    }
    assert_eq!(jwks.hits(), 1);
}

#[tokio::test]
async fn unknown_kid_flood_causes_at_most_one_fetch_per_interval() {
    let h = Harness::new();
    let jwks = h.jwks().await;
    assert_eq!(tools_list(&h).send().await.status, 200);
    let ec = ec_key();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let token = sign_with(&ec, Algorithm::ES256, &format!("unknown-{i}"), &claims());
        let app = h.app().await;
        let req = tools_list(&h).token(&token).build();
        tasks.push(tokio::spawn(async move { common::Resp::from(inbox::edge::handle(&app.edge, req).await) }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap().status, 401);
    }
    assert_eq!(jwks.hits(), 2, "the first load plus one refresh for the whole flood");
}

#[tokio::test]
async fn jwks_outage_with_a_warm_cache_still_serves() {
    let h = Harness::new();
    let jwks = h.jwks().await;
    assert_eq!(tools_list(&h).send().await.status, 200);
    jwks.set_mode(3);
    for _ in 0..3 {
        assert_eq!(tools_list(&h).send().await.status, 200);
    }
    // An unknown kid during the outage may be a key the issuer rotated in:
    // "try again" (503 with Retry-After), not "invalid token".
    let resp = tools_list(&h).token(&sign_with(&ec_key(), Algorithm::ES256, "new", &claims())).send().await;
    assert_eq!(resp.status, 503, "{}", String::from_utf8_lossy(&resp.body));
    assert!(resp.header("retry-after").and_then(|v| v.parse::<u64>().ok()).is_some_and(|s| s >= 1));
    assert_eq!(resp.json()["error"]["code"], 50300);
    // Once the issuer is back (and the refresh interval allows), an unknown kid is 401 again.
    jwks.set_mode(0);
}

#[tokio::test]
async fn no_keys_at_all_gets_503_with_retry_after() {
    for mode in [1u8, 3] {
        let h = Harness::new();
        let jwks = h.jwks().await;
        jwks.set_mode(mode);
        let resp = tools_list(&h).send().await;
        assert_eq!(resp.status, 503, "mode {mode}");
        assert!(resp.header("retry-after").and_then(|v| v.parse::<u64>().ok()).is_some_and(|s| s >= 1));
        assert_eq!(resp.json()["id"], 1);
    }
}

#[tokio::test]
async fn a_hanging_jwks_endpoint_does_not_hang_the_request() {
    let h = Harness::new();
    let jwks = h.jwks().await;
    jwks.set_mode(2);
    let answered = tokio::time::timeout(Duration::from_secs(15), tools_list(&h).send()).await;
    let resp = answered.expect("the JWKS fetch is bounded by its own timeout");
    assert_eq!(resp.status, 503);
}

// ---------------------------------------------------------------- tenancy

#[tokio::test]
async fn workspace_header_is_required_when_the_organization_has_several() {
    let h = Harness::new();
    let resp = tools_list(&h).without("x-workspace-id").send().await;
    resp.assert_error(400, -32602, json!(1));
    let data = &resp.json()["error"]["data"];
    assert_eq!(data["missing"], "X-Workspace-Id");
    assert_eq!(data["workspaces"], json!(["ws_main", "ws_ops"]));
}

#[tokio::test]
async fn workspace_header_is_optional_when_the_organization_has_one() {
    let h = Harness::new();
    let token = h.token_for("usr_other", "org_other", ADMIN_SCOPES);
    let resp = tools_list(&h).token(&token).without("x-workspace-id").send().await;
    assert_eq!(resp.status, 200, "{}", resp.json());
}

#[tokio::test]
async fn a_workspace_of_another_organization_is_not_found() {
    let h = Harness::new();
    // usr_admin of org_demo names org_other's workspace.
    let resp = tools_list(&h).header("x-workspace-id", "ws_other").send().await;
    resp.assert_error(400, -32602, json!(1));
    assert_eq!(resp.json()["error"]["message"], "Workspace not found");
    // And the other way round.
    let token = h.token_for("usr_other", "org_other", ADMIN_SCOPES);
    let resp = tools_list(&h).token(&token).header("x-workspace-id", "ws_main").send().await;
    assert_eq!(resp.json()["error"]["message"], "Workspace not found");
    assert_eq!(resp.json()["error"]["data"]["workspaces"], json!(["ws_other"]));
}

#[tokio::test]
async fn a_workspace_the_person_is_not_a_member_of_is_not_found() {
    let h = Harness::new();
    let token = h.token_for("usr_viewer", "org_demo", ADMIN_SCOPES);
    let resp = tools_list(&h).token(&token).header("x-workspace-id", "ws_ops").send().await;
    assert_eq!(resp.json()["error"]["message"], "Workspace not found");
    assert_eq!(resp.json()["error"]["data"]["workspaces"], json!(["ws_main"]));
}

#[tokio::test]
async fn a_malformed_workspace_header_is_not_found() {
    let h = Harness::new();
    for bad in ["../ws_main", "ws_main#x", "ws%2Fmain"] {
        let resp = tools_list(&h).header("x-workspace-id", bad).send().await;
        assert_eq!(resp.json()["error"]["message"], "Workspace not found", "{bad}");
    }
}

#[tokio::test]
async fn discover_and_initialize_need_no_workspace() {
    let h = Harness::new();
    let resp = h.stateless(json!(1), "server/discover", json!({})).without("x-workspace-id").send().await;
    resp.assert_stateless_ok(json!(1));
    let params =
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}});
    let resp = h.handshake(json!(2), "initialize", params, None).without("x-workspace-id").send().await;
    assert_eq!(resp.result()["protocolVersion"], "2025-06-18");
}

// ---------------------------------------------------------------- rate limits

// §7 line 89
#[tokio::test]
async fn two_replicas_share_one_rate_budget() {
    let h = Harness::with_config(|c| c.rate_limit_per_minute = 3);
    let replica_a = h.app().await;
    // A second, independently built app on the same table and issuer.
    let mut config = Harness::base_config(&h.table, &h.jwks().await.url);
    config.rate_limit_per_minute = 3;
    let replica_b = Arc::new(inbox::App::build(config).await.unwrap());

    // A call of a tool that changes state is counted before it runs (its
    // arguments are wrong, so it changes nothing).
    let write = |app: Arc<inbox::App>, id: i64| {
        let params = json!({"name": "inboxes_update", "arguments": {}});
        let req = h.stateless(json!(id), "tools/call", params).build();
        async move { common::Resp::from(inbox::edge::handle(&app.edge, req).await) }
    };
    // Start early in a fresh one-minute window so the requests share it.
    let seconds_into_minute = jsonwebtoken::get_current_timestamp() % 60;
    if seconds_into_minute > 50 {
        tokio::time::sleep(Duration::from_secs(61 - seconds_into_minute)).await;
    }
    let mut remaining = Vec::new();
    for (i, app) in [&replica_a, &replica_b, &replica_a].into_iter().enumerate() {
        let resp = write(Arc::clone(app), i as i64).await;
        assert_eq!(resp.status, 200, "{}", resp.json());
        assert_eq!(resp.header("x-ratelimit-limit"), Some("3"));
        remaining.push(resp.header("x-ratelimit-remaining").unwrap().to_owned());
    }
    assert_eq!(remaining, ["2", "1", "0"], "both replicas count against one budget");
    let resp = write(Arc::clone(&replica_b), 89).await;
    resp.assert_error(429, 42900, json!(89));
    let retry: u64 = resp.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry));
    assert_eq!(resp.header("x-ratelimit-remaining"), Some("0"));
    // A replica that has seen the budget spent refuses reads at once, too.
    let req = h.stateless(json!(90), "tools/list", json!({})).build();
    let resp = common::Resp::from(inbox::edge::handle(&replica_b.edge, req).await);
    resp.assert_error(429, 42900, json!(90));
    assert!(resp.header("retry-after").is_some());
}

#[tokio::test]
async fn authenticated_responses_carry_rate_limit_headers() {
    let h = Harness::with_config(|c| c.rate_limit_per_minute = 100);
    let resp = tools_list(&h).send().await;
    assert_eq!(resp.header("x-ratelimit-limit"), Some("100"));
    assert!(resp.header("x-ratelimit-remaining").is_some());
    assert!(resp.header("x-ratelimit-reset").and_then(|v| v.parse::<u64>().ok()).is_some_and(|s| s <= 60));
    // Errors after authentication carry them too.
    let resp = h.stateless(json!(2), "foo/bar", json!({})).send().await;
    assert_eq!(resp.status, 404);
    assert!(resp.header("x-ratelimit-limit").is_some());
}

#[tokio::test]
async fn rate_limit_zero_disables_the_limit_and_its_headers() {
    let h = Harness::new();
    let resp = tools_list(&h).send().await;
    assert_eq!(resp.status, 200);
    assert!(resp.header("x-ratelimit-limit").is_none());
}

/// Waits for the next minute when fewer than `needed` seconds are left in
/// this one, so the requests that follow share one window.
async fn early_in_a_window(needed: u64) {
    let second = jsonwebtoken::get_current_timestamp() % 60;
    if second + needed > 60 {
        tokio::time::sleep(Duration::from_secs(61 - second)).await;
    }
}

/// The headers every 429 of the rate limit carries.
#[track_caller]
fn assert_rate_limited(resp: &common::Resp, limit: &str) {
    assert_eq!(resp.status, 429, "{}", String::from_utf8_lossy(&resp.body));
    assert_eq!(resp.header("x-ratelimit-limit"), Some(limit));
    assert_eq!(resp.header("x-ratelimit-remaining"), Some("0"));
    let reset: u64 = resp.header("x-ratelimit-reset").unwrap().parse().unwrap();
    let retry: u64 = resp.header("retry-after").unwrap().parse().unwrap();
    assert!(reset <= 60 && (1..=60).contains(&retry), "reset {reset}, retry {retry}");
}

/// The count of each rate-limit counter item of `sub` in org_demo, by key.
async fn counters_of(h: &Harness, sub: &str) -> std::collections::BTreeMap<String, u64> {
    let items = common::dynamodb_client()
        .scan()
        .table_name(&h.table)
        .filter_expression("begins_with(pk, :rl)")
        .expression_attribute_values(":rl", aws_sdk_dynamodb::types::AttributeValue::S("T#org_demo#RL".into()))
        .send()
        .await
        .unwrap()
        .items
        .unwrap_or_default();
    let value = |item: &std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>, name: &str| {
        item.get(name).and_then(|v| v.as_s().or_else(|_| v.as_n()).ok()).cloned().unwrap_or_default()
    };
    items
        .iter()
        .map(|item| (value(item, "pk"), value(item, "count").parse::<u64>().unwrap()))
        .filter(|(pk, _)| pk.ends_with(&format!("#{sub}")))
        .collect()
}

// Issue 43, finding 1: the scopes alone once bought the pipeline's budget.
#[tokio::test]
async fn a_persons_token_with_only_emails_ingest_spends_the_persons_budget_on_every_method() {
    let h = Harness::with_config(|c| {
        c.rate_limit_per_minute = 60;
        c.ingest_rate_limit_per_minute = 60_000;
    });
    h.app().await;
    let token = h.token_for("usr_operator", "org_demo", "emails:ingest");
    // Every request in one minute's window, with room for a loaded machine (a
    // slow run that crossed into the next minute counted its last requests there).
    early_in_a_window(40).await;
    let (mut admitted, mut refused) = (0, 0);
    for i in 0..80 {
        let resp = h.stateless(json!(i), "server/discover", json!({})).token(&token).send().await;
        if resp.status == 200 {
            assert_eq!(resp.header("x-ratelimit-limit"), Some("60"), "the person's budget, not the pipeline's");
            admitted += 1;
        } else {
            resp.assert_error(429, 42900, json!(i));
            assert_rate_limited(&resp, "60");
            refused += 1;
        }
    }
    assert_eq!((admitted, refused), (60, 20), "refused past the person's budget");
    // The ingestion route too: without a registration it is the person's
    // budget, already spent.
    let resp = crate::jobs_and_webhooks::ingest(&h, "inb_receipts", &crate::jobs_and_webhooks::mail("a@b.example"))
        .token(&token)
        .send()
        .await;
    assert_rate_limited(&resp, "60");
    assert_eq!(resp.json()["error"]["code"], "rate_limited");
    // One counter, the person's: nothing was counted on a pipeline's. The
    // table's counter is written beside the answers, so a loaded run waits
    // for it (up to 10 s) instead of reading it at a fixed moment.
    let expected = vec![("T#org_demo#RL#usr_operator".to_owned(), 60)];
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut counters = counters_of(&h, "usr_operator").await.into_iter().collect::<Vec<_>>();
    while counters != expected && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        counters = counters_of(&h, "usr_operator").await.into_iter().collect();
    }
    assert_eq!(counters, expected);
}

// Issue 43, finding 1: a registered pipeline's ingestion and the same
// subject's person budget are two budgets, on keys and in memory apart.
#[tokio::test]
async fn a_registered_pipelines_ingestion_keeps_its_own_budget_and_never_spends_the_persons() {
    use crate::jobs_and_webhooks::{ingest, mail};
    let h = Harness::with_config(|c| {
        c.rate_limit_per_minute = 3;
        c.ingest_rate_limit_per_minute = 5;
    });
    h.app().await;
    let pipeline = h.token_for("svc_mailpipe", "org_demo", "emails:ingest");
    let discover = |id: i64| h.stateless(json!(id), "server/discover", json!({})).token(&pipeline).send();
    let ingestion = || ingest(&h, "inb_receipts", &mail("contas@energia.example.com")).send();
    early_in_a_window(15).await;

    // Two ingestions: the pipeline's budget.
    for remaining in ["4", "3"] {
        let resp = ingestion().await;
        assert_eq!(resp.status, 202, "{}", resp.json());
        assert_eq!(
            (resp.header("x-ratelimit-limit"), resp.header("x-ratelimit-remaining")),
            (Some("5"), Some(remaining))
        );
    }
    // Anything else with the same token is the person's, untouched by them.
    let resp = discover(1).await;
    assert_eq!(resp.status, 200, "{}", resp.json());
    assert_eq!((resp.header("x-ratelimit-limit"), resp.header("x-ratelimit-remaining")), (Some("3"), Some("2")));
    for id in 2..=3 {
        assert_eq!(discover(id).await.status, 200);
    }
    let resp = discover(4).await;
    resp.assert_error(429, 42900, json!(4));
    assert_rate_limited(&resp, "3");
    // The person's budget spent, the pipeline still ingests: its own three left.
    for remaining in ["2", "1", "0"] {
        let resp = ingestion().await;
        assert_eq!(resp.status, 202, "{}", resp.json());
        assert_eq!(
            (resp.header("x-ratelimit-limit"), resp.header("x-ratelimit-remaining")),
            (Some("5"), Some(remaining))
        );
    }
    let resp = ingestion().await;
    assert_rate_limited(&resp, "5");
    assert_eq!(resp.json()["error"]["code"], "rate_limited");
    // What is stored: one counter per budget, each with its own count.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let counters = counters_of(&h, "svc_mailpipe").await;
    let expected = [("T#org_demo#RL#svc_mailpipe".to_owned(), 3), ("T#org_demo#RLI#svc_mailpipe".to_owned(), 5)];
    assert_eq!(counters.into_iter().collect::<Vec<_>>(), expected);
}

// Issue 43, finding 12: reads do not wait for their counts, and a burst of
// them once all passed before the first count was back (40 of 40).
#[tokio::test]
async fn a_burst_of_concurrent_reads_into_one_container_is_admitted_up_to_the_budget_only() {
    let h = Harness::with_config(|c| c.rate_limit_per_minute = 5);
    h.app().await;
    let token = h.token_for("usr_viewer", "org_demo", ADMIN_SCOPES);
    early_in_a_window(10).await;
    let calls = (0..40).map(|i| h.stateless(json!(i), "server/discover", json!({})).token(&token).send());
    let answers = futures_util::future::join_all(calls).await;
    let admitted = answers.iter().filter(|r| r.status == 200).count();
    for resp in answers.iter().filter(|r| r.status != 200) {
        assert_rate_limited(resp, "5");
    }
    assert_eq!(admitted, 5, "{:?}", answers.iter().map(|r| r.status).collect::<Vec<_>>());
    // Each admitted read was counted; none of the refused ones.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(counters_of(&h, "usr_viewer").await.into_values().collect::<Vec<_>>(), [5]);
}

// ---------------------------------------------------------------- the development issuer

#[test]
fn development_issuer_is_refused_on_lambda() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kobana-inbox-mcp"))
        .env("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001")
        .env("MCP_RESOURCE", "https://inbox.example.com/mcp")
        .env("DEV_ISSUER_KEY", "/tmp/never-used.key")
        .env_remove("OAUTH_ISSUER")
        .env_remove("JWKS_URL")
        .output()
        .expect("run the binary");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("DEV_ISSUER_KEY"), "{stderr}");
}

#[tokio::test]
async fn a_token_verified_for_one_resource_is_not_taken_on_trust_for_the_other() {
    let h = Harness::new();
    let now = jsonwebtoken::get_current_timestamp();
    let token = h.sign(&json!({"iss": common::ISSUER, "sub": "usr_admin", "org_id": "org_demo",
        "aud": common::MCP_RESOURCE, "scope": common::ADMIN_SCOPES, "iat": now, "exp": now + 600}));
    // Verified (and remembered) for the MCP endpoint...
    for _ in 0..2 {
        assert_eq!(tools_list(&h).token(&token).send().await.status, 200);
    }
    // ...it is still checked, and refused, for the REST API.
    let resp = h.api("GET", "/inboxes").token(&token).send().await;
    assert_eq!(resp.status, 401, "{}", String::from_utf8_lossy(&resp.body));
}
