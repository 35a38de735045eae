//! `POST /api/backtest`: the request body (every field optional, unknown
//! fields refused, every bound documented and checked) and the response.

use std::collections::BTreeMap;

use crate::Invalid;
use chrono::NaiveDate;
use forecast_backtest as bt;
use forecast_domain::{Category, Metric};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Default strategy.
pub const DEFAULT_STRATEGY: &str = "topn";
/// Default strategy of a request with `weights`.
pub const WEIGHTS_STRATEGY: &str = "portfolio";
/// Years before `end_date` a window starts at when `start_date` is absent.
pub const DEFAULT_YEARS: u32 = 10;
/// Most tickers one request may name.
pub const MAX_TICKERS: usize = 3_000;

/// Most benchmarks a request may name by ticker.
pub const MAX_BENCHMARKS: usize = 3;

/// The benchmark a run gets without `benchmarks`, where its prices cover
/// the window.
pub const DEFAULT_BENCHMARK: &str = "^GSPC";
/// Most trades one response body carries: the first ones in date order
/// (`metadata.trades_total` counts them all, `metadata.trades_truncated`
/// says when some were left out). A daily long-short of 2 × 500 positions
/// over a century makes millions of fills, hundreds of MB of JSON.
pub const MAX_TRADES: usize = 10_000;
/// The step `decay_factor` is rounded to before it keys the signal cache
/// and reaches the engine and the strategy (`metadata.decay_factor` is the
/// value used): 191 distinct values over 0.8–0.99 instead of one per bit
/// pattern. At 0.99 the EMA's memory `1/(1-d)` moves by at most 5 % per
/// step (0.9895 → 0.99: 95 → 100 observations), within the noise of the
/// engine's own estimates.
pub const DECAY_STEP: f64 = 0.001;

/// `decay` rounded to the nearest multiple of [`DECAY_STEP`] (0.95 stays
/// the literal 0.95).
pub fn quantise_decay(decay: f64) -> f64 {
    (decay / DECAY_STEP).round() / (1.0 / DECAY_STEP).round()
}

/// The request body. Every field is optional; unknown fields are refused
/// so that a misspelt parameter never silently takes its default.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BacktestRequest {
    /// Strategy plugin name (`GET /api/strategies` lists them).
    #[schema(min_length = 1, default = "topn", example = "topn")]
    pub strategy: Option<String>,
    /// Assets to trade (known, active tickers, each once); wins over `category`.
    #[schema(schema_with = tickers_schema)]
    pub tickers: Option<Vec<String>>,
    /// Benchmarks by ticker (known, active assets, each once, at most 3),
    /// beside the two equal-weight baskets: each is bought with the
    /// initial capital at its last close on or before the window's first
    /// day and held, without costs; its curve is in `benchmarks` and its
    /// figures in `metrics.relative`, under its ticker. Default: `^GSPC`
    /// when its prices cover the window; `[]` for none. One without a price
    /// on or before the window's first day, or without one after it inside
    /// the window, is left out and named in `metadata.benchmarks_left_out`
    /// (a history that ends inside the window is held flat after its last
    /// close). Sweeps and walk-forward runs take
    /// the field and ignore it.
    #[schema(schema_with = benchmarks_schema)]
    pub benchmarks: Option<Vec<String>>,
    /// Portfolio weights by ticker (since WIT 1.11.0), for a strategy that
    /// takes them (`portfolio`, the default strategy when `weights` is
    /// given): each a share of equity in (0, 1], together at most 1 (the
    /// rest stays in cash), at most 3,000 assets. The universe is these
    /// tickers unless `tickers` names a wider one. `portfolio` trades back to
    /// them at every rebalance date; with `rebalance: "never"` it buys them
    /// once and holds (buy and hold). With `weights`, `top_n` defaults to 1.
    #[schema(schema_with = weights_schema)]
    pub weights: Option<BTreeMap<String, f64>>,
    /// Trade one category's active assets.
    #[schema(value_type = Option<Category>)]
    pub category: Option<String>,
    /// Equity at the start.
    #[schema(exclusive_minimum = 0.0, maximum = 1e12, default = 100000.0)]
    pub initial_capital: Option<f64>,
    /// Positions.
    #[serde(default, deserialize_with = "crate::optional_integer")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 500, default = 10)]
    pub top_n: Option<i64>,
    /// How often the strategy rebalances.
    #[schema(value_type = Option<Rebalance>, default = "monthly")]
    pub rebalance: Option<String>,
    /// Engine horizon in calendar days.
    #[serde(default, deserialize_with = "crate::optional_integer")]
    #[schema(value_type = Option<i64>, minimum = 7, maximum = 365, default = 90)]
    pub return_period: Option<i64>,
    /// Engine EMA decay, rounded to a multiple of 0.001 before use
    /// (`metadata.decay_factor` is the value used).
    #[schema(minimum = 0.8, maximum = 0.99, default = 0.95)]
    pub decay_factor: Option<f64>,
    /// Engine buckets.
    #[serde(default, deserialize_with = "crate::optional_integer")]
    #[schema(value_type = Option<i64>, minimum = 10, maximum = 50, default = 20)]
    pub num_segments: Option<i64>,
    /// The engine's forward metric.
    #[schema(value_type = Option<Metric>, default = "return")]
    pub metric: Option<String>,
    /// First date (default: 10 years before the end); on or before
    /// `end_date` when both are given.
    #[schema(value_type = Option<NaiveDate>, format = Date)]
    pub start_date: Option<String>,
    /// Last date (default: the universe's latest date).
    #[schema(value_type = Option<NaiveDate>, format = Date)]
    pub end_date: Option<String>,
    /// Charge trading costs.
    #[schema(default = true)]
    pub include_costs: Option<bool>,
    /// z-score window in rows.
    #[serde(default, deserialize_with = "crate::optional_integer")]
    #[schema(value_type = Option<i64>, minimum = 20, maximum = 1260, default = 252)]
    pub zscore_lookback: Option<i64>,
    /// z-score entry threshold.
    #[schema(exclusive_minimum = 0.0, maximum = 10.0, default = 2.0)]
    pub zscore_entry: Option<f64>,
    /// z-score exit threshold.
    #[schema(minimum = -10.0, maximum = 10.0, default = 0.0)]
    pub zscore_exit: Option<f64>,
}

