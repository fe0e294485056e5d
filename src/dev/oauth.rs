//! The development authorization server: OAuth 2.1 for `make run`, so MCP
//! clients that only log in (no pasted token) can connect. A development
//! component, never deployed (the `dev` feature): production uses the
//! customer's identity provider.
//!
//! - Every route first meets the main server's gate (`crate::gate`): the
//!   `Host` must be this server's own authority or a loopback name of its
//!   port (`127.0.0.1`, `localhost`, `[::1]`), so a DNS-rebound name is
//!   refused; an `Origin`, when present, must be this server's own (or one in
//!   `ALLOWED_ORIGINS`), so a page elsewhere cannot drive a login. Both are
//!   answered 403 before anything is read or stored.
//! - Metadata (RFC 8414) at `/.well-known/oauth-authorization-server` and the
//!   OpenID discovery path; the JWKS at `/jwks.json`.
//! - Clients: a `client_id` that is an https URL is a Client ID Metadata
//!   Document, fetched with the webhooks' guarded client (the name resolved
//!   here, every non-public address refused — loopback only under the
//!   development flag — the checked address pinned, no redirects, at most
//!   `MAX_DOCUMENT_BYTES`, a 5 s timeout) and kept `DOCUMENT_SECS` whatever it
//!   says; its `client_id` must be its URL, and redirect URIs come only from
//!   its list. Every refused document gets one text, whatever went wrong
//!   (no answer, a timeout, a refused address, a bad status, a body that is
//!   not a usable document): different texts would tell a page which loopback
//!   ports answer. Why goes to the server's log. Or dynamic client
//!   registration (RFC 7591, `POST /register`, a JSON body: anything else is
//!   415, so no HTML form can register): public clients
//!   (`token_endpoint_auth_method: none`). Redirect URIs are
//!   https, or http on loopback (RFC 8252: a loopback URI matches on any port).
//! - Authorization code with PKCE, S256 only (`GET /authorize`): exact
//!   redirect URI matching; the RFC 8707 `resource` becomes the token's
//!   audience and must be one of this server's (the MCP endpoint or the REST
//!   API); `state` is returned as given, and `iss` is in every redirect (RFC
//!   9207). The person approves on a consent page (no script) naming the
//!   client, the resource and the scopes, choosing who they are among the
//!   demo people and which scopes to grant; `AUTO_APPROVE=<sub>` skips the page
//!   for scripted clients, unless the request says OpenID Connect's
//!   `prompt=consent` (a client that wants the person asked). The page's
//!   sealed form is good for `CONSENT_SECS` (ten minutes): an older one is
//!   refused with a page saying so, and nothing is issued. `prompt=none`
//!   never shows the page: without `AUTO_APPROVE` it is refused with
//!   `consent_required`.
//! - Tokens (`POST /token`): codes are single-use and live 60 s; access tokens
//!   live an hour (`DEV_ACCESS_TOKEN_SECS` shortens it, to see clients
//!   refresh); refresh tokens rotate on use, and a refresh token used a
//!   second time revokes its whole family. All state is in the local table
//!   with TTLs (`store::authz`).

use std::collections::BTreeMap;
use std::time::Duration;

use aws_lc_rs::digest::{SHA256, digest};
use aws_lc_rs::hmac;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::{Method, Response, StatusCode, header};
use serde_json::{Value, json};

use super::DevIssuer;
use crate::domain::Scope;
use crate::gate::Allowlist;
use crate::outbound::Outbound;
use crate::store::Store;
use crate::store::authz::{Client, Grant, Spent};
use crate::telemetry::loggable;

