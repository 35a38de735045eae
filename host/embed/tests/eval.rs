//! The matcher's evaluation with the real model (issue 15): the default
//! matcher's own code (natively, the same `find_with_model` the component
//! runs) over the active catalog of `data/catalog.csv`, with this crate's
//! model answering its `semantic` import, per group of
//! `components/matcher/eval/queries.csv`.
//!
//! Targets: top-3 >= 95 % on names, tickers and misspellings, >= 90 % on
//! descriptions and on sentences naming several assets; nothing for any
//! line of `gibberish.txt`. Skipped (with a `SKIPPED:` line) when the model
//! is absent; `make test` fetches it first.
//!
//! `cargo test --release -p forecast-embed --test eval -- --nocapture`
//! prints the report. The catalog's vectors are cached in
//! `target/embed-eval/` (keyed by model and catalog text), so only the
//! first run embeds the catalog.

use std::path::{Path, PathBuf};
use std::time::Instant;

use forecast_embed::{catalog_text, Embedder, VectorIndex, DEFAULT_DIR, DIMS};
use matcher::eval::{
    drop_inactive, evaluate_groups, load_catalog_csv, load_gibberish, load_queries,
};
use matcher::{find_with_model, Entry, Index};
use sha2::{Digest, Sha256};

/// Copied from `INACTIVE_TICKERS` in `host/services/src/demo.rs`.
const INACTIVE_TICKERS: &[&str] = &["FISV", "FTT-USD", "CEL-USD", "HOMEX.MX", "IDVL4.SA"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    let full = root().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

fn entry_text(e: &Entry) -> String {
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
fn catalog_vectors(model: &Embedder, entries: &[Entry]) -> Vec<Vec<f32>> {
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

#[test]
fn evaluation_with_the_model() {
    let dir = root().join(DEFAULT_DIR);
    let model = match Embedder::load(&dir) {
        Ok(m) => m,
        Err(e) => {
            println!("SKIPPED: {e}");
            return;
        }
    };
    let entries = drop_inactive(
        load_catalog_csv(&read("data/catalog.csv")).expect("catalog"),
        INACTIVE_TICKERS,
    );
    let vectors = catalog_vectors(&model, &entries);
    let vindex = VectorIndex::new(&vectors).expect("vectors");
    let index = Index::new(entries.clone());
    let queries = load_queries(&read("components/matcher/eval/queries.csv")).expect("queries");
    assert!(queries.len() >= 150, "{} queries", queries.len());

    let near = |texts: &[String], k: u32| -> Vec<Vec<(u32, f32)>> {
        model
            .embed(texts)
            .expect("embedding a query")
            .iter()
            .map(|v| vindex.nearest(v, k as usize))
            .collect()
    };
    let find = |q: &str| find_with_model(&index, q, 3, |_| None, near);
    // Warm up.
    for q in queries.iter().take(20) {
        find(&q.text);
    }
    let mut failed = Vec::new();
    for (group, report) in evaluate_groups(&queries, &entries, find) {
        println!("[{group}] {report}");
        let target = match group.as_str() {
            "names" => Some(0.95),
            "descriptions" | "multi" => Some(0.90),
            _ => None,
        };
        if let Some(t) = target {
            if report.top3 < t {
                failed.push(format!("{group}: top-3 {:.3} < {t}", report.top3));
            }
        }
    }
    for g in load_gibberish(&read("components/matcher/eval/gibberish.txt")) {
        let r = find_with_model(&index, &g, 3, |_| None, near);
        if !r.is_empty() {
            let got: Vec<String> = r
                .iter()
                .map(|&(i, c)| format!("{} {c:.2}", entries[i as usize].ticker))
                .collect();
            failed.push(format!("gibberish {g:?} found {got:?}"));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
