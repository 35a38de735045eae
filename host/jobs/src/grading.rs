//! The daily grading job (DESIGN §5): every active asset with enough
//! history × return period {7, 30, 90, 180, 365} × metric {return, sharpe,
//! sortino}, default segments and decay, graded by the active engine and
//! scorer components.
//!
//! A run belongs to (UTC day, engine version, scorer version) and is made of
//! one task per asset in the store. Workers — one per core in this process,
//! and as many in every other replica that joins the same run — claim tasks
//! in small batches (lease-based, so a killed worker's tasks are claimed
//! again), grade them on a reused engine instance off the async runtime,
//! and record the grades. The call that records the last task flips the
//! run to active in one transaction: readers see the previous day's
//! snapshot until then, and a failed or interrupted run leaves it served.

use forecast_api::assets::DataSources;
use forecast_services::error::Error;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::NaiveTime;
use tracing::Instrument as _;

use crate::carry::Carry;
use forecast_domain::schedule::{seconds_until, worker_prefix};
use forecast_domain::series::{from_days, PriceSeries};
use forecast_domain::Metric;
use forecast_domain::{Asset, Clock, SharedClock};
use forecast_plugins::segmentation::{EvidenceReport, EvidenceRequest};
use forecast_services::active::Plugins;
use forecast_services::analysis::{AnalysisQuery, CACHED_RETURN_PERIODS, MIN_ROWS};
use forecast_services::forecast::{Pool, PooledTable};
use forecast_services::verdict::{self, VerdictParts};
use forecast_store::{
    Database, GradeCarry, GradeRow, GradingRun, GradingStore, StoreError, TrackPoints,
};

/// Metrics graded every day.
pub const METRICS: [Metric; 3] = [Metric::Return, Metric::Sharpe, Metric::Sortino];
/// Assets a worker claims at once.
const BATCH: u32 = 8;
/// A claimed task whose worker has not reported for this long is claimed
/// again, unless the caller gives another lease
/// (`FORECAST_GRADING_LEASE_SECONDS`).
pub const LEASE_SECONDS: i64 = 120;
/// A run with more failed assets than this share is never activated: the
/// previous snapshot stays served.
pub const MAX_FAILED_SHARE: f64 = 0.10;

/// Progress of a run as this process sees it.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Assets finished by this process so far.
    pub done: usize,
    /// Assets of the run.
    pub total: usize,
    /// Seconds since this process started working on the run.
    pub elapsed: f64,
}

impl Progress {
    /// Assets per second.
    pub fn rate(&self) -> f64 {
        if self.elapsed > 0.0 {
            self.done as f64 / self.elapsed
        } else {
            0.0
        }
    }

    /// Estimated seconds left, if the rate is known.
    pub fn eta(&self) -> Option<f64> {
        let rate = self.rate();
        (rate > 0.0).then(|| self.total.saturating_sub(self.done) as f64 / rate)
    }
}

/// The outcome of [`run`].
#[derive(Debug, Clone)]
pub struct Summary {
    /// The run as stored at the end.
    pub run: GradingRun,
    /// Assets this process graded.
    pub graded_here: usize,
    /// Assets that failed in this process.
    pub failed_here: usize,
    /// Assets graded here whose month-end history the served run's grade
    /// left was kept (only new month-ends and today computed).
    pub kept_here: usize,
    /// Whether this process completed the run (made it active).
    pub activated: bool,
    /// Whether the run was given up because its engine or scorer stopped
    /// being the active one while it ran (a rollback, another activation).
    pub abandoned: bool,
    /// Wall time of this process's part.
    pub elapsed: Duration,
    /// Provenance of the prices of the assets the run graded (by every
    /// replica).
    pub data_sources: DataSources,
}

/// What an asset's grade in the previous run of the same engine and
/// scorer left: its carry and its stored grade histories.
#[derive(Debug, Clone, Default)]
pub struct Previous {
    /// The encoded carry, if the run left one.
    pub carry: Option<Vec<u8>>,
    /// The stored histories, by (period, metric).
    pub bodies: Vec<TrackPoints>,
}

/// The month-ends an asset's previous grade stands for, with its carry
/// and, per query, its stored rows at them.
struct Kept {
    carry: Carry,
    rows: Vec<Vec<forecast_api::track_record::TrackRecordRow>>,
}

