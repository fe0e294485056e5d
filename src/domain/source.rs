//! For the unit tests that read this crate's own source (to keep names in
//! one place): every `.rs` file under `src/`, its code before its unit tests.

use std::path::PathBuf;

/// `(path, code)` of every source file, each without its `#[cfg(test)]` part.
pub fn files() -> Vec<(PathBuf, String)> {
    let mut pending = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    let mut found = Vec::new();
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or("").to_owned();
                found.push((path, code));
            }
        }
    }
    found
}
