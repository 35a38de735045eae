//! Grading runs: one run per (day, engine, scorer), its tasks (one per
//! asset, claimed under a lease by the replicas' workers), the grades they
//! record, and the ranking rows read from the active run.

use async_trait::async_trait;

use forecast_domain::{Category, DataSource, GradingStatus, Metric};

use crate::StoreResult;

/// One grading run (a day's grading by one engine and scorer version).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GradingRun {
    /// UUID.
    pub id: String,
    /// UTC day graded, `YYYY-MM-DD`.
    pub day: String,
    /// Segmentation plugin label.
    pub engine: String,
    /// Scorer plugin label.
    pub scorer: String,
    /// Running or done.
    pub status: GradingStatus,
    /// Unix seconds.
    pub started_at: i64,
    /// Unix seconds, once done.
    pub finished_at: Option<i64>,
    /// Assets to grade.
    pub total: i64,
    /// Assets graded.
    pub graded: i64,
    /// Assets that failed.
    pub failures: i64,
}

/// The graded state of one (asset, return period, metric).
#[derive(Debug, Clone, PartialEq)]
pub struct GradeRow {
    /// Asset.
    pub asset_id: i64,
    /// Horizon in days.
    pub return_period: u32,
    /// The metric graded.
    pub metric: Metric,
    /// The asset's data version that was graded.
    pub data_version: i64,
    /// Grade letter.
    pub letter: String,
    /// Score.
    pub score: f64,
    /// EMA prediction.
    pub expected_return: f64,
    /// EMA error.
    pub prediction_error: f64,
    /// Median prediction.
    pub median_return: f64,
    /// Median error.
    pub median_error: f64,
    /// Drawdown at the last row.
    pub current_drawdown: f64,
    /// Last close.
    pub current_price: f64,
    /// Active segment's win rate (0 when it has none).
    pub win_rate: f64,
    /// The cached verdict, JSON.
    pub body: String,
}

/// One asset's grade history for one (period, metric) of a run, as the
/// services encode it.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackPoints {
    /// Asset.
    pub asset_id: i64,
    /// Horizon in days.
    pub return_period: u32,
    /// The metric graded.
    pub metric: Metric,
    /// The encoded history.
    pub body: Vec<u8>,
    /// The stored body this history was read from (set by the store).
    /// Written with it, the history points at that body instead of
    /// storing `body` again: the caller sets it only when `body` is that
    /// body's bytes (a history unchanged since the run it was read from).
    pub stored: Option<i64>,
}

/// What a run kept of one asset: its carry, if it left one, and its grade
/// histories by (period, metric).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AssetHistory {
    /// Asset.
    pub asset_id: i64,
    /// The encoded carry (see the services' `carry` module).
    pub carry: Option<Vec<u8>>,
    /// The grade histories, by (period, metric).
    pub points: Vec<TrackPoints>,
}

/// What a run's grade of one asset leaves for the next run, as the
/// services encode it.
#[derive(Debug, Clone, PartialEq)]
pub struct GradeCarry {
    /// Asset.
    pub asset_id: i64,
    /// The encoded carry.
    pub body: Vec<u8>,
}

/// A stored grade history with the asset fields its filters read.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackedAsset {
    /// Asset.
    pub asset_id: i64,
    /// Category.
    pub category: Category,
    /// Provenance of the prices.
    pub data_source: DataSource,
    /// The encoded history.
    pub body: Vec<u8>,
}

/// A grade with the asset fields a ranking shows.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedRow {
    /// The grade.
    pub grade: GradeRow,
    /// Ticker.
    pub ticker: String,
    /// Name.
    pub name: String,
    /// Category.
    pub category: Category,
    /// Provenance of the prices graded.
    pub data_source: DataSource,
    /// The date of the asset's last price (the grades of an asset are
    /// dropped whenever its prices change, so these are the prices graded).
    pub last_price_date: chrono::NaiveDate,
    /// The catalog's currency of the asset's prices (may be empty).
    pub currency: String,
}

