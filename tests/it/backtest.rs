//! `POST /api/backtest` through the real router in process: the spec's
//! response, the accounting identity and costs recomputed from the trades
//! and the stored prices, metrics recomputed from the equity curve, no
//! look-ahead across an ingest, every 400, the misbehaving strategy, the
//! run's time limit, the cost of 5, and the SDK's example plugin; and,
//! with the real binary, a start refused for a broken plugin file.

use crate::common;

use std::collections::HashMap;

use common::{assert_error, component, test_key, Server};
use serde_json::{json, Value};

const UNIVERSE: [&str; 6] = ["^GSPC", "^IXIC", "^DJI", "^NDX", "^RUT", "^FTSE"];

pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Value,
    remaining: Option<u64>,
}

pub(crate) async fn post(s: &Server, body: Value) -> Answer {
    let r = s
        .client()
        .post(s.url("/api/backtest"))
        .bearer_auth(test_key())
        .json(&body)
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    let remaining = r
        .headers()
        .get("x-ratelimit-remaining")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let text = r.text().await.expect("body");
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("non-JSON answer {status}: {e}: {text:.300}"));
    Answer {
        status,
        body,
        remaining,
    }
}

pub(crate) async fn ok(s: &Server, body: Value) -> Value {
    let a = post(s, body.clone()).await;
    assert_eq!(a.status, 200, "{body} → {}", a.body);
    a.body
}

pub(crate) fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Closes of `ticker` from the server's own database.
pub(crate) async fn prices(s: &Server, ticker: &str) -> (Vec<chrono::NaiveDate>, Vec<f64>) {
    let db = forecast::store::connect(&common::sqlite_url(&s.db))
        .await
        .expect("open the test database");
    let asset = db.asset_by_ticker(ticker).await.unwrap().unwrap();
    let series = db.load_series(asset.id).await.unwrap().unwrap();
    db.close().await;
    (
        series
            .dates
            .iter()
            .map(|&d| forecast::series::from_days(d))
            .collect(),
        series.closes,
    )
}

#[tokio::test]
async fn a_backtest_answers_the_spec_response_and_costs_five_requests() {
    let s = Server::app().await;
    let body = json!({
        "tickers": UNIVERSE, "top_n": 3,
        "start_date": "2012-01-01", "end_date": "2016-12-31"
    });
    let first = post(&s, body.clone()).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let second = post(&s, body).await;
    assert_eq!(
        first.remaining.unwrap() - second.remaining.unwrap(),
        5,
        "a backtest costs 5 requests"
    );
    let b = &first.body;
    let curve = b["equity_curve"].as_array().unwrap();
    assert!(curve.len() > 1000, "five years of rows");
    let first_date = curve[0]["date"].as_str().unwrap();
    assert!(
        ("2012-01-02".."2012-01-06").contains(&first_date),
        "{first_date}"
    );
    assert_eq!(f(&curve[0]["equity"]), 100_000.0);
    assert!(curve.last().unwrap()["date"].as_str().unwrap() <= "2016-12-31");
    let trades = b["trades"].as_array().unwrap();
    assert!(!trades.is_empty());
    for t in trades {
        assert!(UNIVERSE.contains(&t["ticker"].as_str().unwrap()));
        assert!(["BUY", "SELL"].contains(&t["side"].as_str().unwrap()));
        assert!(f(&t["qty"]) > 0.0 && f(&t["price"]) > 0.0);
    }
    for k in [
        "total_return",
        "cagr",
        "sharpe_ratio",
        "sortino_ratio",
        "max_drawdown",
        "final_equity",
        "years",
        "total_costs",
        "cost_drag_pct",
        "total_trades",
    ] {
        assert!(b["metrics"].get(k).is_some(), "metrics.{k}");
    }
    assert_eq!(b["metrics"]["total_trades"], trades.len());
    let benchmarks = b["benchmarks"].as_object().unwrap();
    assert_eq!(benchmarks.len(), 3, "the two baskets and ^GSPC by default");
    for name in ["equal_weight_buy_hold", "equal_weight_rebalanced", "^GSPC"] {
        let bm = &benchmarks[name];
        let dates = bm["dates"].as_array().unwrap();
        assert_eq!(dates.len(), curve.len(), "{name}");
        assert_eq!(dates[0], curve[0]["date"]);
        assert_eq!(f(&bm["equity"][0]), 100_000.0);
    }
    let m = &b["metadata"];
    assert_eq!(m["assets_count"], 6);
    assert!(m["data_points"].as_u64().unwrap() >= curve.len() as u64);
    // Monthly: one decision per month that has a following row.
    assert_eq!(m["rebalance_dates"], 60);
    assert!(m["calculated_at"].as_str().unwrap().contains('T'));
    assert_eq!(m["strategy"], "topn");
    assert_eq!(m["periods_per_year"], 252);
}

