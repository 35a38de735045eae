//! SQLite [`crate::StrategyStore`]: every write runs under the writer lock
//! in a `BEGIN IMMEDIATE` transaction, like the rest of the backend's
//! read-check-write steps, so an `add_upload`'s limit counts and
//! immutability check see no other writer before it commits. The reads
//! are single statements (one snapshot each).

use sqlx::{Sqlite, Transaction};

use super::SqliteStore;
use crate::rows::{self, Cols};
use crate::sql;
use crate::{
    AuthoredStrategy, PluginRun, StoreResult, StrategyStore, UpdateOutcome, UploadLimits,
    UploadOutcome, UploadRecord,
};

#[async_trait::async_trait]
impl StrategyStore for SqliteStore {
    async fn add_upload(
        &self,
        handle: &str,
        record: &UploadRecord,
        wasm: &[u8],
        limits: UploadLimits,
    ) -> StoreResult<UploadOutcome> {
        let (owner, name, version) = (&record.owner_id, &record.name, &record.version);
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let deleted: Option<bool> = sqlx::query(sql::STRATEGY_DELETED)
            .bind(owner)
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?
            .map(|r| r.flag("deleted"))
            .transpose()?;
        // Live: listed, counted against the owner's strategies.
        let live = deleted == Some(false);
        let existing = sqlx::query(sql::UPLOAD_SHA256)
            .bind(owner)
            .bind(name)
            .bind(version)
            .fetch_optional(&mut *tx)
            .await?
            .map(|r| r.text("sha256"))
            .transpose()?;
        match existing {
            Some(sha) if sha != record.sha256 => {
                tx.rollback().await?;
                return Ok(UploadOutcome::Conflict(sha));
            }
            Some(_) if live => {
                // The same bytes again: nothing to store (but bytes dropped
                // by an earlier delete come back).
                restore_wasm(&mut tx, record, wasm).await?;
                tx.commit().await?;
                return Ok(UploadOutcome::AlreadyPresent);
            }
            _ => {}
        }
        if !live {
            let n = sqlx::query(sql::COUNT_LIVE_STRATEGIES)
                .bind(owner)
                .fetch_one(&mut *tx)
                .await?
                .int("n")?;
            if n >= i64::from(limits.strategies_per_owner) {
                tx.rollback().await?;
                return Ok(UploadOutcome::TooManyStrategies);
            }
        }
        if existing.is_some() {
            // A deleted strategy's version uploaded again with its bytes:
            // revived with it current, no new version counted.
            restore_wasm(&mut tx, record, wasm).await?;
        } else {
            let n = sqlx::query(sql::COUNT_VERSIONS)
                .bind(owner)
                .bind(name)
                .fetch_one(&mut *tx)
                .await?
                .int("n")?;
            if n >= i64::from(limits.versions_per_strategy) {
                tx.rollback().await?;
                return Ok(UploadOutcome::TooManyVersions);
            }
            sqlx::query(sql::INSERT_UPLOAD)
                .bind(owner)
                .bind(name)
                .bind(version)
                .bind(n + 1)
                .bind(&record.sha256)
                .bind(record.size)
                .bind(record.signer.as_deref())
                .bind(record.manifest.as_deref())
                .bind(wasm)
                .bind(record.uploaded_at)
                .bind(serde_json::to_string(&record.imports).unwrap_or_default())
                .execute(&mut *tx)
                .await?;
        }
        if !live {
            sqlx::query(sql::CREATE_OR_REVIVE)
                .bind(owner)
                .bind(handle)
                .bind(name)
                .bind(version)
                .bind(record.uploaded_at)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(UploadOutcome::Added)
    }

    async fn authored_strategy(
        &self,
        handle: &str,
        name: &str,
    ) -> StoreResult<Option<AuthoredStrategy>> {
        let rows = sqlx::query(sql::AUTHORED)
            .bind(handle)
            .bind(name)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows::strategies(&rows)?.into_iter().next())
    }

    async fn upload_wasm(
        &self,
        owner_id: &str,
        name: &str,
        version: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        let row = sqlx::query(sql::UPLOAD_WASM)
            .bind(owner_id)
            .bind(name)
            .bind(version)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| r.bytes("wasm")).transpose()
    }

    async fn visible_strategies(&self, viewer_id: &str) -> StoreResult<Vec<AuthoredStrategy>> {
        let rows = sqlx::query(sql::VISIBLE)
            .bind(viewer_id)
            .fetch_all(&self.pool)
            .await?;
        rows::strategies(&rows)
    }

    async fn update_strategy(
        &self,
        owner_id: &str,
        name: &str,
        shared: Option<bool>,
        current_version: Option<&str>,
    ) -> StoreResult<UpdateOutcome> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let deleted = sqlx::query(sql::STRATEGY_DELETED)
            .bind(owner_id)
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?
            .map(|r| r.flag("deleted"))
            .transpose()?;
        if deleted != Some(false) {
            tx.rollback().await?;
            return Ok(UpdateOutcome::NoStrategy);
        }
        if let Some(version) = current_version {
            // A version whose bytes went with an earlier delete cannot run.
            let found = sqlx::query(sql::VERSION_HAS_BYTES)
                .bind(owner_id)
                .bind(name)
                .bind(version)
                .fetch_optional(&mut *tx)
                .await?;
            if found.is_none() {
                tx.rollback().await?;
                return Ok(UpdateOutcome::NoVersion);
            }
        }
        sqlx::query(sql::UPDATE_STRATEGY)
            .bind(owner_id)
            .bind(name)
            .bind(shared)
            .bind(current_version)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(UpdateOutcome::Updated)
    }

    async fn delete_strategy(&self, owner_id: &str, name: &str) -> StoreResult<bool> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let marked = sqlx::query(sql::MARK_DELETED)
            .bind(owner_id)
            .bind(name)
            .execute(&mut *tx)
            .await?;
        if marked.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        sqlx::query(sql::DROP_WASM)
            .bind(owner_id)
            .bind(name)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn record_plugin_run(&self, run: &PluginRun, keep: u32) -> StoreResult<()> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        sql::record_plugin_run!(tx, run, keep);
        tx.commit().await?;
        Ok(())
    }

    async fn plugin_runs(&self, user_id: &str, limit: u32) -> StoreResult<Vec<PluginRun>> {
        let rows = sqlx::query(sql::PLUGIN_RUNS)
            .bind(i64::from(limit))
            .bind(user_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(rows::plugin_run).collect()
    }
}

/// Stores `wasm` again for `record`'s version if its bytes were dropped.
async fn restore_wasm(
    tx: &mut Transaction<'_, Sqlite>,
    record: &UploadRecord,
    wasm: &[u8],
) -> StoreResult<()> {
    sqlx::query(sql::RESTORE_WASM)
        .bind(&record.owner_id)
        .bind(&record.name)
        .bind(&record.version)
        .bind(wasm)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
