//! Store behaviour every backend must show (run against SQLite here; the
//! PostgreSQL backend runs the same functions).

use super::*;

pub(crate) fn entry(id: i64, ticker: &str, category: Category, active: bool) -> CatalogEntry {
    CatalogEntry::minimal(id, ticker, category, active)
}

pub(crate) async fn conformance(db: &dyn Database) {
    db.ping().await.unwrap();
    db.upsert_catalog(&[
        entry(1, "AAA", Category::UsStocks, true),
        entry(2, "BBB", Category::Crypto, true),
        entry(3, "CCC", Category::UsStocks, false),
    ])
    .await
    .unwrap();
    // Idempotent: loading twice changes nothing.
    db.upsert_catalog(&[entry(1, "AAA", Category::UsStocks, true)])
        .await
        .unwrap();
    let all = db.list_active_assets(None).await.unwrap();
    assert_eq!(
        all.iter().map(|a| a.ticker.as_str()).collect::<Vec<_>>(),
        ["AAA", "BBB"]
    );
    let crypto = db.list_active_assets(Some(Category::Crypto)).await.unwrap();
    assert_eq!(crypto.len(), 1);
    let inactive = db.asset_by_ticker("CCC").await.unwrap().unwrap();
    assert!(!inactive.is_active);
    assert!(db.asset_by_ticker("ZZZ").await.unwrap().is_none());

    let series = PriceSeries {
        dates: vec![10, 11, 12],
        closes: vec![1.0, 2.0, 3.0],
    };
    db.put_analysis("k1", 1, "{\"cached\":true}").await.unwrap();
    assert!(db.cached_analysis("k1").await.unwrap().is_some());
    db.store_series(&[(1, &series, DataSource::Ingested)])
        .await
        .unwrap();
    let a = db.asset_by_ticker("AAA").await.unwrap().unwrap();
    assert_eq!(a.data_source, DataSource::Ingested);
    assert_eq!(a.data_version, 1);
    assert_eq!(db.load_series(1).await.unwrap(), Some(series.clone()));
    assert!(
        db.cached_analysis("k1").await.unwrap().is_none(),
        "new prices invalidate the asset's cache"
    );

    // One unknown asset in a batch: nothing of the batch is written.
    let other = PriceSeries {
        dates: vec![1],
        closes: vec![9.0],
    };
    let err = db
        .store_series(&[
            (2, &other, DataSource::Ingested),
            (99, &other, DataSource::Ingested),
        ])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::UnknownAsset(99)));
    assert!(db.load_series(2).await.unwrap().is_none());
    assert_eq!(
        db.asset_by_ticker("BBB")
            .await
            .unwrap()
            .unwrap()
            .data_version,
        0
    );

    db.put_metadata(1, "{}", 100).await.unwrap();
    db.put_metadata(1, "{\"a\":1}", 200).await.unwrap();
    let m = db.cached_metadata(1).await.unwrap().unwrap();
    assert_eq!((m.body.as_str(), m.fetched_at), ("{\"a\":1}", 200));

    db.set_setting("x", "1").await.unwrap();
    db.set_setting("x", "2").await.unwrap();
    assert_eq!(db.setting("x").await.unwrap().as_deref(), Some("2"));

    let c = db.counts().await.unwrap();
    assert_eq!(
        (
            c.assets,
            c.active_assets,
            c.assets_with_prices,
            c.price_rows
        ),
        (3, 2, 1, 3)
    );
}

