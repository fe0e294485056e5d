//! Snapshots of the local table, so `make run` keeps its data across
//! restarts: every item, written as one line of DynamoDB JSON
//! (`{"pk":{"S":"…"},…}`: types kept exactly, string sets stay sets), and
//! read back into an empty table. A development component (the `dev`
//! feature): a deployment's table is DynamoDB's, with its own backups.

use std::collections::HashMap;

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::items::Item;
use super::{Store, StoreError};

/// An attribute value as DynamoDB JSON.
fn to_json(value: &AttributeValue) -> Value {
    match value {
        AttributeValue::S(s) => json!({"S": s}),
        AttributeValue::N(n) => json!({"N": n}),
        AttributeValue::B(b) => json!({"B": STANDARD.encode(b.as_ref())}),
        AttributeValue::Bool(b) => json!({"BOOL": b}),
        AttributeValue::Null(_) => json!({"NULL": true}),
        AttributeValue::Ss(v) => json!({"SS": v}),
        AttributeValue::Ns(v) => json!({"NS": v}),
        AttributeValue::Bs(v) => json!({"BS": v.iter().map(|b| STANDARD.encode(b.as_ref())).collect::<Vec<_>>()}),
        AttributeValue::L(v) => json!({"L": v.iter().map(to_json).collect::<Vec<_>>()}),
        AttributeValue::M(m) => json!({"M": m.iter().map(|(k, v)| (k.clone(), to_json(v))).collect::<Map<_, _>>()}),
        _ => Value::Null,
    }
}

/// An attribute value from DynamoDB JSON, or why not.
fn from_json(value: &Value) -> Result<AttributeValue, String> {
    let Some((kind, inner)) = value.as_object().filter(|o| o.len() == 1).and_then(|o| o.iter().next()) else {
        return Err(format!("not a typed attribute value: {value}"));
    };
    let strings = |v: &Value| -> Result<Vec<String>, String> {
        v.as_array()
            .ok_or("a set must be an array")?
            .iter()
            .map(|s| s.as_str().map(str::to_owned).ok_or_else(|| "a set holds strings".to_owned()))
            .collect()
    };
    let blob = |s: &str| STANDARD.decode(s).map(Blob::new).map_err(|e| e.to_string());
    Ok(match (kind.as_str(), inner) {
        ("S", Value::String(s)) => AttributeValue::S(s.clone()),
        ("N", Value::String(n)) => AttributeValue::N(n.clone()),
        ("B", Value::String(b)) => AttributeValue::B(blob(b)?),
        ("BOOL", Value::Bool(b)) => AttributeValue::Bool(*b),
        ("NULL", _) => AttributeValue::Null(true),
        ("SS", v) => AttributeValue::Ss(strings(v)?),
        ("NS", v) => AttributeValue::Ns(strings(v)?),
        ("BS", v) => AttributeValue::Bs(strings(v)?.iter().map(|s| blob(s)).collect::<Result<_, _>>()?),
        ("L", Value::Array(v)) => AttributeValue::L(v.iter().map(from_json).collect::<Result<_, _>>()?),
        ("M", Value::Object(m)) => AttributeValue::M(
            m.iter().map(|(k, v)| Ok((k.clone(), from_json(v)?))).collect::<Result<HashMap<_, _>, String>>()?,
        ),
        _ => return Err(format!("not a typed attribute value: {value}")),
    })
}

/// One item as a line of DynamoDB JSON.
pub fn item_line(item: &Item) -> String {
    let mut sorted: Vec<(&String, &AttributeValue)> = item.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), to_json(v))).collect()).to_string()
}

/// An item from a line of DynamoDB JSON, or why not.
pub fn line_item(line: &str) -> Result<Item, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let object = value.as_object().ok_or("an item is a JSON object")?;
    object.iter().map(|(k, v)| Ok((k.clone(), from_json(v)?))).collect()
}

impl Store {
    /// Every item of the table (a Scan, page by page: a local table is small).
    pub async fn all_items(&self) -> Result<Vec<Item>, StoreError> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let out =
                self.client().scan().table_name(self.table()).set_exclusive_start_key(start.take()).send().await?;
            items.extend(out.items.unwrap_or_default());
            match out.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => return Ok(items),
            }
        }
    }

    /// Writes `item` as it is (a restore into an empty table).
    pub async fn put_raw(&self, item: Item) -> Result<(), StoreError> {
        self.client().put_item().table_name(self.table()).set_item(Some(item)).send().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_value_survives_a_line() {
        let item: Item = [
            ("pk".to_owned(), AttributeValue::S("T#org#W#ws".into())),
            ("n".to_owned(), AttributeValue::N("42".into())),
            ("ids".to_owned(), AttributeValue::Ss(vec!["a".into(), "b".into()])),
            ("flag".to_owned(), AttributeValue::Bool(true)),
            ("none".to_owned(), AttributeValue::Null(true)),
            ("bytes".to_owned(), AttributeValue::B(Blob::new(vec![0, 1, 255]))),
            (
                "nested".to_owned(),
                AttributeValue::M(HashMap::from([(
                    "list".to_owned(),
                    AttributeValue::L(vec![AttributeValue::S("x".into()), AttributeValue::N("1.5".into())]),
                )])),
            ),
        ]
        .into_iter()
        .collect();
        assert_eq!(line_item(&item_line(&item)).unwrap(), item);
        assert!(line_item("{\"pk\":{\"Q\":1}}").is_err());
        assert!(line_item("[]").is_err());
    }
}