impl Previous {
    /// What of this previous grade holds for `series` today (month-ends
    /// `ends`, engine parameters, pooled history and pool `on`): nothing
    /// unless the carry stands for its month-ends
    /// ([`Carry::reusable`]), carries inputs for `sets` return sets, and
    /// every query's stored history decodes to one row per such month-end.
    fn kept(
        &self,
        series: &PriceSeries,
        ends: &[u32],
        queries: &[AnalysisQuery],
        sets: usize,
        on: crate::carry::Inputs<'_>,
    ) -> Option<Kept> {
        let carry = Carry::decode(self.carry.as_deref()?)?;
        let k = carry.reusable(series, ends, on);
        if k == 0 || carry.sets.len() != sets {
            return None;
        }
        let rows = queries
            .iter()
            .map(|q| {
                let stored = self.body(q)?;
                let rows = forecast_services::track_record::decode(&stored.body).ok()?;
                let dates = ends[..k]
                    .iter()
                    .map(|&t| from_days(series.dates[t as usize]));
                (rows.len() == k && rows.iter().map(|r| r.date).eq(dates)).then_some(rows)
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Kept { carry, rows })
    }

    /// The stored history of `query`, if the previous run left one.
    fn body(&self, query: &AnalysisQuery) -> Option<&TrackPoints> {
        self.bodies
            .iter()
            .find(|b| b.return_period == query.return_period && b.metric == query.metric)
    }
}

/// One asset's grade: its rows, its histories and its carry.
struct Graded {
    rows: Vec<GradeRow>,
    track: Vec<TrackPoints>,
    carry: Option<GradeCarry>,
    /// Whether the previous grade's month-ends were kept.
    kept: bool,
}

/// The default query of every graded (period, metric).
fn graded_queries() -> Vec<AnalysisQuery> {
    CACHED_RETURN_PERIODS
        .into_iter()
        .flat_map(|period| {
            METRICS.into_iter().map(move |metric| AnalysisQuery {
                return_period: period,
                metric,
                ..AnalysisQuery::default()
            })
        })
        .collect()
}

/// Today's states, grades, histories and forecasts of one asset.
struct Walked {
    today: Vec<forecast_plugins::segmentation::StateAt>,
    grades: Vec<forecast_plugins::scorer::Grade>,
    track: Vec<TrackPoints>,
    forecasts: forecast_services::forecast::ByHorizon,
    /// Today's evidence, when the walk asked for it.
    evidence: Option<Vec<Option<EvidenceReport>>>,
    carry: Option<Carry>,
    kept: bool,
}

/// Grades every (period, metric) of one asset with a reused engine
/// instance, under the worker's `permit`, with the evidence of each
/// current bucket and the asset's grade history (the state at every
/// month-end, [`forecast_services::track_record`]) — the month-ends of `previous` kept
/// when they still hold; an error when the engine or scorer failed for it.
fn grade_asset(
    permit: &forecast_plugins::Permit,
    session: &mut forecast_plugins::SegmentationSession,
    shared: &Shared,
    asset: &Asset,
    series: &PriceSeries,
    previous: Option<&Previous>,
) -> Result<Graded, String> {
    let (scorer, pooled) = (shared.scorer.as_ref(), &shared.pooled);
    let now = shared.clock.now();
    let engine = session.plugin().clone();
    let periods = series.periods_per_year();
    let queries = graded_queries();
    let params: Vec<_> = queries
        .iter()
        .map(|q| forecast_services::analysis::engine_params(q, periods))
        .collect();
    let max = forecast_domain::defaults::MAX_HISTORY_ROWS;
    let histories = shared.histories != Histories::Without;
    let walked = if histories && engine.has_evidence() && series.len() <= max {
        let call = Call {
            permit,
            scorer,
            asset,
            series,
            queries: &queries,
            params: &params,
        };
        walk_histories(session, &call, pooled, previous)?
    } else {
        // Without histories when none is asked for; else (an engine before
        // WIT 1.7.0, a longer history) the history from the first rows.
        let inputs = (asset, series);
        states_without_history(
            permit, session, scorer, inputs, &queries, &params, histories,
        )?
    };
    if walked.grades.len() != walked.today.len() {
        return Err(format!(
            "{} grades for {} states",
            walked.grades.len(),
            walked.today.len()
        ));
    }
    let window = series.clone().last_rows(max);
    let evidence = match walked.evidence.clone() {
        Some(evidence) => evidence,
        None => today_evidence(permit, session, &window, &params, &walked.today)?,
    };
    let rows = queries
        .iter()
        .zip(&walked.today)
        .zip(&walked.grades)
        .zip(&evidence)
        .map(|(((query, state), grade), evidence)| {
            let v = verdict::build(VerdictParts {
                asset,
                query,
                rows: window.len(),
                last_price_date: from_days(*window.dates.last().expect("graded series has rows")),
                state,
                grade,
                evidence: evidence.as_ref(),
                forecast: walked
                    .forecasts
                    .iter()
                    .find(|f| f.0 == query.return_period)
                    .and_then(|(h, _, g)| forecast_services::forecast::body(*h, g.last()?)),
                engine_version: &engine.info().version,
                scorer_version: &scorer.info().version,
                calculated_at: now,
            });
            verdict::grade_row(&v, asset.data_version)
        })
        .collect();
    Ok(Graded {
        rows,
        track: walked.track,
        carry: walked.carry.map(|c| GradeCarry {
            asset_id: asset.id,
            body: c.encode(),
        }),
        kept: walked.kept,
    })
}

/// What every step of one asset's walk is given.
struct Call<'a> {
    permit: &'a forecast_plugins::Permit,
    scorer: &'a forecast_plugins::ScorerPlugin,
    asset: &'a Asset,
    series: &'a PriceSeries,
    queries: &'a [AnalysisQuery],
    params: &'a [forecast_plugins::segmentation::AnalysisParams],
}

