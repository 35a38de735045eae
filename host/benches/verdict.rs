//! `make bench-verdict`: the request path under load (issue 17), back to
//! back in one run on loopback: `GET /api/health` (no key, no store) for
//! scale, the cached verdict at 32 and at 4 connections, and the cheapest
//! authenticated route, `GET /api/strategies`; a markdown table with each
//! figure beside its target and the ratios to health.
//!
//! Builds a demo database with `forecast demo load`, grades a small active
//! universe (one asset per category plus the real histories; the cached
//! lookup does not depend on the universe's size), creates a key with
//! unbounded quotas, starts `forecast serve` (with a per-client limit high
//! enough never to refuse health) and drives it from this process with
//! keep-alive connections speaking plain HTTP/1.1 (a few lines, lighter
//! than a full client, as wrk). Client and server share the machine's
//! cores, so the numbers are a lower bound for the server.
//! `BENCH_SECONDS` sets the length of each case (default 10; the three
//! cases at 32 connections run it in three rounds, and each ratio is the
//! median round's). Last, live verdicts under scorer 1.0.0 and 2.1.0 back
//! to back (`common::live`).

mod common;

use std::time::Duration;

use common::load::{load, Stats};
use common::summary::{row as summary, Verdict};

/// Rounds of health, verdict and strategies at 32 connections.
const ROUNDS: usize = 3;

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "**missed**"
    }
}

/// The live verdicts' rows: each version's mean and median, and the
/// newer's ratio to the older's mean against issue 39's 1.2×.
fn live_rows((old, new): &(common::live::Times, common::live::Times)) {
    let ratio = new.mean().as_secs_f64() / old.mean().as_secs_f64();
    for t in [old, new] {
        println!(
            "live verdict, scorer {}: mean {}, median {} ({} requests)",
            t.version,
            ms(t.mean()),
            ms(t.median()),
            t.sorted.len()
        );
    }
    summary(
        &format!(
            "live verdict (5 assets × 8 segment counts, one at a time), scorer {} vs {}",
            new.version, old.version
        ),
        &format!(
            "{ratio:.2}× (mean {} vs {}; median {} vs {})",
            ms(new.mean()),
            ms(old.mean()),
            ms(new.median()),
            ms(old.median())
        ),
        "≤ 1.2×",
        Verdict::of(ratio <= 1.2),
    );
}

#[tokio::main]
async fn main() {
    let seconds: u64 = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("bench.db").display());
    common::forecast(&db, &["demo", "load"]);
    let pool = sqlx::SqlitePool::connect(&db).await.unwrap();
    sqlx::query(
        "UPDATE assets SET is_active = (id IN (SELECT MIN(id) FROM assets GROUP BY category)
             OR ticker IN ('^GSPC', '^IXIC', '^VIX', 'CL=F', 'AAPL'))",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    common::forecast(&db, &["grade"]);
    let key = common::unmetered_key(&db);
    let (mut server, base) = common::serve(&db, &[]);
    let addr = base.trim_start_matches("http://").to_string();
    let verdict = "/api/analysis/%5EGSPC/verdict";
    let check: serde_json::Value = reqwest::Client::new()
        .get(format!("{base}{verdict}"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        check["metadata"]["from_cache"], true,
        "the bench must measure cached verdicts"
    );

    // Back to back, so the ratios compare like with like on a shared
    // machine; in ROUNDS rounds of a third of the time each, the ratio
    // taken from the median round (one run of each moved by ±20 % between
    // runs of the same build on the 2-core machine).
    let slice = seconds.div_ceil(ROUNDS as u64).max(1);
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let health = load(&addr, "/api/health", None, 32, slice).await;
        let verdict = load(&addr, verdict, Some(&key), 32, slice).await;
        let strategies = load(&addr, "/api/strategies", Some(&key), 32, slice).await;
        rounds.push((health, verdict, strategies));
    }
    let ratio = |a: &Stats, b: &Stats| a.per_second / b.per_second.max(1.0);
    let median_round = |of: &dyn Fn(&(Stats, Stats, Stats)) -> f64| {
        let mut order: Vec<usize> = (0..rounds.len()).collect();
        order.sort_by(|&a, &b| of(&rounds[a]).total_cmp(&of(&rounds[b])));
        order[order.len() / 2]
    };
    let v_round = median_round(&|r| ratio(&r.1, &r.0));
    let s_round = median_round(&|r| ratio(&r.2, &r.0));
    println!(
        "ratios to health by round: verdict {:?}, strategies {:?}",
        rounds
            .iter()
            .map(|r| (ratio(&r.1, &r.0) * 100.0).round() / 100.0)
            .collect::<Vec<_>>(),
        rounds
            .iter()
            .map(|r| (ratio(&r.2, &r.0) * 100.0).round() / 100.0)
            .collect::<Vec<_>>(),
    );
    let (health32, verdict32) = (&rounds[v_round].0, &rounds[v_round].1);
    let (s_health32, strategies32) = (&rounds[s_round].0, &rounds[s_round].2);
    let verdict4 = load(&addr, verdict, Some(&key), 4, seconds).await;
    let health4 = load(&addr, "/api/health", None, 4, seconds).await;
    let live = common::live::scorer_ab(&db, &base, &key, "1.0.0", "2.1.0").await;
    server.kill().ok();
    server.wait().ok();
    live_rows(&live);

    table(
        (health32, verdict32),
        (s_health32, strategies32),
        (&verdict4, &health4),
    );
}

