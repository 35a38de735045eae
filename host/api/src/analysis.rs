//! `GET /api/analysis/{ticker}` and `GET /api/verdict/{ticker}`: the query
//! parameters (documented with every bound, validated into an
//! [`AnalysisQuery`]) and the response bodies the spec defines.

use std::collections::BTreeMap;

use crate::Invalid;
use chrono::{DateTime, NaiveDate, Utc};
use forecast_domain::defaults;
use forecast_domain::{Category, DataSource, Metric};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Validated analysis parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnalysisQuery {
    /// Horizon in calendar days, 7..=365.
    pub return_period: u32,
    /// Buckets, 10..=50.
    pub num_segments: u32,
    /// EMA decay, 0.80..=0.99.
    pub decay_factor: f64,
    /// Outcome metric.
    pub metric: Metric,
    /// Inclusive lower date bound.
    pub start_date: Option<NaiveDate>,
    /// Inclusive upper date bound.
    pub end_date: Option<NaiveDate>,
}

impl Default for AnalysisQuery {
    fn default() -> Self {
        AnalysisQuery {
            return_period: defaults::RETURN_PERIOD,
            num_segments: defaults::NUM_SEGMENTS,
            decay_factor: defaults::DECAY_FACTOR,
            metric: Metric::Return,
            start_date: None,
            end_date: None,
        }
    }
}

/// The query parameters of the analysis and verdict routes, received as
/// strings so every problem gets a message that names the parameter and
/// its bounds; the documented types are what [`RawAnalysisQuery::validate`]
/// accepts.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RawAnalysisQuery {
    /// Forecast horizon in calendar days.
    #[param(value_type = Option<i64>, minimum = 7, maximum = 365, default = 90)]
    return_period: Option<String>,
    /// Number of equal-width drawdown buckets.
    #[param(value_type = Option<i64>, minimum = 10, maximum = 50, default = 20)]
    num_segments: Option<String>,
    /// EMA decay of the expected-return estimator.
    #[param(value_type = Option<f64>, minimum = 0.8, maximum = 0.99, default = 0.95)]
    decay_factor: Option<String>,
    /// The forward metric.
    #[param(value_type = Option<Metric>, default = "return")]
    metric: Option<String>,
    /// Inclusive lower bound of the historical window (YYYY-MM-DD); on or
    /// before `end_date` when both are given.
    #[param(value_type = Option<NaiveDate>, format = Date)]
    start_date: Option<String>,
    /// Inclusive upper bound of the historical window (YYYY-MM-DD).
    #[param(value_type = Option<NaiveDate>, format = Date)]
    end_date: Option<String>,
}

/// The smallest `max_points`.
pub const MAX_POINTS_MIN: u32 = 100;
/// The largest `max_points`.
pub const MAX_POINTS_MAX: u32 = 20_000;

/// The drawing parameter of `GET /api/analysis/{ticker}` (not of the
/// verdict, which has no series), apart from [`RawAnalysisQuery`] because
/// it changes only how much of the series is sent, never a statistic.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RawDrawingQuery {
    /// Thin every per-row array of `time_series` to at most this many rows,
    /// for drawing: the first and last rows are kept, the rows between are
    /// split into equal buckets and each bucket keeps its rows holding the
    /// lowest close, the highest close and the deepest drawdown (so the
    /// price and drawdown lines keep their shape). Every array keeps the
    /// same rows; rows are real, never averaged. Every statistic (current
    /// state, segments, distribution, scatter, paths) is computed on all
    /// rows first; `metadata.time_series_rows` is the row count before
    /// thinning. Unset: every row.
    #[param(value_type = Option<i64>, minimum = 100, maximum = 20000)]
    max_points: Option<String>,
    /// Send only the `time_series` rows dated on or after this day
    /// (YYYY-MM-DD), then thin those to `max_points`: a zoomed chart's
    /// window at full resolution. Every statistic is still computed on all
    /// rows, as without it. Unset: from the first row.
    #[param(value_type = Option<String>, format = Date)]
    draw_from: Option<String>,
    /// Send only the `time_series` rows dated on or before this day
    /// (YYYY-MM-DD; on or after `draw_from`). Unset: to the last row.
    #[param(value_type = Option<String>, format = Date)]
    draw_to: Option<String>,
}

