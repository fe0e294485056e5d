//! Asking the client for input on a server that keeps no session (protocol
//! 2026-07-28, multi round-trip requests): a request that needs something
//! from the client answers `input_required` with what it needs
//! (`inputRequests`, by key) and, when the next round must trust what this
//! one decided, a `requestState`; the client sends the same request again
//! with `inputResponses` (by the same keys) and the state echoed. Only
//! `tools/call`, `prompts/get` and `resources/read` answer this way, and only
//! for what the client declared it can do (`require`). Any number of rounds
//! may follow one another, each with a new state.
//!
//! - `Asked` is the interim result; `Request` one of its entries.
//! - What can be asked: a form elicitation (`Request::Form`, the one kind the
//!   product asks for: its confirmation of destructive tools,
//!   `super::confirm`), or a request of a `Kind` a catalogue defines — the
//!   client's method, the client capability it needs (by name, looked up in
//!   the capabilities the client declared) and what a valid answer is. The
//!   conformance fixture catalogue defines its other kinds this way.
//! - `Responses` reads `inputResponses`: it must be an object, and an entry
//!   is checked when the handler reads its key (as the result of what that
//!   key asked for: -32602 otherwise); keys nobody asked for are ignored.
//! - `seal` / `open`: the state is encrypted and authenticated
//!   (`inbox_support::secrets`), bound to the caller (`iss`, `sub`, `org`), the
//!   workspace, the method, what it names (tool, prompt or URI), a SHA-256
//!   of the canonical arguments and the connection's narrowing (its path and
//!   `X-MCP-*` headers: a state minted on a wide connection does not run on a
//!   narrow one, nor the reverse), and expires after `CONFIRMATION_TTL_SECS`.
//!   docs/security.md, "requestState", holds it to each rule of the
//!   specification's text, one test per rule.
//!   It carries what the handler put in it (`Opened::data`). Every failure
//!   gets one fixed message (-32602); the reason is only logged.

use aws_lc_rs::digest::{SHA256, digest};
use serde_json::{Map, Value, json};

use super::Call;
use super::Outcome;
use super::era::ProtocolVersion;
use super::jsonrpc::RpcError;
use super::method::Method;
use inbox_domain::{Tenant, hex};
use inbox_support::sys::unix_now;

/// The client's method a form elicitation names.
pub const ELICITATION_CREATE: &str = "elicitation/create";

/// A kind of input request besides the form elicitation, as a catalogue
/// defines it: which client method it names, which client capability the
/// client must have declared to be asked it, and what an answer must be.
#[derive(Debug)]
pub struct Kind {
    /// The client's method (`inputRequests.<key>.method`).
    pub method: &'static str,
    /// The client capability it needs, by name (`capabilities.<name>` must be
    /// an object; `requiredCapabilities` names it when it is not).
    pub capability: &'static str,
    /// What a valid answer is, in words: an answer that fails `is_answer` is
    /// -32602 "inputResponses.<key> must be a <answer>".
    pub answer: &'static str,
    /// Whether a response is an answer of this kind.
    pub is_answer: fn(&Value) -> bool,
}

impl Kind {
    /// Whether the client declared the capability this kind needs, on this request.
    pub fn declared(&self, call: &Call<'_>) -> bool {
        Capability::Named(self.capability).declared(call)
    }
}

/// One thing to ask the client for.
#[derive(Debug, Clone)]
pub enum Request {
    /// A form elicitation: what to tell the person, and the schema of the answer.
    Form { message: String, schema: Value },
    /// A request of a catalogue's `Kind`, with its method's params.
    Other(&'static Kind, Value),
}

impl Request {
    /// The entry of `inputRequests`.
    pub fn to_json(&self) -> Value {
        match self {
            Request::Form { message, schema } => json!({
                "method": ELICITATION_CREATE,
                "params": {"mode": "form", "message": message, "requestedSchema": schema},
            }),
            Request::Other(kind, params) => json!({"method": kind.method, "params": params}),
        }
    }

