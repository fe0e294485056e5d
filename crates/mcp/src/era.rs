//! Protocol versions and era selection (docs/protocol.md: "Talking to it"), plus the envelope
//! and routing-header checks of the stateless era (stages D and F).
//!
//! The era is decided per request from the request alone: nothing carries
//! over between requests. Header names are case-insensitive; values are
//! compared case-sensitively after trimming spaces and tabs. A header that
//! arrives more than once (or folded into one comma-joined value by a gateway)
//! never matches the body, so it fails like any other mismatch.

use base64::Engine as _;
use http::header::{AsHeaderName, HeaderName};
use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value, json};

use super::jsonrpc::{ErrorCode, Message, RpcError};
use super::method::Method;

/// A protocol version this server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolVersion {
    V2026_07_28,
    V2025_06_18,
    V2025_03_26,
}

impl ProtocolVersion {
    /// Newest first: the order of `supportedVersions` and of `-32022` data.
    pub const SUPPORTED: [ProtocolVersion; 3] = [Self::V2026_07_28, Self::V2025_06_18, Self::V2025_03_26];
    pub const NEWEST: ProtocolVersion = Self::V2026_07_28;

    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2026_07_28 => "2026-07-28",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_03_26 => "2025-03-26",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::SUPPORTED.into_iter().find(|v| v.as_str() == s)
    }

    /// Versions negotiated with `initialize`.
    pub fn parse_handshake(s: &str) -> Option<Self> {
        Self::parse(s).filter(|v| *v != Self::V2026_07_28)
    }

    /// Position in `SUPPORTED`: per-version renderings are kept in arrays in this order.
    pub fn index(self) -> usize {
        match self {
            Self::V2026_07_28 => 0,
            Self::V2025_06_18 => 1,
            Self::V2025_03_26 => 2,
        }
    }

    /// This version's entry of a per-version table (in `SUPPORTED` order).
    pub fn pick<T>(self, table: &[T; 3]) -> &T {
        let [newest, middle, oldest] = table;
        match self {
            Self::V2026_07_28 => newest,
            Self::V2025_06_18 => middle,
            Self::V2025_03_26 => oldest,
        }
    }

    pub fn supported_strings() -> Vec<&'static str> {
        Self::SUPPORTED.iter().map(|v| v.as_str()).collect()
    }
}

/// Which rules a request is served under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28: per-request envelope, routing headers, no handshake.
    Stateless,
    /// 2025-06-18 / 2025-03-26: `initialize` negotiates; the header (or its absence) names the version.
    Handshake(ProtocolVersion),
}

impl Era {
    /// -32601: 404 in the stateless era, in-band 200 in the handshake era.
    pub fn method_not_found(self, method: &str) -> RpcError {
        let status = if self == Era::Stateless { StatusCode::NOT_FOUND } else { StatusCode::OK };
        RpcError::new(status, ErrorCode::METHOD_NOT_FOUND, "Method not found").with_data(json!({"method": method}))
    }

    /// 200, in-band: -32602 in the stateless era, -32002 in the handshake era.
    pub fn resource_not_found(self, uri: &str) -> RpcError {
        let code = if self == Era::Stateless { ErrorCode::INVALID_PARAMS } else { ErrorCode::RESOURCE_NOT_FOUND };
        RpcError::new(StatusCode::OK, code, "Resource not found").with_data(json!({"uri": uri}))
    }
    /// Whether `method` is served in this era: discovery and the tasks
    /// extension only in the stateless era, the handshake and `ping` only in
    /// the handshake era, the rest in both.
    pub fn serves(self, method: Method) -> bool {
        match method {
            Method::ServerDiscover | Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
                self == Era::Stateless
            }
            Method::Initialize | Method::Ping => self != Era::Stateless,
            _ => true,
        }
    }

    pub fn version(self) -> ProtocolVersion {
        match self {
            Era::Stateless => ProtocolVersion::V2026_07_28,
            Era::Handshake(v) => v,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Era::Stateless => "stateless",
            Era::Handshake(_) => "handshake",
        }
    }
}

pub const META: &str = "_meta";
pub const KEY_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const KEY_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const KEY_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const KEY_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

pub const H_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub const H_METHOD: HeaderName = HeaderName::from_static("mcp-method");
pub const H_NAME: HeaderName = HeaderName::from_static("mcp-name");