/// Runs, tasks, grades and rankings.
#[async_trait]
pub trait GradingStore: Send + Sync {
    /// The run of (`day`, `engine`, `scorer`): created with one pending task
    /// per asset if it does not exist (atomically; concurrent callers get
    /// the same run), else returned as it is.
    async fn start_or_join_run(
        &self,
        day: &str,
        engine: &str,
        scorer: &str,
        asset_ids: &[i64],
        now: i64,
    ) -> StoreResult<GradingRun>;

    /// Claims up to `limit` tasks of a run for `worker`: pending ones, or
    /// claimed ones whose lease (`lease_seconds`) expired. Concurrent
    /// claimers never get the same task (SKIP LOCKED on PostgreSQL).
    async fn claim_grading_tasks(
        &self,
        run_id: &str,
        worker: &str,
        limit: u32,
        now: i64,
        lease_seconds: i64,
    ) -> StoreResult<Vec<i64>>;

    /// Stores grades and closes `worker`'s tasks (`done` graded, `failed`
    /// not) in one transaction. Tasks no longer claimed by `worker` (their
    /// lease expired and another replica took them) count nothing.
    async fn record_grades(
        &self,
        run_id: &str,
        worker: &str,
        grades: &[GradeRow],
        done: &[i64],
        failed: &[i64],
    ) -> StoreResult<()>;

    /// When no task of the run is pending or claimed: marks it done, makes
    /// it the active run and drops older runs' grades and tasks — one
    /// transaction. True only for the call that completed it.
    async fn finish_run_if_complete(&self, run_id: &str, now: i64) -> StoreResult<bool>;

    /// The run readers use (the last completed one).
    async fn active_grading_run(&self) -> StoreResult<Option<GradingRun>>;

    /// Makes the completed run of (`day`, `engine`, `scorer`) the active
    /// one again, if there is one (its grades are kept for the day): what a
    /// rollback needs, without grading again. The run, or `None`.
    async fn reactivate_run(
        &self,
        day: &str,
        engine: &str,
        scorer: &str,
    ) -> StoreResult<Option<GradingRun>>;

    /// The most recently started run, complete or not.
    async fn latest_grading_run(&self) -> StoreResult<Option<GradingRun>>;

    /// A grade of a run.
    async fn grade(
        &self,
        run_id: &str,
        asset_id: i64,
        return_period: u32,
        metric: Metric,
    ) -> StoreResult<Option<GradeRow>>;

    /// Every grade of a run for (period, metric) of an active asset, by
    /// asset id.
    async fn ranking_rows(
        &self,
        run_id: &str,
        return_period: u32,
        metric: Metric,
    ) -> StoreResult<Vec<RankedRow>>;

    /// Stores grade histories of a run and the carries of their assets
    /// (replacing any of the same asset, period and metric, or asset) in
    /// one transaction; they go with the run's grades.
    async fn record_track_points(
        &self,
        run_id: &str,
        points: &[TrackPoints],
        carries: &[GradeCarry],
    ) -> StoreResult<()>;

    /// The carries (where the run left one) and grade histories, by
    /// (period, metric), of some assets in a run: one entry per asset asked
    /// for, in that order, read in two queries whatever their number.
    async fn asset_histories(
        &self,
        run_id: &str,
        asset_ids: &[i64],
    ) -> StoreResult<Vec<AssetHistory>>;

    /// A run's grade histories for (period, metric), of active assets, by
    /// asset id.
    async fn track_points(
        &self,
        run_id: &str,
        return_period: u32,
        metric: Metric,
    ) -> StoreResult<Vec<TrackedAsset>>;
}

/// A new run's record, as both backends return it after inserting it.
pub(crate) fn new_run(
    id: String,
    day: &str,
    engine: &str,
    scorer: &str,
    total: i64,
    now: i64,
) -> GradingRun {
    GradingRun {
        id,
        day: day.to_string(),
        engine: engine.to_string(),
        scorer: scorer.to_string(),
        status: GradingStatus::Running,
        started_at: now,
        finished_at: None,
        total,
        graded: 0,
        failures: 0,
    }
}

