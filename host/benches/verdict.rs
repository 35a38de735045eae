//! `make bench-verdict`: cached verdict latency and throughput at 32
//! concurrent connections on loopback, and the full grading time is
//! measured separately (see docs/BENCHMARKS.md).
//!
//! Builds a demo database with `forecast demo load`, grades a small active
//! universe (one asset per category plus the real histories; the cached
//! lookup does not depend on the universe's size), creates a key with
//! unbounded quotas, starts `forecast serve`, and drives it with 32
//! keep-alive connections from this process. Client and server share the
//! machine's cores, so the numbers are a lower bound for the server.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 32;

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
    let url = format!("{base}/api/analysis/%5EGSPC/verdict");
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CONNECTIONS)
        .build()
        .unwrap();
    let check: serde_json::Value = client
        .get(&url)
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

    // Warm up, then measure.
    let deadline = Instant::now() + Duration::from_secs(seconds + 1);
    let warm_until = Instant::now() + Duration::from_secs(1);
    let key = Arc::new(key);
    let mut tasks = Vec::new();
    for _ in 0..CONNECTIONS {
        let (client, url, key) = (client.clone(), url.clone(), key.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut errors = 0u64;
            while Instant::now() < deadline {
                let t = Instant::now();
                let ok = match client.get(&url).bearer_auth(key.as_str()).send().await {
                    Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                    Err(_) => false,
                };
                if t >= warm_until {
                    if ok {
                        latencies.push(t.elapsed());
                    } else {
                        errors += 1;
                    }
                }
            }
            (latencies, errors)
        }));
    }
    let mut all = Vec::new();
    let mut errors = 0;
    for t in tasks {
        let (l, e) = t.await.unwrap();
        all.extend(l);
        errors += e;
    }
    server.kill().ok();
    server.wait().ok();
    all.sort();
    let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1e3);
    println!("| case | connections | requests | errors | req/s | p50 | p99 |");
    println!("|---|---|---|---|---|---|---|");
    println!(
        "| cached verdict `GET /api/analysis/^GSPC/verdict` | {CONNECTIONS} | {} | {errors} | {:.0} | {} | {} |",
        all.len(),
        all.len() as f64 / seconds as f64,
        ms(pct(0.50)),
        ms(pct(0.99))
    );
}
