//! `limit` and `cursor` for every list. Cursors are opaque and tamper-proof:
//! an encrypted and authenticated token (see `inbox_support::secrets`) holding the
//! position after the last item shown, bound to the workspace and to the query it came from (route
//! and filters). A cursor that was forged, altered, minted for another
//! workspace or another query is a 400 `invalid_cursor`.

use std::collections::BTreeMap;

use aws_lc_rs::digest::{SHA256, digest};
use serde_json::{Value, json};

use super::error::ApiError;
use super::input::invalid_parameter;
use inbox_domain::{Tenant, hex};
use inbox_store::items::Position;
use inbox_support::secrets::Secrets;

pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 100;
const PURPOSE: &str = "cursor";

/// A request for one page of a list.
pub struct PageRequest {
    pub limit: usize,
    pub start: Option<Position>,
    /// Identifies the query: the route and its filters.
    fingerprint: String,
}

/// Reads `limit` and `cursor` from `params`; the other parameters are the
/// query's filters and go into its fingerprint.
pub fn page_request(
    secrets: &Secrets,
    tenant: &Tenant,
    route: &str,
    params: &BTreeMap<String, String>,
) -> Result<PageRequest, ApiError> {
    let limit = match params.get("limit") {
        None => DEFAULT_LIMIT,
        Some(raw) => match raw.parse::<usize>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
            _ => return Err(invalid_parameter("limit", "must be a whole number from 1 to 100")),
        },
    };
    // The filters as JSON ([route, {name: value}]): unambiguous, so no other
    // set of filters (however its values are encoded) has the same fingerprint.
    let filters: BTreeMap<&str, &str> =
        params.iter().filter(|(k, _)| *k != "limit" && *k != "cursor").map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let material = json!([route, filters]).to_string();
    let fingerprint = hex(digest(&SHA256, material.as_bytes()).as_ref())[..32].to_owned();
    let start = match params.get("cursor") {
        None => None,
        Some(cursor) => Some(open(secrets, tenant, &fingerprint, cursor)?),
    };
    Ok(PageRequest { limit, start, fingerprint })
}

fn invalid_cursor() -> ApiError {
    ApiError::invalid_cursor()
}

fn open(secrets: &Secrets, tenant: &Tenant, fingerprint: &str, cursor: &str) -> Result<Position, ApiError> {
    let payload = secrets.open_token(PURPOSE, cursor).ok_or_else(invalid_cursor)?;
    let field = |name: &str| payload.get(name).and_then(Value::as_str);
    let bound = field("o") == Some(tenant.org.as_str())
        && field("w") == Some(tenant.workspace.as_str())
        && field("q") == Some(fingerprint);
    if !bound {
        return Err(invalid_cursor());
    }
    let Some(Value::Object(key)) = payload.get("k") else { return Err(invalid_cursor()) };
    key.iter().map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())).ok_or_else(invalid_cursor)).collect()
}

impl PageRequest {
    /// The cursor for the page after this one.
    pub fn next_cursor(&self, secrets: &Secrets, tenant: &Tenant, next: Option<Position>) -> Value {
        match next {
            None => Value::Null,
            Some(key) => secrets
                .seal_token(
                    PURPOSE,
                    &json!({"o": tenant.org.as_str(), "w": tenant.workspace.as_str(), "q": self.fingerprint, "k": key}),
                )
                .map_or(Value::Null, Value::from),
        }
    }
}
