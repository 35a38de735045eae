//! `GET /api/track-record/{ticker}`: what the active engine and scorer
//! would have graded an asset at each past month-end, from the rows up to
//! that date only, next to what followed (issue 27; docs/METHODOLOGY.md).

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::analysis::{AnalysisQuery, RawAnalysisQuery};
use crate::assets::DataSources;
use crate::Invalid;
use forecast_domain::defaults;
use forecast_domain::{Category, DataSource, Metric};

/// The query parameters of the track-record routes.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RawTrackRecordQuery {
    /// Forecast horizon in calendar days: the grade's and the realised
    /// return's.
    #[param(value_type = Option<i64>, minimum = 7, maximum = 365, default = 90)]
    return_period: Option<String>,
    /// The forward metric the grade is computed for (the realised outcome
    /// is always the simple return).
    #[param(value_type = Option<Metric>, default = "return")]
    metric: Option<String>,
}

impl RawTrackRecordQuery {
    /// The verdict query every month-end is graded with: these parameters,
    /// the default segments and decay, no start date.
    pub fn validate(&self) -> Result<AnalysisQuery, Invalid> {
        RawAnalysisQuery::with(self.return_period.clone(), self.metric.clone()).validate()
    }
}

/// One month-end of an asset's grade history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TrackRecordRow {
    /// The month's last trading day: the grade uses rows up to it only.
    pub date: NaiveDate,
    /// The grade `GET /api/analysis/{ticker}/verdict` gives with
    /// `end_date` = `date` and the same `return_period` and `metric`.
    pub grade: String,
    /// Its score in [0, 100].
    pub score: f64,
    /// The median prediction of that verdict (`current_state.median_return`).
    pub predicted_median_return: f64,
    /// Close of the first day at least `return_period` calendar days after
    /// `date` over the close of `date`, minus 1; null while that day has
    /// not come.
    pub realised_return: Option<f64>,
    /// The calibrated forecast shown at `date` (the verdict's `forecast`
    /// with `end_date` = `date`); absent where the scorer makes none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<RowForecast>,
}

/// The forecast of one row and the climatology it is judged against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RowForecast {
    /// Central estimate of the forward return.
    pub central: f64,
    /// 10th percentile.
    pub p10: f64,
    /// 90th percentile.
    pub p90: f64,
    /// The asset's own mean forward return up to `date` (climatology).
    pub climatology_mean: f64,
    /// Its 10th percentile.
    pub climatology_p10: f64,
    /// Its 90th percentile.
    pub climatology_p90: f64,
}

/// The realised outcomes of one grade letter over an asset's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GradeOutcome {
    /// The letter.
    pub grade: String,
    /// Month-ends with that grade and a realised return.
    pub count: u32,
    /// Mean realised return of those month-ends.
    pub mean_realised_return: Option<f64>,
    /// Median realised return of those month-ends.
    pub median_realised_return: Option<f64>,
    /// Share of them whose realised return was above 0.
    pub hit_rate: Option<f64>,
}

/// `GET /api/track-record/{ticker}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TrackRecordResponse {
    /// The asset.
    pub ticker: String,
    /// The horizon graded and realised.
    pub return_period: u32,
    /// The metric graded.
    pub metric: Metric,
    /// Real or synthetic prices: what a grade finds in a synthetic history
    /// is a property of its generator, not of any market.
    pub data_source: DataSource,
    /// Engine that computed the states.
    pub engine_version: String,
    /// Scorer that graded them.
    pub scorer_version: String,
    /// One row per month-end with at least 300 rows up to it, oldest
    /// first. Months with fewer rows before them are not graded.
    pub history: Vec<TrackRecordRow>,
    /// Per grade letter (A first), the realised outcomes of the rows
    /// with one; each month-end's windows overlap the next ones when
    /// `return_period` is over a month, so these are not independent.
    pub by_grade: Vec<GradeOutcome>,
}

/// Which price histories a universe track record covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SourceFilter {
    /// Market prices: the shipped real histories and ingested ones.
    Real,
    /// Generated histories (the demo's generator: what the grades find
    /// there is a property of the generator, not of any market).
    Synthetic,
    /// Both.
    All,
}

