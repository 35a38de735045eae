//! The HTTP API with the demo universe: every endpoint, every spec field
//! with its type, and every error path. In process (`Server::app`), except
//! the raw-HTTP body-limit check, which needs a socket. Written with the
//! typed client (`forecast-testkit`); the analysis answers are read with
//! [`forecast_testkit::exactly`], so the wire must be their type exactly
//! (every field present, of its type, and no other).

use crate::common;

use std::collections::{BTreeMap, HashMap};

use axum::http::Method;
use chrono::NaiveDate;
use common::{component, Server};
use forecast::demo::{INACTIVE_TICKERS, SHORT_HISTORY_TICKERS};
use forecast_api::analysis::{AnalysisResponse, TimeSeriesBody};
use forecast_domain::{Category, DataSource, Metric};
use forecast_testkit::{Api, Auth, Refused};
use serde::Deserialize;
use serde_json::{json, Value};

/// The body of every error, as far as these tests read it.
#[derive(Debug, Deserialize)]
struct Detail {
    detail: String,
}

/// The client with the admin token (the diagnostics).
fn admin(s: &Server) -> Api {
    s.api_as(Auth::Bearer(common::ADMIN_TOKEN.into()))
}

/// `GET /api{path}` as an analysis that is its type exactly, and the raw
/// answer (its size is measured); panics on a refusal.
async fn analysis(api: &Api, path: &str) -> (AnalysisResponse, Value) {
    api.get_exactly(path)
        .await
        .unwrap_or_else(|r| panic!("{path}: {r}"))
}

#[tokio::test]
async fn health_and_diagnostics() {
    let s = Server::app().await;
    let api = s.api();
    // The whole plain body: status and service, and no `debug` key.
    let plain: Value = api.get("/health").await.unwrap();
    assert_eq!(plain, json!({ "status": "ok", "service": "svc-api" }));

    let d = admin(&s).diagnostics().await;
    assert!(d.database.reachable);
    assert_eq!(d.database.backend, "sqlite");
    assert_eq!(d.database.counts.map(|c| c.assets), Some(3232));
    assert!(d
        .plugins
        .iter()
        .any(|p| p.kind == "segmentation" && p.version == "1.1.0" && p.sha256.len() == 64));

    api.health("debug=2")
        .await
        .refused()
        .assert(400, &["debug"]);
    // The details are an operator's: without the admin token (anonymous,
    // or a user's key) debug=1 answers the plain body.
    for auth in [
        Auth::Anonymous,
        Auth::Bearer(common::test_key().to_string()),
    ] {
        let plain: Value = s.api_as(auth).get("/health?debug=1").await.unwrap();
        assert_eq!(plain, json!({ "status": "ok", "service": "svc-api" }));
    }
}

#[tokio::test]
async fn asset_catalog_and_category_filter() {
    let s = Server::app().await;
    let api = s.api();
    // Every asset's id, ticker, name and category, of their types.
    let all = api.assets("").await.unwrap();
    let assets = &all.assets;
    assert_eq!(all.total, assets.len());
    assert_eq!(
        assets.len(),
        3232 - INACTIVE_TICKERS.len(),
        "every active asset"
    );
    let tickers: Vec<&str> = assets.iter().map(|a| a.ticker.as_str()).collect();
    for t in INACTIVE_TICKERS {
        assert!(!tickers.contains(t), "inactive {t} listed");
    }
    let source = |t: &str| assets.iter().find(|a| a.ticker == t).unwrap().data_source;
    assert_eq!(source("^GSPC"), DataSource::Real);
    assert_eq!(
        source("AAPL"),
        DataSource::Real,
        "AAPL ships a real history"
    );
    assert_eq!(
        source("BTC-USD"),
        DataSource::Synthetic,
        "synthetic data is flagged"
    );
    let real = assets
        .iter()
        .filter(|a| a.data_source == DataSource::Real)
        .count();
    assert_eq!(real, 78, "every shipped real history is served as real");

    let crypto = api.assets("category=Crypto").await.unwrap().assets;
    assert!(!crypto.is_empty());
    assert!(crypto.iter().all(|a| a.category == Category::Crypto));
    let cs2 = api.assets("category=CS2%20Cases").await.unwrap();
    assert!(cs2.total > 0);

    api.assets("category=Stonks")
        .await
        .refused()
        .assert(400, &["unknown category", "Stonks"]);
}