/// The main path: one walk per set gives today's state (the last row) and
/// the state at every month-end not kept from `previous`; one scorer call
/// grades them all; the forecasts run over every month-end and today.
fn walk_histories(
    session: &mut forecast_plugins::SegmentationSession,
    c: &Call<'_>,
    pooled: &PooledTable,
    previous: Option<&Previous>,
) -> Result<Walked, String> {
    let (series, queries) = (c.series, c.queries);
    let pool = Pool::of(c.asset.data_source);
    let month_ends = forecast_services::track_record::month_ends(series);
    let months = month_ends.len();
    let forecasting = c.scorer.has_forecasting() && session.plugin().has_episodes();
    let sets = usize::from(forecasting) * return_sets(queries);
    let on = crate::carry::Inputs {
        params: c.params,
        table: pooled,
        pool,
    };
    let kept = previous.and_then(|p| p.kept(series, &month_ends, queries, sets, on));
    let k = kept.as_ref().map_or(0, |kept| kept.carry.ends.len());
    let mut ends = month_ends[k..].to_vec();
    ends.push(series.len() as u32 - 1);
    let walks = walk_at(session, c, &ends)?;
    let mut all = score_all(c, &walks)?;
    // Today's evidence, and from it today's episodes of the return sets.
    let today: Vec<_> = walks.iter().map(|w| w[w.len() - 1]).collect();
    let evidence = today_evidence(c.permit, session, series, c.params, &today)?;
    let last = today_episodes(queries, &evidence, &today);
    let known = forecast_services::forecast::Known {
        prior: forecast_services::forecast::Prior {
            ends: &month_ends[..k],
            sets: kept.as_ref().map_or(&[][..], |kept| &kept.carry.sets[..]),
        },
        last: last.as_deref(),
        facts: None,
    };
    let (forecasts, mut inputs) = forecast_services::forecast::by_horizon_after(
        c.permit,
        session,
        c.scorer,
        series,
        queries,
        c.params,
        &walks,
        &ends,
        known,
        Some((pooled, pool)),
    )?;
    forecast_grades(queries, &forecasts, &mut all, ends.len(), k);
    let mut old_rows = kept.map(|kept| kept.rows).unwrap_or_default();
    let (mut today, mut grades, mut track) = (Vec::new(), Vec::new(), Vec::new());
    for (query, mut walk) in queries.iter().zip(walks).rev() {
        let mut graded = all.split_off(all.len() - ends.len());
        today.push(walk.pop().expect("the last row's state"));
        grades.push(graded.pop().expect("the last row's grade"));
        // The kept month-ends' rows, their realised returns as of today.
        let mut rows = old_rows.pop().unwrap_or_default();
        for (row, &t) in rows.iter_mut().zip(&month_ends) {
            row.realised_return = forecast_services::track_record::realised_return(
                series,
                t as usize,
                query.return_period,
            );
        }
        rows.extend(forecast_services::track_record::rows(
            series,
            &ends[..ends.len() - 1],
            &walk,
            &graded,
            query.return_period,
        ));
        if let Some((_, pts, g)) = forecasts.iter().find(|f| f.0 == query.return_period) {
            forecast_services::track_record::with_forecasts(
                &mut rows,
                &g[..months],
                &pts[..months],
            );
        }
        let body = forecast_services::track_record::encode(&rows);
        track.push(TrackPoints {
            asset_id: c.asset.id,
            return_period: query.return_period,
            metric: query.metric,
            stored: unchanged(previous, query, &body),
            body,
        });
    }
    today.reverse();
    grades.reverse();
    for set in &mut inputs {
        set.medians.truncate(months);
        set.episodes.truncate(months);
    }
    Ok(Walked {
        today,
        grades,
        track,
        forecasts,
        evidence: Some(evidence),
        carry: Carry::of(series, &month_ends, on, inputs),
        kept: k > 0,
    })
}

/// The stored body of the previous run's history of `query` when `body`
/// is the same bytes: the new run points at it instead of writing it again.
fn unchanged(previous: Option<&Previous>, query: &AnalysisQuery, body: &[u8]) -> Option<i64> {
    previous?.body(query).filter(|b| b.body == body)?.stored
}

/// How many of `queries` grade the return metric (the sets forecast).
fn return_sets(queries: &[AnalysisQuery]) -> usize {
    queries
        .iter()
        .filter(|q| q.metric == Metric::Return)
        .count()
}

/// The scorer's grade of every state of `walks`, in one call.
fn score_all(
    c: &Call<'_>,
    walks: &[Vec<forecast_plugins::segmentation::StateAt>],
) -> Result<Vec<forecast_plugins::scorer::Grade>, String> {
    let inputs: Vec<_> = walks.iter().flatten().map(verdict::score_input).collect();
    let all = c
        .scorer
        .score(c.permit, &inputs)
        .map_err(|e| e.to_string())?;
    if all.len() != inputs.len() {
        return Err(format!("{} grades for {} states", all.len(), inputs.len()));
    }
    Ok(all)
}

/// Each parameter set's state at each of `ends`, in one engine call. Today
/// alone (a day without a new month-end) is asked as `analyse-states`,
/// which shares the sets' work and keeps no medians of earlier prefixes:
/// the same states as the walk's last (the engine's prefix-equality tests),
/// for a fraction of its time.
fn walk_at(
    session: &mut forecast_plugins::SegmentationSession,
    c: &Call<'_>,
    ends: &[u32],
) -> Result<Vec<Vec<forecast_plugins::segmentation::StateAt>>, String> {
    let series = c.series;
    let walks = match ends {
        [end] if *end as usize + 1 == series.len() => session
            .analyse_states(c.permit, series, c.params)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|r| {
                r.map(|s| vec![verdict::state_at(&s)])
                    .map_err(|e| format!("{e:?}"))
            })
            .collect::<Result<Vec<_>, String>>()?,
        _ => session
            .states_at(c.permit, series, c.params, ends)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|r| r.map_err(|e| format!("{e:?}")))
            .collect::<Result<Vec<_>, String>>()?,
    };
    if walks.len() != c.params.len() || walks.iter().any(|w| w.len() != ends.len()) {
        return Err(format!(
            "the engine answered {} state lists for {} parameter sets",
            walks.len(),
            c.params.len()
        ));
    }
    Ok(walks)
}