/// How long an access token lives, unless `DEV_ACCESS_TOKEN_SECS` says.
const ACCESS_SECS: u64 = 3600;
/// How long a refresh token lives.
const REFRESH_SECS: u64 = 30 * 86_400;
/// How long a code lives.
const CODE_SECS: u64 = 60;
/// How long a registered client is kept.
const CLIENT_SECS: u64 = 90 * 86_400;
/// The largest Client ID Metadata Document read.
const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
/// How long a fetched client document is used, whatever it asks.
const DOCUMENT_SECS: u64 = 300;
/// How long a consent page's form may be sent back.
const CONSENT_SECS: u64 = 600;
/// What the person reads for every refused client document: the reasons stay
/// in the server's log (see the module docs).
const DOCUMENT_REFUSED: &str = "The client's metadata document cannot be used (the development server's log says why)";
/// The consent page's look: plain, readable, no script.
const CONSENT_STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f5f5;color:#222}\
main{max-width:34rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border-radius:8px;\
box-shadow:0 1px 4px #0002}h1{font-size:1.4rem}fieldset{border:1px solid #ddd;border-radius:6px;margin:1rem 0}\
.note{background:#fff8e1;padding:.5rem .75rem;border-radius:6px;font-size:.9rem}.small{font-size:.85rem;color:#555}\
code{word-break:break-all}button{font-size:1rem;padding:.4rem 1.2rem;margin-right:.5rem}\
#approve{background:#1a5fb4;color:#fff;border:0;border-radius:4px}";
/// The organization of the demo people.
const ORG: &str = "org_demo";
/// Who may log in on the consent page: the demo people.
const PEOPLE: [(&str, &str); 3] =
    [("usr_admin", "Demo admin"), ("usr_operator", "Demo operator"), ("usr_viewer", "Demo viewer")];

/// How the server behaves, from the environment of `make run`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `AUTO_APPROVE`: approve every login as this demo person, without the page.
    pub auto_approve: Option<String>,
    /// `DEV_ACCESS_TOKEN_SECS`: how long access tokens live (default an hour).
    pub access_secs: Option<u64>,
    /// `ALLOWED_ORIGINS`: browser origins accepted besides the server's own,
    /// as the main server accepts them.
    pub allowed_origins: Vec<String>,
}

impl Options {
    /// Reads `AUTO_APPROVE` and `DEV_ACCESS_TOKEN_SECS`; a person who is not
    /// one of the demo people, or a lifetime outside 1 s to a day, is refused.
    pub fn from_env() -> Result<Options, String> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let auto_approve = var("AUTO_APPROVE");
        if let Some(sub) = &auto_approve
            && !PEOPLE.iter().any(|(p, _)| p == sub)
        {
            let people: Vec<&str> = PEOPLE.iter().map(|(p, _)| *p).collect();
            return Err(format!("AUTO_APPROVE={sub}: not a demo person (one of {})", people.join(", ")));
        }
        let access_secs = match var("DEV_ACCESS_TOKEN_SECS") {
            None => None,
            Some(text) => match text.parse::<u64>() {
                Ok(secs @ 1..=86_400) => Some(secs),
                _ => return Err(format!("DEV_ACCESS_TOKEN_SECS={text}: seconds from 1 to 86400")),
            },
        };
        Ok(Options { auto_approve, access_secs, allowed_origins: Vec::new() })
    }
}

pub struct AuthServer {
    issuer: DevIssuer,
    /// This server's URL: the `iss` of its tokens and metadata.
    url: String,
    /// The resources tokens may be issued for (their audiences).
    resources: Vec<String>,
    store: Store,
    /// Approve every request as this person, without the consent page.
    auto_approve: Option<String>,
    /// How long access tokens live.
    access_secs: u64,
    /// Signs the consent form's hidden request (a key per process).
    form_key: hmac::Key,
    /// Fetches client documents (the webhooks' guarded client).
    outbound: Outbound,
    /// Client documents fetched, with when.
    documents: crate::expiring::Expiring<String, Client>,
    /// The `Host`s and `Origin`s it answers (see the module docs).
    callers: Allowlist,
    /// The time, in Unix seconds, that consent forms are dated and aged by.
    clock: fn() -> u64,
}

fn random_token() -> String {
    let mut bytes = [0u8; 32];
    // No randomness: an empty token is refused everywhere it is used.
    if getrandom::fill(&mut bytes).is_err() {
        return String::new();
    }
    URL_SAFE_NO_PAD.encode(bytes)
}