const LOG_LEVELS: [&str; 8] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/// One request header as the pipeline sees it (a single value borrowed from
/// the request: the headers are read on every request, most of them once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Header<'h> {
    Absent,
    /// Present once, trimmed of spaces and tabs.
    One(&'h str),
    /// Present more than once: the values joined with ", " as a gateway would fold them.
    Repeated(String),
    /// Present once but not a string of visible ASCII (plus inner spaces).
    Malformed,
}

impl<'h> Header<'h> {
    /// The field `name` (a `HeaderName` constant where the name is fixed:
    /// looked up without parsing the name again).
    pub fn read(headers: &'h HeaderMap, name: impl AsHeaderName) -> Header<'h> {
        let mut values = headers.get_all(name).iter();
        let Some(first) = values.next() else { return Header::Absent };
        if let Some(second) = values.next() {
            let joined = [first, second]
                .into_iter()
                .chain(values)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .collect::<Vec<_>>()
                .join(", ");
            return Header::Repeated(joined);
        }
        match first.to_str() {
            Ok(s) => {
                let trimmed = s.trim_matches([' ', '\t']);
                if trimmed.bytes().all(|b| b == b' ' || b.is_ascii_graphic()) {
                    Header::One(trimmed)
                } else {
                    Header::Malformed
                }
            }
            Err(_) => Header::Malformed,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Header::One(s) => Some(s),
            _ => None,
        }
    }
}

fn envelope(message: &Message) -> Option<&Map<String, Value>> {
    message.params.get(META).and_then(Value::as_object)
}

/// Stages C and D1–D3: decide the era and whether the version is served.
pub fn select(message: &Message, headers: &HeaderMap) -> Result<Era, RpcError> {
    let header = Header::read(headers, H_PROTOCOL_VERSION);
    if let Some(env) = envelope(message).filter(|env| env.contains_key(KEY_VERSION)) {
        return select_stateless(env, &header);
    }
    let header_is_stateless = header.as_str() == Some(ProtocolVersion::V2026_07_28.as_str());
    if message.kind == Some(Method::Initialize) {
        if header_is_stateless {
            return Err(RpcError::bad_params("per-request _meta is required for protocol version 2026-07-28")
                .with_data(json!({"missing": [META]})));
        }
        // The header is not validated on initialize: the body negotiates.
        return Ok(Era::Handshake(ProtocolVersion::V2025_06_18));
    }
    if header_is_stateless {
        let missing: Vec<&str> = match envelope(message) {
            None => vec![META],
            Some(env) => [KEY_VERSION, KEY_CAPABILITIES].into_iter().filter(|k| !env.contains_key(*k)).collect(),
        };
        return Err(RpcError::bad_params("per-request _meta with io.modelcontextprotocol/protocolVersion is required for protocol version 2026-07-28",
        )
        .with_data(json!({"missing": missing})));
    }
    match header {
        Header::Absent => Ok(Era::Handshake(ProtocolVersion::V2025_03_26)),
        Header::One(value) => match ProtocolVersion::parse_handshake(value) {
            Some(version) => Ok(Era::Handshake(version)),
            None => Err(unsupported(value)),
        },
        // A repeated header names no single version this server speaks.
        Header::Repeated(joined) => Err(unsupported(&joined)),
        Header::Malformed => Err(unsupported_value(Value::Null)),
    }
}

fn select_stateless(env: &Map<String, Value>, header: &Header) -> Result<Era, RpcError> {
    let Some(Value::String(version)) = env.get(KEY_VERSION) else {
        return Err(RpcError::bad_params("io.modelcontextprotocol/protocolVersion must be a string")
            .with_data(json!({"invalid": KEY_VERSION})));
    };
    match header {
        Header::Absent => {}
        Header::One(value) if value == version => {}
        Header::One(value) => {
            return Err(header_error(
                "MCP-Protocol-Version",
                Some(value),
                Some(version),
                "does not match the protocol version in _meta",
            ));
        }
        Header::Repeated(_) => return Err(header_error("MCP-Protocol-Version", None, Some(version), "is repeated")),
        Header::Malformed => return Err(header_error("MCP-Protocol-Version", None, Some(version), "is malformed")),
    }
    match ProtocolVersion::parse(version) {
        Some(ProtocolVersion::V2026_07_28) => Ok(Era::Stateless),
        Some(handshake) => Err(RpcError::bad_params(format!(
            "protocol version {} is negotiated with initialize, not per-request _meta",
            handshake.as_str()
        ))
        .with_data(json!({"invalid": KEY_VERSION}))),
        None => Err(unsupported(version)),
    }
}

fn unsupported(requested: &str) -> RpcError {
    unsupported_value(Value::from(requested))
}

fn unsupported_value(requested: Value) -> RpcError {
    RpcError::unsupported_version()
        .with_data(json!({"supported": ProtocolVersion::supported_strings(), "requested": requested}))
}

fn header_error(header: &str, header_value: Option<&str>, body_value: Option<&str>, what: &str) -> RpcError {
    let mut data = Map::new();
    data.insert("header".into(), Value::from(header));
    if let Some(v) = header_value {
        data.insert("headerValue".into(), Value::from(v));
    }
    if let Some(v) = body_value {
        data.insert("bodyValue".into(), Value::from(v));
    }
    RpcError::header_mismatch(format!("Header {header} {what}")).with_data(Value::Object(data))
}

/// The tasks extension's identifier (`capabilities.extensions` key).
pub const EXT_TASKS: &str = "io.modelcontextprotocol/tasks";

/// The MCP Apps extension (server-drawn views), and the one kind of view it defines.
pub const EXT_UI: &str = "io.modelcontextprotocol/ui";
pub const UI_MIME: &str = "text/html;profile=mcp-app";

/// What the envelope tells about the client, once it has been validated.
/// What the product itself asks of a client is read once into named flags;
/// the declared capabilities object is kept whole, so whatever else a
/// catalogue asks the client for is looked up by name (`declares`).
#[derive(Debug, Clone, Default)]
pub struct ClientContext {
    /// The client declared form-mode elicitation on this request.
    pub form_elicitation: bool,
    /// The client declared the tasks extension on this request.
    pub tasks: bool,
    /// The client declared the MCP Apps extension on this request, with
    /// `text/html;profile=mcp-app` among its `mimeTypes`: it draws the views
    /// a tool names (`apps`).
    pub ui: bool,
    /// The client named itself in `_meta` (`clientInfo`), cut to a bounded length.
    pub info: Option<inbox_domain::records::ClientInfo>,
    /// The client capabilities declared on this request, as sent (none in
    /// the handshake era, whose capabilities came with `initialize` only).
    pub capabilities: Map<String, Value>,
}

impl ClientContext {
    /// Whether the client declared capability `name` on this request: its
    /// settings are an object (empty when it has none); anything else
    /// declares nothing.
    pub fn declares(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some_and(Value::is_object)
    }
}

/// Stage F1: the rest of the envelope (stateless era).
pub fn check_envelope(message: &Message) -> Result<ClientContext, RpcError> {
    let invalid =
        |key: &str, what: &str| RpcError::bad_params(format!("{key} {what}")).with_data(json!({"invalid": key}));
    // select() only routes here when the envelope object exists.
    let empty = Map::new();
    let env = envelope(message).unwrap_or(&empty);
    let capabilities = match env.get(KEY_CAPABILITIES) {
        None => {
            return Err(RpcError::bad_params(format!("{KEY_CAPABILITIES} is required in _meta"))
                .with_data(json!({"missing": [KEY_CAPABILITIES]})));
        }
        Some(Value::Object(caps)) => caps,
        Some(_) => return Err(invalid(KEY_CAPABILITIES, "must be an object")),
    };
    let info = match env.get(KEY_CLIENT_INFO) {
        None => None,
        Some(info) => match (info.get("name").and_then(Value::as_str), info.get("version").and_then(Value::as_str)) {
            (Some(name), Some(version)) => Some(inbox_domain::records::ClientInfo::bounded(name, version)),
            _ => return Err(invalid(KEY_CLIENT_INFO, "must be an object with string name and version")),
        },
    };
    if let Some(level) = env.get(KEY_LOG_LEVEL)
        && !level.as_str().is_some_and(|l| LOG_LEVELS.contains(&l))
    {
        return Err(invalid(KEY_LOG_LEVEL, "must be a defined log level"));
    }
    Ok(ClientContext {
        form_elicitation: declares_form_elicitation(capabilities),
        tasks: declares_extension(capabilities, EXT_TASKS),
        ui: declares_views(capabilities),
        info,
        capabilities: capabilities.clone(),
    })
}

/// `extensions: {"<id>": {…}}`: the settings are an object (empty when the
/// extension defines none); anything else declares nothing.
fn declares_extension(capabilities: &Map<String, Value>, id: &str) -> bool {
    capabilities.get("extensions").and_then(Value::as_object).and_then(|e| e.get(id)).is_some_and(Value::is_object)
}

/// `extensions: {"io.modelcontextprotocol/ui": {"mimeTypes": [...]}}` with
/// the one view type this server draws (`mimeTypes` is required).
fn declares_views(capabilities: &Map<String, Value>) -> bool {
    let settings = capabilities.get("extensions").and_then(Value::as_object).and_then(|e| e.get(EXT_UI));
    let types = settings.and_then(|s| s.get("mimeTypes")).and_then(Value::as_array);
    types.is_some_and(|types| types.iter().any(|t| t.as_str() == Some(UI_MIME)))
}

/// `elicitation: {}` means form only; `{"url": {}}` alone excludes form.
fn declares_form_elicitation(capabilities: &Map<String, Value>) -> bool {
    match capabilities.get("elicitation") {
        Some(Value::Object(modes)) => modes.is_empty() || modes.get("form").is_some_and(Value::is_object),
        _ => false,
    }
}

/// Stage F2: the standard headers of a stateless request.
pub fn check_routing_headers(message: &Message, headers: &HeaderMap) -> Result<(), RpcError> {
    match Header::read(headers, H_PROTOCOL_VERSION) {
        Header::One(_) => {}
        Header::Absent => return Err(header_error("MCP-Protocol-Version", None, None, "is required")),
        Header::Repeated(_) => return Err(header_error("MCP-Protocol-Version", None, None, "is repeated")),
        Header::Malformed => return Err(header_error("MCP-Protocol-Version", None, None, "is malformed")),
    }
    let method = message.method.as_str();
    match Header::read(headers, H_METHOD) {
        Header::One(value) if value == method => {}
        Header::One(value) => {
            return Err(header_error("Mcp-Method", Some(value), Some(method), "does not match the method in the body"));
        }
        Header::Absent => return Err(header_error("Mcp-Method", None, Some(method), "is required")),
        Header::Repeated(_) => return Err(header_error("Mcp-Method", None, Some(method), "is repeated")),
        Header::Malformed => return Err(header_error("Mcp-Method", None, Some(method), "is malformed")),
    }
    let mirrored = message.kind.and_then(Method::name_param).and_then(|param| message.params.get(param));
    // Nothing to mirror: params validation answers instead.
    let Some(Value::String(body_value)) = mirrored else { return Ok(()) };
    match Header::read(headers, H_NAME) {
        Header::One(value) => match decode_name(value) {
            Some(decoded) if decoded == *body_value => Ok(()),
            Some(_) => Err(header_error("Mcp-Name", Some(value), Some(body_value), "does not match the body")),
            None => Err(header_error("Mcp-Name", Some(value), Some(body_value), "is not a valid =?base64?...?= value")),
        },
        Header::Absent => Err(header_error("Mcp-Name", None, Some(body_value), "is required")),
        Header::Repeated(_) => Err(header_error("Mcp-Name", None, Some(body_value), "is repeated")),
        Header::Malformed => Err(header_error(
            "Mcp-Name",
            None,
            Some(body_value),
            "is malformed (non-ASCII values use the =?base64?...?= form)",
        )),
    }
}

/// Stage H3: the custom headers of a `tools/call` whose tool declares
/// `x-mcp-header` parameters (`params`: each argument with its header's
/// name, sent as `Mcp-Param-{name}`). An argument in the body needs its
/// header, once, carrying the same value (decoded as `Mcp-Name` is; a number
/// or boolean as its JSON text); a header without its argument disagrees
/// with the body too. Any failure is -32020.
pub fn check_param_headers(message: &Message, headers: &HeaderMap, params: &[(&str, &str)]) -> Result<(), RpcError> {
    let arguments = message.params.get("arguments").and_then(Value::as_object);
    for (argument, name) in params {
        let header = format!("Mcp-Param-{name}");
        let body_value = arguments.and_then(|args| args.get(*argument)).map(|value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        });
        let body = body_value.as_deref();
        match (Header::read(headers, header.to_ascii_lowercase()), body) {
            (Header::Absent, None) => {}
            (Header::One(value), Some(body)) => match decode_name(value) {
                Some(decoded) if decoded == body => {}
                Some(_) => return Err(header_error(&header, Some(value), Some(body), "does not match the body")),
                None => {
                    return Err(header_error(&header, Some(value), Some(body), "is not a valid =?base64?...?= value"));
                }
            },
            (Header::One(value), None) => {
                return Err(header_error(&header, Some(value), None, "has no argument in the body"));
            }
            (Header::Absent, Some(body)) => return Err(header_error(&header, None, Some(body), "is required")),
            (Header::Repeated(_), body) => return Err(header_error(&header, None, body, "is repeated")),
            (Header::Malformed, body) => return Err(header_error(&header, None, body, "is malformed")),
        }
    }
    Ok(())
}

