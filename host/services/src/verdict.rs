//! Verdicts (the spec's verdict-only projection, DESIGN §4/§5): built from
//! the engine's state summary and the scorer's grade, served from the daily
//! grading snapshot for default parameters and computed live otherwise.

use chrono::Utc;
use forecast_api::models::ModelsResponse;

use crate::analysis::{AnalysisQuery, Error, MIN_ROWS};
pub use forecast_api::analysis::{GradeBody, VerdictMetadata, VerdictResponse};
use forecast_api::track_record::{
    TrackRecordResponse, UniverseTrackRecordQuery, UniverseTrackRecordResponse,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::active::Plugins;
use crate::budget::{analysis_bytes, Work, WorkBudget};
use crate::freshness::Freshness;
use crate::served::Served;
use forecast_domain::{Asset, Metric, SharedClock};
use forecast_plugins::scorer::{Grade, GradedForecast, ScoreInput};
use forecast_plugins::segmentation::{EngineError, EvidenceReport, StateAt, StateSummary};
use forecast_store::{AssetStore, Generations, GradeRow, GradingRun, GradingStore};

/// The parts of a whole state a verdict and the scorer read: the current
/// state, its segment and the typical drawdown (what `evidence.states-at`
/// answers for a month-end).
pub fn state_at(s: &StateSummary) -> StateAt {
    StateAt {
        periods_per_year: s.periods_per_year,
        current: s.current,
        active_segment: s.segments[s.current.segment as usize],
        typical_max_drawdown: s.typical_max_drawdown,
    }
}

/// What the scorer sees of a state.
pub fn score_input(s: &StateAt) -> ScoreInput {
    let c = &s.current;
    ScoreInput {
        median_return: c.median_return,
        expected_return: c.expected_return,
        best_error: c.best_error,
        win_rate: s.active_segment.win_rate,
        insufficient_data: c.insufficient_data,
        drawdown: c.drawdown,
    }
}

/// Everything a verdict is built from.
pub struct VerdictParts<'a> {
    /// The asset.
    pub asset: &'a Asset,
    /// Its parameters.
    pub query: &'a AnalysisQuery,
    /// Rows analysed.
    pub rows: usize,
    /// The date of the asset's last stored price.
    pub last_price_date: chrono::NaiveDate,
    /// The engine's state (as much of it as a verdict shows).
    pub state: &'a StateAt,
    /// The scorer's grade.
    pub grade: &'a Grade,
    /// The engine's evidence of the current bucket (`None` from an engine
    /// without the `evidence` interface).
    pub evidence: Option<&'a EvidenceReport>,
    /// The scorer's calibrated forecast the grade comes from, if any.
    pub forecast: Option<forecast_api::analysis::ForecastBody>,
    /// Engine version.
    pub engine_version: &'a str,
    /// Scorer version.
    pub scorer_version: &'a str,
    /// When it was computed (the service's clock).
    pub calculated_at: chrono::DateTime<Utc>,
}

/// Shapes a verdict.
pub fn build(p: VerdictParts<'_>) -> VerdictResponse {
    let c = &p.state.current;
    let mut current_state = crate::analysis::current_state_body(c);
    let mut active_segment = crate::analysis::segment_body(&p.state.active_segment);
    if let Some(report) = p.evidence {
        if let Some(e) = report.segments.iter().find(|e| e.segment_idx == c.segment) {
            crate::evidence::fill_segment(&mut active_segment, e);
        }
        crate::evidence::fill_state(
            &mut current_state,
            report,
            active_segment.static_median_return,
        );
    }
    VerdictResponse {
        ticker: p.asset.ticker.clone(),
        signals: crate::analysis::signals_body(c),
        current_state,
        active_segment,
        grade: GradeBody {
            letter: p.grade.letter.clone(),
            score: p.grade.score,
        },
        forecast: p.forecast,
        typical_max_drawdown: p.state.typical_max_drawdown,
        metadata: VerdictMetadata {
            return_period: p.query.return_period,
            num_segments: p.query.num_segments,
            decay_factor: p.query.decay_factor,
            metric: p.query.metric,
            calculated_at: p.calculated_at,
            from_cache: false,
            data_points: p.rows as u32,
            asset_id: p.asset.id,
            engine_version: p.engine_version.to_string(),
            scorer_version: p.scorer_version.to_string(),
            data_source: p.asset.data_source,
            periods_per_year: p.state.periods_per_year,
            last_price_date: p.last_price_date,
            currency: p.asset.currency.clone(),
        },
    }
}

