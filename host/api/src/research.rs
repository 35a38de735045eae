//! `POST /api/backtest/sweep` and `POST /api/backtest/walk-forward`: a
//! backtest request (every field of [`BacktestRequest`], the same bounds)
//! run once per combination of up to three swept parameters, and the
//! answers: one row of metrics per combination with its place on the grid,
//! or the walk-forward's splits and stitched out-of-sample curve.
//!
//! Both bodies are read as one JSON object whose own fields (`sweep`,
//! `rank_by`, and the walk-forward's `train_years`, `test_years`, `mode`)
//! are taken out first, `sweep` in the order the client wrote its
//! parameters (that order is the grid's axes); the rest must be a
//! `BacktestRequest`, so an unknown field is refused by name. Each
//! combination is the base request with its values set, validated exactly
//! as a backtest is: an out-of-bounds value answers the backtest's own
//! message, prefixed with where it sits in `sweep`.

use std::fmt;

use chrono::NaiveDate;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::backtest::{BacktestRequest, EquityPoint, MetricsBody, ValidRequest};
use crate::Invalid;

/// Most parameters one sweep varies.
pub const MAX_SWEEP_PARAMETERS: usize = 3;
/// Most combinations (the product of the value lists' lengths) of one
/// sweep or walk-forward.
pub const MAX_COMBINATIONS: usize = 48;
/// Quota units per combination of a sweep or walk-forward.
pub const COST_PER_COMBINATION: u32 = 1;
/// Quota units of a sweep or walk-forward at least (a backtest's).
pub const MIN_COST: u32 = 5;
/// The parameters a sweep may vary, in the order the documentation lists
/// them.
pub const SWEEPABLE: [&str; 10] = [
    "top_n",
    "rebalance",
    "return_period",
    "metric",
    "decay_factor",
    "num_segments",
    "zscore_lookback",
    "zscore_entry",
    "zscore_exit",
    "include_costs",
];
/// Longest train split of a walk-forward, in years.
pub const MAX_TRAIN_YEARS: u32 = 20;
/// Longest test split of a walk-forward, in years.
pub const MAX_TEST_YEARS: u32 = 10;
/// Train years when `train_years` is absent.
pub const DEFAULT_TRAIN_YEARS: u32 = 3;
/// Test years when `test_years` is absent.
pub const DEFAULT_TEST_YEARS: u32 = 1;

/// The quota a sweep or walk-forward of `combinations` costs:
/// [`COST_PER_COMBINATION`] each, at least [`MIN_COST`].
pub fn cost(combinations: usize) -> u32 {
    let c = u32::try_from(combinations).unwrap_or(u32::MAX);
    c.saturating_mul(COST_PER_COMBINATION).max(MIN_COST)
}

/// The figure a sweep ranks its combinations by (higher is better for
/// each; `max_drawdown` is at most 0, so the shallowest wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RankBy {
    /// `metrics.total_return`.
    TotalReturn,
    /// `metrics.cagr`.
    Cagr,
    /// `metrics.sharpe_ratio`.
    #[default]
    SharpeRatio,
    /// `metrics.sortino_ratio`.
    SortinoRatio,
    /// `metrics.calmar_ratio`.
    CalmarRatio,
    /// `metrics.max_drawdown`.
    MaxDrawdown,
}

impl RankBy {
    /// Every figure, as named on the wire.
    pub const ALL: [RankBy; 6] = [
        RankBy::TotalReturn,
        RankBy::Cagr,
        RankBy::SharpeRatio,
        RankBy::SortinoRatio,
        RankBy::CalmarRatio,
        RankBy::MaxDrawdown,
    ];

    /// Its wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RankBy::TotalReturn => "total_return",
            RankBy::Cagr => "cagr",
            RankBy::SharpeRatio => "sharpe_ratio",
            RankBy::SortinoRatio => "sortino_ratio",
            RankBy::CalmarRatio => "calmar_ratio",
            RankBy::MaxDrawdown => "max_drawdown",
        }
    }

    fn parse(raw: &str) -> Result<RankBy, Invalid> {
        RankBy::ALL
            .into_iter()
            .find(|r| r.as_str() == raw)
            .ok_or_else(|| {
                let names: Vec<&str> = RankBy::ALL.iter().map(|r| r.as_str()).collect();
                Invalid(format!(
                    "rank_by must be one of {} (got '{}')",
                    names.join(", "),
                    crate::quote(raw)
                ))
            })
    }

    /// The figure in `m`.
    pub fn of(self, m: &SplitMetrics) -> Option<f64> {
        match self {
            RankBy::TotalReturn => m.total_return,
            RankBy::Cagr => m.cagr,
            RankBy::SharpeRatio => m.sharpe_ratio,
            RankBy::SortinoRatio => m.sortino_ratio,
            RankBy::CalmarRatio => m.calmar_ratio,
            RankBy::MaxDrawdown => m.max_drawdown,
        }
    }
}

