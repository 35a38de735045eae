//! Evidence and the grades' track record (issue 27), black-box: the
//! evidence in graded and live verdicts, an asset's grade history equal
//! to the verdict at each of its dates, and the universe record the
//! grading run stores, with every refusal naming its parameter.

use crate::common;

use common::{assert_error, f, sqlite_url, Server};
use serde_json::Value;

/// The sum of `count` over the rows of the array `rows`.
fn total_count(rows: &Value) -> u64 {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|row| row["count"].as_u64().unwrap())
        .sum()
}

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
    let (status, body) = s.get("/api/track-record/AAPL?return_period=30").await;
    assert_eq!(status, 200, "{body}");
    let history = body["history"].as_array().unwrap();
    assert!(history.len() > 100, "{} month-ends", history.len());
    assert_eq!(body["data_source"], "real");
    // Oldest first, each a month's last trading day.
    let dates: Vec<&str> = history
        .iter()
        .map(|r| r["date"].as_str().unwrap())
        .collect();
    assert!(dates
        .windows(2)
        .all(|w| w[0] < w[1] && w[0][..7] != w[1][..7]));
    // The latest rows wait for their horizon; older ones have theirs.
    assert!(history.last().unwrap()["realised_return"].is_null());
    assert!(history[0]["realised_return"].is_number());
    for i in [0, history.len() / 3, history.len() / 2, history.len() - 1] {
        let row = &history[i];
        let (status, v) = s
            .get(&format!(
                "/api/analysis/AAPL/verdict?return_period=30&end_date={}",
                row["date"].as_str().unwrap()
            ))
            .await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(row["grade"], v["grade"]["letter"], "{row}");
        assert_eq!(f(&row["score"]) as f32, f(&v["grade"]["score"]) as f32);
        assert_eq!(
            f(&row["predicted_median_return"]) as f32,
            f(&v["current_state"]["median_return"]) as f32
        );
    }
    // The per-letter summary counts the rows with a realised return.
    let realised = history
        .iter()
        .filter(|r| r["realised_return"].is_number())
        .count();
    let counted: u64 = total_count(&body["by_grade"]);
    assert_eq!(counted as usize, realised);
    assert_eq!(body["by_grade"][0]["grade"], "A");

    assert_error(
        &s.get("/api/track-record/AAPL?return_period=400").await,
        400,
        &["return_period", "7", "365"],
    );
    assert_error(
        &s.get("/api/track-record/AAPL?metric=alpha").await,
        400,
        &["metric"],
    );
    assert_error(&s.get("/api/track-record/NOPE").await, 404, &["NOPE"]);
    let (status, _) = s.get_as("/api/track-record/AAPL", None).await;
    assert_eq!(status, 401);
}

/// Verdicts carry the current bucket's evidence, the same whether served
/// from the grading snapshot or computed live, and say when it is thin.
#[tokio::test]
async fn verdicts_carry_their_evidence_from_the_snapshot_and_live() {
    let s = Server::app_with(graded_db(true).await, &[]).await;
    let (_, cached) = s
        .get("/api/analysis/%5EGSPC/verdict?return_period=90")
        .await;
    assert_eq!(cached["metadata"]["from_cache"], true);
    // The decay changes no evidence figure but is computed live.
    let (_, live) = s
        .get("/api/analysis/%5EGSPC/verdict?return_period=90&decay_factor=0.94")
        .await;
    assert_eq!(live["metadata"]["from_cache"], false);
    let evidence = &cached["active_segment"]["evidence"];
    assert_eq!(evidence, &live["active_segment"]["evidence"]);
    assert_eq!(
        cached["active_segment"]["outcome_quantiles"],
        live["active_segment"]["outcome_quantiles"]
    );
    let episodes = evidence["episodes"].as_u64().unwrap();
    let days = cached["active_segment"]["count"].as_u64().unwrap();
    assert!(episodes >= 2 && episodes * 5 < days, "{episodes} of {days}");
    let ci = evidence["median_return_ci"].as_array().unwrap();
    let median = f(&cached["active_segment"]["static_median_return"]);
    assert!(f(&ci[0]) <= median && median <= f(&ci[1]));
    assert_eq!(
        f(&cached["active_segment"]["outcome_quantiles"]["p50"]),
        median
    );
    let state = &cached["current_state"]["evidence"];
    let u = f(&state["unconditional_median_return"]);
    let thin = episodes < 10 || (f(&ci[0]) <= u && u <= f(&ci[1]));
    assert_eq!(state["thin"], thin);
    assert_eq!(state["reasons"].as_array().unwrap().is_empty(), !thin);
    assert_eq!(state["episodes"], evidence["episodes"]);
}

