//! Server-side secrets from `SIGNING_SECRET`: opaque, tamper-proof tokens
//! (cursors, confirmation state) and sealed values (webhook signing secrets at
//! rest), all AES-256-GCM with a key derived from the secret.
//!
//! `SIGNING_SECRET` may list several secrets, comma-separated, for rotation:
//! the first seals, every one opens. Each use has its own purpose string as
//! associated data, so a token minted for one purpose (a cursor) is never
//! accepted for another (a confirmation).

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::digest::{SHA256, digest};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::Value;

pub struct Secrets {
    seals: Vec<LessSafeKey>,
    /// HMAC-SHA-256 keys for index digests (`digests`), same order.
    lookups: Vec<aws_lc_rs::hmac::Key>,
}

impl Secrets {
    /// From the configured secrets, first one current. Never empty: the
    /// configuration refuses an empty list.
    pub fn new(secrets: &[String]) -> Secrets {
        let seals = secrets
            .iter()
            .filter_map(|s| {
                let key = digest(&SHA256, format!("kobana-inbox seal\0{s}").as_bytes());
                UnboundKey::new(&AES_256_GCM, key.as_ref()).ok().map(LessSafeKey::new)
            })
            .collect();
        let lookups = secrets
            .iter()
            .map(|s| {
                let key = digest(&SHA256, format!("kobana-inbox lookup\0{s}").as_bytes());
                aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, key.as_ref())
            })
            .collect();
        Secrets { seals, lookups }
    }

    /// Keyed digests of `value` for `purpose` (HMAC-SHA-256, hex), one per
    /// configured secret, the current one first: an index keyed by them
    /// holds no value it could be read back from, and a rotation still
    /// finds what an earlier secret indexed (look up every digest; write the first).
    pub fn digests(&self, purpose: &str, value: &str) -> Vec<String> {
        self.lookups
            .iter()
            .map(|key| {
                let tag = aws_lc_rs::hmac::sign(key, format!("{purpose}\0{value}").as_bytes());
                inbox_domain::hex(tag.as_ref())
            })
            .collect()
    }

    /// Encrypts `plaintext` (AES-256-GCM, random nonce) for storage.
    pub fn seal(&self, plaintext: &str) -> Option<String> {
        self.seal_bytes("stored", plaintext.as_bytes())
    }

    pub fn unseal(&self, sealed: &str) -> Option<String> {
        String::from_utf8(self.open_bytes("stored", sealed)?).ok()
    }

    /// An opaque, tamper-proof token for `purpose`: the payload is encrypted
    /// and authenticated, with the purpose as associated data.
    pub fn seal_token(&self, purpose: &str, payload: &Value) -> Option<String> {
        self.seal_bytes(purpose, payload.to_string().as_bytes())
    }

    pub fn open_token(&self, purpose: &str, token: &str) -> Option<Value> {
        serde_json::from_slice(&self.open_bytes(purpose, token)?).ok()
    }

    fn seal_bytes(&self, purpose: &str, plaintext: &[u8]) -> Option<String> {
        let key = self.seals.first()?;
        let nonce: [u8; NONCE_LEN] = crate::sys::random();
        let mut data = plaintext.to_vec();
        key.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(purpose.as_bytes()), &mut data)
            .ok()?;
        Some(format!("v1.{}.{}", B64.encode(nonce), B64.encode(data)))
    }

    fn open_bytes(&self, purpose: &str, sealed: &str) -> Option<Vec<u8>> {
        let mut parts = sealed.split('.');
        let (Some("v1"), Some(nonce), Some(data), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let nonce: [u8; NONCE_LEN] = B64.decode(nonce).ok()?.try_into().ok()?;
        let data = B64.decode(data).ok()?;
        self.seals.iter().find_map(|key| {
            let mut buf = data.clone();
            let plain =
                key.open_in_place(Nonce::assume_unique_for_key(nonce), Aad::from(purpose.as_bytes()), &mut buf).ok()?;
            Some(plain.to_vec())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secrets(list: &[&str]) -> Secrets {
        Secrets::new(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn tokens_open_only_for_their_purpose_and_key() {
        let s = secrets(&["one"]);
        let token = s.seal_token("cursor", &json!({"k": 1})).unwrap();
        assert_eq!(s.open_token("cursor", &token), Some(json!({"k": 1})));
        assert_eq!(s.open_token("confirm", &token), None);
        assert_eq!(s.open_token("cursor", &format!("{token}A")), None);
        assert_eq!(s.open_token("cursor", "v1.AAAA.AAAA"), None);
        assert_eq!(secrets(&["other"]).open_token("cursor", &token), None);
    }

    #[test]
    fn sealed_tokens_are_opaque_and_bound_to_their_purpose() {
        let s = secrets(&["one"]);
        let token = s.seal_token("cursor", &json!({"k": "T#org"})).unwrap();
        assert!(
            !token.contains("T#org")
                && !B64.decode(token.split('.').nth(2).unwrap()).unwrap().windows(5).any(|w| w == b"T#org")
        );
        assert_eq!(s.open_token("cursor", &token), Some(json!({"k": "T#org"})));
        assert_eq!(s.open_token("confirm", &token), None);
        let mut altered = token.into_bytes();
        let last = altered.len() - 2;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(s.open_token("cursor", &String::from_utf8(altered).unwrap()), None);
    }

    #[test]
    fn rotation_keeps_old_tokens_and_sealed_values_readable() {
        let old = secrets(&["old"]);
        let token = old.seal_token("cursor", &json!(1)).unwrap();
        let sealed = old.seal("whsec_abc").unwrap();
        let rotated = secrets(&["new", "old"]);
        assert_eq!(rotated.open_token("cursor", &token), Some(json!(1)));
        assert_eq!(rotated.unseal(&sealed).as_deref(), Some("whsec_abc"));
        assert_eq!(secrets(&["new"]).unseal(&sealed), None);
    }
}
