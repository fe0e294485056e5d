//! The development authorization server (`inbox::dev::oauth`): metadata,
//! registration, authorization code with PKCE, consent, tokens and refresh
//! rotation, and its refusals. Driven through its handler with the harness's
//! table and signing key, so its tokens open the harness's MCP endpoint.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::common::{API_AUDIENCE, Harness, ISSUER, JwksServer, MCP_RESOURCE, capture_logs, send, table_dump_sorted};
use inbox::dev::oauth::{AuthServer, Options};

const REDIRECT: &str = "http://127.0.0.1/callback";
/// A PKCE pair: the verifier, and its S256 challenge.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

async fn server(h: &Harness, auto_approve: Option<&str>) -> AuthServer {
    let store = h.app().await.store.clone();
    let resources = vec![MCP_RESOURCE.to_owned(), API_AUDIENCE.to_owned()];
    // Loopback documents allowed, as under the development flag.
    let outbound = inbox::outbound::Outbound::new(true).unwrap();
    let options = Options { auto_approve: auto_approve.map(str::to_owned), ..Options::default() };
    AuthServer::new(h.issuer.clone(), ISSUER, resources, store, outbound, options)
}

/// A server at `url` (as `make run` starts it: `http://127.0.0.1:PORT`).
async fn server_at(h: &Harness, url: &str) -> AuthServer {
    let store = h.app().await.store.clone();
    let resources = vec![MCP_RESOURCE.to_owned(), API_AUDIENCE.to_owned()];
    let outbound = inbox::outbound::Outbound::new(true).unwrap();
    AuthServer::new(h.issuer.clone(), url, resources, store, outbound, Options::default())
}

/// A request to `s` as a client on this machine sends it: `Host` naming the
/// server (`ISSUER`'s authority), a JSON body as JSON, any other as a form.
async fn call(s: &AuthServer, method: &str, uri: &str, body: &str) -> http::Response<Bytes> {
    call_with(s, method, uri, body, &[]).await
}

