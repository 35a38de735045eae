//! SQLite implementation of the store traits (the embedded default), one
//! file per aggregate.
//!
//! SQLite has one writer at a time. Read-check-write steps (key limits,
//! task claims, rollbacks) take this process's writer lock and then
//! `BEGIN IMMEDIATE`, so the check and the write see no other writer in
//! between; other processes on the same file meet SQLite's busy timeout.

mod accounts;
mod alerts;
mod assets;
mod caches;
mod embeddings;
mod generations;
mod grading;
mod jobs;
mod quotas;
mod registry;
mod strategies;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

use crate::work_list::WorkList;
use crate::{StoreError, StoreResult};

use quotas::{Counters, Durability};

/// A SQLite database file (WAL mode, one writer at a time).
#[derive(Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    /// Serialises this process's write transactions before they reach
    /// SQLite, whose own lock waits by sleeping (long tails under load);
    /// other processes still meet SQLite's busy timeout.
    writer: Arc<tokio::sync::Mutex<()>>,
    /// Quota and login counters, kept in this process and committed in
    /// batches before an admission returns.
    counters: Arc<tokio::sync::Mutex<Counters>>,
    durability: Arc<Durability>,
    /// Dates the rows whose time the callers do not pass.
    clock: forecast_domain::SharedClock,
}

impl SqliteStore {
    /// The process's writer lock (see [`SqliteStore::write_tx`]).
    pub(super) async fn write_lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.writer.lock().await
    }

    /// A write transaction under the process's writer lock, begun
    /// `IMMEDIATE`: no other writer runs until it ends (the guard with it).
    pub(super) async fn write_tx(
        &self,
    ) -> StoreResult<(
        tokio::sync::MutexGuard<'_, ()>,
        sqlx::Transaction<'static, sqlx::Sqlite>,
    )> {
        let guard = self.write_lock().await;
        let tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        Ok((guard, tx))
    }

    /// A write of `_user_id`'s rows: [`SqliteStore::write_tx`] (SQLite has
    /// one writer, so this serialises every user's writes, not only theirs).
    pub(super) async fn user_tx(
        &self,
        _user_id: &str,
    ) -> StoreResult<(
        tokio::sync::MutexGuard<'_, ()>,
        sqlx::Transaction<'static, sqlx::Sqlite>,
    )> {
        self.write_tx().await
    }
}

impl SqliteStore {
    /// Opens `url` (creating the file and its folder), applies migrations.
    pub async fn open(url: &str) -> StoreResult<Self> {
        SqliteStore::open_with_clock(url, forecast_domain::SystemClock::shared()).await
    }

    /// [`SqliteStore::open`], dating rows by `clock`.
    pub async fn open_with_clock(
        url: &str,
        clock: forecast_domain::SharedClock,
    ) -> StoreResult<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10))
            // PostgreSQL's byte-order collation, so the shared statements
            // can say `COLLATE "C"` (see `sql`). Rust's `str` order is
            // byte order, as SQLite's own BINARY.
            .collation("C", |a: &str, b: &str| a.cmp(b));
        if let Some(dir) = options.get_filename().parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|e| StoreError::Sqlx(sqlx::Error::Io(e)))?;
            }
        }
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            // A local file: no connection to lose, so no ping (a round
            // trip through the connection's worker thread) before every
            // statement.
            .test_before_acquire(false)
            .connect_with(options)
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&pool).await?;
        let store = SqliteStore {
            pool,
            writer: Arc::new(tokio::sync::Mutex::new(())),
            counters: Arc::new(tokio::sync::Mutex::new(Counters::default())),
            durability: Arc::new(Durability::default()),
            clock,
        };
        tokio::spawn(store.clone().flush_loop());
        Ok(store)
    }
}

crate::impl_store_admin!(SqliteStore, "sqlite" {
    async fn close(&self) {
        if let Err(e) = self.flush_counters().await {
            tracing::warn!(error = %e, "could not persist quota counters");
        }
        // Fold the WAL into the main file first, so a file copied right
        // after a CLI command exits holds everything it wrote.
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&self.pool)
            .await
        {
            tracing::warn!(error = %e, "WAL checkpoint on close failed");
        }
        self.pool.close().await;
        // Lets the flusher see the closed pool and end.
        self.durability_wake();
    }
});

crate::work_list::impl_claim_work!(SqliteStore, lock: "");

/// Items per multi-row insert (3 parameters each, well under SQLite's
/// 32,766-parameter limit).
const ITEM_CHUNK: usize = 500;

/// Inserts one pending item of `list` per id of run `run_id`.
async fn insert_pending(
    tx: &mut sqlx::SqliteConnection,
    list: &WorkList,
    run_id: &str,
    ids: &[i64],
) -> StoreResult<()> {
    for chunk in ids.chunks(ITEM_CHUNK) {
        let mut q = sqlx::QueryBuilder::new(list.insert_head());
        q.push_values(chunk, |mut b, id| {
            b.push_bind(run_id).push_bind(id).push_bind("pending");
        });
        q.build().execute(&mut *tx).await?;
    }
    Ok(())
}
