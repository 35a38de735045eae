//! The request path's copies in memory (issue 17): keys, the active
//! grading run, assets and served verdict bodies are kept by each replica
//! and checked against the store's generation counters on every request.
//! These tests write behind the server's back — another process (the CLI)
//! or a hand-written statement — and expect the very next request to see
//! it; and they check that a verdict served from memory is byte for byte
//! the body the snapshot gave before.

use crate::common;

use common::{cli_ok, create_key, sqlite_url, Server};
use forecast_services::verdict::VerdictResponse;

async fn exec(url: &str, statement: &str) {
    let pool = sqlx::SqlitePool::connect(url).await.unwrap();
    sqlx::query(statement).execute(&pool).await.unwrap();
    pool.close().await;
}

async fn scalar(url: &str, statement: &str) -> String {
    let pool = sqlx::SqlitePool::connect(url).await.unwrap();
    let v: String = sqlx::query_scalar(statement)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    v
}

/// A small graded universe (as tests/it/grading.rs).
async fn graded_db() -> std::path::PathBuf {
    let db = common::fresh_db();
    let url = sqlite_url(&db);
    exec(
        &url,
        "UPDATE assets SET is_active = (id IN (SELECT MIN(id) FROM assets GROUP BY category)
             OR ticker IN ('^GSPC', '^IXIC', '^VIX', 'CL=F', 'AAPL'))",
    )
    .await;
    common::grade_ok(&url);
    db
}

/// The raw body of a GET with the test key.
async fn raw(s: &Server, path: &str, key: &str) -> (u16, String) {
    let r = s.get_bearer(path, key).await;
    let status = r.status().as_u16();
    assert_eq!(
        r.headers().get("content-type").unwrap(),
        "application/json",
        "{path}"
    );
    assert!(r.headers().contains_key("x-ratelimit-remaining"), "{path}");
    (status, r.text().await.unwrap())
}

#[tokio::test]
async fn a_cached_verdict_is_the_snapshots_body_byte_for_byte() {
    let db = graded_db().await;
    let url = sqlite_url(&db);
    let s = Server::app_with(db, &[]).await;
    let key = common::test_key();
    for path in [
        "/api/analysis/%5EGSPC/verdict",
        "/api/analysis/%5EGSPC/verdict?return_period=30&metric=sortino",
    ] {
        let (status, first) = raw(&s, path, key).await;
        assert_eq!(status, 200, "{first}");
        let (_, second) = raw(&s, path, key).await;
        assert_eq!(first, second, "served from memory the second time");
        // What the handler wrote before issue 17: the stored body parsed,
        // marked from_cache, with the asset's last price date, and written
        // by serde_json from the typed response.
        let v: VerdictResponse = serde_json::from_str(&first).unwrap();
        assert!(v.metadata.from_cache);
        let stored = scalar(
            &url,
            &format!(
                "SELECT body FROM grades WHERE run_id =
                   (SELECT value FROM settings WHERE key = 'active_grading_run')
                 AND asset_id = {} AND return_period = {} AND metric = '{}'",
                v.metadata.asset_id,
                v.metadata.return_period,
                v.metadata.metric.as_str()
            ),
        )
        .await;
        let mut expected: VerdictResponse = serde_json::from_str(&stored).unwrap();
        expected.metadata.from_cache = true;
        let last = scalar(
            &url,
            &format!(
                "SELECT last_date FROM daily_prices WHERE asset_id = {}",
                v.metadata.asset_id
            ),
        )
        .await;
        expected.metadata.last_price_date = last.parse().unwrap();
        assert_eq!(
            first.as_bytes(),
            serde_json::to_vec(&expected).unwrap(),
            "{path}"
        );
    }
}