pub(crate) async fn accounts_conformance(db: std::sync::Arc<dyn Database>) {
    use forecast_domain::Tier;
    let u = db
        .create_user("ann@example.com", "hash-a", Tier::Premium, 1_000)
        .await
        .unwrap();
    assert!(matches!(
        db.create_user("ann@example.com", "x", Tier::Free, 1_001)
            .await,
        Err(StoreError::Conflict(_))
    ));
    let (found, hash) = db.user_by_email("ann@example.com").await.unwrap().unwrap();
    assert_eq!(
        (found.id.as_str(), hash.as_str(), found.tier),
        (u.id.as_str(), "hash-a", Tier::Premium)
    );
    assert!(db
        .user_by_email("nobody@example.com")
        .await
        .unwrap()
        .is_none());
    let down = db
        .set_user_tier("ann@example.com", Tier::Pro)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(down.tier, Tier::Pro);
    assert!(db
        .set_user_tier("nobody@example.com", Tier::Pro)
        .await
        .unwrap()
        .is_none());
    db.set_user_tier("ann@example.com", Tier::Premium)
        .await
        .unwrap();
    let limited = db
        .set_user_limits("ann@example.com", Some(7), None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((limited.per_minute, limited.per_day), (Some(7), None));
    db.create_user("bob@example.com", "hash-b", Tier::Free, 1_002)
        .await
        .unwrap();
    let emails: Vec<String> = db
        .list_users()
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.email)
        .collect();
    assert_eq!(emails, ["ann@example.com", "bob@example.com"]);

    // Sessions expire.
    db.create_session("s1", &u.id, 1_000, 2_000).await.unwrap();
    assert_eq!(
        db.session_user("s1", 1_999).await.unwrap().unwrap().id,
        u.id
    );
    assert!(db.session_user("s1", 2_000).await.unwrap().is_none());
    db.delete_session("s1").await.unwrap();
    assert!(db.session_user("s1", 1_500).await.unwrap().is_none());

    // Keys: at most N active; soft revoke; another user's key is not found.
    let k1 = db
        .create_api_key(&u.id, "one", "h1", "svc_aaaa", 2, 5_000)
        .await
        .unwrap()
        .unwrap();
    let k2 = db
        .create_api_key(&u.id, "two", "h2", "svc_bbbb", 2, 5_001)
        .await
        .unwrap()
        .unwrap();
    assert!(db
        .create_api_key(&u.id, "three", "h3", "svc_cccc", 2, 5_002)
        .await
        .unwrap()
        .is_none());
    let listed = db.list_api_keys(&u.id).await.unwrap();
    assert_eq!(
        listed.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
        ["two", "one"]
    );
    let (key, owner) = db.api_key_user("h1").await.unwrap().unwrap();
    assert_eq!(
        (key.id.as_str(), key.created_at, owner.email.as_str()),
        (k1.id.as_str(), 5_000, "ann@example.com")
    );
    assert_eq!(owner.created_at, 1_000);
    assert_eq!(owner.per_minute, Some(7));
    let bob = db
        .user_by_email("bob@example.com")
        .await
        .unwrap()
        .unwrap()
        .0;
    assert!(
        !db.revoke_api_key(&bob.id, &k1.id, 6_000).await.unwrap(),
        "not bob's key"
    );
    assert!(db.revoke_api_key(&u.id, &k1.id, 6_000).await.unwrap());
    assert!(
        !db.revoke_api_key(&u.id, &k1.id, 6_001).await.unwrap(),
        "already revoked"
    );
    assert!(
        db.api_key_user("h1").await.unwrap().is_none(),
        "revoked keys do not authenticate"
    );
    assert_eq!(db.list_api_keys(&u.id).await.unwrap().len(), 1);
    assert!(db
        .create_api_key(&u.id, "three", "h3", "svc_cccc", 2, 6_002)
        .await
        .unwrap()
        .is_some());

    // last_used_at moves at most once a minute.
    db.touch_api_key(&k2.id, 10_000).await.unwrap();
    db.touch_api_key(&k2.id, 10_030).await.unwrap();
    assert_eq!(
        db.api_key_user("h2").await.unwrap().unwrap().0.last_used_at,
        Some(10_000)
    );
    db.touch_api_key(&k2.id, 10_060).await.unwrap();
    assert_eq!(
        db.api_key_user("h2").await.unwrap().unwrap().0.last_used_at,
        Some(10_060)
    );

    // Counters: both windows or nothing; rejected attempts count nothing;
    // a new window starts from zero.
    let windows = [
        Window {
            kind: "minute",
            seconds: 60,
            limit: 10,
        },
        Window {
            kind: "day",
            seconds: 86_400,
            limit: 12,
        },
    ];
    let t0 = 1_700_000_080; // 40 s into a minute
    let first = db.consume("u1", &windows, 5, t0).await.unwrap();
    assert!(first.admitted);
    assert_eq!(first.windows[0].used, 5);
    assert_eq!(first.windows[0].reset, t0 - 40 + 60);
    assert!(
        db.consume("u1", &windows, 5, t0 + 1)
            .await
            .unwrap()
            .admitted
    );
    let over = db.consume("u1", &windows, 1, t0 + 2).await.unwrap();
    assert!(!over.admitted);
    assert_eq!((over.windows[0].used, over.windows[0].remaining()), (10, 0));
    // Next minute: the minute window is fresh but the day allows only 2 more.
    let next = db.consume("u1", &windows, 3, t0 + 30).await.unwrap();
    assert!(!next.admitted, "the day window binds");
    assert_eq!(next.windows[0].used, 0);
    assert!(
        db.consume("u1", &windows, 2, t0 + 30)
            .await
            .unwrap()
            .admitted
    );
    assert!(
        db.consume("u2", &windows, 10, t0).await.unwrap().admitted,
        "subjects are independent"
    );

    // Concurrency: 20 creations leave exactly 5 active keys; 75 requests
    // against a limit of 60 admit exactly 60.
    let carol = db
        .create_user("carol@example.com", "h", Tier::Premium, 1)
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let (db, id) = (db.clone(), carol.id.clone());
        tasks.push(tokio::spawn(async move {
            db.create_api_key(&id, "k", &format!("carol-{i}"), "svc_0000", 5, 1)
                .await
                .unwrap()
                .is_some()
        }));
    }
    let mut created = 0;
    for t in tasks {
        created += usize::from(t.await.unwrap());
    }
    assert_eq!(created, 5);
    assert_eq!(db.list_api_keys(&carol.id).await.unwrap().len(), 5);
    let quota = [Window {
        kind: "minute",
        seconds: 60,
        limit: 60,
    }];
    let mut tasks = Vec::new();
    for _ in 0..75 {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            db.consume("carol", &quota, 1, t0).await.unwrap().admitted
        }));
    }
    let mut admitted = 0;
    for t in tasks {
        admitted += usize::from(t.await.unwrap());
    }
    assert_eq!(admitted, 60);
}

fn grade_row(asset_id: i64, period: u32, score: f64) -> GradeRow {
    GradeRow {
        asset_id,
        return_period: period,
        metric: "return".into(),
        data_version: 1,
        letter: "C".into(),
        score,
        expected_return: 0.01,
        prediction_error: 0.02,
        median_return: 0.03,
        median_error: 0.04,
        current_drawdown: -0.1,
        current_price: 10.0,
        win_rate: 0.5,
        body: format!("{{\"score\":{score}}}"),
    }
}