#[tokio::test]
async fn asset_info_is_cached() {
    let s = Server::app().await;
    let api = s.api();
    // Every field, of its type (strings, and market_cap an integer).
    let first = api.asset_info("AAPL").await.unwrap();
    assert!(!first.from_cache);
    assert_eq!(first.data_source, DataSource::Real);
    let second = api.asset_info("AAPL").await.unwrap();
    assert!(second.from_cache);
    assert_eq!(second.summary, first.summary);

    api.asset_info("NOPE")
        .await
        .refused()
        .assert(404, &["NOPE"]);
    api.asset_info(INACTIVE_TICKERS[0])
        .await
        .refused()
        .assert(404, &[]);
}

/// Every field of the spec's AnalysisResponse, with its type (`exactly`
/// read it), and what its values must be: `rows` rows, `segments`
/// buckets.
fn assert_analysis_shape(a: &AnalysisResponse, rows: usize, segments: usize) {
    assert_current_state_and_signals_shape(a);
    assert_time_series_shape(&a.time_series, rows);
    assert_segments_shape(a, segments);
    assert_distribution_scatter_and_paths_shape(a, segments);
    assert_metadata_shape(a, rows, segments);
}

/// `current_state` and `signals`, the latter the former's signals.
fn assert_current_state_and_signals_shape(a: &AnalysisResponse) {
    let cs = &a.current_state;
    let best = cs.best_method.as_str();
    assert!(best == "ema" || best == "median");
    assert!((-1.0..=0.0).contains(&cs.drawdown));

    let sig = &a.signals;
    assert_eq!(
        [
            sig.expected_return,
            sig.prediction_error,
            sig.median_return,
            sig.median_error,
            sig.best_error
        ],
        [
            cs.expected_return,
            cs.prediction_error,
            cs.median_return,
            cs.median_error,
            cs.best_error
        ]
    );
    assert_eq!(sig.best_method, cs.best_method);
}

/// `time_series`: every array dense, `rows` long (its dates are
/// `YYYY-MM-DD`: `NaiveDate`s).
fn assert_time_series_shape(ts: &TimeSeriesBody, rows: usize) {
    // Every column, named: a new one fails to compile here.
    let TimeSeriesBody {
        dates,
        prices,
        drawdowns,
        expected_returns,
        prediction_errors,
        prediction_error_cumavg,
        actual_returns,
        median_returns,
        median_errors,
        median_error_cumavg,
        projected_prices,
    } = ts;
    for (name, len) in [
        ("dates", dates.len()),
        ("prices", prices.len()),
        ("drawdowns", drawdowns.len()),
        ("expected_returns", expected_returns.len()),
        ("prediction_errors", prediction_errors.len()),
        ("prediction_error_cumavg", prediction_error_cumavg.len()),
        ("actual_returns", actual_returns.len()),
        ("median_returns", median_returns.len()),
        ("median_errors", median_errors.len()),
        ("median_error_cumavg", median_error_cumavg.len()),
        ("projected_prices", projected_prices.len()),
    ] {
        assert_eq!(len, rows, "time_series.{name} is dense");
    }
}

/// `segments`: `segments` of them, in order.
fn assert_segments_shape(a: &AnalysisResponse, segments: usize) {
    assert_eq!(a.segments.len(), segments);
    for (i, g) in a.segments.iter().enumerate() {
        assert_eq!(g.segment_idx as usize, i);
    }
}

/// `return_distribution`, `scatter_data` and `segment_paths`.
fn assert_distribution_scatter_and_paths_shape(a: &AnalysisResponse, segments: usize) {
    let dist = &a.return_distribution;
    assert_eq!(dist.bins.len(), dist.counts.len() + 1);
    assert!(a.scatter_data.len() <= 1000);
    assert!(!a.segment_paths.is_empty());
    for key in a.segment_paths.keys() {
        assert!(key.parse::<usize>().unwrap() < segments);
    }
}

