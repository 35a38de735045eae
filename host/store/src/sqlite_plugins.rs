//! SQLite implementation of [`PluginRegistry`] (a child module of
//! `sqlite`, for the store's pool and writer lock). Changes that bump the
//! generation run under the writer lock in `BEGIN IMMEDIATE` transactions,
//! like the rest of the backend's read-check-write steps.

use async_trait::async_trait;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, Sqlite, Transaction};

use super::SqliteStore;
use crate::{
    ActivationRecord, AddOutcome, PluginRecord, PluginRegistry, ShadowConfig, ShadowSample,
    StoreError, StoreResult,
};

/// The `settings` key of the plugins generation (an integer as text).
const GENERATION_KEY: &str = "plugins_generation";

const PLUGIN_COLUMNS: &str = "kind, name, version, sha256, size, builtin, added_by, added_at";
const ACTIVATION_COLUMNS: &str =
    "id, slot, kind, name, version, activated_by, activated_at, rolled_back";
const SHADOW_COLUMNS: &str = "kind, name, version, sample, started_by, started_at";

fn plugin_from_row(r: &SqliteRow) -> StoreResult<PluginRecord> {
    Ok(PluginRecord {
        kind: r.try_get("kind")?,
        name: r.try_get("name")?,
        version: r.try_get("version")?,
        sha256: r.try_get("sha256")?,
        size: r.try_get("size")?,
        builtin: r.try_get("builtin")?,
        added_by: r.try_get("added_by")?,
        added_at: r.try_get("added_at")?,
    })
}

fn activation_from_row(r: &SqliteRow) -> StoreResult<ActivationRecord> {
    Ok(ActivationRecord {
        id: r.try_get("id")?,
        slot: r.try_get("slot")?,
        kind: r.try_get("kind")?,
        name: r.try_get("name")?,
        version: r.try_get("version")?,
        activated_by: r.try_get("activated_by")?,
        activated_at: r.try_get("activated_at")?,
        rolled_back: r.try_get("rolled_back")?,
    })
}

fn shadow_from_row(r: &SqliteRow) -> StoreResult<ShadowConfig> {
    Ok(ShadowConfig {
        kind: r.try_get("kind")?,
        name: r.try_get("name")?,
        version: r.try_get("version")?,
        sample: r.try_get("sample")?,
        started_by: r.try_get("started_by")?,
        started_at: r.try_get("started_at")?,
    })
}

/// Adds one to the generation (creating it at 1) inside `tx`.
async fn bump_generation(tx: &mut Transaction<'_, Sqlite>) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO settings (key, value) VALUES (?, '1')
         ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
    )
    .bind(GENERATION_KEY)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

#[async_trait]
impl PluginRegistry for SqliteStore {
    async fn add_plugin(&self, record: &PluginRecord, wasm: &[u8]) -> StoreResult<AddOutcome> {
        // Insert-if-absent, then read back what holds the key: a concurrent
        // adder of the same key is either the row we read or waits for us.
        let inserted = sqlx::query(
            "INSERT INTO plugins (kind, name, version, sha256, size, wasm, builtin, added_by, added_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (kind, name, version) DO NOTHING",
        )
        .bind(&record.kind)
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
        let existing: String =
            sqlx::query("SELECT sha256 FROM plugins WHERE kind = ? AND name = ? AND version = ?")
                .bind(&record.kind)
                .bind(&record.name)
                .bind(&record.version)
                .fetch_optional(&self.pool)
                .await?
                .ok_or_else(|| {
                    StoreError::Corrupt(format!(
                        "plugin {}/{}@{} neither inserted nor found",
                        record.kind, record.name, record.version
                    ))
                })?
                .try_get("sha256")?;
        Ok(if existing == record.sha256 {
            AddOutcome::AlreadyPresent
        } else {
            AddOutcome::Conflict(existing)
        })
    }

    async fn list_plugins(&self) -> StoreResult<Vec<PluginRecord>> {
        let sql =
            format!("SELECT {PLUGIN_COLUMNS} FROM plugins ORDER BY kind, name, added_at, version");
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.iter().map(plugin_from_row).collect()
    }

    async fn plugin(
        &self,
        kind: &str,
        name: &str,
        version: &str,
    ) -> StoreResult<Option<PluginRecord>> {
        let sql = format!(
            "SELECT {PLUGIN_COLUMNS} FROM plugins WHERE kind = ? AND name = ? AND version = ?"
        );
        let row = sqlx::query(&sql)
            .bind(kind)
            .bind(name)
            .bind(version)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(plugin_from_row).transpose()
    }

