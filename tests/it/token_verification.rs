//! The token rules of docs/security.md "Token verification": the issuer's keys
//! are trusted for a bounded age (and a bounded outage), a single-organization
//! deployment refuses tokens of another organization, and with Amazon
//! Cognito's audience claim a token is bound to the one surface it was issued
//! for. Against the harness's JWKS server on loopback and the local database.

use std::time::{Duration, Instant};

use jsonwebtoken::Algorithm;
use serde_json::{Value, json};

use crate::auth::{challenge, claims, ec_key, jwk_for, now, sign_with, tools_list, with};
use crate::common::{self, Harness, ISSUER, MCP_RESOURCE};

fn refused_as_invalid(resp: &common::Resp, what: &str) {
    assert_eq!(resp.status, 401, "{what}: {}", String::from_utf8_lossy(&resp.body));
    assert!(challenge(resp).contains("error=\"invalid_token\""), "{what}: {}", challenge(resp));
}

// ---------------------------------------------------------------- the keys' age

#[tokio::test]
async fn a_removed_signing_key_stops_verifying_within_the_maximum_age() {
    const MAX_AGE: Duration = Duration::from_secs(2);
    let h = Harness::with_config(|c| c.auth.jwks_max_age = MAX_AGE);
    let jwks = h.jwks().await;
    let old = h.sign(&claims());
    assert_eq!(tools_list(&h).token(&old).send().await.status, 200);
    assert_eq!(jwks.hits(), 1);
    // The issuer retires its key and publishes another. Nobody sends a token
    // with a `kid` this container does not know.
    let ec = ec_key();
    jwks.set_document(json!({"keys": [jwk_for(&ec, Algorithm::ES256, "next")]}).to_string());
    tokio::time::sleep(MAX_AGE + Duration::from_millis(300)).await;
    // Neither the token verified (and remembered) before, nor a new one
    // signed with the retired key, is accepted any more.
    let fresh = h.sign(&with(claims(), "jti", json!("after-the-removal")));
    for (what, token) in [("the remembered token", old), ("a new token", fresh)] {
        refused_as_invalid(&tools_list(&h).token(&token).send().await, what);
    }
    assert_eq!(jwks.hits(), 2, "one refresh, by the first request past the age");
    // The key the issuer lists now verifies, without another fetch.
    let next = sign_with(&ec, Algorithm::ES256, "next", &claims());
    assert_eq!(tools_list(&h).token(&next).send().await.status, 200);
    assert_eq!(jwks.hits(), 2);
}

#[tokio::test]
async fn while_the_issuer_is_unreachable_the_keys_held_answer_until_the_bound_then_tokens_get_503() {
    let h = Harness::with_config(|c| {
        c.auth.jwks_max_age = Duration::from_secs(1);
        c.auth.jwks_max_stale = Duration::from_secs(4);
        c.auth.jwks_min_refresh = Duration::from_secs(3);
    });
    let jwks = h.jwks().await;
    let started = Instant::now();
    assert_eq!(tools_list(&h).send().await.status, 200);
    assert_eq!(jwks.hits(), 1);
    jwks.set_mode(3);
    tokio::time::sleep(Duration::from_millis(1300)).await;
    // Past the age: the first request tries the issuer, which fails; the
    // keys held keep answering, and the next try waits out the interval
    // (an outage costs no fetch per request).
    for _ in 0..3 {
        assert_eq!(tools_list(&h).send().await.status, 200);
    }
    assert_eq!(jwks.hits(), 2);
    // Past the bound the keys held are not used any more: 503 with
    // Retry-After, as when no keys could be loaded at all.
    tokio::time::sleep((started + Duration::from_millis(4600)).saturating_duration_since(Instant::now())).await;
    let resp = tools_list(&h).send().await;
    assert_eq!(resp.status, 503, "{}", String::from_utf8_lossy(&resp.body));
    assert!(resp.header("retry-after").and_then(|v| v.parse::<u64>().ok()).is_some_and(|s| s >= 1));
    assert_eq!(resp.json()["error"]["code"], 50300);
    assert_eq!(resp.json()["id"], 1);
    // The issuer is back: the next try (an interval after the last) loads the keys again.
    jwks.set_mode(0);
    tokio::time::sleep(Duration::from_millis(3200)).await;
    assert_eq!(tools_list(&h).send().await.status, 200);
}

// ---------------------------------------------------------------- ORG_ID

fn single_organization() -> Harness {
    Harness::with_config(|c| c.auth.claims.fixed_org = inbox::domain::OrgId::parse("org_demo"))
}

#[tokio::test]
async fn with_org_id_a_token_naming_another_organization_is_refused() {
    let h = single_organization();
    for other in [json!("org_other"), json!("evil_corp"), json!(["org_other"]), json!(42)] {
        let token = h.sign(&with(claims(), "org_id", other.clone()));
        refused_as_invalid(&tools_list(&h).token(&token).send().await, &other.to_string());
    }
}

#[tokio::test]
async fn with_org_id_a_token_naming_it_or_naming_no_organization_is_accepted() {
    let h = single_organization();
    let mut without = claims();
    without.as_object_mut().unwrap().remove("org_id");
    for claims in [claims(), without] {
        let resp = tools_list(&h).token(&h.sign(&claims)).send().await;
        assert_eq!(resp.status, 200, "{claims}: {}", String::from_utf8_lossy(&resp.body));
    }
}