/// `benchmarks`: 0 to [`MAX_BENCHMARKS`] distinct non-empty symbols.
fn benchmarks_schema() -> utoipa::openapi::schema::Array {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaType, Type};
    ArrayBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(64))
                .examples(["^GSPC"]),
        )
        .max_items(Some(MAX_BENCHMARKS))
        .unique_items(true)
        .build()
}

/// `weights`: 1 to [`MAX_TICKERS`] tickers, each a share in (0, 1] (their
/// sum, at most 1, is checked by the server).
fn weights_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, SchemaType, Type};
    let share = ObjectBuilder::new()
        .schema_type(Type::Number)
        .exclusive_minimum(Some(0.0))
        .maximum(Some(1.0));
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Object, Type::Null]))
        .additional_properties(Some(AdditionalProperties::RefOr(share.into())))
        .min_properties(Some(1))
        .max_properties(Some(MAX_TICKERS))
        .property_names(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(64)),
        ))
        .examples([serde_json::json!({"^GSPC": 0.6, "^IXIC": 0.3})])
        .description(Some(
            "Portfolio weights by ticker, for a strategy that takes them (`portfolio`, the \
             default strategy when `weights` is given): each a share of equity in (0, 1], \
             together at most 1 (the rest stays in cash). The universe is these tickers unless \
             `tickers` names a wider one. `portfolio` trades back to them at every rebalance \
             date; with `rebalance: \"never\"` it buys them once and holds. With `weights`, \
             `top_n` defaults to 1.",
        ))
        .build()
}

/// `tickers`: 1 to [`MAX_TICKERS`] distinct non-empty symbols.
fn tickers_schema() -> utoipa::openapi::schema::Array {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaType, Type};
    ArrayBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(64))
                .examples(["AAPL"]),
        )
        .min_items(Some(1))
        .max_items(Some(MAX_TICKERS))
        .unique_items(true)
        .build()
}

/// The rebalance schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Rebalance {
    /// Every row.
    Daily,
    /// The first row of each ISO week.
    Weekly,
    /// The first row of each month.
    Monthly,
    /// The window's first row only: the portfolio is bought once and held
    /// (a strategy of WIT 1.10 or earlier is told `monthly` and called once).
    Never,
}

/// Which assets a run trades.
#[derive(Debug, Clone, PartialEq)]
pub enum UniverseSpec {
    /// These tickers (active, known).
    Tickers(Vec<String>),
    /// Every active asset of a category.
    Category(Category),
    /// Every active asset.
    All,
}

/// A request that passed every check that needs no data.
#[derive(Debug, Clone)]
pub struct ValidRequest {
    /// Strategy name.
    pub strategy: String,
    /// The universe.
    pub universe: UniverseSpec,
    /// Explicit first date.
    pub start_date: Option<NaiveDate>,
    /// Explicit last date.
    pub end_date: Option<NaiveDate>,
    /// Parameters with defaults filled in.
    pub params: bt::RunParams,
    /// The engine metric, as named on the wire.
    pub metric: Metric,
    /// Benchmarks by ticker (`None`: [`DEFAULT_BENCHMARK`] where it
    /// covers the window).
    pub benchmarks: Option<Vec<String>>,
    /// Portfolio weights by ticker, checked, in ticker order.
    pub weights: Option<Vec<(String, f64)>>,
}

/// An integer field as `u32`, its default when absent (bounds are checked
/// by [`bt::RunParams::validate`]).
fn int_or(name: &str, v: Option<i64>, default: u32) -> Result<u32, String> {
    match v {
        None => Ok(default),
        Some(v) => u32::try_from(v).map_err(|_| format!("{name} is out of range (got {v})")),
    }
}

