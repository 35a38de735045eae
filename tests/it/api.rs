//! The HTTP API with the demo universe: every endpoint, every spec field
//! with its type, and every error path. In process (`Server::app`), except
//! the raw-HTTP body-limit check, which needs a socket.

use crate::common;

use common::{assert_error, component, Server};
use forecast::demo::{INACTIVE_TICKERS, SHORT_HISTORY_TICKERS};
use serde_json::{json, Value};

/// A JSON type check.
type Check = fn(&Value) -> bool;

fn is_num(v: &Value) -> bool {
    v.is_number()
}

fn is_num_or_null(v: &Value) -> bool {
    v.is_number() || v.is_null()
}

/// Asserts `obj[field]` exists and passes `check`.
fn field<'a>(obj: &'a Value, name: &str, check: Check) -> &'a Value {
    let v = obj
        .get(name)
        .unwrap_or_else(|| panic!("missing field {name} in {obj:.300}"));
    assert!(check(v), "field {name} has the wrong type: {v:.200}");
    v
}

#[tokio::test]
async fn health_and_diagnostics() {
    let s = Server::app().await;
    let (status, body) = s.get("/api/health").await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "ok");
    assert_eq!(body["service"], "svc-api");
    assert!(body.get("debug").is_none());

    let (_, debug) = s.debug_health().await;
    let d = &debug["debug"];
    assert_eq!(d["database"]["reachable"], true);
    assert_eq!(d["database"]["backend"], "sqlite");
    assert_eq!(d["database"]["counts"]["assets"], 3232);
    let plugins = d["plugins"].as_array().unwrap();
    assert!(plugins.iter().any(|p| p["kind"] == "segmentation"
        && p["version"] == "1.1.0"
        && p["sha256"].as_str().unwrap().len() == 64));

    assert_error(&s.get("/api/health?debug=2").await, 400, &["debug"]);
    // The details are an operator's: without the admin token (anonymous,
    // or a user's key) debug=1 answers the plain body.
    for key in [None, Some(common::test_key())] {
        let (status, plain) = s.get_as("/api/health?debug=1", key).await;
        assert_eq!(status, 200);
        assert_eq!(plain, json!({ "status": "ok", "service": "svc-api" }));
    }
}

#[tokio::test]
async fn asset_catalog_and_category_filter() {
    let s = Server::app().await;
    let (status, all) = s.get("/api/assets").await;
    assert_eq!(status, 200);
    let assets = all["assets"].as_array().unwrap();
    assert_eq!(all["total"].as_u64().unwrap() as usize, assets.len());
    assert_eq!(
        assets.len(),
        3232 - INACTIVE_TICKERS.len(),
        "every active asset"
    );
    for a in assets.iter().take(50) {
        field(a, "id", Value::is_i64);
        field(a, "ticker", Value::is_string);
        field(a, "name", Value::is_string);
        field(a, "category", Value::is_string);
    }
    let tickers: Vec<&str> = assets
        .iter()
        .map(|a| a["ticker"].as_str().unwrap())
        .collect();
    for t in INACTIVE_TICKERS {
        assert!(!tickers.contains(t), "inactive {t} listed");
    }
    let gspc = assets.iter().find(|a| a["ticker"] == "^GSPC").unwrap();
    assert_eq!(gspc["data_source"], "real");
    let aapl = assets.iter().find(|a| a["ticker"] == "AAPL").unwrap();
    assert_eq!(aapl["data_source"], "real", "AAPL ships a real history");
    let btc = assets.iter().find(|a| a["ticker"] == "BTC-USD").unwrap();
    assert_eq!(btc["data_source"], "synthetic", "synthetic data is flagged");
    let real = assets.iter().filter(|a| a["data_source"] == "real").count();
    assert_eq!(real, 78, "every shipped real history is served as real");

    let (status, crypto) = s.get("/api/assets?category=Crypto").await;
    assert_eq!(status, 200);
    let crypto = crypto["assets"].as_array().unwrap();
    assert!(!crypto.is_empty());
    assert!(crypto.iter().all(|a| a["category"] == "Crypto"));
    let (_, cs2) = s.get("/api/assets?category=CS2%20Cases").await;
    assert!(cs2["total"].as_u64().unwrap() > 0);

    assert_error(
        &s.get("/api/assets?category=Stonks").await,
        400,
        &["unknown category", "Stonks"],
    );
}

