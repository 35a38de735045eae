//! What the model's evaluation (`tests/eval.rs`) and the `near` example
//! share: the repository's files, the active catalog and its vectors
//! (cached in `target/embed-eval/`, keyed by model and catalog text).

// Each user compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use forecast_embed::{catalog_text, Embedder, DIMS};
use matcher::eval::{drop_inactive, load_catalog_csv};
use matcher::Entry;
use sha2::{Digest, Sha256};

/// Copied from `INACTIVE_TICKERS` in `host/services/src/demo.rs`.
pub const INACTIVE_TICKERS: &[&str] = &["FISV", "FTT-USD", "CEL-USD", "HOMEX.MX", "IDVL4.SA"];

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn read(path: &str) -> String {
    let full = root().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

pub fn entry_text(e: &Entry) -> String {
    catalog_text(
        &e.name,
        &e.ticker,
        &e.category,
        &e.sector,
        &e.industry,
        &e.country,
        &e.summary,
    )
}

/// The catalog's vectors, from the cache when the model and texts match.
pub fn catalog_vectors(model: &Embedder, entries: &[Entry]) -> Vec<Vec<f32>> {
    let texts: Vec<String> = entries.iter().map(entry_text).collect();
    let mut h = Sha256::new();
    h.update(model.id());
    for t in &texts {
        h.update(t.as_bytes());
        h.update([0]);
    }
    let key = hex::encode(&h.finalize()[..8]);
    let dir = root().join("target/embed-eval");
    let path = dir.join(format!("{key}.f32"));
    if let Ok(bytes) = std::fs::read(&path) {
        if bytes.len() == texts.len() * DIMS * 4 {
            return bytes
                .chunks_exact(DIMS * 4)
                .map(|c| forecast_embed::from_bytes(c).expect("a vector"))
                .collect();
        }
    }
    let started = Instant::now();
    let vectors = model.embed(&texts).expect("embedding the catalog");
    println!(
        "catalog embedded: {} entries in {:.1} s",
        texts.len(),
        started.elapsed().as_secs_f64()
    );
    std::fs::create_dir_all(&dir).expect("cache folder");
    let bytes: Vec<u8> = vectors
        .iter()
        .flat_map(|v| forecast_embed::to_bytes(v))
        .collect();
    std::fs::write(&path, bytes).expect("cache file");
    vectors
}

/// The catalog's active entries, as the demo universe loads them.
pub fn active_entries() -> Vec<Entry> {
    drop_inactive(
        load_catalog_csv(&read("data/catalog.csv")).expect("catalog"),
        INACTIVE_TICKERS,
    )
}
