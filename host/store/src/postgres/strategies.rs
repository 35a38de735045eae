//! PostgreSQL [`crate::StrategyStore`]. Every write is one transaction that
//! first takes a transaction-scoped advisory lock keyed by the owner
//! (`pg_advisory_xact_lock(STRATEGY_LOCK, hashtext(owner_id))`), so
//! concurrent writes of one owner — from any replica — run one after the
//! other: the limit counts and the immutability check an `add_upload`
//! makes are not invalidated before it commits. A row lock would not do:
//! an owner's first strategy has no row to lock yet. The two-key form keeps
//! these locks apart from the single-key ones elsewhere; a hash collision
//! between owners only serialises them. Under READ COMMITTED every
//! statement after the lock sees what the previous holder committed. The
//! reads are single statements (one snapshot each).

use sqlx::postgres::PgRow;
use sqlx::{Postgres, Transaction};

use super::PgStore;
use crate::rows::Cols;
use crate::{
    AuthoredStrategy, StoreResult, StrategyStore, UpdateOutcome, UploadLimits, UploadOutcome,
    UploadRecord,
};

/// Class key of the per-owner advisory locks ("FSTR").
const STRATEGY_LOCK: i32 = 0x4653_5452;

const LOCK_OWNER: &str = "SELECT pg_advisory_xact_lock($1, hashtext($2))";

/// The columns [`strategy_rows`] decodes: a strategy joined with each of
/// its versions, newest upload first within a strategy.
macro_rules! strategy_select {
    () => {
        "SELECT s.owner_id, s.handle, s.name, s.current_version, s.shared,
                u.version, u.sha256, u.size, u.signer, u.manifest, u.uploaded_at
         FROM authored_strategies s
         JOIN strategy_uploads u ON u.owner_id = s.owner_id AND u.name = s.name
         WHERE NOT s.deleted AND "
    };
}

const AUTHORED: &str = concat!(
    strategy_select!(),
    "s.handle = $1 AND s.name = $2
     ORDER BY s.owner_id COLLATE \"C\", u.seq DESC"
);

const VISIBLE: &str = concat!(
    strategy_select!(),
    "(s.owner_id = $1 OR s.shared)
     ORDER BY s.handle COLLATE \"C\", s.name COLLATE \"C\", s.owner_id COLLATE \"C\", u.seq DESC"
);

const UPLOAD_WASM: &str = "SELECT u.wasm FROM strategy_uploads u
     JOIN authored_strategies s ON s.owner_id = u.owner_id AND s.name = u.name
     WHERE u.owner_id = $1 AND u.name = $2 AND u.version = $3
       AND NOT s.deleted AND u.wasm IS NOT NULL";

const STRATEGY_DELETED: &str =
    "SELECT deleted FROM authored_strategies WHERE owner_id = $1 AND name = $2";

const UPLOAD_SHA256: &str =
    "SELECT sha256 FROM strategy_uploads WHERE owner_id = $1 AND name = $2 AND version = $3";

const COUNT_LIVE_STRATEGIES: &str =
    "SELECT COUNT(*) AS n FROM authored_strategies WHERE owner_id = $1 AND NOT deleted";

const COUNT_VERSIONS: &str =
    "SELECT COUNT(*) AS n FROM strategy_uploads WHERE owner_id = $1 AND name = $2";

const INSERT_UPLOAD: &str = "INSERT INTO strategy_uploads
        (owner_id, name, version, seq, sha256, size, signer, manifest, wasm, uploaded_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

/// Puts back the bytes of a version whose strategy was deleted (its sha256
/// was checked to match).
const RESTORE_WASM: &str = "UPDATE strategy_uploads SET wasm = $4
     WHERE owner_id = $1 AND name = $2 AND version = $3 AND wasm IS NULL";

/// Creates the strategy, or revives a deleted one: `$4` current, private.
const CREATE_OR_REVIVE: &str = "INSERT INTO authored_strategies
        (owner_id, handle, name, current_version, shared, deleted, created_at)
     VALUES ($1, $2, $3, $4, FALSE, FALSE, $5)
     ON CONFLICT (owner_id, name) DO UPDATE SET
        handle = excluded.handle, current_version = excluded.current_version,
        shared = FALSE, deleted = FALSE";

const VERSION_HAS_BYTES: &str = "SELECT 1 AS one FROM strategy_uploads
     WHERE owner_id = $1 AND name = $2 AND version = $3 AND wasm IS NOT NULL";

const UPDATE_STRATEGY: &str = "UPDATE authored_strategies
     SET shared = COALESCE($3, shared), current_version = COALESCE($4, current_version)
     WHERE owner_id = $1 AND name = $2";

const MARK_DELETED: &str = "UPDATE authored_strategies SET deleted = TRUE
     WHERE owner_id = $1 AND name = $2 AND NOT deleted";

const DROP_WASM: &str = "UPDATE strategy_uploads SET wasm = NULL WHERE owner_id = $1 AND name = $2";

/// Begins a write of `owner_id`'s strategies, holding its lock until the
/// transaction ends.
async fn begin_owner(
    store: &PgStore,
    owner_id: &str,
) -> StoreResult<Transaction<'static, Postgres>> {
    let mut tx = store.pool.begin().await?;
    sqlx::query(LOCK_OWNER)
        .bind(STRATEGY_LOCK)
        .bind(owner_id)
        .execute(&mut *tx)
        .await?;
    Ok(tx)
}

