//! The development authorization server's state (`inbox::dev::oauth`):
//! registered clients, authorization codes and refresh tokens, each an item
//! with a TTL, outside every tenant's partition (`AUTHZ#…`: the issuer's own,
//! not an organization's). Codes are taken once (a conditional delete that
//! returns the item); a refresh token is spent once (a conditional update),
//! and spending it again revokes its family.

use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::items::{Keys, from_item, to_item};
use super::keys::{self, PK, SK, TTL};
use super::{Store, StoreError, n, s};

/// A client registered with `POST /register` (RFC 7591).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Client {
    pub client_id: String,
    pub client_name: Option<String>,
    pub redirect_uris: Vec<String>,
    /// `native` clients may use loopback redirect URIs on any port (RFC 8252).
    pub application_type: String,
}

/// What an authorization code or a refresh token stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub client_id: String,
    pub redirect_uri: String,
    /// The RFC 8707 resource: the token's audience.
    pub resource: String,
    pub scope: String,
    pub sub: String,
    pub org: String,
    /// PKCE (codes only): the S256 challenge.
    pub code_challenge: Option<String>,
    /// Refresh tokens: the family every rotation of one login shares.
    pub family: Option<String>,
}

/// Spending a refresh token.
#[derive(Debug, PartialEq, Eq)]
pub enum Spent {
    /// Its grant: a new token of the same family may be issued.
    Fresh(Grant),
    /// Unknown, expired, or its family revoked.
    Invalid,
    /// Already spent once: its family is now revoked.
    Reused,
}

fn ttl_from_now(secs: u64) -> AttributeValue {
    n(inbox_support::sys::unix_now().saturating_add(secs))
}

fn live(item: &super::items::Item) -> bool {
    match item.get(TTL) {
        Some(AttributeValue::N(at)) => at.parse::<u64>().is_ok_and(|at| at > inbox_support::sys::unix_now()),
        _ => false,
    }
}

impl Store {
    async fn put_expiring<T: Serialize>(
        &self,
        pk: String,
        sk: &str,
        record: &T,
        ttl_secs: u64,
    ) -> Result<(), StoreError> {
        let mut item = to_item(Keys::new(pk, sk), record)?;
        item.insert(TTL.into(), ttl_from_now(ttl_secs));
        self.put_conditional(item, "attribute_not_exists(pk)", &[]).await
    }

    async fn get_live<T: DeserializeOwned>(&self, pk: String, sk: &str) -> Result<Option<T>, StoreError> {
        match self.item(pk, sk.into()).await? {
            Some(item) if live(&item) => from_item(item).map(Some),
            _ => Ok(None),
        }
    }

    pub async fn put_client(&self, client: &Client, ttl_secs: u64) -> Result<(), StoreError> {
        self.put_expiring(keys::authz("CLIENT", &client.client_id), "CLIENT", client, ttl_secs).await
    }

    pub async fn get_client(&self, client_id: &str) -> Result<Option<Client>, StoreError> {
        self.get_live(keys::authz("CLIENT", client_id), "CLIENT").await
    }

    pub async fn put_code(&self, code_hash: &str, grant: &Grant, ttl_secs: u64) -> Result<(), StoreError> {
        self.put_expiring(keys::authz("CODE", code_hash), "CODE", grant, ttl_secs).await
    }

    /// The code's grant, once: the item is deleted as it is read.
    pub async fn take_code(&self, code_hash: &str) -> Result<Option<Grant>, StoreError> {
        let out = self
            .client()
            .delete_item()
            .table_name(self.table())
            .key(PK, s(keys::authz("CODE", code_hash)))
            .key(SK, s("CODE"))
            .condition_expression("attribute_exists(pk)")
            .return_values(ReturnValue::AllOld)
            .send()
            .await;
        match out.map_err(StoreError::from) {
            Ok(out) => match out.attributes {
                Some(item) if live(&item) => from_item(item).map(Some),
                _ => Ok(None),
            },
            Err(StoreError::Conflict) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub async fn put_refresh(&self, token_hash: &str, grant: &Grant, ttl_secs: u64) -> Result<(), StoreError> {
        self.put_expiring(keys::authz("RT", token_hash), "RT", grant, ttl_secs).await
    }

    /// Spends a refresh token: once; a second time revokes its family.
    pub async fn spend_refresh(&self, token_hash: &str) -> Result<Spent, StoreError> {
        let Some(item) = self.item(keys::authz("RT", token_hash), "RT".into()).await? else {
            return Ok(Spent::Invalid);
        };
        if !live(&item) {
            return Ok(Spent::Invalid);
        }
        let grant: Grant = from_item(item)?;
        let family = grant.family.clone().unwrap_or_default();
        if self.item(keys::authz("FAMILY", &family), "REVOKED".into()).await?.is_some() {
            return Ok(Spent::Invalid);
        }
        let spent = self
            .client()
            .update_item()
            .table_name(self.table())
            .key(PK, s(keys::authz("RT", token_hash)))
            .key(SK, s("RT"))
            .update_expression("SET spent = :yes")
            .condition_expression("attribute_not_exists(spent)")
            .expression_attribute_values(":yes", AttributeValue::Bool(true))
            .send()
            .await;
        match spent.map_err(StoreError::from) {
            Ok(_) => Ok(Spent::Fresh(grant)),
            Err(StoreError::Conflict) => {
                let mut revoked = super::items::Item::new();
                revoked.insert(PK.into(), s(keys::authz("FAMILY", &family)));
                revoked.insert(SK.into(), s("REVOKED"));
                revoked.insert(TTL.into(), ttl_from_now(30 * 86_400));
                self.client().put_item().table_name(self.table()).set_item(Some(revoked)).send().await?;
                Ok(Spent::Reused)
            }
            Err(e) => Err(e),
        }
    }
}