    async fn plugin_wasm(
        &self,
        kind: &str,
        name: &str,
        version: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        let row =
            sqlx::query("SELECT wasm FROM plugins WHERE kind = ? AND name = ? AND version = ?")
                .bind(kind)
                .bind(name)
                .bind(version)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|r| r.try_get("wasm")).transpose()?)
    }

    async fn activate_plugin(
        &self,
        slot: &str,
        kind: &str,
        name: &str,
        version: &str,
        by: &str,
        now: i64,
    ) -> StoreResult<ActivationRecord> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let id = sqlx::query(
            "INSERT INTO plugin_activations (slot, kind, name, version, activated_by, activated_at)
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(slot)
        .bind(kind)
        .bind(name)
        .bind(version)
        .bind(by)
        .bind(now)
        .execute(&mut *tx)
        .await?
        .last_insert_rowid();
        bump_generation(&mut tx).await?;
        tx.commit().await?;
        Ok(ActivationRecord {
            id,
            slot: slot.to_string(),
            kind: kind.to_string(),
            name: name.to_string(),
            version: version.to_string(),
            activated_by: by.to_string(),
            activated_at: now,
            rolled_back: false,
        })
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
        let sql = format!(
            "SELECT {ACTIVATION_COLUMNS} FROM plugin_activations
             WHERE slot = ? AND rolled_back = 0 ORDER BY id DESC LIMIT 2"
        );
        let rows = sqlx::query(&sql).bind(slot).fetch_all(&mut *tx).await?;
        let [newest, previous] = rows.as_slice() else {
            tx.rollback().await?;
            return Ok(None);
        };
        let newest: i64 = newest.try_get("id")?;
        sqlx::query("UPDATE plugin_activations SET rolled_back = 1 WHERE id = ?")
            .bind(newest)
            .execute(&mut *tx)
            .await?;
        bump_generation(&mut tx).await?;
        let current = activation_from_row(previous)?;
        tx.commit().await?;
        Ok(Some(current))
    }

    async fn active_plugins(&self) -> StoreResult<Vec<ActivationRecord>> {
        let sql = format!(
            "SELECT {ACTIVATION_COLUMNS} FROM plugin_activations
             WHERE id IN (SELECT MAX(id) FROM plugin_activations WHERE rolled_back = 0 GROUP BY slot)
             ORDER BY slot"
        );
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.iter().map(activation_from_row).collect()
    }

    async fn plugins_generation(&self) -> StoreResult<i64> {
        let row = sqlx::query("SELECT value FROM settings WHERE key = ?")
            .bind(GENERATION_KEY)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(0) };
        let value: String = row.try_get("value")?;
        value
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("{GENERATION_KEY} '{value}'")))
    }

    async fn set_shadow(&self, config: &ShadowConfig) -> StoreResult<()> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query(
            "INSERT INTO plugin_shadows (kind, name, version, sample, started_by, started_at)
             VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT (kind) DO UPDATE SET
                name = excluded.name, version = excluded.version, sample = excluded.sample,
                started_by = excluded.started_by, started_at = excluded.started_at",
        )
        .bind(&config.kind)
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

    async fn clear_shadow(&self, kind: &str) -> StoreResult<bool> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let deleted = sqlx::query("DELETE FROM plugin_shadows WHERE kind = ?")
            .bind(kind)
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
        let sql = format!("SELECT {SHADOW_COLUMNS} FROM plugin_shadows ORDER BY kind");
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.iter().map(shadow_from_row).collect()
    }

    async fn record_shadow_sample(&self, sample: &ShadowSample) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO shadow_samples
                (kind, active, candidate, identical, active_ms, candidate_ms, error, diffs, at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&sample.kind)
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

    async fn shadow_samples(&self, kind: &str, candidate: &str) -> StoreResult<Vec<ShadowSample>> {
        let rows = sqlx::query(
            "SELECT kind, active, candidate, identical, active_ms, candidate_ms, error, diffs, at
             FROM shadow_samples WHERE kind = ? AND candidate = ? ORDER BY id",
        )
        .bind(kind)
        .bind(candidate)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(ShadowSample {
                    kind: r.try_get("kind")?,
                    active: r.try_get("active")?,
                    candidate: r.try_get("candidate")?,
                    identical: r.try_get("identical")?,
                    active_ms: r.try_get("active_ms")?,
                    candidate_ms: r.try_get("candidate_ms")?,
                    error: r.try_get("error")?,
                    diffs: r.try_get("diffs")?,
                    at: r.try_get("at")?,
                })
            })
            .collect()
    }
}
