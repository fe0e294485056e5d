//! The local development issuer: an Ed25519 signing key kept in a git-ignored
//! file, its JWKS served on loopback, and token minting for `make token`.
//! Configuration refuses it on Lambda (`DEV_ISSUER_KEY` fails start-up there),
//! so it can never be switched on in a deployment by accident.

use std::path::Path;

use aws_lc_rs::digest::{SHA256, digest};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// PKCS#8 v1 prefix of an Ed25519 private key; the 32-byte seed follows.
const ED25519_PKCS8_PREFIX: [u8; 16] =
    [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

#[derive(Debug, thiserror::Error)]
pub enum DevError {
    #[error("development key file {0}: {1}")]
    Io(String, std::io::Error),
    #[error("development key file {0} is not 64 hex characters")]
    BadKey(String),
    #[error("cannot build the signing key: {0}")]
    Key(String),
}

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

    /// A token for `sub` in `org` with `scopes`, valid for `ttl_secs`.
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
        self.sign(&json!({
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

/// 32 random bytes kept as hex in a private file (mode 0600): read from
/// `path`, or generated and written there on first use. The development
/// issuer's key and the local signing secret are each one of these, so no
/// local secret is a constant anyone could read in this repository.
pub fn load_or_create_seed(path: &Path) -> Result<[u8; 32], DevError> {
    let shown = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let hex = text.trim();
            let mut seed = [0u8; 32];
            if hex.len() != 64 || !hex.is_ascii() {
                return Err(DevError::BadKey(shown));
            }
            for (byte, pair) in seed.iter_mut().zip(hex.as_bytes().chunks(2)) {
                let pair = std::str::from_utf8(pair).map_err(|_| DevError::BadKey(shown.clone()))?;
                *byte = u8::from_str_radix(pair, 16).map_err(|_| DevError::BadKey(shown.clone()))?;
            }
            Ok(seed)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut seed = [0u8; 32];
            getrandom::fill(&mut seed).map_err(|_| DevError::Key("no system randomness".into()))?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| DevError::Io(shown.clone(), e))?;
            }
            let hex = crate::domain::hex(&seed);
            match write_private(path, &hex) {
                Ok(()) => Ok(seed),
                // Another process created it first: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => load_or_create_seed(path),
                Err(e) => Err(DevError::Io(shown, e)),
            }
        }
        Err(e) => Err(DevError::Io(shown, e)),
    }
}

#[cfg(unix)]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(text.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        std::env::temp_dir().join(format!("kobana-dev-{}-{nanos}", std::process::id())).join(name)
    }

    #[test]
    fn a_local_secret_is_random_per_file_kept_private_and_stable_across_loads() {
        let (a, b) = (scratch("a/signing-secret"), scratch("b/signing-secret"));
        let first = load_or_create_seed(&a).unwrap();
        assert_eq!(load_or_create_seed(&a).unwrap(), first, "read back, not regenerated");
        assert_ne!(load_or_create_seed(&b).unwrap(), first, "each machine has its own");
        assert_ne!(first, [0u8; 32]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&a).unwrap().permissions().mode() & 0o777, 0o600);
        }
        std::fs::write(&b, "not hex").unwrap();
        assert!(matches!(load_or_create_seed(&b), Err(DevError::BadKey(_))));
        std::fs::write(&b, "é".repeat(32)).unwrap();
        assert!(matches!(load_or_create_seed(&b), Err(DevError::BadKey(_))), "no panic on multi-byte text");
    }
}
