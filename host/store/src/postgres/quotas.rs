//! PostgreSQL [`crate::QuotaStore`]: the subject's counter rows locked for the
//! read-check-write, so admission is atomic across processes.

use std::collections::HashMap;

use async_trait::async_trait;

use super::PgStore;
use crate::quotas::{admit, window_start};
use crate::rows::Cols;
use crate::{Consumption, QuotaStore, StoreResult, Window};

const ENSURE_COUNTER: &str = "INSERT INTO counters (subject, kind, window_start, used)
     VALUES ($1, $2, $3, 0)
     ON CONFLICT (subject, kind) DO NOTHING";

const LOCK_COUNTERS: &str = "SELECT kind, window_start, used FROM counters
     WHERE subject = $1 AND kind = ANY($2)
     ORDER BY kind COLLATE \"C\" FOR UPDATE";

const REFUND: &str = "UPDATE counters SET used = GREATEST(used - $4, 0)
     WHERE subject = $1 AND kind = $2 AND window_start = $3";

/// Adds to a counter of the current window, or starts a new window.
const TALLY: &str = "INSERT INTO counters (subject, kind, window_start, used)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (subject, kind) DO UPDATE SET
       used = CASE WHEN counters.window_start = excluded.window_start
                   THEN counters.used + excluded.used ELSE excluded.used END,
       window_start = excluded.window_start";

const SAVE_COUNTER: &str =
    "UPDATE counters SET window_start = $3, used = $4 WHERE subject = $1 AND kind = $2";

/// Runs `statement` ($1 subject, $2 kind, $3 window start at `now`, $4
/// `cost`) once per window on `conn`.
async fn per_window(
    conn: &mut sqlx::PgConnection,
    statement: &str,
    subject: &str,
    windows: &[Window],
    cost: u32,
    now: i64,
) -> StoreResult<()> {
    for w in windows {
        sqlx::query(statement)
            .bind(subject)
            .bind(w.kind)
            .bind(window_start(now, w.seconds))
            .bind(i64::from(cost))
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

#[async_trait]
impl QuotaStore for PgStore {
    async fn consume(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<Consumption> {
        // Make sure every row exists, then lock the subject's rows; the
        // read-check-write below is then one atomic step for every process
        // sharing the database. Rows are created and locked in one fixed
        // order (kind, byte-wise) so concurrent calls cannot deadlock. A
        // rejected call rolls back, leaving nothing behind (as in SQLite).
        let mut tx = self.pool.begin().await?;
        let mut kinds: Vec<&Window> = windows.iter().collect();
        kinds.sort_unstable_by_key(|w| w.kind);
        kinds.dedup_by_key(|w| w.kind);
        for w in &kinds {
            sqlx::query(ENSURE_COUNTER)
                .bind(subject)
                .bind(w.kind)
                .bind(window_start(now, w.seconds))
                .execute(&mut *tx)
                .await?;
        }
        let names: Vec<&str> = kinds.iter().map(|w| w.kind).collect();
        let rows = sqlx::query(LOCK_COUNTERS)
            .bind(subject)
            .bind(&names)
            .fetch_all(&mut *tx)
            .await?;
        let mut stored: HashMap<String, (i64, i64)> = HashMap::with_capacity(rows.len());
        for r in &rows {
            stored.insert(r.text("kind")?, (r.int("window_start")?, r.int("used")?));
        }
        let consumption = admit(windows, |w| stored.get(w.kind).copied(), cost, now);
        // A rejected call, or a look (cost 0), leaves nothing behind.
        if !consumption.admitted || cost == 0 {
            tx.rollback().await?;
            return Ok(consumption);
        }
        for (w, u) in windows.iter().zip(&consumption.windows) {
            sqlx::query(SAVE_COUNTER)
                .bind(subject)
                .bind(w.kind)
                .bind(u.reset - w.seconds)
                .bind(i64::from(u.used))
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(consumption)
    }

    async fn refund(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<()> {
        // Each window's refund on its own (no transaction).
        let mut conn = self.pool.acquire().await?;
        per_window(&mut conn, REFUND, subject, windows, cost, now).await
    }

    async fn tally(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        per_window(&mut tx, TALLY, subject, windows, cost, now).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn counters_of(
        &self,
        subject: &str,
        prefix: &str,
    ) -> StoreResult<Vec<(String, i64, i64)>> {
        let rows = sqlx::query(crate::sql::COUNTERS_OF)
            .bind(subject)
            .bind(prefix)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| Ok((r.text("kind")?, r.int("window_start")?, r.int("used")?)))
            .collect()
    }

    async fn reset(&self, subject: &str) -> StoreResult<()> {
        sqlx::query(crate::sql::RESET_COUNTERS)
            .bind(subject)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn purge_counters(&self, now: i64) -> StoreResult<u64> {
        let done = sqlx::query(crate::sql::PURGE_COUNTERS)
            .bind(now - crate::quotas::LOGIN_RETENTION)
            .bind(now - crate::quotas::RETENTION)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }
}