/// The stored form of a verdict with the ranking's columns.
pub fn grade_row(v: &VerdictResponse, data_version: i64) -> GradeRow {
    GradeRow {
        asset_id: v.metadata.asset_id,
        return_period: v.metadata.return_period,
        metric: v.metadata.metric,
        data_version,
        letter: v.grade.letter.clone(),
        score: v.grade.score,
        expected_return: v.current_state.expected_return,
        prediction_error: v.current_state.prediction_error,
        median_return: v.current_state.median_return,
        median_error: v.current_state.median_error,
        current_drawdown: v.current_state.drawdown,
        current_price: v.current_state.price,
        win_rate: v.active_segment.win_rate.unwrap_or(0.0),
        body: serde_json::to_string(v).expect("verdict serialises"),
    }
}

/// A verdict as the HTTP layer sends it.
pub enum VerdictBody {
    /// From the grading snapshot: the JSON body, ready to send (what
    /// `serde_json::to_vec` makes of the [`VerdictResponse`]).
    Cached(Bytes),
    /// Computed for this request.
    Live(Box<VerdictResponse>),
}

/// What the verdict service keeps in memory, each part valid while the
/// store's generation counter of its kind has not moved
/// ([`crate::freshness`]).
#[derive(Default)]
struct Memory {
    /// The active grading run, read under this `grading` generation.
    run: Option<(i64, Option<Arc<GradingRun>>)>,
    /// Assets by ticker (`None`: no such asset), under `assets` generations.
    assets: HashMap<String, (i64, Option<Arc<Asset>>)>,
    /// Served snapshot verdicts by (asset, return period, metric).
    bodies: HashMap<(i64, u32, Metric), CachedBody>,
}

/// A snapshot verdict serialised once, with what it was read under.
struct CachedBody {
    generations: Generations,
    run_id: String,
    bytes: Bytes,
}

/// Entries of each map of [`Memory`] at most; past it, the map starts over.
const MEMORY_ENTRIES: usize = 16_384;

/// The verdict service: the grading snapshot and series in the store, the
/// active engine and scorer.
#[derive(Clone)]
pub struct VerdictService {
    /// What "now" is for a live verdict's `calculated_at`.
    clock: SharedClock,
    assets: Arc<dyn AssetStore>,
    grading: Arc<dyn GradingStore>,
    plugins: Arc<Plugins>,
    freshness: Freshness,
    memory: Arc<Mutex<Memory>>,
    /// The server's budget for heavy work: every live verdict takes a
    /// ticket first.
    budget: WorkBudget,
    /// Grade histories by (asset, data version, engine, scorer, period,
    /// metric): a new price, engine or scorer is a new key.
    records: moka::sync::Cache<RecordKey, Arc<Served<TrackRecordResponse>>>,
    /// Universe track records by (grading run, query).
    universe: moka::sync::Cache<
        (String, UniverseTrackRecordQuery),
        Arc<Served<UniverseTrackRecordResponse>>,
    >,
    /// The pooled history the scorer calibrates on (decision 0079).
    pooled: Arc<crate::forecast::PooledCache>,
    /// Model cards by grading run.
    models: moka::sync::Cache<String, Arc<ModelsResponse>>,
    /// What live verdicts' windows say whatever the segmentation.
    facts: crate::forecast::FactsCache,
    /// One computation of a missing track record at a time per key.
    record_gates: Arc<crate::gate::Gates<RecordKey>>,
    universe_gates: Arc<crate::gate::Gates<(String, UniverseTrackRecordQuery)>>,
}

type RecordKey = (i64, i64, String, String, u32, Metric);

/// Grade histories kept in memory at most.
const RECORD_ENTRIES: u64 = 512;

impl VerdictService {
    /// A service over the assets and series of `assets` and the grading
    /// snapshot of `grading`, answering with the active plugins of `plugins`;
    /// its copies in memory are checked with `freshness`; live verdicts run
    /// within `budget`.
    pub fn new(
        assets: Arc<dyn AssetStore>,
        grading: Arc<dyn GradingStore>,
        plugins: Arc<Plugins>,
        freshness: Freshness,
        budget: WorkBudget,
        clock: SharedClock,
    ) -> Self {
        VerdictService {
            clock,
            assets,
            grading,
            plugins,
            freshness,
            memory: Arc::new(Mutex::new(Memory::default())),
            budget,
            records: moka::sync::Cache::new(RECORD_ENTRIES),
            universe: moka::sync::Cache::new(RECORD_ENTRIES),
            pooled: Arc::new(crate::forecast::PooledCache::default()),
            models: moka::sync::Cache::new(8),
            facts: crate::forecast::FactsCache::default(),
            record_gates: Arc::default(),
            universe_gates: Arc::default(),
        }
    }

