//! `make bench` (backtest part): `topn` over the whole demo universe, 10
//! years, monthly — cold (every asset's engine signals computed by the
//! segmentation component) and with the signals cached (the same request
//! again) — plus the same for weekly and daily rebalancing, through the
//! real server on loopback (DESIGN §11: <= 10 s cold).
//!
//! Builds a demo database with `forecast demo load`, creates a key with
//! unbounded quotas and starts `forecast serve` with default limits.

mod common;

use std::time::Instant;

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("bench.db").display());
    common::forecast(&db, &["demo", "load"]);
    let key = common::unmetered_key(&db);
    let (mut server, base) = common::serve(&db, &[("FORECAST_BACKTEST_TIMEOUT_MS", "600000")]);
    let client = reqwest::Client::new();

    println!("topn, whole demo universe, 10 years (DESIGN §11 target: monthly <= 10 s cold)");
    println!(
        "{:<8} {:>10} {:>10} {:>8} {:>10} {:>8}",
        "rebal", "cold s", "cached s", "assets", "rows", "trades"
    );
    for rebalance in ["monthly", "weekly", "daily"] {
        // A new return period per schedule keeps the first request cold.
        let return_period = match rebalance {
            "monthly" => 90,
            "weekly" => 91,
            _ => 92,
        };
        let body = serde_json::json!({
            "strategy": "topn", "rebalance": rebalance, "return_period": return_period
        });
        let mut times = Vec::new();
        let mut last = serde_json::Value::Null;
        for _ in 0..4 {
            let started = Instant::now();
            let r = client
                .post(format!("{base}/api/backtest"))
                .bearer_auth(&key)
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
            last = r.json().await.unwrap();
            times.push(started.elapsed().as_secs_f64());
        }
        let mut cached = times[1..].to_vec();
        cached.sort_by(f64::total_cmp);
        println!(
            "{:<8} {:>10.2} {:>10.2} {:>8} {:>10} {:>8}",
            rebalance,
            times[0],
            cached[1],
            last["metadata"]["assets_count"],
            last["equity_curve"].as_array().unwrap().len(),
            last["metrics"]["total_trades"],
        );
        assert!(
            last["metadata"]["signals_cached"].as_u64().unwrap()
                >= last["metadata"]["assets_count"].as_u64().unwrap(),
            "the repeated runs must be served from the signal cache"
        );
    }
    let _ = server.kill();
    let _ = server.wait();
}