/// Writes one batch's carries and grade histories in the open transaction
/// `$tx` (both backends; only how the transaction is opened and how new
/// bodies get their ids, `$new_ids`, differ): a few multi-row statements
/// per batch, not one or two per history. A history whose body the
/// previous run stored ([`TrackPoints::stored`]) points at it; the others
/// get a body of their own. Of two entries for one key, the later wins.
macro_rules! write_track_points {
    ($tx:ident, $run_id:ident, $points:ident, $carries:ident, $new_ids:expr) => {
        let carries = $crate::grading::last_of($carries, |c| c.asset_id);
        for chunk in carries.chunks($crate::sql::ROWS_PER_STATEMENT) {
            let mut q =
                sqlx::QueryBuilder::new("INSERT INTO grade_carries (run_id, asset_id, body) ");
            q.push_values(chunk, |mut row, c| {
                row.push_bind($run_id)
                    .push_bind(c.asset_id)
                    .push_bind(&c.body);
            });
            q.push(" ON CONFLICT (run_id, asset_id) DO UPDATE SET body = excluded.body");
            q.build().execute(&mut *$tx).await?;
        }
        let points = $crate::grading::last_of($points, |p| (p.asset_id, p.return_period, p.metric));
        let fresh: Vec<&$crate::TrackPoints> = points
            .iter()
            .copied()
            .filter(|p| p.stored.is_none())
            .collect();
        let ids: Vec<i64> = if fresh.is_empty() {
            Vec::new()
        } else {
            sqlx::query_scalar($new_ids)
                .bind(fresh.len() as i64)
                .fetch_all(&mut *$tx)
                .await?
        };
        let rows: Vec<(i64, &[u8])> = ids
            .iter()
            .copied()
            .zip(fresh.iter().map(|p| &p.body[..]))
            .collect();
        for chunk in rows.chunks($crate::sql::ROWS_PER_STATEMENT) {
            let mut q = sqlx::QueryBuilder::new("INSERT INTO track_bodies (id, body) ");
            q.push_values(chunk, |mut row, (id, body)| {
                row.push_bind(*id).push_bind(*body);
            });
            q.build().execute(&mut *$tx).await?;
        }
        let mut new_ids = ids.into_iter();
        let linked: Vec<(&$crate::TrackPoints, i64)> = points
            .iter()
            .map(|p| (*p, p.stored.or_else(|| new_ids.next()).unwrap_or_default()))
            .collect();
        for chunk in linked.chunks($crate::sql::ROWS_PER_STATEMENT) {
            let mut q = sqlx::QueryBuilder::new(
                "INSERT INTO track_points (run_id, asset_id, return_period, metric, body_id) ",
            );
            q.push_values(chunk, |mut row, (p, body_id)| {
                row.push_bind($run_id)
                    .push_bind(p.asset_id)
                    .push_bind(i64::from(p.return_period))
                    .push_bind(p.metric.as_str())
                    .push_bind(*body_id);
            });
            q.push(
                " ON CONFLICT (run_id, return_period, metric, asset_id) \
                 DO UPDATE SET body_id = excluded.body_id",
            );
            q.build().execute(&mut *$tx).await?;
        }
    };
}
pub(crate) use write_track_points;