    /// How the active grading run's grades did across the universe
    /// (`GET /api/track-record`): aggregated from the grade histories the
    /// run stored, once per run and query, then served from memory.
    #[tracing::instrument(name = "universe_track_record", skip_all)]
    pub async fn universe_track_record(
        &self,
        q: &UniverseTrackRecordQuery,
        generations: Option<Generations>,
        client: &str,
    ) -> Result<Arc<Served<UniverseTrackRecordResponse>>, Error> {
        let run = match generations {
            Some(g) => self.active_run(g.grading).await?,
            None => self.grading.active_grading_run().await?.map(Arc::new),
        };
        let Some(run) = run else {
            return Err(Error::Unavailable(
                "no grading run has completed yet: the track record is computed by the daily grading run".into(),
            ));
        };
        let key = (run.id.clone(), *q);
        if let Some(hit) = self.universe.get(&key) {
            crate::cache_lookup("track_record", true);
            return Ok(hit);
        }
        // One request computes it; the others wait here and find it kept.
        let _gate = self.universe_gates.enter(&key).await;
        if let Some(hit) = self.universe.get(&key) {
            crate::cache_lookup("track_record", true);
            return Ok(hit);
        }
        crate::cache_lookup("track_record", false);
        // Reading and aggregating every asset's history is heavy work: it
        // waits its turn, or is refused before anything is read.
        let ticket = self
            .budget
            .admit(
                client,
                Work::TrackRecord,
                crate::budget::track_record_bytes(usize::try_from(run.total).unwrap_or(0)),
            )
            .await?;
        let assets = self
            .grading
            .track_points(&run.id, q.return_period, q.metric)
            .await?;
        if assets.is_empty() {
            return Err(Error::Unavailable(format!(
                "the active grading run ({}, {}) stored no grade histories; the next run will",
                run.day, run.engine
            )));
        }
        let query = *q;
        let version = |label: &str| label.rsplit('@').next().unwrap_or(label).to_string();
        let (engine, scorer) = (version(&run.engine), version(&run.scorer));
        let response = tokio::task::spawn_blocking(move || {
            let _ticket = ticket;
            crate::track_record::aggregate(&run, &engine, &scorer, &query, &assets)
        })
        .await
        .map_err(|e| Error::Internal(format!("track record worker failed: {e}")))?
        .map_err(|e| Error::Internal(format!("stored track record unreadable: {e}")))?;
        let response = Arc::new(Served::new(response));
        self.universe.insert(key, response.clone());
        Ok(response)
    }

    /// The active model's cards (`GET /api/models`): per graded horizon,
    /// the forecast evaluation of the universe track record of real prices
    /// (metric return), from memory once computed for the run.
    pub async fn models(&self, client: &str) -> Result<Arc<ModelsResponse>, Error> {
        let Some(run) = self.grading.active_grading_run().await? else {
            return Err(Error::Unavailable(
                "no grading run has completed yet: model cards come from the daily grading run"
                    .into(),
            ));
        };
        if let Some(hit) = self.models.get(&run.id) {
            return Ok(hit);
        }
        let mut cards = Vec::new();
        for h in crate::forecast::HORIZONS {
            let q = UniverseTrackRecordQuery {
                return_period: h,
                metric: Metric::Return,
                category: None,
                source: forecast_api::track_record::SourceFilter::Real,
            };
            let r = self.universe_track_record(&q, None, client).await?;
            cards.push(forecast_api::models::ModelCard {
                model: run.scorer.clone(),
                return_period: h,
                source: "real".into(),
                first_date: r.first_date,
                last_date: r.last_date,
                evaluation: r.forecast_evaluation.clone(),
            });
        }
        let answer = Arc::new(ModelsResponse {
            engine: run.engine.clone(),
            scorer: run.scorer.clone(),
            run_id: Some(run.id.clone()),
            cards,
        });
        self.models.insert(run.id.clone(), answer.clone());
        Ok(answer)
    }

