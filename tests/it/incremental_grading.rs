//! Incremental daily grading (decision 0084), black-box through the real
//! `forecast grade`: a run that keeps the served run's month-end histories
//! stores, byte for byte, what `forecast grade --rebuild` stores for the
//! same prices — after a day with no new month-end, after a new
//! month-end, and after a correction of an old price — on SQLite and on
//! PostgreSQL.

use crate::common;
use crate::grading::exec_and_count;
use common::grade;

use chrono::{Datelike, Days, NaiveDate};
use forecast_domain::series::{from_days, to_days, PriceSeries};

/// Every stored row of the run graded today: its grades (every column;
/// the verdict body without its computation time), grade histories and
/// carries, one line each, in key order.
async fn stored_today(url: &str) -> Vec<String> {
    let today = chrono::Utc::now().date_naive().to_string();
    let grades = "SELECT CAST(g.asset_id AS BIGINT), CAST(g.return_period AS BIGINT), g.metric,
            CAST(g.data_version AS BIGINT), g.letter, g.score, g.expected_return,
            g.prediction_error, g.median_return, g.median_error, g.current_drawdown,
            g.current_price, g.win_rate, g.body
        FROM grades g JOIN grading_runs r ON r.id = g.run_id WHERE r.day = $1
        ORDER BY 1, 2, 3";
    let tracks = "SELECT CAST(t.asset_id AS BIGINT), CAST(t.return_period AS BIGINT), t.metric,
            b.body
        FROM track_points t JOIN grading_runs r ON r.id = t.run_id
            JOIN track_bodies b ON b.id = t.body_id WHERE r.day = $1
        ORDER BY 1, 2, 3";
    let carries = "SELECT CAST(c.asset_id AS BIGINT), c.body
        FROM grade_carries c JOIN grading_runs r ON r.id = c.run_id WHERE r.day = $1
        ORDER BY 1";
    macro_rules! dump {
        ($pool:expr) => {{
            use sqlx::Row as _;
            let pool = $pool;
            let mut out = Vec::new();
            for r in sqlx::query(grades)
                .bind(&today)
                .fetch_all(&pool)
                .await
                .unwrap()
            {
                let mut line = format!(
                    "grade {} {} {} v{} {}",
                    r.get::<i64, _>(0),
                    r.get::<i64, _>(1),
                    r.get::<String, _>(2),
                    r.get::<i64, _>(3),
                    r.get::<String, _>(4)
                );
                for i in 5..13 {
                    line += &format!(" {:016x}", r.get::<f64, _>(i).to_bits());
                }
                line += &format!(" {}", without_clock(&r.get::<String, _>(13)));
                out.push(line);
            }
            for r in sqlx::query(tracks)
                .bind(&today)
                .fetch_all(&pool)
                .await
                .unwrap()
            {
                out.push(format!(
                    "track {} {} {} {:?}",
                    r.get::<i64, _>(0),
                    r.get::<i64, _>(1),
                    r.get::<String, _>(2),
                    r.get::<Vec<u8>, _>(3)
                ));
            }
            for r in sqlx::query(carries)
                .bind(&today)
                .fetch_all(&pool)
                .await
                .unwrap()
            {
                out.push(format!(
                    "carry {} {:?}",
                    r.get::<i64, _>(0),
                    r.get::<Vec<u8>, _>(1)
                ));
            }
            pool.close().await;
            out
        }};
    }
    if url.starts_with("sqlite:") {
        dump!(sqlx::SqlitePool::connect(url).await.unwrap())
    } else {
        dump!(sqlx::PgPool::connect(url).await.unwrap())
    }
}

/// A verdict body without the wall-clock time it was computed at (the
/// one field two computations of the same grade differ in).
fn without_clock(body: &str) -> String {
    const KEY: &str = "\"calculated_at\":\"";
    let Some(at) = body.find(KEY) else {
        return body.to_string();
    };
    let value = at + KEY.len();
    let end = value + body[value..].find('"').expect("a closed string");
    format!("{}…{}", &body[..value], &body[end..])
}

