//! Backtests of what people hold: the built-in `portfolio` strategy given
//! `weights` (WIT 1.11.0 `allocation-weights`), rebalanced to them on the
//! schedule or, with `rebalance: "never"`, bought once and held; positions
//! recomputed from the trades and the stored closes; every refusal a 400
//! naming `weights`. Written with the typed client (`forecast-testkit`).

use std::collections::HashMap;

use crate::backtest::prices;
use crate::common::Server;
use chrono::NaiveDate;
use forecast_api::backtest::BacktestResponse;
use forecast_testkit::{Api, Refusal};
use serde_json::{json, Value};

const WEIGHTS: [(&str, f64); 2] = [("^GSPC", 0.6), ("^IXIC", 0.3)];

type Closes = HashMap<&'static str, (Vec<NaiveDate>, Vec<f64>)>;

async fn closes(s: &Server) -> Closes {
    let mut out = HashMap::new();
    for (t, _) in WEIGHTS {
        out.insert(t, prices(s, t).await);
    }
    out
}

fn close_at(closes: &Closes, ticker: &str, date: NaiveDate) -> f64 {
    let (dates, cs) = &closes[ticker];
    cs[dates.partition_point(|d| *d <= date) - 1]
}

/// `POST /api/backtest` with `body` (JSON, so a test can send what the
/// typed request cannot hold): the answer, or the refusal.
async fn backtest(api: &Api, body: &Value) -> Result<BacktestResponse, Refusal> {
    api.post("/backtest", body).await
}

/// The quantities held after each trade date, from the trades.
fn holdings(b: &BacktestResponse) -> Vec<(NaiveDate, HashMap<String, f64>)> {
    let mut out: Vec<(NaiveDate, HashMap<String, f64>)> = Vec::new();
    let mut qty: HashMap<String, f64> = HashMap::new();
    for t in &b.trades {
        let signed = t.qty * if t.side == "BUY" { 1.0 } else { -1.0 };
        *qty.entry(t.ticker.clone()).or_default() += signed;
        match out.last_mut() {
            Some((last, held)) if *last == t.date => *held = qty.clone(),
            _ => out.push((t.date, qty.clone())),
        }
    }
    out
}

fn equity_at(b: &BacktestResponse, d: NaiveDate) -> f64 {
    b.equity_curve.iter().find(|p| p.date == d).unwrap().equity
}

fn body(rebalance: &str) -> Value {
    let weights: serde_json::Map<String, Value> = WEIGHTS
        .iter()
        .map(|(t, w)| (t.to_string(), json!(w)))
        .collect();
    json!({
        "weights": weights, "rebalance": rebalance, "benchmarks": [],
        "start_date": "2008-01-01", "end_date": "2012-12-31", "initial_capital": 100000
    })
}

#[tokio::test]
async fn a_weighted_portfolio_is_traded_back_to_its_weights_at_every_rebalance() {
    let s = Server::app().await;
    let b = backtest(&s.api(), &body("monthly")).await.unwrap();
    assert_eq!(b.metadata.strategy, "portfolio", "the default with weights");
    let closes = closes(&s).await;
    let held = holdings(&b);
    assert!(held.len() >= 55, "a fill date a month: {}", held.len());
    for (d, qty) in &held {
        let equity = equity_at(&b, *d);
        for (t, w) in WEIGHTS {
            let share = qty[t] * close_at(&closes, t, *d) / equity;
            // The fill sizes against the equity before that day's costs
            // (5 bps of what it trades).
            assert!((share - w).abs() < 1e-3 * w, "{d} {t}: {share} vs {w}");
        }
    }
    // 10 % stays in cash: the equity moves by 90 % of the weighted mix.
    assert!(b.trades.len() > 2);
}

#[tokio::test]
async fn with_rebalance_never_the_weights_are_bought_once_and_held() {
    let s = Server::app().await;
    let b = backtest(&s.api(), &body("never")).await.unwrap();
    let trades = &b.trades;
    assert_eq!(trades.len(), 2, "one buy per weighted asset: {trades:?}");
    assert!(trades
        .iter()
        .all(|t| t.side == "BUY" && t.realised_pnl.is_none()));
    assert_eq!(b.metadata.rebalance_dates, 1);
    // Held to the end: cash plus the same quantities at the last close.
    let closes = closes(&s).await;
    let first = trades[0].date;
    let cost: f64 = trades.iter().map(|t| t.cost).sum();
    let spent: f64 = trades.iter().map(|t| t.qty * t.price).sum();
    let cash = 100_000.0 - spent - cost;
    let last = b.equity_curve.last().unwrap();
    let end = last.date;
    let value: f64 = trades
        .iter()
        .map(|t| t.qty * close_at(&closes, &t.ticker, end))
        .sum();
    assert!((last.equity - (cash + value)).abs() < 1e-6 * 100_000.0);
    assert!(first < end);
}

#[tokio::test]
async fn weights_outside_the_contract_are_400s_naming_the_field() {
    let s = Server::app().await;
    let api = s.api();
    let two = json!({"^GSPC": 0.5, "^IXIC": 0.5});
    let window = |mut v: Value| {
        let fields = v.as_object_mut().unwrap();
        fields.insert("start_date".into(), json!("2008-01-01"));
        fields.insert("end_date".into(), json!("2012-12-31"));
        v
    };
    for (req, needles) in [
        (
            json!({"strategy": "topn", "weights": two}),
            vec!["weights", "takes no weights", "portfolio"],
        ),
        (
            json!({"strategy": "portfolio", "tickers": ["^GSPC"], "top_n": 1}),
            vec!["weights", "needs weights"],
        ),
        (
            json!({"weights": {"^GSPC": 0.7, "^IXIC": 0.5}}),
            vec!["weights", "at most 1"],
        ),
        (
            json!({"weights": {"^GSPC": 0}}),
            vec!["weights", "^GSPC", "(0, 1]"],
        ),
        (
            json!({"weights": {"^GSPC": -0.2}}),
            vec!["weights", "(0, 1]"],
        ),
        (json!({"weights": {}}), vec!["weights", "1 to 3000"]),
        (json!({"weights": {"NOPE-XYZ": 0.5}}), vec!["NOPE-XYZ"]),
        (
            json!({"weights": two, "category": "Indices"}),
            vec!["weights", "category"],
        ),
        (
            json!({"weights": two, "tickers": ["^GSPC", "^DJI"]}),
            vec!["weights", "^IXIC", "tickers"],
        ),
        (json!({"weights": {"^GSPC": "half"}}), vec!["weights"]),
    ] {
        let refused = backtest(&api, &window(req.clone())).await.unwrap_err();
        refused.assert(400, &needles);
    }
    // A weighted asset without 300 rows by the end cannot trade.
    let refused = backtest(
        &api,
        &json!({"weights": {"^GSPC": 0.5, "^IXIC": 0.5}, "tickers": ["^GSPC", "^IXIC"],
                "start_date": "1971-02-05", "end_date": "1971-06-30"}),
    )
    .await
    .unwrap_err();
    refused.assert(400, &["weights", "^IXIC", "300 rows"]);
}
