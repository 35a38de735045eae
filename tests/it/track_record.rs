//! Evidence and the grades' track record (issue 27), black-box: the
//! evidence in graded and live verdicts, an asset's grade history equal
//! to the verdict at each of its dates, and the universe record the
//! grading run stores, with every refusal naming its parameter.

use crate::common;

use chrono::Datelike;
use common::{sqlite_url, Server};
use forecast_api::track_record::{
    SourceFilter, TrackRecordResponse, UniverseTrackRecordResponse as Universe,
};
use forecast_domain::{Category, DataSource};
use forecast_testkit::{exactly, Api, Refusal};
use serde_json::Value;

/// A small universe with real and synthetic histories, graded by the CLI.
async fn graded_db(grade: bool) -> std::path::PathBuf {
    let db = common::fresh_db();
    let url = sqlite_url(&db);
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query(
        "UPDATE assets SET is_active = (id IN (SELECT MIN(id) FROM assets GROUP BY category)
             OR ticker IN ('^GSPC', '^IXIC', '^DJI', 'AAPL', 'MSFT', 'NVDA', 'AMZN', 'BTC-USD'))",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    if grade {
        common::grade_ok(&url);
    }
    db
}

/// Every row of an asset's grade history is the verdict with `end_date` at
/// its date (grade, score, median prediction); the realised return is the
/// simple return over the horizon, null while the horizon has not passed.
#[tokio::test]
async fn an_assets_grade_history_is_the_verdict_at_each_month_end() {
    let s = Server::app_with(graded_db(false).await, &[]).await;
    let api = s.api();
    let record = api.track_record("AAPL", "return_period=30").await.unwrap();
    let history = &record.history;
    assert!(history.len() > 100, "{} month-ends", history.len());
    assert_eq!(record.data_source, DataSource::Real);
    // Oldest first, each a month's last trading day.
    assert!(history.windows(2).all(|w| w[0].date < w[1].date
        && (w[0].date.year(), w[0].date.month()) != (w[1].date.year(), w[1].date.month())));
    // The latest rows wait for their horizon; older ones have theirs.
    assert!(history.last().unwrap().realised_return.is_none());
    assert!(history[0].realised_return.is_some());
    for i in [0, history.len() / 3, history.len() / 2, history.len() - 1] {
        let row = &history[i];
        let query = format!("return_period=30&end_date={}", row.date);
        let v = api.verdict("AAPL", &query).await.unwrap();
        assert_eq!(row.grade, v.grade.letter, "{}", row.date);
        assert_eq!(row.score as f32, v.grade.score as f32);
        assert_eq!(
            row.predicted_median_return as f32,
            v.current_state.median_return as f32
        );
    }
    // The per-letter summary counts the rows with a realised return.
    let realised = history
        .iter()
        .filter(|r| r.realised_return.is_some())
        .count();
    let counted: u32 = record.by_grade.iter().map(|g| g.count).sum();
    assert_eq!(counted as usize, realised);
    assert_eq!(record.by_grade[0].grade, "A");

    let refused = |r: Result<TrackRecordResponse, Refusal>| r.expect_err("a refusal");
    refused(api.track_record("AAPL", "return_period=400").await)
        .assert(400, &["return_period", "7", "365"]);
    refused(api.track_record("AAPL", "metric=alpha").await).assert(400, &["metric"]);
    refused(api.track_record("NOPE", "").await).assert(404, &["NOPE"]);
    let (status, _) = s.get_as("/api/track-record/AAPL", None).await;
    assert_eq!(status, 401);
}