/// Writes a batch of grades and closes the tasks `$worker` still holds
/// (`$done` graded, `$failed` failed), counting them on the run, in the
/// open transaction `$tx` (both backends; only how the transaction is
/// opened differs). Multi-row statements of [`sql::ROWS_PER_STATEMENT`]
/// rows; of two grades for one key, the later wins. `$done` is closed
/// first, so an id in both lists counts once, as graded.
macro_rules! write_grades {
    ($tx:ident, $run_id:ident, $worker:ident, $grades:ident, $done:ident, $failed:ident) => {
        let grades = $crate::grading::last_of($grades, |g| (g.asset_id, g.return_period, g.metric));
        for chunk in grades.chunks($crate::sql::ROWS_PER_STATEMENT) {
            let mut q = sqlx::QueryBuilder::new($crate::sql::grade_insert!());
            q.push_values(chunk, |mut row, g| {
                row.push_bind($run_id)
                    .push_bind(g.asset_id)
                    .push_bind(i64::from(g.return_period))
                    .push_bind(g.metric.as_str())
                    .push_bind(g.data_version)
                    .push_bind(&g.letter)
                    .push_bind(g.score)
                    .push_bind(g.expected_return)
                    .push_bind(g.prediction_error)
                    .push_bind(g.median_return)
                    .push_bind(g.median_error)
                    .push_bind(g.current_drawdown)
                    .push_bind(g.current_price)
                    .push_bind(g.win_rate)
                    .push_bind(&g.body);
            });
            q.push(concat!(" ", $crate::sql::upsert_grade_conflict!()));
            q.build().execute(&mut *$tx).await?;
        }
        let mut counts = [0i64; 2];
        for (slot, (ids, status)) in counts
            .iter_mut()
            .zip([($done, "done"), ($failed, "failed")])
        {
            for chunk in ids.chunks($crate::sql::ROWS_PER_STATEMENT) {
                let mut q = sqlx::QueryBuilder::new("UPDATE grading_tasks SET status = ");
                q.push_bind(status)
                    .push(" WHERE run_id = ")
                    .push_bind($run_id)
                    .push(" AND status = 'claimed' AND claimed_by = ")
                    .push_bind($worker)
                    .push(" AND asset_id IN (");
                let mut list = q.separated(", ");
                for id in chunk {
                    list.push_bind(*id);
                }
                q.push(")");
                let r = q.build().execute(&mut *$tx).await?;
                *slot += $crate::rows::count(r.rows_affected())?;
            }
        }
        if counts != [0, 0] {
            sqlx::query($crate::sql::COUNT_CLOSED_TASKS)
                .bind(counts[0])
                .bind(counts[1])
                .bind($run_id)
                .execute(&mut *$tx)
                .await?;
        }
    };
}
pub(crate) use write_grades;

/// The steps that complete run `$run_id` in `$tx`, once its tasks are all
/// closed and it is marked done (both backends): it becomes the active
/// run; the other runs' grades, histories, carries and tasks go, and the
/// bodies no history points at.
macro_rules! complete_run {
    ($tx:ident, $run_id:ident) => {
        for statement in [
            $crate::sql::SET_ACTIVE_RUN,
            $crate::sql::DELETE_OTHER_GRADES,
            $crate::sql::DELETE_OTHER_TRACK_POINTS,
            $crate::sql::DELETE_OTHER_CARRIES,
            $crate::sql::DELETE_OTHER_TASKS,
        ] {
            sqlx::query(statement)
                .bind($run_id)
                .execute(&mut *$tx)
                .await?;
        }
        sqlx::query($crate::sql::DELETE_UNUSED_TRACK_BODIES)
            .execute(&mut *$tx)
            .await?;
    };
}
pub(crate) use complete_run;

/// The last of `items` for each key, in the order of those last ones (a
/// multi-row upsert may not touch one row twice).
pub(crate) fn last_of<T, K: std::hash::Hash + Eq>(items: &[T], key: impl Fn(&T) -> K) -> Vec<&T> {
    let mut last = std::collections::HashMap::new();
    for (i, item) in items.iter().enumerate() {
        last.insert(key(item), i);
    }
    items
        .iter()
        .enumerate()
        .filter(|(i, item)| last.get(&key(item)) == Some(i))
        .map(|(_, item)| item)
        .collect()
}

