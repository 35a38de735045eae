//! `POST /api/backtest/sweep` and `POST /api/backtest/walk-forward` in
//! process (issue 29). A sweep's row is exactly the backtest of its
//! combination; combinations sharing engine parameters share one engine
//! pass; the price is 1 unit per combination, at least 5; the walk-forward
//! is recomputed here from the combinations' own backtests; every bound
//! answers 400 naming its field; the time limit answers 504.

use crate::common;

use chrono::{Datelike, NaiveDate};
use common::Server;
use forecast_api::backtest::BacktestResponse;
use forecast_api::research::{RankBy, SplitMode, SweepResponse, WalkForwardResponse};
use forecast_testkit::{exactly, units_left, Refusal};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

const UNIVERSE: [&str; 6] = ["^GSPC", "^IXIC", "^DJI", "^NDX", "^RUT", "^FTSE"];

/// POSTs `body` to `path` (after `/api`) with the test account's key, which
/// must be answered: the answer and the units left after it.
async fn answered<T: DeserializeOwned>(s: &Server, path: &str, body: &Value) -> (T, u64) {
    s.api().post_metered(path, body).await
}

/// POSTs `body` to `path` with the test key, which must be refused.
async fn refused(s: &Server, path: &str, body: &Value) -> Refusal {
    s.api().post_refused(path, body).await
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
    let (status, raw, before) = common::post_json_text(&s, "/api/backtest/sweep", &body).await;
    assert_eq!(status, 200, "{raw}");
    let sweep: SweepResponse = exactly(&raw);
    let (_, _, after) = common::post_json_text(&s, "/api/backtest/sweep", &body).await;
    assert_eq!(
        before.unwrap() - after.unwrap(),
        5,
        "4 combinations cost the least, 5"
    );
    // The axes in the order written, rows row-major.
    let names: Vec<&str> = sweep.axes.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["top_n", "rebalance"]);
    let cells: Vec<Vec<usize>> = sweep.rows.iter().map(|r| r.cell.clone()).collect();
    assert_eq!(cells, [[0, 0], [0, 1], [1, 0], [1, 1]]);
    assert_eq!(sweep.metadata.signal_passes, 1);
    assert_eq!(sweep.metadata.combinations, 4);
    assert_eq!(sweep.rank_by, RankBy::SharpeRatio);
    for row in &sweep.rows {
        // A sweep's rows are measured against the universe's two baskets
        // only: the single run without benchmarks by ticker is the same.
        let params = Value::Object(row.params.clone());
        let single = with(&with(&base, &params), &json!({"benchmarks": []}));
        let (run, _) = answered::<BacktestResponse>(&s, "/backtest", &single).await;
        assert_eq!(row.metrics, run.metrics, "{params}");
        assert_eq!(row.score, run.metrics.sharpe_ratio);
    }
    // Ranks order the scores; `best` is rank 1.
    let mut ranked: Vec<(u32, f64)> = sweep
        .rows
        .iter()
        .map(|r| (r.rank.expect("a rank"), r.score.expect("a score")))
        .collect();
    ranked.sort_by_key(|r| r.0);
    assert_eq!(
        ranked.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 2, 3, 4]
    );
    assert!(ranked.windows(2).all(|w| w[0].1 >= w[1].1), "{ranked:?}");
    let best = sweep.best.expect("a best row");
    assert_eq!(sweep.rows[best].rank, Some(1));
}