#[tokio::test]
async fn asset_info_is_cached() {
    let s = Server::app().await;
    let (status, first) = s.get("/api/asset-info/AAPL").await;
    assert_eq!(status, 200);
    for f in [
        "ticker",
        "name",
        "category",
        "long_name",
        "sector",
        "industry",
        "summary",
        "logo_url",
        "exchange",
        "currency",
        "website",
    ] {
        field(&first, f, Value::is_string);
    }
    field(&first, "market_cap", Value::is_i64);
    assert_eq!(first["from_cache"], false);
    assert_eq!(first["data_source"], "real");
    let (_, second) = s.get("/api/asset-info/AAPL").await;
    assert_eq!(second["from_cache"], true);
    assert_eq!(second["summary"], first["summary"]);

    assert_error(&s.get("/api/asset-info/NOPE").await, 404, &["NOPE"]);
    assert_error(
        &s.get(&format!("/api/asset-info/{}", INACTIVE_TICKERS[0]))
            .await,
        404,
        &[],
    );
}

/// Every field of the spec's AnalysisResponse, with its type.
fn assert_analysis_shape(a: &Value, rows: usize, segments: usize) {
    field(a, "ticker", Value::is_string);
    field(a, "name", Value::is_string);
    field(a, "category", Value::is_string);
    assert_current_state_and_signals_shape(a);
    assert_time_series_shape(a, rows);
    assert_segments_shape(a, segments);
    assert_distribution_scatter_and_paths_shape(a, segments);
    assert_metadata_shape(a, rows, segments);
}

/// `current_state` and `signals`, the latter the former's signals.
fn assert_current_state_and_signals_shape(a: &Value) {
    let cs = field(a, "current_state", Value::is_object);
    for f in [
        "price",
        "drawdown",
        "expected_return",
        "prediction_error",
        "median_return",
        "median_error",
        "best_error",
    ] {
        field(cs, f, is_num);
    }
    field(cs, "segment", Value::is_u64);
    field(cs, "confirmed_count", Value::is_u64);
    field(cs, "insufficient_data", Value::is_boolean);
    let best = field(cs, "best_method", Value::is_string);
    assert!(best == "ema" || best == "median");
    let dd = cs["drawdown"].as_f64().unwrap();
    assert!((-1.0..=0.0).contains(&dd));

    let sig = field(a, "signals", Value::is_object);
    for f in [
        "expected_return",
        "prediction_error",
        "median_return",
        "median_error",
        "best_error",
    ] {
        assert_eq!(field(sig, f, is_num), &cs[f]);
    }
    assert_eq!(sig["best_method"], cs["best_method"]);
}

/// `time_series`: every array dense, `rows` long.
fn assert_time_series_shape(a: &Value, rows: usize) {
    let ts = field(a, "time_series", Value::is_object);
    let arrays: [(&str, Check); 11] = [
        ("dates", Value::is_string),
        ("prices", is_num),
        ("drawdowns", is_num),
        ("expected_returns", is_num),
        ("prediction_errors", is_num_or_null),
        ("prediction_error_cumavg", is_num_or_null),
        ("actual_returns", is_num_or_null),
        ("median_returns", is_num),
        ("median_errors", is_num_or_null),
        ("median_error_cumavg", is_num_or_null),
        ("projected_prices", is_num_or_null),
    ];
    for (name, check) in arrays {
        let arr = field(ts, name, Value::is_array).as_array().unwrap();
        assert_eq!(arr.len(), rows, "time_series.{name} is dense");
        assert!(arr.iter().all(check), "time_series.{name} item types");
    }
    let first_date = ts["dates"][0].as_str().unwrap();
    assert!(chrono::NaiveDate::parse_from_str(first_date, "%Y-%m-%d").is_ok());
}

