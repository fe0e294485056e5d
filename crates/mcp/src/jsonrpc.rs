//! JSON-RPC 2.0 wire types for the MCP endpoint: the strict parser (duplicate
//! keys are a parse error, so header checks and dispatch can never read two
//! different values of one member), the error-code newtype with the codes this
//! server emits, and the reply type the pipeline hands back to the HTTP layer.
//!
//! Depends on nothing but serde; it knows no eras and no HTTP.

use super::method::Method;
use http::StatusCode;
use serde_json::{Map, Value, json};

/// A JSON-RPC error code. Named constants cover every code this server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    pub const PARSE_ERROR: Self = Self(-32700);
    pub const INVALID_REQUEST: Self = Self(-32600);
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    pub const INVALID_PARAMS: Self = Self(-32602);
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// Handshake-era "resource not found".
    pub const RESOURCE_NOT_FOUND: Self = Self(-32002);
    /// Stateless era: a routing header is missing, malformed or disagrees with the body.
    pub const HEADER_MISMATCH: Self = Self(-32020);
    /// Stateless era: the request needs a client capability that was not declared.
    pub const MISSING_CAPABILITY: Self = Self(-32021);
    /// The requested protocol version is not served.
    pub const UNSUPPORTED_VERSION: Self = Self(-32022);
    /// Application code for "rate limited": MCP reserves -32768..-32000, so it lives outside.
    pub const RATE_LIMITED: Self = Self(42900);
    /// Application code for authentication and authorization failures on the MCP endpoint.
    pub const UNAUTHORIZED: Self = Self(40100);
    pub const FORBIDDEN: Self = Self(40300);
    /// Application code for "the service cannot answer right now" (e.g. no signing keys).
    pub const UNAVAILABLE: Self = Self(50300);
}

/// Seconds a client is told to wait after a 503 caused by storage trouble.
pub const RETRY_AFTER_SECS: u64 = 1;

/// A JSON-RPC error object with the HTTP status it travels with.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub status: StatusCode,
    pub code: ErrorCode,
    pub message: String,
    pub data: Option<Value>,
    /// Response headers that travel with it (an `insufficient_scope` challenge).
    pub headers: Vec<(&'static str, String)>,
}

/// The one status table: every error this server sends is made by one of
/// these constructors, which fix its HTTP status with its code.
impl RpcError {
    pub(super) fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), data: None, headers: Vec::new() }
    }

    /// 400 -32700: the body is not one JSON document.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::PARSE_ERROR, message)
    }

    /// 400 -32600: the body is JSON but not a JSON-RPC request this endpoint takes.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::INVALID_REQUEST, message)
    }

    /// 415 -32600.
    pub fn unsupported_media_type() -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::INVALID_REQUEST,
            "Unsupported media type: send Content-Type: application/json",
        )
    }

    /// 406 -32600.
    pub fn not_acceptable() -> Self {
        Self::new(
            StatusCode::NOT_ACCEPTABLE,
            ErrorCode::INVALID_REQUEST,
            "Not acceptable: this endpoint answers application/json",
        )
    }

    /// 413 -32600.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::INVALID_REQUEST,
            format!("Request body too large: the limit is {limit} bytes"),
        )
    }

    /// 200 -32602: the method's own parameters are wrong (answered in-band).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(StatusCode::OK, ErrorCode::INVALID_PARAMS, message)
    }

    /// 400 -32602: the request cannot be routed (envelope, workspace, version).
    pub fn bad_params(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::INVALID_PARAMS, message)
    }

    /// 400 -32020: a routing header is missing, malformed or disagrees with the body.
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::HEADER_MISMATCH, message)
    }

    /// 400 -32021: the request needs a client capability it did not declare.
    pub fn missing_capability(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::MISSING_CAPABILITY, message)
    }

    /// 400 -32022.
    pub fn unsupported_version() -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::UNSUPPORTED_VERSION, "Unsupported protocol version")
    }

    /// 403 40300: a valid token without the scope (with its step-up challenge).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, ErrorCode::FORBIDDEN, message)
    }

    /// 429 42900.
    pub fn rate_limited() -> Self {
        Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::RATE_LIMITED,
            "Rate limit exceeded; retry after the window resets",
        )
    }

    /// 503 50300 with `Retry-After`: the service cannot answer right now
    /// (storage slow or down, keys unavailable); the request may be retried.
    pub fn unavailable(message: impl Into<String>) -> Self {
        let mut error = Self::new(StatusCode::SERVICE_UNAVAILABLE, ErrorCode::UNAVAILABLE, message);
        error.headers.push(("retry-after", RETRY_AFTER_SECS.to_string()));
        error
    }

    /// 200 -32603: a server fault that the client cannot fix.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::OK, ErrorCode::INTERNAL_ERROR, message)
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The error member of a response body.
    pub fn to_json(&self) -> Value {
        let mut error = Map::with_capacity(3);
        error.insert("code".into(), Value::from(self.code.0));
        error.insert("message".into(), Value::from(self.message.as_str()));
        if let Some(data) = &self.data {
            error.insert("data".into(), data.clone());
        }
        Value::Object(error)
    }
}