#[tokio::test]
async fn engine_parameters_make_passes_and_the_price_follows_the_combinations() {
    let s = Server::app().await;
    let body = json!({
        "tickers": UNIVERSE, "start_date": "2012-01-01", "end_date": "2016-12-31",
        "sweep": {"return_period": [30, 60, 90], "top_n": [1, 2]},
        "rank_by": "cagr"
    });
    let (sweep, before) = answered::<SweepResponse>(&s, "/backtest/sweep", &body).await;
    assert_eq!(sweep.metadata.signal_passes, 3);
    assert_eq!(sweep.rank_by, RankBy::Cagr);
    assert_eq!(sweep.rows.len(), 6);
    for r in &sweep.rows {
        assert_eq!(r.score, r.metrics.cagr);
    }
    // A second sweep of the same engine parameters finds every signal cached.
    let (again, after) = answered::<SweepResponse>(&s, "/backtest/sweep", &body).await;
    assert_eq!(before - after, 6, "6 combinations cost 6");
    assert_eq!(again.rows, sweep.rows);
    assert_eq!(again.metadata.signals_cached, 3 * UNIVERSE.len());
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
        refused(&s, "/backtest/sweep", &with(&base, &extra))
            .await
            .assert(400, &needles);
    }
    // A refused 49-combination body is charged the least, not 49.
    let wrong = json!({"sweep": {"top_n": [1]}, "rank_by": "x"});
    let before = units_left(&refused(&s, "/backtest/sweep", &wrong).await.headers);
    let too_many = json!({"sweep": {"top_n": many, "return_period": [7, 8, 9, 10, 11, 12, 13]}});
    let refusal = refused(&s, "/backtest/sweep", &too_many).await;
    assert_eq!(refusal.status, 400, "{refusal}");
    assert_eq!(before - units_left(&refusal.headers), 5);
    // Past the body limit: 413 {detail}, before anything is charged.
    let huge = json!({"sweep": {"top_n": [1]}, "tickers": vec!["X".repeat(60); 20_000]});
    refused(&s, "/backtest/sweep", &huge)
        .await
        .assert(413, &["larger than"]);
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
    let (wf, before) = answered::<WalkForwardResponse>(&s, "/backtest/walk-forward", &body).await;
    let (_, after) = answered::<WalkForwardResponse>(&s, "/backtest/walk-forward", &body).await;
    assert_eq!(before - after, 5);
    let splits = &wf.splits;
    // Tests 2011–12, 2013–14, 2015.
    assert_eq!(splits.len(), 3, "{splits:?}");
    assert_eq!(splits[0].test_start.year(), 2011);
    assert_eq!(splits[2].test_end, date("2015-12-31"));
    assert_eq!(wf.mode, SplitMode::Rolling);
    // Each combination's backtest over the whole window.
    let mut curves: Vec<(Value, Vec<(NaiveDate, f64)>)> = Vec::new();
    for top_n in [1, 2, 4] {
        let one = with(&base, &json!({"top_n": top_n}));
        let (run, _) = answered::<BacktestResponse>(&s, "/backtest", &one).await;
        let curve = run
            .equity_curve
            .iter()
            .map(|p| (p.date, p.equity))
            .collect();
        curves.push((json!({"top_n": top_n}), curve));
    }
    // The slice of rows from..=to with the row before it.
    let span = |curve: &[(NaiveDate, f64)], from: NaiveDate, to: NaiveDate| -> Vec<f64> {
        let a = curve.iter().position(|p| p.0 >= from).unwrap();
        let b = curve.iter().rposition(|p| p.0 <= to).unwrap();
        curve[a.saturating_sub(1)..=b].iter().map(|p| p.1).collect()
    };
    let mut equity = 1000.0;
    for split in splits {
        let returns: Vec<f64> = curves
            .iter()
            .map(|(_, c)| {
                let s = span(c, split.train_start, split.train_end);
                s.last().unwrap() / s[0] - 1.0
            })
            .collect();
        let best = (0..returns.len()).fold(0, |b, k| if returns[k] > returns[b] { k } else { b });
        assert_eq!(
            Value::Object(split.chosen.clone()),
            curves[best].0,
            "{split:?}"
        );
        let in_sample = split.in_sample.total_return.expect("a train return");
        assert!((in_sample - returns[best]).abs() < 1e-9);
        let test = span(&curves[best].1, split.test_start, split.test_end);
        equity *= test.last().unwrap() / test[0];
        let oos = test.last().unwrap() / test[0] - 1.0;
        let out_of_sample = split.out_of_sample.total_return.expect("a test return");
        assert!((out_of_sample - oos).abs() < 1e-9);
    }
    let stitched = &wf.equity_curve;
    assert_eq!(stitched[0].equity, 1000.0);
    let last = stitched.last().unwrap().equity;
    assert!((last - equity).abs() < 1e-6 * equity, "{last} vs {equity}");
    // Efficiency is out of sample over in sample, when in sample is positive.
    let is = wf.in_sample.total_return.expect("an in-sample return");
    let oos = wf
        .out_of_sample
        .total_return
        .expect("an out-of-sample return");
    assert!((oos - (equity / 1000.0 - 1.0)).abs() < 1e-9);
    match wf.efficiency {
        Some(e) => assert!((e - oos / is).abs() < 1e-9),
        None => assert!(is <= 0.0),
    }
    // Expanding: every train split starts at the window's first date.
    let expanding = with(&body, &json!({"mode": "expanding"}));
    let (ex, _) = answered::<WalkForwardResponse>(&s, "/backtest/walk-forward", &expanding).await;
    let first = ex.splits[0].train_start;
    assert!(ex.splits.iter().all(|s| s.train_start == first));
}

fn date(text: &str) -> NaiveDate {
    text.parse().expect("a date")
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
        refused(&s, "/backtest/walk-forward", &with(&base, &extra))
            .await
            .assert(400, &needles);
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
    let (units, health) = common::with_health(&s, async {
        let mut units = Vec::new();
        for path in [
            "/backtest/sweep",
            "/backtest/walk-forward",
            "/backtest/sweep",
        ] {
            let refusal = refused(&s, path, &body).await;
            refusal.assert(504, &["time limit", "reduce its scope"]);
            units.push(units_left(&refusal.headers));
        }
        units
    })
    .await;
    eprintln!("during three timed-out research requests: {health}");
    // A new minute in between could only raise what is left.
    for pair in units.windows(2) {
        assert!(
            pair[0].saturating_sub(pair[1]) <= 5,
            "a timed-out 24-combination request was charged {} units",
            pair[0] - pair[1]
        );
    }
    // A backtest keeps its own, longer, limit.
    let small = json!({"category": "Indices", "top_n": 2});
    answered::<BacktestResponse>(&s, "/backtest", &small).await;
}
