//! The local development issuer: an Ed25519 signing key kept in a git-ignored
//! file, its JWKS served on loopback, and token minting for `make token`.
//! Configuration refuses it on Lambda (`DEV_ISSUER_KEY` fails start-up there),
//! so it can never be switched on in a deployment by accident, and the Lambda
//! artefacts are built without it (the `dev` feature; see `Cargo.toml`).

use std::path::Path;

use aws_lc_rs::digest::{SHA256, digest};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

pub mod oauth;
pub mod receiver;

pub use crate::keyfile::{KeyFileError as DevError, load_or_create_seed};

/// PKCS#8 v1 prefix of an Ed25519 private key; the 32-byte seed follows.
const ED25519_PKCS8_PREFIX: [u8; 16] =
    [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

#[derive(Clone)]
pub struct DevIssuer {
    pub kid: String,
    key: EncodingKey,
    jwk: Value,
}

impl DevIssuer {
    /// From a 32-byte Ed25519 seed.
    pub fn from_seed(seed: &[u8; 32]) -> Result<DevIssuer, DevError> {
        let der = [ED25519_PKCS8_PREFIX.as_slice(), seed].concat();
        let key = EncodingKey::from_ed_der(&der);
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::EdDSA).map_err(|e| DevError::Key(e.to_string()))?;
        let public = serde_json::to_vec(&jwk.algorithm).map_err(|e| DevError::Key(e.to_string()))?;
        let kid = crate::domain::hex(digest(&SHA256, &public).as_ref().get(..8).unwrap_or_default());
        jwk.common.key_id = Some(kid.clone());
        let jwk = serde_json::to_value(&jwk).map_err(|e| DevError::Key(e.to_string()))?;
        Ok(DevIssuer { kid, key, jwk })
    }

    /// A fresh random key (tests).
    pub fn generate() -> Result<DevIssuer, DevError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|_| DevError::Key("no system randomness".into()))?;
        Self::from_seed(&seed)
    }

    /// Loads the key from `path`, creating it (mode 0600) on first use.
    pub fn load_or_create(path: &Path) -> Result<DevIssuer, DevError> {
        Self::from_seed(&load_or_create_seed(path)?)
    }

    pub fn jwks(&self) -> Value {
        json!({"keys": [self.jwk]})
    }

    /// Signs `claims` (EdDSA, this key's `kid`).
    pub fn sign(&self, claims: &Value) -> Result<String, DevError> {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.key).map_err(|e| DevError::Key(e.to_string()))
    }

    /// A token for `sub` in `org` with `scopes`, valid for `ttl_secs`, with a
    /// unique `jti` (RFC 9068): two tokens minted in the same second for the
    /// same grant (a login and its refresh) are still two tokens.
    pub fn mint(
        &self,
        issuer: &str,
        audiences: &[String],
        sub: &str,
        org: &str,
        scopes: &str,
        ttl_secs: u64,
    ) -> Result<String, DevError> {
        let now = jsonwebtoken::get_current_timestamp();
        let mut jti = [0u8; 16];
        getrandom::fill(&mut jti).map_err(|_| DevError::Key("no system randomness".into()))?;
        self.sign(&json!({
            "jti": crate::domain::hex(&jti),
            "iss": issuer,
            "sub": sub,
            "aud": audiences,
            "org_id": org,
            "scope": scopes,
            "iat": now,
            "nbf": now,
            "exp": now + ttl_secs,
        }))
    }
}