/// Decodes an `Mcp-Name` value: the `=?base64?…?=` sentinel form strictly
/// (canonical padding, standard alphabet, UTF-8), anything else literally.
pub fn decode_name(value: &str) -> Option<String> {
    match value.strip_prefix("=?base64?").and_then(|rest| rest.strip_suffix("?=")) {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(value.to_owned()),
    }
}

/// The value a client would send in `Mcp-Name` for `name` (used by tests and tools).
pub fn encode_name(name: &str) -> String {
    let looks_like_sentinel = name.starts_with("=?base64?") && name.ends_with("?=");
    let plain = !name.is_empty()
        && name.bytes().all(|b| b == b' ' || b.is_ascii_graphic())
        && !name.starts_with(' ')
        && !name.ends_with(' ')
        && !looks_like_sentinel;
    if plain {
        name.to_owned()
    } else {
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(name.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_the_position_in_supported() {
        for (i, v) in ProtocolVersion::SUPPORTED.into_iter().enumerate() {
            assert_eq!(v.index(), i, "{}", v.as_str());
        }
    }

    #[test]
    fn sentinel_decoding_is_strict() {
        assert_eq!(decode_name("=?base64?ZW1haWxzX2RlbGV0ZQ==?=").as_deref(), Some("emails_delete"));
        assert_eq!(decode_name("=?base64?SGVsbG8?="), None, "missing padding");
        assert_eq!(decode_name("=?base64?SGVs!!!bG8=?="), None, "non-alphabet characters");
        assert_eq!(decode_name("=?base64?/w==?="), None, "not UTF-8");
        assert_eq!(decode_name("plain").as_deref(), Some("plain"));
    }

    #[test]
    fn encoding_round_trips_and_uses_the_sentinel_only_when_needed() {
        assert_eq!(encode_name("emails_get"), "emails_get");
        assert_eq!(
            encode_name("kobana://inbox/inboxes/cobrança"),
            "=?base64?a29iYW5hOi8vaW5ib3gvaW5ib3hlcy9jb2JyYW7Dp2E=?="
        );
        assert_eq!(encode_name("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
        for s in ["a b", " lead", "ç", "=?base64?x?="] {
            assert_eq!(decode_name(&encode_name(s)).as_deref(), Some(s));
        }
    }

    #[test]
    fn elicitation_modes() {
        let caps = |v: Value| v.as_object().cloned().unwrap();
        assert!(declares_form_elicitation(&caps(json!({"elicitation": {}}))));
        assert!(declares_form_elicitation(&caps(json!({"elicitation": {"form": {}}}))));
        assert!(declares_form_elicitation(&caps(json!({"elicitation": {"form": {}, "url": {}}}))));
        assert!(!declares_form_elicitation(&caps(json!({"elicitation": {"url": {}}}))));
        assert!(!declares_form_elicitation(&caps(json!({}))));
        assert!(!declares_form_elicitation(&caps(json!({"elicitation": true}))));
    }

    #[test]
    fn extensions_are_declared_with_an_object() {
        let caps = |v: Value| v.as_object().cloned().unwrap();
        assert!(declares_extension(&caps(json!({"extensions": {EXT_TASKS: {}}})), EXT_TASKS));
        assert!(declares_extension(&caps(json!({"extensions": {EXT_TASKS: {"x": 1}}})), EXT_TASKS));
        assert!(!declares_extension(&caps(json!({"extensions": {EXT_TASKS: true}})), EXT_TASKS));
        assert!(!declares_extension(&caps(json!({"extensions": {"io.modelcontextprotocol/ui": {}}})), EXT_TASKS));
        assert!(!declares_extension(&caps(json!({"extensions": [EXT_TASKS]})), EXT_TASKS));
        assert!(!declares_extension(&caps(json!({EXT_TASKS: {}})), EXT_TASKS));
    }
}
