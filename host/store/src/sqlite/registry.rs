//! SQLite [`crate::PluginRegistry`]: changes that bump the generation run
//! under the writer lock in `BEGIN IMMEDIATE` transactions, like the rest
//! of the backend's read-check-write steps. The reads and sample recording
//! are the shared implementation (`crate::registry`).

use sqlx::{Sqlite, Transaction};

use forecast_domain::PluginKind;

use super::SqliteStore;
use crate::rows::{self, Cols};
use crate::{sql, ActivationRecord, AddOutcome, PluginRecord, ShadowConfig, StoreResult};

/// The slot's two newest live activations.
const LAST_TWO_LIVE: &str = concat!(crate::sql::live_activations!(), " ORDER BY id DESC LIMIT 2");

/// Adds one to the generation (creating it at 1) inside `tx`.
async fn bump_generation(tx: &mut Transaction<'_, Sqlite>) -> StoreResult<()> {
    sqlx::query(sql::BUMP_GENERATION)
        .bind(sql::GENERATION_KEY)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

crate::registry::impl_plugin_registry!(SqliteStore {
    async fn add_plugin(&self, record: &PluginRecord, wasm: &[u8]) -> StoreResult<AddOutcome> {
        // Insert-if-absent, then read back what holds the key: a concurrent
        // adder of the same key is either the row we read or waits for us.
        let inserted = sqlx::query(sql::ADD_PLUGIN)
            .bind(record.kind.as_str())
            .bind(&record.name)
            .bind(&record.version)
            .bind(&record.sha256)
            .bind(record.size)
            .bind(wasm)
            .bind(record.builtin)
            .bind(&record.added_by)
            .bind(record.added_at)
            .execute(&self.pool)
            .await?;
        if inserted.rows_affected() == 1 {
            return Ok(AddOutcome::Added);
        }
        let existing = sqlx::query(sql::PLUGIN_SHA256)
            .bind(record.kind.as_str())
            .bind(&record.name)
            .bind(&record.version)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| crate::registry::vanished(record))?
            .text("sha256")?;
        Ok(crate::registry::outcome(record, existing))
    }
    async fn activate_plugin(
        &self,
        slot: &str,
        kind: PluginKind,
        name: &str,
        version: &str,
        by: &str,
        now: i64,
    ) -> StoreResult<ActivationRecord> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let id = sqlx::query(sql::INSERT_ACTIVATION)
            .bind(slot)
            .bind(kind.as_str())
            .bind(name)
            .bind(version)
            .bind(by)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?
            .int("id")?;
        bump_generation(&mut tx).await?;
        tx.commit().await?;
        Ok(crate::registry::new_activation(
            id, slot, kind, name, version, by, now,
        ))
    }
    async fn rollback_plugin(
        &self,
        slot: &str,
        _now: i64,
    ) -> StoreResult<Option<ActivationRecord>> {
        // The write lock before the read: concurrent rollbacks each see the
        // previous one's result and undo one more activation.
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let rows = sqlx::query(LAST_TWO_LIVE)
            .bind(slot)
            .fetch_all(&mut *tx)
            .await?;
        let [newest, previous] = rows.as_slice() else {
            tx.rollback().await?;
            return Ok(None);
        };
        sqlx::query(sql::MARK_ROLLED_BACK)
            .bind(newest.int("id")?)
            .execute(&mut *tx)
            .await?;
        bump_generation(&mut tx).await?;
        let current = rows::activation(previous)?;
        tx.commit().await?;
        Ok(Some(current))
    }
    async fn set_shadow(&self, config: &ShadowConfig) -> StoreResult<()> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query(sql::SET_SHADOW)
            .bind(config.kind.as_str())
            .bind(&config.name)
            .bind(&config.version)
            .bind(config.sample)
            .bind(&config.started_by)
            .bind(config.started_at)
            .execute(&mut *tx)
            .await?;
        bump_generation(&mut tx).await?;
        tx.commit().await?;
        Ok(())
    }
    async fn clear_shadow(&self, kind: PluginKind) -> StoreResult<bool> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let deleted = sqlx::query(sql::CLEAR_SHADOW)
            .bind(kind.as_str())
            .execute(&mut *tx)
            .await?;
        if deleted.rows_affected() == 0 {
            // Nothing changed: the generation stays.
            tx.rollback().await?;
            return Ok(false);
        }
        bump_generation(&mut tx).await?;
        tx.commit().await?;
        Ok(true)
    }
});
