//! The evaluation over the real catalog: `eval/queries.csv` against the
//! active assets of `data/catalog.csv`, without a language model.
//!
//! Run with `cargo test --release -p forecast-matcher --test eval -- --nocapture` to
//! see the report (accuracy, latency, every query not answered right first).

use std::time::Instant;

use forecast_matcher::eval::{
    drop_inactive, evaluate_groups, load_catalog_csv, load_gibberish, load_queries,
};
use forecast_matcher::{find_with_model, Index};

/// A host without the sentence-embedding model.
fn no_model(texts: &[String], _k: u32) -> Vec<Vec<(u32, f32)>> {
    vec![Vec::new(); texts.len()]
}

/// Assets inactive in the demo; copied from `INACTIVE_TICKERS` in
/// `host/services/src/demo.rs` (the host never passes them to the matcher).
const INACTIVE_TICKERS: &[&str] = &["FISV", "FTT-USD", "CEL-USD", "HOMEX.MX", "IDVL4.SA"];

fn read(path: &str) -> String {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

#[test]
fn evaluation_set() {
    let all = load_catalog_csv(&read("../../data/catalog.csv")).expect("catalog");
    assert_eq!(all.len(), 3232);
    let entries = drop_inactive(all.clone(), INACTIVE_TICKERS);
    assert_eq!(entries.len(), all.len() - INACTIVE_TICKERS.len());

    let start = Instant::now();
    let index = Index::new(entries.clone());
    println!("index built in {:?}", start.elapsed());

    let queries = load_queries(&read("eval/queries.csv")).expect("queries");
    assert!(queries.len() >= 120, "{} queries", queries.len());
    for q in &queries {
        for t in &q.expected {
            assert!(
                entries.iter().any(|e| &e.ticker == t),
                "{:?}: {t} is not an active ticker",
                q.text
            );
        }
    }

    // Warm up, then measure: the names, tickers and misspellings (the
    // `names` group) need no model; the other groups are reported here
    // without one and asserted with it by the host's evaluation
    // (host/embed/tests/eval.rs).
    let find = |q: &str| find_with_model(&index, q, 3, |_| None, no_model);
    for q in &queries {
        find(&q.text);
    }
    for (group, report) in evaluate_groups(&queries, &entries, find) {
        println!("[{group}] {report}");
        if group == "names" {
            assert!(report.top3 >= 0.95, "names: top-3 {:.3}", report.top3);
        }
    }
    // Issue 7's matcher (the index alone, no mentions, no model): the
    // "before" column of docs/BENCHMARKS.md.
    for (group, report) in evaluate_groups(&queries, &entries, |q| index.find(q, 3)) {
        println!("[{group}, index alone] {report}");
        if group == "names" {
            assert!(report.top3 >= 0.95, "top-3 {:.3}", report.top3);
        }
    }

    let gibberish = load_gibberish(&read("eval/gibberish.txt"));
    assert!(gibberish.len() >= 10);
    for g in &gibberish {
        let r = find_with_model(&index, g, 3, |_| None, no_model);
        let got: Vec<(&str, f64)> = r
            .iter()
            .map(|&(i, c)| (entries[i as usize].ticker.as_str(), c))
            .collect();
        assert!(r.is_empty(), "{g:?} found {got:?}");
    }

    // Sentences naming several assets answer one per mention; a name
    // with "&" or a two-word alias stays one asset (issue 15).
    let first = |q: &str| -> Vec<String> {
        find_with_model(&index, q, 3, |_| None, no_model)
            .iter()
            .map(|&(i, _)| entries[i as usize].ticker.clone())
            .collect()
    };
    let mut got = first("I own apple, tesla and some bitcoin");
    got.sort();
    assert_eq!(got, ["AAPL", "BTC-USD", "TSLA"]);
    for (q, t) in [
        ("procter & gamble", "PG"),
        ("cash app", "XYZ"),
        ("johnson & johnson", "JNJ"),
    ] {
        assert_eq!(first(q).first().map(String::as_str), Some(t), "{q}");
    }

    // Inactive assets are never returned (they are not in the index), even
    // for their own ticker or name.
    for (q, t) in [
        ("FISV", "FISV"),
        ("Fiserv", "FISV"),
        ("FTX Token", "FTT-USD"),
        ("celsius", "CEL-USD"),
    ] {
        let r = index.find(q, 3);
        assert!(
            r.iter().all(|&(i, _)| entries[i as usize].ticker != t),
            "{q}"
        );
    }
}

/// Every active entry is found first by its ticker (in any case) and among
/// the first three by its own name.
#[test]
fn every_ticker_and_name_finds_its_entry() {
    let entries = drop_inactive(
        load_catalog_csv(&read("../../data/catalog.csv")).expect("catalog"),
        INACTIVE_TICKERS,
    );
    let index = Index::new(entries.clone());
    let mut name_misses = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        for q in [e.ticker.clone(), e.ticker.to_lowercase()] {
            let r = index.find(&q, 3);
            assert_eq!(r.first().map(|c| c.0), Some(i as u32), "{q}");
            assert!(r[0].1 >= 0.97, "{q}: {}", r[0].1);
        }
        let r = index.find(&e.name, 3);
        if !r.iter().any(|c| entries[c.0 as usize].name == e.name) {
            name_misses.push(e.name.clone());
        }
    }
    println!("names not in their own top 3: {name_misses:?}");
    assert!(name_misses.is_empty());
}