// ---------------------------------------------------------------- AUDIENCE_CLAIM=client_id

const MCP_CLIENT: &str = "3n4b5urk1ft4fl3mg5e62d9ado";
const REST_CLIENT: &str = "7q1hd0m2k5c8s3v6x9z4b7n0fe";

/// The Amazon Cognito recipe: one app client for the MCP endpoint, another for the REST API.
fn cognito() -> Harness {
    Harness::with_config(|c| {
        c.auth.claims.audience_claim = "client_id".into();
        c.auth.claims.org_claim = "custom:org_id".into();
        c.auth.claims.scope_prefix = "kobana-inbox/".into();
        c.auth.mcp_audience = Some(MCP_CLIENT.into());
        c.auth.api_audience = REST_CLIENT.into();
    })
}

/// A Cognito access token of the app client `client`.
fn cognito_claims(client: &str) -> Value {
    json!({
        "iss": ISSUER, "sub": "usr_admin", "token_use": "access", "client_id": client, "username": "ana",
        "custom:org_id": "org_demo", "scope": "kobana-inbox/inboxes:read kobana-inbox/emails:read",
        "auth_time": now(), "iat": now(), "exp": now() + 600, "jti": "c0g1"
    })
}

#[tokio::test]
async fn with_client_id_as_the_audience_a_token_whose_aud_names_another_api_is_refused() {
    let h = cognito();
    for aud in [json!("https://billing.example.com/api"), json!(["https://billing.example.com/api"]), json!(7)] {
        let token = h.sign(&with(cognito_claims(MCP_CLIENT), "aud", aud.clone()));
        refused_as_invalid(&tools_list(&h).token(&token).send().await, &aud.to_string());
    }
    // An `aud` that names this surface (its URI, as a resource indicator
    // asks, or its app client) is fine.
    for aud in [json!(MCP_RESOURCE), json!([MCP_CLIENT, "https://other.example.com"])] {
        let token = h.sign(&with(cognito_claims(MCP_CLIENT), "aud", aud.clone()));
        assert_eq!(tools_list(&h).token(&token).send().await.status, 200, "{aud}");
    }
}

#[tokio::test]
async fn with_client_id_as_the_audience_a_client_id_list_is_refused() {
    let h = cognito();
    for client_id in [json!([MCP_CLIENT]), json!([MCP_CLIENT, REST_CLIENT]), json!(null)] {
        let token = h.sign(&with(cognito_claims(MCP_CLIENT), "client_id", client_id.clone()));
        refused_as_invalid(&tools_list(&h).token(&token).send().await, &client_id.to_string());
    }
}

#[tokio::test]
async fn with_client_id_as_the_audience_only_an_access_token_is_accepted() {
    let h = cognito();
    let mut unsaid = cognito_claims(MCP_CLIENT);
    unsaid.as_object_mut().unwrap().remove("token_use");
    // An ID token of the same app client carries the same client id.
    for (what, claims) in
        [("an ID token", with(cognito_claims(MCP_CLIENT), "token_use", json!("id"))), ("no token_use", unsaid)]
    {
        refused_as_invalid(&tools_list(&h).token(&h.sign(&claims)).send().await, what);
    }
    assert_eq!(tools_list(&h).token(&h.sign(&cognito_claims(MCP_CLIENT))).send().await.status, 200);
}

#[tokio::test]
async fn with_client_id_as_the_audience_mcp_and_rest_tokens_are_not_interchangeable() {
    let h = cognito();
    let (mcp, rest) = (h.sign(&cognito_claims(MCP_CLIENT)), h.sign(&cognito_claims(REST_CLIENT)));
    // Each opens its own surface (verified, and remembered)...
    assert_eq!(tools_list(&h).token(&mcp).send().await.status, 200);
    assert_eq!(h.api("GET", "/inboxes").token(&rest).send().await.status, 200);
    // ...and not the other.
    refused_as_invalid(&h.api("GET", "/inboxes").token(&mcp).send().await, "the MCP client's token on REST");
    refused_as_invalid(&tools_list(&h).token(&rest).send().await, "the REST client's token on MCP");
}

#[test]
fn with_client_id_as_the_audience_one_app_client_for_both_surfaces_is_refused_at_start() {
    for (mcp, api) in [(Some(MCP_CLIENT), Some(MCP_CLIENT)), (Some(MCP_CLIENT), None), (None, Some(REST_CLIENT))] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kobana-inbox-mcp"));
        command
            .arg("dev-token")
            .env("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:1")
            .env("MCP_RESOURCE", "https://inbox.example.com/mcp")
            .env("OAUTH_ISSUER", "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Ab12")
            .env("JWKS_URL", "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Ab12/.well-known/jwks.json")
            .env("SIGNING_SECRET", "a-signing-secret-of-at-least-thirty-two-characters")
            .env("AUDIENCE_CLAIM", "client_id")
            .env_remove("DEV_ISSUER_KEY")
            .env_remove("MCP_AUDIENCE")
            .env_remove("API_AUDIENCE");
        for (name, value) in [("MCP_AUDIENCE", mcp), ("API_AUDIENCE", api)] {
            if let Some(value) = value {
                command.env(name, value);
            }
        }
        let out = command.output().expect("run the binary");
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("configuration error") && stderr.contains("AUDIENCE_CLAIM=client_id"), "{stderr}");
    }
}