fn hashed(token: &str) -> String {
    crate::domain::hex(digest(&SHA256, token.as_bytes()).as_ref())
}

fn response(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<Bytes> {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
    response.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    response
}

fn json_response(status: StatusCode, body: &Value) -> Response<Bytes> {
    response(status, "application/json", body.to_string())
}

/// An OAuth error answer (RFC 6749 §5.2, RFC 7591 §3.2.2).
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response<Bytes> {
    json_response(status, &json!({"error": error, "error_description": description}))
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// A page saying why the request cannot go back to the client (unknown
/// client or redirect URI: never redirect to an address not registered).
fn error_page(message: &str) -> Response<Bytes> {
    let body = format!(
        "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>Cannot authorize</title>\
         <body><h1>Cannot authorize</h1><p id=\"error\">{}</p></body></html>",
        html_escape(message)
    );
    response(StatusCode::BAD_REQUEST, "text/html; charset=utf-8", body)
}

fn redirect(location: &str) -> Response<Bytes> {
    let mut answer = response(StatusCode::FOUND, "text/plain", Bytes::new());
    if let Ok(value) = header::HeaderValue::from_str(location) {
        answer.headers_mut().insert(header::LOCATION, value);
    }
    answer
}

/// `uri` with `params` added to its query.
fn with_params(uri: &str, params: &[(&str, &str)]) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        query.append_pair(k, v);
    }
    let separator = if uri.contains('?') { '&' } else { '?' };
    format!("{uri}{separator}{}", query.finish())
}

fn is_loopback(url: &url::Url) -> bool {
    matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"))
}

/// Who may call the server at `url`: its own authority and origin, every
/// loopback name of its port when it is on loopback (as the main server
/// answers locally), and `extra_origins`.
fn callers(url: &str, extra_origins: &[String]) -> Allowlist {
    let Ok(own) = url::Url::parse(url) else { return Allowlist::default() };
    let authority = own.host_str().map(|h| own.port().map_or_else(|| h.to_owned(), |p| format!("{h}:{p}")));
    let mut hosts: Vec<String> = authority.into_iter().collect();
    let mut origins = vec![own.origin().ascii_serialization()];
    if is_loopback(&own)
        && let Some(port) = own.port_or_known_default()
    {
        hosts.extend(crate::gate::loopback_hosts(port));
        origins.extend(crate::gate::loopback_origins(port));
    }
    origins.extend(extra_origins.iter().cloned());
    Allowlist::new(hosts, origins)
}

/// A redirect URI a client may register: https, or http on loopback.
fn acceptable_redirect(uri: &str) -> bool {
    url::Url::parse(uri)
        .is_ok_and(|u| u.fragment().is_none() && (u.scheme() == "https" || (u.scheme() == "http" && is_loopback(&u))))
}

/// Whether `given` is one of `client`'s redirect URIs: exactly, or, for a
/// loopback URI, on any port (RFC 8252 §7.3).
fn registered(client: &Client, given: &str) -> bool {
    client.redirect_uris.iter().any(|uri| {
        uri == given
            || match (url::Url::parse(uri), url::Url::parse(given)) {
                (Ok(mut a), Ok(mut b)) if is_loopback(&a) && a.scheme() == "http" && b.scheme() == "http" => {
                    let _ = (a.set_port(None), b.set_port(None));
                    a == b
                }
                _ => false,
            }
    })
}

fn form(body: &[u8]) -> BTreeMap<String, Vec<String>> {
    let mut fields: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in url::form_urlencoded::parse(body) {
        fields.entry(k.into_owned()).or_default().push(v.into_owned());
    }
    fields
}

fn one<'a>(fields: &'a BTreeMap<String, Vec<String>>, name: &str) -> Option<&'a str> {
    match fields.get(name).map(Vec::as_slice) {
        Some([value]) => Some(value.as_str()),
        _ => None,
    }
}

