//! `POST /api/backtest` through the real router in process: the spec's
//! response, the accounting identity and costs recomputed from the trades
//! and the stored prices, metrics recomputed from the equity curve, no
//! look-ahead across an ingest, every 400, the misbehaving strategy, the
//! run's time limit, the cost of 5, and the SDK's example plugin; and,
//! with the real binary, a start refused for a broken plugin file.

use crate::common;

use std::collections::HashMap;

use axum::http::Method;
use chrono::NaiveDate;
use common::Server;
use forecast_api::assets::DataSources;
use forecast_api::backtest::BacktestResponse;
use forecast_testkit::{Api, Auth, Refusal};
use serde_json::{json, Value};

const UNIVERSE: [&str; 6] = ["^GSPC", "^IXIC", "^DJI", "^NDX", "^RUT", "^FTSE"];

/// `POST /api/backtest` with `body` (JSON, so a test can send what the
/// typed request cannot hold) and the test key: the answer, or the
/// refusal.
async fn post(s: &Server, body: &Value) -> Result<BacktestResponse, Refusal> {
    s.api().post("/backtest", body).await
}

/// The answer to `body`; panics on a refusal.
async fn ok(s: &Server, body: Value) -> BacktestResponse {
    post(s, &body)
        .await
        .unwrap_or_else(|r| panic!("{body} → {r}"))
}

/// The refusal of `body`; panics on an answer.
async fn refused(s: &Server, body: &Value) -> Refusal {
    match post(s, body).await {
        Ok(_) => panic!("{body} was answered, not refused"),
        Err(r) => r,
    }
}

/// What `POST /api/backtest` with `body` leaves of the test key's quota
/// (`x-ratelimit-remaining`), and its answer (asserted a 200).
async fn remaining_after(api: &Api, body: &Value) -> (u64, BacktestResponse) {
    let response = api.send(Method::POST, "/backtest", Some(body)).await;
    assert_eq!(response.status(), 200);
    let remaining = response
        .headers()
        .get("x-ratelimit-remaining")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("x-ratelimit-remaining");
    let answer = Api::typed(response)
        .await
        .unwrap_or_else(|r| panic!("{body} → {r}"));
    (remaining, answer)
}