/// Rows of `strategy_select!` (grouped by strategy, each strategy's rows
/// together) as strategies with their versions.
fn strategy_rows(rows: &[PgRow]) -> StoreResult<Vec<AuthoredStrategy>> {
    let mut out: Vec<AuthoredStrategy> = Vec::new();
    for r in rows {
        let owner_id = r.text("owner_id")?;
        let name = r.text("name")?;
        let record = UploadRecord {
            owner_id: owner_id.clone(),
            name: name.clone(),
            version: r.text("version")?,
            sha256: r.text("sha256")?,
            size: r.int("size")?,
            signer: r.opt_text("signer")?,
            manifest: r.opt_text("manifest")?,
            uploaded_at: r.int("uploaded_at")?,
        };
        match out.last_mut() {
            Some(s) if s.owner_id == owner_id && s.name == name => s.versions.push(record),
            _ => out.push(AuthoredStrategy {
                owner_id,
                handle: r.text("handle")?,
                name,
                current_version: r.text("current_version")?,
                shared: r.flag("shared")?,
                versions: vec![record],
            }),
        }
    }
    Ok(out)
}

#[async_trait::async_trait]
impl StrategyStore for PgStore {
    async fn add_upload(
        &self,
        handle: &str,
        record: &UploadRecord,
        wasm: &[u8],
        limits: UploadLimits,
    ) -> StoreResult<UploadOutcome> {
        let (owner, name, version) = (&record.owner_id, &record.name, &record.version);
        let mut tx = begin_owner(self, owner).await?;
        let deleted: Option<bool> = sqlx::query(STRATEGY_DELETED)
            .bind(owner)
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?
            .map(|r| r.flag("deleted"))
            .transpose()?;
        // Live: listed, counted against the owner's strategies.
        let live = deleted == Some(false);
        let existing = sqlx::query(UPLOAD_SHA256)
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
            let n = sqlx::query(COUNT_LIVE_STRATEGIES)
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
            let n = sqlx::query(COUNT_VERSIONS)
                .bind(owner)
                .bind(name)
                .fetch_one(&mut *tx)
                .await?
                .int("n")?;
            if n >= i64::from(limits.versions_per_strategy) {
                tx.rollback().await?;
                return Ok(UploadOutcome::TooManyVersions);
            }
            sqlx::query(INSERT_UPLOAD)
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
                .execute(&mut *tx)
                .await?;
        }
        if !live {
            sqlx::query(CREATE_OR_REVIVE)
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
        let rows = sqlx::query(AUTHORED)
            .bind(handle)
            .bind(name)
            .fetch_all(&self.pool)
            .await?;
        Ok(strategy_rows(&rows)?.into_iter().next())
    }

    async fn upload_wasm(
        &self,
        owner_id: &str,
        name: &str,
        version: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        let row = sqlx::query(UPLOAD_WASM)
            .bind(owner_id)
            .bind(name)
            .bind(version)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| r.bytes("wasm")).transpose()
    }

    async fn visible_strategies(&self, viewer_id: &str) -> StoreResult<Vec<AuthoredStrategy>> {
        let rows = sqlx::query(VISIBLE)
            .bind(viewer_id)
            .fetch_all(&self.pool)
            .await?;
        strategy_rows(&rows)
    }

    async fn update_strategy(
        &self,
        owner_id: &str,
        name: &str,
        shared: Option<bool>,
        current_version: Option<&str>,
    ) -> StoreResult<UpdateOutcome> {
        let mut tx = begin_owner(self, owner_id).await?;
        let deleted = sqlx::query(STRATEGY_DELETED)
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
            let found = sqlx::query(VERSION_HAS_BYTES)
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
        sqlx::query(UPDATE_STRATEGY)
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
        let mut tx = begin_owner(self, owner_id).await?;
        let marked = sqlx::query(MARK_DELETED)
            .bind(owner_id)
            .bind(name)
            .execute(&mut *tx)
            .await?;
        if marked.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        sqlx::query(DROP_WASM)
            .bind(owner_id)
            .bind(name)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }
}

/// Stores `wasm` again for `record`'s version if its bytes were dropped.
async fn restore_wasm(
    tx: &mut Transaction<'_, Postgres>,
    record: &UploadRecord,
    wasm: &[u8],
) -> StoreResult<()> {
    sqlx::query(RESTORE_WASM)
        .bind(&record.owner_id)
        .bind(&record.name)
        .bind(&record.version)
        .bind(wasm)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
