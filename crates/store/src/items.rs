//! Entity ↔ item conversion and the paged query every list uses.
//!
//! An item is its record (serialized with `serde_dynamo`) plus its key
//! attributes. A page is filled by as few queries as possible: one when there
//! is no filter; with a filter, further queries until the page is full or the
//! partition ends (at most `MAX_QUERIES`). The next cursor is the key of the
//! last item returned, so nothing is skipped or repeated between pages.
//!
//! A list over a workspace's write shards (`list_shards`) runs one such query
//! per shard, all at once, and merges them by the sort key; its position is
//! the sort key of the last item returned (`{"after": …}`), and each shard
//! resumes strictly past it. A shard that stopped early (its query budget
//! spent) bounds the page: only keys every shard has read past are returned.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::keys::{GSI1, GSI1_PK, GSI1_SK, PK, SK};
use super::{Store, StoreError, s};

pub type Item = HashMap<String, AttributeValue>;

/// A position in a list: the string key attributes of an item.
pub type Position = HashMap<String, String>;

const MAX_QUERIES: usize = 5;

/// Key attributes of an item.
pub struct Keys {
    pub pk: String,
    pub sk: String,
    pub gsi1: Option<(String, String)>,
}

impl Keys {
    pub fn new(pk: impl Into<String>, sk: impl Into<String>) -> Keys {
        Keys { pk: pk.into(), sk: sk.into(), gsi1: None }
    }

    pub fn with_gsi1(mut self, pk: impl Into<String>, sk: impl Into<String>) -> Keys {
        self.gsi1 = Some((pk.into(), sk.into()));
        self
    }
}

pub fn to_item<T: Serialize>(keys: Keys, record: &T) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(record).map_err(corrupt)?;
    item.insert(PK.into(), s(keys.pk));
    item.insert(SK.into(), s(keys.sk));
    if let Some((pk, sk)) = keys.gsi1 {
        item.insert(GSI1_PK.into(), s(pk));
        item.insert(GSI1_SK.into(), s(sk));
    }
    Ok(item)
}

pub fn from_item<T: DeserializeOwned>(item: Item) -> Result<T, StoreError> {
    serde_dynamo::from_item(item).map_err(corrupt)
}

/// A record that does not convert: the rule that failed, never the value
/// (a stored subject or address would reach the log that reports it).
fn corrupt(error: serde_dynamo::Error) -> StoreError {
    StoreError::Corrupt(inbox_support::telemetry::without_values(&error.to_string()))
}

/// The position attribute of a list merged over shards.
const AFTER: &str = "after";

/// A list query: the partition, an optional sort-key condition and filter.
#[derive(Clone)]
pub struct ListQuery {
    pub use_gsi1: bool,
    pub partition: String,
    /// `begins_with` prefix on the sort key.
    pub prefix: Option<String>,
    /// Inclusive bounds on the sort key (index sort key when `use_gsi1`).
    pub between: Option<(String, String)>,
    pub newest_first: bool,
    /// A filter expression with its `#name` and `:value` placeholders.
    pub filter: Option<String>,
    pub names: Vec<(String, String)>,
    pub values: Vec<(String, AttributeValue)>,
    /// Where the listed items live in the base table: their partition key
    /// and sort-key prefix (what a start position must stay inside).
    pub items_in: (String, String),
}

impl ListQuery {
    pub fn base(partition: String, prefix: String) -> ListQuery {
        ListQuery {
            use_gsi1: false,
            items_in: (partition.clone(), prefix.clone()),
            partition,
            prefix: Some(prefix),
            between: None,
            newest_first: false,
            filter: None,
            names: Vec::new(),
            values: Vec::new(),
        }
    }

    /// A newest-first query of the index partition `partition`, whose items
    /// live in the base table under `table_pk` with sort keys starting `sk_prefix`.
    pub fn gsi1(partition: String, table_pk: String, sk_prefix: &str) -> ListQuery {
        ListQuery {
            use_gsi1: true,
            items_in: (table_pk, sk_prefix.to_owned()),
            partition,
            prefix: None,
            between: None,
            newest_first: true,
            filter: None,
            names: Vec::new(),
            values: Vec::new(),
        }
    }

    /// The same query over the sort keys from `lo` to `hi` (inclusive),
    /// instead of all those with its prefix.
    pub fn within(mut self, lo: String, hi: String) -> ListQuery {
        self.prefix = None;
        self.between = Some((lo, hi));
        self
    }

    /// Adds `clause` to the filter (joined with AND).
    pub fn and(&mut self, clause: &str) {
        self.filter = Some(match self.filter.take() {
            None => clause.to_owned(),
            Some(f) => format!("({f}) AND ({clause})"),
        });
    }

    pub fn name(&mut self, placeholder: &str, attribute: &str) {
        self.names.push((placeholder.into(), attribute.into()));
    }

    pub fn value(&mut self, placeholder: &str, value: AttributeValue) {
        self.values.push((placeholder.into(), value));
    }