/// `segments`: `segments` of them, in order.
fn assert_segments_shape(a: &Value, segments: usize) {
    let segs = field(a, "segments", Value::is_array).as_array().unwrap();
    assert_eq!(segs.len(), segments);
    for (i, g) in segs.iter().enumerate() {
        assert_eq!(g["segment_idx"].as_u64().unwrap() as usize, i);
        field(g, "lower_bound", is_num);
        field(g, "upper_bound", is_num);
        field(g, "count", Value::is_u64);
        for f in [
            "expected_return",
            "avg_return",
            "median_return",
            "static_median_return",
            "max_loss",
            "win_rate",
        ] {
            field(g, f, is_num_or_null);
        }
        let q = field(g, "outcome_quantiles", |v| v.is_object() || v.is_null());
        if q.is_object() {
            for p in ["p10", "p25", "p50", "p75", "p90"] {
                field(q, p, is_num);
            }
        }
    }
}

/// `return_distribution`, `scatter_data` and `segment_paths`.
fn assert_distribution_scatter_and_paths_shape(a: &Value, segments: usize) {
    let dist = field(a, "return_distribution", Value::is_object);
    let bins = field(dist, "bins", Value::is_array).as_array().unwrap();
    let counts = field(dist, "counts", Value::is_array).as_array().unwrap();
    assert_eq!(bins.len(), counts.len() + 1);
    assert!(counts.iter().all(Value::is_u64));
    let scatter = field(a, "scatter_data", Value::is_array)
        .as_array()
        .unwrap();
    assert!(scatter.len() <= 1000);
    for p in scatter.iter().take(10) {
        field(p, "drawdown", is_num);
        field(p, "future_return", is_num);
        field(p, "segment", Value::is_u64);
    }
    let paths = field(a, "segment_paths", Value::is_object)
        .as_object()
        .unwrap();
    assert!(!paths.is_empty());
    for (key, p) in paths {
        assert!(key.parse::<usize>().unwrap() < segments);
        field(p, "paths", Value::is_array);
        for q in ["p10", "p25", "p50", "p75", "p90"] {
            field(p, q, Value::is_array);
        }
        field(p, "num_paths_total", Value::is_u64);
    }
}

/// `metadata`, its counts those of the answer.
fn assert_metadata_shape(a: &Value, rows: usize, segments: usize) {
    let m = field(a, "metadata", Value::is_object);
    field(m, "return_period", Value::is_u64);
    assert_eq!(
        field(m, "num_segments", Value::is_u64).as_u64().unwrap() as usize,
        segments
    );
    field(m, "decay_factor", is_num);
    let at = field(m, "calculated_at", Value::is_string)
        .as_str()
        .unwrap();
    assert!(
        chrono::DateTime::parse_from_rfc3339(at).is_ok(),
        "calculated_at {at}"
    );
    field(m, "from_cache", Value::is_boolean);
    assert_eq!(
        field(m, "data_points", Value::is_u64).as_u64().unwrap() as usize,
        rows
    );
    field(m, "asset_id", Value::is_i64);
    field(m, "engine_version", Value::is_string);
    field(m, "data_source", Value::is_string);
    field(m, "metric", Value::is_string);
    field(m, "periods_per_year", Value::is_u64);
    assert_eq!(
        field(m, "time_series_rows", Value::is_u64)
            .as_u64()
            .unwrap() as usize,
        rows
    );
    assert!(field(m, "max_points", Value::is_null).is_null());
}