/// How the walk-forward's train splits move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SplitMode {
    /// Each train split is the `train_years` before its test split.
    #[default]
    Rolling,
    /// Each train split starts at the window's start and ends where its
    /// test split begins.
    Expanding,
}

impl SplitMode {
    /// Its wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SplitMode::Rolling => "rolling",
            SplitMode::Expanding => "expanding",
        }
    }
}

/// `POST /api/backtest/sweep`: a backtest request plus the values to try.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SweepRequest {
    /// The base run: every combination is this request with its values set.
    #[serde(flatten)]
    pub backtest: BacktestRequest,
    /// 1 to 3 parameters (of `top_n`, `rebalance`, `return_period`,
    /// `metric`, `decay_factor`, `num_segments`, `zscore_lookback`,
    /// `zscore_entry`, `zscore_exit`, `include_costs`), each with a list of
    /// distinct values of the type the backtest field takes; at most 48
    /// combinations. A swept parameter may not also be set as a base
    /// field. The order written is the order of the answer's axes.
    #[schema(schema_with = sweep_schema, required = true)]
    pub sweep: Option<Axes>,
    /// The figure that ranks the combinations (default `sharpe_ratio`).
    #[schema(value_type = Option<RankBy>)]
    pub rank_by: Option<String>,
    #[serde(skip)]
    base: Map<String, Value>,
}

/// The schema of `sweep`: each sweepable parameter's list of values of its
/// backtest field's type and bounds.
fn sweep_schema() -> utoipa::openapi::Object {
    use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, Type};
    let int = |lo: i64, hi: i64| {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(lo))
            .maximum(Some(hi))
    };
    let num = |lo: f64, hi: f64| {
        ObjectBuilder::new()
            .schema_type(Type::Number)
            .minimum(Some(lo))
            .maximum(Some(hi))
    };
    let words = |w: &[&str]| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(w.iter().copied()))
    };
    let fields: [(&str, ObjectBuilder); 10] = [
        ("top_n", int(1, 500)),
        ("rebalance", words(&["daily", "weekly", "monthly", "never"])),
        ("return_period", int(7, 365)),
        ("metric", words(&["return", "sharpe", "sortino"])),
        ("decay_factor", num(0.8, 0.99)),
        ("num_segments", int(10, 50)),
        ("zscore_lookback", int(20, 1260)),
        (
            "zscore_entry",
            ObjectBuilder::new()
                .schema_type(Type::Number)
                .exclusive_minimum(Some(0.0))
                .maximum(Some(10.0)),
        ),
        ("zscore_exit", num(-10.0, 10.0)),
        (
            "include_costs",
            ObjectBuilder::new().schema_type(Type::Boolean),
        ),
    ];
    let mut object = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(
            "1 to 3 parameters, each with 1 to 48 distinct values of its backtest field's type \
             and bounds; at most 48 combinations (the product of the lists' lengths)",
        ))
        .min_properties(Some(1))
        .max_properties(Some(MAX_SWEEP_PARAMETERS))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        .examples([serde_json::json!({"top_n": [5, 10, 20], "return_period": [30, 90]})]);
    for (name, item) in fields {
        object = object.property(
            name,
            ArrayBuilder::new()
                .items(item)
                .min_items(Some(1))
                .max_items(Some(MAX_COMBINATIONS))
                .unique_items(true),
        );
    }
    object.build()
}

