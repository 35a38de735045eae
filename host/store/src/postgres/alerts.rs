//! PostgreSQL [`crate::AlertStore`]: the shared implementation
//! (`crate::alerts`) with this backend's transactions: a user's writes lock
//! the user's row (serialised per user across every process), and the
//! outbox is claimed with `FOR UPDATE SKIP LOCKED`.

use sqlx::{Postgres, Transaction};

use super::PgStore;
use crate::StoreResult;

impl PgStore {
    /// A transaction holding the lock of `user_id`'s row.
    async fn user_tx(&self, user_id: &str) -> StoreResult<((), Transaction<'static, Postgres>)> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT id FROM users WHERE id = $1 FOR UPDATE")
            .bind(user_id)
            .fetch_optional(&mut *tx)
            .await?;
        Ok(((), tx))
    }

    /// A transaction; the claim's rows are locked by `due_suffix`.
    async fn outbox_tx(&self) -> StoreResult<((), Transaction<'static, Postgres>)> {
        Ok(((), self.pool.begin().await?))
    }

    /// Rows another process holds are skipped, not waited for.
    fn due_suffix() -> &'static str {
        " FOR UPDATE SKIP LOCKED"
    }
}

crate::alerts::impl_alert_store!(PgStore, Postgres);