/// The episodes behind today's bucket of each return-metric query, as
/// today's evidence reports them (what `episodes-at` answers for the last
/// row); `None` when one is missing.
fn today_episodes(
    queries: &[AnalysisQuery],
    evidence: &[Option<EvidenceReport>],
    today: &[forecast_plugins::segmentation::StateAt],
) -> Option<Vec<u32>> {
    queries
        .iter()
        .zip(evidence)
        .zip(today)
        .filter(|((q, _), _)| q.metric == Metric::Return)
        .map(|((_, e), st)| {
            e.as_ref()?
                .segments
                .iter()
                .find(|b| b.segment_idx == st.current.segment)
                .map(|b| b.episodes)
        })
        .collect()
}

/// An engine before WIT 1.7.0, or a history longer than the engine is
/// given: today's states from the last MAX_HISTORY_ROWS rows (as a live
/// verdict), the history (if the engine can and `track` asks) from the
/// first.
fn states_without_history(
    permit: &forecast_plugins::Permit,
    session: &mut forecast_plugins::SegmentationSession,
    scorer: &forecast_plugins::ScorerPlugin,
    (asset, series): (&Asset, &PriceSeries),
    queries: &[AnalysisQuery],
    params: &[forecast_plugins::segmentation::AnalysisParams],
    track: bool,
) -> Result<Walked, String> {
    let window = series
        .clone()
        .last_rows(forecast_domain::defaults::MAX_HISTORY_ROWS);
    let states = session
        .analyse_states(permit, &window, params)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|r| {
            r.map(|s| verdict::state_at(&s))
                .map_err(|e| format!("{e:?}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    if states.len() != params.len() {
        return Err(format!(
            "the engine answered {} states for {} parameter sets",
            states.len(),
            params.len()
        ));
    }
    let inputs: Vec<_> = states.iter().map(verdict::score_input).collect();
    let grades = scorer.score(permit, &inputs).map_err(|e| e.to_string())?;
    let track = match track && session.plugin().has_evidence() {
        true => track_points(permit, session, scorer, asset, series, queries, params)?,
        false => Vec::new(),
    };
    Ok(Walked {
        today: states,
        grades,
        track,
        forecasts: Vec::new(),
        evidence: None,
        carry: None,
        kept: false,
    })
}

/// The evidence of each of today's states' current bucket, in one call
/// (none from an engine without evidence).
fn today_evidence(
    permit: &forecast_plugins::Permit,
    session: &mut forecast_plugins::SegmentationSession,
    window: &PriceSeries,
    params: &[forecast_plugins::segmentation::AnalysisParams],
    today: &[forecast_plugins::segmentation::StateAt],
) -> Result<Vec<Option<EvidenceReport>>, String> {
    if !session.plugin().has_evidence() {
        return Ok(vec![None; today.len()]);
    }
    let requests: Vec<EvidenceRequest> = params
        .iter()
        .zip(today)
        .map(|(p, state)| EvidenceRequest {
            params: *p,
            segments: vec![state.current.segment],
        })
        .collect();
    let evidence: Vec<Option<EvidenceReport>> = session
        .analyse_evidence(permit, window, &requests)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|r| r.map(Some).map_err(|e| format!("evidence: {e:?}")))
        .collect::<Result<_, _>>()?;
    if evidence.len() != today.len() {
        return Err(format!(
            "the engine answered {} evidence reports for {} parameter sets",
            evidence.len(),
            today.len()
        ));
    }
    Ok(evidence)
}

/// Where the scorer forecast a horizon, every metric's grade at that
/// horizon is the forecast's: `all` holds one grade per (query, end), the
/// queries' lists one after another, each `ends` long; the forecasts
/// cover `kept` earlier month-ends first.
fn forecast_grades(
    queries: &[AnalysisQuery],
    forecasts: &forecast_services::forecast::ByHorizon,
    all: &mut [forecast_plugins::scorer::Grade],
    ends: usize,
    kept: usize,
) {
    for (q, grades) in queries.iter().zip(all.chunks_mut(ends)) {
        if let Some((_, _, graded)) = forecasts.iter().find(|f| f.0 == q.return_period) {
            for (g, f) in grades.iter_mut().zip(&graded[kept..]) {
                g.letter = f.letter.clone();
                g.score = f.score;
            }
        }
    }
}

/// The grade history of one asset for every graded (period, metric) over
/// the first `MAX_HISTORY_ROWS` rows (where it equals the verdict's window),
/// as the per-asset track record computes it: for a history longer than
/// the engine is given today.
fn track_points(
    permit: &forecast_plugins::Permit,
    session: &mut forecast_plugins::SegmentationSession,
    scorer: &forecast_plugins::ScorerPlugin,
    asset: &Asset,
    full: &PriceSeries,
    queries: &[AnalysisQuery],
    params: &[forecast_plugins::segmentation::AnalysisParams],
) -> Result<Vec<TrackPoints>, String> {
    let graded = full
        .clone()
        .first_rows(forecast_domain::defaults::MAX_HISTORY_ROWS);
    let ends = forecast_services::track_record::month_ends(&graded);
    if ends.is_empty() {
        return Ok(Vec::new());
    }
    let states = session
        .states_at(permit, &graded, params, &ends)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|r| r.map_err(|e| format!("states: {e:?}")))
        .collect::<Result<Vec<_>, String>>()?;
    if states.len() != params.len() || states.iter().any(|s| s.len() != ends.len()) {
        return Err(format!(
            "{} state lists for {} sets of {} month-ends",
            states.len(),
            params.len(),
            ends.len()
        ));
    }
    let inputs: Vec<_> = states.iter().flatten().map(verdict::score_input).collect();
    let grades = scorer.score(permit, &inputs).map_err(|e| e.to_string())?;
    if grades.len() != inputs.len() {
        return Err(format!(
            "{} grades for {} states",
            grades.len(),
            inputs.len()
        ));
    }
    Ok(queries
        .iter()
        .zip(&states)
        .zip(grades.chunks(ends.len()))
        .map(|((q, states), grades)| TrackPoints {
            asset_id: asset.id,
            return_period: q.return_period,
            metric: q.metric,
            body: forecast_services::track_record::encode(&forecast_services::track_record::rows(
                full,
                &ends,
                states,
                grades,
                q.return_period,
            )),
            stored: None,
        })
        .collect())
}

