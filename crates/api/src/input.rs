//! Parsing input into typed values: strict JSON bodies (unknown fields and
//! wrong types are 400 naming the field), query parameters (unknown or
//! repeated ones are 400), and the value rules shared by the handlers
//! (addresses, URLs, slugs, lengths), which answer 422 naming the field.
//!
//! Every text a caller gives — a body field, a path segment, a free-text
//! filter, a tool argument — passes `caller_text` (`caller_query` for a query
//! parameter, `caller_arguments` for a tool's arguments): the one rule that
//! keeps the characters `inbox_domain::text` names (separators, controls,
//! bidirectional and zero-width characters, tags) out of what the API stores
//! and shows. Third-party e-mail text (an ingestion's subject, body and
//! attachment names) does not: it is stored as received.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::error::ApiError;
use inbox_domain::text;

/// How a value type's `Deserialize` (`super::shape`) marks a broken value
/// rule, so that `from_value` answers 422 `validation_failed` rather than the
/// 400 of a wrong shape (serde has one error channel: its message).
pub const VALUE_RULE: &str = "\u{1}value rule\u{1}";

/// Parses a JSON body into a value: 400 when it is missing, not UTF-8 or
/// not JSON (duplicate keys included).
pub fn json_body(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.is_empty() {
        return Err(ApiError::bad_request("invalid_body", "A JSON body is required", json!({})));
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|_| ApiError::bad_request("invalid_body", "The body is not UTF-8", json!({})))?;
    // Duplicate keys are refused like everywhere else.
    inbox_support::json::parse_strict(text)
        .map_err(|e| ApiError::bad_request("invalid_json", format!("The body is not valid JSON: {e}"), json!({})))
}

/// Converts a JSON value into `T`, naming the offending field on failure: a
/// value rule of one of `super::shape`'s value types is 422
/// `validation_failed`, anything else (a wrong type, an unknown or missing
/// field) 400 `invalid_body`.
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { String::new() } else { path };
        let message = e.inner().to_string();
        match message.strip_prefix(VALUE_RULE) {
            Some(why) => ApiError::invalid(if field.is_empty() { "body" } else { &field }, why),
            None => {
                ApiError::bad_request("invalid_body", format!("{}{message}", prefix(&field)), json!({"field": field}))
            }
        }
    })
}

fn prefix(field: &str) -> String {
    if field.is_empty() { String::new() } else { format!("{field}: ") }
}

/// Query parameters, each at most once, only those `allowed` (`refuse`
/// says why another one is not).
pub fn query(
    raw: Option<&str>,
    allowed: impl Fn(&str) -> bool,
    refuse: impl Fn(&str) -> ApiError,
) -> Result<BTreeMap<String, String>, ApiError> {
    let mut params = BTreeMap::new();
    for (key, value) in url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
        if !allowed(&key) {
            return Err(refuse(&key));
        }
        if params.insert(key.to_string(), value.to_string()).is_some() {
            return Err(ApiError::bad_request(
                "invalid_parameter",
                format!("Query parameter {key} is given more than once"),
                json!({"parameter": key}),
            ));
        }
    }
    Ok(params)
}

/// 400 `unknown_parameter`: `name` is not one of `allowed`.
pub fn unknown_parameter(name: &str, allowed: &[&str]) -> ApiError {
    ApiError::bad_request(
        "unknown_parameter",
        format!("Unknown query parameter {name}; this route accepts {}", allowed.join(", ")),
        json!({"parameter": name}),
    )
}

/// `a, b or c`: the values a parameter may take, for its error message.
pub fn or_list(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

pub fn invalid_parameter(name: &str, message: &str) -> ApiError {
    ApiError::bad_request("invalid_parameter", format!("{name}: {message}"), json!({"parameter": name}))
}

/// Why `value` may not be a caller's text, when it may not: the first
/// character it must not hold, named by its code point.
pub(super) fn refusal(value: &str) -> Option<String> {
    text::first_hidden(value).map(|(c, name)| format!("must not contain {}", text::describe(c, name)))
}

/// A caller's text, as given, when it holds none of the characters
/// `inbox_domain::text` refuses; otherwise 422 `validation_failed` naming
/// the field and the character (`description: must not contain U+2028 (line
/// separator)`). Checked before any trimming: a separator at either end is
/// refused, never silently dropped.
pub fn caller_text<'v>(field: &str, value: &'v str) -> Result<&'v str, ApiError> {
    match refusal(value) {
        None => Ok(value),
        Some(why) => Err(ApiError::invalid(field, why)),
    }
}

