//! `POST /api/backtest` (DESIGN §6): validation, the universe, the engine's
//! walk-forward signals (one pass per asset, cached), and the run.
//!
//! The host moves data and enforces limits; the accounting is
//! `forecast-backtest` (shared with the SDK's native harness) and the
//! decisions come from a strategy component. One deadline bounds the whole
//! request (loading, signals, the run); every plugin call inside it gets
//! what is left of it, capped at the runtime's call timeout.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{Months, NaiveDate};
use forecast_backtest as bt;
use serde::{Deserialize, Serialize};

use crate::active::Plugins;
use forecast_domain::series::{from_days, to_days, PriceSeries};
use forecast_domain::Metric;
use forecast_domain::{Asset, Category};
use forecast_plugins::segmentation::{AnalysisParams, EngineError};
use forecast_plugins::strategy::RunFailure;
use forecast_plugins::{Permit, PluginError, SegmentationPlugin, StrategyPlugin};
use forecast_store::Database;
use forecast_store::StoreError;

/// Default strategy.
pub const DEFAULT_STRATEGY: &str = "topn";
/// Years before `end_date` a window starts at when `start_date` is absent.
pub const DEFAULT_YEARS: u32 = 10;
/// Most tickers one request may name.
pub const MAX_TICKERS: usize = 3_000;

/// The request body. Every field is optional; unknown fields are refused
/// so that a misspelt parameter never silently takes its default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BacktestRequest {
    /// Strategy plugin name (default `topn`).
    pub strategy: Option<String>,
    /// Assets to trade; wins over `category`.
    pub tickers: Option<Vec<String>>,
    /// Trade one category's active assets.
    pub category: Option<String>,
    /// Equity at the start (default 100,000).
    pub initial_capital: Option<f64>,
    /// Positions (default 10).
    pub top_n: Option<i64>,
    /// `daily`, `weekly` or `monthly` (default).
    pub rebalance: Option<String>,
    /// Engine horizon, 7..=365 (default 90).
    pub return_period: Option<i64>,
    /// Engine EMA decay, 0.80..=0.99 (default 0.95).
    pub decay_factor: Option<f64>,
    /// Engine buckets, 10..=50 (default 20).
    pub num_segments: Option<i64>,
    /// `return` (default), `sharpe` or `sortino`.
    pub metric: Option<String>,
    /// First date (default: `DEFAULT_YEARS` before the end).
    pub start_date: Option<String>,
    /// Last date (default: the universe's latest date).
    pub end_date: Option<String>,
    /// Charge trading costs (default true).
    pub include_costs: Option<bool>,
    /// z-score window in rows, 20..=1260 (default 252).
    pub zscore_lookback: Option<i64>,
    /// z-score entry threshold, in (0, 10] (default 2).
    pub zscore_entry: Option<f64>,
    /// z-score exit threshold, in [-10, 10] (default 0).
    pub zscore_exit: Option<f64>,
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
            NaiveDate::parse_from_str(r.trim(), "%Y-%m-%d")
                .map_err(|_| format!("{name} must be a date in YYYY-MM-DD format (got '{r}')"))
        })
        .transpose()
}

