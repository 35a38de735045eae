//! PostgreSQL [`crate::PluginRegistry`] (the reads and sample recording are
//! the shared implementation, `crate::registry`). Every change that bumps
//! the generation bumps it first: the upsert locks the generation's `settings` row until
//! commit, which serialises registry changes across processes, so
//! activation ids follow commit order and a rollback's reads (new
//! statements under READ COMMITTED) see every activation committed before
//! it. A change that turns out to change nothing rolls back, bump included.

use sqlx::{Postgres, Transaction};

use forecast_domain::PluginKind;

use super::PgStore;
use crate::rows::{self, Cols};
use crate::{sql, ActivationRecord, AddOutcome, PluginRecord, ShadowConfig, StoreResult};

/// The slot's live activations, locked in id order.
const LOCK_LIVE: &str = concat!(crate::sql::live_activations!(), " ORDER BY id FOR UPDATE");

/// Adds one to the generation (creating it at 1) inside `tx`, locking its
/// row until `tx` ends. Call it first in every registry change.
async fn bump_generation(tx: &mut Transaction<'_, Postgres>) -> StoreResult<()> {
    sqlx::query(sql::BUMP_GENERATION)
        .bind(sql::GENERATION_KEY)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

crate::registry::impl_plugin_registry!(PgStore {
    async fn add_plugin(&self, record: &PluginRecord, wasm: &[u8]) -> StoreResult<AddOutcome> {
        // A concurrent adder of the same key waits on the primary key until
        // the first commits, then does nothing and (a new statement, a new
        // snapshot) reads the committed row. Rows are never deleted; the
        // loop only guards against a first adder that rolled back.
        for _ in 0..3 {
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
                .await?;
            if let Some(row) = existing {
                return Ok(crate::registry::outcome(record, row.text("sha256")?));
            }
        }
        Err(crate::registry::vanished(record))
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
        let mut tx = self.pool.begin().await?;
        bump_generation(&mut tx).await?;
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
        // The generation's row lock first (see the module docs), then the
        // slot's live rows, locked in id order. A concurrent rollback waits
        // on either; when it resumes, the row we marked fails its re-check
        // and it undoes the next one.
        let mut tx = self.pool.begin().await?;
        bump_generation(&mut tx).await?;
        let rows = sqlx::query(LOCK_LIVE)
            .bind(slot)
            .fetch_all(&mut *tx)
            .await?;
        let [.., previous, newest] = rows.as_slice() else {
            // Fewer than two live activations: nothing changes.
            tx.rollback().await?;
            return Ok(None);
        };
        sqlx::query(sql::MARK_ROLLED_BACK)
            .bind(newest.int("id")?)
            .execute(&mut *tx)
            .await?;
        let current = rows::activation(previous)?;
        tx.commit().await?;
        Ok(Some(current))
    }
    async fn set_shadow(&self, config: &ShadowConfig) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        bump_generation(&mut tx).await?;
        sqlx::query(sql::SET_SHADOW)
            .bind(config.kind.as_str())
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
    async fn clear_shadow(&self, kind: PluginKind) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        bump_generation(&mut tx).await?;
        let deleted = sqlx::query(sql::CLEAR_SHADOW)
            .bind(kind.as_str())
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
});