/// Verdicts carry the current bucket's evidence, the same whether served
/// from the grading snapshot or computed live, and say when it is thin.
#[tokio::test]
async fn verdicts_carry_their_evidence_from_the_snapshot_and_live() {
    let s = Server::app_with(graded_db(true).await, &[]).await;
    let api = s.api();
    let cached = api.verdict("^GSPC", "return_period=90").await.unwrap();
    assert!(cached.metadata.from_cache);
    // The decay changes no evidence figure but is computed live.
    let live = api
        .verdict("^GSPC", "return_period=90&decay_factor=0.94")
        .await
        .unwrap();
    assert!(!live.metadata.from_cache);
    let segment = &cached.active_segment;
    let evidence = segment.evidence.as_ref().expect("the bucket's evidence");
    assert_eq!(Some(evidence), live.active_segment.evidence.as_ref());
    assert_eq!(
        segment.outcome_quantiles,
        live.active_segment.outcome_quantiles
    );
    let (episodes, days) = (evidence.episodes, segment.count);
    assert!(episodes >= 2 && episodes * 5 < days, "{episodes} of {days}");
    let ci = evidence.median_return_ci.expect("an interval");
    let median = segment.static_median_return.expect("a median");
    assert!(ci[0] <= median && median <= ci[1]);
    assert_eq!(segment.outcome_quantiles.as_ref().unwrap().p50, median);
    let state = cached
        .current_state
        .evidence
        .as_ref()
        .expect("the state's evidence");
    let u = state
        .unconditional_median_return
        .expect("the unconditional median");
    let thin = episodes < 10 || (ci[0] <= u && u <= ci[1]);
    assert_eq!(state.thin, thin);
    assert_eq!(state.reasons.is_empty(), !thin);
    assert_eq!(state.episodes, evidence.episodes);
}

/// The universe record comes from what the grading run stored: before any
/// run it is refused with 503; after one, its counts add up, it keeps real
/// and synthetic apart, is the same on every call, and names refused
/// parameters.
#[tokio::test]
async fn the_universe_record_is_stored_by_the_grading_run() {
    let before = Server::app_with(graded_db(false).await, &[]).await;
    let refused = before.api().universe_track_record("").await.unwrap_err();
    refused.assert(503, &["grading run"]);

    let s = Server::app_with(graded_db(true).await, &[]).await;
    let api = s.api();
    let (status, raw) = s.get("/api/track-record?return_period=30").await;
    assert_eq!(status, 200, "{raw}");
    let real: Universe = exactly(&raw);
    assert_eq!(real.source, SourceFilter::Real);
    assert_eq!(real.data_sources.synthetic, 0);
    assert!(real.assets >= 8);
    let counted: u32 = real.by_grade.iter().map(|g| g.count).sum();
    assert_eq!(counted, real.observations);
    assert!(counted > 1_000, "{counted} observations");
    for g in real.by_grade.iter().filter(|g| g.count > 50) {
        let ci = g.mean_ci.expect("an interval");
        let mean = g.mean_realised_return.expect("a mean");
        assert!(ci[0] <= mean && mean <= ci[1], "{g:?}");
    }
    assert!(real.ic.dates > 50);
    assert!((-1.0..=1.0).contains(&real.ic.mean.expect("an IC")));
    assert_eq!(real.ic_series.len(), real.ic.dates as usize);
    assert_eq!(real.block_months, 2);
    let calibration: u32 = real.calibration.iter().map(|b| b.count).sum();
    assert_eq!(calibration, counted);
    // The same run, the same numbers.
    assert_eq!(s.get("/api/track-record?return_period=30").await.1, raw);
    its_tables_as_csv_are_the_same_rows(&s, &real, counted).await;
    sources_and_categories_are_kept_apart(&api, &real).await;

    for (query, needles) in [
        ("return_period=45", &["return_period", "graded"][..]),
        ("source=fake", &["source", "fake"]),
        ("category=Gems", &["category"]),
        ("metric=alpha", &["metric"]),
    ] {
        let refused = api.universe_track_record(query).await.unwrap_err();
        refused.assert(400, needles);
    }
}

/// The CSV tables of `real` (`format=csv&table=…`) hold its rows.
async fn its_tables_as_csv_are_the_same_rows(s: &Server, real: &Universe, counted: u32) {
    let csv = |table: &str| {
        let path = format!("/api/track-record?return_period=30&format=csv&table={table}");
        async move { crate::exports::call(s, None, &path, None).await }
    };
    let (status, _, cd, text) = csv("by_grade").await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(cd, "attachment; filename=\"track-record-by_grade.csv\"");
    let t = crate::exports::rows(&text);
    assert_eq!(t[0][..3], ["grade", "count", "mean_realised_return"]);
    assert_eq!(t.len() - 1, real.by_grade.len());
    for (row, g) in t[1..].iter().zip(&real.by_grade) {
        assert_eq!(row[0], g.grade);
        assert_eq!(row[1].parse::<u32>().unwrap(), g.count);
        assert_eq!(row[2].parse::<f64>().ok(), g.mean_realised_return);
    }
    let (_, _, _, text) = csv("ic").await;
    assert_eq!(crate::exports::rows(&text).len() - 1, real.ic_series.len());
    let (_, _, _, text) = csv("calibration").await;
    let t = crate::exports::rows(&text);
    let counted_csv: u32 = t[1..].iter().map(|r| r[2].parse::<u32>().unwrap()).sum();
    assert_eq!(counted_csv, counted);
    let (status, _, _, text) = csv("nope").await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("by_grade, ic, calibration"), "{text}");
}