/// Grading runs: tasks claimed once, leases expire, the snapshot flips
/// atomically, new prices drop an asset's grades.
pub(crate) async fn grading_conformance(db: std::sync::Arc<dyn Database>) {
    let cat = |id, t: &str| entry(id, t, Category::UsStocks, true);
    db.upsert_catalog(&[
        cat(1, "A1"),
        cat(2, "A2"),
        cat(3, "A3"),
        entry(4, "A4", Category::Crypto, false),
    ])
    .await
    .unwrap();
    let long = PriceSeries {
        dates: (0..400).collect(),
        closes: vec![1.0; 400],
    };
    let short = PriceSeries {
        dates: (0..10).collect(),
        closes: vec![1.0; 10],
    };
    db.store_series(&[
        (1, &long, DataSource::Synthetic),
        (2, &long, DataSource::Synthetic),
        (3, &short, DataSource::Synthetic),
        (4, &long, DataSource::Synthetic),
    ])
    .await
    .unwrap();
    assert_eq!(
        db.gradable_assets(300).await.unwrap(),
        vec![1, 2],
        "active, with enough rows"
    );
    assert!(db.active_grading_run().await.unwrap().is_none());

    let run = db
        .start_or_join_run("2026-11-22", "e@1", "s@1", &[1, 2], 100)
        .await
        .unwrap();
    let same = db
        .start_or_join_run("2026-11-22", "e@1", "s@1", &[1, 2], 101)
        .await
        .unwrap();
    assert_eq!(run.id, same.id, "a second replica joins the day's run");
    assert_eq!((run.total, run.status.as_str()), (2, "running"));

    let a = db
        .claim_grading_tasks(&run.id, "w1", 1, 200, 60)
        .await
        .unwrap();
    let b = db
        .claim_grading_tasks(&run.id, "w2", 5, 200, 60)
        .await
        .unwrap();
    assert_eq!((a.len(), b.len()), (1, 1));
    assert_ne!(a, b);
    assert!(db
        .claim_grading_tasks(&run.id, "w3", 5, 210, 60)
        .await
        .unwrap()
        .is_empty());
    db.record_grades(&run.id, "w1", &[grade_row(a[0], 90, 70.0)], &a, &[])
        .await
        .unwrap();
    assert!(
        !db.finish_run_if_complete(&run.id, 220).await.unwrap(),
        "w2 still holds a task"
    );
    assert!(
        db.active_grading_run().await.unwrap().is_none(),
        "nothing visible mid-run"
    );
    // w2 dies; its lease expires and w3 takes the task over.
    let taken = db
        .claim_grading_tasks(&run.id, "w3", 5, 261, 60)
        .await
        .unwrap();
    assert_eq!(taken, b);
    db.record_grades(&run.id, "w2", &[], &b, &[]).await.unwrap(); // too late: counts nothing
    db.record_grades(&run.id, "w3", &[grade_row(b[0], 90, 40.0)], &b, &[])
        .await
        .unwrap();
    assert!(db.finish_run_if_complete(&run.id, 300).await.unwrap());
    assert!(
        !db.finish_run_if_complete(&run.id, 301).await.unwrap(),
        "only once"
    );
    let active = db.active_grading_run().await.unwrap().unwrap();
    assert_eq!(
        (
            active.id.as_str(),
            active.graded,
            active.failures,
            active.status.as_str()
        ),
        (run.id.as_str(), 2, 0, "done")
    );
    assert_eq!(db.latest_grading_run().await.unwrap().unwrap().id, run.id);
    let rows = db.ranking_rows(&run.id, 90, "return").await.unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows
        .iter()
        .any(|r| r.ticker == "A1" && r.category == Category::UsStocks));
    let g = db.grade(&run.id, 1, 90, "return").await.unwrap().unwrap();
    assert_eq!(g, grade_row(1, 90, if a[0] == 1 { 70.0 } else { 40.0 }));
    assert!(db.grade(&run.id, 1, 30, "return").await.unwrap().is_none());

    // A new day's run: the old snapshot stays active until the new one completes.
    let next = db
        .start_or_join_run("2026-11-23", "e@1", "s@1", &[1, 2], 400)
        .await
        .unwrap();
    let all = db
        .claim_grading_tasks(&next.id, "w1", 10, 401, 60)
        .await
        .unwrap();
    db.record_grades(&next.id, "w1", &[grade_row(1, 90, 90.0)], &[1], &[2])
        .await
        .unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(db.active_grading_run().await.unwrap().unwrap().id, run.id);
    assert!(db.finish_run_if_complete(&next.id, 402).await.unwrap());
    let now_active = db.active_grading_run().await.unwrap().unwrap();
    assert_eq!(
        (
            now_active.id.as_str(),
            now_active.graded,
            now_active.failures
        ),
        (next.id.as_str(), 1, 1)
    );
    assert!(
        db.grade(&run.id, 1, 90, "return").await.unwrap().is_none(),
        "old grades dropped"
    );
    assert_eq!(
        db.ranking_rows(&next.id, 90, "return").await.unwrap().len(),
        1
    );

    // New prices drop the asset's grades (its verdicts are then computed live).
    db.store_series(&[(1, &long, DataSource::Ingested)])
        .await
        .unwrap();
    assert!(db.grade(&next.id, 1, 90, "return").await.unwrap().is_none());
}

