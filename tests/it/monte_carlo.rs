//! `POST /api/backtest/monte-carlo` in process (issue 29): a backtest's
//! daily returns reordered by a seeded stationary block bootstrap. The
//! same seed gives the same figures, the run's own metrics are the
//! backtest's, it costs 10, and every new field is bounded (400 naming it).

use crate::common;

use common::Server;
use forecast_api::backtest::{BacktestResponse, MonteCarloResponse, PathSpread};
use forecast_testkit::Refusal;
use serde_json::{json, Value};

const UNIVERSE: [&str; 6] = ["^GSPC", "^IXIC", "^DJI", "^NDX", "^RUT", "^FTSE"];
const MONTE_CARLO: &str = "/backtest/monte-carlo";

/// A Monte Carlo of `body` with the test key, which must be answered: the
/// answer and the units left after it.
async fn monte_carlo(s: &Server, body: &Value) -> (MonteCarloResponse, u64) {
    s.api().post_metered(MONTE_CARLO, body).await
}

#[tokio::test]
async fn the_same_seed_gives_the_same_spread_and_the_run_is_the_backtests() {
    let s = Server::app().await;
    let base = json!({
        "tickers": UNIVERSE, "top_n": 3,
        "start_date": "2010-01-01", "end_date": "2018-12-31"
    });
    let seeded = |seed: u64| {
        json!({
            "tickers": UNIVERSE, "top_n": 3,
            "start_date": "2010-01-01", "end_date": "2018-12-31",
            "runs": 400, "block_days": 10, "seed": seed
        })
    };
    let body = seeded(42);
    let (a, before) = monte_carlo(&s, &body).await;
    let (b, after) = monte_carlo(&s, &body).await;
    assert_eq!(before - after, 10, "a Monte Carlo costs 10");
    // The simulation is the same; only the run's bookkeeping (timing,
    // cached signals) may differ.
    assert_eq!((a.runs, a.days, a.cagr), (b.runs, b.days, b.cagr));
    assert_eq!(
        (a.max_drawdown, a.final_equity),
        (b.max_drawdown, b.final_equity)
    );
    assert_eq!(a.probability_of_loss, b.probability_of_loss);
    assert_eq!(
        a.probability_of_drawdown_beyond_50,
        b.probability_of_drawdown_beyond_50
    );
    assert_eq!((&a.fan, &a.metrics), (&b.fan, &b.metrics));
    assert_eq!((a.runs, a.block_days, a.seed), (400, 10, 42));
    for (k, spread) in [
        ("cagr", a.cagr),
        ("max_drawdown", a.max_drawdown),
        ("final_equity", a.final_equity),
    ] {
        let PathSpread { p5, p50, p95 } = spread;
        assert!(p5 <= p50 && p50 <= p95, "{k}: {spread:?}");
    }
    assert!(a.max_drawdown.p95 <= 0.0);
    for p in [a.probability_of_loss, a.probability_of_drawdown_beyond_50] {
        assert!((0.0..=1.0).contains(&p), "{p}");
    }
    // The run itself is the backtest's.
    let run: BacktestResponse = s.api().post("/backtest", &base).await.unwrap();
    assert_eq!(a.metrics, run.metrics);
    let curve = &run.equity_curve;
    assert_eq!(a.days, curve.len() - 1);
    // The fan ends on the run's last date, at most 500 dates, percentiles
    // ordered; its last median is the final equity's.
    let fan = &a.fan;
    assert!(!fan.is_empty() && fan.len() <= 501, "{}", fan.len());
    assert_eq!(fan.last().unwrap().date, curve.last().unwrap().date);
    for p in fan {
        let q = [p.p5, p.p25, p.p50, p.p75, p.p95];
        assert!(q.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
    }
    assert_eq!(fan.last().unwrap().p50, a.final_equity.p50);
    // Another seed, other paths.
    let (c, _) = monte_carlo(&s, &seeded(43)).await;
    assert_ne!(c.final_equity, a.final_equity);
    // Defaults: 1,000 paths, blocks of 20 days, seed 1.
    let (d, _) = monte_carlo(&s, &base).await;
    assert_eq!((d.runs, d.block_days, d.seed), (1000, 20, 1));
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
        s.api()
            .post_refused(MONTE_CARLO, &body)
            .await
            .assert(400, &[field]);
    }
    // Without a key: 401, as every data route.
    let anonymous = s.api_as(forecast_testkit::Auth::Anonymous);
    let refused: Refusal = anonymous.post_refused(MONTE_CARLO, &json!({})).await;
    assert_eq!(refused.status, 401);
}
