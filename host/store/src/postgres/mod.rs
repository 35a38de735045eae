//! PostgreSQL implementation of the store traits (for several server
//! processes sharing one database), one file per aggregate.
//!
//! Where SQLite relies on its single writer (`BEGIN IMMEDIATE`), this
//! backend takes row locks (`SELECT … FOR UPDATE`, `SKIP LOCKED`, advisory
//! locks) inside a transaction, so the guarantees hold across processes,
//! not just within one. Batches travel as parallel arrays expanded by
//! `UNNEST`: one statement per chunk instead of one per row.

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

use std::time::Duration;

use sqlx::postgres::PgPoolOptions;
use sqlx::{PgPool, Postgres, Transaction};

use crate::work_list::WorkList;
use crate::StoreResult;

/// Locks a user's row (see [`PgStore::user_tx`]).
const LOCK_USER: &str = "SELECT id FROM users WHERE id = $1 FOR UPDATE";

/// A PostgreSQL database reached through a connection pool.
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    /// Dates the rows whose time the callers do not pass.
    clock: forecast_domain::SharedClock,
}

impl PgStore {
    /// Connects to `url` (the database must exist) and applies migrations.
    pub async fn open(url: &str) -> StoreResult<Self> {
        PgStore::open_with_clock(url, forecast_domain::SystemClock::shared()).await
    }

    /// [`PgStore::open`], dating rows by `clock`.
    pub async fn open_with_clock(
        url: &str,
        clock: forecast_domain::SharedClock,
    ) -> StoreResult<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await?;
        sqlx::migrate!("./migrations/postgres").run(&pool).await?;
        Ok(PgStore { pool, clock })
    }

    /// No lock (the counterpart of SQLite's writer lock): PostgreSQL has
    /// no process-wide writer to serialise, the rows a statement writes
    /// lock themselves.
    pub(super) async fn write_lock(&self) {}

    /// A write transaction, with no guard of the process's own (the
    /// shared implementations' counterpart of SQLite's writer lock): the
    /// rows a statement writes stay locked until it ends.
    pub(super) async fn write_tx(&self) -> StoreResult<((), Transaction<'static, Postgres>)> {
        Ok(((), self.pool.begin().await?))
    }

    /// A transaction holding the lock of `user_id`'s row, so one user's
    /// read-check-writes (key and alert limits) run one after the other in
    /// every process.
    pub(super) async fn user_tx(
        &self,
        user_id: &str,
    ) -> StoreResult<((), Transaction<'static, Postgres>)> {
        self.locked_tx(LOCK_USER, user_id).await
    }

    /// A transaction that first runs `lock`, a statement of `key` taking a
    /// lock held until the transaction ends.
    pub(super) async fn locked_tx(
        &self,
        lock: &str,
        key: &str,
    ) -> StoreResult<((), Transaction<'static, Postgres>)> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(lock).bind(key).execute(&mut *tx).await?;
        Ok(((), tx))
    }
}

/// Inserts one pending item of `list` per id of run `run_id` (the ids as
/// one array, expanded by `UNNEST`).
async fn insert_pending(
    tx: &mut sqlx::PgConnection,
    list: &WorkList,
    run_id: &str,
    ids: &[i64],
) -> StoreResult<()> {
    sqlx::query(&list.pg_insert())
        .bind(run_id)
        .bind(ids)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

crate::work_list::impl_claim_work!(PgStore, lock: " FOR UPDATE SKIP LOCKED");

crate::impl_store_admin!(PgStore, "postgres" {
    async fn close(&self) {
        self.pool.close().await;
    }
});
