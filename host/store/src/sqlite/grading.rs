//! SQLite [`crate::GradingStore`]: every read-check-write under the writer
//! lock in a `BEGIN IMMEDIATE` transaction, so claimers and completers of
//! one process queue up and other processes wait on SQLite's lock. Grades,
//! histories and the readers are written once, in `crate::grading`.

use super::{insert_pending, SqliteStore};
use crate::grading::new_run;
use crate::rows::{self, Cols};
use crate::work_list::GRADING_TASKS;
use crate::{sql, GradeRow, GradingRun, StoreResult};

const BATCH_CARRIES: &str = sql::batch_carries!("SELECT value FROM json_each($2)");
const BATCH_TRACK_POINTS: &str = sql::batch_track_points!("SELECT value FROM json_each($2)");

const INSERT_RUN: &str =
    "INSERT INTO grading_runs (id, day, engine, scorer, status, started_at, total)
     VALUES ($1, $2, $3, $4, 'running', $5, $6)";

crate::grading::impl_grading_store!(SqliteStore {
    async fn start_or_join_run(
        &self,
        day: &str,
        engine: &str,
        scorer: &str,
        asset_ids: &[i64],
        now: i64,
    ) -> StoreResult<GradingRun> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(r) = sqlx::query(sql::RUN_BY_KEY)
            .bind(day)
            .bind(engine)
            .bind(scorer)
            .fetch_optional(&mut *tx)
            .await?
        {
            return rows::run(&r);
        }
        let id = uuid::Uuid::new_v4().to_string();
        let total = rows::len(asset_ids.len())?;
        sqlx::query(INSERT_RUN)
            .bind(&id)
            .bind(day)
            .bind(engine)
            .bind(scorer)
            .bind(now)
            .bind(total)
            .execute(&mut *tx)
            .await?;
        insert_pending(&mut tx, &GRADING_TASKS, &id, asset_ids).await?;
        tx.commit().await?;
        Ok(new_run(id, day, engine, scorer, total, now))
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
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
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
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        crate::grading::write_track_points!(
            tx,
            run_id,
            points,
            carries,
            crate::sql::SQLITE_NEW_BODY_IDS
        );
        tx.commit().await?;
        Ok(())
    }
    #[tracing::instrument(name = "finish_grading_run", skip_all, fields(run_id = %run_id))]
    async fn finish_run_if_complete(&self, run_id: &str, now: i64) -> StoreResult<bool> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let open = sqlx::query(sql::COUNT_OPEN_TASKS)
            .bind(run_id)
            .fetch_one(&mut *tx)
            .await?
            .int("n")?;
        let flipped = sqlx::query(sql::MARK_RUN_DONE)
            .bind(now)
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        if open > 0 || flipped.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        crate::grading::complete_run!(tx, run_id);
        tx.commit().await?;
        Ok(true)
    }
});
