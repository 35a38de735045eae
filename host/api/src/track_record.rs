//! `GET /api/track-record/{ticker}`: what the active engine and scorer
//! would have graded an asset at each past month-end, from the rows up to
//! that date only, next to what followed (issue 27; docs/METHODOLOGY.md).

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::analysis::{AnalysisQuery, RawAnalysisQuery};
use crate::Invalid;
use forecast_domain::{DataSource, Metric};

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
    /// Real or synthetic prices: a synthetic history carries no
    /// information a grade could find.
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
