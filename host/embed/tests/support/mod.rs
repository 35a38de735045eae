//! What the model's evaluation (`tests/eval.rs`) and the `near` example
//! share: the repository's files, the active catalog and its vectors
//! (cached in `target/embed-eval/`, keyed by model and catalog text).

// Each user compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use forecast_embed::{catalog_views, Embedder, DIMS};
use forecast_matcher::eval::{drop_inactive, load_catalog_csv};
use forecast_matcher::Entry;
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

/// The texts an entry is embedded as ([`catalog_views`]).
pub fn entry_views(e: &Entry) -> Vec<String> {
    catalog_views(
        &e.name,
        &e.ticker,
        &e.category,
        &e.sector,
        &e.industry,
        &e.country,
        &e.summary,
    )
}

/// The catalog's vectors (each entry's views concatenated), from the cache
/// when the model and texts match.
pub fn catalog_vectors(model: &Embedder, entries: &[Entry]) -> Vec<Vec<f32>> {
    let views: Vec<Vec<String>> = entries.iter().map(entry_views).collect();
    let mut h = Sha256::new();
    h.update(model.id());
    for v in &views {
        for t in v {
            h.update(t.as_bytes());
            h.update([0]);
        }
        h.update([1]);
    }
    let key = hex::encode(&h.finalize()[..8]);
    let dir = root().join("target/embed-eval");
    let path = dir.join(format!("{key}.f32"));
    let rows: usize = views.iter().map(Vec::len).sum();
    if let Ok(bytes) = std::fs::read(&path) {
        if bytes.len() == rows * DIMS * 4 {
            let mut rest = bytes.as_slice();
            return views
                .iter()
                .map(|v| {
                    let (entry, tail) = rest.split_at(v.len() * DIMS * 4);
                    rest = tail;
                    forecast_embed::from_bytes(entry).expect("an entry's vectors")
                })
                .collect();
        }
    }
    let started = Instant::now();
    let vectors = model
        .embed_views(&views, |_, _| {})
        .expect("embedding the catalog");
    println!(
        "catalog embedded: {} entries, {rows} texts in {:.1} s",
        views.len(),
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
/// `entries` as the host hands them to the matcher: each summary with the
/// other names of its description ([`forecast_embed::matcher_summary`]).
/// The embedded views keep the catalog's own summary.
pub fn matcher_entries(entries: &[Entry]) -> Vec<Entry> {
    entries
        .iter()
        .map(|e| Entry {
            summary: forecast_embed::matcher_summary(&e.ticker, &e.summary),
            ..e.clone()
        })
        .collect()
}

pub fn active_entries() -> Vec<Entry> {
    drop_inactive(
        load_catalog_csv(&read("data/catalog.csv")).expect("catalog"),
        INACTIVE_TICKERS,
    )
}

/// The priors the host sends with the catalog (`MatcherService`): each
/// entry's prominence from the index membership table `make reference`
/// writes, its ISIN from `data/catalog.csv` and (with `table_isins`, as
/// the host does) the ISINs that table gives its company. `None` (with a
/// `SKIPPED:` line from the caller) when the table is absent.
pub fn priors(entries: &[Entry], table_isins: bool) -> Option<Vec<forecast_matcher::Prior>> {
    let membership = match forecast_embed::prominence::IndexMembership::load(
        &root().join(forecast_embed::prominence::DEFAULT_REFERENCE_DIR),
    ) {
        Ok(m) => m,
        Err(e) => {
            println!("SKIPPED: {e:#}");
            return None;
        }
    };
    let isins = catalog_column("isin");
    Some(
        entries
            .iter()
            .enumerate()
            .map(|(i, e)| forecast_matcher::Prior {
                entry: i as u32,
                prominence: membership.prominence(&e.ticker),
                identifiers: isins
                    .get(&e.ticker)
                    .filter(|s| !s.is_empty())
                    .cloned()
                    .into_iter()
                    .chain(
                        membership
                            .isins(&e.ticker)
                            .iter()
                            .filter(|_| table_isins)
                            .cloned(),
                    )
                    .collect(),
            })
            .collect(),
    )
}

/// One column of `data/catalog.csv` by ticker.
pub fn catalog_column(name: &str) -> std::collections::HashMap<String, String> {
    let records = forecast_matcher::eval::parse_csv(&read("data/catalog.csv"));
    let header = &records[0];
    let at = |n: &str| header.iter().position(|h| h.trim() == n).expect(n);
    let (t, c) = (at("ticker"), at(name));
    records[1..]
        .iter()
        .filter(|r| r.len() == header.len())
        .map(|r| (r[t].trim().to_string(), r[c].trim().to_string()))
        .collect()
}
