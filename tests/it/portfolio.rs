//! Backtests of what people hold: the built-in `portfolio` strategy given
//! `weights` (WIT 1.11.0 `allocation-weights`), rebalanced to them on the
//! schedule or, with `rebalance: "never"`, bought once and held; positions
//! recomputed from the trades and the stored closes; every refusal a 400
//! naming `weights`.

use std::collections::HashMap;

use crate::backtest::{f, ok, post, prices};
use crate::common::{assert_error, Server};
use chrono::NaiveDate;
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

fn date(v: &Value) -> NaiveDate {
    v.as_str().unwrap().parse().unwrap()
}

/// The quantities held after each trade date, from the trades.
fn holdings(b: &Value) -> Vec<(NaiveDate, HashMap<String, f64>)> {
    let mut out: Vec<(NaiveDate, HashMap<String, f64>)> = Vec::new();
    let mut qty: HashMap<String, f64> = HashMap::new();
    for t in b["trades"].as_array().unwrap() {
        let d = date(&t["date"]);
        let signed = f(&t["qty"]) * if t["side"] == "BUY" { 1.0 } else { -1.0 };
        *qty.entry(t["ticker"].as_str().unwrap().to_string())
            .or_default() += signed;
        match out.last_mut() {
            Some((last, held)) if *last == d => *held = qty.clone(),
            _ => out.push((d, qty.clone())),
        }
    }
    out
}

fn equity_at(b: &Value, d: NaiveDate) -> f64 {
    let curve = b["equity_curve"].as_array().unwrap();
    let p = curve.iter().find(|p| date(&p["date"]) == d).unwrap();
    f(&p["equity"])
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
    let b = ok(&s, body("monthly")).await;
    assert_eq!(
        b["metadata"]["strategy"], "portfolio",
        "the default with weights"
    );
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
    assert!(b["trades"].as_array().unwrap().len() > 2);
}

#[tokio::test]
async fn with_rebalance_never_the_weights_are_bought_once_and_held() {
    let s = Server::app().await;
    let b = ok(&s, body("never")).await;
    let trades = b["trades"].as_array().unwrap();
    assert_eq!(trades.len(), 2, "one buy per weighted asset: {trades:?}");
    assert!(trades
        .iter()
        .all(|t| t["side"] == "BUY" && t["realised_pnl"].is_null()));
    assert_eq!(b["metadata"]["rebalance_dates"], 1);
    // Held to the end: cash plus the same quantities at the last close.
    let closes = closes(&s).await;
    let first = date(&trades[0]["date"]);
    let cost: f64 = trades.iter().map(|t| f(&t["cost"])).sum();
    let spent: f64 = trades.iter().map(|t| f(&t["qty"]) * f(&t["price"])).sum();
    let cash = 100_000.0 - spent - cost;
    let last = b["equity_curve"].as_array().unwrap().last().unwrap();
    let end = date(&last["date"]);
    let value: f64 = trades
        .iter()
        .map(|t| f(&t["qty"]) * close_at(&closes, t["ticker"].as_str().unwrap(), end))
        .sum();
    assert!((f(&last["equity"]) - (cash + value)).abs() < 1e-6 * 100_000.0);
    assert!(first < end);
}

#[tokio::test]
async fn weights_outside_the_contract_are_400s_naming_the_field() {
    let s = Server::app().await;
    let two = json!({"^GSPC": 0.5, "^IXIC": 0.5});
    let window = |mut v: Value| {
        v["start_date"] = json!("2008-01-01");
        v["end_date"] = json!("2012-12-31");
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
        let a = post(&s, window(req.clone())).await;
        assert_error(&(a.status, a.body), 400, &needles);
    }
    // A weighted asset without 300 rows by the end cannot trade.
    let a = post(
        &s,
        json!({"weights": {"^GSPC": 0.5, "^IXIC": 0.5}, "tickers": ["^GSPC", "^IXIC"],
               "start_date": "1971-02-05", "end_date": "1971-06-30"}),
    )
    .await;
    assert_error(&(a.status, a.body), 400, &["weights", "^IXIC", "300 rows"]);
}