/// What of `time_series` to send: a date window, thinned to a row budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drawing {
    /// The row budget (`None`: every row of the window).
    pub max_points: Option<u32>,
    /// The window's first day (`None`: the first row).
    pub from: Option<NaiveDate>,
    /// The window's last day (`None`: the last row).
    pub to: Option<NaiveDate>,
}

impl RawDrawingQuery {
    /// The drawing asked for, or why it is refused (the error names the
    /// parameter).
    pub fn validate(&self) -> Result<Drawing, Invalid> {
        let max_points = self
            .max_points
            .as_deref()
            .map(|raw| {
                parse_int(
                    "max_points",
                    Some(raw),
                    MAX_POINTS_MAX,
                    MAX_POINTS_MIN,
                    MAX_POINTS_MAX,
                )
                .map_err(Invalid::from)
            })
            .transpose()?;
        let day = |name: &str, raw: &Option<String>| -> Result<Option<NaiveDate>, Invalid> {
            raw.as_deref()
                .map(|r| {
                    NaiveDate::parse_from_str(r.trim(), "%Y-%m-%d").map_err(|_| {
                        Invalid::from(format!(
                            "{name} must be a date YYYY-MM-DD (got '{}')",
                            crate::quote(r)
                        ))
                    })
                })
                .transpose()
        };
        let (from, to) = (
            day("draw_from", &self.draw_from)?,
            day("draw_to", &self.draw_to)?,
        );
        if let (Some(f), Some(t)) = (from, to) {
            if f > t {
                return Err(Invalid::from(format!(
                    "draw_from ({f}) is after draw_to ({t})"
                )));
            }
        }
        Ok(Drawing {
            max_points,
            from,
            to,
        })
    }
}

fn parse_int(name: &str, raw: Option<&str>, default: u32, lo: u32, hi: u32) -> Result<u32, String> {
    let Some(raw) = raw else { return Ok(default) };
    let bound = || {
        format!(
            "{name} must be an integer between {lo} and {hi} inclusive (got '{}')",
            crate::quote(raw)
        )
    };
    let v = crate::integer(raw.trim()).ok_or_else(bound)?;
    if v < i64::from(lo) || v > i64::from(hi) {
        return Err(bound());
    }
    Ok(v as u32)
}

fn parse_date(name: &str, raw: Option<&str>) -> Result<Option<NaiveDate>, String> {
    raw.map(|r| {
        NaiveDate::parse_from_str(r.trim(), "%Y-%m-%d").map_err(|_| {
            format!(
                "{name} must be a date in YYYY-MM-DD format (got '{}')",
                crate::quote(r)
            )
        })
    })
    .transpose()
}

impl RawAnalysisQuery {
    /// The query with only a return period and a metric given (as
    /// received), every other parameter at its default.
    pub fn with(return_period: Option<String>, metric: Option<String>) -> Self {
        RawAnalysisQuery {
            return_period,
            metric,
            ..RawAnalysisQuery::default()
        }
    }

