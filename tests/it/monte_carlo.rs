//! `POST /api/backtest/monte-carlo` in process (issue 29): a backtest's
//! daily returns reordered by a seeded stationary block bootstrap. The
//! same seed gives the same figures, the run's own metrics are the
//! backtest's, it costs 10, and every new field is bounded (400 naming it).

use crate::common;

use common::{assert_error, f, Server};
use serde_json::{json, Value};

const UNIVERSE: [&str; 6] = ["^GSPC", "^IXIC", "^DJI", "^NDX", "^RUT", "^FTSE"];

/// POSTs `body` with the test key: status, answer, units left.
async fn post(s: &Server, path: &str, body: &Value) -> (u16, Value, Option<u64>) {
    common::post_json_text(s, path, &body.to_string()).await
}

#[tokio::test]
async fn the_same_seed_gives_the_same_spread_and_the_run_is_the_backtests() {
    let s = Server::app().await;
    let base = json!({
        "tickers": UNIVERSE, "top_n": 3,
        "start_date": "2010-01-01", "end_date": "2018-12-31"
    });
    let mut body = base.clone();
    body["runs"] = json!(400);
    body["block_days"] = json!(10);
    body["seed"] = json!(42);
    let (status, a, before) = post(&s, "/api/backtest/monte-carlo", &body).await;
    assert_eq!(status, 200, "{a}");
    let (_, b, after) = post(&s, "/api/backtest/monte-carlo", &body).await;
    assert_eq!(
        before.unwrap() - after.unwrap(),
        10,
        "a Monte Carlo costs 10"
    );
    // The simulation is the same; only the run's bookkeeping (timing,
    // cached signals) may differ.
    for k in [
        "runs",
        "days",
        "cagr",
        "max_drawdown",
        "final_equity",
        "probability_of_loss",
        "probability_of_drawdown_beyond_50",
        "fan",
        "metrics",
    ] {
        assert_eq!(a[k], b[k], "{k}");
    }
    assert_eq!(
        (
            a["runs"].as_u64(),
            a["block_days"].as_u64(),
            a["seed"].as_u64()
        ),
        (Some(400), Some(10), Some(42))
    );
    for k in ["cagr", "max_drawdown", "final_equity"] {
        let (p5, p50, p95) = (f(&a[k]["p5"]), f(&a[k]["p50"]), f(&a[k]["p95"]));
        assert!(p5 <= p50 && p50 <= p95, "{k}: {}", a[k]);
    }
    assert!(f(&a["max_drawdown"]["p95"]) <= 0.0);
    for k in ["probability_of_loss", "probability_of_drawdown_beyond_50"] {
        assert!((0.0..=1.0).contains(&f(&a[k])), "{k}");
    }
    // The run itself is the backtest's.
    let (status, run, _) = post(&s, "/api/backtest", &base).await;
    assert_eq!(status, 200);
    assert_eq!(a["metrics"], run["metrics"]);
    let curve = run["equity_curve"].as_array().unwrap();
    assert_eq!(a["days"].as_u64().unwrap() as usize, curve.len() - 1);
    // The fan ends on the run's last date, at most 500 dates, percentiles
    // ordered; its last median is the final equity's.
    let fan = a["fan"].as_array().unwrap();
    assert!(!fan.is_empty() && fan.len() <= 501, "{}", fan.len());
    assert_eq!(fan.last().unwrap()["date"], curve.last().unwrap()["date"]);
    for p in fan {
        let q: Vec<f64> = ["p5", "p25", "p50", "p75", "p95"]
            .iter()
            .map(|k| f(&p[*k]))
            .collect();
        assert!(q.windows(2).all(|w| w[0] <= w[1]), "{p}");
    }
    assert_eq!(fan.last().unwrap()["p50"], a["final_equity"]["p50"]);
    // Another seed, other paths.
    body["seed"] = json!(43);
    let (_, c, _) = post(&s, "/api/backtest/monte-carlo", &body).await;
    assert_ne!(c["final_equity"], a["final_equity"]);
    // Defaults: 1,000 paths, blocks of 20 days, seed 1.
    let (status, d, _) = post(&s, "/api/backtest/monte-carlo", &base).await;
    assert_eq!(status, 200, "{d}");
    assert_eq!(
        (
            d["runs"].as_u64(),
            d["block_days"].as_u64(),
            d["seed"].as_u64()
        ),
        (Some(1000), Some(20), Some(1))
    );
}

#[tokio::test]
async fn every_new_field_is_bounded_and_named() {
    let s = Server::app().await;
    for (extra, field) in [
        (json!({"runs": 0}), "runs"),
        (json!({"runs": 5001}), "runs"),
        (json!({"runs": 1.5}), "runs"),
        (json!({"block_days": 0}), "block_days"),
        (json!({"block_days": 251}), "block_days"),
        (json!({"seed": -1}), "seed"),
        (json!({"seed": 9007199254740993_u64}), "seed"),
        (json!({"top_n": 0}), "top_n"),
        (json!({"paths": 10}), "paths"),
    ] {
        let mut body = json!({"tickers": UNIVERSE});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (status, b, _) = post(&s, "/api/backtest/monte-carlo", &body).await;
        assert_error(&(status, b), 400, &[field]);
    }
    // Without a key: 401, as every data route.
    let r = s
        .post_json_anonymous("/api/backtest/monte-carlo", &json!({}))
        .await;
    assert_eq!(r.status(), 401);
}