fn date(name: &str, raw: &Option<String>) -> Result<Option<NaiveDate>, String> {
    raw.as_deref()
        .map(|r| {
            NaiveDate::parse_from_str(r.trim(), "%Y-%m-%d").map_err(|_| {
                format!(
                    "{name} must be a date in YYYY-MM-DD format (got '{}')",
                    crate::quote(r)
                )
            })
        })
        .transpose()
}

impl BacktestRequest {
    /// `weights`, checked: 1 to [`MAX_TICKERS`] non-empty tickers, each a
    /// finite weight in (0, 1], together at most 1.
    fn valid_weights(&self) -> Result<Option<Vec<(String, f64)>>, Invalid> {
        let Some(map) = &self.weights else {
            return Ok(None);
        };
        if map.is_empty() || map.len() > MAX_TICKERS {
            return Err(Invalid::from(format!(
                "weights must name 1 to {MAX_TICKERS} assets (got {})",
                map.len()
            )));
        }
        for (t, &w) in map {
            if t.trim().is_empty() {
                return Err("weights must not hold an empty ticker".into());
            }
            if !(w.is_finite() && w > 0.0 && w <= 1.0) {
                return Err(Invalid::from(format!(
                    "weights['{}'] must be a share of equity in (0, 1] (got {w})",
                    crate::quote(t)
                )));
            }
        }
        let total: f64 = map.values().sum();
        if total > 1.0 + 1e-9 {
            return Err(Invalid::from(format!(
                "weights add up to {total}; they may add up to at most 1 (the rest is cash)"
            )));
        }
        Ok(Some(map.iter().map(|(t, &w)| (t.clone(), w)).collect()))
    }

    /// The universe: `tickers`, else the weighted tickers, else `category`,
    /// else every active asset.
    fn valid_universe(&self, weights: Option<&[(String, f64)]>) -> Result<UniverseSpec, Invalid> {
        let universe = match (&self.tickers, weights, &self.category) {
            (Some(tickers), _, _) => {
                if tickers.is_empty() {
                    return Err("tickers must name at least one asset (or leave it out)".into());
                }
                if tickers.len() > MAX_TICKERS {
                    return Err(Invalid::from(format!(
                        "tickers may name at most {MAX_TICKERS} assets (got {})",
                        tickers.len()
                    )));
                }
                let mut seen = std::collections::HashSet::new();
                for t in tickers {
                    if !seen.insert(t.as_str()) {
                        return Err(Invalid::from(format!("tickers names '{t}' twice")));
                    }
                }
                if let Some((t, _)) = weights
                    .into_iter()
                    .flatten()
                    .find(|(t, _)| !seen.contains(t.as_str()))
                {
                    return Err(Invalid::from(format!(
                        "weights names '{}', which tickers does not; weight only assets of the universe",
                        crate::quote(t)
                    )));
                }
                UniverseSpec::Tickers(tickers.clone())
            }
            (None, Some(_), Some(_)) => return Err(
                "weights and category cannot go together: the weighted tickers are the universe"
                    .into(),
            ),
            (None, Some(w), None) => {
                UniverseSpec::Tickers(w.iter().map(|(t, _)| t.clone()).collect())
            }
            (None, None, Some(c)) => UniverseSpec::Category(c.parse().map_err(|_| {
                let names: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
                format!(
                    "unknown category '{c}'; expected one of: {}",
                    names.join(", ")
                )
            })?),
            (None, None, None) => UniverseSpec::All,
        };
        Ok(universe)
    }

