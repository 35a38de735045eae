//! Verdicts (the spec's verdict-only projection, DESIGN §4/§5): built from
//! the engine's state summary and the scorer's grade, served from the daily
//! grading snapshot for default parameters and computed live otherwise.

use chrono::Utc;

use crate::analysis::{active_asset, AnalysisQuery, Error, MIN_ROWS};
pub use forecast_api::analysis::{GradeBody, VerdictMetadata, VerdictResponse};
use std::sync::Arc;

use crate::active::Plugins;
use forecast_domain::Asset;
use forecast_plugins::scorer::{Grade, ScoreInput};
use forecast_plugins::segmentation::{EngineError, StateSummary};
use forecast_store::GradeRow;
use forecast_store::{AssetStore, GradingStore};

/// What the scorer sees of a state.
pub fn score_input(s: &StateSummary) -> ScoreInput {
    let c = &s.current;
    ScoreInput {
        median_return: c.median_return,
        expected_return: c.expected_return,
        best_error: c.best_error,
        win_rate: s.segments.get(c.segment as usize).and_then(|g| g.win_rate),
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
    /// The engine's state.
    pub state: &'a StateSummary,
    /// The scorer's grade.
    pub grade: &'a Grade,
    /// Engine version.
    pub engine_version: &'a str,
    /// Scorer version.
    pub scorer_version: &'a str,
}

/// Shapes a verdict.
pub fn build(p: VerdictParts<'_>) -> VerdictResponse {
    let c = &p.state.current;
    VerdictResponse {
        ticker: p.asset.ticker.clone(),
        signals: crate::analysis::signals_body(c),
        current_state: crate::analysis::current_state_body(c),
        active_segment: crate::analysis::segment_body(&p.state.segments[c.segment as usize]),
        grade: GradeBody {
            letter: p.grade.letter.clone(),
            score: p.grade.score,
        },
        typical_max_drawdown: p.state.typical_max_drawdown,
        metadata: VerdictMetadata {
            return_period: p.query.return_period,
            num_segments: p.query.num_segments,
            decay_factor: p.query.decay_factor,
            metric: p.query.metric,
            calculated_at: Utc::now(),
            from_cache: false,
            data_points: p.rows as u32,
            asset_id: p.asset.id,
            engine_version: p.engine_version.to_string(),
            scorer_version: p.scorer_version.to_string(),
            data_source: p.asset.data_source,
            periods_per_year: p.state.periods_per_year,
            last_price_date: p.last_price_date,
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

/// The verdict service: the grading snapshot and series in the store, the
/// active engine and scorer.
#[derive(Clone)]
pub struct VerdictService {
    assets: Arc<dyn AssetStore>,
    grading: Arc<dyn GradingStore>,
    plugins: Arc<Plugins>,
}

impl VerdictService {
    /// A service over the assets and series of `assets` and the grading
    /// snapshot of `grading`, answering with the active plugins of `plugins`.
    pub fn new(
        assets: Arc<dyn AssetStore>,
        grading: Arc<dyn GradingStore>,
        plugins: Arc<Plugins>,
    ) -> Self {
        VerdictService {
            assets,
            grading,
            plugins,
        }
    }

    /// A verdict: from the active grading snapshot when the parameters are the
    /// graded defaults and the snapshot still describes the asset's data and
    /// the active plugins; otherwise computed live.
    pub async fn verdict(&self, ticker: &str, q: &AnalysisQuery) -> Result<VerdictResponse, Error> {
        let asset = active_asset(self.assets.as_ref(), ticker).await?;
        let engine = self.plugins.segmentation();
        let scorer = self.plugins.scorer();
        if q.is_cacheable() {
            if let Some(run) = self.grading.active_grading_run().await? {
                if run.engine == engine.info().label() && run.scorer == scorer.info().label() {
                    if let Some(row) = self
                        .grading
                        .grade(&run.id, asset.id, q.return_period, q.metric)
                        .await?
                    {
                        if row.data_version == asset.data_version {
                            let mut cached: VerdictResponse = serde_json::from_str(&row.body)
                                .map_err(|e| {
                                    Error::Internal(format!("cached verdict does not parse: {e}"))
                                })?;
                            cached.metadata.from_cache = true;
                            if let Some(d) = asset.last_price_date {
                                cached.metadata.last_price_date = d;
                            }
                            crate::cache_lookup("verdict", true);
                            return Ok(cached);
                        }
                    }
                }
            }
            crate::cache_lookup("verdict", false);
        }
        let history = self.assets.load_series(asset.id).await?.unwrap_or_default();
        let window = history.window(q.start_date, q.end_date);
        if window.len() < MIN_ROWS {
            return Err(Error::InsufficientData(format!(
                "{} has {} price rows in the requested window; at least {MIN_ROWS} are needed",
                asset.ticker,
                window.len()
            )));
        }
        let query = *q;
        let permit = self.plugins.runtime().acquire().await;
        let periods = history.periods_per_year();
        let last_price_date = crate::analysis::last_price_date(&asset, &history);
        tokio::task::spawn_blocking(move || {
            let summary = engine
                .analyse_state(
                    &permit,
                    &window,
                    crate::analysis::engine_params(&query, periods),
                )?
                .map_err(|e| match e {
                    EngineError::InsufficientData(rows) => Error::InsufficientData(format!(
                "{} has {rows} price rows in the requested window; at least {MIN_ROWS} are needed",
                asset.ticker
            )),
                    EngineError::InvalidInput(m) => Error::Invalid(m),
                })?;
            let grades = scorer.score(&permit, &[score_input(&summary)])?;
            Ok(build(VerdictParts {
                asset: &asset,
                query: &query,
                rows: window.len(),
                last_price_date,
                state: &summary,
                grade: &grades[0],
                engine_version: &engine.info().version,
                scorer_version: &scorer.info().version,
            }))
        })
        .await
        .map_err(|e| Error::Internal(format!("verdict worker failed: {e}")))?
    }
}
