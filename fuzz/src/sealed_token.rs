//! Sealed tokens (cursors, confirmation `requestState`). Invariants: no
//! input opens unless it is a token sealed with the key and purpose; a valid
//! token with any change (bytes flipped, cut, extended) never opens.

use std::sync::OnceLock;

use inbox::secrets::Secrets;
use serde_json::json;

const PURPOSE: &str = "cursor";

fn fixtures() -> &'static (Secrets, String) {
    static FIXTURES: OnceLock<(Secrets, String)> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let secrets = Secrets::new(&["fuzz-signing-secret-0123456789abcdef".to_owned()]);
        let token = secrets
            .seal_token(PURPOSE, &json!({"o": "org_demo", "w": "ws_main", "k": {"sk": "EMAIL#1"}}))
            .expect("seals");
        (secrets, token)
    })
}

/// The invariants on one input (panics when one is broken).
pub fn check(data: &[u8]) {
    let (secrets, token) = fixtures();
    if let Ok(text) = std::str::from_utf8(data) {
        if text != token {
            assert!(secrets.open_token(PURPOSE, text).is_none(), "forged: {text:?}");
        }
        // The genuine token never opens for another purpose.
        assert!(secrets.open_token("confirm", token).is_none());
    }
    // Mutations of the genuine token: flip the bytes the input names.
    let mut bytes = token.clone().into_bytes();
    for pair in data.chunks(2) {
        if let [at, flip] = pair {
            let i = usize::from(*at) % bytes.len();
            bytes[i] ^= flip | 1;
        }
    }
    if let Ok(mutated) = String::from_utf8(bytes)
        && mutated != *token
    {
        assert!(secrets.open_token(PURPOSE, &mutated).is_none(), "a changed token opened: {mutated:?}");
    }
}
