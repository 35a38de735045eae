//! PostgreSQL implementation of [`PluginRegistry`] (a child module of
//! `postgres`, for the store's pool). Every change that bumps the
//! generation bumps it first: the upsert locks the generation's `settings`
//! row until commit, which serialises registry changes across processes,
//! so activation ids follow commit order and a rollback's reads (new
//! statements under READ COMMITTED) see every activation committed before
//! it. A change that turns out to change nothing rolls back, bump included.

use async_trait::async_trait;
use sqlx::postgres::PgRow;
use sqlx::{Postgres, Row, Transaction};

use super::PgStore;
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

fn plugin_from_row(r: &PgRow) -> StoreResult<PluginRecord> {
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

fn activation_from_row(r: &PgRow) -> StoreResult<ActivationRecord> {
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

fn shadow_from_row(r: &PgRow) -> StoreResult<ShadowConfig> {
    Ok(ShadowConfig {
        kind: r.try_get("kind")?,
        name: r.try_get("name")?,
        version: r.try_get("version")?,
        sample: r.try_get("sample")?,
        started_by: r.try_get("started_by")?,
        started_at: r.try_get("started_at")?,
    })
}

/// Adds one to the generation (creating it at 1) inside `tx`, locking its
/// row until `tx` ends. Call it first in every registry change.
async fn bump_generation(tx: &mut Transaction<'_, Postgres>) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO settings (key, value) VALUES ($1, '1')
         ON CONFLICT (key) DO UPDATE SET value = (settings.value::BIGINT + 1)::TEXT",
    )
    .bind(GENERATION_KEY)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

#[async_trait]
impl PluginRegistry for PgStore {
    async fn add_plugin(&self, record: &PluginRecord, wasm: &[u8]) -> StoreResult<AddOutcome> {
        // A concurrent adder of the same key waits on the primary key until
        // the first commits, then does nothing and (a new statement, a new
        // snapshot) reads the committed row. Rows are never deleted; the
        // loop only guards against a first adder that rolled back.
        for _ in 0..3 {
            let inserted = sqlx::query(
                "INSERT INTO plugins (kind, name, version, sha256, size, wasm, builtin, added_by, added_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
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
            let existing = sqlx::query(
                "SELECT sha256 FROM plugins WHERE kind = $1 AND name = $2 AND version = $3",
            )
            .bind(&record.kind)
            .bind(&record.name)
            .bind(&record.version)
            .fetch_optional(&self.pool)
            .await?;
            if let Some(row) = existing {
                let sha256: String = row.try_get("sha256")?;
                return Ok(if sha256 == record.sha256 {
                    AddOutcome::AlreadyPresent
                } else {
                    AddOutcome::Conflict(sha256)
                });
            }
        }
        Err(StoreError::Corrupt(format!(
            "plugin {}/{}@{} neither inserted nor found",
            record.kind, record.name, record.version
        )))
    }

    async fn list_plugins(&self) -> StoreResult<Vec<PluginRecord>> {
        // COLLATE "C": byte order, as SQLite sorts.
        let sql = format!(
            "SELECT {PLUGIN_COLUMNS} FROM plugins
             ORDER BY kind COLLATE \"C\", name COLLATE \"C\", added_at, version COLLATE \"C\""
        );
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
            "SELECT {PLUGIN_COLUMNS} FROM plugins WHERE kind = $1 AND name = $2 AND version = $3"
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
            sqlx::query("SELECT wasm FROM plugins WHERE kind = $1 AND name = $2 AND version = $3")
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
        let mut tx = self.pool.begin().await?;
        bump_generation(&mut tx).await?;
        let id: i64 = sqlx::query(
            "INSERT INTO plugin_activations (slot, kind, name, version, activated_by, activated_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             RETURNING id",
        )
        .bind(slot)
        .bind(kind)
        .bind(name)
        .bind(version)
        .bind(by)
        .bind(now)
        .fetch_one(&mut *tx)
        .await?
        .try_get("id")?;
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
        // The generation's row lock first (see the module docs), then the
        // slot's live rows, locked in id order. A concurrent rollback waits
        // on either; when it resumes, the row we marked fails its re-check
        // and it undoes the next one.
        let mut tx = self.pool.begin().await?;
        bump_generation(&mut tx).await?;
        let sql = format!(
            "SELECT {ACTIVATION_COLUMNS} FROM plugin_activations
             WHERE slot = $1 AND NOT rolled_back ORDER BY id FOR UPDATE"
        );
        let rows = sqlx::query(&sql).bind(slot).fetch_all(&mut *tx).await?;
        let [.., previous, newest] = rows.as_slice() else {
            // Fewer than two live activations: nothing changes.
            tx.rollback().await?;
            return Ok(None);
        };
        let newest: i64 = newest.try_get("id")?;
        sqlx::query("UPDATE plugin_activations SET rolled_back = TRUE WHERE id = $1")
            .bind(newest)
            .execute(&mut *tx)
            .await?;
        let current = activation_from_row(previous)?;
        tx.commit().await?;
        Ok(Some(current))
    }

    async fn active_plugins(&self) -> StoreResult<Vec<ActivationRecord>> {
        let sql = format!(
            "SELECT {ACTIVATION_COLUMNS} FROM plugin_activations
             WHERE id IN (SELECT MAX(id) FROM plugin_activations WHERE NOT rolled_back GROUP BY slot)
             ORDER BY slot COLLATE \"C\""
        );
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.iter().map(activation_from_row).collect()
    }

    async fn plugins_generation(&self) -> StoreResult<i64> {
        let row = sqlx::query("SELECT value FROM settings WHERE key = $1")
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
        let mut tx = self.pool.begin().await?;
        bump_generation(&mut tx).await?;
        sqlx::query(
            "INSERT INTO plugin_shadows (kind, name, version, sample, started_by, started_at)
             VALUES ($1, $2, $3, $4, $5, $6)
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
        tx.commit().await?;
        Ok(())
    }

    async fn clear_shadow(&self, kind: &str) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        bump_generation(&mut tx).await?;
        let deleted = sqlx::query("DELETE FROM plugin_shadows WHERE kind = $1")
            .bind(kind)
            .execute(&mut *tx)
            .await?;
        if deleted.rows_affected() == 0 {
            // Nothing changed: the generation stays.
            tx.rollback().await?;
            return Ok(false);
        }
        tx.commit().await?;
        Ok(true)
    }

    async fn shadows(&self) -> StoreResult<Vec<ShadowConfig>> {
        let sql =
            format!("SELECT {SHADOW_COLUMNS} FROM plugin_shadows ORDER BY kind COLLATE \"C\"");
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.iter().map(shadow_from_row).collect()
    }

    async fn record_shadow_sample(&self, sample: &ShadowSample) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO shadow_samples
                (kind, active, candidate, identical, active_ms, candidate_ms, error, diffs, at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
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
             FROM shadow_samples WHERE kind = $1 AND candidate = $2 ORDER BY id",
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