fn day(d: &str) -> NaiveDate {
    d.parse().unwrap()
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
    let api = s.api();
    let body = json!({
        "tickers": UNIVERSE, "top_n": 3,
        "start_date": "2012-01-01", "end_date": "2016-12-31"
    });
    let (first_remaining, b) = remaining_after(&api, &body).await;
    let (second_remaining, _) = remaining_after(&api, &body).await;
    assert_eq!(
        first_remaining - second_remaining,
        5,
        "a backtest costs 5 requests"
    );
    let curve = &b.equity_curve;
    assert!(curve.len() > 1000, "five years of rows");
    let first_date = curve[0].date;
    assert!(
        (day("2012-01-02")..day("2012-01-06")).contains(&first_date),
        "{first_date}"
    );
    assert_eq!(curve[0].equity, 100_000.0);
    assert!(curve.last().unwrap().date <= day("2016-12-31"));
    let trades = &b.trades;
    assert!(!trades.is_empty());
    for t in trades {
        assert!(UNIVERSE.contains(&t.ticker.as_str()));
        assert!(["BUY", "SELL"].contains(&t.side.as_str()));
        assert!(t.qty > 0.0 && t.price > 0.0);
    }
    // The metrics of the spec (final_equity, years, total_costs,
    // cost_drag_pct and total_trades are numbers by their types); the
    // ratios are numbers over five years of a run.
    let m = &b.metrics;
    for (k, v) in [
        ("total_return", m.total_return),
        ("cagr", m.cagr),
        ("sharpe_ratio", m.sharpe_ratio),
        ("sortino_ratio", m.sortino_ratio),
        ("max_drawdown", m.max_drawdown),
    ] {
        assert!(v.is_some(), "metrics.{k}");
    }
    assert_eq!(m.total_trades as usize, trades.len());
    let benchmarks = &b.benchmarks;
    assert_eq!(benchmarks.len(), 3, "the two baskets and ^GSPC by default");
    for name in ["equal_weight_buy_hold", "equal_weight_rebalanced", "^GSPC"] {
        let bm = &benchmarks[name];
        assert_eq!(bm.dates.len(), curve.len(), "{name}");
        assert_eq!(bm.dates[0], curve[0].date);
        assert_eq!(bm.equity[0], 100_000.0);
    }
    let m = &b.metadata;
    assert_eq!(m.assets_count, 6);
    assert!(m.data_points >= curve.len() as u64);
    // Monthly: one decision per month that has a following row.
    assert_eq!(m.rebalance_dates, 60);
    // A timestamp (its type parses the wire's RFC 3339 string, 'T' and
    // all), of this run.
    assert!(m.calculated_at.to_rfc3339().contains('T'));
    assert_eq!(m.strategy, "topn");
    assert_eq!(m.periods_per_year, 252);
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
    let m = &b.metadata;
    assert_eq!(m.assets_count, 2, "{m:?}");
    assert_eq!(
        m.data_sources,
        DataSources {
            real: 2,
            ingested: 0,
            synthetic: 0
        }
    );
    assert_eq!(m.unusable_assets_count, 3);
    let reason = |t: &str| {
        let u = m.unusable_assets.iter().find(|u| u.ticker == t).unwrap();
        (u.last_price_date, u.reason.clone())
    };
    assert_eq!(
        reason("^GSPC"),
        (
            Some(day("2015-12-31")),
            "its last price (2015-12-31) is before the window starts (2017-01-01)".into()
        )
    );
    assert!(reason("AAPL").1.contains("before the window starts"));
    // KVUE's history is short and recent.
    assert!(reason("KVUE")
        .1
        .contains("is after the window ends (2018-12-31)"));
    assert!(b
        .trades
        .iter()
        .all(|t| ["^IXIC", "CL=F"].contains(&t.ticker.as_str())));

    // Over its own (recent) dates, the short history is too short.
    let b = ok(&s, json!({"tickers": ["KVUE", "BTC-USD"], "top_n": 1})).await;
    let m = &b.metadata;
    assert_eq!(m.data_sources.synthetic, 1, "{m:?}");
    let short = &m.unusable_assets[0].reason;
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
    let close_at = |ticker: &str, date: NaiveDate| {
        let (dates, cs) = &closes[ticker];
        let k = dates.partition_point(|d| *d <= date);
        cs[k - 1]
    };
    let bps = *b
        .metadata
        .cost_bps
        .get("Indices")
        .expect("the indices' cost");
    assert_eq!(bps, 5.0, "DESIGN §6: indices cost 5 bps per side");

    let trades = &b.trades;
    let mut qty: HashMap<String, f64> = HashMap::new();
    let mut cash = 50_000.0;
    let mut costs = 0.0;
    let mut next = 0;
    let (mut bases, mut realised) = (HashMap::<String, f64>::new(), 0.0);
    let basis = |t: &str, bases: &HashMap<String, f64>| bases.get(t).copied().unwrap_or(0.0);
    for point in &b.equity_curve {
        let date = point.date;
        while next < trades.len() && trades[next].date == point.date {
            let t = &trades[next];
            let ticker = t.ticker.as_str();
            assert!(close(t.price, close_at(ticker, date)), "fills at the close");
            let signed = t.qty * if t.side == "BUY" { 1.0 } else { -1.0 };
            let cost = t.qty * t.price * bps / 10_000.0;
            assert!(close(t.cost, cost), "each fill carries its cost");
            // topn is long only: a buy grows the position at the average
            // price, a sell realises against it.
            let (held, basis) = (
                qty.get(ticker).copied().unwrap_or(0.0),
                basis(ticker, &bases),
            );
            if signed > 0.0 {
                assert!(t.realised_pnl.is_none(), "a buy realises nothing");
                let avg = (held * basis + signed * t.price) / (held + signed);
                bases.insert(ticker.to_string(), avg);
            } else {
                let pnl = -signed * (t.price - basis);
                let got = t.realised_pnl.expect("a sell realises");
                assert!((got - pnl).abs() <= 1e-6 * pnl.abs().max(1.0));
                realised += pnl;
            }
            *qty.entry(ticker.to_string()).or_default() += signed;
            cash -= signed * t.price + cost;
            costs += cost;
            next += 1;
        }
        let positions: f64 = qty.iter().map(|(t, q)| q * close_at(t, date)).sum();
        let equity = point.equity;
        assert!(
            (equity - (cash + positions)).abs() <= 1e-6 * equity,
            "{date}: equity {equity} vs cash + positions {}",
            cash + positions
        );
    }
    assert_eq!(next, trades.len(), "every trade lies on a curve date");
    assert!(costs > 0.0);
    assert!(realised != 0.0, "some positions were closed");
    let last = b.equity_curve.last().unwrap();
    let end = last.date;
    let open: f64 = qty
        .iter()
        .map(|(t, q)| q * (close_at(t, end) - basis(t, &bases)))
        .sum();
    assert!(
        (realised - costs + open - (last.equity - 50_000.0)).abs() <= 1e-6 * 50_000.0,
        "realised - costs + open P&L is the equity's change"
    );
    assert!(close(b.metrics.total_costs, costs));
    assert!(close(b.metrics.cost_drag_pct, costs / 50_000.0 * 100.0));
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
        let curve: Vec<f64> = b.equity_curve.iter().map(|p| p.equity).collect();
        assert_eq!(f64::from(b.metadata.periods_per_year), p);
        let m = &b.metrics;
        let got = [
            m.total_return,
            m.cagr,
            m.sharpe_ratio,
            m.sortino_ratio,
            m.max_drawdown,
            Some(m.years),
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
        assert_eq!(m.final_equity, *curve.last().unwrap());
        risk_equals_an_independent_computation(&b, &curve, p);
    }
}