/// A client from its metadata document, fetched from `url`: its `client_id`
/// must be that URL, and it must list its redirect URIs.
fn document_client(url: &str, body: &[u8]) -> Result<Client, String> {
    let refuse = |why: &str| Err(format!("The client's metadata document cannot be used: {why}"));
    let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(body) else {
        return refuse("it is not a JSON object");
    };
    if doc.get("client_id").and_then(Value::as_str) != Some(url) {
        return refuse("its client_id is not its URL");
    }
    let uris: Vec<String> = match doc.get("redirect_uris") {
        Some(Value::Array(uris)) if !uris.is_empty() => {
            uris.iter().filter_map(Value::as_str).map(str::to_owned).collect()
        }
        _ => return refuse("it lists no redirect_uris"),
    };
    if uris.iter().any(|u| !acceptable_redirect(u)) {
        return refuse("a redirect URI is neither https nor loopback");
    }
    if !matches!(doc.get("token_endpoint_auth_method").and_then(Value::as_str), None | Some("none")) {
        return refuse("only public clients (token_endpoint_auth_method none) are accepted here");
    }
    Ok(Client {
        client_id: url.to_owned(),
        client_name: doc.get("client_name").and_then(Value::as_str).map(|n| n.chars().take(100).collect()),
        redirect_uris: uris,
        application_type: "native".into(),
    })
}

/// An authorization request, checked: what a code will stand for.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Authorization {
    client_id: String,
    client_name: String,
    redirect_uri: String,
    state: Option<String>,
    resource: String,
    scopes: Vec<String>,
    code_challenge: String,
    /// When the consent page was made (Unix seconds): the form expires.
    shown_at: u64,
}

impl AuthServer {
    pub fn new(
        issuer: DevIssuer,
        url: &str,
        resources: Vec<String>,
        store: Store,
        outbound: Outbound,
        options: Options,
    ) -> Self {
        let mut key = [0u8; 32];
        // Without randomness the key is zeros: the page still works, and it is a development server.
        let _ = getrandom::fill(&mut key);
        AuthServer {
            callers: callers(url, &options.allowed_origins),
            clock: crate::sys::unix_now,
            issuer,
            url: url.trim_end_matches('/').to_owned(),
            resources,
            store,
            auto_approve: options.auto_approve,
            access_secs: options.access_secs.unwrap_or(ACCESS_SECS),
            form_key: hmac::Key::new(hmac::HMAC_SHA256, &key),
            outbound,
            documents: crate::expiring::Expiring::new(Duration::from_secs(DOCUMENT_SECS)),
        }
    }

    /// The same server, its consent forms dated by `clock` (Unix seconds):
    /// a test ages a form without waiting for it.
    pub fn with_clock(self, clock: fn() -> u64) -> Self {
        AuthServer { clock, ..self }
    }

    /// The client `client_id` names: its metadata document (an URL), or a
    /// registered client; why not, for the person to read.
    async fn client(&self, client_id: &str) -> Result<Client, String> {
        let Ok(url) = url::Url::parse(client_id) else {
            return match self.store.get_client(client_id).await {
                Ok(Some(client)) => Ok(client),
                Ok(None) => Err("This client is not registered with this server".into()),
                Err(_) => Err("The server is temporarily unavailable; try again".into()),
            };
        };
        self.documents
            .get_or_load(client_id.to_owned(), async || {
                let fetched = self.outbound.fetch_document(&url, MAX_DOCUMENT_BYTES).await;
                fetched.and_then(|body| document_client(client_id, &body)).map_err(|why| {
                    // Both carry what the client chose: through the log filter.
                    let (client_id, reason) = (loggable(client_id), loggable(&why));
                    tracing::warn!(%client_id, %reason, "client metadata document refused");
                    DOCUMENT_REFUSED.to_owned()
                })
            })
            .await
    }

