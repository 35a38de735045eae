//! SQLite [`crate::AlertStore`]: the shared implementation (`crate::alerts`)
//! with this backend's transactions: a user's writes and the outbox's
//! claims take the process's writer lock, then `BEGIN IMMEDIATE`, so their
//! reads and writes see no other writer in between.

use sqlx::{Sqlite, Transaction};

use super::SqliteStore;
use crate::StoreResult;

impl SqliteStore {
    /// A write transaction under the writer lock (SQLite has one writer,
    /// so this serialises every user's writes, not only `_user_id`'s).
    async fn user_tx(
        &self,
        _user_id: &str,
    ) -> StoreResult<(
        tokio::sync::MutexGuard<'_, ()>,
        Transaction<'static, Sqlite>,
    )> {
        self.outbox_tx().await
    }

    /// A write transaction under the writer lock.
    async fn outbox_tx(
        &self,
    ) -> StoreResult<(
        tokio::sync::MutexGuard<'_, ()>,
        Transaction<'static, Sqlite>,
    )> {
        self.write_tx().await
    }

    /// No row locks: the writer lock holds every other claimant off.
    fn due_suffix() -> &'static str {
        ""
    }
}

crate::alerts::impl_alert_store!(SqliteStore, Sqlite);
