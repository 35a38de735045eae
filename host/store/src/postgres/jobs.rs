//! PostgreSQL [`crate::JobStore`]: runs started with `ON CONFLICT DO
//! NOTHING`, items claimed with `SKIP LOCKED`, as grading's.

use super::PgStore;
use crate::jobs::{new_job, statements as sql};
use crate::rows;
use crate::work_list::JOB_ITEMS;
use crate::{JobRun, StoreError, StoreResult};

const INSERT_RUN: &str =
    "INSERT INTO job_runs (id, kind, day, status, started_at, finished_at, total)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (kind, day) DO NOTHING
     RETURNING id";

/// Locks a run's row.
const LOCK_RUN: &str = "SELECT id FROM job_runs WHERE id = $1 FOR UPDATE";

/// Closes a worker's claimed items, given as an array of ids.
const CLOSE_ITEMS: &str = "UPDATE job_items SET status = $1
     WHERE run_id = $2 AND item_id = ANY($3) AND status = 'claimed' AND claimed_by = $4";

crate::jobs::impl_job_store!(PgStore,
    lock_run: Some(LOCK_RUN),
    close_items: CLOSE_ITEMS,
    item_ids: std::convert::identity,
{
    async fn start_or_join_job(
        &self,
        kind: &str,
        day: &str,
        items: &[i64],
        now: i64,
    ) -> StoreResult<JobRun> {
        // As grading's runs: a concurrent inserter of the same key waits on
        // the unique index, does nothing, then reads the committed run.
        let total = rows::len(items.len())?;
        for _ in 0..3 {
            let mut tx = self.pool.begin().await?;
            let run = new_job(uuid::Uuid::new_v4().to_string(), kind, day, total, now);
            let inserted = sqlx::query(INSERT_RUN)
                .bind(&run.id)
                .bind(kind)
                .bind(day)
                .bind(run.status.as_str())
                .bind(now)
                .bind(run.finished_at)
                .bind(total)
                .fetch_optional(&mut *tx)
                .await?;
            if inserted.is_none() {
                tx.rollback().await?;
                let row = sqlx::query(sql::RUN_BY_KEY)
                    .bind(kind)
                    .bind(day)
                    .fetch_optional(&self.pool)
                    .await?;
                match row {
                    Some(r) => return rows::job(&r),
                    None => continue,
                }
            }
            sqlx::query(sql::DROP_OLD_RUNS)
                .bind(kind)
                .bind(now - sql::KEEP_SECONDS)
                .execute(&mut *tx)
                .await?;
            sqlx::query(&JOB_ITEMS.pg_insert())
                .bind(&run.id)
                .bind(items)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            return Ok(run);
        }
        Err(StoreError::Corrupt(format!(
            "job run ({kind}, {day}) neither inserted nor found"
        )))
    }
});