    /// `benchmarks`, checked: at most [`MAX_BENCHMARKS`] distinct
    /// non-empty tickers.
    fn valid_benchmarks(&self) -> Result<Option<Vec<String>>, Invalid> {
        let Some(list) = &self.benchmarks else {
            return Ok(None);
        };
        if list.len() > MAX_BENCHMARKS {
            return Err(Invalid::from(format!(
                "benchmarks may name at most {MAX_BENCHMARKS} assets (got {})",
                list.len()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        for t in list {
            if t.trim().is_empty() {
                return Err("benchmarks must not hold an empty ticker".into());
            }
            if !seen.insert(t.as_str()) {
                return Err(Invalid::from(format!(
                    "benchmarks names '{}' twice",
                    crate::quote(t)
                )));
            }
        }
        Ok(Some(list.clone()))
    }

    /// Checks every field that can be checked without data; the error
    /// names the field and what it accepts.
    pub fn validate(&self) -> Result<ValidRequest, Invalid> {
        let weights = self.valid_weights()?;
        let strategy = self.strategy.clone().unwrap_or_else(|| {
            match weights {
                Some(_) => WEIGHTS_STRATEGY,
                None => DEFAULT_STRATEGY,
            }
            .to_string()
        });
        let rebalance = match self.rebalance.as_deref() {
            None => bt::Rebalance::Monthly,
            Some(r) => bt::Rebalance::parse(r).ok_or_else(|| {
                format!(
                    "rebalance must be one of daily, weekly, monthly, never (got '{}')",
                    crate::quote(r)
                )
            })?,
        };
        let metric: Metric = match self.metric.as_deref() {
            None => Metric::Return,
            Some(m) => m.parse()?,
        };
        let defaults = bt::RunParams::default();
        let params = bt::RunParams {
            // `portfolio` does not use it, and the accounting refuses more
            // positions than tradeable assets.
            top_n: int_or(
                "top_n",
                self.top_n,
                if weights.is_some() { 1 } else { defaults.top_n },
            )?,
            rebalance,
            return_period: int_or("return_period", self.return_period, defaults.return_period)?,
            num_segments: int_or("num_segments", self.num_segments, defaults.num_segments)?,
            decay_factor: self.decay_factor.unwrap_or(defaults.decay_factor),
            metric: match metric {
                Metric::Return => bt::Metric::Return,
                Metric::Sharpe => bt::Metric::Sharpe,
                Metric::Sortino => bt::Metric::Sortino,
            },
            initial_capital: self.initial_capital.unwrap_or(defaults.initial_capital),
            include_costs: self.include_costs.unwrap_or(defaults.include_costs),
            zscore_lookback: int_or(
                "zscore_lookback",
                self.zscore_lookback,
                defaults.zscore_lookback,
            )?,
            zscore_entry: self.zscore_entry.unwrap_or(defaults.zscore_entry),
            zscore_exit: self.zscore_exit.unwrap_or(defaults.zscore_exit),
        };
        params.validate().map_err(|e| e.message)?;
        // Bounds on the value sent, then the value used everywhere. The
        // bounds are multiples of the step, so the rounded value stays
        // inside them.
        let params = bt::RunParams {
            decay_factor: quantise_decay(params.decay_factor),
            ..params
        };
        let start_date = date("start_date", &self.start_date)?;
        let end_date = date("end_date", &self.end_date)?;
        if let (Some(s), Some(e)) = (start_date, end_date) {
            if s > e {
                return Err(Invalid::from(format!(
                    "start_date {s} is after end_date {e}; start_date must be on or before end_date"
                )));
            }
        }
        let universe = self.valid_universe(weights.as_deref())?;
        Ok(ValidRequest {
            strategy,
            universe,
            start_date,
            end_date,
            params,
            metric,
            benchmarks: self.valid_benchmarks()?,
            weights,
        })
    }
}

/// One point of the equity curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EquityPoint {
    /// Date.
    pub date: NaiveDate,
    /// Portfolio value at that date's close.
    pub equity: f64,
}

/// One fill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TradeBody {
    /// Fill date.
    pub date: NaiveDate,
    /// Asset.
    pub ticker: String,
    /// `BUY` or `SELL`.
    pub side: String,
    /// Quantity, > 0.
    pub qty: f64,
    /// Reference close of the fill.
    pub price: f64,
    /// Trading cost charged on the fill (0 without `include_costs`).
    pub cost: f64,
    /// Profit or loss the fill realised, by the average-cost method, before
    /// costs: `null` for a fill that opens or grows a position; for one that
    /// shrinks, closes or reverses it, the closed quantity times (this price
    /// − the position's average entry price), the opposite for a short.
    /// Over a run without truncated trades, the realised P&L less all
    /// costs, plus what the open positions gained, is the equity's change.
    pub realised_pnl: Option<f64>,
}

/// Metrics of the equity curve; `null` where undefined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MetricsBody {
    /// `E_N/E_0 - 1`.
    pub total_return: Option<f64>,
    /// Compound annual growth rate.
    pub cagr: Option<f64>,
    /// Annualised Sharpe ratio of the curve's returns.
    pub sharpe_ratio: Option<f64>,
    /// Annualised Sortino ratio of the curve's returns.
    pub sortino_ratio: Option<f64>,
    /// Worst peak-to-trough fall (<= 0).
    pub max_drawdown: Option<f64>,
    /// Equity at the end.
    pub final_equity: f64,
    /// Returns in the curve / periods per year.
    pub years: f64,
    /// Sum of trading costs.
    pub total_costs: f64,
    /// Costs as a percentage of the initial capital.
    pub cost_drag_pct: f64,
    /// Fills.
    pub total_trades: u64,
    /// `cagr / abs(max_drawdown)`; null without a drawdown.
    pub calmar_ratio: Option<f64>,
    /// Root mean square of the daily drawdowns, `sqrt(sum(dd^2) / (N - 1))`.
    pub ulcer_index: Option<f64>,
    /// Calendar days of the longest drawdown, from the first close under a
    /// peak to the last, inclusive (0 without one).
    pub longest_drawdown_days: i64,
    /// Calendar days from that drawdown's lowest close to the close back at
    /// its peak; null while it has not recovered.
    pub longest_drawdown_recovery_days: Option<i64>,
    /// 95 % value at risk of a daily return, normal: `mean + sd * z(0.05)`
    /// (negative: a loss).
    pub var_95: Option<f64>,
    /// 95 % conditional value at risk (expected shortfall), normal:
    /// `mean - sd * φ(z(0.05)) / 0.05`, the mean of the returns beyond
    /// `var_95` under the same normal distribution.
    pub cvar_95: Option<f64>,
    /// Share of days that began with money invested, 0 to 1.
    pub exposure: Option<f64>,
    /// Share of the portfolio traded per year, one-sided: the value of all
    /// fills / 2 / mean equity / years.
    pub turnover: Option<f64>,
    /// Best calendar month's compounded return.
    pub best_month: Option<f64>,
    /// Worst calendar month's compounded return.
    pub worst_month: Option<f64>,
    /// Share of calendar months with a positive return among those with a
    /// non-zero one.
    pub winning_months: Option<f64>,
    /// Against each benchmark of `benchmarks`, by name.
    pub relative: BTreeMap<String, RelativeMetrics>,
}

/// The equity curve against one benchmark, from daily simple returns `r`
/// (the curve's) and `b` (the benchmark's) on the same dates, `P` returns
/// per year.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RelativeMetrics {
    /// `cov(r, b) / var(b)`; null when the benchmark never moved.
    pub beta: Option<f64>,
    /// `(mean(r) - beta * mean(b)) * P`.
    pub alpha: Option<f64>,
    /// `sd(r - b) * sqrt(P)`.
    pub tracking_error: Option<f64>,
    /// `mean(r - b) / sd(r - b) * sqrt(P)`; null when the two never
    /// differ.
    pub information_ratio: Option<f64>,
}