    /// Checks every bound of the spec; the error names the parameter.
    pub fn validate(&self) -> Result<AnalysisQuery, Invalid> {
        let return_period = parse_int(
            "return_period",
            self.return_period.as_deref(),
            defaults::RETURN_PERIOD,
            defaults::RETURN_PERIOD_MIN,
            defaults::RETURN_PERIOD_MAX,
        )?;
        let num_segments = parse_int(
            "num_segments",
            self.num_segments.as_deref(),
            defaults::NUM_SEGMENTS,
            defaults::NUM_SEGMENTS_MIN,
            defaults::NUM_SEGMENTS_MAX,
        )?;
        let decay_factor = match self.decay_factor.as_deref() {
            None => defaults::DECAY_FACTOR,
            Some(raw) => {
                let (lo, hi) = (defaults::DECAY_FACTOR_MIN, defaults::DECAY_FACTOR_MAX);
                let msg = || {
                    format!("decay_factor must be a number between {lo:.2} and {hi:.2} inclusive (got '{}')", crate::quote(raw))
                };
                let v: f64 = raw.trim().parse().map_err(|_| msg())?;
                if !(lo..=hi).contains(&v) {
                    return Err(Invalid::from(msg()));
                }
                v
            }
        };
        let metric = match self.metric.as_deref() {
            None => Metric::Return,
            Some(m) => m.parse()?,
        };
        let start_date = parse_date("start_date", self.start_date.as_deref())?;
        let end_date = parse_date("end_date", self.end_date.as_deref())?;
        if let (Some(s), Some(e)) = (start_date, end_date) {
            if s > e {
                return Err(format!("start_date {s} is after end_date {e}").into());
            }
        }
        Ok(AnalysisQuery {
            return_period,
            num_segments,
            decay_factor,
            metric,
            start_date,
            end_date,
        })
    }
}

impl AnalysisQuery {
    /// Default segments and decay over the whole history for one of the
    /// graded periods: answered from (and stored in) the analysis cache.
    pub fn is_cacheable(&self) -> bool {
        self.num_segments == defaults::NUM_SEGMENTS
            && self.decay_factor == defaults::DECAY_FACTOR
            && self.start_date.is_none()
            && self.end_date.is_none()
            && defaults::GRADED_RETURN_PERIODS.contains(&self.return_period)
    }
}

/// `current_state` of the response.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CurrentStateBody {
    pub price: f64,
    pub drawdown: f64,
    pub segment: u32,
    pub expected_return: f64,
    pub prediction_error: f64,
    pub median_return: f64,
    pub median_error: f64,
    pub best_method: String,
    pub best_error: f64,
    pub insufficient_data: bool,
    pub confirmed_count: u32,
    /// Whether the evidence behind the current bucket is thin, and why
    /// (docs/METHODOLOGY.md). Null when the engine reports no evidence
    /// (one built before WIT 1.7.0).
    #[serde(default)]
    #[schema(required = true)]
    pub evidence: Option<StateEvidenceBody>,
}

/// `current_state.evidence`: how much stands behind the current bucket's
/// figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StateEvidenceBody {
    /// True when the current bucket has fewer than 10 episodes or the 90 %
    /// interval of its median outcome contains the asset's unconditional
    /// median outcome: the bucket's figures are then hard to tell from
    /// chance. `insufficient_data` keeps the spec's meaning beside it.
    pub thin: bool,
    /// Each reason `thin` is true, in words; empty when it is false.
    pub reasons: Vec<String>,
    /// Independent episodes of the current bucket (as its
    /// `segments[].evidence.episodes`).
    pub episodes: u32,
    /// Median of every confirmed outcome of the window, whatever its
    /// bucket: what the bucket's median is compared with.
    pub unconditional_median_return: Option<f64>,
}

/// `segments[].evidence`: the independent evidence behind one bucket
/// (docs/METHODOLOGY.md defines each field).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SegmentEvidenceBody {
    /// Independent visits to the bucket whose first day's horizon has
    /// passed: maximal runs of the bucket's days in which consecutive days
    /// lie less than `return_period` calendar days apart.
    pub episodes: u32,
    /// 90 % interval `[low, high]` of the bucket's median outcome
    /// (`static_median_return`), by a bootstrap that draws whole episodes
    /// with replacement (1,000 resamples, fixed seed: the same input gives
    /// the same interval). Null with fewer than two episodes.
    #[schema(value_type = Option<Vec<f64>>, min_items = 2, max_items = 2)]
    pub median_return_ci: Option<[f64; 2]>,
    /// Share of episodes whose drawdown went below the bucket's lower
    /// bound before the horizon. Null without episodes.
    pub fell_further: Option<f64>,
    /// Median calendar days from an episode's first day to the first close
    /// at or above the peak before it, over the episodes that recovered.
    pub recovery_days_median: Option<f64>,
    /// Episodes that regained their prior peak by the window's last day.
    pub recovered: u32,
    /// Episodes that had not regained it by the window's last day.
    pub unrecovered: u32,
}