/// `POST /api/backtest/walk-forward`: a sweep, chosen on each train split
/// and applied to the next test split.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WalkForwardRequest {
    /// The sweep (the base run, `sweep` and `rank_by`, as for
    /// `POST /api/backtest/sweep`).
    #[serde(flatten)]
    pub sweep: SweepRequest,
    /// Years of each train split, 1 to 20 (default 3).
    #[schema(minimum = 1, maximum = 20, default = 3)]
    pub train_years: Option<i64>,
    /// Years of each test split, 1 to 10 (default 1); the splits move on by
    /// this much.
    #[schema(minimum = 1, maximum = 10, default = 1)]
    pub test_years: Option<i64>,
    /// `rolling` (default) or `expanding` train splits.
    #[schema(value_type = Option<SplitMode>)]
    pub mode: Option<String>,
}

/// The swept parameters in the order the client wrote them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Axes(pub Vec<(String, Vec<Value>)>);

impl Serialize for Axes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Axes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct AxesVisitor;
        impl<'de> Visitor<'de> for AxesVisitor {
            type Value = Axes;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of parameter names to lists of values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Axes, A::Error> {
                let mut axes: Vec<(String, Vec<Value>)> = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    if axes.iter().any(|(n, _)| *n == name) {
                        return Err(de::Error::custom(format!("sweep names '{name}' twice")));
                    }
                    let values: Vec<Value> = map.next_value().map_err(|e| {
                        de::Error::custom(format!("sweep.{name} must be a list of values: {e}"))
                    })?;
                    axes.push((name, values));
                }
                Ok(Axes(axes))
            }
        }
        d.deserialize_map(AxesVisitor)
    }
}

/// The fields of a research body besides the backtest's, and the rest.
#[derive(Default)]
struct Parts {
    sweep: Option<Axes>,
    rank_by: Option<String>,
    train_years: Option<i64>,
    test_years: Option<i64>,
    mode: Option<String>,
    base: Map<String, Value>,
}

/// Reads one body object: the research fields `own` allows out, every
/// other field into `base` (the backtest request, checked later).
struct PartsVisitor {
    walk_forward: bool,
}

impl<'de> Visitor<'de> for PartsVisitor {
    type Value = Parts;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts, A::Error> {
        let mut parts = Parts::default();
        let int = |name: &str, v: Value| -> Result<Option<i64>, A::Error> {
            crate::optional_integer(v).map_err(|e| de::Error::custom(format!("{name}: {e}")))
        };
        let text = |name: &str, v: Value| -> Result<Option<String>, A::Error> {
            match v {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some(s)),
                other => Err(de::Error::custom(format!(
                    "{name} must be a string (got {other})"
                ))),
            }
        };
        while let Some(key) = map.next_key::<String>()? {
            match (key.as_str(), self.walk_forward) {
                ("sweep", _) => parts.sweep = map.next_value::<Option<Axes>>()?,
                ("rank_by", _) => parts.rank_by = text("rank_by", map.next_value()?)?,
                ("train_years", true) => parts.train_years = int(&key, map.next_value()?)?,
                ("test_years", true) => parts.test_years = int(&key, map.next_value()?)?,
                ("mode", true) => parts.mode = text("mode", map.next_value()?)?,
                _ => {
                    let v: Value = map.next_value()?;
                    if parts.base.insert(key.clone(), v).is_some() {
                        return Err(de::Error::custom(format!("{key} is given twice")));
                    }
                }
            }
        }
        Ok(parts)
    }
}

impl Parts {
    fn sweep(self) -> Result<(SweepRequest, Parts), String> {
        let backtest: BacktestRequest =
            serde_json::from_value(Value::Object(self.base.clone())).map_err(|e| e.to_string())?;
        Ok((
            SweepRequest {
                backtest,
                sweep: self.sweep.clone(),
                rank_by: self.rank_by.clone(),
                base: self.base.clone(),
            },
            self,
        ))
    }
}

impl<'de> Deserialize<'de> for SweepRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parts = d.deserialize_map(PartsVisitor {
            walk_forward: false,
        })?;
        parts.sweep().map(|(s, _)| s).map_err(de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for WalkForwardRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parts = d.deserialize_map(PartsVisitor { walk_forward: true })?;
        let (sweep, parts) = parts.sweep().map_err(de::Error::custom)?;
        Ok(WalkForwardRequest {
            sweep,
            train_years: parts.train_years,
            test_years: parts.test_years,
            mode: parts.mode,
        })
    }
}

/// One swept parameter and its values, in the request's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Axis {
    /// The parameter (a backtest field).
    pub name: String,
    /// Its values, as sent.
    pub values: Vec<Value>,
}

