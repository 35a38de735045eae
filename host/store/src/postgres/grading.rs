//! PostgreSQL [`crate::GradingStore`]: runs started with `ON CONFLICT DO
//! NOTHING`, tasks claimed with `SKIP LOCKED`, completions serialised by an
//! advisory lock. Grades, histories and the readers are written once, in
//! `crate::grading`.

use forecast_domain::GradingStatus;

use super::PgStore;
use crate::grading::new_run;
use crate::rows::{self, Cols};
use crate::work_list::GRADING_TASKS;
use crate::{sql, GradeRow, GradingRun, StoreError, StoreResult};

const BATCH_CARRIES: &str = sql::batch_carries!(
    "SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($2 AS jsonb))"
);
const BATCH_TRACK_POINTS: &str = sql::batch_track_points!(
    "SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($2 AS jsonb))"
);

const INSERT_RUN: &str =
    "INSERT INTO grading_runs (id, day, engine, scorer, status, started_at, total)
     VALUES ($1, $2, $3, $4, 'running', $5, $6)
     ON CONFLICT (day, engine, scorer) DO NOTHING
     RETURNING id";

/// Key of the transaction-scoped advisory lock that serialises run
/// completions across processes: each completion deletes the other runs'
/// grades and tasks, so two at once could deadlock on each other's rows.
const FINISH_LOCK: i64 = 0x4645_4752_4144; // "FEGRAD"

const LOCK_RUN: &str = "SELECT status FROM grading_runs WHERE id = $1 FOR UPDATE";

crate::grading::impl_grading_store!(PgStore {
    async fn start_or_join_run(
        &self,
        day: &str,
        engine: &str,
        scorer: &str,
        asset_ids: &[i64],
        now: i64,
    ) -> StoreResult<GradingRun> {
        // The run and its tasks commit together. A concurrent inserter of
        // the same (day, engine, scorer) waits on the unique index until the
        // first transaction ends, then does nothing and (a new statement, so
        // a new snapshot under READ COMMITTED) reads the committed run —
        // never a run without its tasks. Runs are never deleted, so the
        // read finds it; the loop only guards against a first inserter that
        // rolled back between our insert and our read.
        let total = rows::len(asset_ids.len())?;
        for _ in 0..3 {
            let mut tx = self.pool.begin().await?;
            let id = uuid::Uuid::new_v4().to_string();
            let inserted = sqlx::query(INSERT_RUN)
                .bind(&id)
                .bind(day)
                .bind(engine)
                .bind(scorer)
                .bind(now)
                .bind(total)
                .fetch_optional(&mut *tx)
                .await?;
            if inserted.is_none() {
                tx.rollback().await?;
                let row = sqlx::query(sql::RUN_BY_KEY)
                    .bind(day)
                    .bind(engine)
                    .bind(scorer)
                    .fetch_optional(&self.pool)
                    .await?;
                match row {
                    Some(r) => return rows::run(&r),
                    None => continue,
                }
            }
            sqlx::query(&GRADING_TASKS.pg_insert())
                .bind(&id)
                .bind(asset_ids)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            return Ok(new_run(id, day, engine, scorer, total, now));
        }
        Err(StoreError::Corrupt(format!(
            "grading run ({day}, {engine}, {scorer}) neither inserted nor found"
        )))
    }
    #[tracing::instrument(
        name = "record_grades",
        skip_all,
        fields(run_id = %run_id, worker = %worker, grades = grades.len(), done = done.len(), failed = failed.len())
    )]
    async fn record_grades(
        &self,
        run_id: &str,
        worker: &str,
        grades: &[GradeRow],
        done: &[i64],
        failed: &[i64],
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        crate::grading::write_grades!(tx, run_id, worker, grades, done, failed);
        tx.commit().await?;
        Ok(())
    }
    async fn record_track_points(
        &self,
        run_id: &str,
        points: &[crate::TrackPoints],
        carries: &[crate::GradeCarry],
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        crate::grading::write_track_points!(
            tx,
            run_id,
            points,
            carries,
            crate::sql::PG_NEW_BODY_IDS
        );
        tx.commit().await?;
        Ok(())
    }
    #[tracing::instrument(name = "finish_grading_run", skip_all, fields(run_id = %run_id))]
    async fn finish_run_if_complete(&self, run_id: &str, now: i64) -> StoreResult<bool> {
        // Completions are serialised across processes (advisory lock), and
        // the run row is locked: a second caller waits, then reads `done`.
        // The open-task count is a fresh snapshot taken after the locks; a
        // task closed by a transaction still in flight counts as open, and
        // that transaction's worker calls this again after committing.
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(FINISH_LOCK)
            .execute(&mut *tx)
            .await?;
        let status: Option<GradingStatus> = sqlx::query(LOCK_RUN)
            .bind(run_id)
            .fetch_optional(&mut *tx)
            .await?
            .map(|r| r.parsed("status"))
            .transpose()?;
        if status != Some(GradingStatus::Running) {
            tx.rollback().await?;
            return Ok(false);
        }
        let open = sqlx::query(sql::COUNT_OPEN_TASKS)
            .bind(run_id)
            .fetch_one(&mut *tx)
            .await?
            .int("n")?;
        if open > 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        sqlx::query(sql::MARK_RUN_DONE)
            .bind(now)
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        crate::grading::complete_run!(tx, run_id);
        tx.commit().await?;
        Ok(true)
    }
});
