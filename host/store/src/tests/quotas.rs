//! Counting windows.

use super::*;

/// Counters: both windows or nothing; rejected attempts count nothing; a
/// new window starts from zero; concurrent admissions never exceed a limit.
pub(crate) async fn quotas_conformance(db: Arc<dyn Database>) {
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

    // Tallies: no limit, added to the current window, a new window starts
    // from the cost; listed by prefix, other subjects and kinds apart.
    let route = |kind: &'static str, seconds| Window {
        kind,
        seconds,
        limit: 1,
    };
    let tallied = [
        route("route-minute GET /a", 60),
        route("route-day GET /a", 86_400),
    ];
    db.tally("u1", &tallied, 3, t0).await.unwrap();
    db.tally("u1", &tallied, 4, t0 + 1).await.unwrap();
    db.tally("u1", &tallied[..1], 2, t0 + 30).await.unwrap();
    db.tally("u2", &tallied, 9, t0).await.unwrap();
    assert_eq!(
        db.counters_of("u1", "route-").await.unwrap(),
        vec![
            ("route-day GET /a".to_string(), t0 - t0 % 86_400, 7),
            ("route-minute GET /a".to_string(), t0 - 40 + 60, 2),
        ]
    );
    assert!(db.counters_of("u1", "nothing").await.unwrap().is_empty());

    // Concurrency: 75 requests against a limit of 60 admit exactly 60.
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
    assert_eq!(successes(tasks).await, 60);

    // Generation counters answered with an admitted count (SQLite reads them
    // with the commit that made the count durable) were read after the
    // count arrived: a change committed before it shows in them.
    db.create_user("gen@example.com", "h", Tier::Premium, t0)
        .await
        .unwrap();
    let before = db.generations().await.unwrap();
    db.set_user_tier("gen@example.com", Tier::Free)
        .await
        .unwrap();
    let now = db.generations().await.unwrap();
    assert!(
        now.auth > before.auth,
        "a tier change bumps the auth generation"
    );
    let (counted, read) = db.consume_checked("gen", &windows, 1, t0).await.unwrap();
    assert!(counted.admitted);
    if let Some(read) = read {
        assert_eq!(read, now);
    }
    if db.backend() == "sqlite" {
        assert!(read.is_some(), "SQLite reads them with its group commit");
    }
}

/// Two pools on one database stand in for two server processes: the
/// limits hold across them, and two-window consumption never deadlocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_limits_hold_across_pools() {
    let url = pg_test_database().await;
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
    assert_eq!((successes(keys).await, successes(uses).await), (5, 60));
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

/// A look (cost 0) counts nothing; `reset` forgets a subject's counters;
/// `purge_counters` deletes login counters after an hour and the others
/// after two days, and a purged subject starts from zero.
pub(crate) async fn counter_upkeep_conformance(db: Arc<dyn Database>) {
    let login = [Window {
        kind: "login",
        seconds: 300,
        limit: 3,
    }];
    let minute = [Window {
        kind: "minute",
        seconds: 60,
        limit: 5,
    }];
    let t0 = 1_700_000_000;
    let look = db.consume("login:a", &login, 0, t0).await.unwrap();
    assert!(look.admitted);
    assert_eq!(look.windows[0].used, 0);
    for _ in 0..3 {
        assert!(db.consume("login:a", &login, 1, t0).await.unwrap().admitted);
    }
    let look = db.consume("login:a", &login, 0, t0 + 1).await.unwrap();
    assert_eq!(look.windows[0].used, 3, "a look sees the count");
    assert!(
        !db.consume("login:a", &login, 1, t0 + 1)
            .await
            .unwrap()
            .admitted
    );
    db.reset("login:a").await.unwrap();
    assert_eq!(
        db.consume("login:a", &login, 0, t0 + 2)
            .await
            .unwrap()
            .windows[0]
            .used,
        0
    );

    db.consume("login:b", &login, 2, t0).await.unwrap();
    db.consume("user-1", &minute, 4, t0).await.unwrap();
    // Within retention nothing goes.
    db.purge_counters(t0 + 600).await.unwrap();
    let b = db.consume("login:b", &login, 0, t0 + 50).await.unwrap();
    assert_eq!(b.windows[0].used, 2);
    // After an hour the login counter goes, the quota counter stays.
    assert!(db.purge_counters(t0 + 4_000).await.unwrap() >= 1);
    let b = db.consume("login:b", &login, 0, t0 + 50).await.unwrap();
    assert_eq!(b.windows[0].used, 0, "purged");
    let u = db.consume("user-1", &minute, 0, t0 + 10).await.unwrap();
    assert_eq!(u.windows[0].used, 4, "a quota counter outlives a login one");
    db.purge_counters(t0 + 3 * 86_400).await.unwrap();
    let u = db.consume("user-1", &minute, 0, t0 + 10).await.unwrap();
    assert_eq!(u.windows[0].used, 0);
}

/// SQLite answers a subject's counters from memory once it has read them:
/// what an earlier process left in the table joins what this one counts,
/// later counts show without a read, and a reset forgets both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_counters_of_joins_the_table_once_then_answers_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("store.db").display());
    let t0 = 1_700_000_080;
    let day = t0 - t0 % 86_400;
    let route = |kind: &'static str| Window {
        kind,
        seconds: 86_400,
        limit: 1,
    };
    let (a, b) = (route("route-day GET /a"), route("route-day GET /b"));
    let first = connect(&url).await.unwrap();
    first.tally("u1", &[a, b], 4, t0).await.unwrap();
    first.close().await;

    let db = connect(&url).await.unwrap();
    db.tally("u1", &[a], 1, t0 + 1).await.unwrap();
    let listed = |a: i64, b: i64| {
        vec![
            ("route-day GET /a".to_string(), day, a),
            ("route-day GET /b".to_string(), day, b),
        ]
    };
    assert_eq!(db.counters_of("u1", "route-").await.unwrap(), listed(5, 4));
    // Read once: a row written behind the store's back (no process of the
    // service does; `serve` holds the file alone) is not read again.
    let behind = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query("INSERT INTO counters (subject, kind, window_start, used) VALUES ('u1', 'route-day GET /c', $1, 9)")
        .bind(day)
        .execute(&behind)
        .await
        .unwrap();
    behind.close().await;
    assert_eq!(db.counters_of("u1", "route-").await.unwrap(), listed(5, 4));
    db.tally("u1", &[b], 2, t0 + 2).await.unwrap();
    assert_eq!(db.counters_of("u1", "route-").await.unwrap(), listed(5, 6));
    db.reset("u1").await.unwrap();
    db.tally("u1", &[a], 1, t0 + 3).await.unwrap();
    db.tally("u2", &[a], 1, t0 + 3).await.unwrap();
    assert_eq!(
        db.counters_of("u1", "route-").await.unwrap(),
        vec![("route-day GET /a".to_string(), day, 1)]
    );
    db.close().await;
}