/// `caller_text` for a query parameter: the same rule and message, as the
/// 400 `invalid_parameter` every query parameter error is.
pub fn caller_query<'v>(name: &str, value: &'v str) -> Result<&'v str, ApiError> {
    match refusal(value) {
        None => Ok(value),
        Some(why) => Err(invalid_parameter(name, &why)),
    }
}

/// `caller_text` on every string of a tool's arguments (in arrays too),
/// checked before the call asks for any confirmation: a text the handler
/// would refuse never reaches the person's confirmation form. The error is
/// the handler's own, naming the argument (`events[0]`).
pub fn caller_arguments(args: &Map<String, Value>) -> Result<(), ApiError> {
    // The first refused string's place (`[0]`, `.key`, innermost first) and
    // why; the place is spelled out only for a refusal, so a valid call
    // allocates nothing here.
    fn refused(value: &Value) -> Option<(Vec<String>, String)> {
        match value {
            Value::String(s) => refusal(s).map(|why| (Vec::new(), why)),
            Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
                refused(item).map(|(mut place, why)| {
                    place.push(format!("[{i}]"));
                    (place, why)
                })
            }),
            Value::Object(map) => map.iter().find_map(|(key, item)| {
                refused(item).map(|(mut place, why)| {
                    place.push(format!(".{key}"));
                    (place, why)
                })
            }),
            Value::Null | Value::Bool(_) | Value::Number(_) => None,
        }
    }
    match args.iter().find_map(|(name, value)| refused(value).map(|(place, why)| (name, place, why))) {
        None => Ok(()),
        Some((name, place, why)) => {
            let field: String = std::iter::once(name.as_str()).chain(place.iter().rev().map(String::as_str)).collect();
            Err(ApiError::invalid(&field, why))
        }
    }
}

/// Trimmed text of 1..=max characters without C0 or C1 controls. Alone, for
/// third-party text checked as it always was rather than as a caller's: an
/// ingested attachment's name and type, which the pipeline copies from the
/// e-mail.
pub fn bounded<'v>(field: &str, value: &'v str, max: usize) -> Result<&'v str, ApiError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(ApiError::invalid(field, "must not be empty"));
    }
    if value.chars().count() > max {
        return Err(ApiError::invalid(field, format!("must have at most {max} characters")));
    }
    if value.chars().any(char::is_control) {
        return Err(ApiError::invalid(field, "must not contain control characters"));
    }
    Ok(value)
}

/// An e-mail address, lowercased: a local part and a domain with a dot.
pub fn email_address(field: &str, value: &str) -> Result<String, ApiError> {
    let value = value.trim().to_lowercase();
    let Some((local, domain)) = value.rsplit_once('@') else {
        return Err(ApiError::invalid(field, "must be an e-mail address"));
    };
    let local_ok = (1..=64).contains(&local.len())
        && local.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~.-".contains(&b))
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..");
    if !local_ok || !is_domain(domain) || value.len() > 254 {
        return Err(ApiError::invalid(field, "must be an e-mail address"));
    }
    Ok(value)
}

/// A DNS name with at least two labels.
pub fn is_domain(domain: &str) -> bool {
    let labels: Vec<&str> = domain.split('.').collect();
    domain.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            (1..=63).contains(&l.len())
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(email_address("f", " Billing@Acme.COM ").unwrap(), "billing@acme.com");
        for bad in ["", "a", "a@b", "@b.com", "a@@b.com", "a b@c.com", "a@-b.com", "a..b@c.com", "a@b..com"] {
            assert!(email_address("f", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn query_parameters_are_strict() {
        let allowed = |name: &str| name == "limit";
        let refuse = |name: &str| unknown_parameter(name, &["limit"]);
        assert!(query(Some("limit=5"), allowed, refuse).is_ok());
        assert!(query(Some("limit=5&limit=6"), allowed, refuse).is_err());
        assert!(query(Some("foo=1"), allowed, refuse).is_err());
    }
}