/// A benchmark's curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BenchmarkBody {
    /// Same dates as the equity curve.
    pub dates: Vec<NaiveDate>,
    /// Its equity.
    pub equity: Vec<f64>,
}

/// `metadata` of a backtest: the spec's four fields and what a client needs
/// to reproduce the numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BacktestMetadata {
    /// Assets in the universe (300 rows by the end and a row in the window).
    pub assets_count: usize,
    /// Price rows of those assets inside the window.
    pub data_points: u64,
    /// Decisions taken.
    pub rebalance_dates: u32,
    /// When this answer was computed.
    pub calculated_at: chrono::DateTime<chrono::Utc>,
    /// Strategy name.
    pub strategy: String,
    /// Strategy version.
    pub strategy_version: String,
    /// Engine version that produced the signals.
    pub engine_version: String,
    /// First calendar date.
    pub start_date: NaiveDate,
    /// Last calendar date.
    pub end_date: NaiveDate,
    /// 365 when the calendar has weekend dates, else 252.
    pub periods_per_year: u32,
    /// Whether costs were charged.
    pub include_costs: bool,
    /// Cost per side in basis points, per category of the universe.
    pub cost_bps: BTreeMap<String, f64>,
    /// Assets whose signals came from the signal cache.
    pub signals_cached: usize,
    /// The engine decay used: the request's `decay_factor` rounded to a
    /// multiple of 0.001.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decay_factor: Option<f64>,
    /// Fills the run made (`metrics.total_trades`); `trades` holds at most
    /// the first 10,000 of them, in date order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trades_total: Option<u64>,
    /// True when `trades` holds only the first 10,000 fills of
    /// `trades_total`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trades_truncated: Option<bool>,
    /// Provenance of the prices of the `assets_count` assets used.
    pub data_sources: crate::assets::DataSources,
    /// Assets of the requested universe the run could not use for lack of
    /// data in its window (all of them, however many).
    pub unusable_assets_count: usize,
    /// The first 500 of them by ticker, each with the reason.
    pub unusable_assets: Vec<UnusableAsset>,
    /// What each plugin of the run used: the strategy's calls (the
    /// engine's signals are computed once per asset and cached, and are
    /// not counted here).
    #[serde(default)]
    pub plugin_usage: Vec<PluginUsage>,
    /// Benchmarks asked for by ticker (or the default one) without a price
    /// on or before the window's first day or without one after it inside
    /// the window, so they are not in `benchmarks`.
    #[serde(default)]
    pub benchmarks_left_out: Vec<String>,
}

/// What one plugin used in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PluginUsage {
    /// `kind/name@version`.
    #[schema(example = "strategy/dip-buyer@0.1.0")]
    pub plugin: String,
    /// Calls made (`start` and one per rebalance).
    pub calls: u64,
    /// Fuel (wasmtime's instruction units) used by all calls; null for a
    /// plugin that is not metered (built-ins). Uploaded strategies are
    /// metered: each call may use 50,000,000 units plus 1,000,000 per asset
    /// of its input, else the run stops with 422 naming the plugin and the
    /// budget; the same request uses the same fuel on every run.
    pub fuel: Option<u64>,
    /// Time spent in the guest, milliseconds.
    pub guest_ms: f64,
    /// The most linear memory its instance held, bytes.
    pub peak_memory_bytes: u64,
    /// Lines it wrote through `host-log` beyond the run's log budget (200
    /// lines, 64 KiB), dropped.
    #[serde(default)]
    pub log_lines_dropped: u64,
}