    /// One request to the authorization server.
    pub async fn handle(&self, req: http::Request<Bytes>) -> Response<Bytes> {
        if let Err(refusal) = self.callers.check(req.headers(), req.uri()) {
            return oauth_error(StatusCode::FORBIDDEN, refusal.code(), refusal.message());
        }
        let (method, path) = (req.method().clone(), req.uri().path().to_owned());
        let query = req.uri().query().unwrap_or_default().to_owned();
        match (method, path.as_str()) {
            (Method::GET, "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration") => {
                json_response(StatusCode::OK, &self.metadata())
            }
            (Method::GET, "/jwks.json") => json_response(StatusCode::OK, &self.issuer.jwks()),
            (Method::POST, "/register") => self.register(req.headers(), req.body()).await,
            (Method::GET, "/authorize") => self.authorize(&form(query.as_bytes())).await,
            (Method::POST, "/authorize") => self.consent(&form(req.body())).await,
            (Method::POST, "/token") => self.token(&form(req.body())).await,
            _ => oauth_error(StatusCode::NOT_FOUND, "not_found", "No such endpoint"),
        }
    }

    fn metadata(&self) -> Value {
        let scopes: Vec<&str> = Scope::ALL.iter().filter(|s| **s != Scope::EmailsIngest).map(|s| s.as_str()).collect();
        json!({
            "issuer": self.url,
            "authorization_endpoint": format!("{}/authorize", self.url),
            "token_endpoint": format!("{}/token", self.url),
            "registration_endpoint": format!("{}/register", self.url),
            "jwks_uri": format!("{}/jwks.json", self.url),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": scopes,
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": true,
        })
    }