#[tokio::test]
async fn analysis_defaults_are_cached_and_custom_parameters_computed_live() {
    let s = Server::app().await;
    let (status, first) = s.get("/api/analysis/%5EGSPC").await;
    assert_eq!(status, 200, "{first:.300}");
    assert_analysis_shape(&first, 16_607, 20);
    assert_eq!(first["metadata"]["from_cache"], false);
    assert_eq!(first["metadata"]["data_source"], "real");
    assert_eq!(first["metadata"]["return_period"], 90);
    assert_eq!(first["metadata"]["periods_per_year"], 252);

    let (_, second) = s
        .get("/api/analysis/%5EGSPC?return_period=90&metric=return")
        .await;
    assert_eq!(second["metadata"]["from_cache"], true);
    assert_eq!(second["current_state"], first["current_state"]);
    assert_eq!(second["time_series"], first["time_series"]);
    assert_eq!(
        second["metadata"]["calculated_at"],
        first["metadata"]["calculated_at"]
    );

    // Custom parameters are computed live every time.
    for _ in 0..2 {
        let (status, custom) = s.get("/api/analysis/%5EGSPC?return_period=45&num_segments=30&decay_factor=0.9&metric=sharpe").await;
        assert_eq!(status, 200);
        assert_analysis_shape(&custom, 16_607, 30);
        assert_eq!(custom["metadata"]["from_cache"], false);
        assert_eq!(custom["metadata"]["metric"], "sharpe");
        assert!(custom["time_series"]["projected_prices"]
            .as_array()
            .unwrap()
            .iter()
            .all(Value::is_null));
    }

    // A date window narrows the rows.
    let (status, window) = s
        .get("/api/analysis/%5EGSPC?start_date=2005-01-01&end_date=2010-12-31")
        .await;
    assert_eq!(status, 200);
    assert_eq!(window["metadata"]["from_cache"], false);
    assert_eq!(window["metadata"]["start_date"], "2005-01-03");
    assert_eq!(window["metadata"]["end_date"], "2010-12-31");
    let rows = window["time_series"]["dates"].as_array().unwrap().len();
    assert!(rows > 1400 && rows < 1600, "{rows}");

    // Crypto trades on weekends: 365 periods a year.
    let (_, btc) = s.get("/api/analysis/BTC-USD?return_period=30").await;
    assert_eq!(btc["metadata"]["periods_per_year"], 365);
    assert_eq!(btc["metadata"]["data_source"], "synthetic");
}