/// One combination: its values, its place on the grid and its request.
#[derive(Debug, Clone)]
pub struct Combination {
    /// Each swept parameter's value, by name.
    pub params: Map<String, Value>,
    /// Index of each value on its axis.
    pub cell: Vec<usize>,
    /// The base request with these values, validated.
    pub request: ValidRequest,
}

/// A sweep that passed every check that needs no data.
#[derive(Debug, Clone)]
pub struct ValidSweep {
    /// The base request.
    pub base: ValidRequest,
    /// The axes, in the request's order.
    pub axes: Vec<Axis>,
    /// Every combination, row-major (the last axis varies fastest).
    pub combinations: Vec<Combination>,
    /// The ranking figure.
    pub rank_by: RankBy,
}

impl ValidSweep {
    /// Whether any combination changes the engine's parameters (each
    /// distinct set is one pass of the engine over the universe).
    pub fn engine_passes(&self) -> usize {
        let mut keys: Vec<(u32, u32, u64, &str)> = self
            .combinations
            .iter()
            .map(|c| {
                let p = &c.request.params;
                (
                    p.return_period,
                    p.num_segments,
                    p.decay_factor.to_bits(),
                    c.request.metric.as_str(),
                )
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys.len()
    }
}

/// The walk-forward's own parameters, defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitParams {
    /// Years of each train split.
    pub train_years: u32,
    /// Years of each test split.
    pub test_years: u32,
    /// Rolling or expanding.
    pub mode: SplitMode,
}

impl SweepRequest {
    /// The number of combinations the body asks for, when its `sweep` is
    /// readable (for the quota, before the checks).
    pub fn combinations(&self) -> usize {
        self.sweep
            .as_ref()
            .map(|a| a.0.iter().map(|(_, v)| v.len().max(1)).product())
            .unwrap_or(1)
    }