/// Moves today's runs to `day`, so that the next `forecast grade` starts
/// a new run (as the next day's would) while today's stays served.
async fn age_todays_runs(url: &str, day: &str) {
    let today = chrono::Utc::now().date_naive().to_string();
    let sql = format!("UPDATE grading_runs SET day = '{day}' WHERE day = '{today}'");
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        sqlx::query(&sql).execute(&pool).await.unwrap();
        pool.close().await;
    } else {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sqlx::query(&sql).execute(&pool).await.unwrap();
        pool.close().await;
    }
}

/// Rewrites the prices of every active asset with `change`.
async fn rewrite_prices(url: &str, change: impl Fn(&str, &mut PriceSeries)) {
    let store = forecast_store::connect(url).await.unwrap();
    let assets = store.list_active_assets(None).await.unwrap();
    for a in assets {
        let Some(mut series) = store.load_series(a.id).await.unwrap() else {
            continue;
        };
        let before = series.clone();
        change(&a.ticker, &mut series);
        if series != before {
            store
                .store_series(&[(a.id, &series, a.data_source)])
                .await
                .unwrap();
        }
    }
    store.close().await;
}

/// Appends a row on `day` (or, for prices without weekend rows, the
/// first weekday from it), 0.1 % above the last.
fn append(s: &mut PriceSeries, mut day: NaiveDate) {
    use chrono::Weekday;
    while !s.has_weekends() && matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
        day = day + Days::new(1);
    }
    let close = s.closes.last().unwrap() * 1.001;
    s.dates.push(to_days(day));
    s.closes.push(close);
}

fn last_day(s: &PriceSeries) -> NaiveDate {
    from_days(*s.dates.last().unwrap())
}

/// `forecast grade` (with `--rebuild` or not); the numbers of assets
/// graded and of those that kept their month-end history.
fn grade_keeping(url: &str, rebuild: bool) -> (usize, usize) {
    let (ok, stdout, stderr) = match rebuild {
        true => grade_with(url, "--rebuild"),
        false => grade(url, &[]),
    };
    assert!(ok && stdout.contains("now active"), "{stdout}\n{stderr}");
    let before = |words: &str| -> usize {
        let at = stdout.find(words).expect(&stdout);
        stdout[..at].rsplit(' ').next().unwrap().parse().unwrap()
    };
    (
        before(" assets graded here"),
        before(" kept their month-end history"),
    )
}

