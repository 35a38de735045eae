//! Shared work lists: a job of the day split across replicas (the
//! scheduled price refresh). Each (kind, day) has one run with one item per
//! asset; replicas claim items in batches under a lease, so a killed
//! replica's items are picked up by another and no item is claimed twice —
//! the grading job's scheme (`crate::grading`) for work that produces no
//! snapshot of its own.

use async_trait::async_trait;
use forecast_domain::GradingStatus;

use crate::StoreResult;

/// A job run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRun {
    /// UUID.
    pub id: String,
    /// What the job does, e.g. `refresh:yahoo`.
    pub kind: String,
    /// The UTC day it is for (`YYYY-MM-DD`).
    pub day: String,
    /// Running until no item is pending or claimed.
    pub status: GradingStatus,
    /// Unix seconds.
    pub started_at: i64,
    /// Unix seconds, once done.
    pub finished_at: Option<i64>,
    /// Items of the run.
    pub total: i64,
    /// Items closed as done.
    pub done: i64,
    /// Items closed as failed.
    pub failures: i64,
}

/// Runs and their items.
#[async_trait]
pub trait JobStore: Send + Sync {
    /// The run of (`kind`, `day`): created with one pending item per id if
    /// it does not exist (atomically; concurrent callers get the same run),
    /// else returned as it is. Runs of `kind` older than a week are
    /// dropped when a new one is created.
    async fn start_or_join_job(
        &self,
        kind: &str,
        day: &str,
        items: &[i64],
        now: i64,
    ) -> StoreResult<JobRun>;

    /// The run of (`kind`, `day`), if it was started.
    async fn job_by_key(&self, kind: &str, day: &str) -> StoreResult<Option<JobRun>>;

    /// Claims up to `limit` items of a run for `worker`: pending ones, or
    /// claimed ones whose lease (`lease_seconds`) expired. Concurrent
    /// claimers never get the same item.
    async fn claim_job_items(
        &self,
        run_id: &str,
        worker: &str,
        limit: u32,
        now: i64,
        lease_seconds: i64,
    ) -> StoreResult<Vec<i64>>;

    /// Closes `worker`'s items (`done`, `failed`) in one transaction and
    /// marks the run done when nothing is left pending or claimed. Items no
    /// longer claimed by `worker` (another replica took them over) count
    /// nothing. Returns the run as it is after the call.
    async fn close_job_items(
        &self,
        run_id: &str,
        worker: &str,
        done: &[i64],
        failed: &[i64],
        now: i64,
    ) -> StoreResult<JobRun>;
}