/// `metadata`, its counts those of the answer.
fn assert_metadata_shape(a: &AnalysisResponse, rows: usize, segments: usize) {
    let m = &a.metadata;
    assert_eq!(m.num_segments as usize, segments);
    assert_eq!(m.data_points as usize, rows);
    assert_eq!(m.time_series_rows as usize, rows);
    assert!(m.max_points.is_none());
}

#[tokio::test]
async fn analysis_defaults_are_cached_and_custom_parameters_computed_live() {
    let s = Server::app().await;
    let api = s.api();
    let (first, _) = analysis(&api, "/analysis/%5EGSPC").await;
    assert_analysis_shape(&first, 16_607, 20);
    assert!(!first.metadata.from_cache);
    assert_eq!(first.metadata.data_source, DataSource::Real);
    assert_eq!(first.metadata.return_period, 90);
    assert_eq!(first.metadata.periods_per_year, 252);

    let (second, _) = analysis(&api, "/analysis/%5EGSPC?return_period=90&metric=return").await;
    assert!(second.metadata.from_cache);
    assert_eq!(second.current_state, first.current_state);
    assert_eq!(second.time_series, first.time_series);
    assert_eq!(second.metadata.calculated_at, first.metadata.calculated_at);

    // Custom parameters are computed live every time.
    for _ in 0..2 {
        let (custom, _) = analysis(
            &api,
            "/analysis/%5EGSPC?return_period=45&num_segments=30&decay_factor=0.9&metric=sharpe",
        )
        .await;
        assert_analysis_shape(&custom, 16_607, 30);
        assert!(!custom.metadata.from_cache);
        assert_eq!(custom.metadata.metric, Metric::Sharpe);
        assert!(custom
            .time_series
            .projected_prices
            .iter()
            .all(Option::is_none));
    }

    // A date window narrows the rows.
    let (window, _) = analysis(
        &api,
        "/analysis/%5EGSPC?start_date=2005-01-01&end_date=2010-12-31",
    )
    .await;
    assert!(!window.metadata.from_cache);
    assert_eq!(window.metadata.start_date, day("2005-01-03"));
    assert_eq!(window.metadata.end_date, day("2010-12-31"));
    let rows = window.time_series.dates.len();
    assert!(rows > 1400 && rows < 1600, "{rows}");

    // Crypto trades on weekends: 365 periods a year.
    let (btc, _) = analysis(&api, "/analysis/BTC-USD?return_period=30").await;
    assert_eq!(btc.metadata.periods_per_year, 365);
    assert_eq!(btc.metadata.data_source, DataSource::Synthetic);
}

fn day(d: &str) -> NaiveDate {
    NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap()
}