#[tokio::test]
async fn sqlite_grading_conformance() {
    let dir = tempfile::tempdir().unwrap();
    let db = connect(&format!("sqlite://{}", dir.path().join("g.db").display()))
        .await
        .unwrap();
    grading_conformance(db).await;
}

#[tokio::test]
async fn sqlite_accounts_conformance() {
    let dir = tempfile::tempdir().unwrap();
    let db = connect(&format!("sqlite://{}", dir.path().join("a.db").display()))
        .await
        .unwrap();
    accounts_conformance(db).await;
}

#[tokio::test]
async fn sqlite_conformance() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("nested/store.db").display());
    let db = connect(&url).await.unwrap();
    assert_eq!(db.backend(), "sqlite");
    conformance(db.as_ref()).await;
}

#[test]
fn redact_hides_credentials() {
    assert_eq!(redact("postgres://u:secret@h/db"), "postgres://***@h/db");
    assert_eq!(redact("sqlite://x.db"), "sqlite://x.db");
}

/// The URL `url` with its database (path) replaced by `database`, keeping
/// credentials, host and query parameters.
fn with_database(url: &str, database: &str) -> String {
    let authority = url.find("://").map_or(0, |i| i + 3);
    let (head, query) = match url[authority..].find('?') {
        Some(q) => url.split_at(authority + q),
        None => (url, ""),
    };
    let base = match head[authority..].find('/') {
        Some(slash) => &head[..authority + slash],
        None => head,
    };
    format!("{base}/{database}{query}")
}

/// A fresh, empty PostgreSQL database for one test, created on the server
/// of `TEST_DATABASE_URL`; its URL, or `None` (after a loud line on stderr)
/// when that variable is unset. Drop it with [`pg_drop_test_database`].
pub(crate) async fn pg_test_database() -> Option<String> {
    use sqlx::Connection;
    let Ok(admin) = std::env::var("TEST_DATABASE_URL") else {
        // Straight to the stream: libtest captures `eprintln!` of passing
        // tests, and a silent skip would read as a pass.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"SKIPPED: TEST_DATABASE_URL is not set; PostgreSQL tests did not run\n",
        );
        return None;
    };
    let name = format!("fe_test_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("TEST_DATABASE_URL {}: {e}", redact(&admin)));
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    Some(with_database(&admin, &name))
}

/// Drops a database made by [`pg_test_database`] (close its pools first;
/// `WITH (FORCE)` ends any connection left over).
pub(crate) async fn pg_drop_test_database(url: &str) {
    use sqlx::Connection;
    let admin = std::env::var("TEST_DATABASE_URL").expect("TEST_DATABASE_URL");
    let name = url[url.rfind('/').expect("a database path") + 1..]
        .split('?')
        .next()
        .unwrap_or_default();
    assert!(name.starts_with("fe_test_"), "not a test database: {name}");
    let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
    sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
}

#[test]
fn with_database_replaces_the_path() {
    assert_eq!(
        with_database("postgres://u:p@h:5432/test", "x"),
        "postgres://u:p@h:5432/x"
    );
    assert_eq!(
        with_database("postgresql://h/test?sslmode=disable", "x"),
        "postgresql://h/x?sslmode=disable"
    );
    assert_eq!(
        with_database("postgres://h:5432", "x"),
        "postgres://h:5432/x"
    );
}