    /// Whether `start` can be a position in this query: exactly the key
    /// attributes of the table (and of the index, when one is queried), none
    /// empty, inside the queried partition and sort-key range. A position
    /// comes back from a client (sealed in a cursor), so it is checked before
    /// DynamoDB sees it.
    pub fn admits(&self, start: &Position) -> bool {
        let names: &[&str] = if self.use_gsi1 { &[PK, SK, GSI1_PK, GSI1_SK] } else { &[PK, SK] };
        let (pk_attr, sk_attr) = if self.use_gsi1 { (GSI1_PK, GSI1_SK) } else { (PK, SK) };
        let exact = start.len() == names.len() && names.iter().all(|n| start.get(*n).is_some_and(|v| !v.is_empty()));
        let sort_key = start.get(sk_attr).map_or("", String::as_str);
        let (table_pk, item_prefix) = &self.items_in;
        exact
            && start.get(pk_attr) == Some(&self.partition)
            && start.get(PK) == Some(table_pk)
            && start.get(SK).is_some_and(|sk| sk.starts_with(item_prefix.as_str()))
            && self.prefix.as_ref().is_none_or(|p| sort_key.starts_with(p.as_str()))
            && self.between.as_ref().is_none_or(|(lo, hi)| (lo.as_str()..=hi.as_str()).contains(&sort_key))
    }
}

/// `query` narrowed to the sort keys strictly past `after` in its order
/// (the bound is inclusive in DynamoDB; the item at it is dropped when merged).
fn past(mut query: ListQuery, after: Option<&str>) -> ListQuery {
    let Some(after) = after else { return query };
    let (lo, hi) = match (query.between.take(), query.prefix.take()) {
        (Some(range), _) => range,
        // Every key with the prefix: from the prefix to it followed by the highest character.
        (None, Some(prefix)) => (prefix.clone(), format!("{prefix}\u{10ffff}")),
        (None, None) => ("0".to_owned(), "\u{10ffff}".to_owned()),
    };
    query.between = Some(if query.newest_first {
        (lo.clone(), if after < hi.as_str() { after.to_owned() } else { hi }.max(lo))
    } else {
        let lo = if after > lo.as_str() { after.to_owned() } else { lo };
        (lo.clone(), hi.max(lo))
    });
    query
}

pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<Position>,
}

fn position(item: &Item, use_gsi1: bool) -> Position {
    let names: &[&str] = if use_gsi1 { &[PK, SK, GSI1_PK, GSI1_SK] } else { &[PK, SK] };
    names
        .iter()
        .filter_map(|n| match item.get(*n) {
            Some(AttributeValue::S(v)) => Some(((*n).to_owned(), v.clone())),
            _ => None,
        })
        .collect()
}

