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

crate::jobs::impl_job_store!(SqliteStore {
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

    async fn close_job_items(
        &self,
        run_id: &str,
        worker: &str,
        done: &[i64],
        failed: &[i64],
        now: i64,
    ) -> StoreResult<JobRun> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let mut counted = [0i64; 2];
        for (n, (status, ids)) in [("done", done), ("failed", failed)].into_iter().enumerate() {
            for id in ids {
                counted[n] += sqlx::query(sql::CLOSE_ITEM)
                    .bind(status)
                    .bind(run_id)
                    .bind(id)
                    .bind(worker)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected() as i64;
            }
        }
        sqlx::query(sql::COUNT_CLOSED)
            .bind(run_id)
            .bind(counted[0])
            .bind(counted[1])
            .execute(&mut *tx)
            .await?;
        sqlx::query(sql::FINISH_IF_EMPTY)
            .bind(run_id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        let run = sqlx::query(sql::RUN_BY_ID)
            .bind(run_id)
            .fetch_one(&mut *tx)
            .await?;
        let run = rows::job(&run)?;
        tx.commit().await?;
        Ok(run)
    }
});
