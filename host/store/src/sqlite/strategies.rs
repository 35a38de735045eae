//! SQLite [`crate::StrategyStore`]: the shared implementation
//! (`crate::strategies`) with this backend's transactions: every write runs
//! under the writer lock in a `BEGIN IMMEDIATE` transaction, like the rest
//! of the backend's read-check-write steps, so an `add_upload`'s limit
//! counts and immutability check see no other writer before it commits.
//! The reads are single statements (one snapshot each).

use sqlx::{Sqlite, Transaction};

use super::SqliteStore;
use crate::StoreResult;

impl SqliteStore {
    /// A write of `_owner_id`'s strategies: under the writer lock (SQLite
    /// has one writer, so this serialises every owner's writes).
    async fn strategy_owner_tx(
        &self,
        _owner_id: &str,
    ) -> StoreResult<(
        tokio::sync::MutexGuard<'_, ()>,
        Transaction<'static, Sqlite>,
    )> {
        self.strategy_run_tx().await
    }

    /// A write transaction under the writer lock.
    async fn strategy_run_tx(
        &self,
    ) -> StoreResult<(
        tokio::sync::MutexGuard<'_, ()>,
        Transaction<'static, Sqlite>,
    )> {
        self.write_tx().await
    }
}

crate::strategies::impl_strategy_store!(SqliteStore, Sqlite);