/// Issue 24: each bucket's box is drawn from the quantiles of all its
/// outcomes (its median is the table's), and `max_points` thins the series
/// for drawing without changing anything else.
#[tokio::test]
async fn bucket_quantiles_are_all_outcomes_and_max_points_thins_only_the_series() {
    let s = Server::app().await;
    let api = s.api();
    for (path, segments) in [
        ("/analysis/%5EGSPC", 20),
        ("/analysis/AAPL", 20),
        ("/analysis/AAPL?num_segments=37&return_period=30", 37),
        ("/analysis/%5EGSPC?metric=sortino&return_period=7", 20),
        ("/analysis/BTC-USD?start_date=2019-01-01", 20),
    ] {
        let (a, _) = analysis(&api, path).await;
        assert_bucket_quantiles_are_of_all_outcomes(path, &a, segments);
    }

    let again = a_cache_entry_before_the_evidence_is_recomputed(&s).await;

    // max_points: the same answer but the series, thinned to real rows.
    let (full, full_raw) = analysis(&api, "/analysis/%5EGSPC").await;
    assert!(full.metadata.from_cache);
    // The cached answer is the live one, to the last digit (floats read
    // back from the cache round-trip exactly).
    assert_eq!(full.time_series, again.time_series, "cached vs live");
    assert_eq!(full.segments, again.segments, "cached vs live");
    assert_eq!(full.current_state, again.current_state, "cached vs live");
    assert_eq!(
        full.return_distribution, again.return_distribution,
        "cached vs live"
    );
    let rows = full.time_series.dates.len();
    assert_eq!(rows, 16_607);
    let full_bytes = serde_json::to_vec(&full_raw).unwrap().len();
    for max in [100usize, 1500, 20_000] {
        let (thin, thin_raw) = analysis(&api, &format!("/analysis/%5EGSPC?max_points={max}")).await;
        assert_thinned_to_real_rows(&thin, &full, max, rows);
        let bytes = serde_json::to_vec(&thin_raw).unwrap().len();
        if max == 1500 {
            assert!(bytes * 3 < full_bytes, "{bytes} of {full_bytes} bytes");
        }
    }
    // The web twin takes it too; the verdict has no series and ignores it.
    let b = common::Browser::login(&s, common::TEST_EMAIL, common::TEST_PASSWORD).await;
    let (status, web) = b
        .send(
            reqwest::Method::GET,
            "/web/api/analysis/%5EGSPC?max_points=1500",
            None,
        )
        .await;
    assert_eq!(status, 200);
    let web: AnalysisResponse = serde_json::from_value(web).expect("an analysis");
    assert!(web.time_series.dates.len() <= 1500);
    api.verdict("^GSPC", "max_points=5")
        .await
        .unwrap_or_else(|r| panic!("the verdict ignores max_points: {r}"));
    for bad in ["99", "20001", "0", "many", "1e9", "1500.5"] {
        api.analysis("^GSPC", &format!("max_points={bad}"))
            .await
            .refused()
            .assert(400, &["max_points", "between 100 and 20000"]);
    }
    zoomed_windows_are_every_row_of_the_window(&api, &full).await;
}