    async fn register(&self, headers: &http::HeaderMap, body: &[u8]) -> Response<Bytes> {
        // JSON only (RFC 7591 §3.1): a browser sends it cross-site only after
        // a CORS preflight this server never grants, where an HTML form's
        // `text/plain` needs none.
        if !crate::gate::is_json(headers) {
            return oauth_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "Send the client metadata as JSON, with Content-Type: application/json",
            );
        }
        let Ok(Value::Object(meta)) = serde_json::from_slice::<Value>(body) else {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_client_metadata", "The body must be a JSON object");
        };
        let given = match meta.get("redirect_uris") {
            Some(Value::Array(uris)) if !uris.is_empty() && uris.len() <= 10 => uris,
            _ => return oauth_error(StatusCode::BAD_REQUEST, "invalid_redirect_uri", "redirect_uris: 1 to 10 URIs"),
        };
        let uris: Vec<String> = given.iter().filter_map(Value::as_str).map(str::to_owned).collect();
        if uris.len() != given.len() || uris.iter().any(|u| !acceptable_redirect(u)) {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_redirect_uri",
                "Each redirect URI must be https, or http on a loopback address",
            );
        }
        match meta.get("token_endpoint_auth_method").and_then(Value::as_str) {
            None | Some("none") => {}
            Some(_) => {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_client_metadata",
                    "Only public clients (token_endpoint_auth_method none) are registered here",
                );
            }
        }
        let client = Client {
            client_id: format!("dcr_{}", random_token()),
            client_name: meta.get("client_name").and_then(Value::as_str).map(|n| n.chars().take(100).collect()),
            redirect_uris: uris,
            application_type: match meta.get("application_type").and_then(Value::as_str) {
                Some("native") => "native".into(),
                _ => "web".into(),
            },
        };
        if self.store.put_client(&client, CLIENT_SECS).await.is_err() {
            return oauth_error(StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable", "Try again");
        }
        json_response(
            StatusCode::CREATED,
            &json!({
                "client_id": client.client_id,
                "client_id_issued_at": crate::sys::unix_now(),
                "client_name": client.client_name,
                "redirect_uris": client.redirect_uris,
                "application_type": client.application_type,
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }),
        )
    }

    /// The redirect of an error back to the client, with `state` and `iss`.
    fn refuse(&self, redirect_uri: &str, state: Option<&str>, error: &str, description: &str) -> Response<Bytes> {
        let mut params = vec![("error", error), ("error_description", description), ("iss", self.url.as_str())];
        if let Some(state) = state {
            params.push(("state", state));
        }
        redirect(&with_params(redirect_uri, &params))
    }

    async fn authorize(&self, q: &BTreeMap<String, Vec<String>>) -> Response<Bytes> {
        let Some(client_id) = one(q, "client_id") else { return error_page("client_id is required") };
        let client = match self.client(client_id).await {
            Ok(client) => client,
            Err(why) => return error_page(&why),
        };
        let Some(redirect_uri) = one(q, "redirect_uri").filter(|r| registered(&client, r)) else {
            return error_page("redirect_uri is not one of the client's registered redirect URIs");
        };
        let state = one(q, "state");
        if one(q, "response_type") != Some("code") {
            return self.refuse(redirect_uri, state, "unsupported_response_type", "Only response_type=code");
        }
        let challenge = match (one(q, "code_challenge"), one(q, "code_challenge_method")) {
            (Some(c), Some("S256")) if (43..=128).contains(&c.len()) => c.to_owned(),
            _ => {
                return self.refuse(
                    redirect_uri,
                    state,
                    "invalid_request",
                    "PKCE with code_challenge_method=S256 is required",
                );
            }
        };
        let resource =
            one(q, "resource").map_or_else(|| self.resources.first().cloned().unwrap_or_default(), str::to_owned);
        if !self.resources.contains(&resource) {
            return self.refuse(redirect_uri, state, "invalid_target", "resource is not a resource of this server");
        }
        let asked: Vec<String> = match one(q, "scope") {
            Some(scope) => scope.split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect(),
            None => Scope::USER.iter().map(|s| s.as_str().to_owned()).collect(),
        };
        // Scopes a person may be given (not the mail pipeline's); others are dropped.
        let ours: Vec<String> =
            asked.into_iter().filter(|s| Scope::parse(s).is_some_and(|scope| scope != Scope::EmailsIngest)).collect();
        if ours.is_empty() {
            return self.refuse(redirect_uri, state, "invalid_scope", "None of the scopes asked for is known here");
        }
        let request = Authorization {
            client_name: client.client_name.clone().unwrap_or_else(|| client.client_id.clone()),
            client_id: client.client_id,
            redirect_uri: redirect_uri.to_owned(),
            state: state.map(str::to_owned),
            resource,
            scopes: ours,
            code_challenge: challenge,
            shown_at: (self.clock)(),
        };
        // OpenID Connect's `prompt` (space-separated): `consent`, `login` or
        // `select_account` ask for the page even under AUTO_APPROVE; `none`
        // forbids it.
        let prompts: Vec<&str> = one(q, "prompt").map(|p| p.split(' ').collect()).unwrap_or_default();
        let ask = prompts.iter().any(|p| matches!(*p, "consent" | "login" | "select_account"));
        match (&self.auto_approve, ask, prompts.contains(&"none")) {
            (_, true, true) => self.refuse(redirect_uri, state, "invalid_request", "prompt=none with another prompt"),
            (Some(sub), false, _) => {
                let scopes = request.scopes.clone();
                self.approve(&request, sub, &scopes).await
            }
            (None, _, true) => {
                self.refuse(redirect_uri, state, "consent_required", "The person must approve on the consent page")
            }
            _ => self.consent_page(&request),
        }
    }

    fn seal(&self, request: &Authorization) -> String {
        let text = serde_json::to_string(request).unwrap_or_default();
        let tag = hmac::sign(&self.form_key, text.as_bytes());
        format!("{}.{}", URL_SAFE_NO_PAD.encode(text), URL_SAFE_NO_PAD.encode(tag.as_ref()))
    }

    fn open(&self, sealed: &str) -> Option<Authorization> {
        let (text, tag) = sealed.split_once('.')?;
        let text = URL_SAFE_NO_PAD.decode(text).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        hmac::verify(&self.form_key, &text, &tag).ok()?;
        serde_json::from_slice(&text).ok()
    }

    fn consent_page(&self, request: &Authorization) -> Response<Bytes> {
        let people: String = PEOPLE
            .iter()
            .enumerate()
            .map(|(i, (sub, label))| {
                let checked = if i == 0 { " checked" } else { "" };
                format!(
                    "<label><input type=\"radio\" name=\"sub\" value=\"{sub}\"{checked}> {label} ({sub})</label><br>"
                )
            })
            .collect();
        let scopes: String = request
            .scopes
            .iter()
            .map(|s| {
                let s = html_escape(s);
                format!("<label><input type=\"checkbox\" name=\"scope\" value=\"{s}\" checked> {s}</label><br>")
            })
            .collect();
        let body = format!(
            "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>Authorize {client}</title><style>{CONSENT_STYLE}</style><body><main>\
             <p class=\"note\">Kobana Autonomous Inbox — development login (<code>make run</code>). \
             A deployment signs people in with the organization's identity provider.</p>\
             <h1>Authorize <span id=\"client\">{client}</span></h1>\
             <p>It asks to use <strong id=\"resource\">{resource}</strong> on your behalf, and will \
             send you back to <code id=\"redirect\">{redirect}</code>.</p>\
             <p class=\"small\">Client id: <code id=\"client-id\">{client_id}</code></p>\
             <form method=\"post\" action=\"/authorize\">\
             <input type=\"hidden\" name=\"request\" value=\"{sealed}\">\
             <fieldset><legend>Who you are</legend>{people}</fieldset>\
             <fieldset><legend>What it may do</legend>{scopes}</fieldset>\
             <button type=\"submit\" name=\"decision\" value=\"approve\" id=\"approve\">Approve</button> \
             <button type=\"submit\" name=\"decision\" value=\"deny\" id=\"deny\">Deny</button>\
             </form></main></body></html>",
            client = html_escape(&request.client_name),
            client_id = html_escape(&request.client_id),
            resource = html_escape(&request.resource),
            redirect = html_escape(&request.redirect_uri),
            sealed = html_escape(&self.seal(request)),
        );
        let mut page = response(StatusCode::OK, "text/html; charset=utf-8", body);
        // Never framed (a framed consent page can be clicked through), no
        // script, nothing loaded. No `form-action`: browsers apply it to the
        // redirect to the client that follows the form.
        let headers = page.headers_mut();
        headers.insert(header::X_FRAME_OPTIONS, header::HeaderValue::from_static("DENY"));
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            header::HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
        );
        page
    }

    async fn consent(&self, f: &BTreeMap<String, Vec<String>>) -> Response<Bytes> {
        let Some(request) = one(f, "request").and_then(|sealed| self.open(sealed)) else {
            return error_page("The consent form is not one this server made (or it changed)");
        };
        if (self.clock)().saturating_sub(request.shown_at) > CONSENT_SECS {
            return error_page(
                "This consent form has expired (it is good for ten minutes): start the login again from the client",
            );
        }
        let state = request.state.as_deref();
        if one(f, "decision") != Some("approve") {
            return self.refuse(&request.redirect_uri, state, "access_denied", "The person declined");
        }
        let Some(sub) = one(f, "sub").filter(|s| PEOPLE.iter().any(|(p, _)| p == s)) else {
            return error_page("Choose who you are");
        };
        // Only scopes the request asked for; an unticked one is not granted.
        let granted: Vec<String> =
            f.get("scope").into_iter().flatten().filter(|s| request.scopes.contains(s)).cloned().collect();
        if granted.is_empty() {
            return self.refuse(&request.redirect_uri, state, "access_denied", "No scope was granted");
        }
        self.approve(&request, sub, &granted).await
    }

    async fn approve(&self, request: &Authorization, sub: &str, scopes: &[String]) -> Response<Bytes> {
        let code = random_token();
        let grant = Grant {
            client_id: request.client_id.clone(),
            redirect_uri: request.redirect_uri.clone(),
            resource: request.resource.clone(),
            scope: scopes.join(" "),
            sub: sub.to_owned(),
            org: ORG.to_owned(),
            code_challenge: Some(request.code_challenge.clone()),
            family: None,
        };
        if code.is_empty() || self.store.put_code(&hashed(&code), &grant, CODE_SECS).await.is_err() {
            let state = request.state.as_deref();
            return self.refuse(&request.redirect_uri, state, "temporarily_unavailable", "Try again");
        }
        let mut params = vec![("code", code.as_str()), ("iss", self.url.as_str())];
        if let Some(state) = &request.state {
            params.push(("state", state));
        }
        redirect(&with_params(&request.redirect_uri, &params))
    }

    async fn token(&self, f: &BTreeMap<String, Vec<String>>) -> Response<Bytes> {
        let invalid_grant = |why: &str| oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", why);
        let unavailable = || oauth_error(StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable", "Try again");
        let Some(client_id) = one(f, "client_id") else {
            return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "client_id is required");
        };
        let grant = match one(f, "grant_type") {
            Some("authorization_code") => {
                let (Some(code), Some(verifier)) = (one(f, "code"), one(f, "code_verifier")) else {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_request",
                        "code and code_verifier are required",
                    );
                };
                let grant = match self.store.take_code(&hashed(code)).await {
                    Ok(Some(grant)) => grant,
                    Ok(None) => return invalid_grant("The code is unknown, expired or already used"),
                    Err(_) => return unavailable(),
                };
                if grant.client_id != client_id || one(f, "redirect_uri") != Some(grant.redirect_uri.as_str()) {
                    return invalid_grant("The code was issued to another client or redirect URI");
                }
                let computed = URL_SAFE_NO_PAD.encode(digest(&SHA256, verifier.as_bytes()));
                if !(43..=128).contains(&verifier.len()) || grant.code_challenge.as_deref() != Some(computed.as_str()) {
                    return invalid_grant("code_verifier does not match the code_challenge");
                }
                Grant { code_challenge: None, family: Some(random_token()), ..grant }
            }
            Some("refresh_token") => {
                let Some(token) = one(f, "refresh_token") else {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "refresh_token is required");
                };
                match self.store.spend_refresh(&hashed(token)).await {
                    Ok(Spent::Fresh(grant)) if grant.client_id == client_id => grant,
                    Ok(Spent::Fresh(_) | Spent::Invalid) => return invalid_grant("The refresh token is not valid"),
                    Ok(Spent::Reused) => {
                        return invalid_grant(
                            "The refresh token was already used: every token of its login is revoked",
                        );
                    }
                    Err(_) => return unavailable(),
                }
            }
            _ => {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "unsupported_grant_type",
                    "authorization_code or refresh_token",
                );
            }
        };
        let access = self.issuer.mint(
            &self.url,
            std::slice::from_ref(&grant.resource),
            &grant.sub,
            &grant.org,
            &grant.scope,
            self.access_secs,
        );
        let refresh = random_token();
        let (Ok(access), false) = (access, refresh.is_empty()) else { return unavailable() };
        if self.store.put_refresh(&hashed(&refresh), &grant, REFRESH_SECS).await.is_err() {
            return unavailable();
        }
        json_response(
            StatusCode::OK,
            &json!({"access_token": access, "token_type": "Bearer", "expires_in": self.access_secs,
                    "refresh_token": refresh, "scope": grant.scope}),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_redirects_match_on_any_port_and_others_exactly() {
        let client = Client {
            client_id: "c".into(),
            client_name: None,
            redirect_uris: vec!["http://127.0.0.1/callback".into(), "https://app.example.com/cb".into()],
            application_type: "native".into(),
        };
        assert!(registered(&client, "http://127.0.0.1:53127/callback"));
        assert!(!registered(&client, "http://127.0.0.1:53127/other"));
        assert!(registered(&client, "https://app.example.com/cb"));
        assert!(!registered(&client, "https://app.example.com/cb/"));
        assert!(!registered(&client, "https://app.example.com:8443/cb"));
        assert!(acceptable_redirect("http://localhost:8080/cb") && !acceptable_redirect("http://app.example.com/cb"));
        assert!(!acceptable_redirect("https://app.example.com/cb#frag"));
    }
}
