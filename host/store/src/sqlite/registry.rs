//! SQLite [`PluginRegistry`]. Changes that bump the generation run under
//! the writer lock in `BEGIN IMMEDIATE` transactions, like the rest of the
//! backend's read-check-write steps.

use async_trait::async_trait;
use sqlx::{Sqlite, Transaction};

use forecast_domain::PluginKind;

use super::SqliteStore;
use crate::rows::{self, Cols};
use crate::{
    sql, ActivationRecord, AddOutcome, PluginRecord, PluginRegistry, ShadowConfig, ShadowSample,
    StoreResult,
};

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

#[async_trait]
impl PluginRegistry for SqliteStore {
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

    async fn list_plugins(&self) -> StoreResult<Vec<PluginRecord>> {
        let rows = sqlx::query(sql::LIST_PLUGINS).fetch_all(&self.pool).await?;
        rows.iter().map(rows::plugin).collect()
    }

    async fn plugin(
        &self,
        kind: PluginKind,
        name: &str,
        version: &str,
    ) -> StoreResult<Option<PluginRecord>> {
        let row = sqlx::query(sql::PLUGIN)
            .bind(kind.as_str())
            .bind(name)
            .bind(version)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(rows::plugin).transpose()
    }

    async fn plugin_wasm(
        &self,
        kind: PluginKind,
        name: &str,
        version: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        let row = sqlx::query(sql::PLUGIN_WASM)
            .bind(kind.as_str())
            .bind(name)
            .bind(version)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| r.bytes("wasm")).transpose()
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

    async fn active_plugins(&self) -> StoreResult<Vec<ActivationRecord>> {
        let rows = sqlx::query(sql::ACTIVE_PLUGINS)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(rows::activation).collect()
    }

    async fn plugins_generation(&self) -> StoreResult<i64> {
        let row = sqlx::query(sql::SETTING)
            .bind(sql::GENERATION_KEY)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref()
            .map(rows::generation)
            .transpose()
            .map(Option::unwrap_or_default)
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

    async fn shadows(&self) -> StoreResult<Vec<ShadowConfig>> {
        let rows = sqlx::query(sql::SHADOWS).fetch_all(&self.pool).await?;
        rows.iter().map(rows::shadow).collect()
    }

    async fn record_shadow_sample(&self, sample: &ShadowSample) -> StoreResult<()> {
        sqlx::query(sql::RECORD_SHADOW_SAMPLE)
            .bind(sample.kind.as_str())
            .bind(&sample.active)
            .bind(&sample.candidate)
            .bind(sample.identical)
            .bind(sample.active_ms)
            .bind(sample.candidate_ms)
            .bind(sample.error.as_deref())
            .bind(&sample.diffs)
            .bind(sample.at)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn shadow_samples(
        &self,
        kind: PluginKind,
        candidate: &str,
    ) -> StoreResult<Vec<ShadowSample>> {
        let rows = sqlx::query(sql::SHADOW_SAMPLES)
            .bind(kind.as_str())
            .bind(candidate)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(rows::sample).collect()
    }
}