/// `call` with `headers` added (or replacing its own).
async fn call_with(
    s: &AuthServer,
    method: &str,
    uri: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> http::Response<Bytes> {
    let media = if body.starts_with('{') { "application/json" } else { "application/x-www-form-urlencoded" };
    let mut req = http::Request::builder().method(method).uri(uri).body(Bytes::from(body.to_owned())).unwrap();
    req.headers_mut().insert("host", http::HeaderValue::from_static("auth.example.com"));
    req.headers_mut().insert("content-type", http::HeaderValue::from_static(media));
    for (name, value) in headers {
        req.headers_mut().insert(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            http::HeaderValue::from_str(value).unwrap(),
        );
    }
    s.handle(req).await
}

/// The claims of a JWT (its payload, unverified: the test only reads them).
fn claims_of(token: &str) -> Value {
    use base64::Engine as _;
    let payload = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

fn json_of(resp: &http::Response<Bytes>) -> Value {
    serde_json::from_slice(resp.body()).unwrap_or(Value::Null)
}

/// The query parameters of the redirect a response makes.
fn redirected(resp: &http::Response<Bytes>) -> std::collections::HashMap<String, String> {
    assert_eq!(resp.status(), 302, "{}", String::from_utf8_lossy(resp.body()));
    let location = resp.headers()["location"].to_str().unwrap();
    let url = url::Url::parse(location).unwrap();
    url.query_pairs().into_owned().collect()
}

async fn register(s: &AuthServer) -> String {
    let body = json!({"redirect_uris": [REDIRECT], "client_name": "Test client", "application_type": "native"});
    let resp = call(s, "POST", "/register", &body.to_string()).await;
    assert_eq!(resp.status(), 201, "{}", json_of(&resp));
    json_of(&resp)["client_id"].as_str().unwrap().to_owned()
}

fn authorize_uri(client: &str, extra: &str) -> String {
    format!(
        "/authorize?response_type=code&client_id={client}&redirect_uri=http%3A%2F%2F127.0.0.1%3A53127%2Fcallback&state=s1&resource={}{extra}",
        url::form_urlencoded::byte_serialize(MCP_RESOURCE.as_bytes()).collect::<String>()
    )
}

fn pkce() -> String {
    format!("&code_challenge={CHALLENGE}&code_challenge_method=S256")
}

async fn exchange(s: &AuthServer, client: &str, code: &str, verifier: &str) -> http::Response<Bytes> {
    let body = format!(
        "grant_type=authorization_code&client_id={client}&code={code}&code_verifier={verifier}&redirect_uri=http%3A%2F%2F127.0.0.1%3A53127%2Fcallback"
    );
    call(s, "POST", "/token", &body).await
}

#[tokio::test]
async fn the_metadata_says_what_the_server_supports() {
    let h = Harness::new();
    let s = server(&h, None).await;
    for path in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
        let meta = json_of(&call(&s, "GET", path, "").await);
        assert_eq!(meta["issuer"], ISSUER);
        assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(meta["response_types_supported"], json!(["code"]));
        assert_eq!(meta["grant_types_supported"], json!(["authorization_code", "refresh_token"]));
        assert_eq!(meta["token_endpoint_auth_methods_supported"], json!(["none"]));
        assert_eq!(meta["authorization_response_iss_parameter_supported"], true);
        assert_eq!(meta["registration_endpoint"], format!("{ISSUER}/register"));
    }
    assert!(json_of(&call(&s, "GET", "/jwks.json", "").await)["keys"].is_array());
}

#[tokio::test]
async fn a_registered_client_logs_in_with_pkce_and_its_token_opens_the_mcp_endpoint_then_refreshes() {
    let h = Harness::new();
    let s = server(&h, Some("usr_admin")).await;
    let client = register(&s).await;
    let params = redirected(&call(&s, "GET", &authorize_uri(&client, &pkce()), "").await);
    assert_eq!((params["state"].as_str(), params["iss"].as_str()), ("s1", ISSUER));
    let resp = exchange(&s, &client, &params["code"], VERIFIER).await;
    let tokens = json_of(&resp);
    assert_eq!(resp.status(), 200, "{tokens}");
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let access = tokens["access_token"].as_str().unwrap();
    let listed = send(h.stateless(json!(1), "tools/list", json!({})).token(access)).await;
    assert_eq!(listed.status, 200, "{}", listed.json());
    assert!(!listed.result()["tools"].as_array().unwrap().is_empty());

    // The code is single-use.
    let again = exchange(&s, &client, &params["code"], VERIFIER).await;
    assert_eq!((again.status().as_u16(), json_of(&again)["error"].as_str()), (400, Some("invalid_grant")));

    // Refresh rotates; a reused refresh token revokes its family.
    let first = tokens["refresh_token"].as_str().unwrap().to_owned();
    let refresh = |token: String| {
        let (s, client) = (&s, client.clone());
        async move {
            call(s, "POST", "/token", &format!("grant_type=refresh_token&client_id={client}&refresh_token={token}"))
                .await
        }
    };
    let rotated = refresh(first.clone()).await;
    assert_eq!(rotated.status(), 200, "{}", json_of(&rotated));
    let second = json_of(&rotated)["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(second, first);
    let reused = refresh(first).await;
    assert_eq!(json_of(&reused)["error"], "invalid_grant");
    let after = refresh(second).await;
    assert_eq!(json_of(&after)["error"], "invalid_grant", "the family is revoked");
}

#[tokio::test]
async fn the_consent_page_names_the_client_and_grants_what_the_person_ticks_or_nothing() {
    let h = Harness::new();
    let s = server(&h, None).await;
    let client = register(&s).await;
    let scope = "&scope=emails%3Aread%20inboxes%3Aread";
    let page = call(&s, "GET", &authorize_uri(&client, &format!("{}{scope}", pkce())), "").await;
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    let html = String::from_utf8_lossy(page.body()).into_owned();
    assert!(html.contains("Test client") && html.contains(MCP_RESOURCE) && html.contains("emails:read"), "{html}");
    let sealed = html.split("name=\"request\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let form = |decision: &str| {
        format!(
            "request={}&sub=usr_viewer&scope=emails%3Aread&decision={decision}",
            url::form_urlencoded::byte_serialize(sealed.as_bytes()).collect::<String>()
        )
    };
    let approved = redirected(&call(&s, "POST", "/authorize", &form("approve")).await);
    let tokens = json_of(&exchange(&s, &client, &approved["code"], VERIFIER).await);
    assert_eq!(tokens["scope"], "emails:read", "only what was ticked");
    let denied = redirected(&call(&s, "POST", "/authorize", &form("deny")).await);
    assert_eq!(
        (denied["error"].as_str(), denied["iss"].as_str(), denied["state"].as_str()),
        ("access_denied", ISSUER, "s1")
    );
    // A forged form is refused.
    let forged =
        call(&s, "POST", "/authorize", "request=e30.AAAA&sub=usr_admin&scope=emails%3Aread&decision=approve").await;
    assert_eq!(forged.status(), 400);
}

#[tokio::test]
async fn prompt_consent_shows_the_page_under_auto_approve_and_prompt_none_never_does() {
    let h = Harness::new();
    let auto = server(&h, Some("usr_admin")).await;
    let client = register(&auto).await;
    // Under AUTO_APPROVE: straight back with a code, unless the client asks for the page.
    assert!(redirected(&call(&auto, "GET", &authorize_uri(&client, &pkce()), "").await).contains_key("code"));
    let page = call(&auto, "GET", &authorize_uri(&client, &format!("{}&prompt=consent", pkce())), "").await;
    assert_eq!(page.status(), 200);
    assert!(String::from_utf8_lossy(page.body()).contains("id=\"approve\""));
    assert!(
        redirected(&call(&auto, "GET", &authorize_uri(&client, &format!("{}&prompt=none", pkce())), "").await)
            .contains_key("code")
    );
    let both =
        redirected(&call(&auto, "GET", &authorize_uri(&client, &format!("{}&prompt=none%20login", pkce())), "").await);
    assert_eq!(both["error"], "invalid_request");

    // Without it, prompt=none cannot be answered without the person.
    let asking = server(&h, None).await;
    let client = register(&asking).await;
    let none = redirected(&call(&asking, "GET", &authorize_uri(&client, &format!("{}&prompt=none", pkce())), "").await);
    assert_eq!(
        (none["error"].as_str(), none["iss"].as_str(), none["state"].as_str()),
        ("consent_required", ISSUER, "s1")
    );
}

#[tokio::test]
async fn access_tokens_live_as_long_as_configured() {
    let h = Harness::new();
    let store = h.app().await.store.clone();
    let resources = vec![MCP_RESOURCE.to_owned(), API_AUDIENCE.to_owned()];
    let outbound = inbox::outbound::Outbound::new(true).unwrap();
    let options = Options { auto_approve: Some("usr_operator".into()), access_secs: Some(5), ..Options::default() };
    let s = AuthServer::new(h.issuer.clone(), ISSUER, resources, store, outbound, options);
    let client = register(&s).await;
    let params = redirected(&call(&s, "GET", &authorize_uri(&client, &pkce()), "").await);
    let tokens = json_of(&exchange(&s, &client, &params["code"], VERIFIER).await);
    assert_eq!(tokens["expires_in"], 5, "{tokens}");
    let claims = claims_of(tokens["access_token"].as_str().unwrap());
    assert_eq!(claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(), 5, "{claims}");
    assert_eq!(claims["sub"], "usr_operator");
}

#[tokio::test]
async fn pkce_resource_redirect_and_registration_are_enforced() {
    let h = Harness::new();
    let s = server(&h, Some("usr_admin")).await;
    let client = register(&s).await;
    for (extra, error) in [
        ("".to_owned(), "invalid_request"),
        (format!("&code_challenge={CHALLENGE}&code_challenge_method=plain"), "invalid_request"),
    ] {
        let params = redirected(&call(&s, "GET", &authorize_uri(&client, &extra), "").await);
        assert_eq!((params["error"].as_str(), params["iss"].as_str()), (error, ISSUER), "{extra}");
    }
    let other = format!(
        "/authorize?response_type=code&client_id={client}&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback&resource=https%3A%2F%2Fevil.example.com%2Fmcp{}",
        pkce()
    );
    assert_eq!(redirected(&call(&s, "GET", &other, "").await)["error"], "invalid_target");
    let wrong_redirect = format!(
        "/authorize?response_type=code&client_id={client}&redirect_uri=https%3A%2F%2Fevil.example.com%2Fcb{}",
        pkce()
    );
    let resp = call(&s, "GET", &wrong_redirect, "").await;
    assert_eq!(resp.status(), 400, "an unregistered redirect URI is never redirected to");
    assert!(resp.headers().get("location").is_none());
    let unknown = call(&s, "GET", &authorize_uri("dcr_nope", &pkce()), "").await;
    assert_eq!(unknown.status(), 400);
    // A wrong verifier.
    let params = redirected(&call(&s, "GET", &authorize_uri(&client, &pkce()), "").await);
    let wrong = exchange(&s, &client, &params["code"], &"x".repeat(43)).await;
    assert_eq!(json_of(&wrong)["error"], "invalid_grant");
    // Registration refuses redirect URIs that are not https or loopback.
    let body = json!({"redirect_uris": ["http://app.example.com/cb"]}).to_string();
    let resp = call(&s, "POST", "/register", &body).await;
    assert_eq!((resp.status().as_u16(), json_of(&resp)["error"].as_str()), (400, Some("invalid_redirect_uri")));
}

fn page_error(resp: &http::Response<Bytes>) -> String {
    assert_eq!(resp.status(), 400);
    assert!(resp.headers().get("location").is_none(), "never redirected");
    String::from_utf8_lossy(resp.body()).into_owned()
}

#[tokio::test]
async fn a_client_metadata_document_is_fetched_guarded_and_must_name_itself_and_its_redirects() {
    let h = Harness::new();
    let s = server(&h, Some("usr_admin")).await;
    let served = JwksServer::start(String::new()).await;
    let id = served.url.clone();
    let document = |client_id: &str, extra: &str| {
        format!(r#"{{"client_id":"{client_id}","client_name":"Doc client","redirect_uris":["{REDIRECT}"]{extra}}}"#)
    };
    let encoded = url::form_urlencoded::byte_serialize(id.as_bytes()).collect::<String>();
    served.set_document(document(&id, ""));
    let params = redirected(&call(&s, "GET", &authorize_uri(&encoded, &pkce()), "").await);
    let tokens = json_of(&exchange(&s, &id, &params["code"], VERIFIER).await);
    assert!(tokens["access_token"].is_string(), "{tokens}");

    // A redirect URI not in its list.
    let elsewhere = format!(
        "/authorize?response_type=code&client_id={encoded}&redirect_uri=http%3A%2F%2F127.0.0.1%2Fother{}",
        pkce()
    );
    assert!(page_error(&call(&s, "GET", &elsewhere, "").await).contains("redirect_uri"));

    // Each refused document (a fresh server each time: documents are cached
    // by URL): the person reads one text, the server's log says why.
    for (mode, body, why) in [
        (0, document("https://someone.else.example.com/client.json", ""), "its client_id is not its URL"),
        (0, document("SELF", &format!(r#","pad":"{}""#, "x".repeat(6000))), "larger than"),
        (4, String::new(), "redirects are not followed"),
    ] {
        let other = JwksServer::start(String::new()).await;
        let body = body.replace("SELF", &other.url);
        other.set_document(body);
        other.set_mode(mode);
        let encoded = url::form_urlencoded::byte_serialize(other.url.as_bytes()).collect::<String>();
        let mut text = String::new();
        let logs = capture_logs(async {
            text = page_error(&call(&s, "GET", &authorize_uri(&encoded, &pkce()), "").await);
        })
        .await;
        assert!(text.contains(DOCUMENT_REFUSED), "{why}: {text}");
        assert!(!text.contains(why), "the reason stays in the log: {text}");
        assert!(logs.contains("client metadata document refused") && logs.contains(why), "{why}: {logs}");
    }
    for private in ["https://10.1.2.3/client.json", "https://169.254.169.254/latest/meta-data"] {
        let encoded = url::form_urlencoded::byte_serialize(private.as_bytes()).collect::<String>();
        let text = page_error(&call(&s, "GET", &authorize_uri(&encoded, &pkce()), "").await);
        assert!(text.contains(DOCUMENT_REFUSED), "{private}: {text}");
    }
}

/// What the person reads for every refused client metadata document.
const DOCUMENT_REFUSED: &str =
    "The client&#39;s metadata document cannot be used (the development server&#39;s log says why)";

/// The `id="error"` text of an error page.
fn error_text(resp: &http::Response<Bytes>) -> String {
    let html = page_error(resp);
    html.split("<p id=\"error\">").nth(1).and_then(|rest| rest.split("</p>").next()).unwrap_or(&html).to_owned()
}

#[tokio::test]
async fn every_refused_client_document_fetch_reads_the_same_whatever_failed() {
    let h = Harness::new();
    let s = server(&h, Some("usr_admin")).await;
    // A closed loopback port (connection refused), a server answering 500,
    // one answering a body that is not JSON, a private address, a plain-http
    // document elsewhere: under DNS rebinding, different texts would map the
    // machine's ports.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/client.json", listener.local_addr().unwrap())
    };
    let failing = JwksServer::start(String::new()).await;
    failing.set_mode(3);
    let garbage = JwksServer::start(String::new()).await;
    garbage.set_mode(1);
    let mut texts = Vec::new();
    for url in
        [closed.as_str(), &failing.url, &garbage.url, "https://10.1.2.3/client.json", "http://example.com/c.json"]
    {
        let encoded = url::form_urlencoded::byte_serialize(url.as_bytes()).collect::<String>();
        texts.push((url.to_owned(), error_text(&call(&s, "GET", &authorize_uri(&encoded, &pkce()), "").await)));
    }
    for (url, text) in &texts {
        assert_eq!(text, DOCUMENT_REFUSED, "{url}");
    }
}

#[tokio::test]
async fn a_foreign_host_is_refused_on_every_route_and_registers_nothing() {
    let h = Harness::new();
    // As `make run` starts it: on loopback, answering its own port's loopback names.
    let s = server_at(&h, "http://127.0.0.1:4181").await;
    let metadata = "/.well-known/oauth-authorization-server";
    for host in ["127.0.0.1:4181", "localhost:4181", "[::1]:4181"] {
        let resp = call_with(&s, "GET", metadata, "", &[("host", host)]).await;
        assert_eq!(resp.status(), 200, "{host}");
    }
    let before = table_dump_sorted(&h.table).await;
    let registration = json!({"redirect_uris": [REDIRECT], "client_name": "Rebound"}).to_string();
    let authorize = authorize_uri("dcr_x", &pkce());
    for host in ["rebind.attacker.example", "rebind.attacker.example:4181", "127.0.0.1:4182", "localhost"] {
        for (method, uri, body) in [
            ("POST", "/register", registration.as_str()),
            ("GET", metadata, ""),
            ("GET", authorize.as_str(), ""),
            ("POST", "/authorize", "request=e30.AAAA&decision=approve"),
            ("POST", "/token", "grant_type=refresh_token&client_id=dcr_x&refresh_token=x"),
        ] {
            let resp = call_with(&s, method, uri, body, &[("host", host)]).await;
            assert_eq!(
                (resp.status().as_u16(), json_of(&resp)["error"].as_str()),
                (403, Some("host_not_allowed")),
                "{host} {method} {uri}"
            );
        }
    }
    assert_eq!(table_dump_sorted(&h.table).await, before, "nothing was registered");
}

#[tokio::test]
async fn a_request_from_a_foreign_origin_gets_403_and_the_servers_own_pages_pass() {
    let h = Harness::new();
    let s = server(&h, None).await;
    let registration = json!({"redirect_uris": [REDIRECT], "client_name": "Cross-site"}).to_string();
    let before = table_dump_sorted(&h.table).await;
    for origin in ["https://attacker.example", "http://127.0.0.1:4181", "null"] {
        for (method, uri, body) in [
            ("POST", "/register", registration.as_str()),
            ("GET", "/jwks.json", ""),
            ("POST", "/authorize", "request=e30.AAAA&decision=approve"),
            ("POST", "/token", "grant_type=refresh_token&client_id=dcr_x&refresh_token=x"),
        ] {
            let resp = call_with(&s, method, uri, body, &[("origin", origin)]).await;
            assert_eq!(
                (resp.status().as_u16(), json_of(&resp)["error"].as_str()),
                (403, Some("origin_not_allowed")),
                "{origin} {method} {uri}"
            );
        }
    }
    assert_eq!(table_dump_sorted(&h.table).await, before, "nothing was registered");
    // The consent form, posted from the server's own page, carries its own origin.
    let client = register(&s).await;
    let page = call(&s, "GET", &authorize_uri(&client, &pkce()), "").await;
    let sealed = sealed_of(&page);
    let posted = call_with(&s, "POST", "/authorize", &consent_form(&sealed, "approve"), &[("origin", ISSUER)]).await;
    assert!(redirected(&posted).contains_key("code"));
}

#[tokio::test]
async fn registration_takes_json_only() {
    let h = Harness::new();
    let s = server(&h, None).await;
    let registration = json!({"redirect_uris": [REDIRECT], "client_name": "Form"}).to_string();
    let before = table_dump_sorted(&h.table).await;
    for media in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
        let resp = call_with(&s, "POST", "/register", &registration, &[("content-type", media)]).await;
        assert_eq!(
            (resp.status().as_u16(), json_of(&resp)["error"].as_str()),
            (415, Some("unsupported_media_type")),
            "{media}"
        );
    }
    assert_eq!(table_dump_sorted(&h.table).await, before, "nothing was registered");
    let resp =
        call_with(&s, "POST", "/register", &registration, &[("content-type", "application/json; charset=utf-8")]).await;
    assert_eq!(resp.status(), 201);
}

/// The consent page's sealed request.
fn sealed_of(page: &http::Response<Bytes>) -> String {
    assert_eq!(page.status(), 200);
    let html = String::from_utf8_lossy(page.body()).into_owned();
    html.split("name=\"request\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_owned()
}

/// The consent form as the page posts it: the demo viewer, `emails:read` ticked.
fn consent_form(sealed: &str, decision: &str) -> String {
    format!(
        "request={}&sub=usr_viewer&scope=emails%3Aread&decision={decision}",
        url::form_urlencoded::byte_serialize(sealed.as_bytes()).collect::<String>()
    )
}

/// The consent forms' clock in `an_expired_consent_form_is_refused_and_issues_no_code`.
static CONSENT_CLOCK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn consent_clock() -> u64 {
    CONSENT_CLOCK.load(std::sync::atomic::Ordering::SeqCst)
}

#[tokio::test]
async fn an_expired_consent_form_is_refused_and_issues_no_code() {
    use std::sync::atomic::Ordering::SeqCst;
    let h = Harness::new();
    let s = server(&h, None).await.with_clock(consent_clock);
    let client = register(&s).await;
    let shown = 1_700_000_000;
    CONSENT_CLOCK.store(shown, SeqCst);
    let sealed = sealed_of(&call(&s, "GET", &authorize_uri(&client, &pkce()), "").await);
    // Ten minutes after the page was shown, the form still works.
    CONSENT_CLOCK.store(shown + 600, SeqCst);
    assert!(redirected(&call(&s, "POST", "/authorize", &consent_form(&sealed, "approve")).await).contains_key("code"));
    // A second later it does not, and nothing is issued.
    CONSENT_CLOCK.store(shown + 601, SeqCst);
    let before = table_dump_sorted(&h.table).await;
    let late = call(&s, "POST", "/authorize", &consent_form(&sealed, "approve")).await;
    assert!(error_text(&late).contains("expired"), "{}", error_text(&late));
    assert_eq!(table_dump_sorted(&h.table).await, before, "no code was stored");
}