    /// The base request, the axes and every combination validated, or the
    /// first bad field named.
    pub fn validate(&self) -> Result<ValidSweep, Invalid> {
        let base = self.backtest.validate()?;
        let rank_by = match self.rank_by.as_deref() {
            None => RankBy::default(),
            Some(r) => RankBy::parse(r)?,
        };
        let axes = match &self.sweep {
            Some(a) if !a.0.is_empty() => a,
            _ => {
                return Err(Invalid(format!(
                    "sweep must name 1 to {MAX_SWEEP_PARAMETERS} parameters with their values, \
                     e.g. {{\"top_n\": [5, 10, 20]}}; sweepable: {}",
                    SWEEPABLE.join(", ")
                )))
            }
        };
        if axes.0.len() > MAX_SWEEP_PARAMETERS {
            return Err(Invalid(format!(
                "sweep may vary at most {MAX_SWEEP_PARAMETERS} parameters (got {})",
                axes.0.len()
            )));
        }
        for (name, values) in &axes.0 {
            if !SWEEPABLE.contains(&name.as_str()) {
                return Err(Invalid(format!(
                    "sweep: '{}' cannot be swept; sweepable: {}",
                    crate::quote(name),
                    SWEEPABLE.join(", ")
                )));
            }
            if self.base.get(name).is_some_and(|v| !v.is_null()) {
                return Err(Invalid(format!(
                    "{name} is both a base field and swept; leave it out of the base request"
                )));
            }
            if values.is_empty() {
                return Err(Invalid(format!(
                    "sweep.{name} must list at least one value"
                )));
            }
            if values.len() > MAX_COMBINATIONS {
                return Err(Invalid(format!(
                    "sweep.{name} lists {} values; a sweep runs at most {MAX_COMBINATIONS} \
                     combinations",
                    values.len()
                )));
            }
            for (i, v) in values.iter().enumerate() {
                if values[..i].contains(v) {
                    return Err(Invalid(format!("sweep.{name} lists {v} twice")));
                }
            }
        }
        let total: usize = axes.0.iter().map(|(_, v)| v.len()).product();
        if total > MAX_COMBINATIONS {
            let sizes: Vec<String> = axes.0.iter().map(|(_, v)| v.len().to_string()).collect();
            return Err(Invalid(format!(
                "sweep makes {total} combinations ({}); at most {MAX_COMBINATIONS}",
                sizes.join(" × ")
            )));
        }
        let mut combinations = Vec::with_capacity(total);
        for k in 0..total {
            // Row-major: the last axis varies fastest.
            let mut cell = vec![0; axes.0.len()];
            let mut rest = k;
            for (a, (_, values)) in axes.0.iter().enumerate().rev() {
                cell[a] = rest % values.len();
                rest /= values.len();
            }
            let mut fields = self.base.clone();
            let mut params = Map::new();
            for (a, (name, values)) in axes.0.iter().enumerate() {
                fields.insert(name.clone(), values[cell[a]].clone());
                params.insert(name.clone(), values[cell[a]].clone());
            }
            let request = combination(&fields, &params)?;
            combinations.push(Combination {
                params,
                cell,
                request,
            });
        }
        Ok(ValidSweep {
            base,
            axes: axes
                .0
                .iter()
                .map(|(name, values)| Axis {
                    name: name.clone(),
                    values: values.clone(),
                })
                .collect(),
            combinations,
            rank_by,
        })
    }
}

/// One combination's request, validated as a backtest's; an error names
/// where in `sweep` the bad value sits.
fn combination(
    fields: &Map<String, Value>,
    params: &Map<String, Value>,
) -> Result<ValidRequest, Invalid> {
    let at = || {
        params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let req: BacktestRequest = serde_json::from_value(Value::Object(fields.clone()))
        .map_err(|e| Invalid(format!("sweep ({}): {e}", at())))?;
    req.validate()
        .map_err(|e| Invalid(format!("sweep ({}): {}", at(), e.0)))
}

impl WalkForwardRequest {
    /// The sweep and the splits' parameters, or the first bad field named.
    pub fn validate(&self) -> Result<(ValidSweep, SplitParams), Invalid> {
        let sweep = self.sweep.validate()?;
        let bounded = |name: &str, v: Option<i64>, default: u32, max: u32| match v {
            None => Ok(default),
            Some(v) if (1..=i64::from(max)).contains(&v) => Ok(v as u32),
            Some(v) => Err(Invalid(format!("{name} must be 1 to {max} (got {v})"))),
        };
        let train_years = bounded(
            "train_years",
            self.train_years,
            DEFAULT_TRAIN_YEARS,
            MAX_TRAIN_YEARS,
        )?;
        let test_years = bounded(
            "test_years",
            self.test_years,
            DEFAULT_TEST_YEARS,
            MAX_TEST_YEARS,
        )?;
        let mode = match self.mode.as_deref() {
            None | Some("rolling") => SplitMode::Rolling,
            Some("expanding") => SplitMode::Expanding,
            Some(m) => {
                return Err(Invalid(format!(
                    "mode must be rolling or expanding (got '{}')",
                    crate::quote(m)
                )))
            }
        };
        Ok((
            sweep,
            SplitParams {
                train_years,
                test_years,
                mode,
            },
        ))
    }
}

/// One combination's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SweepRow {
    /// Each swept parameter's value, by name.
    #[schema(value_type = Object)]
    pub params: Map<String, Value>,
    /// Index of each value on its axis (`axes` order).
    pub cell: Vec<usize>,
    /// The `rank_by` figure; null where undefined.
    pub score: Option<f64>,
    /// 1 for the best score; null where `score` is.
    pub rank: Option<u32>,
    /// The run's metrics, as `POST /api/backtest` answers them.
    pub metrics: MetricsBody,
}

/// About a sweep or walk-forward.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResearchMetadata {
    /// Strategy name.
    pub strategy: String,
    /// Its version.
    pub strategy_version: String,
    /// The segmentation engine's version.
    pub engine_version: String,
    /// First date of the runs.
    pub start_date: NaiveDate,
    /// Last date.
    pub end_date: NaiveDate,
    /// Assets in the runs' universe (the most any combination used).
    pub assets_count: usize,
    /// Combinations run.
    pub combinations: usize,
    /// Passes of the engine over the universe: one per distinct set of
    /// engine parameters (`return_period`, `num_segments`, `decay_factor`,
    /// `metric`); combinations that share one share its signals.
    pub signal_passes: usize,
    /// Assets whose signals came from the cache, over all passes.
    pub signals_cached: usize,
    /// Returns per year of the runs' calendar.
    pub periods_per_year: u32,
    /// Whether trading costs were charged (the base request's).
    pub include_costs: bool,
    /// When it was computed.
    pub calculated_at: chrono::DateTime<chrono::Utc>,
}