/// Issue 24: each bucket's box is drawn from the quantiles of all its
/// outcomes (its median is the table's), and `max_points` thins the series
/// for drawing without changing anything else.
#[tokio::test]
async fn bucket_quantiles_are_all_outcomes_and_max_points_thins_only_the_series() {
    let s = Server::app().await;
    for (path, segments) in [
        ("/api/analysis/%5EGSPC", 20),
        ("/api/analysis/AAPL", 20),
        ("/api/analysis/AAPL?num_segments=37&return_period=30", 37),
        ("/api/analysis/%5EGSPC?metric=sortino&return_period=7", 20),
        ("/api/analysis/BTC-USD?start_date=2019-01-01", 20),
    ] {
        let (status, a) = s.get(path).await;
        assert_eq!(status, 200, "{path}: {a:.300}");
        assert_bucket_quantiles_are_of_all_outcomes(path, &a, segments);
    }

    let again = a_cache_entry_before_the_evidence_is_recomputed(&s).await;

    // max_points: the same answer but the series, thinned to real rows.
    let (_, full) = s.get("/api/analysis/%5EGSPC").await;
    assert_eq!(full["metadata"]["from_cache"], true);
    // The cached answer is the live one, to the last digit (floats read
    // back from the cache round-trip exactly).
    for key in [
        "time_series",
        "segments",
        "current_state",
        "return_distribution",
    ] {
        assert_eq!(full[key], again[key], "{key}: cached vs live");
    }
    let rows = full["time_series"]["dates"].as_array().unwrap().len();
    assert_eq!(rows, 16_607);
    let full_bytes = serde_json::to_vec(&full).unwrap().len();
    for max in [100usize, 1500, 20_000] {
        let (status, thin) = s
            .get(&format!("/api/analysis/%5EGSPC?max_points={max}"))
            .await;
        assert_eq!(status, 200);
        assert_thinned_to_real_rows(&thin, &full, max, rows);
        let bytes = serde_json::to_vec(&thin).unwrap().len();
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
    assert!(web["time_series"]["dates"].as_array().unwrap().len() <= 1500);
    assert_eq!(
        s.get("/api/analysis/%5EGSPC/verdict?max_points=5").await.0,
        200
    );
    for bad in ["99", "20001", "0", "many", "1e9", "1500.5"] {
        assert_error(
            &s.get(&format!("/api/analysis/%5EGSPC?max_points={bad}"))
                .await,
            400,
            &["max_points", "between 100 and 20000"],
        );
    }
    zoomed_windows_are_every_row_of_the_window(&s, &full).await;
}

/// Each bucket's quantiles are those of every confirmed outcome in it,
/// bucketed by its start row's drawdown on the final grid, as the engine
/// does; its p50 is the table's median.
fn assert_bucket_quantiles_are_of_all_outcomes(path: &str, a: &Value, segments: usize) {
    let segs = a["segments"].as_array().unwrap();
    assert_eq!(segs.len(), segments);
    let ts = &a["time_series"];
    let width = -segs[0]["lower_bound"].as_f64().unwrap();
    let mut outcomes = vec![Vec::new(); segments];
    for (d, y) in ts["drawdowns"]
        .as_array()
        .unwrap()
        .iter()
        .zip(ts["actual_returns"].as_array().unwrap())
    {
        if let Some(y) = y.as_f64() {
            let x = -d.as_f64().unwrap() / width;
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
        let q = &g["outcome_quantiles"];
        let median = &g["static_median_return"];
        if ys.is_empty() {
            assert!(q.is_null() && median.is_null(), "{path}: {g}");
            continue;
        }
        with_outcomes += 1;
        assert_eq!(
            q["p50"], *median,
            "{path} bucket {}: the box's median is the table's",
            g["segment_idx"]
        );
        ys.sort_by(f64::total_cmp);
        let at = |p: f64| {
            let pos = p * (ys.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            ys[lo] + (ys[hi] - ys[lo]) * (pos - lo as f64)
        };
        for (name, p) in [
            ("p10", 0.1),
            ("p25", 0.25),
            ("p50", 0.5),
            ("p75", 0.75),
            ("p90", 0.9),
        ] {
            let got = q[name].as_f64().unwrap();
            assert!(
                (got - at(p)).abs() < 1e-12,
                "{path} {name}: {got} vs {}",
                at(p)
            );
        }
        let vals: Vec<f64> = ["p10", "p25", "p50", "p75", "p90"]
            .iter()
            .map(|k| q[*k].as_f64().unwrap())
            .collect();
        assert!(vals.windows(2).all(|w| w[0] <= w[1]), "{path}: {vals:?}");
    }
    assert!(
        with_outcomes >= 3,
        "{path}: {with_outcomes} buckets with outcomes"
    );
}

/// An entry cached in the format before the evidence (v2) is not served:
/// the answer recomputed.
async fn a_cache_entry_before_the_evidence_is_recomputed(s: &Server) -> Value {
    let (_, fresh) = s.get("/api/analysis/%5EGSPC").await;
    assert_eq!(fresh["metadata"]["from_cache"], true);
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
    let (_, again) = s.get("/api/analysis/%5EGSPC").await;
    assert_eq!(again["metadata"]["from_cache"], false, "recomputed");
    assert!(again["segments"][0]["outcome_quantiles"].is_object());
    assert!(again["current_state"]["evidence"].is_object());
    again
}

/// `thin`, the answer with `max_points=max`, is `full` but for its series:
/// the same real rows of every array, at most `max`, with the lines'
/// extremes kept.
fn assert_thinned_to_real_rows(thin: &Value, full: &Value, max: usize, rows: usize) {
    let m = &thin["metadata"];
    assert_eq!(m["max_points"], max);
    assert_eq!(m["time_series_rows"], rows);
    assert_eq!(m["data_points"], rows);
    assert_eq!(m["from_cache"], true, "thinned after the cache");
    for key in [
        "ticker",
        "current_state",
        "signals",
        "segments",
        "return_distribution",
        "scatter_data",
        "segment_paths",
    ] {
        assert_eq!(thin[key], full[key], "{key} is computed on all rows");
    }
    let ts = &thin["time_series"];
    let dates = ts["dates"].as_array().unwrap();
    let kept = dates.len();
    assert!(
        kept <= max.min(rows) && kept >= max.min(rows) / 2,
        "{kept} of {max}"
    );
    // The same rows of every array, each a real row of the full series.
    let full_ts = &full["time_series"];
    let index: std::collections::HashMap<&str, usize> = full_ts["dates"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, d)| (d.as_str().unwrap(), i))
        .collect();
    let picked: Vec<usize> = dates.iter().map(|d| index[d.as_str().unwrap()]).collect();
    assert!(picked.windows(2).all(|w| w[0] < w[1]));
    assert_eq!((picked[0], *picked.last().unwrap()), (0, rows - 1));
    for (name, column) in ts.as_object().unwrap() {
        let column = column.as_array().unwrap();
        assert_eq!(column.len(), kept, "{name}");
        let whole = full_ts[name].as_array().unwrap();
        for (j, &i) in picked.iter().enumerate() {
            assert_eq!(column[j], whole[i], "{name} row {i}");
        }
    }
    // The lines keep their extremes.
    let extreme = |v: &Value, f: fn(f64, f64) -> f64, start: f64| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .fold(start, f)
    };
    for (name, f, start) in [
        ("prices", f64::min as fn(f64, f64) -> f64, f64::INFINITY),
        ("prices", f64::max, f64::NEG_INFINITY),
        ("drawdowns", f64::min, f64::INFINITY),
    ] {
        assert_eq!(
            extreme(&ts[name], f, start),
            extreme(&full_ts[name], f, start),
            "{name}"
        );
    }
}

/// `draw_from`/`draw_to`: the rows of the window only, every one of them
/// up to `max_points`, the statistics unchanged (a zoomed chart).
async fn zoomed_windows_are_every_row_of_the_window(s: &Server, full: &Value) {
    let full: forecast_api::analysis::AnalysisResponse =
        serde_json::from_value(full.clone()).unwrap();
    let day = |d: &str| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap();
    let (from, to) = (day("2008-01-01"), day("2009-12-31"));
    let inside: Vec<usize> = (0..full.time_series.dates.len())
        .filter(|&i| (from..=to).contains(&full.time_series.dates[i]))
        .collect();
    assert!(inside.len() > 450, "{}", inside.len());
    let (status, body) = s
        .get("/api/analysis/%5EGSPC?draw_from=2008-01-01&draw_to=2009-12-31&max_points=1500")
        .await;
    assert_eq!(status, 200, "{body}");
    let zoomed: forecast_api::analysis::AnalysisResponse = serde_json::from_value(body).unwrap();
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
    let (_, body) = s
        .get("/api/analysis/%5EGSPC?draw_from=1970-01-01&max_points=100")
        .await;
    let wide: forecast_api::analysis::AnalysisResponse = serde_json::from_value(body).unwrap();
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
        assert_error(
            &s.get(&format!("/api/analysis/%5EGSPC?{query}")).await,
            400,
            needles,
        );
    }
}

