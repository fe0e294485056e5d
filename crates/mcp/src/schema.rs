//! A validator for the JSON Schema subset the tool catalogue uses: an object
//! root with `properties`, `required` and `additionalProperties: false`;
//! properties of type string (`minLength`, `maxLength`, `enum`, `format`
//! `email`), integer (`minimum`, `maximum`), boolean, and arrays of string
//! enums (`minItems`, `maxItems`, `uniqueItems`). Every schema in the
//! catalogue is checked against this subset by a unit test, so nothing a
//! schema promises goes unchecked.

use serde_json::{Map, Value};

/// The first problem found, naming the argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub field: String,
    pub message: String,
}

fn invalid(field: &str, message: impl Into<String>) -> Invalid {
    Invalid { field: field.to_owned(), message: message.into() }
}

pub fn validate(schema: &Value, args: &Map<String, Value>) -> Result<(), Invalid> {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    for key in args.keys() {
        if !properties.contains_key(key) {
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            return Err(invalid(key, format!("unknown argument; this tool takes {}", known.join(", "))));
        }
    }
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !args.contains_key(name) {
                return Err(invalid(name, "is required"));
            }
        }
    }
    for (name, value) in args {
        if let Some(rule) = properties.get(name) {
            check(name, rule, value)?;
        }
    }
    Ok(())
}

fn check(name: &str, rule: &Value, value: &Value) -> Result<(), Invalid> {
    match rule.get("type").and_then(Value::as_str) {
        Some("string") => {
            let Some(s) = value.as_str() else { return Err(invalid(name, "must be a string")) };
            let len = s.chars().count() as u64;
            if let Some(min) = rule.get("minLength").and_then(Value::as_u64)
                && len < min
            {
                return Err(invalid(name, format!("must have at least {min} characters")));
            }
            if let Some(max) = rule.get("maxLength").and_then(Value::as_u64)
                && len > max
            {
                return Err(invalid(name, format!("must have at most {max} characters")));
            }
            check_enum(name, rule, value)?;
            if rule.get("format").and_then(Value::as_str) == Some("email") && !looks_like_email(s) {
                return Err(invalid(name, "must be an e-mail address"));
            }
            Ok(())
        }
        Some("integer") => {
            let Some(n) = value.as_i64().filter(|_| value.is_i64() || value.is_u64()) else {
                return Err(invalid(name, "must be an integer"));
            };
            if let Some(min) = rule.get("minimum").and_then(Value::as_i64)
                && n < min
            {
                return Err(invalid(name, format!("must be at least {min}")));
            }
            if let Some(max) = rule.get("maximum").and_then(Value::as_i64)
                && n > max
            {
                return Err(invalid(name, format!("must be at most {max}")));
            }
            Ok(())
        }
        Some("boolean") if value.is_boolean() => Ok(()),
        Some("boolean") => Err(invalid(name, "must be true or false")),
        Some("array") => {
            let Some(items) = value.as_array() else { return Err(invalid(name, "must be an array")) };
            let count = items.len() as u64;
            if rule.get("minItems").and_then(Value::as_u64).is_some_and(|min| count < min) {
                return Err(invalid(name, "has too few items"));
            }
            if rule.get("maxItems").and_then(Value::as_u64).is_some_and(|max| count > max) {
                return Err(invalid(name, "has too many items"));
            }
            let item_rule = rule.get("items").cloned().unwrap_or(Value::Null);
            for (i, item) in items.iter().enumerate() {
                check(&format!("{name}[{i}]"), &item_rule, item)?;
            }
            if rule.get("uniqueItems") == Some(&Value::Bool(true)) {
                for (i, item) in items.iter().enumerate() {
                    if items.iter().take(i).any(|earlier| earlier == item) {
                        return Err(invalid(name, "must not repeat items"));
                    }
                }
            }
            Ok(())
        }
        _ => Err(invalid(name, "has a type this server cannot check")),
    }
}

fn check_enum(name: &str, rule: &Value, value: &Value) -> Result<(), Invalid> {
    match rule.get("enum").and_then(Value::as_array) {
        Some(allowed) if !allowed.contains(value) => {
            let names: Vec<String> = allowed.iter().map(|v| v.as_str().unwrap_or("").to_owned()).collect();
            Err(invalid(name, format!("must be one of {}", names.join(", "))))
        }
        _ => Ok(()),
    }
}

fn looks_like_email(s: &str) -> bool {
    s.split_once('@').is_some_and(|(local, domain)| !local.is_empty() && domain.contains('.'))
}

/// Whether a schema stays inside the subset `validate` understands.
pub fn is_supported(schema: &Value) -> bool {
    let root_ok = schema.get("type") == Some(&Value::from("object"))
        && schema.get("additionalProperties") == Some(&Value::Bool(false));
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return false };
    root_ok && properties.values().all(property_supported)
}

fn property_supported(rule: &Value) -> bool {
    let Some(object) = rule.as_object() else { return false };
    let known = |keys: &[&str]| object.keys().all(|k| keys.contains(&k.as_str()) || k == "description" || k == "title");
    match rule.get("type").and_then(Value::as_str) {
        Some("string") => known(&["type", "minLength", "maxLength", "enum", "format"]),
        Some("integer") => known(&["type", "minimum", "maximum"]),
        Some("boolean") => known(&["type"]),
        Some("array") => {
            known(&["type", "items", "minItems", "maxItems", "uniqueItems"])
                && rule.get("items").is_some_and(property_supported)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn names_the_offending_argument() {
        let schema = json!({"type": "object", "additionalProperties": false, "required": ["id"],
            "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 5},
                           "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                           "events": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "uniqueItems": true}}});
        assert!(is_supported(&schema));
        assert_eq!(validate(&schema, &args(json!({"id": "x"}))), Ok(()));
        assert_eq!(validate(&schema, &args(json!({}))).unwrap_err().field, "id");
        assert_eq!(validate(&schema, &args(json!({"id": 1}))).unwrap_err().field, "id");
        assert_eq!(validate(&schema, &args(json!({"id": "toolong"}))).unwrap_err().field, "id");
        assert_eq!(validate(&schema, &args(json!({"id": "x", "zzz": 1}))).unwrap_err().field, "zzz");
        assert_eq!(validate(&schema, &args(json!({"id": "x", "limit": 1.5}))).unwrap_err().field, "limit");
        assert_eq!(validate(&schema, &args(json!({"id": "x", "limit": 0}))).unwrap_err().field, "limit");
        assert_eq!(validate(&schema, &args(json!({"id": "x", "events": ["c"]}))).unwrap_err().field, "events[0]");
        assert_eq!(validate(&schema, &args(json!({"id": "x", "events": ["a", "a"]}))).unwrap_err().field, "events");
    }
}