/// A metric the run has (null on the wire would fail the test).
fn n(v: Option<f64>) -> f64 {
    v.expect("a number, not null")
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
fn risk_equals_an_independent_computation(b: &BacktestResponse, curve: &[f64], p: f64) {
    let m = &b.metrics;
    let r = daily(curve);
    let (mr, sr) = mean_sd(&r);
    let var = mr + sr * -1.644_853_626_951_472_2;
    assert!(close(n(m.var_95), var));
    // The normal density at that quantile: 0.1031356…
    let pdf =
        (-0.5f64 * 1.644_853_626_951_472_2f64.powi(2)).exp() / (2.0 * std::f64::consts::PI).sqrt();
    assert!(close(n(m.cvar_95), mr - sr * pdf / 0.05));
    assert!(close(
        n(m.calmar_ratio),
        n(m.cagr) / n(m.max_drawdown).abs()
    ));
    let mut peak = curve[0];
    let mut squares = 0.0;
    for &e in &curve[1..] {
        peak = peak.max(e);
        squares += (e / peak - 1.0).powi(2);
    }
    assert!(close(
        n(m.ulcer_index),
        (squares / (r.len() - 1) as f64).sqrt()
    ));
    // Calendar months, compounded, from the curve's dates.
    let dates: Vec<String> = b
        .equity_curve
        .iter()
        .map(|p| p.date.format("%Y-%m").to_string())
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
    assert!(close(n(m.best_month), best));
    assert!(close(n(m.worst_month), worst));
    let active = rets.iter().filter(|&&x| x != 0.0).count() as f64;
    let won = rets.iter().filter(|&&x| x > 0.0).count() as f64;
    assert!(close(n(m.winning_months), won / active));
    let exposure = n(m.exposure);
    assert!(
        (0.0..=1.0).contains(&exposure) && exposure > 0.5,
        "{exposure}"
    );
    assert!(n(m.turnover) > 0.0);
    assert!(m.longest_drawdown_days > 0);
    // Against each benchmark (^GSPC's prices end in 2015: in the crypto
    // window it is left out).
    let names: Vec<String> = b.benchmarks.keys().cloned().collect();
    assert_eq!(names.len(), if p == 252.0 { 3 } else { 2 }, "{names:?}");
    for name in &names {
        let name = name.as_str();
        let bench = &b.benchmarks[name].equity;
        let x = daily(bench);
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
        let rel = &m.relative[name];
        assert!(close(n(rel.beta), beta), "{name} beta");
        assert!(close(n(rel.alpha), (mr - beta * mb) * p), "{name} alpha");
        let active: Vec<f64> = r.iter().zip(&x).map(|(a, c)| a - c).collect();
        let (ma, sa) = mean_sd(&active);
        assert!(close(n(rel.tracking_error), sa * p.sqrt()), "{name} te");
        assert!(
            close(n(rel.information_ratio), ma / sa * p.sqrt()),
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
        after.metadata.signals_cached, 5,
        "the ingest invalidated ^DJI's cached signals only"
    );
    let trades_upto = |b: &BacktestResponse| {
        let upto = b.trades.iter().filter(|x| x.date <= cut);
        upto.cloned().collect::<Vec<_>>()
    };
    let curve_upto = |b: &BacktestResponse| {
        let upto = b.equity_curve.iter().filter(|x| x.date <= cut);
        upto.cloned().collect::<Vec<_>>()
    };
    let (t1, t2) = (trades_upto(&before), trades_upto(&after));
    assert!(t1.len() > 10);
    assert_eq!(t1, t2, "every fill up to the cut is identical");
    assert_eq!(curve_upto(&before), curve_upto(&after));
    assert_ne!(
        before.equity_curve, after.equity_curve,
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
        refused(&s, &body).await.assert(400, &needles);
    }
    // Malformed JSON is a 400 too, never axum's 422.
    let malformed = b"{\"top_n\": ".to_vec();
    let r = s
        .api()
        .send_bytes(Method::POST, "/backtest", "application/json", malformed)
        .await;
    assert_eq!(r.status(), 400);
    // No key: 401 before anything is computed.
    let r = s
        .api_as(Auth::Anonymous)
        .send(Method::POST, "/backtest", Some(&json!({})))
        .await;
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
    for t in &b.trades {
        let ticker = t.ticker.as_str();
        match t.side.as_str() {
            "BUY" => {
                bought.insert(ticker);
            }
            _ if !bought.contains(ticker) => shorted = true,
            _ => {}
        }
    }
    assert!(shorted, "longshort sells short");
    assert_eq!(b.metadata.cost_bps.get("Crypto"), Some(&15.0));

    let z = ok(
        &s,
        json!({"strategy": "zscore", "tickers": UNIVERSE, "top_n": 3, "rebalance": "daily",
               "zscore_entry": 1.0, "zscore_lookback": 60,
               "start_date": "2008-01-01", "end_date": "2012-12-31"}),
    )
    .await;
    assert_eq!(z.metadata.strategy, "zscore");
    assert!(z.metrics.total_trades > 0);
}

#[tokio::test]
async fn a_misbehaving_strategy_gets_clean_errors_and_the_server_keeps_serving() {
    let dir = common::plugin_dir_with("misbehave_strategy");
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
    refused(&s, &run(7)).await.assert(504, &[label]);
    refused(&s, &run(8)).await.assert(500, &[label, "memory"]);
    refused(&s, &run(9)).await.assert(500, &[label]);
    refused(&s, &run(6))
        .await
        .assert(500, &[label, "contract", "gross exposure"]);
    refused(&s, &run(5))
        .await
        .assert(500, &[label, "misbehave refuses"]);
    // Still serving, the same plugin included.
    let b = ok(&s, run(2)).await;
    assert!(b.metrics.total_trades > 0);
    assert_eq!(s.get("/api/health").await.0, 200);
}

#[tokio::test]
async fn a_run_past_its_time_limit_is_a_504() {
    let s = Server::app_with(
        common::fresh_db(),
        &[("FORECAST_BACKTEST_TIMEOUT_MS", "20")],
    )
    .await;
    refused(&s, &json!({"rebalance": "daily"}))
        .await
        .assert(504, &["time limit", "reduce"]);
    assert_eq!(s.get("/api/health").await.0, 200);
}

#[tokio::test]
async fn the_sdk_example_runs_from_a_plugin_folder() {
    let dir = common::plugin_dir_with("dip_buyer");
    let s = Server::app_with(
        common::fresh_db(),
        &[("FORECAST_PLUGIN_DIR", dir.path().to_str().unwrap())],
    )
    .await;
    let list = s.api().strategies().await.unwrap();
    let names: Vec<&str> = list.strategies.iter().map(|s| s.name.as_str()).collect();
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
    assert_eq!(b.metadata.strategy, "dip-buyer");
    assert!(b.metrics.total_trades > 0);
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
    let r = ok(&s, with(json!({"benchmarks": ["^GSPC", "^FTSE"]}))).await;
    for ticker in ["^GSPC", "^FTSE"] {
        let a = s.api().analysis(ticker, "").await.unwrap();
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

    let none = ok(&s, with(json!({"benchmarks": []}))).await;
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
    assert_eq!(late.metadata.benchmarks_left_out, ["BTC-USD"]);
    assert!(!late.benchmarks.contains_key("BTC-USD"));
    assert!(late.benchmarks.contains_key("^DJI"));
    // And one whose prices ended before the window (^GSPC's end in 2015):
    // left out by default too, not drawn as a flat line.
    let ended = ok(
        &s,
        json!({"tickers": ["BTC-USD", "ETH-USD"], "top_n": 1,
               "start_date": "2021-01-01", "end_date": "2022-12-31"}),
    )
    .await;
    assert_eq!(ended.metadata.benchmarks_left_out, ["^GSPC"]);

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
        refused(&s, &with(json!({ "benchmarks": benchmarks })))
            .await
            .assert(400, needles);
    }
}