    /// The grade the active engine and scorer would have given `ticker` at
    /// each month-end of its history with `q`'s return period and metric,
    /// from the rows up to that date only, and the return realised after
    /// it (`GET /api/track-record/{ticker}`). Every row equals the verdict
    /// with `end_date` at its date: the same window rule (at most the last
    /// `MAX_HISTORY_ROWS` rows; only month-ends within the first that many
    /// are graded, where the two agree), the same parameters and
    /// annualisation, the same scorer. Runs within the heavy-work budget.
    #[tracing::instrument(name = "track_record", skip_all, fields(ticker = %ticker))]
    pub async fn track_record(
        &self,
        ticker: &str,
        q: &AnalysisQuery,
        generations: Option<Generations>,
        client: &str,
    ) -> Result<Arc<Served<TrackRecordResponse>>, Error> {
        let asset = match generations {
            Some(g) => self.asset(ticker, g.assets).await?,
            None => self.assets.asset_by_ticker(ticker).await?.map(Arc::new),
        };
        let asset = match asset {
            Some(a) if a.is_active => a,
            _ => return Err(unknown(ticker)),
        };
        let engine = self.plugins.segmentation();
        let scorer = self.plugins.scorer();
        if !engine.has_evidence() {
            return Err(Error::Unavailable(format!(
                "the active engine {} cannot compute past states (it was built before WIT 1.7.0)",
                engine.info().label()
            )));
        }
        let key: RecordKey = (
            asset.id,
            asset.data_version,
            engine.info().label(),
            scorer.info().label(),
            q.return_period,
            q.metric,
        );
        if let Some(hit) = self.records.get(&key) {
            crate::cache_lookup("track_record", true);
            return Ok(hit);
        }
        let _gate = self.record_gates.enter(&key).await;
        if let Some(hit) = self.records.get(&key) {
            crate::cache_lookup("track_record", true);
            return Ok(hit);
        }
        crate::cache_lookup("track_record", false);
        let prices = self.assets.load_series(asset.id).await?.unwrap_or_default();
        let periods = prices.periods_per_year();
        let graded = prices
            .clone()
            .first_rows(forecast_domain::defaults::MAX_HISTORY_ROWS);
        let ends = crate::track_record::month_ends(&graded);
        let pool = match scorer.has_forecasting() && !ends.is_empty() {
            true => Some((
                self.pooled.get(self.assets.clone(), None).await?,
                crate::forecast::Pool::of(asset.data_source),
            )),
            false => None,
        };
        let ticket = self
            .budget
            .admit(client, Work::TrackRecord, analysis_bytes(graded.len()))
            .await?;
        let permit = self.plugins.runtime().acquire().await;
        let query = *q;
        let span = tracing::Span::current();
        let response = crate::budget::spawn_heavy(move || {
            let _in = span.enter();
            let _ticket = ticket;
            record_of(RecordInputs {
                permit: &permit,
                engine: &engine,
                scorer: &scorer,
                asset: &asset,
                prices: &prices,
                graded: &graded,
                ends: &ends,
                query: &query,
                periods,
                pool,
            })
        })
        .await
        .map_err(|e| Error::Internal(format!("track record worker failed: {e}")))??;
        let response = Arc::new(Served::new(response));
        self.records.insert(key, response.clone());
        Ok(response)
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.memory.lock().expect("verdict memory poisoned")
    }

    /// A verdict (see [`VerdictService::verdict_body`]), as a value.
    pub async fn verdict(
        &self,
        ticker: &str,
        q: &AnalysisQuery,
        client: &str,
    ) -> Result<VerdictResponse, Error> {
        match self.verdict_body(ticker, q, None, client).await? {
            VerdictBody::Live(v) => Ok(*v),
            VerdictBody::Cached(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| Error::Internal(format!("cached verdict does not parse: {e}"))),
        }
    }