#[tokio::test]
async fn analysis_error_paths() {
    let s = Server::app().await;
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
        let got = s.get(&format!("/api/analysis/%5EGSPC?{query}")).await;
        assert_error(&got, 400, &[name]);
    }
    assert_error(&s.get("/api/analysis/NOPE").await, 404, &["NOPE"]);
    assert_error(
        &s.get(&format!("/api/analysis/{}", INACTIVE_TICKERS[0]))
            .await,
        404,
        &[],
    );
    for t in SHORT_HISTORY_TICKERS {
        assert_error(&s.get(&format!("/api/analysis/{t}")).await, 422, &["300"]);
    }
    // A window shorter than 300 rows of a long history.
    assert_error(
        &s.get("/api/analysis/%5EGSPC?start_date=2015-06-01").await,
        422,
        &["300"],
    );
}

// End to end: the 413 is checked on a raw socket, before the body is sent.
#[tokio::test]
async fn every_error_is_json_detail() {
    let s = Server::start();
    assert_error(
        &s.get("/api/does-not-exist").await,
        404,
        &["/api/does-not-exist"],
    );
    let r = s.client().post(s.url("/api/assets")).send().await.unwrap();
    assert_eq!(r.status(), 405);
    let body: Value = r.json().await.unwrap();
    assert!(body["detail"].is_string());
    // A body over 1 MiB is refused from its Content-Length, before it is
    // read: speak raw HTTP so the client never races the early answer.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = s.base.trim_start_matches("http://").to_string();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /auth/login HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        2 << 20
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        conn.read_to_end(&mut raw),
    )
    .await;
    let text = String::from_utf8_lossy(&raw);
    assert!(text.starts_with("HTTP/1.1 413"), "{text:.200}");
    let body: Value = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert!(body["detail"].as_str().unwrap().contains("larger"));
}

