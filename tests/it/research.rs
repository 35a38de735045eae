//! `POST /api/backtest/sweep` and `POST /api/backtest/walk-forward` in
//! process (issue 29). A sweep's row is exactly the backtest of its
//! combination; combinations sharing engine parameters share one engine
//! pass; the price is 1 unit per combination, at least 5; the walk-forward
//! is recomputed here from the combinations' own backtests; every bound
//! answers 400 naming its field; the time limit answers 504.

use crate::common;

use common::{assert_error, f, Server};
use serde_json::{json, Value};

const UNIVERSE: [&str; 6] = ["^GSPC", "^IXIC", "^DJI", "^NDX", "^RUT", "^FTSE"];

async fn post(s: &Server, path: &str, body: &Value) -> (u16, Value, Option<u64>) {
    common::post_json_text(s, path, &body.to_string()).await
}

fn with(base: &Value, extra: &Value) -> Value {
    let mut body = base.clone();
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

#[tokio::test]
async fn each_row_is_the_backtest_of_its_combination() {
    let s = Server::app().await;
    let base = json!({
        "tickers": UNIVERSE,
        "start_date": "2010-01-01", "end_date": "2016-12-31"
    });
    // `top_n` first, though it sorts after `rebalance`.
    let body = format!(
        r#"{{"sweep": {{"top_n": [1, 3], "rebalance": ["weekly", "monthly"]}}, {}"#,
        &base.to_string()[1..]
    );
    let (status, sweep, before) = common::post_json_text(&s, "/api/backtest/sweep", &body).await;
    assert_eq!(status, 200, "{sweep}");
    let (_, _, after) = common::post_json_text(&s, "/api/backtest/sweep", &body).await;
    assert_eq!(
        before.unwrap() - after.unwrap(),
        5,
        "4 combinations cost the least, 5"
    );
    // The axes in the order written, rows row-major.
    assert_eq!(sweep["axes"][0]["name"], "top_n");
    assert_eq!(sweep["axes"][1]["name"], "rebalance");
    let rows = sweep["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let cells: Vec<Value> = rows.iter().map(|r| r["cell"].clone()).collect();
    assert_eq!(
        cells,
        vec![json!([0, 0]), json!([0, 1]), json!([1, 0]), json!([1, 1])]
    );
    assert_eq!(sweep["metadata"]["signal_passes"], 1);
    assert_eq!(sweep["metadata"]["combinations"], 4);
    assert_eq!(sweep["rank_by"], "sharpe_ratio");
    for row in rows {
        // A sweep's rows are measured against the universe's two baskets
        // only: the single run without benchmarks by ticker is the same.
        let single = with(&with(&base, &row["params"]), &json!({"benchmarks": []}));
        let (status, run, _) = post(&s, "/api/backtest", &single).await;
        assert_eq!(status, 200, "{run}");
        assert_eq!(row["metrics"], run["metrics"], "{}", row["params"]);
        assert_eq!(row["score"], run["metrics"]["sharpe_ratio"]);
    }
    // Ranks order the scores; `best` is rank 1.
    let mut ranked: Vec<(u64, f64)> = rows
        .iter()
        .map(|r| (r["rank"].as_u64().unwrap(), f(&r["score"])))
        .collect();
    ranked.sort_by_key(|r| r.0);
    assert_eq!(
        ranked.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 2, 3, 4]
    );
    assert!(ranked.windows(2).all(|w| w[0].1 >= w[1].1), "{ranked:?}");
    let best = sweep["best"].as_u64().unwrap() as usize;
    assert_eq!(rows[best]["rank"], 1);
}

#[tokio::test]
async fn engine_parameters_make_passes_and_the_price_follows_the_combinations() {
    let s = Server::app().await;
    let body = json!({
        "tickers": UNIVERSE, "start_date": "2012-01-01", "end_date": "2016-12-31",
        "sweep": {"return_period": [30, 60, 90], "top_n": [1, 2]},
        "rank_by": "cagr"
    });
    let (status, sweep, before) = post(&s, "/api/backtest/sweep", &body).await;
    assert_eq!(status, 200, "{sweep}");
    assert_eq!(sweep["metadata"]["signal_passes"], 3);
    assert_eq!(sweep["rank_by"], "cagr");
    let rows = sweep["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for r in rows {
        assert_eq!(r["score"], r["metrics"]["cagr"]);
    }
    // A second sweep of the same engine parameters finds every signal cached.
    let (_, again, after) = post(&s, "/api/backtest/sweep", &body).await;
    assert_eq!(before.unwrap() - after.unwrap(), 6, "6 combinations cost 6");
    assert_eq!(again["rows"], sweep["rows"]);
    assert_eq!(
        again["metadata"]["signals_cached"].as_u64().unwrap(),
        3 * UNIVERSE.len() as u64
    );
}

#[tokio::test]
async fn every_sweep_bound_answers_400_naming_it() {
    let s = Server::app().await;
    let base = json!({"tickers": UNIVERSE});
    let many: Vec<i64> = (1..=7).collect();
    for (extra, needles) in [
        (json!({}), vec!["sweep must name"]),
        (json!({"sweep": {}}), vec!["sweep must name"]),
        (
            json!({"sweep": {"tickers": [["^GSPC"]]}}),
            vec!["'tickers' cannot be swept"],
        ),
        (json!({"sweep": {"top_n": []}}), vec!["sweep.top_n"]),
        (
            json!({"sweep": {"top_n": [2, 2]}}),
            vec!["sweep.top_n", "twice"],
        ),
        (
            json!({"sweep": {"top_n": [0, 2]}}),
            vec!["top_n=0", "top_n"],
        ),
        (
            json!({"sweep": {"rebalance": ["hourly"]}}),
            vec!["rebalance"],
        ),
        (
            json!({"top_n": 2, "sweep": {"top_n": [3]}}),
            vec!["top_n", "both"],
        ),
        (
            json!({"sweep": {"top_n": many, "return_period": [7, 8, 9, 10, 11, 12, 13]}}),
            vec!["49 combinations", "48"],
        ),
        (
            json!({"sweep": {"top_n": [1], "metric": ["return"], "num_segments": [20], "rebalance": ["daily"]}}),
            vec!["at most 3"],
        ),
        (
            json!({"sweep": {"top_n": [1]}, "rank_by": "luck"}),
            vec!["rank_by"],
        ),
        (
            json!({"sweep": {"top_n": [1]}, "train_years": 2}),
            vec!["train_years"],
        ),
        (json!({"sweep": {"top_n": [1]}, "paths": 2}), vec!["paths"]),
        // A rule that needs the data names the combination too.
        (
            json!({"sweep": {"top_n": [2, 7]}}),
            vec!["sweep (top_n=7): top_n", "top_n must be between 1 and"],
        ),
    ] {
        let (status, b, _) = post(&s, "/api/backtest/sweep", &with(&base, &extra)).await;
        assert_error(
            &(status, b),
            400,
            &needles.iter().map(|s| &**s).collect::<Vec<_>>(),
        );
    }
    // A refused 49-combination body is charged the least, not 49.
    let (_, _, before) = post(
        &s,
        "/api/backtest/sweep",
        &json!({"sweep": {"top_n": [1]}, "rank_by": "x"}),
    )
    .await;
    let (status, _, after) = post(
        &s,
        "/api/backtest/sweep",
        &json!({"sweep": {"top_n": many, "return_period": [7, 8, 9, 10, 11, 12, 13]}}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(before.unwrap() - after.unwrap(), 5);
    // Past the body limit: 413 {detail}, before anything is charged.
    let huge = json!({"sweep": {"top_n": [1]}, "tickers": vec!["X".repeat(60); 20_000]});
    let (status, b, _) = post(&s, "/api/backtest/sweep", &huge).await;
    assert_error(&(status, b), 413, &["larger than"]);
    // Without a key: 401.
    let r = s
        .post_json_anonymous("/api/backtest/walk-forward", &json!({}))
        .await;
    assert_eq!(r.status(), 401);
}

/// The walk-forward recomputed from the combinations' own backtests: on
/// each train split the best total return, then its test split's daily
/// ratios chained.
#[tokio::test]
async fn the_walk_forward_is_the_train_winners_test_returns_chained() {
    let s = Server::app().await;
    let base = json!({
        "tickers": UNIVERSE, "start_date": "2008-01-01", "end_date": "2015-12-31",
        "initial_capital": 1000.0
    });
    let body = with(
        &base,
        &json!({"sweep": {"top_n": [1, 2, 4]}, "rank_by": "total_return",
                "train_years": 3, "test_years": 2}),
    );
    let (status, wf, before) = post(&s, "/api/backtest/walk-forward", &body).await;
    assert_eq!(status, 200, "{wf}");
    let (_, _, after) = post(&s, "/api/backtest/walk-forward", &body).await;
    assert_eq!(before.unwrap() - after.unwrap(), 5);
    let splits = wf["splits"].as_array().unwrap();
    // Tests 2011–12, 2013–14, 2015.
    assert_eq!(splits.len(), 3, "{splits:?}");
    assert_eq!(splits[0]["test_start"].as_str().unwrap()[..4], *"2011");
    assert_eq!(splits[2]["test_end"], "2015-12-31");
    assert_eq!(wf["mode"], "rolling");
    // Each combination's backtest over the whole window.
    let mut curves: Vec<(Value, Vec<(String, f64)>)> = Vec::new();
    for top_n in [1, 2, 4] {
        let (status, run, _) =
            post(&s, "/api/backtest", &with(&base, &json!({"top_n": top_n}))).await;
        assert_eq!(status, 200);
        let curve = run["equity_curve"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["date"].as_str().unwrap().to_string(), f(&p["equity"])))
            .collect();
        curves.push((json!({"top_n": top_n}), curve));
    }
    // The slice of rows from..=to with the row before it.
    let span = |curve: &[(String, f64)], from: &str, to: &str| -> Vec<f64> {
        let a = curve.iter().position(|p| p.0.as_str() >= from).unwrap();
        let b = curve.iter().rposition(|p| p.0.as_str() <= to).unwrap();
        curve[a.saturating_sub(1)..=b].iter().map(|p| p.1).collect()
    };
    let mut equity = 1000.0;
    for split in splits {
        let (from, to) = (
            split["train_start"].as_str().unwrap(),
            split["train_end"].as_str().unwrap(),
        );
        let returns: Vec<f64> = curves
            .iter()
            .map(|(_, c)| {
                let s = span(c, from, to);
                s.last().unwrap() / s[0] - 1.0
            })
            .collect();
        let best = (0..returns.len()).fold(0, |b, k| if returns[k] > returns[b] { k } else { b });
        assert_eq!(split["chosen"], curves[best].0, "{split}");
        assert!((f(&split["in_sample"]["total_return"]) - returns[best]).abs() < 1e-9);
        let test = span(
            &curves[best].1,
            split["test_start"].as_str().unwrap(),
            split["test_end"].as_str().unwrap(),
        );
        equity *= test.last().unwrap() / test[0];
        let oos = test.last().unwrap() / test[0] - 1.0;
        assert!((f(&split["out_of_sample"]["total_return"]) - oos).abs() < 1e-9);
    }
    let stitched = wf["equity_curve"].as_array().unwrap();
    assert_eq!(stitched[0]["equity"], 1000.0);
    let last = f(&stitched.last().unwrap()["equity"]);
    assert!((last - equity).abs() < 1e-6 * equity, "{last} vs {equity}");
    assert!((f(&wf["out_of_sample"]["total_return"]) - (equity / 1000.0 - 1.0)).abs() < 1e-9);
    // Efficiency is out of sample over in sample, when in sample is positive.
    let (is, oos) = (
        f(&wf["in_sample"]["total_return"]),
        f(&wf["out_of_sample"]["total_return"]),
    );
    match wf["efficiency"].as_f64() {
        Some(e) => assert!((e - oos / is).abs() < 1e-9),
        None => assert!(is <= 0.0),
    }
    // Expanding: every train split starts at the window's first date.
    let (status, ex, _) = post(
        &s,
        "/api/backtest/walk-forward",
        &with(&body, &json!({"mode": "expanding"})),
    )
    .await;
    assert_eq!(status, 200, "{ex}");
    let first = ex["splits"][0]["train_start"].clone();
    assert!(ex["splits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["train_start"] == first));
}

#[tokio::test]
async fn every_walk_forward_bound_answers_400_naming_it() {
    let s = Server::app().await;
    let base = json!({"tickers": UNIVERSE, "sweep": {"top_n": [1, 2]}});
    for (extra, needles) in [
        (json!({"train_years": 0}), vec!["train_years"]),
        (json!({"train_years": 21}), vec!["train_years"]),
        (json!({"test_years": 11}), vec!["test_years"]),
        (json!({"test_years": "1"}), vec!["test_years"]),
        (json!({"mode": "sideways"}), vec!["mode"]),
        (
            json!({"start_date": "2014-01-01", "end_date": "2016-06-30"}),
            vec!["too short", "train_years 3"],
        ),
        (json!({"sweep": null}), vec!["sweep must name"]),
    ] {
        let (status, b, _) = post(&s, "/api/backtest/walk-forward", &with(&base, &extra)).await;
        assert_error(
            &(status, b),
            400,
            &needles.iter().map(|s| &**s).collect::<Vec<_>>(),
        );
    }
}

#[tokio::test]
async fn a_sweep_past_its_time_limit_is_a_504_that_says_reduce_the_scope() {
    // The real server (issue 40, finding 7 is tested black-box).
    let s = Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_RESEARCH_TIMEOUT_MS", "1"),
            ("FORECAST_SIGNAL_CACHE_MB", "0"),
        ],
    );
    // 24 combinations cost 24 units; stopped at the limit before any run
    // ended, each request is charged by what ran: the least, 5.
    let body = json!({"category": "Indices", "sweep": {"top_n": (1..=24).collect::<Vec<_>>()}});
    let (left, health) = common::with_health(&s, async {
        let mut left = Vec::new();
        for path in [
            "/api/backtest/sweep",
            "/api/backtest/walk-forward",
            "/api/backtest/sweep",
        ] {
            let (status, b, remaining) = post(&s, path, &body).await;
            assert_error(&(status, b), 504, &["time limit", "reduce its scope"]);
            left.push(remaining.expect("rate headers"));
        }
        left
    })
    .await;
    eprintln!("during three timed-out research requests: {health}");
    // A new minute in between could only raise what is left.
    for pair in left.windows(2) {
        assert!(
            pair[0].saturating_sub(pair[1]) <= 5,
            "a timed-out 24-combination request was charged {} units",
            pair[0] - pair[1]
        );
    }
    // A backtest keeps its own, longer, limit.
    let (status, b, _) = post(
        &s,
        "/api/backtest",
        &json!({"category": "Indices", "top_n": 2}),
    )
    .await;
    assert_eq!(status, 200, "{b}");
}