/// How [`run`] works.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Concurrent workers in this process.
    pub workers: usize,
    /// A task claimed and not reported within this is claimed again.
    pub lease: Duration,
    /// What the run does with each asset's month-end history.
    pub histories: Histories,
}

/// What a grading run does with each asset's month-end history (the
/// grade history of `/api/track-record/{ticker}` and the forecasts'
/// calibration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Histories {
    /// Kept from the served run of the same engine and scorer where the
    /// earlier prices did not change, computed where new (decision 0084).
    #[default]
    Keep,
    /// Rebuilt from every asset's prices (`forecast grade --rebuild`).
    Rebuild,
    /// Not computed: today's states, grades and evidence only, no history
    /// and no forecast, so no forecast informs the grades
    /// (`forecast grade --without-histories`, for measurement only: the
    /// cost the daily grade is measured against in docs/BENCHMARKS.md).
    Without,
}

/// What every worker of a run shares.
struct Shared {
    db: Arc<dyn Database>,
    plugins: Arc<Plugins>,
    scorer: Arc<forecast_plugins::ScorerPlugin>,
    run: GradingRun,
    /// The served run whose histories may be kept.
    previous: Option<String>,
    catalog: std::collections::HashMap<i64, Asset>,
    pooled: PooledTable,
    lease: i64,
    done: AtomicUsize,
    failed: AtomicUsize,
    kept: AtomicUsize,
    started: Instant,
    histories: Histories,
    progress: Arc<dyn Fn(Progress) + Send + Sync>,
    /// Claims' leases and the run's day.
    clock: SharedClock,
}

/// One batch's outcome.
#[derive(Default)]
struct Batch {
    rows: Vec<GradeRow>,
    track: Vec<TrackPoints>,
    carries: Vec<GradeCarry>,
    ok: Vec<i64>,
    bad: Vec<i64>,
    kept: usize,
}

/// One claimed task: the asset id, the asset and its prices (when still
/// there), and what its previous grade left.
type Item = (i64, Option<Asset>, Option<PriceSeries>, Option<Previous>);

/// Grades a batch of claimed tasks on `session`.
fn grade_batch(
    permit: &forecast_plugins::Permit,
    session: &mut forecast_plugins::SegmentationSession,
    shared: &Shared,
    items: Vec<Item>,
) -> Batch {
    let mut out = Batch::default();
    for (id, asset, series, previous) in items {
        match (asset, series) {
            (Some(asset), Some(series)) if series.len() >= MIN_ROWS => {
                let graded =
                    grade_asset(permit, session, shared, &asset, &series, previous.as_ref());
                match graded {
                    Ok(g) => {
                        out.rows.extend(g.rows);
                        out.track.extend(g.track);
                        out.carries.extend(g.carry);
                        out.kept += usize::from(g.kept);
                        out.ok.push(id);
                    }
                    Err(e) => {
                        tracing::warn!(ticker = %asset.ticker, error = %e, "grading failed");
                        out.bad.push(id);
                    }
                }
            }
            // Deleted, deactivated or shortened since the run started.
            _ => out.bad.push(id),
        }
    }
    out
}