impl SourceFilter {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceFilter::Real => "real",
            SourceFilter::Synthetic => "synthetic",
            SourceFilter::All => "all",
        }
    }

    /// Whether an asset with prices from `source` is covered.
    pub fn covers(self, source: DataSource) -> bool {
        match self {
            SourceFilter::All => true,
            SourceFilter::Synthetic => source == DataSource::Synthetic,
            SourceFilter::Real => source != DataSource::Synthetic,
        }
    }
}

/// The query parameters of `GET /api/track-record`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RawUniverseTrackRecordQuery {
    /// A graded horizon in calendar days: 7, 30, 90, 180 or 365.
    #[param(schema_with = crate::ranking::graded_period)]
    return_period: Option<String>,
    /// The graded metric.
    #[param(value_type = Option<Metric>, default = "return")]
    metric: Option<String>,
    /// Only assets of this category.
    #[param(value_type = Option<Category>)]
    category: Option<String>,
    /// `real` (market prices, shipped or ingested), `synthetic` or `all`.
    #[param(value_type = Option<SourceFilter>, default = "real")]
    source: Option<String>,
}

/// A checked [`RawUniverseTrackRecordQuery`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UniverseTrackRecordQuery {
    /// Graded horizon.
    pub return_period: u32,
    /// Graded metric.
    pub metric: Metric,
    /// Category filter.
    pub category: Option<Category>,
    /// Source filter.
    pub source: SourceFilter,
}

impl RawUniverseTrackRecordQuery {
    /// Checks every parameter; the error names the one refused.
    pub fn validate(&self) -> Result<UniverseTrackRecordQuery, Invalid> {
        let q =
            RawAnalysisQuery::with(self.return_period.clone(), self.metric.clone()).validate()?;
        if !defaults::GRADED_RETURN_PERIODS.contains(&q.return_period) {
            return Err(Invalid(format!(
                "return_period must be one of the graded horizons {:?} (got {})",
                defaults::GRADED_RETURN_PERIODS,
                q.return_period
            )));
        }
        let category = self
            .category
            .as_deref()
            .map(crate::assets::parse_category)
            .transpose()?;
        let source = match self.source.as_deref().map(str::trim) {
            None | Some("real") => SourceFilter::Real,
            Some("synthetic") => SourceFilter::Synthetic,
            Some("all") => SourceFilter::All,
            Some(other) => {
                return Err(Invalid(format!(
                    "source must be real, synthetic or all (got '{}')",
                    crate::quote(other)
                )))
            }
        };
        Ok(UniverseTrackRecordQuery {
            return_period: q.return_period,
            metric: q.metric,
            category,
            source,
        })
    }
}

/// The realised outcomes of one grade letter across the universe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UniverseGradeOutcome {
    /// The letter.
    pub grade: String,
    /// (asset, month-end) pairs with that grade and a realised return.
    pub count: u32,
    /// Mean realised return of those pairs.
    pub mean_realised_return: Option<f64>,
    /// 90 % interval of that mean by a moving-block bootstrap over
    /// month-ends (blocks as long as the horizon's overlap), fixed seed.
    #[schema(value_type = Option<Vec<f64>>, min_items = 2, max_items = 2)]
    pub mean_ci: Option<[f64; 2]>,
    /// Median realised return of those pairs.
    pub median_realised_return: Option<f64>,
    /// Share of them with a realised return above 0.
    pub hit_rate: Option<f64>,
    /// Mean of (realised return − the equal-weight mean realised return of
    /// every covered asset at the same month-end).
    pub mean_excess_return: Option<f64>,
}

/// The rank correlation of score and realised return at one month-end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct IcPoint {
    /// The month-end.
    pub date: NaiveDate,
    /// Spearman correlation of the scores with the realised returns.
    pub ic: f64,
    /// Assets graded that month-end with a realised return.
    pub assets: u32,
}

/// A mean over month-ends with an interval that accounts for overlap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MeanWithInterval {
    /// Mean over the month-ends.
    pub mean: Option<f64>,
    /// 90 % interval by a moving-block bootstrap over month-ends.
    #[schema(value_type = Option<Vec<f64>>, min_items = 2, max_items = 2)]
    pub ci: Option<[f64; 2]>,
    /// Month-ends averaged.
    pub dates: u32,
}

/// One bin of predicted median return.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CalibrationBin {
    /// Mean predicted median return of the bin's pairs.
    pub mean_predicted: f64,
    /// Mean realised return of the same pairs.
    pub mean_realised: f64,
    /// Pairs in the bin.
    pub count: u32,
}

