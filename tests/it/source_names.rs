//! Names kept in one place, checked over the whole product's source (the root package's
//! `src/` and every crate's under `crates/`), each file before its unit tests: a status or
//! an MCP method is written by its enum, never as its name in quotes elsewhere.

use std::path::{Path, PathBuf};

use inbox::domain::records::{DeliveryStatus, EmailStatus, InboxStatus, JobStatus, SenderPolicy, WebhookStatus};
use inbox::mcp::method::Method;

/// `(path, code)` of every product source file, each without its `#[cfg(test)]` part.
fn files() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pending = vec![root.join("src")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        pending.push(entry.unwrap().path().join("src"));
    }
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
    assert!(found.len() > 50, "the walk found the sources: {}", found.len());
    found
}

/// `code` without its `wire_enum!` declarations, where the names belong.
fn without_enum_declarations(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some((before, after)) = rest.split_once("wire_enum! {") {
        out.push_str(before);
        rest = after.split_once("\n}\n").map_or("", |(_, tail)| tail);
    }
    out.push_str(rest);
    out
}

/// The status names live in their enums only: anywhere else (outside unit tests), a
/// status is `EmailStatus::…` and the like, or its `as_str()`, never its name in quotes.
#[test]
fn no_status_name_is_written_outside_its_enum() {
    let names: Vec<&str> = [
        InboxStatus::NAMES,
        SenderPolicy::NAMES,
        EmailStatus::NAMES,
        WebhookStatus::NAMES,
        DeliveryStatus::NAMES,
        JobStatus::NAMES,
        inbox::mcp::tasks::TaskStatus::NAMES,
    ]
    .concat();
    let mut found = Vec::new();
    for (path, code) in files() {
        let code = without_enum_declarations(&code);
        for name in &names {
            if code.contains(&format!("\"{name}\"")) {
                found.push(format!("{}: {name}", path.display()));
            }
        }
    }
    assert!(found.is_empty(), "status names written outside their enums: {found:?}");
}

/// The method names live in `crates/mcp/src/method.rs` only: anywhere else (outside unit
/// tests), a method is `Method::…`, never its name in quotes.
#[test]
fn no_method_name_is_written_outside_its_enum() {
    let mut found = Vec::new();
    for (path, code) in files() {
        for method in Method::ALL.iter().filter(|_| !path.ends_with("crates/mcp/src/method.rs")) {
            if code.contains(&format!("\"{}\"", method.as_str())) {
                found.push(format!("{}: {}", path.display(), method.as_str()));
            }
        }
    }
    assert!(found.is_empty(), "method names written outside crates/mcp/src/method.rs: {found:?}");
}