/// The universe record comes from what the grading run stored: before any
/// run it is refused with 503; after one, its counts add up, it keeps real
/// and synthetic apart, is the same on every call, and names refused
/// parameters.
#[tokio::test]
async fn the_universe_record_is_stored_by_the_grading_run() {
    let before = Server::app_with(graded_db(false).await, &[]).await;
    assert_error(
        &before.get("/api/track-record").await,
        503,
        &["grading run"],
    );

    let s = Server::app_with(graded_db(true).await, &[]).await;
    let (status, real) = s.get("/api/track-record?return_period=30").await;
    assert_eq!(status, 200, "{real}");
    assert_eq!(real["source"], "real");
    assert_eq!(real["data_sources"]["synthetic"], 0);
    assert!(real["assets"].as_u64().unwrap() >= 8);
    let by_grade = real["by_grade"].as_array().unwrap();
    let counted: u64 = by_grade.iter().map(|g| g["count"].as_u64().unwrap()).sum();
    assert_eq!(counted, real["observations"].as_u64().unwrap());
    assert!(counted > 1_000, "{counted} observations");
    for g in by_grade
        .iter()
        .filter(|g| g["count"].as_u64().unwrap() > 50)
    {
        let ci = g["mean_ci"].as_array().unwrap();
        let mean = f(&g["mean_realised_return"]);
        assert!(f(&ci[0]) <= mean && mean <= f(&ci[1]), "{g}");
    }
    let ic = &real["ic"];
    assert!(ic["dates"].as_u64().unwrap() > 50);
    assert!((-1.0..=1.0).contains(&f(&ic["mean"])));
    assert_eq!(
        real["ic_series"].as_array().unwrap().len() as u64,
        ic["dates"].as_u64().unwrap()
    );
    assert_eq!(real["block_months"], 2);
    let calibration: u64 = total_count(&real["calibration"]);
    assert_eq!(calibration, counted);
    // The same run, the same numbers.
    assert_eq!(s.get("/api/track-record?return_period=30").await.1, real);
    its_tables_as_csv_are_the_same_rows(&s, &real, counted).await;
    sources_and_categories_are_kept_apart(&s, &real).await;

    assert_error(
        &s.get("/api/track-record?return_period=45").await,
        400,
        &["return_period", "graded"],
    );
    assert_error(
        &s.get("/api/track-record?source=fake").await,
        400,
        &["source", "fake"],
    );
    assert_error(
        &s.get("/api/track-record?category=Gems").await,
        400,
        &["category"],
    );
    assert_error(
        &s.get("/api/track-record?metric=alpha").await,
        400,
        &["metric"],
    );
}

/// The record `real` (30 days, `counted` observations) as CSV tables:
/// the same rows and numbers; an unknown table is refused naming them.
async fn its_tables_as_csv_are_the_same_rows(s: &Server, real: &Value, counted: u64) {
    let by_grade = real["by_grade"].as_array().unwrap();
    let csv = |table: &str| {
        let path = format!("/api/track-record?return_period=30&format=csv&table={table}");
        async move { crate::exports::call(s, None, &path, None).await }
    };
    let (status, _, cd, text) = csv("by_grade").await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(cd, "attachment; filename=\"track-record-by_grade.csv\"");
    let t = crate::exports::rows(&text);
    assert_eq!(t[0][..3], ["grade", "count", "mean_realised_return"]);
    assert_eq!(t.len() - 1, by_grade.len());
    for (row, g) in t[1..].iter().zip(by_grade) {
        assert_eq!(row[0], g["grade"].as_str().unwrap());
        assert_eq!(row[1].parse::<u64>().unwrap(), g["count"].as_u64().unwrap());
        assert_eq!(
            row[2].parse::<f64>().ok(),
            g["mean_realised_return"].as_f64()
        );
    }
    let (_, _, _, text) = csv("ic").await;
    assert_eq!(
        crate::exports::rows(&text).len() - 1,
        real["ic_series"].as_array().unwrap().len()
    );
    let (_, _, _, text) = csv("calibration").await;
    let t = crate::exports::rows(&text);
    let counted_csv: u64 = t[1..].iter().map(|r| r[2].parse::<u64>().unwrap()).sum();
    assert_eq!(counted_csv, counted);
    let (status, _, _, text) = csv("nope").await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("by_grade, ic, calibration"), "{text}");
}

/// The synthetic record is apart from the `real` one and says what it
/// is; `all` is both; a category narrows the record.
async fn sources_and_categories_are_kept_apart(s: &Server, real: &Value) {
    let (_, synthetic) = s
        .get("/api/track-record?return_period=30&source=synthetic")
        .await;
    assert_eq!(synthetic["data_sources"]["real"], 0);
    assert!(synthetic["assets"].as_u64().unwrap() >= 1);
    let notes = synthetic["notes"].to_string();
    assert!(notes.contains("generated, not observed"), "{notes}");
    assert!(!real["notes"]
        .to_string()
        .contains("generated, not observed"));
    let (_, all) = s.get("/api/track-record?return_period=30&source=all").await;
    assert_eq!(
        all["assets"].as_u64().unwrap(),
        real["assets"].as_u64().unwrap() + synthetic["assets"].as_u64().unwrap()
    );
    let (_, indices) = s
        .get("/api/track-record?return_period=30&category=Indices")
        .await;
    assert_eq!(indices["category"], "Indices");
    assert!(indices["assets"].as_u64().unwrap() < real["assets"].as_u64().unwrap());
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