/// At most this many `unusable_assets` are listed.
pub const MAX_UNUSABLE_LISTED: usize = 500;

/// An asset of the universe a backtest could not use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UnusableAsset {
    /// Its ticker.
    pub ticker: String,
    /// The date of its last price (null: no prices stored).
    pub last_price_date: Option<NaiveDate>,
    /// Why it could not be used.
    pub reason: String,
}

/// The response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BacktestResponse {
    /// Equity at every calendar date.
    pub equity_curve: Vec<EquityPoint>,
    /// The fills in date order: every one, or the first 10,000 when
    /// `metadata.trades_truncated` (`metadata.trades_total` counts them
    /// all).
    pub trades: Vec<TradeBody>,
    /// Metrics of the equity curve.
    pub metrics: MetricsBody,
    /// `equal_weight_buy_hold` and `equal_weight_rebalanced`.
    pub benchmarks: BTreeMap<String, BenchmarkBody>,
    /// About the run.
    pub metadata: BacktestMetadata,
}

/// Most paths a Monte Carlo draws.
pub const MONTE_CARLO_MAX_RUNS: u32 = 5_000;
/// Paths drawn when `runs` is absent.
pub const MONTE_CARLO_DEFAULT_RUNS: u32 = 1_000;
/// Longest mean block of the bootstrap, in days.
pub const MONTE_CARLO_MAX_BLOCK_DAYS: u32 = 250;
/// Mean block length when `block_days` is absent (about a trading month).
pub const MONTE_CARLO_DEFAULT_BLOCK_DAYS: u32 = 20;
/// Seed when `seed` is absent.
pub const MONTE_CARLO_DEFAULT_SEED: u64 = 1;

/// `POST /api/backtest/monte-carlo`: a backtest request (every field of
/// `BacktestRequest`, the same bounds) plus the simulation's own. Read as
/// an object whose three own fields are taken out first; the rest must be
/// a `BacktestRequest` (unknown fields refused, naming them).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(try_from = "serde_json::Map<String, serde_json::Value>")]
pub struct MonteCarloRequest {
    /// The backtest whose daily returns are resampled.
    #[serde(flatten)]
    pub backtest: BacktestRequest,
    /// Paths to draw, 1 to 5,000 (default 1,000).
    #[schema(minimum = 1, maximum = 5000, example = 1000)]
    pub runs: Option<i64>,
    /// Mean length of the resampled blocks in days, 1 to 250 (default 20;
    /// 1 draws single days).
    #[schema(minimum = 1, maximum = 250, example = 20)]
    pub block_days: Option<i64>,
    /// Seed of the draws, 0 to 2^53 (default 1): the same request and
    /// seed give the same figures.
    #[schema(minimum = 0, maximum = 9007199254740992_i64, example = 1)]
    pub seed: Option<i64>,
}

impl TryFrom<serde_json::Map<String, serde_json::Value>> for MonteCarloRequest {
    type Error = String;

    fn try_from(mut map: serde_json::Map<String, serde_json::Value>) -> Result<Self, String> {
        let mut int = |name: &str| -> Result<Option<i64>, String> {
            match map.remove(name) {
                None => Ok(None),
                Some(v) => crate::optional_integer(v).map_err(|e| format!("{name}: {e}")),
            }
        };
        let runs = int("runs")?;
        let block_days = int("block_days")?;
        let seed = int("seed")?;
        let backtest: BacktestRequest =
            serde_json::from_value(serde_json::Value::Object(map)).map_err(|e| e.to_string())?;
        Ok(MonteCarloRequest {
            backtest,
            runs,
            block_days,
            seed,
        })
    }
}

/// The simulation's parameters, defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonteCarloParams {
    /// Paths.
    pub runs: u32,
    /// Mean block length.
    pub block_days: u32,
    /// Seed.
    pub seed: u64,
}

impl MonteCarloRequest {
    /// The backtest and the simulation's parameters, or the first bad
    /// field named.
    pub fn validate(&self) -> Result<(ValidRequest, MonteCarloParams), Invalid> {
        let backtest = self.backtest.validate()?;
        let bounded = |name: &str, v: Option<i64>, default: u32, max: u32| match v {
            None => Ok(default),
            Some(v) if (1..=i64::from(max)).contains(&v) => Ok(v as u32),
            Some(v) => Err(Invalid(format!("{name} must be 1 to {max} (got {v})"))),
        };
        let runs = bounded(
            "runs",
            self.runs,
            MONTE_CARLO_DEFAULT_RUNS,
            MONTE_CARLO_MAX_RUNS,
        )?;
        let block_days = bounded(
            "block_days",
            self.block_days,
            MONTE_CARLO_DEFAULT_BLOCK_DAYS,
            MONTE_CARLO_MAX_BLOCK_DAYS,
        )?;
        let seed = match self.seed {
            None => MONTE_CARLO_DEFAULT_SEED,
            Some(v) if (0..=1_i64 << 53).contains(&v) => v as u64,
            Some(v) => return Err(Invalid(format!("seed must be 0 to 2^53 (got {v})"))),
        };
        Ok((
            backtest,
            MonteCarloParams {
                runs,
                block_days,
                seed,
            },
        ))
    }
}

