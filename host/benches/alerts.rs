//! `cargo bench -p forecast-host --bench alerts`: how long one evaluation
//! of every alert takes (issue 30), through the real CLI,
//! `forecast alerts check`.
//!
//! Builds the small demo universe (`forecast demo load --small`), grades it,
//! then gives `USERS` accounts a watchlist of `WATCHLIST` active assets and
//! `ALERTS` alerts each on that watchlist (one of every condition, so every
//! observation path runs: verdicts, buckets, levels, the ranking): USERS ×
//! ALERTS × WATCHLIST (alert, asset) pairs. Three cases: the first
//! evaluation on the graded snapshot (every state new), one after an
//! ingest that changes one watched asset's prices (its verdicts computed
//! live, the rest from the snapshot), and one with nothing changed (the
//! claim alone). Target: an evaluation finishes within the server's
//! follower interval (`FORECAST_ALERTS_INTERVAL_MS`, 5 s).

mod common;

use std::time::Instant;

use common::summary::{row as summary, Verdict};
use sqlx::Row;

const USERS: usize = 20;
const WATCHLIST: usize = 50;
/// One alert of each condition.
const SPECS: [&str; 10] = [
    r#"{"condition":"grade_changed"}"#,
    r#"{"condition":"bucket_changed"}"#,
    r#"{"condition":"bucket_entered","bucket":3}"#,
    r#"{"condition":"bucket_left","bucket":0}"#,
    r#"{"condition":"drawdown_below","level":-0.3}"#,
    r#"{"condition":"drawdown_above","level":-0.1}"#,
    r#"{"condition":"median_return_above","level":0.05}"#,
    r#"{"condition":"median_return_below","level":0.0}"#,
    r#"{"condition":"top_n_entered","top_n":10}"#,
    r#"{"condition":"top_n_left","top_n":10}"#,
];
const ALERTS: usize = SPECS.len();
/// The interval the evaluation should fit in, seconds.
const TARGET_SECONDS: f64 = 5.0;

/// The spec JSON the service stores, from a condition and its parameter.
fn spec(partial: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(partial).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in ["level", "bucket", "top_n", "category"] {
        o.entry(k).or_insert(serde_json::Value::Null);
    }
    o.insert("return_period".into(), 90.into());
    o.insert("metric".into(), "return".into());
    o.insert("email".into(), true.into());
    v.to_string()
}

/// `forecast alerts check`: wall seconds and the evaluation's own seconds.
fn check(db: &str) -> (f64, f64, String) {
    let started = Instant::now();
    let out = common::forecast(db, &["alerts", "check"]);
    let wall = started.elapsed().as_secs_f64();
    let own = out
        .split(" in ")
        .nth(1)
        .and_then(|s| s.split('s').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0);
    (wall, own, out.lines().next().unwrap_or("").to_string())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("alerts.db").display());
    let (ticker, last) = set_up(&db).await;
    let pairs = USERS * ALERTS * WATCHLIST;

    let (first_wall, first, first_line) = check(&db);
    println!("first: {first_line}");
    ingest_one_close(&db, dir.path(), &ticker, &last);
    let (after_wall, after, after_line) = check(&db);
    println!("after an ingest of {ticker}: {after_line}");
    let (same_wall, _, same_line) = check(&db);
    println!("nothing changed: {same_line}");

    println!(
        "\n| case ({USERS} users × {ALERTS} alerts × {WATCHLIST} watchlist assets = {pairs} pairs) | evaluation | whole command |"
    );
    println!("|---|---|---|");
    println!("| first evaluation, graded snapshot | {first:.2} s | {first_wall:.2} s |");
    println!("| after an ingest of one watched asset | {after:.2} s | {after_wall:.2} s |");
    println!("| nothing changed (claim only) | — | {same_wall:.2} s |");
    summary(
        &format!("alert evaluation, {pairs} (alert, asset) pairs, graded snapshot"),
        &format!("{first:.2} s"),
        &format!("≤ {TARGET_SECONDS} s (the follower's interval)"),
        Verdict::of(first <= TARGET_SECONDS),
    );
    summary(
        &format!("alert evaluation after an ingest of one watched asset ({pairs} pairs)"),
        &format!("{after:.2} s"),
        &format!("≤ {TARGET_SECONDS} s"),
        Verdict::of(after <= TARGET_SECONDS),
    );
}

