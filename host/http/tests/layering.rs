//! Handlers see services only: the HTTP crate neither depends on the store
//! nor names it. Quota admission, key bookkeeping, health diagnostics and
//! registry actions are service calls (`forecast_services::{quota, keys,
//! health, registry}`), so the policy lives in one place for every surface.

use std::path::{Path, PathBuf};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source folder") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_http_crate_does_not_depend_on_the_store() {
    let manifest = std::fs::read_to_string(manifest_dir().join("Cargo.toml")).unwrap();
    let deps: Vec<&str> = manifest
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("forecast-store") || l.starts_with("forecast_store"))
        .collect();
    assert!(
        deps.is_empty(),
        "host/http/Cargo.toml depends on the store ({deps:?}): handlers must call a service \
         (host/services) instead"
    );
}

#[test]
fn no_handler_names_the_store() {
    let mut files = Vec::new();
    rust_files(&manifest_dir().join("src"), &mut files);
    assert!(!files.is_empty());
    let mut offenders = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.contains("forecast_store") || line.contains("state.db") {
                offenders.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "the HTTP layer reaches the store; move this into a service:\n{}",
        offenders.join("\n")
    );
}
