//! Plausible prices only (issue 25, item 2): `forecast ingest csv` refuses
//! implausible files whole, naming the line, the date and the rule, and
//! accepts a jump only when the operator forces it; an asset whose stored
//! history is far longer than ingest allows still analyses and is graded
//! (the engine gets the last `MAX_HISTORY_ROWS` rows) instead of failing.

use crate::common;

use std::path::Path;

use common::{cli, fresh_db, sqlite_url, Server};
use forecast::domain::defaults::MAX_HISTORY_ROWS;
use forecast::domain::DataSource;
use forecast::series::{from_days, to_days, PriceSeries};

/// AAPL's stored data version and series.
async fn aapl(db: &Path) -> (i64, PriceSeries) {
    let store = forecast::store::connect(&sqlite_url(db)).await.unwrap();
    let a = store.asset_by_ticker("AAPL").await.unwrap().unwrap();
    let s = store.load_series(a.id).await.unwrap().unwrap();
    store.close().await;
    (a.data_version, s)
}

#[tokio::test]
async fn implausible_files_are_refused_whole_naming_line_date_and_rule() {
    let db = fresh_db();
    let dir = tempfile::tempdir().unwrap();
    let before = aapl(&db).await;
    // AAPL's shipped history ends on 2013-03-01 at 56.137353.
    assert_eq!(
        from_days(*before.1.dates.last().unwrap()).to_string(),
        "2013-03-01"
    );
    let mut long = String::from("date,close\n");
    let first = to_days(chrono::NaiveDate::from_ymd_opt(1800, 1, 1).unwrap());
    for i in 0..=MAX_HISTORY_ROWS as i32 {
        long.push_str(&format!("{},1\n", from_days(first + i)));
    }
    let long_line = format!("line {}", MAX_HISTORY_ROWS + 2);
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            "date,close\n2024-01-02,60\n9999-12-31,61\n".into(),
            vec!["line 3", "9999-12-31", "date range rule"],
        ),
        (
            "date,close\n0001-01-01,60\n".into(),
            vec!["line 2", "0001-01-01", "date range rule"],
        ),
        (
            "date,close\n2024-01-02,60\n2024-01-03,1e308\n".into(),
            vec!["line 3", "2024-01-03", "price range rule"],
        ),
        (
            "date,close\n2024-01-02,1e-320\n".into(),
            vec!["line 2", "2024-01-02", "price range rule"],
        ),
        // 600 after the stored 56.14: a jump against the stored history.
        (
            "date,close\n2024-01-03,601\n2024-01-02,600\n".into(),
            vec![
                "line 3",
                "2024-01-02",
                "2013-03-01",
                "jump rule",
                "--allow-jumps",
            ],
        ),
        (long, vec![long_line.as_str(), "length rule"]),
    ];
    let file = dir.path().join("AAPL.csv");
    for (text, needles) in &cases {
        std::fs::write(&file, text).unwrap();
        let (ok, stdout, stderr) = cli(&db, &["ingest", "csv", file.to_str().unwrap()]);
        assert!(!ok, "refused: {stdout}");
        for needle in needles {
            assert!(stdout.contains(needle), "{needle}: {stdout} {stderr}");
        }
        assert!(stderr.contains("nothing of them was written"), "{stderr}");
        assert_eq!(aapl(&db).await, before, "nothing written for {needles:?}");
    }

    // The operator forces the jump: written, both rows.
    std::fs::write(&file, &cases[4].0).unwrap();
    let (ok, stdout, stderr) = cli(
        &db,
        &["ingest", "csv", file.to_str().unwrap(), "--allow-jumps"],
    );
    assert!(ok, "{stdout} {stderr}");
    let (version, series) = aapl(&db).await;
    assert_eq!(version, before.0 + 1);
    assert_eq!(series.len(), before.1.len() + 2);
    assert_eq!(series.closes.last(), Some(&601.0));
}

/// Two million daily rows from 1800 on, written to AAPL through the store
/// as no ingest would (the engine's 256 MiB ran out on these); the series.
async fn store_two_million_rows(db: &Path) -> PriceSeries {
    const ROWS: usize = 2_000_000;
    let first = to_days(chrono::NaiveDate::from_ymd_opt(1800, 1, 1).unwrap());
    let series = PriceSeries {
        dates: (0..ROWS as i32).map(|i| first + i).collect(),
        closes: (0..ROWS)
            .map(|i| 100.0 * (1.0 + 0.3 * (i as f64 / 400.0).sin()))
            .collect(),
    };
    let store = forecast::store::connect(&sqlite_url(db)).await.unwrap();
    let id = store.asset_by_ticker("AAPL").await.unwrap().unwrap().id;
    store
        .store_series(&[(id, &series, DataSource::Ingested)])
        .await
        .unwrap();
    store.close().await;
    series
}

#[tokio::test]
async fn a_stored_history_of_two_million_rows_analyses_without_500() {
    let s = Server::app().await;
    let series = store_two_million_rows(&s.db).await;
    let kept_from = from_days(series.dates[series.len() - MAX_HISTORY_ROWS]).to_string();
    for path in [
        "/api/analysis/AAPL",
        "/api/analysis/AAPL?return_period=30&num_segments=10",
    ] {
        let (status, v) = s.get(path).await;
        assert_eq!(status, 200, "{path}: {v}");
        let m = &v["metadata"];
        assert_eq!(m["time_series_rows"], MAX_HISTORY_ROWS, "{m}");
        assert_eq!(m["start_date"], kept_from.as_str(), "the last rows: {m}");
    }
    let (status, v) = s.get("/api/analysis/AAPL/verdict").await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["metadata"]["data_points"], MAX_HISTORY_ROWS, "{v}");
}

/// A backtest hands the engine the same last rows: a universe holding the
/// two-million-row history is answered 200 (the whole history broke the
/// engine's memory cap, and with it every backtest of such a universe).
#[tokio::test]
async fn a_stored_history_of_two_million_rows_is_backtested_without_500() {
    let s = Server::app().await;
    store_two_million_rows(&s.db).await;
    let r = s
        .client()
        .post(s.url("/api/backtest"))
        .bearer_auth(common::test_key())
        .json(&serde_json::json!({
            "tickers": ["AAPL", "MSFT"], "top_n": 1, "start_date": "2000-01-01"
        }))
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    let v: serde_json::Value = r.json().await.expect("JSON");
    assert_eq!(status, 200, "{v}");
    // Both assets were used: AAPL's last 60,000 rows, not a failed engine.
    assert_eq!(
        v["metadata"]["unusable_assets_count"], 0,
        "{}",
        v["metadata"]
    );
}

#[tokio::test]
async fn a_stored_history_of_two_million_rows_is_graded() {
    let db = fresh_db();
    let url = sqlite_url(&db);
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query("UPDATE assets SET is_active = (ticker = 'AAPL')")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    store_two_million_rows(&db).await;
    let (ok, stdout, stderr) = common::grade(&url, &[]);
    assert!(ok, "{stdout} {stderr}");
    assert!(stdout.contains("1 assets graded here"), "{stdout}");
    let s = Server::app_with(db, &[]).await;
    let (status, v) = s.get("/api/analysis/AAPL/verdict").await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["metadata"]["from_cache"], true, "graded: {v}");
    assert_eq!(v["metadata"]["data_points"], MAX_HISTORY_ROWS, "{v}");
}