impl Store {
    pub async fn list<T: DeserializeOwned>(
        &self,
        query: &ListQuery,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<T>, StoreError> {
        let page = self.list_items(query, limit, start).await?;
        let items = page.items.into_iter().map(from_item).collect::<Result<Vec<T>, _>>()?;
        Ok(Page { items, next: page.next })
    }

    /// `list` over the write shards of a workspace, one query per shard
    /// (`queries`, alike but for their partition), merged by the sort key.
    /// With one shard, exactly `list`.
    pub async fn list_shards<T: DeserializeOwned>(
        &self,
        queries: Vec<ListQuery>,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<T>, StoreError> {
        let Some(first) = queries.first() else { return Ok(Page { items: Vec::new(), next: None }) };
        if queries.len() == 1 {
            return self.list(first, limit, start).await;
        }
        let sort_attr = if first.use_gsi1 { GSI1_SK } else { SK };
        let newest_first = first.newest_first;
        let after = match start {
            None => None,
            Some(position) => match position.get(AFTER) {
                Some(key) if position.len() == 1 && !key.is_empty() && key.len() <= 1024 => Some(key.clone()),
                // A cursor from before the workspace had several shards: a
                // position in shard 0's list goes on from its sort key.
                _ if first.admits(&position) => position.get(sort_attr).cloned(),
                _ => return Err(StoreError::InvalidPosition),
            },
        };
        let narrowed: Vec<ListQuery> = queries.into_iter().map(|q| past(q, after.as_deref())).collect();
        let pages =
            futures_util::future::try_join_all(narrowed.iter().map(|q| self.list_items(q, limit, None))).await?;
        let key_of = |item: &Item| match item.get(sort_attr) {
            Some(AttributeValue::S(k)) => k.clone(),
            _ => String::new(),
        };
        // Past `after` in the list's order.
        let beyond = |key: &str, bound: &str| if newest_first { key < bound } else { key > bound };
        let mut frontier: Option<String> = None;
        let mut merged: Vec<(String, Item)> = Vec::new();
        for page in pages {
            if let Some(next) = page.next.as_ref().and_then(|p| p.get(sort_attr)) {
                // The most restrictive frontier: the one least far along.
                if frontier.as_deref().is_none_or(|f| beyond(f, next)) {
                    frontier = Some(next.clone());
                }
            }
            merged.extend(
                page.items
                    .into_iter()
                    .map(|item| (key_of(&item), item))
                    .filter(|(key, _)| after.as_deref().is_none_or(|a| beyond(key, a))),
            );
        }
        merged.sort_by(|a, b| if newest_first { b.0.cmp(&a.0) } else { a.0.cmp(&b.0) });
        if let Some(f) = &frontier {
            merged.retain(|(key, _)| key == f || !beyond(key, f));
        }
        let next = if merged.len() > limit {
            merged.truncate(limit);
            merged.last().map(|(key, _)| key.clone())
        } else {
            frontier
        };
        let items = merged.into_iter().map(|(_, item)| from_item(item)).collect::<Result<Vec<T>, _>>()?;
        Ok(Page { items, next: next.map(|key| Position::from([(AFTER.to_owned(), key)])) })
    }

    /// `list`, with the items as stored.
    pub async fn list_items(
        &self,
        query: &ListQuery,
        limit: usize,
        start: Option<Position>,
    ) -> Result<Page<Item>, StoreError> {
        let (pk_attr, sk_attr) = if query.use_gsi1 { (GSI1_PK, GSI1_SK) } else { (PK, SK) };
        let mut condition = "#kp = :kp".to_owned();
        if query.prefix.is_some() {
            condition.push_str(" AND begins_with(#ks, :prefix)");
        } else if query.between.is_some() {
            condition.push_str(" AND #ks BETWEEN :lo AND :hi");
        }
        if start.as_ref().is_some_and(|p| !query.admits(p)) {
            return Err(StoreError::InvalidPosition);
        }
        let mut start: Option<Item> = start.map(|p| p.into_iter().map(|(k, v)| (k, s(v))).collect());
        let mut kept: Vec<Item> = Vec::new();
        let mut more = false;
        for _ in 0..MAX_QUERIES {
            // Ask for one more than needed, so a full page knows whether more follow.
            let want = i32::try_from(limit + 1 - kept.len()).unwrap_or(i32::MAX);
            let mut request = self
                .client()
                .query()
                .table_name(self.table())
                .key_condition_expression(&condition)
                .expression_attribute_names("#kp", pk_attr)
                .expression_attribute_values(":kp", s(query.partition.clone()))
                .scan_index_forward(!query.newest_first)
                .limit(if query.filter.is_some() { want.max(25) } else { want })
                .set_exclusive_start_key(start.take());
            if query.prefix.is_some() || query.between.is_some() {
                request = request.expression_attribute_names("#ks", sk_attr);
            }
            if let Some(prefix) = &query.prefix {
                request = request.expression_attribute_values(":prefix", s(prefix.clone()));
            }
            if let Some((lo, hi)) = &query.between {
                request = request
                    .expression_attribute_values(":lo", s(lo.clone()))
                    .expression_attribute_values(":hi", s(hi.clone()));
            }
            if query.use_gsi1 {
                request = request.index_name(GSI1);
            }
            if let Some(filter) = &query.filter {
                request = request.filter_expression(filter);
            }
            for (placeholder, name) in &query.names {
                request = request.expression_attribute_names(placeholder, name);
            }
            for (placeholder, value) in &query.values {
                request = request.expression_attribute_values(placeholder, value.clone());
            }
            let out = request.send().await?;
            kept.extend(out.items.unwrap_or_default());
            if kept.len() > limit {
                more = true;
                break;
            }
            if out.last_evaluated_key.is_none() {
                more = false;
                break;
            }
            start = out.last_evaluated_key;
            more = true;
        }
        let next = if kept.len() > limit {
            kept.truncate(limit);
            kept.last().map(|i| position(i, query.use_gsi1))
        } else if more {
            // The query budget ran out before the page filled: continue from
            // where the last query stopped (or after the last kept item).
            match start.take() {
                Some(key) => Some(
                    key.into_iter()
                        .filter_map(|(k, v)| if let AttributeValue::S(v) = v { Some((k, v)) } else { None })
                        .collect(),
                ),
                None => kept.last().map(|i| position(i, query.use_gsi1)),
            }
        } else {
            None
        };
        Ok(Page { items: kept, next })
    }

    pub async fn get<T: DeserializeOwned>(&self, pk: String, sk: String) -> Result<Option<T>, StoreError> {
        self.item(pk, sk).await?.map(from_item).transpose()
    }

    /// One item as it is stored (a consistent read).
    pub(super) async fn item(&self, pk: String, sk: String) -> Result<Option<Item>, StoreError> {
        let out = self
            .client()
            .get_item()
            .table_name(self.table())
            .key(PK, s(pk))
            .key(SK, s(sk))
            .consistent_read(true)
            .send()
            .await?;
        Ok(out.item)
    }
}