/// One worker: claims batches until none is left (or the run's versions
/// stop being the active ones), grades them off the runtime, records them.
async fn work(shared: Arc<Shared>, worker: String) -> Result<(), Error> {
    let engine = shared.plugins.segmentation();
    let mut session = Some(engine.session());
    let run_id = shared.run.id.clone();
    loop {
        if !runs_active_versions(&shared.plugins, &shared.run.engine, &shared.run.scorer) {
            return Ok(());
        }
        let db = &shared.db;
        let now = shared.clock.timestamp();
        let ids = db
            .claim_grading_tasks(&run_id, &worker, BATCH, now, shared.lease)
            .await?;
        if ids.is_empty() {
            return Ok(());
        }
        // One span per batch: its loads, guest calls and write.
        let span = tracing::info_span!("grading_batch", run_id = %run_id, worker = %worker, assets = ids.len());
        // The previous run's histories of the whole batch in one read.
        let previous: Vec<Option<Previous>> = match &shared.previous {
            Some(prev) => db
                .asset_histories(prev, &ids)
                .instrument(span.clone())
                .await?
                .into_iter()
                .map(|h| {
                    Some(Previous {
                        carry: h.carry,
                        bodies: h.points,
                    })
                })
                .collect(),
            None => vec![None; ids.len()],
        };
        let mut items = Vec::with_capacity(ids.len());
        for (id, previous) in ids.iter().zip(previous) {
            let asset = shared.catalog.get(id).cloned();
            let series = db.load_series(*id).instrument(span.clone()).await?;
            items.push((*id, asset, series, previous));
        }
        let mut s = session.take().expect("session returned after each batch");
        // One permit per worker, for its batch's calls only (not while it
        // waits on the store): a worker never holds one while waiting for
        // another, so grading cannot deadlock with itself or with a
        // backtest's `acquire_many`.
        let permit = shared.plugins.runtime().acquire().await;
        let (in_batch, on) = (span.clone(), shared.clone());
        let (s, batch) = tokio::task::spawn_blocking(move || {
            let _in = in_batch.enter();
            let batch = grade_batch(&permit, &mut s, &on, items);
            (s, batch)
        })
        .await
        .map_err(|e| Error::Internal(format!("grading worker failed: {e}")))?;
        session = Some(s);
        // Before the grades: a task closes only with its history stored
        // (a worker that dies between grades the asset again).
        db.record_track_points(&run_id, &batch.track, &batch.carries)
            .instrument(span.clone())
            .await?;
        db.record_grades(&run_id, &worker, &batch.rows, &batch.ok, &batch.bad)
            .instrument(span)
            .await?;
        let finished = batch.ok.len() + batch.bad.len();
        shared.kept.fetch_add(batch.kept, Ordering::Relaxed);
        shared.failed.fetch_add(batch.bad.len(), Ordering::Relaxed);
        let p = Progress {
            done: shared.done.fetch_add(finished, Ordering::Relaxed) + finished,
            total: shared.run.total as usize,
            elapsed: shared.started.elapsed().as_secs_f64(),
        };
        metrics::gauge!("forecast_grading_assets_done").set(p.done as f64);
        (shared.progress)(p);
    }
}

/// Starts (or joins) today's run for the active plugins and works on it
/// until no task is left, reporting progress after every batch. A task
/// this run's workers claim and do not report within `options.lease` is
/// claimed again by another worker. The day and the leases are `clock`'s.
#[tracing::instrument(name = "grading_run", skip_all, fields(run_id = tracing::field::Empty))]
pub async fn run(
    db: Arc<dyn Database>,
    plugins: Arc<Plugins>,
    options: Options,
    progress: Arc<dyn Fn(Progress) + Send + Sync>,
    clock: SharedClock,
) -> Result<Summary, Error> {
    let started = Instant::now();
    let engine = plugins.segmentation();
    let scorer = plugins.scorer();
    let day = clock.today().to_string();
    let assets = db.gradable_assets(MIN_ROWS as i64).await?;
    let (engine_label, scorer_label) = (engine.info().label(), scorer.info().label());
    let now = clock.timestamp();
    let run = db
        .start_or_join_run(&day, &engine_label, &scorer_label, &assets, now)
        .await?;
    tracing::Span::current().record("run_id", tracing::field::display(&run.id));
    tracing::info!(run = %run.id, day = %run.day, total = run.total, status = %run.status, "grading run");
    // The served run's month-end histories are kept where they still hold
    // (decision 0084): only one of the same engine and scorer.
    let previous = match options.histories {
        Histories::Rebuild | Histories::Without => None,
        Histories::Keep => db
            .active_grading_run()
            .await?
            .filter(|r| r.id != run.id && r.engine == engine_label && r.scorer == scorer_label),
    };
    // The catalog once per run; a row graded from data that changed since
    // carries the old data version and is never served as the new one's.
    let catalog = db
        .list_active_assets(None)
        .await?
        .into_iter()
        .map(|a| (a.id, a))
        .collect();
    // The pooled history the scorer calibrates on, from every asset's
    // prices (decision 0079); not needed by a scorer without forecasts.
    // (Nor by a run without histories, which computes no forecast.)
    let pooled = match scorer.has_forecasting() && options.histories != Histories::Without {
        true => forecast_services::forecast::build_table(db.as_ref()).await?,
        false => PooledTable::default(),
    };
    metrics::gauge!("forecast_grading_assets_total").set(run.total as f64);
    metrics::gauge!("forecast_grading_assets_done").set(0.0);
    let shared = Arc::new(Shared {
        db: db.clone(),
        plugins: plugins.clone(),
        scorer,
        run: run.clone(),
        previous: previous.map(|r| r.id),
        catalog,
        pooled,
        lease: options.lease.as_secs().clamp(1, i64::MAX as u64) as i64,
        done: AtomicUsize::new(0),
        failed: AtomicUsize::new(0),
        kept: AtomicUsize::new(0),
        started,
        histories: options.histories,
        progress,
        clock,
    });
    let prefix = worker_prefix();
    let handles: Vec<_> = (0..options.workers.max(1))
        .map(|w| {
            let work = work(shared.clone(), format!("{prefix}-{w}"));
            // The workers' batches are spans of the run's.
            tokio::spawn(work.instrument(tracing::Span::current()))
        })
        .collect();
    for h in handles {
        h.await
            .map_err(|e| Error::Internal(format!("grading worker failed: {e}")))??;
    }
    finish(db, &plugins, run, &shared).await
}

