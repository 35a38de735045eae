//! `make bench` (matcher part): top-1 and top-3 accuracy of the default
//! matcher component on the evaluation set (crates/matcher/eval) without
//! a language model, the latency of the component call on a warm instance,
//! and the latency of `POST /api/match-tickers` through the real server on
//! loopback (session lookup and rate-limit count included). Issue 7's
//! target: top-3 >= 95 %, p99 < 20 ms.

mod common;

use std::sync::Arc;
use std::time::Instant;

use forecast::plugins::matcher::{Catalog, CatalogEntry};
use forecast::plugins::{builtin, MatcherPlugin, PluginRuntime, RuntimeConfig};

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn queries() -> Vec<(String, Vec<String>)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crates/matcher/eval/queries.csv"
    );
    let mut reader = csv::Reader::from_path(path).expect("the evaluation set");
    reader
        .records()
        .map(|r| {
            let r = r.expect("a CSV row");
            (
                r[0].to_string(),
                r[1].split('|').map(|t| t.trim().to_string()).collect(),
            )
        })
        .collect()
}

#[tokio::main]
async fn main() {
    let runtime = Arc::new(PluginRuntime::new(RuntimeConfig::default()).unwrap());
    let permit = runtime.acquire().await;
    let matcher = MatcherPlugin::load(runtime, "default", builtin::MATCHER).unwrap();
    let entries: Vec<CatalogEntry> = forecast::demo::catalog()
        .unwrap()
        .into_iter()
        .filter(|e| e.is_active)
        .map(|e| CatalogEntry {
            // As the server hands them over (`MatcherService`).
            summary: forecast_embed::matcher_summary(&e.ticker, &e.summary),
            ticker: e.ticker,
            name: e.name,
            category: e.category.as_str().to_string(),
            exchange: e.exchange,
            country: e.country,
            sector: e.sector,
            industry: e.industry,
            website: e.website,
        })
        .collect();
    let catalog = Catalog {
        version: 1,
        entries,
        priors: Vec::new(),
        semantic: None,
    };
    let started = Instant::now();
    matcher.find(&permit, &catalog, "warm up", 3).unwrap();
    println!(
        "catalog: {} active assets, loaded into an instance in {:.1} ms",
        catalog.entries.len(),
        started.elapsed().as_secs_f64() * 1e3
    );

    let queries = queries();
    let (mut top1, mut top3) = (0, 0);
    let mut misses = Vec::new();
    let mut latencies = Vec::new();
    for round in 0..20 {
        for (text, expected) in &queries {
            let started = Instant::now();
            let found = matcher.find(&permit, &catalog, text, 3).unwrap();
            latencies.push(started.elapsed().as_secs_f64() * 1e3);
            if round > 0 {
                continue;
            }
            let tickers: Vec<&str> = found
                .iter()
                .map(|c| catalog.entries[c.entry as usize].ticker.as_str())
                .collect();
            if tickers
                .first()
                .is_some_and(|t| expected.iter().any(|e| e == t))
            {
                top1 += 1;
            }
            if tickers.iter().any(|t| expected.iter().any(|e| e == t)) {
                top3 += 1;
            } else {
                misses.push(format!("{text:?} → {tickers:?} (expected {expected:?})"));
            }
        }
    }
    latencies.sort_by(f64::total_cmp);
    let n = queries.len() as f64;
    println!(
        "evaluation set: {} queries; top-1 {:.1} %, top-3 {:.1} % (target >= 95 %)",
        queries.len(),
        top1 as f64 / n * 100.0,
        top3 as f64 / n * 100.0
    );
    for m in &misses {
        println!("  miss: {m}");
    }
    println!(
        "component call ({} calls): p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms (target p99 < 20 ms)",
        latencies.len(),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().unwrap()
    );

    endpoint(&queries).await;
}

/// The same queries through the server, one at a time over one keep-alive
/// connection, after a warm-up pass.
async fn endpoint(queries: &[(String, Vec<String>)]) {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("bench.db").display());
    common::forecast(&db, &["demo", "load"]);
    let (email, password) = ("matcher-bench@example.com", "matcher bench password");
    common::password_user(&db, email, "free", password);
    // The model in its default folder (the benches' server runs without).
    let env = [
        ("FORECAST_MATCH_PER_MINUTE", "100000000"),
        ("FORECAST_MODEL_DIR", ""),
    ];
    let (mut server, base) = common::serve(&db, &env);
    let client = reqwest::Client::new();
    let cookie = common::session_cookie(&base, email, password).await;
    let mut latencies = Vec::new();
    for round in 0..6 {
        for (text, _) in queries {
            let started = Instant::now();
            let r = client
                .post(format!("{base}/api/match-tickers"))
                .header("cookie", &cookie)
                .header("origin", &base)
                .json(&serde_json::json!({ "text": text }))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            r.bytes().await.unwrap();
            if round > 0 {
                latencies.push(started.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    latencies.sort_by(f64::total_cmp);
    println!(
        "POST /api/match-tickers ({} requests, sequential): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        latencies.len(),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().unwrap()
    );
    let _ = server.kill();
    let _ = server.wait();
    let p99 = percentile(&latencies, 0.99);
    common::summary::row(
        "`POST /api/match-tickers` through the server, sequential: p99",
        &format!("{p99:.2} ms"),
        "≤ 50 ms (issue 15)",
        common::summary::Verdict::of(p99 <= 50.0),
    );
}