impl BacktestRequest {
    /// Checks every field that can be checked without data; the error
    /// names the field and what it accepts.
    pub fn validate(&self) -> Result<ValidRequest, String> {
        let strategy = self
            .strategy
            .clone()
            .unwrap_or_else(|| DEFAULT_STRATEGY.to_string());
        let rebalance = match self.rebalance.as_deref() {
            None => bt::Rebalance::Monthly,
            Some(r) => bt::Rebalance::parse(r).ok_or_else(|| {
                format!("rebalance must be one of daily, weekly, monthly (got '{r}')")
            })?,
        };
        let metric: Metric = match self.metric.as_deref() {
            None => Metric::Return,
            Some(m) => m.parse()?,
        };
        let defaults = bt::RunParams::default();
        let params = bt::RunParams {
            top_n: int_or("top_n", self.top_n, defaults.top_n)?,
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
        let start_date = date("start_date", &self.start_date)?;
        let end_date = date("end_date", &self.end_date)?;
        if let (Some(s), Some(e)) = (start_date, end_date) {
            if s > e {
                return Err(format!(
                    "start_date {s} is after end_date {e}; start_date must be on or before end_date"
                ));
            }
        }
        let universe = match (&self.tickers, &self.category) {
            (Some(tickers), _) => {
                if tickers.is_empty() {
                    return Err("tickers must name at least one asset (or leave it out)".into());
                }
                if tickers.len() > MAX_TICKERS {
                    return Err(format!(
                        "tickers may name at most {MAX_TICKERS} assets (got {})",
                        tickers.len()
                    ));
                }
                let mut seen = std::collections::HashSet::new();
                for t in tickers {
                    if !seen.insert(t.as_str()) {
                        return Err(format!("tickers names '{t}' twice"));
                    }
                }
                UniverseSpec::Tickers(tickers.clone())
            }
            (None, Some(c)) => UniverseSpec::Category(c.parse().map_err(|_| {
                let names: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
                format!(
                    "unknown category '{c}'; expected one of: {}",
                    names.join(", ")
                )
            })?),
            (None, None) => UniverseSpec::All,
        };
        Ok(ValidRequest {
            strategy,
            universe,
            start_date,
            end_date,
            params,
            metric,
        })
    }
}

/// One point of the equity curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EquityPoint {
    /// Date.
    pub date: NaiveDate,
    /// Portfolio value at that date's close.
    pub equity: f64,
}

/// One fill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

/// Metrics of the equity curve; `null` where undefined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

/// A benchmark's curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkBody {
    /// Same dates as the equity curve.
    pub dates: Vec<NaiveDate>,
    /// Its equity.
    pub equity: Vec<f64>,
}

/// `metadata` of a backtest: the spec's four fields and what a client needs
/// to reproduce the numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

/// The response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BacktestResponse {
    /// Equity at every calendar date.
    pub equity_curve: Vec<EquityPoint>,
    /// Every fill.
    pub trades: Vec<TradeBody>,
    /// Metrics of the equity curve.
    pub metrics: MetricsBody,
    /// `equal_weight_buy_hold` and `equal_weight_rebalanced`.
    pub benchmarks: BTreeMap<String, BenchmarkBody>,
    /// About the run.
    pub metadata: BacktestMetadata,
}

/// Why a backtest has no answer.
#[derive(Debug, thiserror::Error)]
pub enum BacktestError {
    /// 400: the message names the field.
    #[error("{0}")]
    Invalid(String),
    /// 504: the run passed its time limit.
    #[error("{0}")]
    TimedOut(String),
    /// 500/504 from a plugin, naming it.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// 500: the strategy ended the run or broke the contract (names it).
    #[error("{0}")]
    Strategy(String),
    /// 500: the store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// 500: anything else.
    #[error("{0}")]
    Internal(String),
}

/// Key of one asset's signals: the data, the engine and its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SignalKey {
    asset_id: i64,
    data_version: i64,
    engine_sha256: String,
    return_period: u32,
    num_segments: u32,
    decay_bits: u64,
    metric: Metric,
}

struct Entry {
    signals: Arc<bt::Signals>,
    last_used: u64,
}

/// The engine's walk-forward signals per asset, bounded in bytes; the least
/// recently used entries go first. Keys carry the asset's data version and
/// the engine's sha256, so an ingest or an engine swap is never served stale.
pub struct SignalCache {
    budget: usize,
    inner: Mutex<CacheInner>,
}

#[derive(Default)]
struct CacheInner {
    map: HashMap<SignalKey, Entry>,
    bytes: usize,
    clock: u64,
}

impl SignalCache {
    /// A cache of at most `budget` bytes (0 disables it).
    pub fn new(budget: usize) -> Self {
        SignalCache {
            budget,
            inner: Mutex::new(CacheInner::default()),
        }
    }

    fn get(&self, key: &SignalKey) -> Option<Arc<bt::Signals>> {
        let mut inner = self.inner.lock().expect("signal cache poisoned");
        inner.clock += 1;
        let now = inner.clock;
        inner.map.get_mut(key).map(|e| {
            e.last_used = now;
            e.signals.clone()
        })
    }