/// Each bucket's quantiles are those of every confirmed outcome in it,
/// bucketed by its start row's drawdown on the final grid, as the engine
/// does; its p50 is the table's median.
fn assert_bucket_quantiles_are_of_all_outcomes(path: &str, a: &AnalysisResponse, segments: usize) {
    let segs = &a.segments;
    assert_eq!(segs.len(), segments);
    let ts = &a.time_series;
    let width = -segs[0].lower_bound;
    let mut outcomes = vec![Vec::new(); segments];
    for (d, y) in ts.drawdowns.iter().zip(&ts.actual_returns) {
        if let Some(y) = *y {
            let x = -d / width;
            let i = if x >= 1.0 {
                (x as usize).min(segments - 1)
            } else {
                0
            };
            outcomes[i].push(y);
        }
    }
    let mut with_outcomes = 0;
    for (g, ys) in segs.iter().zip(outcomes.iter_mut()) {
        let median = g.static_median_return;
        if ys.is_empty() {
            assert!(
                g.outcome_quantiles.is_none() && median.is_none(),
                "{path}: {g:?}"
            );
            continue;
        }
        with_outcomes += 1;
        let q = g
            .outcome_quantiles
            .as_ref()
            .unwrap_or_else(|| panic!("{path} bucket {}: quantiles", g.segment_idx));
        assert_eq!(
            Some(q.p50),
            median,
            "{path} bucket {}: the box's median is the table's",
            g.segment_idx
        );
        ys.sort_by(f64::total_cmp);
        let at = |p: f64| {
            let pos = p * (ys.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            ys[lo] + (ys[hi] - ys[lo]) * (pos - lo as f64)
        };
        let vals = [q.p10, q.p25, q.p50, q.p75, q.p90];
        for ((name, p), got) in [
            ("p10", 0.1),
            ("p25", 0.25),
            ("p50", 0.5),
            ("p75", 0.75),
            ("p90", 0.9),
        ]
        .into_iter()
        .zip(vals)
        {
            assert!(
                (got - at(p)).abs() < 1e-12,
                "{path} {name}: {got} vs {}",
                at(p)
            );
        }
        assert!(vals.windows(2).all(|w| w[0] <= w[1]), "{path}: {vals:?}");
    }
    assert!(
        with_outcomes >= 3,
        "{path}: {with_outcomes} buckets with outcomes"
    );
}

/// An entry cached in the format before the evidence (v2) is not served:
/// the answer recomputed.
async fn a_cache_entry_before_the_evidence_is_recomputed(s: &Server) -> AnalysisResponse {
    let api = s.api();
    let (fresh, _) = analysis(&api, "/analysis/%5EGSPC").await;
    assert!(fresh.metadata.from_cache);
    let url = common::sqlite_url(&s.db);
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let moved = sqlx::query(
        "UPDATE analysis_cache SET cache_key = replace(cache_key, 'analysis/v3/', 'analysis/v2/'),
             body = json_remove(body, '$.current_state.evidence')
         WHERE cache_key LIKE 'analysis/v3/%'",
    )
    .execute(&pool)
    .await
    .unwrap()
    .rows_affected();
    pool.close().await;
    assert!(moved >= 1);
    let (again, _) = analysis(&api, "/analysis/%5EGSPC").await;
    assert!(!again.metadata.from_cache, "recomputed");
    assert!(again.segments[0].outcome_quantiles.is_some());
    assert!(again.current_state.evidence.is_some());
    again
}

/// Asserts `thin[i] == full[picked[i]]` for every row kept.
fn same_rows<T: PartialEq + std::fmt::Debug>(name: &str, thin: &[T], full: &[T], picked: &[usize]) {
    assert_eq!(thin.len(), picked.len(), "{name}");
    for (j, &i) in picked.iter().enumerate() {
        assert_eq!(thin[j], full[i], "{name} row {i}");
    }
}

/// Every column of `ts` is the `picked` rows of `full_ts`'s.
fn assert_every_column_is_those_rows(
    ts: &TimeSeriesBody,
    full_ts: &TimeSeriesBody,
    picked: &[usize],
) {
    // Every column, named: a new one fails to compile here.
    let TimeSeriesBody {
        dates,
        prices,
        drawdowns,
        expected_returns,
        prediction_errors,
        prediction_error_cumavg,
        actual_returns,
        median_returns,
        median_errors,
        median_error_cumavg,
        projected_prices,
    } = ts;
    same_rows("dates", dates, &full_ts.dates, picked);
    same_rows("prices", prices, &full_ts.prices, picked);
    same_rows("drawdowns", drawdowns, &full_ts.drawdowns, picked);
    let f = full_ts;
    same_rows(
        "expected_returns",
        expected_returns,
        &f.expected_returns,
        picked,
    );
    same_rows(
        "prediction_errors",
        prediction_errors,
        &f.prediction_errors,
        picked,
    );
    same_rows(
        "prediction_error_cumavg",
        prediction_error_cumavg,
        &f.prediction_error_cumavg,
        picked,
    );
    same_rows("actual_returns", actual_returns, &f.actual_returns, picked);
    same_rows("median_returns", median_returns, &f.median_returns, picked);
    same_rows("median_errors", median_errors, &f.median_errors, picked);
    same_rows(
        "median_error_cumavg",
        median_error_cumavg,
        &f.median_error_cumavg,
        picked,
    );
    same_rows(
        "projected_prices",
        projected_prices,
        &f.projected_prices,
        picked,
    );
}

/// `thin`, the answer with `max_points=max`, is `full` but for its series:
/// the same real rows of every array, at most `max`, with the lines'
/// extremes kept.
fn assert_thinned_to_real_rows(
    thin: &AnalysisResponse,
    full: &AnalysisResponse,
    max: usize,
    rows: usize,
) {
    let m = &thin.metadata;
    assert_eq!(m.max_points, Some(max as u32));
    assert_eq!(m.time_series_rows as usize, rows);
    assert_eq!(m.data_points as usize, rows);
    assert!(m.from_cache, "thinned after the cache");
    // Computed on all rows.
    assert_eq!(thin.ticker, full.ticker);
    assert_eq!(thin.current_state, full.current_state);
    assert_eq!(thin.signals, full.signals);
    assert_eq!(thin.segments, full.segments);
    assert_eq!(thin.return_distribution, full.return_distribution);
    assert_eq!(thin.scatter_data, full.scatter_data);
    assert_eq!(thin.segment_paths, full.segment_paths);
    let (ts, full_ts) = (&thin.time_series, &full.time_series);
    let kept = ts.dates.len();
    assert!(
        kept <= max.min(rows) && kept >= max.min(rows) / 2,
        "{kept} of {max}"
    );
    // The same rows of every array, each a real row of the full series.
    let index: HashMap<NaiveDate, usize> = full_ts
        .dates
        .iter()
        .enumerate()
        .map(|(i, d)| (*d, i))
        .collect();
    let picked: Vec<usize> = ts.dates.iter().map(|d| index[d]).collect();
    assert!(picked.windows(2).all(|w| w[0] < w[1]));
    assert_eq!((picked[0], *picked.last().unwrap()), (0, rows - 1));
    assert_every_column_is_those_rows(ts, full_ts, &picked);
    let (prices, drawdowns) = (&ts.prices, &ts.drawdowns);
    // The lines keep their extremes.
    let extreme = |v: &[f64], f: fn(f64, f64) -> f64, start: f64| v.iter().copied().fold(start, f);
    for (name, thin, full, f, start) in [
        (
            "prices",
            prices,
            &full_ts.prices,
            f64::min as fn(f64, f64) -> f64,
            f64::INFINITY,
        ),
        (
            "prices",
            prices,
            &full_ts.prices,
            f64::max,
            f64::NEG_INFINITY,
        ),
        (
            "drawdowns",
            drawdowns,
            &full_ts.drawdowns,
            f64::min,
            f64::INFINITY,
        ),
    ] {
        assert_eq!(extreme(thin, f, start), extreme(full, f, start), "{name}");
    }
}

/// `draw_from`/`draw_to`: the rows of the window only, every one of them
/// up to `max_points`, the statistics unchanged (a zoomed chart).
async fn zoomed_windows_are_every_row_of_the_window(api: &Api, full: &AnalysisResponse) {
    let (from, to) = (day("2008-01-01"), day("2009-12-31"));
    let inside: Vec<usize> = (0..full.time_series.dates.len())
        .filter(|&i| (from..=to).contains(&full.time_series.dates[i]))
        .collect();
    assert!(inside.len() > 450, "{}", inside.len());
    let (zoomed, _) = analysis(
        api,
        "/analysis/%5EGSPC?draw_from=2008-01-01&draw_to=2009-12-31&max_points=1500",
    )
    .await;
    let drawn = zoomed.metadata.drawn.expect("the window is recorded");
    assert_eq!((drawn.from, drawn.to), (Some(from), Some(to)));
    assert_eq!(drawn.rows as usize, inside.len());
    assert_eq!(
        zoomed.time_series.dates,
        inside
            .iter()
            .map(|&i| full.time_series.dates[i])
            .collect::<Vec<_>>(),
        "every row of the window, under the budget"
    );
    assert_eq!(
        zoomed.time_series.drawdowns,
        inside
            .iter()
            .map(|&i| full.time_series.drawdowns[i])
            .collect::<Vec<_>>(),
        "drawdowns from the whole history's peaks"
    );
    assert_eq!(zoomed.segments, full.segments);
    assert_eq!(zoomed.current_state, full.current_state);
    assert_eq!(
        zoomed.metadata.time_series_rows,
        full.metadata.time_series_rows
    );
    // A wider window than the budget is thinned within the window.
    let (wide, _) = analysis(api, "/analysis/%5EGSPC?draw_from=1970-01-01&max_points=100").await;
    assert!(wide.time_series.dates.len() <= 100);
    assert!(wide.time_series.dates[0] >= day("1970-01-01"));
    assert_eq!(
        *wide.time_series.dates.last().unwrap(),
        *full.time_series.dates.last().unwrap()
    );
    assert!(full.metadata.drawn.is_none(), "null without a window");
    for (query, needles) in [
        ("draw_from=2009-13-01", &["draw_from", "YYYY-MM-DD"][..]),
        ("draw_to=yesterday", &["draw_to", "YYYY-MM-DD"][..]),
        (
            "draw_from=2010-01-01&draw_to=2009-01-01",
            &["draw_from (2010-01-01) is after draw_to (2009-01-01)"][..],
        ),
    ] {
        api.analysis("^GSPC", query)
            .await
            .refused()
            .assert(400, needles);
    }
}

#[tokio::test]
async fn analysis_error_paths() {
    let s = Server::app().await;
    let api = s.api();
    let cases = [
        ("return_period=6", "return_period"),
        ("return_period=366", "return_period"),
        ("return_period=ninety", "return_period"),
        ("num_segments=9", "num_segments"),
        ("num_segments=51", "num_segments"),
        ("decay_factor=0.79", "decay_factor"),
        ("decay_factor=1", "decay_factor"),
        ("metric=alpha", "metric"),
        ("start_date=2020-02-30", "start_date"),
        ("end_date=31-12-2020", "end_date"),
        ("start_date=2010-01-01&end_date=2009-01-01", "start_date"),
    ];
    for (query, name) in cases {
        let got = api.analysis("^GSPC", query).await;
        got.refused().assert(400, &[name]);
    }
    api.analysis("NOPE", "")
        .await
        .refused()
        .assert(404, &["NOPE"]);
    api.analysis(INACTIVE_TICKERS[0], "")
        .await
        .refused()
        .assert(404, &[]);
    for t in SHORT_HISTORY_TICKERS {
        let got = api.analysis(t, "").await;
        got.refused().assert(422, &["300"]);
    }
    // A window shorter than 300 rows of a long history.
    api.analysis("^GSPC", "start_date=2015-06-01")
        .await
        .refused()
        .assert(422, &["300"]);
}

// End to end: the 413 is checked on a raw socket, before the body is sent.
#[tokio::test]
async fn every_error_is_json_detail() {
    let s = Server::start();
    s.api()
        .get::<Value>("/does-not-exist")
        .await
        .refused()
        .assert(404, &["/api/does-not-exist"]);
    let r = s
        .api_as(Auth::Anonymous)
        .send::<()>(Method::POST, "/assets", None)
        .await;
    let refusal = Api::typed::<Value>(r).await.refused();
    assert_eq!(refusal.status, 405);
    assert!(refusal.detail.is_some(), "a detail string: {refusal}");
    // A body over 1 MiB is refused from its Content-Length, before it is
    // read: speak raw HTTP so the client never races the early answer.
    use tokio::io::AsyncWriteExt;
    let addr = s.base.trim_start_matches("http://").to_string();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /auth/login HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        2 << 20
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    let text =
        common::raw_http::read_until_closed(&mut conn, std::time::Duration::from_secs(10)).await;
    assert!(text.starts_with("HTTP/1.1 413"), "{text:.200}");
    let body: Detail = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert!(body.detail.contains("larger"));
}

/// The OpenAPI document, as far as the test of it reads it (it is
/// utoipa's, not a type of the contract).
#[derive(Debug, Deserialize)]
struct Document {
    openapi: String,
    info: Info,
    /// Each path's operations by method (and its other fields).
    paths: BTreeMap<String, serde_json::Map<String, Value>>,
    components: Components,
}

#[derive(Debug, Deserialize)]
struct Info {
    version: String,
}

#[derive(Debug, Deserialize)]
struct Components {
    schemas: serde_json::Map<String, Value>,
}

#[tokio::test]
async fn openapi_covers_every_route() {
    let s = Server::app().await;
    let raw: Value = s.api().get("/openapi.json").await.unwrap();
    let doc: Document = serde_json::from_value(raw.clone()).unwrap();
    assert_eq!(doc.openapi, "3.1.0");
    assert_eq!(doc.info.version, "1.0.0");
    let paths = &doc.paths;
    for p in [
        "/api/health",
        "/api/assets",
        "/api/asset-info/{ticker}",
        "/api/analysis/{ticker}",
        "/api/openapi.json",
        "/api/ranking",
        "/api/backtest",
        "/api/strategies",
        "/api/admin/plugins",
        "/api/admin/plugins/activate",
        "/api/admin/plugins/rollback",
        "/api/admin/shadow",
        "/api/admin/shadow/{kind}",
    ] {
        assert!(paths.contains_key(p), "{p} undocumented");
    }
    // Walk the real router with every method on every documented path: a
    // documented operation is routed (never the "no route" fallback nor a
    // 405), and every method the document does not list for a path is a
    // 405 (no undocumented operation hides on a documented path). Routes
    // are only added through utoipa-axum's `routes!` (clippy forbids
    // `Router::route` in the HTTP crate), so no path can exist undocumented.
    let methods = ["get", "post", "put", "patch", "delete"];
    let mut operations = 0;
    for (p, item) in paths {
        let concrete = p
            .replace("{ticker}", "%5EGSPC")
            .replace("{kind}", "segmentation");
        for m in methods {
            let response = s
                .client()
                .request(m.to_uppercase().parse().unwrap(), s.url(&concrete))
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let detail = response
                .json::<Detail>()
                .await
                .map(|d| d.detail)
                .unwrap_or_default();
            // The method's presence among the path item's keys is the
            // subject here.
            if item.contains_key(m) {
                operations += 1;
                assert!(
                    status != 405 && !detail.starts_with("no route for"),
                    "{m} {p} is documented but not routed ({status} {detail})"
                );
            } else {
                assert_eq!(
                    status, 405,
                    "{m} {p} is routed but not documented ({detail})"
                );
            }
        }
    }
    assert!(operations >= 20, "only {operations} operations documented");
    // Every $ref resolves.
    let text = raw.to_string();
    for piece in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = &piece[..piece.find('"').unwrap()];
        assert!(
            doc.components.schemas.contains_key(name),
            "dangling $ref {name}"
        );
    }
}