/// `signals`: the six signal fields of the current state.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Signals {
    pub expected_return: f64,
    pub prediction_error: f64,
    pub median_return: f64,
    pub median_error: f64,
    pub best_method: String,
    pub best_error: f64,
}

/// `time_series`: dense parallel arrays aligned by index.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TimeSeriesBody {
    pub dates: Vec<NaiveDate>,
    pub prices: Vec<f64>,
    pub drawdowns: Vec<f64>,
    pub expected_returns: Vec<f64>,
    pub prediction_errors: Vec<Option<f64>>,
    pub prediction_error_cumavg: Vec<Option<f64>>,
    pub actual_returns: Vec<Option<f64>>,
    pub median_returns: Vec<f64>,
    pub median_errors: Vec<Option<f64>>,
    pub median_error_cumavg: Vec<Option<f64>>,
    pub projected_prices: Vec<Option<f64>>,
}

/// Quantiles of a set of outcomes, linearly interpolated between order
/// statistics (numpy's default method); `p50` is the median.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Quantiles {
    pub p10: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
}

/// One row of `segments`.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SegmentBody {
    pub segment_idx: u32,
    pub lower_bound: f64,
    pub upper_bound: f64,
    pub count: u32,
    pub expected_return: Option<f64>,
    pub avg_return: Option<f64>,
    pub median_return: Option<f64>,
    pub static_median_return: Option<f64>,
    pub max_loss: Option<f64>,
    pub win_rate: Option<f64>,
    /// Quantiles of every confirmed outcome of the bucket (the outcomes
    /// whose start row's drawdown falls in it), computed from the whole
    /// series: what a box plot of the bucket draws; `p50` equals
    /// `static_median_return`. Null when the bucket has no outcome (and in
    /// a verdict's `active_segment` when the engine reports no evidence).
    #[serde(default)]
    #[schema(required = true)]
    pub outcome_quantiles: Option<Quantiles>,
    /// How many independent visits stand behind the bucket's figures and
    /// how they went. Null when the engine reports no evidence (one built
    /// before WIT 1.7.0).
    #[serde(default)]
    #[schema(required = true)]
    pub evidence: Option<SegmentEvidenceBody>,
}

/// `return_distribution`.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DistributionBody {
    pub bins: Vec<f64>,
    pub counts: Vec<u32>,
}

/// One `scatter_data` point.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ScatterBody {
    pub drawdown: f64,
    pub future_return: f64,
    pub segment: u32,
}

/// One value of `segment_paths`.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SegmentPathsBody {
    pub paths: Vec<Vec<f64>>,
    pub p10: Vec<f64>,
    pub p25: Vec<f64>,
    pub p50: Vec<f64>,
    pub p75: Vec<f64>,
    pub p90: Vec<f64>,
    pub num_paths_total: u32,
}

/// `metadata`: the spec's fields plus metric, engine_version, data_source,
/// periods_per_year (DESIGN §4) and the window actually analysed.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AnalysisMetadata {
    pub return_period: u32,
    pub num_segments: u32,
    pub decay_factor: f64,
    pub calculated_at: DateTime<Utc>,
    pub from_cache: bool,
    pub data_points: u32,
    pub asset_id: i64,
    pub metric: Metric,
    pub engine_version: String,
    pub data_source: DataSource,
    pub periods_per_year: u32,
    pub start_date: NaiveDate,
    pub end_date: NaiveDate,
    /// The date of the asset's last stored price (histories end on
    /// different days; `end_date` is that of the analysed window).
    #[serde(default)]
    #[schema(required = true)]
    pub last_price_date: NaiveDate,
    /// Rows of the analysed window, hence of `time_series` before any
    /// thinning (`data_points`, whatever `max_points` is).
    #[serde(default)]
    #[schema(required = true)]
    pub time_series_rows: u32,
    /// The `max_points` asked for (null without it): `time_series` then
    /// holds at most this many of the `time_series_rows` rows.
    #[serde(default)]
    #[schema(required = true, minimum = 100, maximum = 20000)]
    pub max_points: Option<u32>,
    /// With `draw_from` or `draw_to`: the window asked for and how many of
    /// the `time_series_rows` rows fall in it (before thinning); null
    /// without them.
    #[serde(default)]
    #[schema(required = true)]
    pub drawn: Option<DrawnWindow>,
}