/// Activates the run when it is complete, failed little and still runs
/// the active versions; the summary of this process's part.
async fn finish(
    db: Arc<dyn Database>,
    plugins: &Plugins,
    run: GradingRun,
    shared: &Shared,
) -> Result<Summary, Error> {
    let started = shared.started;
    let current = db
        .latest_grading_run()
        .await?
        .filter(|r| r.id == run.id)
        .unwrap_or(run);
    let too_many_failures = current.failures as f64 > current.total as f64 * MAX_FAILED_SHARE;
    // A run is never activated for versions that are no longer active: a
    // rollback (or another activation) while it ran abandons it.
    let abandoned = !runs_active_versions(plugins, &current.engine, &current.scorer);
    let activated = if abandoned {
        tracing::warn!(
            run = %current.id,
            engine = %current.engine,
            scorer = %current.scorer,
            "grading run abandoned: its versions are no longer active"
        );
        false
    } else if too_many_failures {
        tracing::error!(
            run = %current.id,
            failures = current.failures,
            total = current.total,
            "too many assets failed: the run is not activated; the previous snapshot stays served"
        );
        false
    } else {
        db.finish_run_if_complete(&current.id, shared.clock.timestamp())
            .await?
    };
    let run = db
        .latest_grading_run()
        .await?
        .filter(|r| r.id == current.id)
        .unwrap_or(current);
    let failed_here = shared.failed.load(Ordering::Relaxed);
    let data_sources = DataSources::count(
        db.ranking_rows(&run.id, CACHED_RETURN_PERIODS[0], METRICS[0])
            .await?
            .iter()
            .map(|r| r.data_source),
    );
    metrics::histogram!("forecast_grading_run_duration_seconds")
        .record(started.elapsed().as_secs_f64());
    Ok(Summary {
        graded_here: shared.done.load(Ordering::Relaxed) - failed_here,
        failed_here,
        kept_here: shared.kept.load(Ordering::Relaxed),
        activated,
        abandoned,
        elapsed: started.elapsed(),
        data_sources,
        run,
    })
}

/// Whether `engine` and `scorer` (labels) are the active versions.
fn runs_active_versions(plugins: &Plugins, engine: &str, scorer: &str) -> bool {
    plugins.segmentation().info().label() == engine && plugins.scorer().info().label() == scorer
}

/// Makes today's completed run by the active versions the served one again
/// when there is one (after a rollback to versions that already graded
/// today, by `clock`); whether it did.
pub async fn reactivate_today(
    db: &dyn GradingStore,
    plugins: &Plugins,
    clock: &dyn Clock,
) -> Result<bool, StoreError> {
    let today = clock.today().to_string();
    let run = db
        .reactivate_run(
            &today,
            &plugins.segmentation().info().label(),
            &plugins.scorer().info().label(),
        )
        .await?;
    if let Some(run) = &run {
        tracing::info!(run = %run.id, engine = %run.engine, scorer = %run.scorer, "re-activated today's snapshot of the active versions");
    }
    Ok(run.is_some())
}

/// True when readers have no snapshot of today (by `clock`) by the active
/// plugins.
pub async fn is_stale(
    db: &dyn GradingStore,
    plugins: &Plugins,
    clock: &dyn Clock,
) -> Result<bool, StoreError> {
    let today = clock.today().to_string();
    Ok(match db.active_grading_run().await? {
        None => true,
        Some(run) => {
            run.day != today
                || run.engine != plugins.segmentation().info().label()
                || run.scorer != plugins.scorer().info().label()
        }
    })
}

/// Whether a run must grade now: false when the snapshot is current, or
/// when today's snapshot of the active versions could be re-activated.
async fn first_run_needed(db: &dyn Database, plugins: &Plugins, clock: &dyn Clock) -> bool {
    match is_stale(db, plugins, clock).await {
        Ok(false) => false,
        Ok(true) => match reactivate_today(db, plugins, clock).await {
            Ok(reactivated) => !reactivated,
            Err(e) => {
                tracing::error!(error = %e, "grading: cannot re-activate today's snapshot");
                true
            }
        },
        Err(e) => {
            tracing::error!(error = %e, "grading: cannot read the snapshot");
            true
        }
    }
}

/// The longest the daily grade waits for a running price refresh.
const REFRESH_WAIT: Duration = Duration::from_secs(3_600);