/// A parameter sweep: one row per combination and the grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SweepResponse {
    /// The ranking figure.
    pub rank_by: RankBy,
    /// The swept parameters and their values, in the request's order.
    pub axes: Vec<Axis>,
    /// One per combination, row-major over `axes` (the last varies
    /// fastest).
    pub rows: Vec<SweepRow>,
    /// Index into `rows` of the best score; null when no score is defined.
    pub best: Option<usize>,
    /// About the runs.
    pub metadata: ResearchMetadata,
}

/// The figures a walk-forward compares in and out of sample.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct SplitMetrics {
    /// Compounded return over the span.
    pub total_return: Option<f64>,
    /// Compound annual growth rate.
    pub cagr: Option<f64>,
    /// Annualised Sharpe ratio.
    pub sharpe_ratio: Option<f64>,
    /// Annualised Sortino ratio.
    pub sortino_ratio: Option<f64>,
    /// Worst peak-to-trough fall (<= 0).
    pub max_drawdown: Option<f64>,
    /// `cagr / abs(max_drawdown)`.
    pub calmar_ratio: Option<f64>,
}

impl From<&MetricsBody> for SplitMetrics {
    fn from(m: &MetricsBody) -> Self {
        SplitMetrics {
            total_return: m.total_return,
            cagr: m.cagr,
            sharpe_ratio: m.sharpe_ratio,
            sortino_ratio: m.sortino_ratio,
            max_drawdown: m.max_drawdown,
            calmar_ratio: m.calmar_ratio,
        }
    }
}

/// One split of a walk-forward.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Split {
    /// First date of the train split.
    pub train_start: NaiveDate,
    /// Last date of the train split.
    pub train_end: NaiveDate,
    /// First date of the test split.
    pub test_start: NaiveDate,
    /// Last date of the test split.
    pub test_end: NaiveDate,
    /// The combination with the best `rank_by` on the train split.
    #[schema(value_type = Object)]
    pub chosen: Map<String, Value>,
    /// Its figures on the train split.
    pub in_sample: SplitMetrics,
    /// Its figures on the test split.
    pub out_of_sample: SplitMetrics,
}