#[tokio::test]
async fn writes_by_other_processes_are_seen_on_the_next_request() {
    let db = graded_db().await;
    let url = sqlite_url(&db);
    // A clock that stands still: the quota counts below land in one
    // minute whatever the wall clock does.
    let (s, _clock) = Server::app_with_clock(db.clone(), &[]).await;
    let key = common::test_key();

    // New prices for AAPL from the CLI: its cached verdict is dropped (the
    // snapshot no longer describes its data), ^GSPC's stays.
    let cached = |ticker: &'static str| {
        let s = &s;
        async move {
            s.api()
                .verdict(ticker, "")
                .await
                .unwrap()
                .metadata
                .from_cache
        }
    };
    assert!(cached("AAPL").await);
    assert!(cached("AAPL").await);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("AAPL.csv");
    std::fs::write(&csv, "date,close\n2026-11-02,123.0\n2026-11-03,124.5\n").unwrap();
    cli_ok(&db, &["ingest", "csv", csv.to_str().unwrap()], "");
    let after = s.api().verdict("AAPL", "").await.unwrap();
    assert!(!after.metadata.from_cache, "new prices: live");
    assert_eq!(after.current_state.price, 124.5);
    let gspc = "/api/analysis/%5EGSPC/verdict";
    assert!(cached("^GSPC").await);

    // The active run switched off by a hand-written statement: the next
    // verdict is computed live.
    exec(
        &url,
        "UPDATE settings SET value = 'no-such-run' WHERE key = 'active_grading_run'",
    )
    .await;
    assert!(!cached("^GSPC").await);

    // An asset deactivated behind the server's back is 404 at once.
    exec(
        &url,
        "UPDATE assets SET is_active = 0 WHERE ticker = '^GSPC'",
    )
    .await;
    assert_eq!(s.get(gspc).await.0, 404);

    // A key used (so remembered), then revoked by a hand-written
    // statement and by the CLI's tier change: refused on the next request.
    add_premium_user(&db, "mem@example.com");
    let other = create_key(&db, "mem@example.com", "mem");
    assert_eq!(s.get_as("/api/strategies", Some(&other)).await.0, 200);
    exec(
        &url,
        "UPDATE api_keys SET revoked_at = 1 WHERE name = 'mem'",
    )
    .await;
    assert_eq!(s.get_as("/api/strategies", Some(&other)).await.0, 401);
    assert_eq!(s.get_as("/api/strategies", Some(key)).await.0, 200);

    a_stale_remembered_key_gets_its_charge_back_and_new_limits_bind(&s).await;
}

/// `forecast user add` of a Premium user to `db`.
fn add_premium_user(db: &std::path::Path, email: &str) {
    common::add_user(db, email, "premium", None);
}

/// A remembered key is charged before it is confirmed: a stale one gets
/// its charge back (the 401 counts nothing), and a new limit set by the
/// CLI binds on the next request.
async fn a_stale_remembered_key_gets_its_charge_back_and_new_limits_bind(s: &Server) {
    let (db, url) = (&s.db, sqlite_url(&s.db));
    add_premium_user(db, "lim@example.com");
    let first_key = create_key(db, "lim@example.com", "lim1");
    let second_key = create_key(db, "lim@example.com", "lim2");
    let get = |key: &str| {
        s.client()
            .get(s.url("/api/strategies"))
            .bearer_auth(key)
            .send()
    };
    let seen = |r: common::client::Response| {
        let h = |name: &str| {
            r.headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default()
        };
        (
            r.status().as_u16(),
            h("x-ratelimit-limit"),
            h("x-ratelimit-remaining"),
        )
    };
    let ok = |limit: &str, remaining: &str| (200, limit.to_string(), remaining.to_string());
    assert_eq!(seen(get(&first_key).await.unwrap()), ok("60", "59"));
    assert_eq!(seen(get(&second_key).await.unwrap()), ok("60", "58"));
    exec(
        &url,
        "UPDATE api_keys SET revoked_at = 1 WHERE name = 'lim1'",
    )
    .await;
    assert_eq!(get(&first_key).await.unwrap().status(), 401);
    assert_eq!(
        seen(get(&second_key).await.unwrap()),
        ok("60", "57"),
        "the refused request was not counted"
    );
    common::set_limits(db, "lim@example.com", 5, None);
    assert_eq!(seen(get(&second_key).await.unwrap()), ok("5", "1"));
    assert_eq!(seen(get(&second_key).await.unwrap()), ok("5", "0"));
    assert_eq!(get(&second_key).await.unwrap().status(), 429);
}