/// The table of the request-path cases and their summary rows: health and
/// the cached verdict at 32 connections (the verdict's median round),
/// health and strategies (the strategies' median round), the verdict and
/// health at 4.
fn table(
    (health32, verdict32): (&Stats, &Stats),
    (s_health32, strategies32): (&Stats, &Stats),
    (verdict4, health4): (&Stats, &Stats),
) {
    let ratio = |a: &Stats, b: &Stats| a.per_second / b.per_second.max(1.0);
    println!("| case | connections | requests | errors | req/s | p50 | p99 | target | |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let row = |name: &str, c: usize, s: &Stats, target: String, ok: Option<bool>| {
        println!(
            "| {name} | {c} | {} | {} | {:.0} | {} | {} | {target} | {} |",
            s.requests,
            s.errors,
            s.per_second,
            ms(s.p50),
            ms(s.p99),
            ok.map(met).unwrap_or("")
        );
    };
    let v32 = ratio(verdict32, health32);
    let st32 = ratio(strategies32, s_health32);
    row(
        "`GET /api/health` (no key)",
        32,
        health32,
        "scale".into(),
        None,
    );
    row(
        "cached verdict `GET /api/analysis/^GSPC/verdict`",
        32,
        verdict32,
        format!("≥ 0.5× health: {v32:.2}×"),
        Some(v32 >= 0.5 && verdict32.errors == 0),
    );
    row(
        "`GET /api/strategies` (Bearer)",
        32,
        strategies32,
        format!("≥ 0.7× health: {st32:.2}×"),
        Some(st32 >= 0.7 && strategies32.errors == 0),
    );
    row(
        "cached verdict",
        4,
        verdict4,
        format!("p99 ≤ 2 ms: {}", ms(verdict4.p99)),
        Some(verdict4.p99 <= Duration::from_millis(2) && verdict4.errors == 0),
    );
    row(
        "`GET /api/health` (no key)",
        4,
        health4,
        format!("scale; verdict at 4 is {:.2}×", ratio(verdict4, health4)),
        None,
    );
    summary(
        "cached verdict vs `/api/health`, 32 connections (back to back)",
        &format!(
            "{v32:.2}× ({:.0} vs {:.0} req/s)",
            verdict32.per_second, health32.per_second
        ),
        "≥ 0.5×",
        Verdict::of(v32 >= 0.5 && verdict32.errors == 0),
    );
    summary(
        "cached verdict, 4 connections: p99",
        &format!("{} (p50 {})", ms(verdict4.p99), ms(verdict4.p50)),
        "≤ 2 ms",
        Verdict::of(verdict4.p99 <= Duration::from_millis(2) && verdict4.errors == 0),
    );
    summary(
        "`/api/strategies` (Bearer) vs `/api/health`, 32 connections",
        &format!(
            "{st32:.2}× ({:.0} vs {:.0} req/s)",
            strategies32.per_second, s_health32.per_second
        ),
        "≥ 0.7×",
        Verdict::of(st32 >= 0.7 && strategies32.errors == 0),
    );
}
