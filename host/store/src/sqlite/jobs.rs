//! SQLite [`crate::JobStore`]: every read-check-write under the writer lock
//! in a `BEGIN IMMEDIATE` transaction, as grading's.

use super::{insert_pending, SqliteStore};
use crate::jobs::{new_job, statements as sql};
use crate::rows;
use crate::work_list::JOB_ITEMS;
use crate::{JobRun, StoreResult};

const INSERT_RUN: &str =
    "INSERT INTO job_runs (id, kind, day, status, started_at, finished_at, total)
     VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// Closes a worker's claimed items, given as a JSON array of ids (SQLite
/// has no array parameters).
const CLOSE_ITEMS: &str = "UPDATE job_items SET status = $1
     WHERE run_id = $2 AND item_id IN (SELECT value FROM json_each($3))
     AND status = 'claimed' AND claimed_by = $4";

/// `ids` as the JSON array [`CLOSE_ITEMS`] unpacks.
fn json_ids(ids: &[i64]) -> String {
    format!(
        "[{}]",
        ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
    )
}

crate::jobs::impl_job_store!(SqliteStore,
    lock_run: None::<&str>,
    close_items: CLOSE_ITEMS,
    item_ids: json_ids,
{
    async fn start_or_join_job(
        &self,
        kind: &str,
        day: &str,
        items: &[i64],
        now: i64,
    ) -> StoreResult<JobRun> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(r) = sqlx::query(sql::RUN_BY_KEY)
            .bind(kind)
            .bind(day)
            .fetch_optional(&mut *tx)
            .await?
        {
            return rows::job(&r);
        }
        sqlx::query(sql::DROP_OLD_RUNS)
            .bind(kind)
            .bind(now - sql::KEEP_SECONDS)
            .execute(&mut *tx)
            .await?;
        let run = new_job(
            uuid::Uuid::new_v4().to_string(),
            kind,
            day,
            rows::len(items.len())?,
            now,
        );
        sqlx::query(INSERT_RUN)
            .bind(&run.id)
            .bind(kind)
            .bind(day)
            .bind(run.status.as_str())
            .bind(now)
            .bind(run.finished_at)
            .bind(run.total)
            .execute(&mut *tx)
            .await?;
        insert_pending(&mut tx, &JOB_ITEMS, &run.id, items).await?;
        tx.commit().await?;
        Ok(run)
    }
});