/// The graded small demo with `USERS` accounts, each watching the first
/// `WATCHLIST` active assets with one alert of every condition; the first
/// watched asset's ticker and last date.
async fn set_up(db: &str) -> (String, String) {
    common::forecast(db, &["demo", "load", "--small"]);
    common::forecast(db, &["grade"]);
    for u in 0..USERS {
        common::forecast(
            db,
            &[
                "user",
                "add",
                "--email",
                &format!("u{u}@bench.example"),
                "--tier",
                "premium",
            ],
        );
    }
    let pool = sqlx::SqlitePool::connect(db).await.unwrap();
    let assets: Vec<(i64, String)> = sqlx::query(
        "SELECT a.id, a.ticker FROM assets a JOIN daily_prices p ON p.asset_id = a.id \
         WHERE a.is_active ORDER BY a.id LIMIT ?1",
    )
    .bind(WATCHLIST as i64)
    .fetch_all(&pool)
    .await
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect();
    assert_eq!(assets.len(), WATCHLIST, "the small demo has enough assets");
    let users: Vec<String> = sqlx::query("SELECT id FROM users WHERE email LIKE '%@bench.example'")
        .fetch_all(&pool)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    watch_and_alert(&pool, &users, &assets).await;
    // One more close for the first watched asset, 1 % above its last.
    let (asset, ticker) = &assets[0];
    let last = sqlx::query("SELECT last_date FROM daily_prices WHERE asset_id = ?1")
        .bind(asset)
        .fetch_one(&pool)
        .await
        .unwrap()
        .get::<String, _>(0);
    pool.close().await;
    (ticker.clone(), last)
}

/// Gives every user a watchlist of `assets` and one alert of each of
/// `SPECS` on it, in one transaction.
async fn watch_and_alert(pool: &sqlx::SqlitePool, users: &[String], assets: &[(i64, String)]) {
    let mut tx = pool.begin().await.unwrap();
    for user in users {
        for (position, (asset, _)) in assets.iter().enumerate() {
            sqlx::query(
                "INSERT INTO watchlist (user_id, position, asset_id, added_at) VALUES (?1, ?2, ?3, 0)",
            )
            .bind(user)
            .bind(position as i64)
            .bind(asset)
            .execute(&mut *tx)
            .await
            .unwrap();
        }
        for s in SPECS {
            sqlx::query(
                "INSERT INTO alerts (id, user_id, asset_id, spec, enabled, created_at, updated_at) \
                 VALUES (?1, ?2, NULL, ?3, 1, 0, 0)",
            )
            .bind(uuid::Uuid::new_v4().to_string())
            .bind(user)
            .bind(spec(s))
            .execute(&mut *tx)
            .await
            .unwrap();
        }
    }
    tx.commit().await.unwrap();
}

/// `forecast ingest csv` of one more close for `ticker`, the day after
/// `last`.
fn ingest_one_close(db: &str, dir: &std::path::Path, ticker: &str, last: &str) {
    let next_day = chrono::NaiveDate::parse_from_str(last, "%Y-%m-%d")
        .map(|d| d.succ_opt().unwrap())
        .unwrap_or_else(|_| forecast::domain::Clock::today(&forecast::domain::SystemClock));
    let csv = dir.join("one.csv");
    // The stored series is encoded, so the new close is a fixed 1.0 (with
    // --allow-jumps): what is measured is the cost of re-evaluating after
    // a price change, not the value.
    std::fs::write(&csv, format!("date,close\n{next_day},1.0\n")).unwrap();
    common::forecast(
        db,
        &[
            "ingest",
            "csv",
            "--allow-jumps",
            "--ticker",
            ticker,
            csv.to_str().unwrap(),
        ],
    );
}