#[tokio::test]
async fn a_misbehaving_engine_gets_clean_errors_and_the_server_keeps_serving() {
    let wasm = component("misbehave");
    let s = Server::app_with(
        common::fresh_db(),
        &[
            ("FORECAST_SEGMENTATION_WASM", wasm.to_str().unwrap()),
            ("FORECAST_PLUGIN_TIMEOUT_MS", "300"),
            ("FORECAST_PLUGIN_MEMORY_MB", "64"),
        ],
    )
    .await;
    let api = s.api();
    let label = "segmentation/misbehave@0.0.1-misbehave";
    // 7: endless loop → 504; 8: memory hog → 500; 9: panic → 500.
    api.analysis("^GSPC", "return_period=7&num_segments=11")
        .await
        .refused()
        .assert(504, &[label, "timed out"]);
    api.analysis("^GSPC", "return_period=8")
        .await
        .refused()
        .assert(500, &[label, "memory"]);
    let panicked = api.analysis("^GSPC", "return_period=9").await.refused();
    panicked.assert(500, &[label]);
    // A 500 names the plugin and its version, in one short line: no wasm
    // backtrace, no error chain, no host paths.
    let detail = panicked.detail.as_deref().unwrap();
    assert!(
        !detail.contains('\n')
            && detail.len() < 300
            && !detail.contains("backtrace")
            && !detail.contains("Caused by")
            && !detail.contains(".rs:"),
        "a 500's detail is one short line: {detail:?}"
    );
    // Still serving, with fresh instances.
    api.health("").await.unwrap();
    api.assets("category=Indices").await.unwrap();
    // The misbehaving engine answers "insufficient data" for other periods: it is reached again.
    api.analysis("^GSPC", "return_period=11")
        .await
        .refused()
        .assert(422, &[]);
    let d = admin(&s).diagnostics().await;
    assert_eq!(d.plugins[0].name, "misbehave");
}
