//! `cargo bench -p forecast-embed --bench embed` (part of `make bench`):
//! the sentence-embedding model on this machine — load time, embedding the
//! whole active catalog once (every entry's views, no cache), the default matcher's hybrid
//! `find` per query with the model warm (the same code the component runs,
//! natively; the component adds a few microseconds of call overhead, see
//! the `matcher` bench), and the process's resident memory before and
//! after the model and the catalog's vectors are loaded. Issue 15's
//! targets: p99 <= 50 ms, catalog <= 2 min, +400 MB at most.

#[path = "../../benches/common/summary.rs"]
mod summary;
#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use forecast_embed::{Embedder, VectorIndex, DEFAULT_DIR};
use forecast_matcher::eval::load_queries;
use forecast_matcher::{find_mentions_with_model, Index};
use support::{active_entries, entry_views, read, root};

/// Resident memory of this process, MiB (Linux).
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn pct(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let root = root();
    let entries = active_entries();
    // As the server builds it: the host's summaries and priors.
    let mut index = Index::new(support::matcher_entries(&entries));
    index
        .set_priors(&support::priors(&entries, true).expect("the reference data (make reference)"));
    let queries = every_evaluation_text();
    let before = rss_mib();

    let started = Instant::now();
    let model = Embedder::load(&root.join(DEFAULT_DIR)).expect("the model (make model)");
    let load = started.elapsed().as_secs_f64();
    let after_load = rss_mib();

    let views: Vec<Vec<String>> = entries.iter().map(entry_views).collect();
    let texts: usize = views.iter().map(Vec::len).sum();
    let started = Instant::now();
    let vectors = model.embed_views(&views, |_, _| {}).expect("catalog");
    let catalog = started.elapsed().as_secs_f64();
    let vindex = VectorIndex::new(&vectors).expect("vectors");
    drop(vectors);
    let after_catalog = rss_mib();

    let (times, asked) = timed_finds(&index, &model, &vindex, &queries);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("| measure | result | target |");
    println!("|---|---|---|");
    println!("| model load (read + build, {threads} cores) | {load:.2} s | — |");
    println!(
        "| embedding the whole active catalog ({} entries, {texts} texts, once) | **{catalog:.1} s** | ≤ 120 s |",
        views.len()
    );
    println!(
        "| hybrid `find-mentions`, model warm, {} texts × 3 rounds | p50 {:.2} ms, **p99 {:.2} ms**, max {:.2} ms | p99 ≤ 50 ms |",
        queries.len(),
        pct(&times, 0.5),
        pct(&times, 0.99),
        times.last().unwrap()
    );
    println!(
        "| … only the queries that asked the model ({} of {}) | p50 {:.2} ms, p99 {:.2} ms | — |",
        asked.len(),
        times.len(),
        pct(&asked, 0.5),
        pct(&asked, 0.99)
    );
    println!(
        "| resident memory: before / model loaded / + catalog vectors | {before:.0} / {after_load:.0} / {after_catalog:.0} MiB (**+{:.0} MiB**) | ≤ +400 MB |",
        after_catalog - before
    );
    summary_rows(
        &format!(
            "embedding the whole active catalog ({} entries, {texts} texts, once)",
            views.len()
        ),
        catalog,
        pct(&times, 0.99),
        after_catalog - before,
    );
}

/// Every evaluation text, onboarding sentences included.
fn every_evaluation_text() -> Vec<forecast_matcher::eval::Query> {
    let mut queries = load_queries(&read("crates/matcher/eval/queries.csv")).expect("queries");
    for extra in ["classes.csv", "onboarding.csv", "unseen.csv"] {
        queries.extend(load_queries(&read(&format!("crates/matcher/eval/{extra}"))).expect(extra));
    }
    queries
}

/// Each query's `find-mentions` with the model warm, four rounds of which
/// the last three are kept: every time, and the times of the queries that
/// asked the model, milliseconds, sorted.
fn timed_finds(
    index: &Index,
    model: &Embedder,
    vindex: &VectorIndex,
    queries: &[forecast_matcher::eval::Query],
) -> (Vec<f64>, Vec<f64>) {
    let near = |t: &[String], k: u32| -> Vec<Vec<(u32, f32)>> {
        model
            .embed(t)
            .expect("query")
            .iter()
            .map(|v| vindex.nearest(v, k as usize))
            .collect()
    };
    let mut times = Vec::new();
    let mut asked = Vec::new();
    for round in 0..4 {
        for q in queries {
            let mut used = false;
            let t = Instant::now();
            // What the server asks: every mention's candidates.
            find_mentions_with_model(
                index,
                &q.text,
                3,
                |_| None,
                |x: &[String], k: u32| {
                    used = true;
                    near(x, k)
                },
            );
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if round > 0 {
                times.push(ms);
                if used {
                    asked.push(ms);
                }
            }
        }
    }
    times.sort_by(f64::total_cmp);
    asked.sort_by(f64::total_cmp);
    (times, asked)
}

/// The bench's rows of the summary table (`catalog_case` names the
/// catalog's), with issue 15's targets.
fn summary_rows(catalog_case: &str, catalog: f64, p99: f64, grown: f64) {
    summary::row(
        catalog_case,
        &format!("{catalog:.1} s"),
        "≤ 120 s (issue 15)",
        summary::Verdict::of(catalog <= 120.0),
    );
    summary::row(
        "matcher's hybrid `find-mentions` with the model warm: p99",
        &format!("{p99:.2} ms"),
        "≤ 50 ms (issue 15)",
        summary::Verdict::of(p99 <= 50.0),
    );
    summary::row(
        "resident memory added by the model and the catalog's vectors",
        &format!("{grown:.0} MiB"),
        "≤ 400 MB (issue 15)",
        summary::Verdict::of(grown * 1.048_576 <= 400.0),
    );
}