/// 5th, 50th and 95th percentiles over the paths.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PathSpread {
    /// 5th percentile.
    pub p5: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

/// One date of the fan chart: percentiles of the paths' equity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FanPoint {
    /// The run's date at this day of the paths.
    pub date: NaiveDate,
    /// 5th percentile of equity.
    pub p5: f64,
    /// 25th percentile.
    pub p25: f64,
    /// Median.
    pub p50: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 95th percentile.
    pub p95: f64,
}

/// The Monte Carlo of a backtest: its daily returns reordered by a seeded
/// stationary block bootstrap, `runs` paths as long as the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MonteCarloResponse {
    /// Paths drawn.
    pub runs: u32,
    /// Mean block length used.
    pub block_days: u32,
    /// Seed used.
    pub seed: u64,
    /// Daily returns of the run (and days of each path).
    pub days: usize,
    /// Compound annual growth rate of the paths.
    pub cagr: PathSpread,
    /// Maximum drawdown of the paths (<= 0).
    pub max_drawdown: PathSpread,
    /// Final equity of the paths.
    pub final_equity: PathSpread,
    /// Share of paths ending below the initial capital.
    pub probability_of_loss: f64,
    /// Share of paths whose drawdown went beyond -50 %.
    pub probability_of_drawdown_beyond_50: f64,
    /// Percentiles of equity along the paths, at most 500 dates (every
    /// k-th day of a longer run, the last always).
    pub fan: Vec<FanPoint>,
    /// The metrics of the run itself.
    pub metrics: MetricsBody,
    /// About the run.
    pub metadata: BacktestMetadata,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(json: &str) -> Result<ValidRequest, String> {
        let r: BacktestRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
        r.validate().map_err(|e| e.0)
    }

    #[test]
    fn defaults_are_the_spec_defaults() {
        let v = req("{}").unwrap();
        assert_eq!(v.strategy, "topn");
        assert_eq!(v.universe, UniverseSpec::All);
        assert_eq!(v.params, bt::RunParams::default());
        assert_eq!(v.metric, Metric::Return);
        assert_eq!((v.start_date, v.end_date), (None, None));
    }

    #[test]
    fn every_bound_is_named() {
        for (body, field) in [
            (r#"{"initial_capital": 0}"#, "initial_capital"),
            (r#"{"initial_capital": -5}"#, "initial_capital"),
            (r#"{"top_n": 0}"#, "top_n"),
            (r#"{"top_n": 501}"#, "top_n"),
            (r#"{"rebalance": "hourly"}"#, "rebalance"),
            (r#"{"return_period": 6}"#, "return_period"),
            (r#"{"return_period": 366}"#, "return_period"),
            (r#"{"num_segments": 9}"#, "num_segments"),
            (r#"{"decay_factor": 0.5}"#, "decay_factor"),
            (r#"{"metric": "alpha"}"#, "metric"),
            (r#"{"start_date": "2020-13-01"}"#, "start_date"),
            (r#"{"end_date": "yesterday"}"#, "end_date"),
            (
                r#"{"start_date": "2021-01-01", "end_date": "2020-01-01"}"#,
                "start_date",
            ),
            (r#"{"tickers": []}"#, "tickers"),
            (r#"{"tickers": ["A", "A"]}"#, "tickers"),
            (r#"{"category": "Bonds"}"#, "category"),
            (r#"{"zscore_lookback": 5}"#, "zscore_lookback"),
            (r#"{"zscore_entry": 0}"#, "zscore_entry"),
            (r#"{"zscore_exit": 11}"#, "zscore_exit"),
            (r#"{"top_m": 3}"#, "top_m"),
            (r#"{"top_n": 2.5}"#, "invalid type"),
        ] {
            let err = req(body).unwrap_err();
            assert!(err.contains(field), "{body}: {err}");
        }
    }

    #[test]
    fn integers_may_be_written_with_a_zero_fraction() {
        let v = req(r#"{"top_n": 5.0, "return_period": 30.0, "num_segments": 20.0}"#).unwrap();
        assert_eq!(
            (
                v.params.top_n,
                v.params.return_period,
                v.params.num_segments
            ),
            (5, 30, 20)
        );
        assert!(req(r#"{"top_n": 5.5}"#)
            .unwrap_err()
            .contains("invalid type"));
    }

    #[test]
    fn decay_is_quantised_before_use() {
        assert_eq!(req("{}").unwrap().params.decay_factor, 0.95);
        for (sent, used) in [
            ("0.95", 0.95),
            ("0.9504", 0.95),
            ("0.95049999", 0.95),
            ("0.9506", 0.951),
            ("0.8", 0.8),
            ("0.99", 0.99),
            ("0.98951", 0.99),
            ("0.8123456", 0.812),
        ] {
            let v = req(&format!(r#"{{"decay_factor": {sent}}}"#)).unwrap();
            assert_eq!(v.params.decay_factor, used, "{sent}");
        }
        // Bounds apply to the value sent.
        assert!(req(r#"{"decay_factor": 0.9904}"#).is_err());
        assert!(req(r#"{"decay_factor": 0.7996}"#).is_err());
    }

    #[test]
    fn tickers_win_over_category() {
        let v = req(r#"{"tickers": ["AAPL"], "category": "Crypto"}"#).unwrap();
        assert_eq!(v.universe, UniverseSpec::Tickers(vec!["AAPL".into()]));
        let v = req(r#"{"category": "Crypto"}"#).unwrap();
        assert_eq!(v.universe, UniverseSpec::Category(Category::Crypto));
    }
}

/// One loaded strategy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StrategyItem {
    /// What `strategy` names in a backtest request.
    pub name: String,
    /// Its version.
    pub version: String,
    /// What it does, in its author's words.
    pub description: String,
    /// SHA-256 of the component.
    pub sha256: String,
    /// `builtin` (the server's, the registry's or FORECAST_PLUGIN_DIR's),
    /// `shared` (an author's, runnable by every Premium user) or `private`
    /// (yours, runnable by you only).
    #[serde(default = "builtin")]
    #[schema(example = "builtin")]
    pub visibility: String,
    /// The author's handle (`@u…`) for uploaded strategies; null for built-ins.
    #[serde(default)]
    pub owner: Option<String>,
    /// Key id of the bundle's signer (`ed25519:…`); null when unsigned.
    /// The signer vouches for the bytes, not for the account: anyone may
    /// upload a bundle someone else signed, and `owner` is who did.
    #[serde(default)]
    pub signer: Option<String>,
    /// The stored versions of an uploaded strategy you may run, newest
    /// first (empty for built-ins): all of your own; of another account's,
    /// only those this server's trust policy admits.
    #[serde(default)]
    pub versions: Vec<String>,
    /// Yours: you may share it, pick its version or delete it.
    #[serde(default)]
    pub owned: bool,
    /// What this version used in your recent backtests (your newest 50
    /// runs of it, every replica's); null before your first run. Other
    /// accounts' runs are never counted, so no one reads another's activity.
    #[serde(default)]
    pub resources: Option<ResourceFigures>,
    /// What the component imports, by name (whatever the `strategy` world
    /// does not provide is linked as a trap).
    #[serde(default)]
    pub imports: Vec<String>,
    /// The version of the `forecast:plugins` WIT package the component was
    /// built against (from its imports); null when it imports none of it.
    #[serde(default)]
    #[schema(example = "1.6.0")]
    pub wit_version: Option<String>,
    /// The manifest of an uploaded version: its signed bundle's, or for a
    /// bare component what it reports about itself (no licence or author);
    /// null for built-ins.
    #[serde(default)]
    pub manifest: Option<StrategyManifest>,
}

/// An uploaded strategy version's manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StrategyManifest {
    /// The strategy's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The WIT world (`strategy`).
    pub world: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Its licence, as its author gave it (bundles only).
    #[serde(default)]
    pub licence: Option<String>,
    /// Who wrote it, as its author gave it (bundles only).
    #[serde(default)]
    pub author: Option<String>,
    /// Hex SHA-256 of the component.
    pub sha256: String,
}

/// Min / mean / max of what a strategy used per backtest over its recent
/// runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResourceFigures {
    /// Runs the figures cover.
    pub runs: u64,
    /// Calls per run (`start` and one per rebalance).
    pub calls: Spread,
    /// Fuel per run; null when the strategy is not metered (built-ins).
    pub fuel: Option<Spread>,
    /// Time in the guest per run, milliseconds.
    pub guest_ms: Spread,
    /// The most linear memory its instance held in a run, bytes.
    pub peak_memory_bytes: Spread,
}

/// The least, the mean and the most of one figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Spread {
    /// The least.
    pub min: f64,
    /// The arithmetic mean.
    pub mean: f64,
    /// The most.
    pub max: f64,
}

impl Spread {
    /// The spread of `values`; `None` when there are none.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let (mut n, mut sum) = (0u64, 0.0);
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            n += 1;
            sum += v;
            min = min.min(v);
            max = max.max(v);
        }
        (n > 0).then(|| Spread {
            min,
            mean: sum / n as f64,
            max,
        })
    }
}

fn builtin() -> String {
    "builtin".into()
}

/// `{strategies}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StrategyList {
    /// By name.
    pub strategies: Vec<StrategyItem>,
}

/// The `forecast:plugins` WIT package version among a component's imports
/// (`forecast:plugins/types@1.6.0` → `1.6.0`).
pub fn wit_version(imports: &[String]) -> Option<String> {
    imports
        .iter()
        .filter_map(|i| i.strip_prefix("forecast:plugins/"))
        .find_map(|i| i.split_once('@').map(|(_, v)| v.to_string()))
}
