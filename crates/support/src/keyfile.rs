//! A private random key kept in a file: 32 bytes as hex, mode 0600, made on
//! first use. The local signing secret is one (every local run, whatever the
//! build), and so is the development issuer's key (`inbox::dev`, in builds
//! with the `dev` feature).

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    #[error("key file {0}: {1}")]
    Io(String, std::io::Error),
    #[error("key file {0} is not 64 hex characters")]
    BadKey(String),
    #[error("cannot build the signing key: {0}")]
    Key(String),
}

/// 32 random bytes kept as hex in a private file (mode 0600): read from
/// `path`, or generated and written there on first use. The development
/// issuer's key and the local signing secret are each one of these, so no
/// local secret is a constant anyone could read in this repository.
pub fn load_or_create_seed(path: &Path) -> Result<[u8; 32], KeyFileError> {
    let shown = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let hex = text.trim();
            let mut seed = [0u8; 32];
            if hex.len() != 64 || !hex.is_ascii() {
                return Err(KeyFileError::BadKey(shown));
            }
            for (byte, pair) in seed.iter_mut().zip(hex.as_bytes().chunks(2)) {
                let pair = std::str::from_utf8(pair).map_err(|_| KeyFileError::BadKey(shown.clone()))?;
                *byte = u8::from_str_radix(pair, 16).map_err(|_| KeyFileError::BadKey(shown.clone()))?;
            }
            Ok(seed)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut seed = [0u8; 32];
            getrandom::fill(&mut seed).map_err(|_| KeyFileError::Key("no system randomness".into()))?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| KeyFileError::Io(shown.clone(), e))?;
            }
            let hex = inbox_domain::hex(&seed);
            match write_private(path, &hex) {
                Ok(()) => Ok(seed),
                // Another process created it first: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => load_or_create_seed(path),
                Err(e) => Err(KeyFileError::Io(shown, e)),
            }
        }
        Err(e) => Err(KeyFileError::Io(shown, e)),
    }
}

/// Writes `text` to a new file at `path`, readable by its owner only (mode
/// 0600); `AlreadyExists` when there is one.
#[cfg(unix)]
pub fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(text.as_bytes())
}

#[cfg(not(unix))]
pub fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        std::env::temp_dir().join(format!("kobana-keyfile-{}-{nanos}", std::process::id())).join(name)
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
        assert!(matches!(load_or_create_seed(&b), Err(KeyFileError::BadKey(_))));
        std::fs::write(&b, "é".repeat(32)).unwrap();
        assert!(matches!(load_or_create_seed(&b), Err(KeyFileError::BadKey(_))), "no panic on multi-byte text");
    }
}