    fn put(&self, key: SignalKey, signals: Arc<bt::Signals>) {
        let size = signals.heap_bytes();
        if size > self.budget {
            return;
        }
        let mut inner = self.inner.lock().expect("signal cache poisoned");
        inner.clock += 1;
        let now = inner.clock;
        if let Some(old) = inner.map.insert(
            key,
            Entry {
                signals,
                last_used: now,
            },
        ) {
            inner.bytes -= old.signals.heap_bytes();
        }
        inner.bytes += size;
        if inner.bytes > self.budget {
            // Evict the oldest tenth at once, so that eviction stays rare.
            let mut ages: Vec<(u64, SignalKey)> = inner
                .map
                .iter()
                .map(|(k, e)| (e.last_used, k.clone()))
                .collect();
            ages.sort_unstable_by_key(|(t, _)| *t);
            let target = self.budget - self.budget / 10;
            for (_, k) in ages {
                if inner.bytes <= target {
                    break;
                }
                if let Some(e) = inner.map.remove(&k) {
                    inner.bytes -= e.signals.heap_bytes();
                }
            }
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.inner.lock().expect("signal cache poisoned").bytes
    }
}

/// The universe's assets with their histories, ticker order.
async fn load_universe(
    db: &dyn Database,
    spec: &UniverseSpec,
) -> Result<Vec<(Asset, Arc<PriceSeries>)>, BacktestError> {
    let assets: Vec<Asset> = match spec {
        UniverseSpec::Tickers(tickers) => {
            let mut out = Vec::with_capacity(tickers.len());
            for t in tickers {
                match db.asset_by_ticker(t).await? {
                    Some(a) if a.is_active => out.push(a),
                    _ => {
                        return Err(BacktestError::Invalid(format!(
                            "tickers: unknown or inactive ticker '{t}'"
                        )))
                    }
                }
            }
            out
        }
        UniverseSpec::Category(c) => db.list_active_assets(Some(*c)).await?,
        UniverseSpec::All => db.list_active_assets(None).await?,
    };
    let mut out = Vec::with_capacity(assets.len());
    for a in assets {
        let series = db.load_series(a.id).await?.unwrap_or_default();
        out.push((a, Arc::new(series)));
    }
    out.sort_by(|a, b| a.0.ticker.cmp(&b.0.ticker));
    Ok(out)
}

/// Computes (or fetches) the signals of every asset on one thread per
/// permit, each with one reused engine instance. Assets the engine refuses
/// (fewer than 300 rows) get `None`: they can never trade.
#[allow(clippy::type_complexity)]
fn signals_for(
    engine: &Arc<SegmentationPlugin>,
    cache: &SignalCache,
    assets: &[(Asset, Arc<PriceSeries>)],
    req: &ValidRequest,
    permits: &[Permit],
    deadline: Instant,
) -> Result<(Vec<Option<Arc<bt::Signals>>>, usize), BacktestError> {
    let key = |a: &Asset| SignalKey {
        asset_id: a.id,
        data_version: a.data_version,
        engine_sha256: engine.info().sha256.clone(),
        return_period: req.params.return_period,
        num_segments: req.params.num_segments,
        decay_bits: req.params.decay_factor.to_bits(),
        metric: req.metric,
    };
    let mut out: Vec<Option<Arc<bt::Signals>>> = Vec::with_capacity(assets.len());
    let mut missing = Vec::new();
    let mut cached = 0;
    for (i, (a, s)) in assets.iter().enumerate() {
        let hit = cache.get(&key(a));
        match &hit {
            Some(_) => cached += 1,
            None if s.len() >= bt::MIN_HISTORY => missing.push(i),
            None => {}
        }
        out.push(hit);
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Arc<bt::Signals>)>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<BacktestError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for permit in permits.iter().take(missing.len().max(1)) {
            // Each thread owns its permit's borrow; the rest is shared.
            let (next, results, failure, missing) = (&next, &results, &failure, &missing);
            scope.spawn(move || {
                let mut session = engine.session();
                loop {
                    if failure.lock().expect("poisoned").is_some() {
                        return;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = missing.get(k) else { return };
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        *failure.lock().expect("poisoned") = Some(timed_out());
                        return;
                    }
                    let (asset, series) = &assets[i];
                    let params = AnalysisParams {
                        return_period: req.params.return_period,
                        num_segments: req.params.num_segments,
                        decay_factor: req.params.decay_factor,
                        metric: crate::analysis::wit_metric(req.metric),
                        periods_per_year: Some(series.periods_per_year()),
                    };
                    match session.walk_forward(permit, series, params, Some(left)) {
                        Ok(Ok(w)) => {
                            let signals = Arc::new(bt::Signals {
                                drawdowns: w.drawdowns,
                                segments: w.segments,
                                expected_returns: w.expected_returns,
                                median_returns: w.median_returns,
                                prediction_error_cumavg: w.prediction_error_cumavg,
                                median_error_cumavg: w.median_error_cumavg,
                            });
                            if signals.len() != series.len() {
                                *failure.lock().expect("poisoned") =
                                    Some(BacktestError::Plugin(PluginError::Trap {
                                        plugin: engine.info().label(),
                                        message: format!(
                                            "walk-forward returned {} rows for {} inputs",
                                            signals.len(),
                                            series.len()
                                        ),
                                    }));
                                return;
                            }
                            cache.put(key(asset), signals.clone());
                            results.lock().expect("poisoned").push((i, signals));
                        }
                        Ok(Err(EngineError::InsufficientData(_))) => {}
                        Ok(Err(EngineError::InvalidInput(m))) => {
                            tracing::warn!(ticker = %asset.ticker, "engine refused the history: {m}");
                        }
                        Err(PluginError::Timeout { .. }) if Instant::now() >= deadline => {
                            *failure.lock().expect("poisoned") = Some(timed_out());
                            return;
                        }
                        Err(e) => {
                            *failure.lock().expect("poisoned") = Some(BacktestError::Plugin(e));
                            return;
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().expect("poisoned") {
        return Err(e);
    }
    for (i, s) in results.into_inner().expect("poisoned") {
        out[i] = Some(s);
    }
    Ok((out, cached))
}

fn timed_out() -> BacktestError {
    BacktestError::TimedOut(
        "the backtest passed its time limit; reduce its scope (fewer assets, a shorter \
         window or a less frequent rebalance)"
            .into(),
    )
}

/// The backtest service: the universe's series from the store, signals of
/// the active engine (cached), the strategies, and one time limit per run.
#[derive(Clone)]
pub struct BacktestService {
    db: Arc<dyn Database>,
    plugins: Arc<Plugins>,
    signals: Arc<SignalCache>,
    timeout: Duration,
}

impl BacktestService {
    /// A service over `db` and `plugins` whose runs end after `timeout` and
    /// keep up to `signal_cache_bytes` of walk-forward signals.
    pub fn new(
        db: Arc<dyn Database>,
        plugins: Arc<Plugins>,
        timeout: Duration,
        signal_cache_bytes: usize,
    ) -> Self {
        BacktestService {
            db,
            plugins,
            signals: Arc::new(SignalCache::new(signal_cache_bytes)),
            timeout,
        }
    }

    /// The walk-forward signal cache (its size, for diagnostics).
    pub fn signal_cache(&self) -> &SignalCache {
        &self.signals
    }

    /// Runs a validated request end to end.
    pub async fn run(&self, req: ValidRequest) -> Result<BacktestResponse, BacktestError> {
        let started = Instant::now();
        let deadline = started + self.timeout;
        let strategy: Arc<StrategyPlugin> =
            self.plugins.strategy(&req.strategy).ok_or_else(|| {
                BacktestError::Invalid(format!(
                    "strategy: unknown strategy '{}'; loaded strategies: {}",
                    req.strategy,
                    self.plugins.strategy_names().join(", ")
                ))
            })?;
        let engine = self.plugins.segmentation();
        let universe = load_universe(self.db.as_ref(), &req.universe).await?;
        let latest = universe
            .iter()
            .filter_map(|(_, s)| s.dates.last().copied())
            .max();
        let Some(latest) = latest else {
            return Err(BacktestError::Invalid(
                "the universe has no price data".into(),
            ));
        };
        let end = req.end_date.unwrap_or_else(|| from_days(latest));
        let start = req.start_date.unwrap_or_else(|| {
            end.checked_sub_months(Months::new(12 * DEFAULT_YEARS))
                .unwrap_or(end)
        });
        if start > end {
            return Err(BacktestError::Invalid(format!(
                "start_date {start} is after the end of the window {end}"
            )));
        }
        let runtime = self.plugins.runtime();
        let workers = runtime
            .config()
            .max_concurrency
            .min(std::thread::available_parallelism().map_or(2, |n| n.get()));
        let permits = runtime.acquire_many(workers as u32).await;
        let cache = self.signals.clone();
        let engine_version = engine.info().version.clone();
        tokio::task::spawn_blocking(move || {
            let (signals, signals_cached) =
                signals_for(&engine, &cache, &universe, &req, &permits, deadline)?;
            let metas: Vec<bt::AssetMeta> = universe
                .iter()
                .map(|(a, _)| bt::AssetMeta {
                    ticker: a.ticker.clone(),
                    name: a.name.clone(),
                    category: a.category.as_str().to_string(),
                })
                .collect();
            // Assets without signals (short histories) cannot trade; leave them out.
            let kept: Vec<usize> = (0..universe.len())
                .filter(|&i| signals[i].is_some())
                .collect();
            let inputs: Vec<bt::AssetInput<'_>> = kept
                .iter()
                .map(|&i| bt::AssetInput {
                    meta: &metas[i],
                    cost_bps: bt::cost_bps(&metas[i].category),
                    dates: &universe[i].1.dates,
                    closes: &universe[i].1.closes,
                    signals: signals[i].as_deref().expect("kept"),
                })
                .collect();
            // The signal workers are done: the run takes the first permit.
            let mut instance = strategy.instance(&permits[0], deadline)?;
            let window = bt::Window {
                start: to_days(start),
                end: to_days(end),
            };
            let report = bt::run(&inputs, window, &req.params, &mut instance, &mut || {
                Instant::now() >= deadline
            })
            .map_err(|e| match e {
                bt::RunError::EmptyUniverse => BacktestError::Invalid(format!(
                    "no asset of the universe has {} rows of history by {end} and a price between \
                 start_date {start} and end_date {end}",
                    bt::MIN_HISTORY
                )),
                bt::RunError::Param(p) => BacktestError::Invalid(p.to_string()),
                bt::RunError::Cancelled | bt::RunError::Strategy(RunFailure::RunTimedOut) => {
                    timed_out()
                }
                bt::RunError::Strategy(RunFailure::Plugin(p)) => BacktestError::Plugin(p),
                bt::RunError::Strategy(RunFailure::Refused { plugin, message }) => {
                    BacktestError::Strategy(format!("strategy {plugin} ended the run: {message}"))
                }
                bt::RunError::Contract(m) => BacktestError::Strategy(format!(
                    "strategy {} broke the strategy contract: {m}",
                    strategy.info().label()
                )),
            })?;
            tracing::info!(
                strategy = %strategy.info().label(),
                assets = report.universe.len(),
                rows = report.dates.len(),
                signals_cached,
                seconds = started.elapsed().as_secs_f64(),
                "backtest finished"
            );
            Ok(shape(
                &report,
                &inputs,
                &strategy,
                &engine_version,
                &req,
                signals_cached,
            ))
        })
        .await
        .map_err(|e| BacktestError::Internal(format!("backtest task failed: {e}")))?
    }
}

fn shape(
    report: &bt::Report,
    inputs: &[bt::AssetInput<'_>],
    strategy: &StrategyPlugin,
    engine_version: &str,
    req: &ValidRequest,
    signals_cached: usize,
) -> BacktestResponse {
    let dates: Vec<NaiveDate> = report.dates.iter().map(|&d| from_days(d)).collect();
    let ticker = |k: usize| inputs[report.universe[k]].meta.ticker.clone();
    let m = &report.metrics;
    let cost_bps = report
        .universe
        .iter()
        .map(|&i| (inputs[i].meta.category.clone(), inputs[i].cost_bps))
        .collect();
    BacktestResponse {
        equity_curve: dates
            .iter()
            .zip(&report.equity)
            .map(|(&date, &equity)| EquityPoint { date, equity })
            .collect(),
        trades: report
            .trades
            .iter()
            .map(|t| TradeBody {
                date: from_days(t.date),
                ticker: ticker(t.asset),
                side: match t.side {
                    bt::Side::Buy => "BUY",
                    bt::Side::Sell => "SELL",
                }
                .to_string(),
                qty: t.qty,
                price: t.price,
            })
            .collect(),
        metrics: MetricsBody {
            total_return: m.total_return,
            cagr: m.cagr,
            sharpe_ratio: m.sharpe_ratio,
            sortino_ratio: m.sortino_ratio,
            max_drawdown: m.max_drawdown,
            final_equity: m.final_equity,
            years: m.years,
            total_costs: m.total_costs,
            cost_drag_pct: m.cost_drag_pct,
            total_trades: m.total_trades,
        },
        benchmarks: report
            .benchmarks
            .iter()
            .map(|(name, curve)| {
                (
                    name.to_string(),
                    BenchmarkBody {
                        dates: dates.clone(),
                        equity: curve.clone(),
                    },
                )
            })
            .collect(),
        metadata: BacktestMetadata {
            assets_count: report.universe.len(),
            data_points: report.data_points,
            rebalance_dates: report.rebalance_dates,
            calculated_at: chrono::Utc::now(),
            strategy: strategy.info().name.clone(),
            strategy_version: strategy.info().version.clone(),
            engine_version: engine_version.to_string(),
            start_date: dates.first().copied().unwrap_or_default(),
            end_date: dates.last().copied().unwrap_or_default(),
            periods_per_year: report.periods_per_year,
            include_costs: req.params.include_costs,
            cost_bps,
            signals_cached,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(json: &str) -> Result<ValidRequest, String> {
        let r: BacktestRequest = serde_json::from_str(json).map_err(|e| e.to_string())?;
        r.validate()
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
    fn tickers_win_over_category() {
        let v = req(r#"{"tickers": ["AAPL"], "category": "Crypto"}"#).unwrap();
        assert_eq!(v.universe, UniverseSpec::Tickers(vec!["AAPL".into()]));
        let v = req(r#"{"category": "Crypto"}"#).unwrap();
        assert_eq!(v.universe, UniverseSpec::Category(Category::Crypto));
    }

    #[test]
    fn the_signal_cache_stays_within_its_budget() {
        let sig = |n: usize| {
            Arc::new(bt::Signals {
                drawdowns: vec![0.0; n],
                segments: vec![0; n],
                expected_returns: vec![0.0; n],
                median_returns: vec![0.0; n],
                prediction_error_cumavg: vec![0.0; n],
                median_error_cumavg: vec![0.0; n],
            })
        };
        let key = |id: i64| SignalKey {
            asset_id: id,
            data_version: 1,
            engine_sha256: "x".into(),
            return_period: 90,
            num_segments: 20,
            decay_bits: 0.95f64.to_bits(),
            metric: Metric::Return,
        };
        let one = sig(1_000).heap_bytes();
        let cache = SignalCache::new(one * 10);
        for id in 0..25 {
            cache.put(key(id), sig(1_000));
            // Keep asset 0 hot.
            assert!(cache.get(&key(0)).is_some(), "the hot entry survives");
        }
        assert!(cache.bytes() <= one * 10);
        assert!(cache.get(&key(24)).is_some());
        assert!(cache.get(&key(1)).is_none(), "cold entries went first");
        let other_version = SignalKey {
            data_version: 2,
            ..key(24)
        };
        assert!(
            cache.get(&other_version).is_none(),
            "a new data version misses"
        );
        let other_engine = SignalKey {
            engine_sha256: "y".into(),
            ..key(24)
        };
        assert!(
            cache.get(&other_engine).is_none(),
            "another engine's signals are not served"
        );
    }
}
