//! SQLite [`crate::JobStore`]: every read-check-write under the writer lock
//! in a `BEGIN IMMEDIATE` transaction, as grading's.

use super::SqliteStore;
use crate::jobs::{new_job, statements as sql};
use crate::rows::{self, Cols};
use crate::{JobRun, StoreResult};

const INSERT_RUN: &str =
    "INSERT INTO job_runs (id, kind, day, status, started_at, finished_at, total)
     VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// Items per multi-row insert (3 parameters each).
const ITEM_CHUNK: usize = 500;

const CLAIMABLE: &str = "SELECT item_id FROM job_items
     WHERE run_id = $1 AND (status = 'pending' OR (status = 'claimed' AND claimed_at <= $2))
     ORDER BY item_id LIMIT $3";

const CLAIM: &str = "UPDATE job_items SET status = 'claimed', claimed_by = $1, claimed_at = $2
     WHERE run_id = $3 AND item_id = $4";

#[async_trait::async_trait]
impl crate::JobStore for SqliteStore {
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
        for chunk in items.chunks(ITEM_CHUNK) {
            let mut q = sqlx::QueryBuilder::new("INSERT INTO job_items (run_id, item_id, status) ");
            q.push_values(chunk, |mut b, item| {
                b.push_bind(&run.id).push_bind(item).push_bind("pending");
            });
            q.build().execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(run)
    }

    async fn job_by_key(&self, kind: &str, day: &str) -> StoreResult<Option<JobRun>> {
        sqlx::query(sql::RUN_BY_KEY)
            .bind(kind)
            .bind(day)
            .fetch_optional(&self.pool)
            .await?
            .map(|r| rows::job(&r))
            .transpose()
    }

    async fn claim_job_items(
        &self,
        run_id: &str,
        worker: &str,
        limit: u32,
        now: i64,
        lease_seconds: i64,
    ) -> StoreResult<Vec<i64>> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let ids: Vec<i64> = sqlx::query(CLAIMABLE)
            .bind(run_id)
            .bind(now - lease_seconds)
            .bind(i64::from(limit))
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| r.int("item_id"))
            .collect::<StoreResult<_>>()?;
        for id in &ids {
            sqlx::query(CLAIM)
                .bind(worker)
                .bind(now)
                .bind(run_id)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(ids)
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
}