#[tokio::test]
async fn openapi_covers_every_route() {
    let s = Server::app().await;
    let (status, doc) = s.get("/api/openapi.json").await;
    assert_eq!(status, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], "1.0.0");
    let paths = doc["paths"].as_object().unwrap();
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
            let body: Value = response.json().await.unwrap_or(Value::Null);
            let detail = body["detail"].as_str().unwrap_or("");
            if item.get(m).is_some() {
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
    let text = doc.to_string();
    for piece in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = &piece[..piece.find('"').unwrap()];
        assert!(
            doc["components"]["schemas"].get(name).is_some(),
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
    let label = "segmentation/misbehave@0.0.1-misbehave";
    // 7: endless loop → 504; 8: memory hog → 500; 9: panic → 500.
    assert_error(
        &s.get("/api/analysis/%5EGSPC?return_period=7&num_segments=11")
            .await,
        504,
        &[label, "timed out"],
    );
    assert_error(
        &s.get("/api/analysis/%5EGSPC?return_period=8").await,
        500,
        &[label, "memory"],
    );
    let panicked = s.get("/api/analysis/%5EGSPC?return_period=9").await;
    assert_error(&panicked, 500, &[label]);
    // A 500 names the plugin and its version, in one short line: no wasm
    // backtrace, no error chain, no host paths.
    let detail = panicked.1["detail"].as_str().unwrap();
    assert!(
        !detail.contains('\n')
            && detail.len() < 300
            && !detail.contains("backtrace")
            && !detail.contains("Caused by")
            && !detail.contains(".rs:"),
        "a 500's detail is one short line: {detail:?}"
    );
    // Still serving, with fresh instances.
    let (status, _) = s.get("/api/health").await;
    assert_eq!(status, 200);
    let (status, _) = s.get("/api/assets?category=Indices").await;
    assert_eq!(status, 200);
    // The misbehaving engine answers "insufficient data" for other periods: it is reached again.
    assert_error(
        &s.get("/api/analysis/%5EGSPC?return_period=11").await,
        422,
        &[],
    );
    let (_, debug) = s.debug_health().await;
    assert_eq!(debug["debug"]["plugins"][0]["name"], "misbehave");
}