/// Issue 16: a backtest counts the real, ingested and synthetic histories it
/// used and names each asset it could not use, with the reason.
#[tokio::test]
async fn a_backtest_counts_its_data_sources_and_names_the_assets_it_could_not_use() {
    let s = Server::app().await;
    let b = ok(
        &s,
        json!({
            "tickers": ["^IXIC", "^GSPC", "AAPL", "KVUE", "CL=F"], "top_n": 1,
            "start_date": "2017-01-01", "end_date": "2018-12-31"
        }),
    )
    .await;
    let m = &b["metadata"];
    assert_eq!(m["assets_count"], 2, "{m}");
    assert_eq!(
        m["data_sources"],
        json!({"real": 2, "ingested": 0, "synthetic": 0})
    );
    assert_eq!(m["unusable_assets_count"], 3);
    let unusable = m["unusable_assets"].as_array().unwrap();
    let reason = |t: &str| {
        let u = unusable.iter().find(|u| u["ticker"] == t).unwrap();
        (
            u["last_price_date"].as_str().map(str::to_string),
            u["reason"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        reason("^GSPC"),
        (
            Some("2015-12-31".into()),
            "its last price (2015-12-31) is before the window starts (2017-01-01)".into()
        )
    );
    assert!(reason("AAPL").1.contains("before the window starts"));
    // KVUE's history is short and recent.
    assert!(reason("KVUE")
        .1
        .contains("is after the window ends (2018-12-31)"));
    assert!(b["trades"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| ["^IXIC", "CL=F"].contains(&t["ticker"].as_str().unwrap())));

    // Over its own (recent) dates, the short history is too short.
    let b = ok(&s, json!({"tickers": ["KVUE", "BTC-USD"], "top_n": 1})).await;
    let m = &b["metadata"];
    assert_eq!(m["data_sources"]["synthetic"], 1, "{m}");
    let short = m["unusable_assets"][0]["reason"].as_str().unwrap();
    assert!(
        short.starts_with("only ") && short.ends_with("300 are needed for signals"),
        "{short}"
    );
}

#[tokio::test]
async fn equity_is_cash_plus_positions_and_costs_follow_from_the_trades() {
    let s = Server::app().await;
    let b = ok(
        &s,
        json!({
            "tickers": UNIVERSE, "top_n": 2, "rebalance": "weekly",
            "start_date": "2014-06-01", "end_date": "2016-06-30", "initial_capital": 50000
        }),
    )
    .await;
    let mut closes = HashMap::new();
    for t in UNIVERSE {
        closes.insert(t, prices(&s, t).await);
    }
    let close_at = |ticker: &str, date: chrono::NaiveDate| {
        let (dates, cs) = &closes[ticker];
        let k = dates.partition_point(|d| *d <= date);
        cs[k - 1]
    };
    let bps = f(&b["metadata"]["cost_bps"]["Indices"]);
    assert_eq!(bps, 5.0, "DESIGN §6: indices cost 5 bps per side");

    let trades = b["trades"].as_array().unwrap();
    let mut qty: HashMap<String, f64> = HashMap::new();
    let mut cash = 50_000.0;
    let mut costs = 0.0;
    let mut next = 0;
    let (mut bases, mut realised) = (HashMap::<String, f64>::new(), 0.0);
    let basis = |t: &str, bases: &HashMap<String, f64>| bases.get(t).copied().unwrap_or(0.0);
    for point in b["equity_curve"].as_array().unwrap() {
        let date: chrono::NaiveDate = point["date"].as_str().unwrap().parse().unwrap();
        while next < trades.len() && trades[next]["date"] == point["date"] {
            let t = &trades[next];
            let ticker = t["ticker"].as_str().unwrap();
            assert!(
                close(f(&t["price"]), close_at(ticker, date)),
                "fills at the close"
            );
            let signed = f(&t["qty"]) * if t["side"] == "BUY" { 1.0 } else { -1.0 };
            let cost = f(&t["qty"]) * f(&t["price"]) * bps / 10_000.0;
            assert!(close(f(&t["cost"]), cost), "each fill carries its cost");
            // topn is long only: a buy grows the position at the average
            // price, a sell realises against it.
            let (held, basis) = (
                qty.get(ticker).copied().unwrap_or(0.0),
                basis(ticker, &bases),
            );
            if signed > 0.0 {
                assert!(t["realised_pnl"].is_null(), "a buy realises nothing");
                let avg = (held * basis + signed * f(&t["price"])) / (held + signed);
                bases.insert(ticker.to_string(), avg);
            } else {
                let pnl = -signed * (f(&t["price"]) - basis);
                assert!((f(&t["realised_pnl"]) - pnl).abs() <= 1e-6 * pnl.abs().max(1.0));
                realised += pnl;
            }
            *qty.entry(ticker.to_string()).or_default() += signed;
            cash -= signed * f(&t["price"]) + cost;
            costs += cost;
            next += 1;
        }
        let positions: f64 = qty.iter().map(|(t, q)| q * close_at(t, date)).sum();
        let equity = f(&point["equity"]);
        assert!(
            (equity - (cash + positions)).abs() <= 1e-6 * equity,
            "{date}: equity {equity} vs cash + positions {}",
            cash + positions
        );
    }
    assert_eq!(next, trades.len(), "every trade lies on a curve date");
    assert!(costs > 0.0);
    assert!(realised != 0.0, "some positions were closed");
    let last = b["equity_curve"].as_array().unwrap().last().unwrap();
    let end: chrono::NaiveDate = last["date"].as_str().unwrap().parse().unwrap();
    let open: f64 = qty
        .iter()
        .map(|(t, q)| q * (close_at(t, end) - basis(t, &bases)))
        .sum();
    assert!(
        (realised - costs + open - (f(&last["equity"]) - 50_000.0)).abs() <= 1e-6 * 50_000.0,
        "realised - costs + open P&L is the equity's change"
    );
    assert!(close(f(&b["metrics"]["total_costs"]), costs));
    assert!(close(
        f(&b["metrics"]["cost_drag_pct"]),
        costs / 50_000.0 * 100.0
    ));
}

/// DESIGN §6's formulas, computed here from the returned curve only.
fn independent_metrics(curve: &[f64], p: f64) -> [Option<f64>; 6] {
    let r: Vec<f64> = curve.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
    let n = r.len() as f64;
    let mean = r.iter().sum::<f64>() / n;
    let sd = (r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let down = (r.iter().map(|x| x.min(0.0).powi(2)).sum::<f64>() / n).sqrt();
    let (e0, en) = (curve[0], *curve.last().unwrap());
    let years = n / p;
    let mut peak = f64::MIN;
    let mut mdd = 0.0f64;
    for &e in curve {
        peak = peak.max(e);
        mdd = mdd.min(e / peak - 1.0);
    }
    [
        Some(en / e0 - 1.0),
        Some((en / e0).powf(1.0 / years) - 1.0),
        Some(mean / sd * p.sqrt()),
        Some(mean * p / (down * p.sqrt())),
        Some(mdd),
        Some(years),
    ]
}

#[tokio::test]
async fn metrics_equal_an_independent_computation_from_the_curve() {
    let s = Server::app().await;
    for (body, p) in [
        (
            json!({"tickers": UNIVERSE, "top_n": 3, "start_date": "2010-01-01", "end_date": "2018-12-31"}),
            252.0,
        ),
        (
            json!({"tickers": ["BTC-USD", "ETH-USD", "LTC-USD", "XRP-USD"], "top_n": 2,
                   "rebalance": "weekly", "metric": "sharpe"}),
            365.0,
        ),
    ] {
        let b = ok(&s, body).await;
        let curve: Vec<f64> = b["equity_curve"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| f(&p["equity"]))
            .collect();
        assert_eq!(f(&b["metadata"]["periods_per_year"]), p);
        let m = &b["metrics"];
        let got = [
            m["total_return"].as_f64(),
            m["cagr"].as_f64(),
            m["sharpe_ratio"].as_f64(),
            m["sortino_ratio"].as_f64(),
            m["max_drawdown"].as_f64(),
            m["years"].as_f64(),
        ];
        let want = independent_metrics(&curve, p);
        for (name, (g, w)) in [
            "total_return",
            "cagr",
            "sharpe",
            "sortino",
            "max_dd",
            "years",
        ]
        .iter()
        .zip(got.iter().zip(want))
        {
            let (g, w) = (g.unwrap(), w.unwrap());
            assert!(close(g, w), "{name}: {g} vs {w}");
        }
        assert_eq!(f(&m["final_equity"]), *curve.last().unwrap());
        risk_equals_an_independent_computation(&b, &curve, p);
    }
}

/// Daily simple returns.
fn daily(curve: &[f64]) -> Vec<f64> {
    curve.windows(2).map(|w| w[1] / w[0] - 1.0).collect()
}

fn mean_sd(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (
        m,
        (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt(),
    )
}

/// The risk and benchmark-relative metrics (issue 29) from the response's
/// own curves, written from their definitions (docs/METHODOLOGY.md).
fn risk_equals_an_independent_computation(b: &Value, curve: &[f64], p: f64) {
    let m = &b["metrics"];
    let r = daily(curve);
    let (mr, sr) = mean_sd(&r);
    let var = mr + sr * -1.644_853_626_951_472_2;
    assert!(close(f(&m["var_95"]), var));
    // The normal density at that quantile: 0.1031356…
    let pdf =
        (-0.5f64 * 1.644_853_626_951_472_2f64.powi(2)).exp() / (2.0 * std::f64::consts::PI).sqrt();
    assert!(close(f(&m["cvar_95"]), mr - sr * pdf / 0.05));
    assert!(close(
        f(&m["calmar_ratio"]),
        f(&m["cagr"]) / f(&m["max_drawdown"]).abs()
    ));
    let mut peak = curve[0];
    let mut squares = 0.0;
    for &e in &curve[1..] {
        peak = peak.max(e);
        squares += (e / peak - 1.0).powi(2);
    }
    assert!(close(
        f(&m["ulcer_index"]),
        (squares / (r.len() - 1) as f64).sqrt()
    ));
    // Calendar months, compounded, from the curve's dates.
    let dates: Vec<String> = b["equity_curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["date"].as_str().unwrap()[..7].to_string())
        .collect();
    let mut months: Vec<(String, f64)> = Vec::new();
    for (i, x) in r.iter().enumerate() {
        let key = &dates[i + 1];
        match months.last_mut() {
            Some((k, g)) if k == key => *g *= 1.0 + x,
            _ => months.push((key.clone(), 1.0 + x)),
        }
    }
    let rets: Vec<f64> = months.iter().map(|(_, g)| g - 1.0).collect();
    let best = rets.iter().copied().fold(f64::MIN, f64::max);
    let worst = rets.iter().copied().fold(f64::MAX, f64::min);
    assert!(close(f(&m["best_month"]), best));
    assert!(close(f(&m["worst_month"]), worst));
    let active = rets.iter().filter(|&&x| x != 0.0).count() as f64;
    let won = rets.iter().filter(|&&x| x > 0.0).count() as f64;
    assert!(close(f(&m["winning_months"]), won / active));
    let exposure = f(&m["exposure"]);
    assert!(
        (0.0..=1.0).contains(&exposure) && exposure > 0.5,
        "{exposure}"
    );
    assert!(f(&m["turnover"]) > 0.0);
    assert!(m["longest_drawdown_days"].as_i64().unwrap() > 0);
    // Against each benchmark (^GSPC's prices end in 2015: in the crypto
    // window it is left out).
    let names: Vec<String> = b["benchmarks"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(names.len(), if p == 252.0 { 3 } else { 2 }, "{names:?}");
    for name in &names {
        let name = name.as_str();
        let bench: Vec<f64> = b["benchmarks"][name]["equity"]
            .as_array()
            .unwrap()
            .iter()
            .map(f)
            .collect();
        let x = daily(&bench);
        let (mb, _) = mean_sd(&x);
        let n1 = (r.len() - 1) as f64;
        let cov = r
            .iter()
            .zip(&x)
            .map(|(a, c)| (a - mr) * (c - mb))
            .sum::<f64>()
            / n1;
        let var_b = x.iter().map(|c| (c - mb).powi(2)).sum::<f64>() / n1;
        let beta = cov / var_b;
        let rel = &m["relative"][name];
        assert!(close(f(&rel["beta"]), beta), "{name} beta");
        assert!(
            close(f(&rel["alpha"]), (mr - beta * mb) * p),
            "{name} alpha"
        );
        let active: Vec<f64> = r.iter().zip(&x).map(|(a, c)| a - c).collect();
        let (ma, sa) = mean_sd(&active);
        assert!(close(f(&rel["tracking_error"]), sa * p.sqrt()), "{name} te");
        assert!(
            close(f(&rel["information_ratio"]), ma / sa * p.sqrt()),
            "{name} ir"
        );
    }
}

#[tokio::test]
async fn prices_changed_after_a_date_change_no_decision_made_before_it() {
    let s = Server::app().await;
    let body = json!({
        "tickers": UNIVERSE, "top_n": 2, "rebalance": "daily",
        "start_date": "2015-01-01", "end_date": "2017-12-31"
    });
    let before = ok(&s, body.clone()).await;
    // Rewrite ^DJI after the cut: half the price, through the real ingest
    // (^DJI's real history runs to 2023; ^GSPC's ends in 2015).
    let cut = chrono::NaiveDate::from_ymd_opt(2016, 6, 30).unwrap();
    let (dates, closes) = prices(&s, "^DJI").await;
    let mut csv = String::from("date,close\n");
    for (d, c) in dates.iter().zip(&closes) {
        if *d > cut {
            csv.push_str(&format!("{d},{}\n", c * 0.5));
        }
    }
    let file = s.db.with_extension("dji.csv");
    std::fs::write(&file, csv).unwrap();
    common::cli_ok(
        &s.db,
        &["ingest", "csv", "--ticker", "^DJI", file.to_str().unwrap()],
        "",
    );
    let after = ok(&s, body).await;
    assert_eq!(
        after["metadata"]["signals_cached"], 5,
        "the ingest invalidated ^DJI's cached signals only"
    );
    let upto = |b: &Value, key: &str| {
        b[key]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["date"].as_str().unwrap() <= "2016-06-30")
            .cloned()
            .collect::<Vec<_>>()
    };
    let (t1, t2) = (upto(&before, "trades"), upto(&after, "trades"));
    assert!(t1.len() > 10);
    assert_eq!(t1, t2, "every fill up to the cut is identical");
    assert_eq!(upto(&before, "equity_curve"), upto(&after, "equity_curve"));
    assert_ne!(
        before["equity_curve"], after["equity_curve"],
        "the change shows after the cut"
    );
}

#[tokio::test]
async fn invalid_requests_get_400_naming_the_field() {
    let s = Server::app().await;
    let small = json!(["^GSPC", "^IXIC", "^DJI"]);
    for (body, needles) in [
        (
            json!({"strategy": "nope"}),
            vec!["strategy", "nope", "topn"],
        ),
        (
            json!({"tickers": ["NOPE-XYZ"]}),
            vec!["tickers", "NOPE-XYZ"],
        ),
        (json!({"tickers": ["FISV"]}), vec!["tickers", "FISV"]),
        (json!({"tickers": []}), vec!["tickers"]),
        (json!({"category": "Bonds"}), vec!["category", "Bonds"]),
        (json!({"start_date": "2020-02-30"}), vec!["start_date"]),
        (
            json!({"start_date": "2021-01-01", "end_date": "2020-01-01"}),
            vec!["start_date", "end_date"],
        ),
        (
            json!({"tickers": small, "start_date": "1870-01-01", "end_date": "1880-01-01"}),
            vec!["start_date", "end_date"],
        ),
        (json!({"initial_capital": 0}), vec!["initial_capital"]),
        (json!({"initial_capital": -1000}), vec!["initial_capital"]),
        (json!({"tickers": small, "top_n": 4}), vec!["top_n", "3"]),
        (json!({"top_n": 0}), vec!["top_n"]),
        (json!({"rebalance": "hourly"}), vec!["rebalance", "hourly"]),
        (
            json!({"return_period": 400}),
            vec!["return_period", "7", "365"],
        ),
        (json!({"num_segments": 5}), vec!["num_segments"]),
        (json!({"decay_factor": 1.5}), vec!["decay_factor"]),
        (json!({"metric": "alpha"}), vec!["metric"]),
        (
            json!({"strategy": "zscore", "tickers": small, "top_n": 1, "zscore_entry": 1, "zscore_exit": 1.5}),
            vec!["zscore_exit"],
        ),
        (json!({"zscore_entry": -1}), vec!["zscore_entry"]),
        (json!({"zscore_lookback": 3}), vec!["zscore_lookback"]),
        (
            json!({"strategy": "longshort", "tickers": small, "top_n": 2}),
            vec!["top_n", "2"],
        ),
        (json!({"top-n": 3}), vec!["top-n"]),
        (json!({"top_n": "ten"}), vec!["top_n"]),
    ] {
        let a = post(&s, body.clone()).await;
        assert_error(&(a.status, a.body), 400, &needles);
    }
    // Malformed JSON is a 400 too, never axum's 422.
    let r = s
        .client()
        .post(s.url("/api/backtest"))
        .bearer_auth(test_key())
        .header("content-type", "application/json")
        .body("{\"top_n\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    // No key: 401 before anything is computed.
    let r = s
        .client()
        .post(s.url("/api/backtest"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn the_other_built_in_strategies_trade_as_designed() {
    let s = Server::app().await;
    let crypto = json!(["BTC-USD", "ETH-USD", "LTC-USD", "XRP-USD", "ADA-USD", "BNB-USD"]);
    let b = ok(
        &s,
        json!({"strategy": "longshort", "tickers": crypto, "top_n": 2, "rebalance": "weekly"}),
    )
    .await;
    // Shorts: some ticker is sold before it was ever bought.
    let mut bought = std::collections::HashSet::new();
    let mut shorted = false;
    for t in b["trades"].as_array().unwrap() {
        let ticker = t["ticker"].as_str().unwrap();
        match t["side"].as_str().unwrap() {
            "BUY" => {
                bought.insert(ticker);
            }
            _ if !bought.contains(ticker) => shorted = true,
            _ => {}
        }
    }
    assert!(shorted, "longshort sells short");
    assert_eq!(b["metadata"]["cost_bps"]["Crypto"], 15.0);

    let z = ok(
        &s,
        json!({"strategy": "zscore", "tickers": UNIVERSE, "top_n": 3, "rebalance": "daily",
               "zscore_entry": 1.0, "zscore_lookback": 60,
               "start_date": "2008-01-01", "end_date": "2012-12-31"}),
    )
    .await;
    assert_eq!(z["metadata"]["strategy"], "zscore");
    assert!(z["metrics"]["total_trades"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn a_misbehaving_strategy_gets_clean_errors_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        component("misbehave_strategy"),
        dir.path().join("misbehave_strategy.wasm"),
    )
    .unwrap();
    let s = Server::app_with(
        common::fresh_db(),
        &[
            ("FORECAST_PLUGIN_DIR", dir.path().to_str().unwrap()),
            // Long enough that the memory bomb reaches its 64 MiB cap
            // first on a loaded machine (it once took longer than 300 ms).
            ("FORECAST_PLUGIN_TIMEOUT_MS", "2000"),
            ("FORECAST_PLUGIN_MEMORY_MB", "64"),
        ],
    )
    .await;
    let ten = [
        "^GSPC", "^IXIC", "^DJI", "^NDX", "^RUT", "^FTSE", "^GDAXI", "^FCHI", "^N225", "^HSI",
    ];
    let run = |top_n: u32| {
        json!({"strategy": "misbehave", "tickers": ten, "top_n": top_n,
               "start_date": "2015-01-01", "end_date": "2015-12-31"})
    };
    let label = "strategy/misbehave@";
    let a = post(&s, run(7)).await;
    assert_error(&(a.status, a.body), 504, &[label]);
    let a = post(&s, run(8)).await;
    assert_error(&(a.status, a.body), 500, &[label, "memory"]);
    let a = post(&s, run(9)).await;
    assert_error(&(a.status, a.body), 500, &[label]);
    let a = post(&s, run(6)).await;
    assert_error(
        &(a.status, a.body),
        500,
        &[label, "contract", "gross exposure"],
    );
    let a = post(&s, run(5)).await;
    assert_error(&(a.status, a.body), 500, &[label, "misbehave refuses"]);
    // Still serving, the same plugin included.
    let b = ok(&s, run(2)).await;
    assert!(b["metrics"]["total_trades"].as_u64().unwrap() > 0);
    assert_eq!(s.get("/api/health").await.0, 200);
}

#[tokio::test]
async fn a_run_past_its_time_limit_is_a_504() {
    let s = Server::app_with(
        common::fresh_db(),
        &[("FORECAST_BACKTEST_TIMEOUT_MS", "20")],
    )
    .await;
    let a = post(&s, json!({"rebalance": "daily"})).await;
    assert_error(&(a.status, a.body), 504, &["time limit", "reduce"]);
    assert_eq!(s.get("/api/health").await.0, 200);
}

#[tokio::test]
async fn the_sdk_example_runs_from_a_plugin_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(component("dip_buyer"), dir.path().join("dip_buyer.wasm")).unwrap();
    let s = Server::app_with(
        common::fresh_db(),
        &[("FORECAST_PLUGIN_DIR", dir.path().to_str().unwrap())],
    )
    .await;
    let (status, list) = s.get("/api/strategies").await;
    assert_eq!(status, 200);
    let names: Vec<&str> = list["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["dip-buyer", "longshort", "portfolio", "topn", "zscore"]
    );
    let b = ok(
        &s,
        json!({"strategy": "dip-buyer", "tickers": UNIVERSE, "top_n": 3,
               "start_date": "2007-01-01", "end_date": "2012-12-31"}),
    )
    .await;
    assert_eq!(b["metadata"]["strategy"], "dip-buyer");
    assert!(b["metrics"]["total_trades"].as_u64().unwrap() > 0);
}

#[test]
fn a_plugin_folder_with_a_broken_file_stops_the_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.wasm"), b"not wasm").unwrap();
    let out = std::process::Command::new(common::BIN)
        .arg("serve")
        .env("FORECAST_ADDR", "127.0.0.1:0")
        .env("DATABASE_URL", common::sqlite_url(&common::fresh_db()))
        .env("FORECAST_GRADING", "off")
        .env("FORECAST_PLUGIN_DIR", dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken.wasm"), "{err}");
}

/// Benchmarks by ticker: each held from its last close on or before the
/// first day (the stored prices say what its curve must be), ^GSPC by
/// default, none with `[]`, one that starts too late named as left out,
/// and every bad list refused before any work.
#[tokio::test]
async fn benchmarks_chosen_by_ticker_are_held_from_the_first_day() {
    let s = Server::app().await;
    let base = json!({"tickers": ["^IXIC", "^DJI", "^NDX"], "top_n": 1,
                      "start_date": "2012-01-01", "end_date": "2014-12-31"});
    let with = |extra: Value| {
        let mut b = base.clone();
        b.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        b
    };
    let r: forecast_api::backtest::BacktestResponse =
        serde_json::from_value(ok(&s, with(json!({"benchmarks": ["^GSPC", "^FTSE"]}))).await)
            .unwrap();
    for ticker in ["^GSPC", "^FTSE"] {
        let (_, a) = s
            .get(&format!("/api/analysis/{}", ticker.replace('^', "%5E")))
            .await;
        let a: forecast_api::analysis::AnalysisResponse = serde_json::from_value(a).unwrap();
        let close_on = |d: chrono::NaiveDate| {
            let i = a.time_series.dates.partition_point(|&x| x <= d);
            a.time_series.prices[i - 1]
        };
        let first = close_on(r.equity_curve[0].date);
        let bench = &r.benchmarks[ticker];
        assert_eq!(bench.dates.len(), r.equity_curve.len());
        for (p, (&d, &e)) in r
            .equity_curve
            .iter()
            .zip(bench.dates.iter().zip(&bench.equity))
        {
            assert_eq!(p.date, d);
            assert!(
                close(e, 100_000.0 * close_on(d) / first),
                "{ticker} {d}: {e}"
            );
        }
        let rel = &r.metrics.relative[ticker];
        assert!(
            rel.beta.is_some() && rel.tracking_error.is_some(),
            "{ticker}: {rel:?}"
        );
    }
    assert!(r.metadata.benchmarks_left_out.is_empty());
    assert_eq!(r.benchmarks.len(), 4);

    let none: forecast_api::backtest::BacktestResponse =
        serde_json::from_value(ok(&s, with(json!({"benchmarks": []}))).await).unwrap();
    let names: Vec<&String> = none.benchmarks.keys().collect();
    assert_eq!(names, ["equal_weight_buy_hold", "equal_weight_rebalanced"]);
    assert_eq!(
        none.equity_curve, r.equity_curve,
        "the run itself is the same"
    );

    // A benchmark whose prices start after the window's first day.
    let late = ok(
        &s,
        json!({"tickers": ["^GSPC", "^DJI"], "top_n": 1, "start_date": "1995-01-01",
                             "end_date": "1999-12-31", "benchmarks": ["BTC-USD", "^DJI"]}),
    )
    .await;
    assert_eq!(late["metadata"]["benchmarks_left_out"], json!(["BTC-USD"]));
    assert!(late["benchmarks"].get("BTC-USD").is_none());
    assert!(late["benchmarks"]["^DJI"].is_object());
    // And one whose prices ended before the window (^GSPC's end in 2015):
    // left out by default too, not drawn as a flat line.
    let ended = ok(
        &s,
        json!({"tickers": ["BTC-USD", "ETH-USD"], "top_n": 1,
               "start_date": "2021-01-01", "end_date": "2022-12-31"}),
    )
    .await;
    assert_eq!(ended["metadata"]["benchmarks_left_out"], json!(["^GSPC"]));

    for (benchmarks, needles) in [
        (
            json!(["NOPE"]),
            &["benchmarks: unknown or inactive ticker 'NOPE'"][..],
        ),
        (
            json!(["^GSPC", "^GSPC"]),
            &["benchmarks names '^GSPC' twice"][..],
        ),
        (
            json!(["^GSPC", "^DJI", "^IXIC", "^NDX"]),
            &["benchmarks may name at most 3"][..],
        ),
        (
            json!([""]),
            &["benchmarks must not hold an empty ticker"][..],
        ),
    ] {
        let a = post(&s, with(json!({ "benchmarks": benchmarks }))).await;
        assert_error(&(a.status, a.body), 400, needles);
    }
}