#[tokio::test]
async fn postgres_conformance() {
    let Some(url) = pg_test_database().await else {
        return;
    };
    let db = connect(&url).await.unwrap();
    assert_eq!(db.backend(), "postgres");
    conformance(db.as_ref()).await;
    db.close().await;
    pg_drop_test_database(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_accounts_conformance() {
    let Some(url) = pg_test_database().await else {
        return;
    };
    let db = connect(&url).await.unwrap();
    accounts_conformance(db.clone()).await;
    db.close().await;
    pg_drop_test_database(&url).await;
}

/// Two pools on one database stand in for two server processes: the
/// limits hold across them, and two-window consumption never deadlocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_limits_hold_across_pools() {
    let Some(url) = pg_test_database().await else {
        return;
    };
    let pools = [connect(&url).await.unwrap(), connect(&url).await.unwrap()];
    let user = pools[0]
        .create_user("dan@example.com", "h", Tier::Free, 1)
        .await
        .unwrap();
    let windows = [
        Window {
            kind: "minute",
            seconds: 60,
            limit: 60,
        },
        Window {
            kind: "day",
            seconds: 86_400,
            limit: 1_000,
        },
    ];
    let mut keys = Vec::new();
    let mut uses = Vec::new();
    for i in 0..100 {
        let db = pools[i % 2].clone();
        let id = user.id.clone();
        keys.push(tokio::spawn(async move {
            db.create_api_key(&id, "k", &format!("dan-{i}"), "svc_0000", 5, 1)
                .await
                .unwrap()
                .is_some()
        }));
        let db = pools[i % 2].clone();
        uses.push(tokio::spawn(async move {
            db.consume("dan", &windows, 1, 1_700_000_080)
                .await
                .unwrap()
                .admitted
        }));
    }
    let mut created = 0;
    for t in keys {
        created += usize::from(t.await.unwrap());
    }
    let mut admitted = 0;
    for t in uses {
        admitted += usize::from(t.await.unwrap());
    }
    assert_eq!((created, admitted), (5, 60));
    let day = pools[1]
        .consume("dan", &windows[1..], 0, 1_700_000_080)
        .await
        .unwrap();
    assert_eq!(day.windows[0].used, 60, "rejected attempts count nothing");
    for db in &pools {
        db.close().await;
    }
    pg_drop_test_database(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_grading_conformance() {
    let Some(url) = pg_test_database().await else {
        return;
    };
    let db = connect(&url).await.unwrap();
    grading_conformance(db.clone()).await;
    db.close().await;
    pg_drop_test_database(&url).await;
}

/// Two pools on one database stand in for two replicas: concurrent starts
/// meet in one run whose tasks are all visible to every joiner, concurrent
/// claimers share the tasks out exactly once, and the run completes once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_grading_across_pools() {
    let Some(url) = pg_test_database().await else {
        return;
    };
    const ASSETS: i64 = 200;
    let pools = [connect(&url).await.unwrap(), connect(&url).await.unwrap()];
    let raw = sqlx::PgPool::connect(&url).await.unwrap();
    let entries: Vec<CatalogEntry> = (1..=ASSETS)
        .map(|id| entry(id, &format!("T{id}"), Category::UsStocks, true))
        .collect();
    pools[0].upsert_catalog(&entries).await.unwrap();
    let ids: Vec<i64> = (1..=ASSETS).collect();

    // Races to start the same run: every caller gets one run, and its tasks
    // are all there as soon as the call returns.
    let mut run_id = String::new();
    for round in 0..5 {
        let day = format!("2026-01-0{}", round + 1);
        let mut starters = Vec::new();
        for i in 0..8 {
            let (db, raw, day, ids) = (pools[i % 2].clone(), raw.clone(), day.clone(), ids.clone());
            starters.push(tokio::spawn(async move {
                let run = db
                    .start_or_join_run(&day, "e@1", "s@1", &ids, 1_000 + i as i64)
                    .await
                    .unwrap();
                let tasks: i64 =
                    sqlx::query_scalar("SELECT COUNT(*) FROM grading_tasks WHERE run_id = $1")
                        .bind(&run.id)
                        .fetch_one(&raw)
                        .await
                        .unwrap();
                assert_eq!(
                    (run.total, tasks),
                    (ASSETS, ASSETS),
                    "a joiner sees every task"
                );
                run.id
            }));
        }
        let mut seen = Vec::new();
        for s in starters {
            seen.push(s.await.unwrap());
        }
        seen.dedup();
        assert_eq!(seen.len(), 1, "every replica joins the same run");
        run_id = seen.pop().unwrap();
    }

    // Six workers, three per replica, claim small batches until none are left.
    let mut workers = Vec::new();
    for w in 0..6 {
        let (db, run_id) = (pools[w % 2].clone(), run_id.clone());
        workers.push(tokio::spawn(async move {
            let worker = format!("w{w}");
            let (mut claimed, mut flips) = (Vec::new(), 0);
            loop {
                let batch = db
                    .claim_grading_tasks(&run_id, &worker, 7, 2_000, 600)
                    .await
                    .unwrap();
                if batch.is_empty() {
                    break;
                }
                let grades: Vec<GradeRow> = batch
                    .iter()
                    .flat_map(|&a| [grade_row(a, 30, a as f64), grade_row(a, 90, a as f64)])
                    .collect();
                db.record_grades(&run_id, &worker, &grades, &batch, &[])
                    .await
                    .unwrap();
                flips += usize::from(db.finish_run_if_complete(&run_id, 3_000).await.unwrap());
                claimed.extend(batch);
            }
            flips += usize::from(db.finish_run_if_complete(&run_id, 3_000).await.unwrap());
            (claimed, flips)
        }));
    }
    let (mut all, mut flips) = (Vec::new(), 0);
    for w in workers {
        let (claimed, f) = w.await.unwrap();
        all.extend(claimed);
        flips += f;
    }
    all.sort_unstable();
    assert_eq!(all, ids, "every asset claimed exactly once");
    assert_eq!(flips, 1, "the run completes exactly once");
    assert!(!pools[1]
        .finish_run_if_complete(&run_id, 3_001)
        .await
        .unwrap());
    let active = pools[1].active_grading_run().await.unwrap().unwrap();
    assert_eq!(
        (
            active.id.as_str(),
            active.status.as_str(),
            active.graded,
            active.failures
        ),
        (run_id.as_str(), "done", ASSETS, 0)
    );
    assert_eq!(
        pools[0]
            .ranking_rows(&run_id, 90, "return")
            .await
            .unwrap()
            .len(),
        ASSETS as usize
    );
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM grading_tasks WHERE run_id <> $1")
        .bind(&run_id)
        .fetch_one(&raw)
        .await
        .unwrap();
    assert_eq!(left, 0, "the other runs' tasks are dropped");

    raw.close().await;
    for db in &pools {
        db.close().await;
    }
    pg_drop_test_database(&url).await;
}

fn plugin_record(kind: &str, name: &str, version: &str, sha256: &str, at: i64) -> PluginRecord {
    PluginRecord {
        kind: kind.into(),
        name: name.into(),
        version: version.into(),
        sha256: sha256.into(),
        size: 3,
        builtin: false,
        added_by: "cli:ann".into(),
        added_at: at,
    }
}

fn shadow_sample(candidate: &str, at: i64, error: Option<&str>) -> ShadowSample {
    ShadowSample {
        kind: "segmentation".into(),
        active: "segmentation/default@1.0.0".into(),
        candidate: candidate.into(),
        identical: error.is_none(),
        active_ms: 1.5,
        candidate_ms: 2.25,
        error: error.map(str::to_string),
        diffs: "{\"score\":0.5}".into(),
        at,
    }
}

/// The label of an activation, for compact assertions.
fn activation_label(a: &ActivationRecord) -> String {
    format!("{}/{}@{}", a.kind, a.name, a.version)
}

/// The active activation of `slot`, as a label.
async fn active_in(db: &dyn Database, slot: &str) -> Option<String> {
    db.active_plugins()
        .await
        .unwrap()
        .iter()
        .find(|a| a.slot == slot)
        .map(activation_label)
}

/// The plugin registry: versions (idempotent, conflicts), bytes, activation
/// history and rollback per slot, the generation, shadows and samples.
pub(crate) async fn registry_conformance(db: std::sync::Arc<dyn Database>) {
    // Versions: added once; same bytes again is a no-op; other bytes conflict.
    assert!(db.list_plugins().await.unwrap().is_empty());
    assert_eq!(db.plugins_generation().await.unwrap(), 0, "never bumped");
    let wasm: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let mut seg1 = plugin_record("segmentation", "default", "1.0.0", "aa11", 100);
    seg1.size = wasm.len() as i64;
    seg1.builtin = true;
    seg1.added_by = "builtin".into();
    assert_eq!(
        db.add_plugin(&seg1, &wasm).await.unwrap(),
        AddOutcome::Added
    );
    assert_eq!(
        db.add_plugin(&seg1, &wasm).await.unwrap(),
        AddOutcome::AlreadyPresent
    );
    let other = plugin_record("segmentation", "default", "1.0.0", "bb22", 101);
    assert_eq!(
        db.add_plugin(&other, b"xyz").await.unwrap(),
        AddOutcome::Conflict("aa11".into())
    );
    assert_eq!(
        db.plugin("segmentation", "default", "1.0.0").await.unwrap(),
        Some(seg1.clone()),
        "the first bytes stay"
    );
    assert_eq!(
        db.plugin_wasm("segmentation", "default", "1.0.0")
            .await
            .unwrap(),
        Some(wasm.clone()),
        "bytes round-trip"
    );
    assert!(db
        .plugin("segmentation", "default", "9.9.9")
        .await
        .unwrap()
        .is_none());
    assert!(db
        .plugin_wasm("segmentation", "default", "9.9.9")
        .await
        .unwrap()
        .is_none());
    assert_eq!(
        db.plugins_generation().await.unwrap(),
        0,
        "adding is not a change of what runs"
    );

    // Listing: by kind, name, then added_at (not by version string).
    for r in [
        plugin_record("strategy", "topn", "1.0.0", "s1", 300),
        plugin_record("segmentation", "default", "1.10.0", "d2", 250),
        plugin_record("segmentation", "default", "1.2.0", "d3", 200),
        plugin_record("scorer", "default", "1.0.0", "c1", 400),
        plugin_record("segmentation", "alt", "0.1.0", "e1", 500),
    ] {
        assert_eq!(db.add_plugin(&r, b"abc").await.unwrap(), AddOutcome::Added);
    }
    let listed: Vec<String> = db
        .list_plugins()
        .await
        .unwrap()
        .iter()
        .map(|p| format!("{}/{}@{}", p.kind, p.name, p.version))
        .collect();
    assert_eq!(
        listed,
        [
            "scorer/default@1.0.0",
            "segmentation/alt@0.1.0",
            "segmentation/default@1.0.0",
            "segmentation/default@1.2.0",
            "segmentation/default@1.10.0",
            "strategy/topn@1.0.0",
        ]
    );

    // Activations: each returns its row and bumps the generation.
    let mut generation = db.plugins_generation().await.unwrap();
    let mut history = Vec::new();
    for (i, v) in ["1.0.0", "1.2.0", "1.10.0"].into_iter().enumerate() {
        let a = db
            .activate_plugin(
                "segmentation",
                "segmentation",
                "default",
                v,
                "cli:ann",
                1_000 + i as i64,
            )
            .await
            .unwrap();
        assert_eq!(
            (
                a.slot.as_str(),
                a.version.as_str(),
                a.activated_by.as_str(),
                a.activated_at,
                a.rolled_back
            ),
            ("segmentation", v, "cli:ann", 1_000 + i as i64, false)
        );
        if let Some(previous) = history.last() {
            let previous: &ActivationRecord = previous;
            assert!(a.id > previous.id, "ids increase");
        }
        let g = db.plugins_generation().await.unwrap();
        assert!(g > generation, "activation bumps the generation");
        generation = g;
        history.push(a);
    }
    let topn = db
        .activate_plugin(
            "strategy/topn",
            "strategy",
            "topn",
            "1.0.0",
            "admin-api",
            1_100,
        )
        .await
        .unwrap();
    generation = db.plugins_generation().await.unwrap();
    let active = db.active_plugins().await.unwrap();
    assert_eq!(
        active,
        vec![history[2].clone(), topn.clone()],
        "the newest live row of every slot, by slot"
    );

    // Rollback: C → B → A, then refused (A stays, nothing bumps).
    let back = db.rollback_plugin("segmentation", 2_000).await.unwrap();
    assert_eq!(back, Some(history[1].clone()), "B is current again");
    assert!(db.plugins_generation().await.unwrap() > generation);
    generation = db.plugins_generation().await.unwrap();
    assert_eq!(
        active_in(db.as_ref(), "segmentation").await.as_deref(),
        Some("segmentation/default@1.2.0")
    );
    let back = db.rollback_plugin("segmentation", 2_001).await.unwrap();
    assert_eq!(back, Some(history[0].clone()), "then A");
    assert!(db.plugins_generation().await.unwrap() > generation);
    generation = db.plugins_generation().await.unwrap();
    assert_eq!(
        db.rollback_plugin("segmentation", 2_002).await.unwrap(),
        None,
        "one live activation: nothing to roll back to"
    );
    assert_eq!(
        db.plugins_generation().await.unwrap(),
        generation,
        "a refused rollback changes nothing"
    );
    assert_eq!(
        active_in(db.as_ref(), "segmentation").await.as_deref(),
        Some("segmentation/default@1.0.0")
    );
    assert_eq!(
        db.rollback_plugin("scorer", 2_003).await.unwrap(),
        None,
        "a slot never activated"
    );
    assert_eq!(db.plugins_generation().await.unwrap(), generation);
    // A rolled-back activation never comes back: activating again appends.
    let again = db
        .activate_plugin(
            "segmentation",
            "segmentation",
            "default",
            "1.10.0",
            "cli:bob",
            3_000,
        )
        .await
        .unwrap();
    assert!(again.id > history[2].id);
    assert_eq!(
        db.rollback_plugin("segmentation", 3_001).await.unwrap(),
        Some(history[0].clone()),
        "B and C stay rolled back"
    );

    // Slots are independent: the strategy slot kept its activation.
    assert_eq!(
        active_in(db.as_ref(), "strategy/topn").await.as_deref(),
        Some("strategy/topn@1.0.0")
    );
    let topn2 = db
        .activate_plugin(
            "strategy/topn",
            "strategy",
            "topn",
            "1.1.0",
            "admin-api",
            3_100,
        )
        .await
        .unwrap();
    assert_eq!(
        active_in(db.as_ref(), "segmentation").await.as_deref(),
        Some("segmentation/default@1.0.0"),
        "another slot's activation leaves this one alone"
    );
    assert_eq!(
        db.rollback_plugin("strategy/topn", 3_200).await.unwrap(),
        Some(topn.clone())
    );
    assert_eq!(
        active_in(db.as_ref(), "segmentation").await.as_deref(),
        Some("segmentation/default@1.0.0"),
        "another slot's rollback leaves this one alone"
    );
    assert_ne!(topn2.id, topn.id);
    let slots: Vec<String> = db
        .active_plugins()
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.slot)
        .collect();
    assert_eq!(slots, ["segmentation", "strategy/topn"]);
    generation = db.plugins_generation().await.unwrap();

    // Shadows: set, replace, clear; each change bumps the generation.
    assert!(db.shadows().await.unwrap().is_empty());
    let mut shadow = ShadowConfig {
        kind: "segmentation".into(),
        name: "default".into(),
        version: "1.2.0".into(),
        sample: 0.25,
        started_by: "cli:ann".into(),
        started_at: 4_000,
    };
    db.set_shadow(&shadow).await.unwrap();
    assert!(db.plugins_generation().await.unwrap() > generation);
    generation = db.plugins_generation().await.unwrap();
    assert_eq!(db.shadows().await.unwrap(), vec![shadow.clone()]);
    shadow.version = "1.10.0".into();
    shadow.sample = 1.0;
    shadow.started_at = 4_100;
    db.set_shadow(&shadow).await.unwrap();
    assert!(db.plugins_generation().await.unwrap() > generation);
    generation = db.plugins_generation().await.unwrap();
    let scorer_shadow = ShadowConfig {
        kind: "scorer".into(),
        name: "default".into(),
        version: "1.0.0".into(),
        sample: 0.5,
        started_by: "admin-api".into(),
        started_at: 4_200,
    };
    db.set_shadow(&scorer_shadow).await.unwrap();
    generation = db.plugins_generation().await.unwrap().max(generation);
    assert_eq!(
        db.shadows().await.unwrap(),
        vec![scorer_shadow.clone(), shadow.clone()],
        "one per kind, the latest replacing, by kind"
    );
    assert!(db.clear_shadow("segmentation").await.unwrap());
    assert!(db.plugins_generation().await.unwrap() > generation);
    generation = db.plugins_generation().await.unwrap();
    assert!(
        !db.clear_shadow("segmentation").await.unwrap(),
        "already gone"
    );
    assert_eq!(
        db.plugins_generation().await.unwrap(),
        generation,
        "clearing nothing changes nothing"
    );
    assert_eq!(db.shadows().await.unwrap(), vec![scorer_shadow]);

    // Samples: read back per (kind, candidate), oldest first.
    let samples = [
        shadow_sample("segmentation/default@1.10.0", 5_000, None),
        shadow_sample("segmentation/default@1.2.0", 5_001, None),
        shadow_sample(
            "segmentation/default@1.10.0",
            5_002,
            Some("trap: out of fuel"),
        ),
        shadow_sample("segmentation/default@1.10.0", 5_002, None),
    ];
    for s in &samples {
        db.record_shadow_sample(s).await.unwrap();
    }
    assert_eq!(
        db.shadow_samples("segmentation", "segmentation/default@1.10.0")
            .await
            .unwrap(),
        vec![samples[0].clone(), samples[2].clone(), samples[3].clone()]
    );
    assert_eq!(
        db.shadow_samples("segmentation", "segmentation/default@1.2.0")
            .await
            .unwrap(),
        vec![samples[1].clone()]
    );
    assert!(db
        .shadow_samples("scorer", "segmentation/default@1.10.0")
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        db.plugins_generation().await.unwrap(),
        generation,
        "samples are not changes"
    );

    // Concurrency: 10 rollbacks against 5 live activations undo exactly 4.
    concurrent_rollbacks(std::slice::from_ref(&db), "matcher").await;
}

/// Activates five versions in `slot`, then runs 10 rollbacks at once spread
/// over `dbs` (pools standing in for replicas): exactly 4 succeed, each
/// returning a distinct earlier activation, and the first is active after.
pub(crate) async fn concurrent_rollbacks(dbs: &[std::sync::Arc<dyn Database>], slot: &str) {
    let mut activations = Vec::new();
    for i in 0..5 {
        activations.push(
            dbs[0]
                .activate_plugin(slot, "matcher", "m", &format!("1.{i}.0"), "t", 10_000 + i)
                .await
                .unwrap(),
        );
    }
    let before = dbs[0].plugins_generation().await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..10 {
        let (db, slot) = (dbs[i % dbs.len()].clone(), slot.to_string());
        tasks.push(tokio::spawn(async move {
            db.rollback_plugin(&slot, 20_000).await.unwrap()
        }));
    }
    let mut restored = Vec::new();
    for t in tasks {
        if let Some(a) = t.await.unwrap() {
            restored.push(a.id);
        }
    }
    restored.sort_unstable();
    assert_eq!(
        restored,
        activations[..4].iter().map(|a| a.id).collect::<Vec<_>>(),
        "exactly 4 rollbacks succeed, each restoring the next older activation"
    );
    let active = dbs[0].active_plugins().await.unwrap();
    let current = active.iter().find(|a| a.slot == slot).unwrap();
    assert_eq!(current, &activations[0], "the first activation is active");
    assert_eq!(
        dbs[0].plugins_generation().await.unwrap(),
        before + 4,
        "one bump per successful rollback"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_registry_conformance() {
    let dir = tempfile::tempdir().unwrap();
    let db = connect(&format!("sqlite://{}", dir.path().join("p.db").display()))
        .await
        .unwrap();
    registry_conformance(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_registry_conformance() {
    let Some(url) = pg_test_database().await else {
        return;
    };
    let db = connect(&url).await.unwrap();
    registry_conformance(db.clone()).await;
    db.close().await;
    pg_drop_test_database(&url).await;
}

/// Two pools on one database stand in for two replicas: rollbacks from both
/// undo one activation each; an activation racing rollbacks is never lost
/// behind them (ids follow commit order); concurrent adds of one key agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_registry_across_pools() {
    let Some(url) = pg_test_database().await else {
        return;
    };
    let pools = [connect(&url).await.unwrap(), connect(&url).await.unwrap()];
    concurrent_rollbacks(&pools, "matcher").await;

    // Ten replicas registering the same built-in at once: one adds it.
    let mut adds = Vec::new();
    for i in 0..10 {
        let db = pools[i % 2].clone();
        adds.push(tokio::spawn(async move {
            let r = plugin_record("scorer", "default", "2.0.0", "same", 1);
            db.add_plugin(&r, b"bytes").await.unwrap()
        }));
    }
    let mut outcomes = Vec::new();
    for t in adds {
        outcomes.push(t.await.unwrap());
    }
    assert_eq!(
        outcomes.iter().filter(|o| **o == AddOutcome::Added).count(),
        1
    );
    assert!(outcomes
        .iter()
        .all(|o| matches!(o, AddOutcome::Added | AddOutcome::AlreadyPresent)));

    // Activations and rollbacks interleaved across pools: the generation
    // counts every change, and the slot ends on a live activation.
    let g0 = pools[0].plugins_generation().await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let db = pools[i % 2].clone();
        tasks.push(tokio::spawn(async move {
            if i % 2 == 0 {
                db.activate_plugin(
                    "scorer",
                    "scorer",
                    "default",
                    &format!("3.{i}.0"),
                    "t",
                    i as i64,
                )
                .await
                .unwrap();
                true
            } else {
                db.rollback_plugin("scorer", i as i64)
                    .await
                    .unwrap()
                    .is_some()
            }
        }));
    }
    let mut changes = 0;
    for t in tasks {
        changes += i64::from(t.await.unwrap());
    }
    assert_eq!(pools[1].plugins_generation().await.unwrap(), g0 + changes);
    let live: i64 = {
        let raw = sqlx::PgPool::connect(&url).await.unwrap();
        let n = sqlx::query_scalar(
            "SELECT COUNT(*) FROM plugin_activations WHERE slot = 'scorer' AND NOT rolled_back",
        )
        .fetch_one(&raw)
        .await
        .unwrap();
        raw.close().await;
        n
    };
    assert_eq!(
        live,
        10 - (changes - 10),
        "each rollback undid one activation"
    );
    let newest_live = pools[0]
        .active_plugins()
        .await
        .unwrap()
        .into_iter()
        .find(|a| a.slot == "scorer")
        .unwrap();
    assert!(!newest_live.rolled_back);

    for db in &pools {
        db.close().await;
    }
    pg_drop_test_database(&url).await;
}