/// Synthetic histories have their own record, `all` both, a category its own.
async fn sources_and_categories_are_kept_apart(api: &Api, real: &Universe) {
    let record = |q: &'static str| async move { api.universe_track_record(q).await.unwrap() };
    let synthetic = record("return_period=30&source=synthetic").await;
    assert_eq!(synthetic.data_sources.real, 0);
    assert!(synthetic.assets >= 1);
    let generated = |u: &Universe| {
        u.notes
            .iter()
            .any(|n| n.contains("generated, not observed"))
    };
    assert!(generated(&synthetic), "{:?}", synthetic.notes);
    assert!(!generated(real), "{:?}", real.notes);
    let all = record("return_period=30&source=all").await;
    assert_eq!(all.assets, real.assets + synthetic.assets);
    let indices = record("return_period=30&category=Indices").await;
    assert_eq!(indices.category, Some(Category::Indices));
    assert!(indices.assets < real.assets);
}

/// Abuse: a flood of cold track-record queries (every graded horizon,
/// metric and source of the universe record, and twenty horizons of an
/// asset's history) against a budget of one heavy job with a short wait.
/// Each answer is a 200 or an early 503 with `Retry-After` and nothing
/// charged; the health check keeps answering; the server's resident memory
/// stays bounded.
#[tokio::test]
async fn a_flood_of_cold_track_records_waits_its_turn_in_the_heavy_budget() {
    let db = graded_db(true).await;
    let mut s = Server::start_with(
        db,
        &[
            ("FORECAST_HEAVY_SLOTS", "1"),
            ("FORECAST_HEAVY_WAIT_MS", "20"),
        ],
    );
    let pid = s.process().id();
    let key = common::test_key().to_string();
    let mut paths = Vec::new();
    for period in [7, 30, 90, 180, 365] {
        for metric in ["return", "sharpe", "sortino"] {
            for source in ["real", "synthetic", "all"] {
                paths.push(format!(
                    "/api/track-record?return_period={period}&metric={metric}&source={source}"
                ));
            }
        }
    }
    for period in (0..20).map(|i| 20 + 7 * i) {
        paths.push(format!("/api/track-record/%5EGSPC?return_period={period}"));
    }
    let flood: Vec<_> = paths
        .iter()
        .map(|p| {
            let (url, key) = (s.url(p), key.clone());
            tokio::spawn(async move {
                let r = reqwest::Client::new()
                    .get(url)
                    .bearer_auth(key)
                    .send()
                    .await
                    .expect("request");
                let status = r.status().as_u16();
                let retry = r.headers().get("retry-after").is_some();
                let body: Value = r.json().await.expect("JSON");
                (status, retry, body)
            })
        })
        .collect();
    let (health, _) = s.get_as("/api/health", None).await;
    assert_eq!(health, 200, "health during the flood");
    let (mut served, mut refused) = (0, 0);
    for run in flood {
        let (status, retry, body) = run.await.unwrap();
        match status {
            200 => served += 1,
            503 => {
                assert!(retry, "Retry-After on a refusal: {body}");
                let detail = body["detail"].as_str().unwrap();
                assert!(
                    detail.contains("heavy work") && detail.contains("nothing was charged"),
                    "{detail}"
                );
                refused += 1;
            }
            other => panic!("{other}: {body}"),
        }
    }
    assert!(
        served >= 1 && refused >= 1,
        "{served} served, {refused} refused"
    );
    let peak = common::peak_rss(pid);
    assert!(peak < 1_500_000_000, "peak resident memory {peak} bytes");
    // The budget is idle again: the same queries are answered.
    let (status, _) = s.get("/api/track-record?return_period=90&source=all").await;
    assert_eq!(status, 200);
}