    /// A verdict: from the active grading snapshot when the parameters are the
    /// graded defaults and the snapshot still describes the asset's data and
    /// the active plugins; otherwise computed live.
    ///
    /// `generations` are the store's counters read after the request
    /// arrived (the Bearer guard's); without them they are read here. With
    /// counters, the asset, the active run and the served body come from
    /// memory while their counters have not moved; without (the store
    /// could not be read in time), everything is read from the store. A
    /// live verdict runs once `client`'s job has a ticket of the heavy-work
    /// budget ([`Error::Busy`] otherwise, before any work).
    #[tracing::instrument(name = "verdict", skip_all, fields(ticker = %ticker))]
    pub async fn verdict_body(
        &self,
        ticker: &str,
        q: &AnalysisQuery,
        generations: Option<Generations>,
        client: &str,
    ) -> Result<VerdictBody, Error> {
        let generations = match generations {
            Some(g) => Some(g),
            None => self.freshness.current().await,
        };
        let asset = match generations {
            Some(g) => self.asset(ticker, g.assets).await?,
            None => self.assets.asset_by_ticker(ticker).await?.map(Arc::new),
        };
        let asset = match asset {
            Some(a) if a.is_active => a,
            _ => return Err(unknown(ticker)),
        };
        let engine = self.plugins.segmentation();
        let scorer = self.plugins.scorer();
        if q.is_cacheable() {
            let run = match generations {
                Some(g) => self.active_run(g.grading).await?,
                None => self.grading.active_grading_run().await?.map(Arc::new),
            };
            if let Some(run) = run {
                if run.engine == engine.info().label() && run.scorer == scorer.info().label() {
                    if let Some(bytes) = self.snapshot(&run, &asset, q, generations).await? {
                        crate::cache_lookup("verdict", true);
                        return Ok(VerdictBody::Cached(bytes));
                    }
                }
            }
            crate::cache_lookup("verdict", false);
        }
        let asset = (*asset).clone();
        let history = self.assets.load_series(asset.id).await?.unwrap_or_default();
        // At most the last MAX_HISTORY_ROWS rows reach the engine, so no
        // stored history is too long to analyse (issue 25).
        let window = history
            .window(q.start_date, q.end_date)
            .last_rows(forecast_domain::defaults::MAX_HISTORY_ROWS);
        if window.len() < MIN_ROWS {
            return Err(Error::InsufficientData(format!(
                "{} has {} price rows in the requested window; at least {MIN_ROWS} are needed",
                asset.ticker,
                window.len()
            )));
        }
        let query = *q;
        let periods = history.periods_per_year();
        let last_price_date = crate::analysis::last_price_date(&asset, &history);
        drop(history);
        let pool = match self.plugins.scorer().has_forecasting() {
            true => Some((
                self.pooled
                    .get(self.assets.clone(), generations.map(|g| g.assets))
                    .await?,
                crate::forecast::Pool::of(asset.data_source),
            )),
            false => None,
        };
        let ticket = self
            .budget
            .admit(client, Work::Verdict, analysis_bytes(window.len()))
            .await?;
        let permit = self.plugins.runtime().acquire().await;
        let facts = self.facts.clone();
        let now = self.clock.now();
        // The guest calls' spans nest under this one on the blocking thread.
        let span = tracing::Span::current();
        crate::budget::spawn_heavy(move || {
            let _in = span.enter();
            // Held until the work has stopped, even if the request is gone.
            let _ticket = ticket;
            live_verdict(LiveInputs {
                permit: &permit,
                engine: &engine,
                scorer: &scorer,
                asset: &asset,
                window: &window,
                query: &query,
                periods,
                last_price_date,
                pool,
                facts: &facts,
                now,
            })
        })
        .await
        .map_err(|e| Error::Internal(format!("verdict worker failed: {e}")))?
        .map(|v| VerdictBody::Live(Box::new(v)))
    }

    /// The asset `ticker` under `assets` generation `generation`.
    async fn asset(&self, ticker: &str, generation: i64) -> Result<Option<Arc<Asset>>, Error> {
        if let Some((g, a)) = self.memory().assets.get(ticker) {
            if *g == generation {
                return Ok(a.clone());
            }
        }
        let asset = self.assets.asset_by_ticker(ticker).await?.map(Arc::new);
        let mut memory = self.memory();
        if memory.assets.len() >= MEMORY_ENTRIES {
            memory.assets.clear();
        }
        memory
            .assets
            .insert(ticker.to_string(), (generation, asset.clone()));
        Ok(asset)
    }

    /// The active grading run under `grading` generation `generation`.
    async fn active_run(&self, generation: i64) -> Result<Option<Arc<GradingRun>>, Error> {
        if let Some((g, run)) = &self.memory().run {
            if *g == generation {
                return Ok(run.clone());
            }
        }
        let run = self.grading.active_grading_run().await?.map(Arc::new);
        self.memory().run = Some((generation, run.clone()));
        Ok(run)
    }

