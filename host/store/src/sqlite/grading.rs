//! SQLite [`crate::GradingStore`]: every read-check-write under the writer
//! lock in a `BEGIN IMMEDIATE` transaction, so claimers and completers of
//! one process queue up and other processes wait on SQLite's lock. The
//! readers are the shared implementation (`crate::grading`).

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

const CLOSE_TASK: &str = "UPDATE grading_tasks SET status = $1
     WHERE run_id = $2 AND asset_id = $3 AND status = 'claimed' AND claimed_by = $4";

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
        for g in grades {
            sqlx::query(sql::UPSERT_GRADE)
                .bind(run_id)
                .bind(g.asset_id)
                .bind(i64::from(g.return_period))
                .bind(g.metric.as_str())
                .bind(g.data_version)
                .bind(&g.letter)
                .bind(g.score)
                .bind(g.expected_return)
                .bind(g.prediction_error)
                .bind(g.median_return)
                .bind(g.median_error)
                .bind(g.current_drawdown)
                .bind(g.current_price)
                .bind(g.win_rate)
                .bind(&g.body)
                .execute(&mut *tx)
                .await?;
        }
        // Only tasks still claimed by `worker` close (and count); `done`
        // first, so an id in both lists counts once, as graded.
        let mut counts = [0i64; 2];
        for (slot, (ids, status)) in counts.iter_mut().zip([(done, "done"), (failed, "failed")]) {
            for id in ids {
                let r = sqlx::query(CLOSE_TASK)
                    .bind(status)
                    .bind(run_id)
                    .bind(id)
                    .bind(worker)
                    .execute(&mut *tx)
                    .await?;
                *slot += rows::count(r.rows_affected())?;
            }
        }
        if counts != [0, 0] {
            sqlx::query(sql::COUNT_CLOSED_TASKS)
                .bind(counts[0])
                .bind(counts[1])
                .bind(run_id)
                .execute(&mut *tx)
                .await?;
        }
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
        for statement in [
            sql::SET_ACTIVE_RUN,
            sql::DELETE_OTHER_GRADES,
            sql::DELETE_OTHER_TRACK_POINTS,
            sql::DELETE_OTHER_CARRIES,
            sql::DELETE_OTHER_TASKS,
        ] {
            sqlx::query(statement)
                .bind(run_id)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query(sql::DELETE_UNUSED_TRACK_BODIES)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }
});
