//! `peer-orders OUT.json`: `topn` (top 3, costs on) over ten real assets of
//! data/prices/ plus one with another calendar (EUR/USD), 2012-12-28 to
//! 2022-12-28, monthly, weekly and daily; for each run, the calendar, our
//! equity and cash curves, every fill (date, asset, signed quantity, price,
//! cost), each asset's cost rate, how long our side took, and our metrics
//! with the benchmarks' curves (checked against quantstats by
//! `metrics.py`). No dependency beyond the SDK: the JSON is written by
//! hand.

use std::fmt::Write as _;
use std::time::Instant;

use forecast_sdk::harness::Harness;
use forecast_sdk::{cost_bps, format_date, Rebalance, RunParams, Side};
use topn::TopN;

const ASSETS: &[(&str, &str, &str)] = &[
    ("AMD", "US Stocks", "AMD.csv"),
    ("BAC", "US Stocks", "BAC.csv"),
    ("CVX", "US Stocks", "CVX.csv"),
    ("GE", "US Stocks", "GE.csv"),
    ("JNJ", "US Stocks", "JNJ.csv"),
    ("JPM", "US Stocks", "JPM.csv"),
    ("KO", "US Stocks", "KO.csv"),
    ("PFE", "US Stocks", "PFE.csv"),
    ("WMT", "US Stocks", "WMT.csv"),
    ("XOM", "US Stocks", "XOM.csv"),
    ("EURUSD=X", "Forex", "EURUSD_X.csv"),
];

fn list(out: &mut String, xs: impl IntoIterator<Item = String>) {
    out.push('[');
    for (i, x) in xs.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&x);
    }
    out.push(']');
}

/// Shortest round-trip form: Python's `float()` reads back the same bits.
fn num(x: f64) -> String {
    format!("{x:?}")
}

/// A number or `null`.
fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "null".to_string(), num)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out_path = args
        .next()
        .expect("usage: peer-orders OUT.json [PRICES_DIR]");
    let dir = args.next().unwrap_or_else(|| "data/prices".to_string());
    let mut harness = Harness::new();
    for (ticker, category, file) in ASSETS {
        harness = harness
            .asset_csv(ticker, category, format!("{dir}/{file}"))
            .expect("a readable CSV");
    }
    let harness = harness
        .start_date("2012-12-28")
        .unwrap()
        .end_date("2022-12-28")
        .unwrap();

    let mut json = String::from("{\"runs\":[");
    for (n, rebalance) in [Rebalance::Monthly, Rebalance::Weekly, Rebalance::Daily]
        .into_iter()
        .enumerate()
    {
        let params = RunParams {
            top_n: 3,
            rebalance,
            ..RunParams::default()
        };
        let started = Instant::now();
        let report = harness.run::<TopN>(&params).expect("the run");
        let seconds = started.elapsed().as_secs_f64();
        let universe = harness.universe(&report);
        if n > 0 {
            json.push(',');
        }
        let _ = write!(
            json,
            "{{\"rebalance\":\"{}\",\"seconds\":{},\"initial_capital\":{},\"tickers\":",
            rebalance.as_str(),
            num(seconds),
            num(params.initial_capital)
        );
        list(
            &mut json,
            universe.iter().map(|a| format!("\"{}\"", a.ticker)),
        );
        json.push_str(",\"files\":");
        list(
            &mut json,
            universe.iter().map(|a| {
                let file = ASSETS.iter().find(|x| x.0 == a.ticker).expect("known").2;
                format!("\"{file}\"")
            }),
        );
        json.push_str(",\"fee_rates\":");
        list(
            &mut json,
            universe
                .iter()
                .map(|a| num(cost_bps(&a.category) / 10_000.0)),
        );
        json.push_str(",\"dates\":");
        list(
            &mut json,
            report
                .dates
                .iter()
                .map(|&d| format!("\"{}\"", format_date(d))),
        );
        json.push_str(",\"equity\":");
        list(&mut json, report.equity.iter().map(|&x| num(x)));
        json.push_str(",\"cash\":");
        list(&mut json, report.cash.iter().map(|&x| num(x)));
        json.push_str(",\"trades\":");
        list(
            &mut json,
            report.trades.iter().map(|t| {
                let qty = match t.side {
                    Side::Buy => t.qty,
                    Side::Sell => -t.qty,
                };
                format!(
                    "{{\"date\":\"{}\",\"asset\":{},\"qty\":{},\"price\":{},\"cost\":{}}}",
                    format_date(t.date),
                    t.asset,
                    num(qty),
                    num(t.price),
                    num(t.cost)
                )
            }),
        );
        // Our metrics and what they are measured against.
        let (m, r) = (&report.metrics, &report.risk);
        let _ = write!(
            json,
            ",\"periods_per_year\":{},\"metrics\":{{\"cagr\":{},\"max_drawdown\":{},\
             \"calmar_ratio\":{},\"ulcer_index\":{},\"longest_drawdown_days\":{},\
             \"var_95\":{},\"cvar_95\":{},\"exposure\":{},\"best_month\":{},\
             \"worst_month\":{},\"winning_months\":{}}}",
            report.periods_per_year,
            opt(m.cagr),
            opt(m.max_drawdown),
            opt(r.calmar_ratio),
            opt(r.ulcer_index),
            r.longest_drawdown_days,
            opt(r.var_95),
            opt(r.cvar_95),
            opt(r.exposure),
            opt(r.best_month),
            opt(r.worst_month),
            opt(r.winning_months),
        );
        json.push_str(",\"benchmarks\":{");
        for (k, ((name, curve), (_, rel))) in
            report.benchmarks.iter().zip(&report.relative).enumerate()
        {
            if k > 0 {
                json.push(',');
            }
            let _ = write!(json, "\"{name}\":{{\"equity\":");
            list(&mut json, curve.iter().map(|&x| num(x)));
            let _ = write!(
                json,
                ",\"beta\":{},\"alpha\":{},\"tracking_error\":{},\"information_ratio\":{}}}",
                opt(rel.beta),
                opt(rel.alpha),
                opt(rel.tracking_error),
                opt(rel.information_ratio)
            );
        }
        json.push('}');
        json.push('}');
        eprintln!(
            "ours {}: {} rows, {} fills, {:.3} s (engine signals + strategy + accounting)",
            rebalance.as_str(),
            report.dates.len(),
            report.trades.len(),
            seconds
        );
    }
    json.push_str("]}\n");
    std::fs::write(&out_path, json).expect("write the orders");
}