    /// The served body of `run`'s verdict of `asset` for `q`, when the run
    /// graded the asset's current data: from memory when read under the
    /// same counters, else from the store (and kept).
    async fn snapshot(
        &self,
        run: &GradingRun,
        asset: &Asset,
        q: &AnalysisQuery,
        generations: Option<Generations>,
    ) -> Result<Option<Bytes>, Error> {
        let key = (asset.id, q.return_period, q.metric);
        if let Some(g) = generations {
            if let Some(b) = self.memory().bodies.get(&key) {
                if b.generations == g && b.run_id == run.id {
                    return Ok(Some(b.bytes.clone()));
                }
            }
        }
        let Some(row) = self
            .grading
            .grade(&run.id, asset.id, q.return_period, q.metric)
            .await?
        else {
            return Ok(None);
        };
        if row.data_version != asset.data_version {
            return Ok(None);
        }
        let bytes = Bytes::from(served_body(
            &row.body,
            asset.last_price_date,
            &asset.currency,
        )?);
        if let Some(g) = generations {
            let mut memory = self.memory();
            if memory.bodies.len() >= MEMORY_ENTRIES {
                memory.bodies.clear();
            }
            memory.bodies.insert(
                key,
                CachedBody {
                    generations: g,
                    run_id: run.id.clone(),
                    bytes: bytes.clone(),
                },
            );
        }
        Ok(Some(bytes))
    }
}

/// What one asset's track record is computed from.
struct RecordInputs<'a> {
    permit: &'a forecast_plugins::Permit,
    engine: &'a Arc<forecast_plugins::SegmentationPlugin>,
    scorer: &'a Arc<forecast_plugins::ScorerPlugin>,
    asset: &'a Asset,
    /// The whole stored history (realised returns read it to its end).
    prices: &'a forecast_domain::series::PriceSeries,
    /// What the engine is given: at most its first MAX_HISTORY_ROWS rows.
    graded: &'a forecast_domain::series::PriceSeries,
    ends: &'a [u32],
    query: &'a AnalysisQuery,
    periods: u32,
    pool: Option<(Arc<crate::forecast::PooledTable>, crate::forecast::Pool)>,
}

/// One asset's track record: the state and grade at every month-end (one
/// walk and one scorer call, in one engine instance), the realised
/// returns, and the calibrated forecast each month-end showed.
fn record_of(x: RecordInputs<'_>) -> Result<TrackRecordResponse, Error> {
    let (query, ends) = (x.query, x.ends);
    let mut session = x.engine.session();
    let params = crate::analysis::engine_params(query, x.periods);
    let states = match ends.is_empty() {
        true => Vec::new(),
        false => crate::evidence::only_answer(
            session.states_at(x.permit, x.graded, &[params], ends)?,
            "states",
        )?,
    };
    let inputs: Vec<_> = states.iter().map(score_input).collect();
    let grades = match inputs.is_empty() {
        true => Vec::new(),
        false => x.scorer.score(x.permit, &inputs)?,
    };
    if states.len() != ends.len() || grades.len() != ends.len() {
        return Err(Error::Internal(format!(
            "{} month-ends, {} states, {} grades",
            ends.len(),
            states.len(),
            grades.len()
        )));
    }
    let mut history =
        crate::track_record::rows(x.prices, ends, &states, &grades, query.return_period);
    // The return metric's walk is the one just made when that is the
    // metric asked for.
    let walk = (query.metric == Metric::Return).then(|| states.clone());
    let walked = forecasts_at(
        x.permit,
        &mut session,
        x.scorer,
        x.graded,
        At::Rows(ends),
        query,
        x.periods,
        x.pool,
        walk,
    )?;
    if let Some(w) = walked {
        crate::track_record::with_forecasts(&mut history, &w.graded, &w.points);
    }
    Ok(TrackRecordResponse {
        ticker: x.asset.ticker.clone(),
        return_period: query.return_period,
        metric: query.metric,
        data_source: x.asset.data_source,
        engine_version: x.engine.info().version.clone(),
        scorer_version: x.scorer.info().version.clone(),
        by_grade: crate::track_record::by_grade(&history, &crate::track_record::LETTERS),
        history,
    })
}

/// What a live verdict is computed from.
struct LiveInputs<'a> {
    permit: &'a forecast_plugins::Permit,
    engine: &'a Arc<forecast_plugins::SegmentationPlugin>,
    scorer: &'a Arc<forecast_plugins::ScorerPlugin>,
    asset: &'a Asset,
    window: &'a forecast_domain::series::PriceSeries,
    query: &'a AnalysisQuery,
    periods: u32,
    last_price_date: chrono::NaiveDate,
    pool: Option<(Arc<crate::forecast::PooledTable>, crate::forecast::Pool)>,
    facts: &'a crate::forecast::FactsCache,
    now: chrono::DateTime<Utc>,
}

