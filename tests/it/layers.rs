//! The layers are crates (docs/development.md, "Crates"): a crate can only name what it
//! depends on, so an import the wrong way does not compile — once the dependency it would
//! need is refused here. Every workspace crate may depend only on crates of lower layers;
//! the Lambda binaries' package never depends on the conformance fixtures (only its tests do),
//! and the sources it is built from do not even name what only the fixtures use (their tool
//! jobs, the sampling requests they ask for): that lives in crates/conformance, and reaches
//! the pipeline through its generic seams.

use std::path::Path;

/// Lower number = lower layer.
const LAYERS: &[(&str, u8)] = &[
    ("inbox-domain", 0),
    ("inbox-mail", 1),
    ("inbox-support", 1),
    ("inbox-store", 2),
    ("inbox-auth", 2),
    ("inbox-outbound", 2),
    ("inbox-api", 3),
    ("inbox-worker", 3),
    ("inbox-mcp", 4),
    ("kobana-inbox-mcp", 5),
    ("inbox-conformance", 6),
];

fn layer(name: &str) -> u8 {
    LAYERS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, l)| *l)
        .unwrap_or_else(|| panic!("{name}: no layer; add it to LAYERS"))
}

/// The package name and the workspace crates in one section (`[dependencies]` or
/// `[dev-dependencies]`) of a manifest.
fn manifest(path: &Path, section: &str) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let name = text
        .lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .and_then(|l| l.strip_suffix('"'))
        .unwrap_or_else(|| panic!("{}: no package name", path.display()))
        .to_owned();
    let mut deps = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with('[') {
            inside = line == format!("[{section}]");
        } else if inside && line.contains("path = ") {
            deps.push(line.split_whitespace().next().unwrap_or_default().to_owned());
        }
    }
    (name, deps)
}

fn manifests() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = vec![root.join("Cargo.toml")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        found.push(entry.unwrap().path().join("Cargo.toml"));
    }
    found
}

#[test]
fn every_crate_depends_only_on_lower_layers() {
    let mut wrong = Vec::new();
    let all = manifests();
    assert!(all.len() >= 10, "the workspace's crates: {all:?}");
    for path in &all {
        let (name, deps) = manifest(path, "dependencies");
        for dep in deps {
            if layer(&dep) >= layer(&name) {
                wrong.push(format!("{name} -> {dep}"));
            }
        }
    }
    assert!(wrong.is_empty(), "dependencies that do not point down: {wrong:?}");
}

#[test]
fn the_lambda_binaries_never_link_the_conformance_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let (name, deps) = manifest(&root, "dependencies");
    assert_eq!(name, "kobana-inbox-mcp");
    assert!(!deps.iter().any(|d| d == "inbox-conformance"), "{deps:?}");
    // Not selected by default either: Cargo would unify the root's `dev` feature into a
    // `--no-default-features` build of the binaries (Cargo.toml, default-members).
    let text = std::fs::read_to_string(&root).unwrap();
    let members = text.split("default-members = [").nth(1).and_then(|rest| rest.split(']').next()).unwrap_or_default();
    assert!(members.contains("crates/mcp") && !members.contains("conformance") && !members.contains('*'), "{members}");
    let (_, dev) = manifest(&root, "dev-dependencies");
    assert!(dev.iter().any(|d| d == "inbox-conformance"), "the integration tests serve the fixtures: {dev:?}");
}

/// The directories the Lambda binaries are built from (the root package's `src/` and the
/// crates it depends on).
const PRODUCT_SOURCES: &[&str] = &[
    "src",
    "crates/domain",
    "crates/support",
    "crates/store",
    "crates/auth",
    "crates/outbound",
    "crates/api",
    "crates/worker",
    "crates/mcp",
];

/// What only the conformance fixtures use: their tool jobs' kind and state, and the
/// client requests they ask for besides a form. Lowercase; matched case-insensitively.
const FIXTURE_WORDS: &[&str] = &["toolcall", "tool.call", "toolrun", "sampling"];

fn rust_files(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn the_product_crates_name_nothing_only_the_fixtures_use() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in PRODUCT_SOURCES {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "the product's sources: {files:?}");
    let mut named = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap().to_lowercase();
        for (number, line) in text.lines().enumerate() {
            for word in FIXTURE_WORDS.iter().filter(|w| line.contains(**w)) {
                named.push(format!("{}:{}: {word}", file.strip_prefix(root).unwrap().display(), number + 1));
            }
        }
    }
    assert!(named.is_empty(), "the fixtures' vocabulary in the product (it belongs in crates/conformance): {named:?}");
}