/// One loss of the calibrated forecast against climatology (the asset's
/// own forward-return distribution up to each date).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SkillScore {
    /// The forecast's mean loss.
    pub forecast: f64,
    /// Climatology's mean loss.
    pub climatology: f64,
    /// 1 − forecast / climatology: above 0 the forecast did better.
    pub skill: f64,
    /// 90 % interval of `skill` (the month-mean loss differential's
    /// Newey–West interval over climatology's mean loss).
    #[schema(value_type = Vec<f64>, min_items = 2, max_items = 2)]
    pub skill_ci: [f64; 2],
    /// Diebold–Mariano statistic of the month-mean loss differential
    /// (climatology minus forecast; HAC variance over the horizon's overlap).
    pub dm_stat: f64,
    /// Its two-sided p-value.
    pub dm_p: f64,
}

/// A regression coefficient with its 90 % interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CoefficientBody {
    /// Estimate.
    pub estimate: f64,
    /// 90 % interval (Driscoll–Kraay: months as time, HAC over the overlap).
    #[schema(value_type = Vec<f64>, min_items = 2, max_items = 2)]
    pub ci: [f64; 2],
}

/// How the calibrated forecasts did, scored with proper rules
/// (docs/METHODOLOGY.md, "Evaluating forecasts").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ForecastEvaluation {
    /// Rows (asset, month-end) with a forecast and a realised return.
    pub rows: u32,
    /// Month-ends among them.
    pub months: u32,
    /// HAC lag in months (the horizon's overlap).
    pub lag: u32,
    /// CRPS of the forecast as a normal with its p10–p90 spread.
    pub crps: SkillScore,
    /// Mean pinball loss of p10 and p90.
    pub quantile_loss: SkillScore,
    /// Squared error of the central estimate.
    pub squared_error: SkillScore,
    /// Intercept of realised on central (0 when calibrated).
    pub calibration_intercept: CoefficientBody,
    /// Slope of realised on central (1 when calibrated).
    pub calibration_slope: CoefficientBody,
    /// Share of realised returns within the 80 % interval.
    pub coverage: f64,
    /// The same for climatology's p10–p90.
    pub climatology_coverage: f64,
    /// Realised returns' PIT under the forecast, in ten bins of 0.1.
    pub pit_histogram: Vec<u32>,
    /// Rows by decile of the central forecast: mean predicted against
    /// mean realised.
    pub reliability: Vec<CalibrationBin>,
}

/// `GET /api/track-record`: how the grades of the active engine and scorer
/// did across the universe, month-end by month-end, from data up to each
/// month-end only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UniverseTrackRecordResponse {
    /// Graded horizon.
    pub return_period: u32,
    /// Graded metric.
    pub metric: Metric,
    /// The category filter, if any.
    pub category: Option<Category>,
    /// The source filter.
    pub source: SourceFilter,
    /// The grading run that computed the record.
    pub run_id: String,
    /// Its UTC day.
    pub run_day: String,
    /// Engine version.
    pub engine_version: String,
    /// Scorer version.
    pub scorer_version: String,
    /// Assets covered.
    pub assets: u32,
    /// (asset, month-end) pairs with a realised return.
    pub observations: u32,
    /// First and last month-end with a realised return.
    pub first_date: Option<NaiveDate>,
    /// See `first_date`.
    pub last_date: Option<NaiveDate>,
    /// Provenance of the covered assets' prices.
    pub data_sources: DataSources,
    /// Per grade letter, A first.
    pub by_grade: Vec<UniverseGradeOutcome>,
    /// Mean information coefficient (Spearman rank correlation of score
    /// with realised return, per month-end with at least 5 assets).
    pub ic: MeanWithInterval,
    /// The IC month by month.
    pub ic_series: Vec<IcPoint>,
    /// Mean realised return of the top score quintile minus the bottom
    /// one, per month-end with at least 5 assets.
    pub quintile_spread: MeanWithInterval,
    /// Pairs binned by predicted median return (deciles): predicted
    /// against realised.
    pub calibration: Vec<CalibrationBin>,
    /// Bootstrap block length in month-ends (the horizon's overlap + 1).
    pub block_months: u32,
    /// The calibrated forecasts scored with proper rules against
    /// climatology (absent where the run stored no forecasts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast_evaluation: Option<ForecastEvaluation>,
    /// What the figures can and cannot say, in words.
    pub notes: Vec<String>,
}