/// The window of `time_series` an answer sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DrawnWindow {
    /// `draw_from` (null: from the first row).
    pub from: Option<NaiveDate>,
    /// `draw_to` (null: to the last row).
    pub to: Option<NaiveDate>,
    /// Rows of the window before thinning.
    pub rows: u32,
}

/// The spec's AnalysisResponse.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AnalysisResponse {
    pub ticker: String,
    pub name: String,
    pub category: Category,
    pub current_state: CurrentStateBody,
    pub signals: Signals,
    pub time_series: TimeSeriesBody,
    pub segments: Vec<SegmentBody>,
    pub return_distribution: DistributionBody,
    pub scatter_data: Vec<ScatterBody>,
    pub segment_paths: BTreeMap<String, SegmentPathsBody>,
    pub metadata: AnalysisMetadata,
    /// The calibrated forecast of the verdict with the same parameters
    /// (additive; absent where the active scorer makes none, or when the
    /// verdict could not be had in time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<ForecastBody>,
    /// The engine's typical yearly drawdown; consumed by the verdict.
    #[serde(skip)]
    pub typical_max_drawdown: Option<f64>,
}

/// `grade` of a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GradeBody {
    /// A to F for the default scorer.
    pub letter: String,
    /// 0 to 100.
    pub score: f64,
}

/// A calibrated forecast of the forward return over the verdict's horizon
/// (docs/METHODOLOGY.md, "Calibrated forecasts"): every parameter fitted
/// on data before its date only. Absent where the active scorer has no
/// forecasts (one built before WIT 1.9.0) or the asset's own history has
/// no completed horizon yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ForecastBody {
    /// Horizon in calendar days.
    pub return_period: u32,
    /// Central estimate of the forward return (a mean, fraction).
    pub central: f64,
    /// 10th percentile of the forward return.
    pub p10: f64,
    /// 90th percentile of the forward return.
    pub p90: f64,
    /// Standard error of `central`.
    pub central_se: f64,
    /// The outcome the grade compares with: the pooled mean of assets of
    /// the same kind of data (real and ingested, or synthetic), or the
    /// asset's own mean when `method` is `climatology`.
    pub reference: f64,
    /// `calibrated` (fitted out of sample on the pooled history) or
    /// `climatology` (too little pooled history: the asset's own
    /// distribution only).
    pub method: String,
    /// Too little evidence for the extreme letters (fewer than 10
    /// independent episodes in the bucket, or the central estimate's 80 %
    /// interval contains `reference`): the score is held within [20, 80].
    pub thin: bool,
}

/// `metadata` of a verdict.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VerdictMetadata {
    pub return_period: u32,
    pub num_segments: u32,
    pub decay_factor: f64,
    pub metric: Metric,
    pub calculated_at: DateTime<Utc>,
    pub from_cache: bool,
    pub data_points: u32,
    pub asset_id: i64,
    pub engine_version: String,
    pub scorer_version: String,
    pub data_source: DataSource,
    pub periods_per_year: u32,
    /// The date of the asset's last stored price.
    #[serde(default)]
    #[schema(required = true)]
    pub last_price_date: NaiveDate,
    /// The currency of the prices (`current_state.price`), from the asset
    /// catalog: ISO 4217 such as `USD` (may be empty when the catalog has
    /// none).
    #[serde(default)]
    #[schema(required = true)]
    pub currency: String,
}

