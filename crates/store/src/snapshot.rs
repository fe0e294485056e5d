//! Snapshots of the local table, so `make run` keeps its data across
//! restarts: every item, written as one line of DynamoDB JSON
//! (`{"pk":{"S":"…"},…}`: types kept exactly, string sets stay sets), and
//! read back into an empty table. A development component (the `dev`
//! feature): a deployment's table is DynamoDB's, with its own backups.
//!
//! What a snapshot is trusted for (docs/development.md, "Local data"): it is
//! the developer's own file, of their own local table, restored into that
//! local table only. So the file is private (0600, in a directory made
//! 0700: it holds every record of the table, e-mails and webhook secrets
//! included); both directions refuse a table that is not on this machine
//! (`local_endpoint`: no `DYNAMODB_ENDPOINT`, which means AWS, or one on
//! another host); a restore refuses a table that is not empty and an item
//! without its string keys (`checked_item`). The items are otherwise taken
//! as they are: a file someone else wrote is data the local server then
//! serves as its own.

use std::collections::HashMap;

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::items::Item;
use super::keys::{PK, SK};
use super::{Store, StoreError};

/// Whether the table's endpoint is on this machine: `http://` on
/// 127.0.0.1, `localhost` or `[::1]`. None (AWS) is not.
pub fn local_endpoint(endpoint: Option<&str>) -> bool {
    endpoint
        .and_then(|e| url::Url::parse(e).ok())
        .is_some_and(|u| u.scheme() == "http" && matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]")))
}

/// Writes a snapshot's text to `path` readable by its owner only (0600),
/// through a new file beside it renamed over it: an interrupted save never
/// leaves half a file, and a file of an older save with wider permissions is
/// replaced, not reused. A directory it makes is 0700; one that exists is
/// left as it is (it may be anyone's).
pub fn write_file(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        private_dir(dir)?;
    }
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = std::path::PathBuf::from(partial);
    match std::fs::remove_file(&partial) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    inbox_support::keyfile::write_private(&partial, text)?;
    std::fs::rename(&partial, path)
}

#[cfg(unix)]
fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// An item of a file to restore, if it has the table's keys as strings.
pub fn checked_item(line: &str) -> Result<Item, String> {
    let item = line_item(line)?;
    for key in [PK, SK] {
        if !matches!(item.get(key), Some(AttributeValue::S(v)) if !v.is_empty()) {
            return Err(format!("an item needs its key {key} as a non-empty string"));
        }
    }
    Ok(item)
}

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

    /// Whether the table has no item (one Scan of one item).
    pub async fn is_empty(&self) -> Result<bool, StoreError> {
        let out = self.client().scan().table_name(self.table()).limit(1).send().await?;
        Ok(out.items.unwrap_or_default().is_empty())
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

    #[test]
    fn a_snapshot_goes_to_and_comes_from_a_table_on_this_machine_only() {
        for local in ["http://127.0.0.1:8000", "http://localhost:8103/", "http://[::1]:8000"] {
            assert!(local_endpoint(Some(local)), "{local}");
        }
        for other in [
            None,
            Some("https://dynamodb.us-east-1.amazonaws.com"),
            Some("http://10.0.0.5:8000"),
            Some("http://127.0.0.1.example:80"),
            Some("nonsense"),
        ] {
            assert!(!local_endpoint(other), "{other:?}");
        }
    }

    #[test]
    fn a_restored_item_needs_its_string_keys() {
        assert!(checked_item(r#"{"pk":{"S":"T#a"},"sk":{"S":"META"}}"#).is_ok());
        for bad in
            [r#"{"pk":{"S":"T#a"}}"#, r#"{"pk":{"N":"1"},"sk":{"S":"META"}}"#, r#"{"pk":{"S":""},"sk":{"S":"M"}}"#]
        {
            assert!(checked_item(bad).is_err(), "{bad}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_snapshot_file_is_private_to_its_owner_and_so_is_the_directory_it_makes() {
        use std::os::unix::fs::PermissionsExt;
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let root = std::env::temp_dir().join(format!("kobana-snapshot-{}-{nanos}", std::process::id()));
        let file = root.join("data/table.jsonl");
        write_file(&file, "{}\n").unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&file), mode(file.parent().unwrap())), (0o600, 0o700));
        // A file of an older save, readable by everyone, is replaced by a private one.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_file(&file, "{}\n{}\n").unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{}\n{}\n");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
