//! Model cards and comparisons (`GET /api/models`,
//! `POST /api/admin/plugins/compare`): how a version of the scorer or the
//! engine forecast on real prices out of sample (docs/METHODOLOGY.md,
//! "Models compete by evidence").

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::track_record::ForecastEvaluation;
use crate::Invalid;

/// One model's figures over a set of walk-forward rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ModelCard {
    /// `kind/name@version` of the part the card describes.
    pub model: String,
    /// Horizon in calendar days.
    pub return_period: u32,
    /// The prices the rows come from (`real`: shipped and ingested).
    pub source: String,
    /// First month-end evaluated.
    pub first_date: Option<NaiveDate>,
    /// Last month-end evaluated.
    pub last_date: Option<NaiveDate>,
    /// The proper scores against climatology; none when the rows cannot
    /// be evaluated (no forecasts, fewer than two months).
    pub evaluation: Option<ForecastEvaluation>,
}

/// `GET /api/models`: the active engine and scorer and, per graded
/// horizon, how their forecasts did on real prices (from the active
/// grading run's stored histories).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ModelsResponse {
    /// The active engine, `segmentation/name@version`.
    pub engine: String,
    /// The active scorer, `scorer/name@version`.
    pub scorer: String,
    /// The grading run the cards come from; none before the first run.
    pub run_id: Option<String>,
    /// One card per graded horizon (metric `return`).
    pub cards: Vec<ModelCard>,
}

/// Two versions forecasting the same rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ModelComparison {
    /// Horizon in calendar days.
    pub return_period: u32,
    /// (asset, month-end) rows both versions forecast.
    pub rows: u32,
    /// Month-ends among them.
    pub months: u32,
    /// The first version (for the gate: the active one).
    pub a: ModelCard,
    /// The second version (for the gate: the candidate).
    pub b: ModelCard,
    /// Mean CRPS of `a` minus `b` over the rows (each month's sum over the
    /// mean rows per month, averaged over months): above 0, `b` forecast
    /// better.
    pub crps_differential: f64,
    /// Its Newey–West standard error (lag: the horizon's overlap in months).
    pub crps_differential_se: f64,
    /// Diebold–Mariano statistic.
    pub dm_stat: f64,
    /// Its two-sided p-value.
    pub dm_p: f64,
    /// Whether `b` is significantly worse than `a` at 5 % (the activation
    /// gate refuses such a candidate without `force`).
    pub b_significantly_worse: bool,
    /// The result in words.
    pub verdict: String,
}

/// `POST /api/admin/plugins/compare`: two registered versions of one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct CompareRequest {
    /// `scorer` or `segmentation`.
    pub kind: String,
    /// Name within the kind (`default` for the built-ins).
    pub name: String,
    /// The first version.
    pub a: String,
    /// The second version.
    pub b: String,
    /// Horizon in calendar days, one of the graded ones (default 90).
    #[serde(default)]
    pub return_period: Option<u32>,
}

impl CompareRequest {
    /// The horizon, checked against the graded ones.
    pub fn horizon(&self) -> Result<u32, Invalid> {
        let h = self.return_period.unwrap_or(90);
        match forecast_domain::defaults::GRADED_RETURN_PERIODS.contains(&h) {
            true => Ok(h),
            false => Err(Invalid(format!(
                "return_period must be one of {:?} (the graded horizons), got {h}",
                forecast_domain::defaults::GRADED_RETURN_PERIODS
            ))),
        }
    }
}

/// `POST /api/admin/plugins/activate`'s body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActivateRequest {
    /// The plugin's kind.
    pub kind: String,
    /// Name within the kind.
    pub name: String,
    /// Semantic version.
    pub version: String,
    /// Activate a scorer or engine even though it forecast significantly
    /// worse than the active version on real prices (recorded with `reason`).
    #[serde(default)]
    pub force: bool,
    /// Why, when `force` (required then; at most 500 characters).
    #[serde(default)]
    pub reason: Option<String>,
}