/// The spec's verdict response.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VerdictResponse {
    pub ticker: String,
    pub current_state: CurrentStateBody,
    pub signals: Signals,
    pub active_segment: SegmentBody,
    pub grade: GradeBody,
    /// The calibrated forecast the grade comes from (additive; absent
    /// where the active scorer makes none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<ForecastBody>,
    /// Median over calendar years of the worst within-year drawdown
    /// (a negative fraction; null without a year of 20 rows).
    pub typical_max_drawdown: Option<f64>,
    pub metadata: VerdictMetadata,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> RawAnalysisQuery {
        let query = pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&");
        serde_urlencoded_from(&query)
    }

    fn serde_urlencoded_from(q: &str) -> RawAnalysisQuery {
        serde_urlencoded::from_str(q).unwrap()
    }

    #[test]
    fn defaults_are_the_spec_defaults_and_cacheable() {
        let q = raw(&[]).validate().unwrap();
        assert_eq!(q, AnalysisQuery::default());
        assert!(q.is_cacheable());
        let q = raw(&[("return_period", "30"), ("metric", "sortino")])
            .validate()
            .unwrap();
        assert!(q.is_cacheable());
        assert!(!raw(&[("return_period", "31")])
            .validate()
            .unwrap()
            .is_cacheable());
        assert!(!raw(&[("end_date", "2020-01-01")])
            .validate()
            .unwrap()
            .is_cacheable());
    }

    #[test]
    fn max_points_is_bounded_and_named() {
        let drawing = |q: &str| serde_urlencoded::from_str::<RawDrawingQuery>(q).unwrap();
        assert_eq!(drawing("").validate().unwrap(), Drawing::default());
        assert_eq!(
            drawing("return_period=30").validate().unwrap(),
            Drawing::default(),
            "the analysis parameters are not its business"
        );
        for (raw, n) in [
            ("100", 100),
            ("1500", 1500),
            ("20000", 20_000),
            ("500.0", 500),
        ] {
            assert_eq!(
                drawing(&format!("max_points={raw}"))
                    .validate()
                    .unwrap()
                    .max_points,
                Some(n)
            );
        }
        for bad in ["99", "20001", "0", "-5", "lots", "150.5", ""] {
            let e = drawing(&format!("max_points={bad}"))
                .validate()
                .unwrap_err()
                .0;
            assert!(
                e.starts_with("max_points must be an integer between 100 and 20000 inclusive"),
                "{bad}: {e}"
            );
        }
        assert!(
            raw(&[("max_points", "5")]).validate().is_ok(),
            "the analysis query ignores it (the verdict shares that query)"
        );
    }

    #[test]
    fn integers_may_be_written_with_a_zero_fraction() {
        let q = raw(&[("return_period", "30.0"), ("num_segments", "25.0")])
            .validate()
            .unwrap();
        assert_eq!((q.return_period, q.num_segments), (30, 25));
        assert!(raw(&[("return_period", "30.5")]).validate().is_err());
    }

    #[test]
    fn every_bound_is_enforced_and_named() {
        let cases = [
            ("return_period", "6", "between 7 and 365"),
            ("return_period", "366", "between 7 and 365"),
            ("return_period", "abc", "return_period"),
            ("num_segments", "9", "between 10 and 50"),
            ("num_segments", "51", "between 10 and 50"),
            ("decay_factor", "0.79", "between 0.80 and 0.99"),
            ("decay_factor", "0.995", "between 0.80 and 0.99"),
            ("decay_factor", "NaN", "decay_factor"),
            ("metric", "alpha", "metric must be one of"),
            ("start_date", "2020-13-01", "start_date"),
            ("end_date", "yesterday", "end_date"),
        ];
        for (k, v, needle) in cases {
            let err = raw(&[(k, v)]).validate().unwrap_err().0;
            assert!(
                err.contains(needle) && err.contains(k.split('_').next().unwrap()),
                "{k}={v}: {err}"
            );
        }
        for (k, v) in [
            ("return_period", "7"),
            ("return_period", "365"),
            ("num_segments", "10"),
            ("num_segments", "50"),
            ("decay_factor", "0.8"),
            ("decay_factor", "0.99"),
        ] {
            assert!(
                raw(&[(k, v)]).validate().is_ok(),
                "{k}={v} is inside the bounds"
            );
        }
        let err = raw(&[("start_date", "2020-02-01"), ("end_date", "2020-01-01")])
            .validate()
            .unwrap_err()
            .0;
        assert!(err.contains("after end_date"));
    }
}