/// A verdict computed now: the state at the last row (from the forecast's
/// walk when the metric is `return`, else by `analyse-state`), its grade
/// (the forecast's when the scorer forecasts), the bucket's evidence.
fn live_verdict(x: LiveInputs<'_>) -> Result<VerdictResponse, Error> {
    let (query, periods) = (x.query, x.periods);
    // One instance of the engine answers every call of the verdict.
    let mut session = x.engine.session();
    let (forecast, last) = live_forecast(&x, &mut session)?;
    let params = crate::analysis::engine_params(query, periods);
    let summary = match last {
        Some(state) if query.metric == Metric::Return => state,
        _ => state_at(
            &session
                .analyse_state(x.permit, x.window, params)?
                .map_err(|e| match e {
                    EngineError::InsufficientData(rows) => Error::InsufficientData(format!(
                        "{} has {rows} price rows in the requested window; at least {MIN_ROWS} are needed",
                        x.asset.ticker
                    )),
                    EngineError::InvalidInput(m) => Error::Invalid(m),
                })?,
        ),
    };
    // A forecast carries the grade; the scorer's `score` is asked only
    // without one.
    let grade = match &forecast {
        Some(g) => forecast_plugins::scorer::Grade {
            letter: g.letter.clone(),
            score: g.score,
        },
        None => x
            .scorer
            .score(x.permit, &[score_input(&summary)])?
            .pop()
            .ok_or_else(|| Error::Internal("the scorer answered no grade".into()))?,
    };
    let evidence = crate::evidence::bucket_evidence(
        &mut session,
        x.permit,
        x.window,
        params,
        vec![summary.current.segment],
    )?;
    Ok(build(VerdictParts {
        asset: x.asset,
        query,
        rows: x.window.len(),
        last_price_date: x.last_price_date,
        state: &summary,
        grade: &grade,
        evidence: evidence.as_ref(),
        forecast: forecast
            .as_ref()
            .and_then(|g| crate::forecast::body(query.return_period, g)),
        engine_version: &x.engine.info().version,
        scorer_version: &x.scorer.info().version,
        calculated_at: x.now,
    }))
}

/// The scorer's graded forecast of the last row of `window` at `query`'s
/// horizon (the return metric's states at every month-end of the window
/// and at its last row), when the scorer forecasts and the engine reports
/// episodes; with the return metric's state at the last row (what
/// `analyse-state` answers for it). An engine with `forecast-inputs` (WIT
/// 1.10.0) answers the medians, the episodes and the state in one walk.
fn live_forecast(
    x: &LiveInputs<'_>,
    session: &mut forecast_plugins::SegmentationSession,
) -> Result<(Option<GradedForecast>, Option<StateAt>), Error> {
    let (asset, window) = (x.asset, x.window);
    let facts = match (&x.pool, x.scorer.has_forecasting()) {
        (Some(_), true) => {
            x.facts
                .month_ends(asset.id, asset.data_version, window, x.query.return_period)
        }
        _ => return Ok((None, None)),
    };
    if session.plugin().has_forecast_inputs() {
        return forecast_in_one_walk(x, session, &facts);
    }
    let walked = forecasts_at(
        x.permit,
        session,
        x.scorer,
        window,
        At::Facts(&facts),
        x.query,
        x.periods,
        x.pool.clone(),
        None,
    )?;
    Ok(match walked {
        Some(mut w) => (w.graded.pop(), w.walk.pop()),
        None => (None, None),
    })
}

/// [`live_forecast`] from one `forecast-inputs` call: the same points,
/// forecasts and state as the walk, the episodes and `analyse-state`.
fn forecast_in_one_walk(
    x: &LiveInputs<'_>,
    session: &mut forecast_plugins::SegmentationSession,
    facts: &crate::forecast::SeriesFacts,
) -> Result<(Option<GradedForecast>, Option<StateAt>), Error> {
    let Some((table, pool)) = &x.pool else {
        return Ok((None, None));
    };
    if facts.ends.is_empty() {
        return Ok((None, None));
    }
    let fq = AnalysisQuery {
        metric: Metric::Return,
        ..*x.query
    };
    let params = crate::analysis::engine_params(&fq, x.periods);
    let inputs = session
        .forecast_inputs(x.permit, x.window, params, &facts.ends)?
        .map_err(|e| Error::Internal(format!("engine forecast inputs failed: {e:?}")))?;
    if inputs.medians.len() != facts.ends.len() || inputs.episodes.len() != facts.ends.len() {
        return Err(Error::Internal(format!(
            "the engine answered {} medians and {} episodes for {} ends",
            inputs.medians.len(),
            inputs.episodes.len(),
            facts.ends.len()
        )));
    }
    let points = facts.points(&inputs.medians, &inputs.episodes, Some((table, *pool)));
    let mut graded = x
        .scorer
        .forecast(x.permit, x.query.return_period, &points)
        .map_err(|e| Error::Internal(e.to_string()))?;
    Ok((graded.pop(), Some(state_at(&inputs.state))))
}