/// `forecast grade <flag>`: success, stdout, stderr.
fn grade_with(url: &str, flag: &str) -> (bool, String, String) {
    let out = std::process::Command::new(common::BIN)
        .args(["grade", flag])
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run forecast grade");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Grades incrementally, then rebuilds, and compares what both stored;
/// the number of assets the incremental run kept.
async fn incremental_equals_rebuild(url: &str, case: &str, aged: &mut u32) -> usize {
    let (_, kept) = grade_keeping(url, false);
    let incremental = stored_today(url).await;
    *aged += 1;
    age_todays_runs(url, &format!("2000-01-{aged:02}")).await;
    assert_eq!(grade_keeping(url, true).1, 0, "a rebuild keeps nothing");
    let rebuilt = stored_today(url).await;
    assert!(
        incremental.len() > 100,
        "{case}: {} rows",
        incremental.len()
    );
    assert_eq!(incremental.len(), rebuilt.len(), "{case}: row counts");
    for (a, b) in incremental.iter().zip(&rebuilt) {
        if a != b {
            let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            let from = at.saturating_sub(160);
            panic!(
                "{case}: the incremental run stored\n…{}\nwhere a rebuild stored\n…{}\n(row {})",
                &a[from..(at + 160).min(a.len())],
                &b[from..(at + 160).min(b.len())],
                &a[..a.len().min(40)]
            );
        }
    }
    *aged += 1;
    age_todays_runs(url, &format!("2000-01-{aged:02}")).await;
    kept
}

/// The three cases on the database at `url` (the demo universe, loaded).
async fn the_three_cases(url: &str) {
    // A synthetic asset per category (one pool, every history ending on
    // the same day, as a universe updated daily does) and one real one
    // (the other pool): a history lagging others of its pool would move
    // the pooled history of their past months, and rebuild them.
    exec_and_count(
        url,
        "UPDATE assets SET is_active = (ticker = 'AAPL' OR id IN (SELECT MIN(id) FROM assets
             WHERE data_source = 'synthetic' GROUP BY category))",
        "SELECT COUNT(*) FROM assets WHERE is_active",
    )
    .await;
    // Every history ends mid-month, so a next day adds no month-end.
    rewrite_prices(url, |_, s| {
        while last_day(s).day() > 20 {
            s.dates.pop();
            s.closes.pop();
        }
    })
    .await;
    let mut aged = 0;
    let (n, kept) = grade_keeping(url, false);
    assert!(n >= 10, "{n} assets graded");
    assert_eq!(kept, 0, "the first run has nothing to keep");
    aged += 1;
    age_todays_runs(url, &format!("2000-01-{aged:02}")).await;

    // (a) One more day in the same month.
    rewrite_prices(url, |_, s| append(s, last_day(s) + Days::new(1))).await;
    let kept = incremental_equals_rebuild(url, "a day with no new month-end", &mut aged).await;
    assert_eq!(kept, n, "every asset kept its month-end history");

    // (b) The first day of the next month: the last row becomes a month-end.
    rewrite_prices(url, |_, s| {
        let next = last_day(s).with_day(1).unwrap() + chrono::Months::new(1);
        append(s, next);
    })
    .await;
    let kept = incremental_equals_rebuild(url, "a new month-end", &mut aged).await;
    assert_eq!(kept, n, "every asset kept its month-end history");

    // (c) An old close of the real asset corrected, and a new day for all:
    // that asset is rebuilt (with every other asset calibrated on the same
    // pooled history, the observed prices: none here); the synthetic ones
    // keep theirs.
    rewrite_prices(url, |ticker, s| {
        if ticker == "AAPL" {
            s.closes[500] *= 1.02;
        }
        append(s, last_day(s) + Days::new(1));
    })
    .await;
    let kept = incremental_equals_rebuild(url, "an old price corrected", &mut aged).await;
    assert_eq!(kept, n - 1, "all but the corrected asset kept theirs");
}

#[tokio::test]
async fn incremental_runs_store_what_a_rebuild_stores_on_sqlite() {
    let db = common::fresh_db();
    let url = common::sqlite_url(&db);
    the_three_cases(&url).await;
    without_histories_grades_alike(&url).await;
}

/// `forecast grade --without-histories` (what the grade benchmark
/// measures the daily grade against): the same prices graded for the
/// same assets, periods and metrics as a rebuild (letters may differ: no
/// forecast informs them), with no month-end history and no carry.
async fn without_histories_grades_alike(url: &str) {
    assert_eq!(grade_keeping(url, true).1, 0, "a rebuild keeps nothing");
    let rebuilt = stored_today(url).await;
    age_todays_runs(url, "2000-02-01").await;
    let (ok, stdout, stderr) = grade_with(url, "--without-histories");
    assert!(ok && stdout.contains("now active"), "{stdout}\n{stderr}");
    let without = stored_today(url).await;
    // "grade <asset> <period> <metric> v<version> <letter>": the keys.
    let graded = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .filter(|l| l.starts_with("grade "))
            .map(|l| l.split(' ').take(5).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert!(!graded(&rebuilt).is_empty());
    assert_eq!(graded(&without), graded(&rebuilt));
    assert!(rebuilt.iter().any(|l| l.starts_with("track ")));
    assert!(
        without.iter().all(|l| l.starts_with("grade ")),
        "a run without histories stored {:?}",
        without.iter().find(|l| !l.starts_with("grade "))
    );
}

#[tokio::test]
async fn incremental_runs_store_what_a_rebuild_stores_on_postgres() {
    let db = common::postgres::ScratchPg::create("incremental").await;
    common::cli_ok_url(&db.url, &["demo", "load"], "");
    the_three_cases(&db.url).await;
}