    /// The capability the client must have declared to be asked this.
    pub fn capability(&self) -> Capability {
        match self {
            Request::Form { .. } => Capability::FormElicitation,
            Request::Other(kind, _) => Capability::Named(kind.capability),
        }
    }
}

/// A client capability a request may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// Form-mode elicitation (`elicitation: {}` or `elicitation.form`).
    FormElicitation,
    /// The capability of this name (`capabilities.<name>`, an object).
    Named(&'static str),
}

impl Capability {
    /// Whether the client declared it on this request.
    pub fn declared(self, call: &Call<'_>) -> bool {
        match self {
            Capability::FormElicitation => call.client.form_elicitation,
            Capability::Named(name) => call.client.declares(name),
        }
    }

    /// The `requiredCapabilities` object naming it.
    fn required(self) -> Value {
        match self {
            Capability::FormElicitation => json!({"elicitation": {"form": {}}}),
            Capability::Named(name) => json!({name: {}}),
        }
    }
}

/// -32021 (HTTP 400) unless the client declared `capability` on this request:
/// what the server needs from it cannot be asked otherwise.
pub fn require(call: &Call<'_>, capability: Capability, what: &str) -> Result<(), RpcError> {
    if capability.declared(call) {
        return Ok(());
    }
    Err(RpcError::missing_capability(what.to_owned()).with_data(json!({"requiredCapabilities": capability.required()})))
}

/// An `input_required` result being put together.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    requests: Map<String, Value>,
    state: Option<String>,
}

impl Asked {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for `request` under `key` (the key its response comes back under).
    pub fn ask(mut self, key: &str, request: &Request) -> Self {
        self.requests.insert(key.to_owned(), request.to_json());
        self
    }

    /// The state the next round brings back (`seal`).
    pub fn with_state(mut self, state: String) -> Self {
        self.state = Some(state);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// The requests alone, by key (what a task that waits shows).
    pub fn into_requests(self) -> Map<String, Value> {
        self.requests
    }

    /// The interim result (decoration adds `resultType: input_required`).
    pub fn outcome(self) -> Outcome {
        Outcome::InputRequired(self.into_value())
    }

    /// The interim result's members: `inputRequests`, and `requestState` when sealed.
    pub fn into_value(self) -> Value {
        let mut result = Map::new();
        result.insert("inputRequests".into(), Value::Object(self.requests));
        if let Some(state) = self.state {
            result.insert("requestState".into(), Value::from(state));
        }
        Value::Object(result)
    }
}

/// A person's answer to a form elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited {
    /// Accepted, with the form's content (empty when none came).
    Accepted(Map<String, Value>),
    Declined,
    Cancelled,
}

/// The `inputResponses` of a request (none on a first round).
#[derive(Debug, Clone, Copy)]
pub struct Responses<'a> {
    entries: Option<&'a Map<String, Value>>,
}

impl<'a> Responses<'a> {
    /// Reads `params.inputResponses`: absent, or an object (-32602 otherwise).
    pub fn read(params: &'a Map<String, Value>) -> Result<Self, RpcError> {
        match params.get("inputResponses") {
            None => Ok(Responses { entries: None }),
            Some(Value::Object(entries)) => Ok(Responses { entries: Some(entries) }),
            Some(_) => Err(RpcError::invalid_params("inputResponses must be an object")),
        }
    }

    /// Responses taken from elsewhere (a task's answers so far).
    pub fn of(entries: &'a Map<String, Value>) -> Self {
        Responses { entries: Some(entries) }
    }

    /// Whether any response came at all.
    pub fn is_present(&self) -> bool {
        self.entries.is_some()
    }

    fn entry(&self, key: &str) -> Option<&'a Value> {
        self.entries.and_then(|entries| entries.get(key))
    }

    /// The answer to the form elicitation asked under `key`, if it came.
    pub fn elicitation(&self, key: &str) -> Result<Option<Elicited>, RpcError> {
        let Some(answer) = self.entry(key) else { return Ok(None) };
        let Value::Object(answer) = answer else {
            return Err(RpcError::invalid_params(format!("inputResponses.{key} must be an elicitation result object")));
        };
        match answer.get("action").and_then(Value::as_str) {
            Some("accept") => Ok(Some(Elicited::Accepted(
                answer.get("content").and_then(Value::as_object).cloned().unwrap_or_default(),
            ))),
            Some("decline") => Ok(Some(Elicited::Declined)),
            Some("cancel") => Ok(Some(Elicited::Cancelled)),
            _ => {
                Err(RpcError::invalid_params(format!("inputResponses.{key}.action must be accept, decline or cancel")))
            }
        }
    }

    /// The answer to the request of `kind` asked under `key`, if it came;
    /// -32602 when what came is not an answer of that kind.
    pub fn answer(&self, kind: &Kind, key: &str) -> Result<Option<&'a Value>, RpcError> {
        match self.entry(key) {
            None => Ok(None),
            Some(answer) if (kind.is_answer)(answer) => Ok(Some(answer)),
            Some(_) => Err(RpcError::invalid_params(format!("inputResponses.{key} must be a {}", kind.answer))),
        }
    }
}