/// Waits (up to `limit`) while today's refresh of `kind` is running on any
/// replica (today by `clock`); returns at once when there is none.
async fn wait_for_refresh(db: &dyn Database, kind: &str, limit: Duration, clock: &dyn Clock) {
    let started = Instant::now();
    let day = clock.today().to_string();
    loop {
        match db.job_by_key(kind, &day).await {
            Ok(Some(run)) if run.finished_at.is_none() => {}
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(error = %e, "grading: cannot read today's refresh; grading now");
                return;
            }
        }
        if started.elapsed() >= limit {
            tracing::warn!(
                kind,
                "grading: today's refresh is still running; grading now"
            );
            return;
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}

/// The server's scheduler: grades at start when the snapshot is missing or
/// stale, then every day at `at` UTC. Errors are logged; the previous
/// snapshot stays served.
///
/// With a scheduled price refresh (`refresh`: its job kind), the daily run
/// first waits for today's refresh if one is running on any replica. The
/// days and the time of day are `clock`'s.
pub async fn schedule(
    db: Arc<dyn Database>,
    plugins: Arc<Plugins>,
    at: NaiveTime,
    lease: Duration,
    refresh: Option<String>,
    clock: SharedClock,
) {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let log_progress: Arc<dyn Fn(Progress) + Send + Sync> = {
        let last = std::sync::Mutex::new(Instant::now());
        Arc::new(move |p: Progress| {
            let mut last = last.lock().expect("progress lock");
            if last.elapsed() >= Duration::from_secs(5) || p.done == p.total {
                *last = Instant::now();
                tracing::info!(
                    done = p.done,
                    total = p.total,
                    rate = format!("{:.1}/s", p.rate()),
                    "grading"
                );
            }
        })
    };
    let mut first = true;
    loop {
        let due = if first {
            first = false;
            match is_stale(db.as_ref(), &plugins, clock.as_ref()).await {
                Ok(stale) => stale,
                Err(e) => {
                    tracing::error!(error = %e, "grading: cannot read the snapshot");
                    false
                }
            }
        } else {
            true
        };
        // After a rollback, the restored versions' snapshot of today is
        // served again at once instead of being graded again.
        if due && first_run_needed(db.as_ref(), &plugins, clock.as_ref()).await {
            if let Some(kind) = &refresh {
                wait_for_refresh(db.as_ref(), kind, REFRESH_WAIT, clock.as_ref()).await;
            }
            let options = Options {
                workers,
                lease,
                histories: Histories::Keep,
            };
            let ran = run(
                db.clone(),
                plugins.clone(),
                options,
                log_progress.clone(),
                clock.clone(),
            );
            match ran.await {
                Ok(s) if s.abandoned => {
                    // The versions changed under the run: decide again now.
                    first = true;
                    continue;
                }
                Ok(s) => tracing::info!(
                    run = %s.run.id,
                    graded = s.graded_here,
                    kept = s.kept_here,
                    failures = s.failed_here,
                    activated = s.activated,
                    seconds = s.elapsed.as_secs_f64(),
                    real = s.data_sources.real,
                    ingested = s.data_sources.ingested,
                    synthetic = s.data_sources.synthetic,
                    "grading finished"
                ),
                Err(e) => {
                    tracing::error!(error = %e, "grading failed; the previous snapshot stays served")
                }
            }
        }
        // Sleep until the daily time, or until the engine or the scorer is
        // swapped: then re-grade at once when the snapshot is stale.
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(seconds_until(clock.now(), at))) => {}
            _ = plugins.changed.notified() => {
                first = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_daily_run_is_within_a_day() {
        let clock = forecast_domain::ManualClock::at(
            chrono::DateTime::parse_from_rfc3339("2026-05-04T01:30:00Z")
                .unwrap()
                .to_utc(),
        );
        for (h, m, want) in [
            (0, 0, 81_000),
            (2, 0, 1_800),
            (23, 59, 80_940),
            (1, 30, 86_400),
        ] {
            let secs = seconds_until(clock.now(), NaiveTime::from_hms_opt(h, m, 0).unwrap());
            assert_eq!(secs, want, "{h}:{m}");
        }
        // Ten minutes before midnight, a run due ten minutes after it.
        clock.advance_secs(22 * 3_600 + 20 * 60);
        let secs = seconds_until(clock.now(), NaiveTime::from_hms_opt(0, 0, 0).unwrap());
        assert_eq!(secs, 600);
    }

    async fn store(dir: &std::path::Path) -> Arc<dyn Database> {
        let url = format!("sqlite://{}", dir.join("refresh.db").display());
        forecast_store::connect(&url).await.unwrap()
    }

    /// The daily grade waits for today's refresh while it runs on any
    /// replica, goes ahead as soon as it is done, and never waits longer
    /// than its limit.
    #[tokio::test]
    async fn grading_waits_for_a_running_refresh_and_no_longer() {
        let dir = tempfile::tempdir().unwrap();
        let db = store(dir.path()).await;
        let clock = forecast_domain::SystemClock;
        let (kind, day) = ("refresh:test", clock.today().to_string());
        let now = clock.timestamp();

        // No refresh today: no wait at all (well inside one poll).
        let t = Instant::now();
        wait_for_refresh(db.as_ref(), kind, Duration::from_secs(60), &clock).await;
        assert!(t.elapsed() < Duration::from_secs(5));

        // A refresh with an item another replica still holds.
        let run = db
            .start_or_join_job(kind, &day, &[1, 2], now)
            .await
            .unwrap();
        let claimed = db
            .claim_job_items(&run.id, "other", 10, now, 600)
            .await
            .unwrap();
        assert_eq!(claimed.len(), 2);
        let waiter = tokio::spawn({
            let db = db.clone();
            async move {
                wait_for_refresh(
                    db.as_ref(),
                    kind,
                    Duration::from_secs(120),
                    &forecast_domain::SystemClock,
                )
                .await
            }
        });
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(
            !waiter.is_finished(),
            "grading went ahead of a running refresh"
        );

        // The refresh ends (one asset failed: it still ends): grading goes on.
        let closed = db
            .close_job_items(&run.id, "other", &[1], &[2], now)
            .await
            .unwrap();
        assert!(closed.finished_at.is_some());
        tokio::time::timeout(Duration::from_secs(30), waiter)
            .await
            .expect("grading went on once the refresh had finished")
            .unwrap();

        // A refresh that never ends holds grading for the limit only.
        let stuck = "refresh:stuck";
        let run = db.start_or_join_job(stuck, &day, &[1], now).await.unwrap();
        assert!(run.finished_at.is_none());
        tokio::time::timeout(
            Duration::from_secs(30),
            wait_for_refresh(db.as_ref(), stuck, Duration::ZERO, &clock),
        )
        .await
        .expect("the limit bounds the wait");
    }
}
