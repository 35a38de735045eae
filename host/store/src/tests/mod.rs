//! The conformance suites: store behaviour every backend must show, one
//! suite per aggregate, each run on SQLite (a temporary file) and on
//! PostgreSQL (a fresh database on the server of `TEST_DATABASE_URL`, or
//! the local one when unset, dropped after; never skipped). Tests that need two pools on one database (standing in for
//! replicas) are PostgreSQL-only and sit with their aggregate's suite.

mod accounts;
mod alerts;
mod assets;
mod embeddings;
mod grading;
mod jobs;
mod quotas;
mod registry;
mod strategies;
mod upgrades;

pub(crate) use std::sync::Arc;

pub(crate) use forecast_domain::series::PriceSeries;
pub(crate) use forecast_domain::{Category, DataSource, Metric, PluginKind, Tier};

pub(crate) use crate::prelude::*;
pub(crate) use crate::{
    connect, redact, ActivationRecord, AddOutcome, CatalogEntry, GradeRow, PluginRecord,
    ShadowConfig, ShadowSample, StoreError, TrackPoints, Window,
};

pub(crate) fn entry(id: i64, ticker: &str, category: Category, active: bool) -> CatalogEntry {
    CatalogEntry::minimal(id, ticker, category, active)
}

/// Creates a user: the suites' fixture.
pub(crate) async fn user(
    db: &dyn Database,
    email: &str,
    password_hash: &str,
    tier: Tier,
) -> forecast_domain::User {
    db.create_user(email, password_hash, tier, 1).await.unwrap()
}

/// Stores catalog rows: the suites' fixture.
pub(crate) async fn catalog(db: &dyn Database, entries: &[CatalogEntry]) {
    db.upsert_catalog(entries).await.unwrap();
}

/// How many of `tasks` (run at once) answered true.
pub(crate) async fn successes(tasks: Vec<tokio::task::JoinHandle<bool>>) -> usize {
    let mut n = 0;
    for t in tasks {
        n += usize::from(t.await.unwrap());
    }
    n
}

/// One `#[tokio::test]` per backend running `$suite` (an
/// `async fn(Arc<dyn Database>)`) on a fresh store: `$name::sqlite` and
/// `$name::postgres`.
macro_rules! on_both_backends {
    ($name:ident, $suite:path) => {
        mod $name {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                let dir = tempfile::tempdir().unwrap();
                // A nested path: opening creates the folder.
                let path = dir.path().join("nested/store.db");
                let db = connect(&format!("sqlite://{}", path.display()))
                    .await
                    .unwrap();
                assert_eq!(db.backend(), "sqlite");
                db.ping().await.unwrap();
                $suite(db.clone()).await;
                db.close().await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn postgres() {
                let url = pg_test_database().await;
                let db = connect(&url).await.unwrap();
                assert_eq!(db.backend(), "postgres");
                db.ping().await.unwrap();
                $suite(db.clone()).await;
                db.close().await;
                pg_drop_test_database(&url).await;
            }
        }
    };
}

on_both_backends!(assets_suite, assets::assets_conformance);
on_both_backends!(accounts_suite, accounts::accounts_conformance);
on_both_backends!(watchlist_suite, accounts::watchlist_conformance);
on_both_backends!(password_suite, accounts::password_change_conformance);
on_both_backends!(session_expiry_suite, accounts::session_expiry_conformance);
on_both_backends!(quotas_suite, quotas::quotas_conformance);
on_both_backends!(counter_upkeep_suite, quotas::counter_upkeep_conformance);
on_both_backends!(grading_suite, grading::grading_conformance);
on_both_backends!(registry_suite, registry::registry_conformance);
on_both_backends!(jobs_suite, jobs::jobs_conformance);
on_both_backends!(embeddings_suite, embeddings::embeddings_conformance);
on_both_backends!(strategies_suite, strategies::strategies_conformance);
on_both_backends!(alerts_suite, alerts::alerts_conformance);

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

/// The PostgreSQL server of the tests: `TEST_DATABASE_URL` (`.ci/run` sets
/// it), else the local server every machine of this project runs. The
/// PostgreSQL tests never skip: an unreachable server fails them.
fn pg_admin_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// A fresh, empty PostgreSQL database for one test, created on the server
/// of [`pg_admin_url`]; its URL. Drop it with [`pg_drop_test_database`].
pub(crate) async fn pg_test_database() -> String {
    use sqlx::Connection;
    let admin = pg_admin_url();
    let name = format!("fe_test_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("TEST_DATABASE_URL {}: {e}", redact(&admin)));
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    with_database(&admin, &name)
}

/// Drops a database made by [`pg_test_database`] (close its pools first;
/// `WITH (FORCE)` ends any connection left over).
pub(crate) async fn pg_drop_test_database(url: &str) {
    use sqlx::Connection;
    let admin = pg_admin_url();
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