/// The return metric's walk over some ends of a series, and the scorer's
/// points and answers for them.
struct Walked {
    walk: Vec<StateAt>,
    points: Vec<forecast_plugins::scorer::Point>,
    graded: Vec<GradedForecast>,
}

/// Where a walk forecasts: row indices of a series, or the series' facts
/// at them (which hold the indices).
#[derive(Clone, Copy)]
enum At<'a> {
    Rows(&'a [u32]),
    Facts(&'a crate::forecast::SeriesFacts),
}

impl At<'_> {
    fn ends(&self) -> &[u32] {
        match self {
            At::Rows(ends) => ends,
            At::Facts(f) => &f.ends,
        }
    }
}

/// The scorer's forecasts of `series` at the row indices `at` and
/// `query`'s horizon, from the return metric's states there (`walk` when
/// the caller has them, else one `states-at` walk); none when there is no
/// pooled table (the scorer makes no forecasts) or the engine reports no
/// evidence or episodes.
#[allow(clippy::too_many_arguments)]
fn forecasts_at(
    permit: &forecast_plugins::Permit,
    session: &mut forecast_plugins::SegmentationSession,
    scorer: &Arc<forecast_plugins::ScorerPlugin>,
    series: &forecast_domain::series::PriceSeries,
    at: At<'_>,
    query: &AnalysisQuery,
    periods: u32,
    pool: Option<(Arc<crate::forecast::PooledTable>, crate::forecast::Pool)>,
    walk: Option<Vec<StateAt>>,
) -> Result<Option<Walked>, Error> {
    let ends = at.ends();
    let Some((table, pool)) = pool else {
        return Ok(None);
    };
    let engine = session.plugin();
    if ends.is_empty() || !engine.has_evidence() || !engine.has_episodes() {
        return Ok(None);
    }
    let fq = AnalysisQuery {
        metric: Metric::Return,
        ..*query
    };
    let params = crate::analysis::engine_params(&fq, periods);
    let walk = match walk {
        Some(w) => w,
        None => crate::evidence::only_answer(
            session.states_at(permit, series, &[params], ends)?,
            "states",
        )?,
    };
    let by = crate::forecast::by_horizon(
        permit,
        session,
        scorer,
        series,
        &[fq],
        &[params],
        std::slice::from_ref(&walk),
        ends,
        Some((&table, pool)),
        match at {
            At::Facts(f) => Some(f),
            At::Rows(_) => None,
        },
    )
    .map_err(Error::Internal)?;
    Ok(by.into_iter().next().map(|(_, points, graded)| Walked {
        walk,
        points,
        graded,
    }))
}

/// The 404 of an unknown or inactive ticker.
fn unknown(ticker: &str) -> Error {
    Error::NotFound(format!("unknown ticker '{}'", forecast_api::quote(ticker)))
}

/// The body served for a stored snapshot verdict: the stored JSON with
/// `metadata.from_cache` set and `metadata.last_price_date` and
/// `metadata.currency` the asset's current ones (a body stored before
/// `currency` existed has none), serialised as the JSON response of a [`VerdictResponse`]
/// (`serde_json::to_vec`, what axum's `Json` writes).
pub fn served_body(
    stored: &str,
    last_price_date: Option<chrono::NaiveDate>,
    currency: &str,
) -> Result<Vec<u8>, Error> {
    let mut cached: VerdictResponse = serde_json::from_str(stored)
        .map_err(|e| Error::Internal(format!("cached verdict does not parse: {e}")))?;
    cached.metadata.from_cache = true;
    if let Some(d) = last_price_date {
        cached.metadata.last_price_date = d;
    }
    cached.metadata.currency = currency.to_string();
    serde_json::to_vec(&cached)
        .map_err(|e| Error::Internal(format!("verdict does not serialise: {e}")))
}