/// A walk-forward: each split's choice, and the stitched out-of-sample
/// curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WalkForwardResponse {
    /// Rolling or expanding.
    pub mode: SplitMode,
    /// Years of each train split.
    pub train_years: u32,
    /// Years of each test split.
    pub test_years: u32,
    /// The ranking figure.
    pub rank_by: RankBy,
    /// The swept parameters and their values.
    pub axes: Vec<Axis>,
    /// The splits in date order.
    pub splits: Vec<Split>,
    /// The test splits' daily returns chained from the initial capital.
    pub equity_curve: Vec<EquityPoint>,
    /// The mean over the splits of the chosen combination's train figures.
    pub in_sample: SplitMetrics,
    /// The figures of `equity_curve`.
    pub out_of_sample: SplitMetrics,
    /// `out_of_sample[rank_by] / in_sample[rank_by]` when both are defined
    /// and the in-sample figure is positive: near 1 the choice held up out
    /// of sample, far below 1 the sweep's winners were partly luck.
    pub efficiency: Option<f64>,
    /// About the runs.
    pub metadata: ResearchMetadata,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(json: &str) -> Result<ValidSweep, String> {
        let r: SweepRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
        r.validate().map_err(|e| e.0)
    }

    #[test]
    fn axes_keep_the_order_written_and_rows_are_row_major() {
        let s =
            sweep(r#"{"sweep": {"top_n": [5, 10], "rebalance": ["weekly", "monthly", "daily"]}}"#)
                .unwrap();
        assert_eq!(s.axes[0].name, "top_n");
        assert_eq!(s.axes[1].name, "rebalance");
        assert_eq!(s.combinations.len(), 6);
        assert_eq!(s.combinations[1].cell, vec![0, 1]);
        assert_eq!(s.combinations[3].cell, vec![1, 0]);
        assert_eq!(s.combinations[3].request.params.top_n, 10);
        assert_eq!(
            s.combinations[3].request.params.rebalance,
            forecast_backtest::Rebalance::Weekly
        );
        assert_eq!(s.engine_passes(), 1);
    }

    #[test]
    fn engine_parameters_count_passes() {
        let s = sweep(r#"{"sweep": {"return_period": [30, 90], "top_n": [5, 10]}}"#).unwrap();
        assert_eq!(s.engine_passes(), 2);
    }

    #[test]
    fn every_bound_names_its_field() {
        let cases = [
            (r#"{}"#, "sweep must name"),
            (r#"{"sweep": {}}"#, "sweep must name"),
            (
                r#"{"sweep": {"strategy": ["topn"]}}"#,
                "'strategy' cannot be swept",
            ),
            (r#"{"sweep": {"top_n": []}}"#, "sweep.top_n must list"),
            (
                r#"{"sweep": {"top_n": [5, 5]}}"#,
                "sweep.top_n lists 5 twice",
            ),
            (
                r#"{"top_n": 5, "sweep": {"top_n": [5]}}"#,
                "both a base field and swept",
            ),
            (r#"{"sweep": {"top_n": [0]}}"#, "sweep (top_n=0): top_n"),
            (r#"{"sweep": {"top_n": ["x"]}}"#, "sweep (top_n=\"x\")"),
            (r#"{"sweep": {"top_n": 5}}"#, "sweep.top_n must be a list"),
            (
                r#"{"sweep": {"top_n": [1]}, "rank_by": "alpha"}"#,
                "rank_by must be one of",
            ),
            (
                r#"{"sweep": {"top_n": [1]}, "bogus": 1}"#,
                "unknown field `bogus`",
            ),
            (
                r#"{"sweep": {"top_n": [1]}, "train_years": 3}"#,
                "unknown field `train_years`",
            ),
            (
                r#"{"sweep": {"top_n": [1,2,3,4,5,6,7], "return_period": [7,8,9,10,11,12,13]}}"#,
                "sweep makes 49 combinations (7 × 7); at most 48",
            ),
            (
                r#"{"sweep": {"top_n": [1], "rebalance": ["daily"], "metric": ["return"], "num_segments": [20]}}"#,
                "at most 3 parameters",
            ),
        ];
        for (body, want) in cases {
            let got = sweep(body).err().unwrap_or_default();
            assert!(got.contains(want), "{body}: {got}");
        }
    }

    #[test]
    fn walk_forward_bounds() {
        let wf = |json: &str| -> Result<SplitParams, String> {
            let r: WalkForwardRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
            r.validate().map(|(_, p)| p).map_err(|e| e.0)
        };
        let ok = wf(r#"{"sweep": {"top_n": [5]}}"#).unwrap();
        assert_eq!(
            (ok.train_years, ok.test_years, ok.mode),
            (3, 1, SplitMode::Rolling)
        );
        let e = wf(r#"{"sweep": {"top_n": [5]}, "train_years": 0}"#).unwrap_err();
        assert!(e.contains("train_years must be 1 to 20"), "{e}");
        let e = wf(r#"{"sweep": {"top_n": [5]}, "test_years": 11}"#).unwrap_err();
        assert!(e.contains("test_years must be 1 to 10"), "{e}");
        let e = wf(r#"{"sweep": {"top_n": [5]}, "mode": "random"}"#).unwrap_err();
        assert!(e.contains("mode must be rolling or expanding"), "{e}");
        let e = wf(r#"{"sweep": {"top_n": [5]}, "train_years": 2.5}"#).unwrap_err();
        assert!(e.contains("train_years"), "{e}");
    }

    #[test]
    fn cost_is_per_combination_with_a_floor() {
        assert_eq!(cost(1), MIN_COST);
        assert_eq!(cost(24), 24);
        assert_eq!(cost(48), 48);
    }
}

/// `GET /api/progress/{id}`: how far a run started with `Progress-Id: id`
/// has come, while it lasts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProgressBody {
    /// `waiting` (for the heavy-work budget or plugin slots), `loading`
    /// (histories, with the signals computed beside them), `running` (the
    /// strategy over the calendar, `done` of `total` rows), `combinations`
    /// (a sweep's or walk-forward's, `done` of `total`) or `simulating` (a
    /// Monte Carlo's paths).
    #[schema(example = "running")]
    pub phase: String,
    /// Steps of the phase done.
    pub done: u64,
    /// Steps of the phase (0 when not counted).
    pub total: u64,
    /// `done / total`, null when not counted.
    pub fraction: Option<f64>,
    /// Milliseconds since the run was accepted.
    pub elapsed_ms: u64,
}