/// What a `requestState` is bound to besides the caller and the workspace.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// The method the state belongs to (`tools/call`, `prompts/get`, `resources/read`).
    pub method: Method,
    /// What the request names: the tool, the prompt, the URI.
    pub name: &'a str,
    /// The request's arguments (digested).
    pub args: &'a Map<String, Value>,
}

/// A state that passed every check.
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    /// What the handler sealed into it.
    pub data: Value,
    /// When it expires (Unix seconds).
    pub exp: u64,
}

fn invalid_state(reason: &str) -> RpcError {
    tracing::info!(reason, "requestState refused");
    RpcError::invalid_params("Invalid or expired requestState")
}

/// A SHA-256 of the canonical JSON of `args`.
pub fn args_digest(args: &Map<String, Value>) -> String {
    // serde_json's map is ordered by key, so this is canonical.
    hex(digest(&SHA256, Value::Object(args.clone()).to_string().as_bytes()).as_ref())
}

/// Seals `data` into a state for the next round of this request
/// (`purpose` keeps one flow's states from being taken for another's).
pub fn seal(
    call: &Call<'_>,
    tenant: &Tenant,
    purpose: &str,
    binding: &Binding<'_>,
    data: Value,
) -> Result<String, RpcError> {
    let principal = call.principal;
    let payload = json!({
        "iss": principal.iss, "sub": principal.sub, "org": principal.org.as_str(),
        "ws": tenant.workspace.as_str(), "m": binding.method.as_str(), "name": binding.name,
        "args": args_digest(binding.args), "narrow": call.narrowing.key(),
        "exp": unix_now() + call.server.confirmation_ttl_secs,
        "v": ProtocolVersion::V2026_07_28.as_str(), "data": data,
    });
    call.server
        .secrets
        .seal_token(purpose, &payload)
        .ok_or_else(|| RpcError::unavailable("The service is temporarily unavailable; try again shortly"))
}

/// The request's `requestState`, opened and checked against this request:
/// `None` when there is none; -32602 when it is not a string, not
/// authentic, bound to another caller, workspace or request, or expired.
pub fn open(
    call: &Call<'_>,
    tenant: &Tenant,
    purpose: &str,
    binding: &Binding<'_>,
) -> Result<Option<Opened>, RpcError> {
    let token = match call.message.params.get("requestState") {
        None => return Ok(None),
        Some(Value::String(token)) => token,
        Some(_) => return Err(invalid_state("not a string")),
    };
    open_token(call, tenant, purpose, token, binding).map(Some)
}

/// `open` of a state that came some other way than `requestState` (a
/// confirmation view's token, `super::apps`): the same checks.
pub fn open_token(
    call: &Call<'_>,
    tenant: &Tenant,
    purpose: &str,
    token: &str,
    binding: &Binding<'_>,
) -> Result<Opened, RpcError> {
    let payload = call.server.secrets.open_token(purpose, token).ok_or_else(|| invalid_state("not authentic"))?;
    let field = |key: &str| payload.get(key).and_then(Value::as_str);
    let principal = call.principal;
    let bound = field("iss") == Some(principal.iss.as_str())
        && field("sub") == Some(principal.sub.as_str())
        && field("org") == Some(principal.org.as_str())
        && field("ws") == Some(tenant.workspace.as_str())
        && field("m") == Some(binding.method.as_str())
        && field("name") == Some(binding.name)
        && field("args") == Some(args_digest(binding.args).as_str())
        && field("narrow") == Some(call.narrowing.key().as_str());
    if !bound {
        return Err(invalid_state("bound to another request"));
    }
    let exp = payload.get("exp").and_then(Value::as_u64).unwrap_or(0);
    if exp < unix_now() {
        return Err(invalid_state("expired"));
    }
    Ok(Opened { data: payload.get("data").cloned().unwrap_or(Value::Null), exp })
}
