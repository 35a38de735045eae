//! Upgrades of a database that already holds data: each backend's schema
//! as an earlier release left it, filled, then opened by this release.

use super::*;

/// Two assets and a run: the rows histories hang on, in the schema of
/// migration 0016 on both backends.
const BEFORE_0017: [&str; 3] = [
    "INSERT INTO assets (id, ticker, name, category) VALUES
        (1, 'AAA', 'A', 'US Stocks'), (2, 'BBB', 'B', 'US Stocks')",
    "INSERT INTO grading_runs (id, day, engine, scorer, status, started_at, total)
        VALUES ('r1', '2026-11-30', 'e', 's', 'running', 1, 2)",
    "INSERT INTO track_points (run_id, asset_id, return_period, metric, body)
        VALUES ('r1', 1, 90, 'return', $1), ('r1', 2, 90, 'return', $2)",
];

/// The histories stored before the upgrade.
const BODIES: [&[u8]; 2] = [b"history of A", b"history of B"];

/// The migrations of `backend` up to and including `last`, copied into a
/// folder of their own: the schema an earlier release left.
async fn migrations_until(
    backend: &str,
    last: u32,
) -> (tempfile::TempDir, sqlx::migrate::Migrator) {
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(backend);
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let name = entry.unwrap().file_name();
        let version: u32 = name.to_str().unwrap()[..4].parse().unwrap();
        if version <= last {
            std::fs::copy(from.join(&name), dir.path().join(&name)).unwrap();
        }
    }
    let migrator = sqlx::migrate::Migrator::new(dir.path()).await.unwrap();
    assert_eq!(migrator.iter().count(), last as usize);
    (dir, migrator)
}

/// After the upgrade the histories read back as they were stored, and the
/// next history stored gets a body of its own (its id past the moved ones)
/// while the old ones stay.
async fn histories_survive(db: Arc<dyn Database>) {
    let read = |run: &'static str| {
        let db = db.clone();
        async move {
            db.track_points(run, 90, Metric::Return)
                .await
                .unwrap()
                .into_iter()
                .map(|t| (t.asset_id, t.body))
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        read("r1").await,
        vec![(1, BODIES[0].to_vec()), (2, BODIES[1].to_vec())]
    );
    let mut after = db.asset_histories("r1", &[1]).await.unwrap();
    let moved = after[0].points[0].stored.take();
    assert!(moved.is_some(), "{after:?}");
    let new = TrackPoints {
        asset_id: 2,
        return_period: 90,
        metric: Metric::Return,
        body: b"new history of B".to_vec(),
        stored: None,
    };
    db.record_track_points("r1", &[new], &[]).await.unwrap();
    assert_eq!(
        read("r1").await,
        vec![(1, BODIES[0].to_vec()), (2, b"new history of B".to_vec())]
    );
    let again = db.asset_histories("r1", &[1, 2]).await.unwrap();
    assert_eq!(again[0].points[0].stored, moved);
    assert_ne!(again[1].points[0].stored, moved);
}

/// Brings `$pool` to migration 0016 of `$backend` and stores the
/// histories there, then closes it (the earlier release stops).
macro_rules! stored_at_0016 {
    ($pool:expr, $backend:literal) => {{
        let pool = $pool;
        let (_folder, migrator) = migrations_until($backend, 16).await;
        migrator.run(&pool).await.unwrap();
        for (i, sql) in BEFORE_0017.iter().enumerate() {
            let q = sqlx::query(sql);
            let q = if i == 2 {
                q.bind(BODIES[0]).bind(BODIES[1])
            } else {
                q
            };
            q.execute(&pool).await.unwrap();
        }
        pool.close().await;
    }};
}

/// This release opens (and migrates) the database at `url`.
async fn upgraded(url: &str) {
    let db = connect(url).await.unwrap();
    histories_survive(db.clone()).await;
    db.close().await;
}

#[tokio::test]
async fn sqlite_histories_survive_the_move_to_shared_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("old.db").display());
    stored_at_0016!(sqlx::SqlitePool::connect(&url).await.unwrap(), "sqlite");
    upgraded(&url).await;
}

#[tokio::test]
async fn postgres_histories_survive_the_move_to_shared_bodies() {
    let url = pg_test_database().await;
    stored_at_0016!(sqlx::PgPool::connect(&url).await.unwrap(), "postgres");
    upgraded(&url).await;
    pg_drop_test_database(&url).await;
}