/// The body of a JSON-RPC error response; `id` is `null` when it could not be read.
pub fn error_body(id: Option<&Value>, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": error.to_json()})
}

/// The body of a JSON-RPC success response.
pub fn result_body(id: &Value, result: Value) -> Value {
    // Built member by member: `json!` would copy `result` by serializing it.
    let mut body = Map::new();
    body.insert("jsonrpc".into(), Value::from("2.0"));
    body.insert("id".into(), id.clone());
    body.insert("result".into(), result);
    Value::Object(body)
}

/// A parsed request or notification that passed the shape checks (stage B).
#[derive(Debug, Clone)]
pub struct Message {
    /// `None` for a notification; otherwise a string or integer, type preserved.
    pub id: Option<Value>,
    pub method: String,
    /// `method` parsed once: `None` for a method this server does not know.
    pub kind: Option<Method>,
    /// Always an object (absent params read as an empty object).
    pub params: Map<String, Value>,
    /// Whether the request carried a `params` member at all.
    pub has_params: bool,
}

/// Parse errors of stage B: the error and the id to echo, when one was readable.
#[derive(Debug, Clone)]
pub struct ParseFailure {
    pub id: Option<Value>,
    pub error: Box<RpcError>,
}

impl ParseFailure {
    fn parse(message: &str) -> Self {
        Self { id: None, error: Box::new(RpcError::parse_error(message)) }
    }

    fn invalid(id: Option<Value>, message: &str) -> Self {
        Self { id, error: Box::new(RpcError::invalid_request(message)) }
    }
}

/// Stages B1–B3: bytes → one JSON-RPC message, or the documented 400.
pub fn parse_message(body: &[u8]) -> Result<Message, ParseFailure> {
    if body.is_empty() {
        return Err(ParseFailure::parse("Parse error: the request body is empty"));
    }
    let text = std::str::from_utf8(body)
        .map_err(|_| ParseFailure::parse("Parse error: the request body is not valid UTF-8"))?;
    let value = inbox_support::json::parse_strict(text)
        .map_err(|_| ParseFailure::parse("Parse error: the request body is not valid JSON"))?;
    let mut object = match value {
        Value::Array(_) => {
            return Err(ParseFailure::invalid(
                None,
                "Invalid request: batches are not supported; send one message per request",
            ));
        }
        Value::Object(object) => object,
        _ => return Err(ParseFailure::invalid(None, "Invalid request: the body must be a JSON-RPC object")),
    };

    // The id is read first so every later shape error can echo it.
    let (id, id_valid) = match object.get("id") {
        None => (None, true),
        Some(Value::String(s)) => (Some(Value::String(s.clone())), true),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => (Some(Value::Number(n.clone())), true),
        Some(_) => (None, false),
    };

    let method = object.get("method");
    if method.is_none() && (object.contains_key("result") || object.contains_key("error")) {
        return Err(ParseFailure::invalid(
            id,
            "Invalid request: clients must not send JSON-RPC responses to the server",
        ));
    }
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(ParseFailure::invalid(id, "Invalid request: jsonrpc must be \"2.0\""));
    }
    let Some(Value::String(method)) = method else {
        return Err(ParseFailure::invalid(id, "Invalid request: method must be a string"));
    };
    if !id_valid {
        return Err(ParseFailure::invalid(None, "Invalid request: id must be a string or an integer"));
    }
    let (method, kind) = (method.clone(), Method::parse(method));
    // Taken out of the parsed body, not copied: the body is not needed again.
    let (params, has_params) = match object.remove("params") {
        None => (Map::new(), false),
        Some(Value::Object(params)) => (params, true),
        Some(_) => return Err(ParseFailure::invalid(id, "Invalid request: params must be an object")),
    };
    Ok(Message { id, method, kind, params, has_params })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractional_and_boolean_ids_are_invalid_and_not_echoed() {
        for body in [r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#, r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#] {
            let failure = parse_message(body.as_bytes()).unwrap_err();
            assert_eq!(failure.error.code, ErrorCode::INVALID_REQUEST);
            assert_eq!(failure.id, None);
        }
    }

    #[test]
    fn id_type_is_preserved() {
        let m = parse_message(br#"{"jsonrpc":"2.0","id":"7","method":"ping"}"#).unwrap();
        assert_eq!(m.id, Some(json!("7")));
        let m = parse_message(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap();
        assert_eq!(m.id, Some(json!(7)));
    }
}
