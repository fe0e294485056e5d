//! Strict JSON: what both surfaces parse request bodies with. Like
//! `serde_json::from_str::<Value>`, but an object with a repeated key is an
//! error instead of silently keeping the last value, so no check can read one
//! value of a member and a handler another. And `text`: how every answer's
//! JSON is written.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// How deeply arrays and objects may nest (serde_json's recursion limit);
/// deeper is a parse error (-32700 on MCP, `invalid_json` on REST), never a
/// stack overflow.
pub const MAX_DEPTH: usize = 127;

/// `value` as compact JSON text. Through serde_json's byte writer: a
/// `Value`'s `Display` (`to_string()`) writes through `fmt::Formatter` one
/// token at a time, about three times the work.
pub fn text(value: &Value) -> String {
    // Writing a `Value` cannot fail (its keys are strings); `Display` is the
    // fallback that cannot fail either.
    serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
}

/// Appends `value` to `out` as a JSON string (quoted and escaped).
pub fn write_string(out: &mut Vec<u8>, value: &str) {
    use serde::Serializer as _;
    // Writing into a Vec cannot fail.
    let _ = serde_json::Serializer::new(out).serialize_str(value);
}

/// Parses JSON like `serde_json::from_str::<Value>`, but rejects an object with
/// a repeated key instead of silently keeping the last value.
pub fn parse_strict(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let StrictValue(value) = StrictValue::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

struct StrictValue(Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        // serde_json never yields a non-finite f64, so this is always Some.
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            let StrictValue(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn duplicate_keys_are_a_parse_error_at_any_depth() {
        assert!(parse_strict(r#"{"a":1,"a":2}"#).is_err());
        assert!(parse_strict(r#"{"p":{"name":"x","name":"y"}}"#).is_err());
        assert_eq!(parse_strict(r#"{"a":[1,{"b":null}]}"#).unwrap(), json!({"a":[1,{"b":null}]}));
    }

    #[test]
    fn trailing_garbage_is_a_parse_error() {
        assert!(parse_strict(r#"{"a":1} x"#).is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(100_000);
        assert!(parse_strict(&deep).is_err());
    }

    #[test]
    fn nesting_is_accepted_to_depth_127_and_refused_past_it() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(parse_strict(&nested(MAX_DEPTH)).is_ok(), "depth {MAX_DEPTH}");
        assert!(parse_strict(&nested(MAX_DEPTH + 1)).is_err(), "depth {}", MAX_DEPTH + 1);
        let objects = |depth: usize| format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        assert!(parse_strict(&objects(MAX_DEPTH)).is_ok());
        assert!(parse_strict(&objects(MAX_DEPTH + 1)).is_err());
    }
}