/// [`GradingStore`] for a backend's store type (`$store`, with a `pool`
/// field): the readers are written once here, over the shared statements;
/// the backend passes in (`$own`) starting, claiming, recording and
/// finishing, whose locking differs.
macro_rules! impl_grading_store {
    ($store:ty { $($own:tt)* }) => {
        #[async_trait::async_trait]
        impl $crate::GradingStore for $store {
            async fn active_grading_run(
                &self,
            ) -> $crate::StoreResult<Option<$crate::GradingRun>> {
                let row = sqlx::query($crate::sql::ACTIVE_RUN)
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref().map($crate::rows::run).transpose()
            }

            async fn reactivate_run(
                &self,
                day: &str,
                engine: &str,
                scorer: &str,
            ) -> $crate::StoreResult<Option<$crate::GradingRun>> {
                let row = sqlx::query($crate::sql::DONE_RUN)
                    .bind(day)
                    .bind(engine)
                    .bind(scorer)
                    .fetch_optional(&self.pool)
                    .await?;
                let Some(run) = row.as_ref().map($crate::rows::run).transpose()? else {
                    return Ok(None);
                };
                sqlx::query($crate::sql::SET_ACTIVE_RUN)
                    .bind(&run.id)
                    .execute(&self.pool)
                    .await?;
                Ok(Some(run))
            }

            async fn latest_grading_run(
                &self,
            ) -> $crate::StoreResult<Option<$crate::GradingRun>> {
                let row = sqlx::query($crate::sql::LATEST_RUN)
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref().map($crate::rows::run).transpose()
            }

            async fn grade(
                &self,
                run_id: &str,
                asset_id: i64,
                return_period: u32,
                metric: ::forecast_domain::Metric,
            ) -> $crate::StoreResult<Option<$crate::GradeRow>> {
                let row = sqlx::query($crate::sql::GRADE)
                    .bind(run_id)
                    .bind(asset_id)
                    .bind(i64::from(return_period))
                    .bind(metric.as_str())
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref().map($crate::rows::grade).transpose()
            }

            async fn ranking_rows(
                &self,
                run_id: &str,
                return_period: u32,
                metric: ::forecast_domain::Metric,
            ) -> $crate::StoreResult<Vec<$crate::RankedRow>> {
                let rows = sqlx::query($crate::sql::RANKING_ROWS)
                    .bind(run_id)
                    .bind(i64::from(return_period))
                    .bind(metric.as_str())
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map($crate::rows::ranked).collect()
            }

            async fn track_points(
                &self,
                run_id: &str,
                return_period: u32,
                metric: ::forecast_domain::Metric,
            ) -> $crate::StoreResult<Vec<$crate::TrackedAsset>> {
                let rows = sqlx::query($crate::sql::TRACK_POINTS)
                    .bind(run_id)
                    .bind(i64::from(return_period))
                    .bind(metric.as_str())
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map($crate::rows::tracked).collect()
            }

            async fn asset_histories(
                &self,
                run_id: &str,
                asset_ids: &[i64],
            ) -> $crate::StoreResult<Vec<$crate::AssetHistory>> {
                use $crate::rows::Cols as _;
                // The ids as one JSON array: each backend's SQL unpacks it.
                let ids = format!(
                    "[{}]",
                    asset_ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
                );
                let mut out: Vec<$crate::AssetHistory> = asset_ids
                    .iter()
                    .map(|&asset_id| $crate::AssetHistory {
                        asset_id,
                        carry: None,
                        points: Vec::new(),
                    })
                    .collect();
                let at = |id: i64| asset_ids.iter().position(|&a| a == id);
                let carries = sqlx::query(BATCH_CARRIES)
                    .bind(run_id)
                    .bind(&ids)
                    .fetch_all(&self.pool)
                    .await?;
                for r in &carries {
                    if let Some(i) = at(r.int("asset_id")?) {
                        out[i].carry = Some(r.bytes("body")?);
                    }
                }
                let rows = sqlx::query(BATCH_TRACK_POINTS)
                    .bind(run_id)
                    .bind(&ids)
                    .fetch_all(&self.pool)
                    .await?;
                for r in &rows {
                    let p = $crate::rows::track_points(r)?;
                    if let Some(i) = at(p.asset_id) {
                        out[i].points.push(p);
                    }
                }
                Ok(out)
            }

            async fn claim_grading_tasks(
                &self,
                run_id: &str,
                worker: &str,
                limit: u32,
                now: i64,
                lease_seconds: i64,
            ) -> $crate::StoreResult<Vec<i64>> {
                self.claim_work(
                    &$crate::work_list::GRADING_TASKS,
                    run_id,
                    worker,
                    limit,
                    now,
                    lease_seconds,
                )
                .await
            }

            $($own)*
        }
    };
}
pub(crate) use impl_grading_store;