/// Implements [`JobStore`] for a backend (`$store`, with a `pool` field,
/// `write_tx()`, and `insert_pending`, its multi-row insert of a run's
/// pending items). Closing takes the dialect's details as arguments: the
/// statement locking the run's row first, where the backend locks rows
/// (`$lock_run`, an `Option`), and the statement closing a list of items
/// ($1 status, $2 run, $3 the items as `$item_ids` makes them of the ids,
/// $4 worker).
macro_rules! impl_job_store {
    (
        $store:ty,
        lock_run: $lock_run:expr,
        close_items: $close_items:expr,
        item_ids: $item_ids:expr
    ) => {
        #[async_trait::async_trait]
        impl $crate::JobStore for $store {
            async fn start_or_join_job(
                &self,
                kind: &str,
                day: &str,
                items: &[i64],
                now: i64,
            ) -> $crate::StoreResult<$crate::JobRun> {
                use $crate::jobs::statements as sql;
                // As grading's runs: a concurrent inserter of the same key
                // waits (on the writer lock, on the unique index), does
                // nothing, then reads the committed run. Runs are only
                // dropped a week on; the loop guards against a first
                // inserter that rolled back.
                let total = $crate::rows::len(items.len())?;
                for _ in 0..3 {
                    let (_guard, mut tx) = self.write_tx().await?;
                    let run = $crate::jobs::new_job(
                        uuid::Uuid::new_v4().to_string(),
                        kind,
                        day,
                        total,
                        now,
                    );
                    let inserted = sqlx::query(sql::INSERT_RUN)
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
                        match self.job_by_key(kind, day).await? {
                            Some(run) => return Ok(run),
                            None => continue,
                        }
                    }
                    sqlx::query(sql::DROP_OLD_RUNS)
                        .bind(kind)
                        .bind(now - sql::KEEP_SECONDS)
                        .execute(&mut *tx)
                        .await?;
                    insert_pending(&mut tx, &$crate::work_list::JOB_ITEMS, &run.id, items).await?;
                    tx.commit().await?;
                    return Ok(run);
                }
                Err($crate::StoreError::Corrupt(format!(
                    "job run ({kind}, {day}) neither inserted nor found"
                )))
            }

            async fn close_job_items(
                &self,
                run_id: &str,
                worker: &str,
                done: &[i64],
                failed: &[i64],
                now: i64,
            ) -> $crate::StoreResult<$crate::JobRun> {
                use $crate::jobs::statements as sql;
                let (_guard, mut tx) = self.write_tx().await?;
                if let Some(lock) = $lock_run {
                    // The run row first: closers of one run queue up on it,
                    // so exactly one of them sees the last item closed.
                    sqlx::query(lock).bind(run_id).execute(&mut *tx).await?;
                }
                let mut counted = [0i64; 2];
                for (n, (status, ids)) in
                    [("done", done), ("failed", failed)].into_iter().enumerate()
                {
                    if ids.is_empty() {
                        continue;
                    }
                    counted[n] = sqlx::query($close_items)
                        .bind(status)
                        .bind(run_id)
                        .bind($item_ids(ids))
                        .bind(worker)
                        .execute(&mut *tx)
                        .await?
                        .rows_affected() as i64;
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
                let run = $crate::rows::job(&run)?;
                tx.commit().await?;
                Ok(run)
            }

            async fn job_by_key(
                &self,
                kind: &str,
                day: &str,
            ) -> $crate::StoreResult<Option<$crate::JobRun>> {
                sqlx::query($crate::jobs::statements::RUN_BY_KEY)
                    .bind(kind)
                    .bind(day)
                    .fetch_optional(&self.pool)
                    .await?
                    .map(|r| $crate::rows::job(&r))
                    .transpose()
            }

            async fn claim_job_items(
                &self,
                run_id: &str,
                worker: &str,
                limit: u32,
                now: i64,
                lease_seconds: i64,
            ) -> $crate::StoreResult<Vec<i64>> {
                self.claim_work(
                    &$crate::work_list::JOB_ITEMS,
                    run_id,
                    worker,
                    limit,
                    now,
                    lease_seconds,
                )
                .await
            }
        }
    };
}
pub(crate) use impl_job_store;

/// The statements both backends share.
pub(crate) mod statements {
    pub(crate) const RUN_BY_KEY: &str = "SELECT id, kind, day, status, started_at, finished_at, \
         total, done, failures FROM job_runs WHERE kind = $1 AND day = $2";

    pub(crate) const RUN_BY_ID: &str = "SELECT id, kind, day, status, started_at, finished_at, \
         total, done, failures FROM job_runs WHERE id = $1";

    /// A new run, unless its (kind, day) is taken (then no row returns).
    pub(crate) const INSERT_RUN: &str =
        "INSERT INTO job_runs (id, kind, day, status, started_at, finished_at, total)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (kind, day) DO NOTHING
         RETURNING id";

    pub(crate) const DROP_OLD_RUNS: &str =
        "DELETE FROM job_runs WHERE kind = $1 AND started_at < $2";

    pub(crate) const COUNT_CLOSED: &str =
        "UPDATE job_runs SET done = done + $2, failures = failures + $3 WHERE id = $1";

    pub(crate) const FINISH_IF_EMPTY: &str = "UPDATE job_runs SET status = 'done', finished_at = $2
         WHERE id = $1 AND status = 'running' AND NOT EXISTS (
             SELECT 1 FROM job_items WHERE run_id = $1 AND status IN ('pending', 'claimed'))";

    /// A week, in seconds: how long finished runs are kept.
    pub(crate) const KEEP_SECONDS: i64 = 7 * 86_400;
}

/// A new run's record, as both backends return it after inserting it.
pub(crate) fn new_job(id: String, kind: &str, day: &str, total: i64, now: i64) -> JobRun {
    JobRun {
        id,
        kind: kind.to_string(),
        day: day.to_string(),
        status: if total == 0 {
            GradingStatus::Done
        } else {
            GradingStatus::Running
        },
        started_at: now,
        finished_at: (total == 0).then_some(now),
        total,
        done: 0,
        failures: 0,
    }
}
