//! The drawdown segmentation engine (DESIGN.md §4) in plain Rust.
//!
//! This crate has no dependencies and no I/O so that the same code is
//! unit-tested and benchmarked natively and shipped inside the
//! `segmentation` Wasm component. The host never calls it directly (it only
//! links it in tests and benchmarks to compare the component against it).
//!
//! The one invariant everything else rests on: nothing computed for index `t`
//! of the series depends on rows after `t` (no look-ahead). Outcomes are
//! *confirmed* at their exit index and only then feed the estimators; the
//! drawdown grid used at `t` is the grid known at `t`.

mod calendar;
mod episodes;
mod evidence;
mod rolling;
mod snapshot;
mod stats;

pub use calendar::{civil_from_days, is_weekend};
pub use episodes::{episodes_at, episodes_at_many};
pub use evidence::{
    evidence, Evidence, EvidenceRequest, SegmentEvidence, SplitMix, BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED, CI_LEVEL,
};
use rolling::RollingMedian;
pub use snapshot::StateAt;
use stats::{max_num, mean, median_select, median_sorted, min_num, order_key, percentiles_select};

/// Fewest rows an analysis accepts (the spec's 422 bound).
pub const MIN_ROWS: usize = 300;
/// Number of most recent confirmed outcomes the rolling median looks at.
pub const MEDIAN_WINDOW: usize = 252;
/// The deepest drawdown is rounded down to a multiple of this step to form
/// the grid floor.
pub const FLOOR_STEP: f64 = 0.05;
/// Largest number of floor steps (a floor of −100 %).
const MAX_FLOOR_STEPS: u32 = 20;
/// Sample paths kept per segment in `segment_paths`.
pub const MAX_SAMPLE_PATHS: usize = 20;
/// Points kept in `scatter_data`.
pub const MAX_SCATTER_POINTS: usize = 1_000;
/// Bins of `return_distribution`.
pub const DISTRIBUTION_BINS: usize = 30;
/// Rows a calendar year needs to count towards `typical_max_drawdown`.
pub const MIN_ROWS_PER_YEAR: usize = 20;
/// A current segment with fewer confirmed outcomes than this is flagged
/// `insufficient_data`.
pub const SUFFICIENT_OUTCOMES: u32 = 20;
/// Version of the engine's formulas, reported as `metadata.engine_version`.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The forward outcome the engine predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Simple return `P_exit / P_t − 1`.
    Return,
    /// Annualised Sharpe ratio of the daily returns over `(t, exit]`.
    Sharpe,
    /// Annualised Sortino ratio of the daily returns over `(t, exit]`.
    Sortino,
}

/// Parameters of one analysis; bounds are enforced by the host (400) and
/// re-checked here (`EngineError::InvalidInput`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Forecast horizon in calendar days (7..=365).
    pub return_period: u32,
    /// Number of equal-width drawdown buckets (10..=50).
    pub num_segments: u32,
    /// EMA decay λ (0.80..=0.99).
    pub decay_factor: f64,
    /// Which outcome to predict.
    pub metric: Metric,
    /// Periods per year `A`; `None` infers it from the input (365 when any
    /// date is a weekend, else 252). The host passes the value of the asset's
    /// whole history so that cutting the window can never change it.
    pub periods_per_year: Option<u32>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            return_period: 90,
            num_segments: 20,
            decay_factor: 0.95,
            metric: Metric::Return,
            periods_per_year: None,
        }
    }
}

/// Why an analysis could not be computed.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineError {
    /// Fewer than [`MIN_ROWS`] rows.
    InsufficientData {
        /// Rows received.
        rows: u32,
        /// Rows required.
        required: u32,
    },
    /// The input breaks a precondition (message names it).
    InvalidInput(String),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::InsufficientData { rows, required } => {
                write!(
                    f,
                    "insufficient data: {rows} rows, at least {required} required"
                )
            }
            EngineError::InvalidInput(m) => write!(f, "invalid input: {m}"),
        }
    }
}

impl std::error::Error for EngineError {}

/// Which estimator has the smaller error in the current segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Exponential moving average of the segment's outcomes.
    Ema,
    /// Rolling median of the segment's last 252 outcomes.
    Median,
}

/// The state at the last row `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct CurrentState {
    /// Close at `T`.
    pub price: f64,
    /// Drawdown at `T`, in [−1, 0].
    pub drawdown: f64,
    /// Segment of the drawdown at `T` (grid of `T`).
    pub segment: u32,
    /// EMA prediction at `T`.
    pub expected_return: f64,
    /// Mean absolute error of the EMA over the current segment's outcomes.
    pub prediction_error: f64,
    /// Median prediction at `T`.
    pub median_return: f64,
    /// Mean absolute error of the median over the current segment's outcomes.
    pub median_error: f64,
    /// The estimator with the smaller error (`Median` on ties).
    pub best_method: Method,
    /// `min(prediction_error, median_error)` per `best_method`.
    pub best_error: f64,
    /// Fewer than [`SUFFICIENT_OUTCOMES`] confirmed outcomes in the segment.
    pub insufficient_data: bool,
    /// Confirmed outcomes in the current segment.
    pub confirmed_count: u32,
}

/// Per-row walk-forward output, aligned with the input rows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimeSeries {
    /// Drawdown `P_t / max P − 1`.
    pub drawdowns: Vec<f64>,
    /// EMA prediction made at `t`.
    pub expected_returns: Vec<f64>,
    /// `|EMA_t − y_t|` once `y_t` exists.
    pub prediction_errors: Vec<Option<f64>>,
    /// Mean of the EMA errors confirmed at or before `t`.
    pub prediction_error_cumavg: Vec<Option<f64>>,
    /// The outcome `y_t`, when it exists inside the window.
    pub actual_returns: Vec<Option<f64>>,
    /// Median prediction made at `t`.
    pub median_returns: Vec<f64>,
    /// `|median_t − y_t|` once `y_t` exists.
    pub median_errors: Vec<Option<f64>>,
    /// Mean of the median errors confirmed at or before `t`.
    pub median_error_cumavg: Vec<Option<f64>>,
    /// `P_t · (1 + median_t)` for metric `return`, else `None`.
    pub projected_prices: Vec<Option<f64>>,
}

/// Statistics of one drawdown bucket at `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentStats {
    /// Bucket index; 0 is the shallowest.
    pub segment_idx: u32,
    /// `−(k+1)·w`.
    pub lower_bound: f64,
    /// `−k·w`.
    pub upper_bound: f64,
    /// Rows whose drawdown falls in the bucket.
    pub count: u32,
    /// EMA of the bucket's confirmed outcomes.
    pub expected_return: Option<f64>,
    /// Mean of the bucket's confirmed outcomes.
    pub avg_return: Option<f64>,
    /// Median of the bucket's last 252 confirmed outcomes.
    pub median_return: Option<f64>,
    /// Median of all the bucket's confirmed outcomes.
    pub static_median_return: Option<f64>,
    /// Worst interim price return over the holding windows (<= 0).
    pub max_loss: Option<f64>,
    /// Share of confirmed outcomes above 0.
    pub win_rate: Option<f64>,
}

/// Histogram of all confirmed outcomes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Distribution {
    /// `DISTRIBUTION_BINS + 1` edges (empty without outcomes).
    pub bins: Vec<f64>,
    /// Counts per bin; the last bin includes its right edge.
    pub counts: Vec<u32>,
}

/// One confirmed outcome for the scatter plot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScatterPoint {
    /// Drawdown at the start of the outcome.
    pub drawdown: f64,
    /// The outcome.
    pub future_return: f64,
    /// Segment of that drawdown on the grid of `T`.
    pub segment: u32,
}

/// Forward price paths starting in one segment.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentPaths {
    /// Segment the paths start in.
    pub segment: u32,
    /// Up to [`MAX_SAMPLE_PATHS`] paths spread over time, the latest included.
    pub paths: Vec<Vec<f64>>,
    /// 10th percentile per step.
    pub p10: Vec<f64>,
    /// 25th percentile per step.
    pub p25: Vec<f64>,
    /// Median per step.
    pub p50: Vec<f64>,
    /// 75th percentile per step.
    pub p75: Vec<f64>,
    /// 90th percentile per step.
    pub p90: Vec<f64>,
    /// Every start in the segment with a complete path.
    pub num_paths_total: u32,
}

/// A complete analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// `A` used for annualisation and path length.
    pub periods_per_year: u32,
    /// State at `T`.
    pub current: CurrentState,
    /// Walk-forward series.
    pub series: TimeSeries,
    /// One entry per segment, `num_segments` long.
    pub segments: Vec<SegmentStats>,
    /// Histogram of outcomes.
    pub distribution: Distribution,
    /// Sampled confirmed outcomes.
    pub scatter: Vec<ScatterPoint>,
    /// Paths per non-empty segment, ascending segment index.
    pub paths: Vec<SegmentPaths>,
    /// Median over calendar years of the worst within-year drawdown.
    pub typical_max_drawdown: Option<f64>,
}

/// The point-in-time drawdown grid: a floor of `steps · 5 %` split into
/// `k` equal buckets.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Grid {
    steps: u32,
    k: u32,
    width: f64,
}

impl Grid {
    fn new(steps: u32, k: u32) -> Self {
        Grid {
            steps,
            k,
            width: f64::from(steps) * FLOOR_STEP / f64::from(k),
        }
    }

    /// Floor steps needed to contain drawdown `d` (1..=20).
    fn steps_for(d: f64) -> u32 {
        // The epsilon keeps exact multiples (−0.10) from rounding one step
        // deeper through binary floating point (0.1 / 0.05 = 2.0000000000000004).
        let s = (-d / FLOOR_STEP - 1e-9).ceil();
        (s.max(1.0) as u32).min(MAX_FLOOR_STEPS)
    }

    fn segment(&self, d: f64) -> usize {
        // floor(x) for x >= 1 is the truncating cast, which avoids a libm
        // call on baseline x86-64; x < 1 (and NaN) is bucket 0.
        let x = -d / self.width;
        if x >= 1.0 {
            (x as usize).min(self.k as usize - 1)
        } else {
            0
        }
    }
}

/// Estimators over one bucket's (or all buckets') confirmed outcomes.
#[derive(Debug, Clone)]
struct Estimators {
    ema: Option<f64>,
    window: RollingMedian,
}

impl Estimators {
    fn new() -> Self {
        Estimators {
            ema: None,
            window: RollingMedian::new(MEDIAN_WINDOW),
        }
    }

    /// Becomes the estimators after seeing `ys` in order (used when the
    /// grid moves), reusing its storage.
    fn refill(&mut self, ys: &[f64], lambda: f64) {
        self.ema = ys.split_first().map(|(first, rest)| {
            rest.iter()
                .fold(*first, |e, &y| lambda * e + (1.0 - lambda) * y)
        });
        let recent = &ys[ys.len().saturating_sub(MEDIAN_WINDOW)..];
        self.window.refill(recent.iter().copied());
    }

    fn push(&mut self, y: f64, lambda: f64) {
        self.ema = Some(match self.ema {
            None => y,
            Some(e) => lambda * e + (1.0 - lambda) * y,
        });
        self.window.push(y);
    }

    /// `(ema, median)` when at least one outcome was seen.
    fn predict(&self) -> Option<(f64, f64)> {
        self.ema.map(|e| (e, self.window.median()))
    }
}

/// The estimators over every confirmed outcome, the fallback of a bucket
/// that has none yet. Equal to an [`Estimators`] fed every outcome, but
/// only the EMA is kept up to date at every outcome: the rolling window
/// catches up with the outcomes confirmed since it last answered when a
/// row asks for the median (only while the row's bucket is empty), so each
/// outcome enters it at most once and most never do.
struct Overall {
    ema: Option<f64>,
    window: RollingMedian,
    /// Outcomes the window has seen.
    synced: usize,
}

impl Overall {
    fn new() -> Self {
        Overall {
            ema: None,
            window: RollingMedian::new(MEDIAN_WINDOW),
            synced: 0,
        }
    }

    fn push(&mut self, y: f64, lambda: f64) {
        self.ema = Some(match self.ema {
            None => y,
            Some(e) => lambda * e + (1.0 - lambda) * y,
        });
    }

    /// `(ema, median)` over `outcomes` (every outcome pushed so far, in
    /// order) when there is at least one.
    fn predict(&mut self, outcomes: &[Outcome]) -> Option<(f64, f64)> {
        let ema = self.ema?;
        let n = outcomes.len();
        if n - self.synced >= rolling::REFILL_BACKLOG {
            // Many new outcomes: rebuilding from the last window's worth
            // (one sort) is cheaper than pushing each through.
            self.window.refill(
                outcomes[n.saturating_sub(MEDIAN_WINDOW)..]
                    .iter()
                    .map(|o| o.y),
            );
        } else {
            for o in &outcomes[self.synced..] {
                self.window.push(o.y);
            }
        }
        self.synced = n;
        Some((ema, self.window.median()))
    }
}

/// The confirmed outcomes' values grouped by bucket on a new grid, in
/// confirmation order within each bucket: a counting sort into one buffer,
/// reused at every move of the grid (a walk moves it up to 20 times).
struct Regroup {
    /// Bucket of each outcome.
    buckets: Vec<u8>,
    /// Where each bucket's values start in `ys`; one more entry than buckets.
    offsets: Vec<usize>,
    /// Each bucket's next free place in `ys` while grouping.
    cursor: Vec<usize>,
    ys: Vec<f64>,
}

impl Regroup {
    fn new(k: usize) -> Self {
        Regroup {
            buckets: Vec::new(),
            offsets: vec![0; k + 1],
            cursor: vec![0; k + 1],
            ys: Vec::new(),
        }
    }

    fn group(&mut self, outcomes: &[Outcome], drawdowns: &[f64], grid: &Grid) {
        self.buckets.clear();
        self.offsets.fill(0);
        for o in outcomes {
            let b = grid.segment(drawdowns[o.start]);
            self.buckets.push(b as u8);
            self.offsets[b + 1] += 1;
        }
        for i in 1..self.offsets.len() {
            self.offsets[i] += self.offsets[i - 1];
        }
        self.ys.clear();
        self.ys.resize(outcomes.len(), 0.0);
        self.cursor.copy_from_slice(&self.offsets);
        for (o, &b) in outcomes.iter().zip(&self.buckets) {
            self.ys[self.cursor[b as usize]] = o.y;
            self.cursor[b as usize] += 1;
        }
    }

    /// Bucket `i`'s values, in confirmation order.
    fn ys(&self, i: usize) -> &[f64] {
        &self.ys[self.offsets[i]..self.offsets[i + 1]]
    }
}

/// A confirmed outcome: the start row and its value, in confirmation order
/// (which equals start order because exits are monotone).
#[derive(Debug, Clone, Copy)]
struct Outcome {
    start: usize,
    exit: usize,
    y: f64,
    /// |EMA prediction at `start` − y|.
    ema_err: f64,
    /// |median prediction at `start` − y|.
    med_err: f64,
}

/// What a walk keeps beyond the state at the last row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// The state only ([`analyse_state`], [`analyse_states`]).
    State,
    /// Plus each row's cumulative errors ([`walk_forward`]).
    Signals,
    /// Every per-row series ([`analyse`]).
    Full,
}

/// What every (period, metric) walk over one series shares: computed once
/// per series by [`analyse_states`].
struct Prepared<'a> {
    dates: &'a [i32],
    closes: &'a [f64],
    drawdowns: Vec<f64>,
    /// The grid's floor steps at each row: the deepest drawdown so far,
    /// in whole [`FLOOR_STEP`]s (point-in-time).
    floor_steps: Vec<u32>,
    prefix: Prefix,
}

impl<'a> Prepared<'a> {
    /// Checks the series (not the parameters) and derives the shared parts;
    /// the return prefix sums only `with_prefix` (the `sharpe` and `sortino`
    /// outcomes read them, `return` does not).
    fn new(dates: &'a [i32], closes: &'a [f64], with_prefix: bool) -> Result<Self, EngineError> {
        validate_series(dates, closes)?;
        let drawdowns = drawdowns(closes);
        let mut deepest = 0;
        let floor_steps = drawdowns
            .iter()
            .map(|&d| {
                deepest = Grid::steps_for(d).max(deepest);
                deepest
            })
            .collect();
        Ok(Prepared {
            dates,
            closes,
            drawdowns,
            floor_steps,
            prefix: if with_prefix {
                Prefix::new(&daily_returns(closes))
            } else {
                Prefix::new(&[])
            },
        })
    }
}

/// The walk-forward's products that every output is assembled from.
struct Walk {
    periods_per_year: u32,
    /// The series' drawdowns when the walk came from [`walk`] (which owns
    /// them); empty from [`analyse_states`], which lends its shared ones.
    drawdowns: Vec<f64>,
    series: TimeSeries,
    outcomes: Vec<Outcome>,
    per_segment: Vec<Estimators>,
    grid: Grid,
    /// Segment of each row on the grid of that row (point-in-time); kept
    /// with [`Keep::Signals`] and [`Keep::Full`].
    segments: Vec<u8>,
    /// The states of the prefixes asked for, in order.
    snapshots: Vec<StateAt>,
    /// At the rows of [`Marks::Forecast`], in order: the median prediction
    /// and the confirmed episodes of the row's bucket.
    medians: Vec<f64>,
    episodes: Vec<u32>,
}

/// Rows at which a walk reports more than the last row's state.
#[derive(Debug, Clone, Copy)]
enum Marks<'a> {
    /// None.
    None,
    /// The state of the prefix ending at each ([`analyse_states_at`]).
    States(&'a [usize]),
    /// The median prediction and the current bucket's episodes at each
    /// ([`forecast_inputs`]).
    Forecast(&'a [usize]),
}

/// The point-in-time signals of every row ([`walk_forward`]): what a
/// backtest reads at each rebalance date. "None" is NaN in the error series.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkForward {
    /// `A` used for annualisation.
    pub periods_per_year: u32,
    /// Drawdown from the running peak.
    pub drawdowns: Vec<f64>,
    /// Segment of the row's drawdown on the grid of that row.
    pub segments: Vec<u8>,
    /// EMA prediction at the row.
    pub expected_returns: Vec<f64>,
    /// Median prediction at the row.
    pub median_returns: Vec<f64>,
    /// Mean EMA error over the outcomes confirmed by the row (NaN: none).
    pub prediction_error_cumavg: Vec<f64>,
    /// Mean median error over the outcomes confirmed by the row (NaN: none).
    pub median_error_cumavg: Vec<f64>,
}

/// A state-only analysis: what grading, verdicts and rankings need.
#[derive(Debug, Clone, PartialEq)]
pub struct StateSummary {
    /// `A` used for annualisation.
    pub periods_per_year: u32,
    /// State at `T`.
    pub current: CurrentState,
    /// One entry per segment, `num_segments` long.
    pub segments: Vec<SegmentStats>,
    /// Median over calendar years of the worst within-year drawdown.
    pub typical_max_drawdown: Option<f64>,
}

/// Runs the analysis of DESIGN.md §4 over `dates` (days since 1970-01-01,
/// strictly increasing) and `closes` (> 0).
pub fn analyse(dates: &[i32], closes: &[f64], params: &Params) -> Result<Analysis, EngineError> {
    let w = walk(dates, closes, params, Keep::Full)?;
    let summary = summarise(
        &w,
        &w.drawdowns,
        closes,
        typical_max_drawdown(dates, closes),
    );
    let path_len = ((f64::from(params.return_period) * f64::from(w.periods_per_year) / 365.0)
        .round() as usize)
        .max(1);
    Ok(Analysis {
        periods_per_year: w.periods_per_year,
        current: summary.current,
        distribution: distribution(&w.outcomes),
        scatter: scatter(&w.outcomes, &w.drawdowns, &w.grid),
        paths: segment_paths(closes, &w.drawdowns, &w.grid, path_len),
        segments: summary.segments,
        typical_max_drawdown: summary.typical_max_drawdown,
        series: w.series,
    })
}

/// The final state of [`analyse`] without the per-row series, paths, scatter
/// and distribution (identical values, a fraction of the work).
pub fn analyse_state(
    dates: &[i32],
    closes: &[f64],
    params: &Params,
) -> Result<StateSummary, EngineError> {
    let w = walk(dates, closes, params, Keep::State)?;
    Ok(summarise(
        &w,
        &w.drawdowns,
        closes,
        typical_max_drawdown(dates, closes),
    ))
}

/// [`analyse_state`] for each of `params` over one series, equal value for
/// value, sharing what the combinations have in common: the checks of the
/// series, the drawdowns, the return prefix sums, each horizon's exits and
/// `typical_max_drawdown`. One entry per `params`, in order; an error in
/// the series is every entry's.
pub fn analyse_states(
    dates: &[i32],
    closes: &[f64],
    params: &[Params],
) -> Vec<Result<StateSummary, EngineError>> {
    let with_prefix = params.iter().any(|p| reads_prefix(p.metric));
    let prepared = match Prepared::new(dates, closes, with_prefix) {
        Ok(p) => p,
        Err(e) => return params.iter().map(|_| Err(e.clone())).collect(),
    };
    let typical = typical_max_drawdown(dates, closes);
    let mut exits = ExitsByHorizon::default();
    params
        .iter()
        .map(|p| {
            validate_params(p)?;
            let w = walk_prepared(&prepared, p, exits.of(dates, p), Keep::State, Marks::None);
            Ok(summarise(&w, &prepared.drawdowns, closes, typical))
        })
        .collect()
}

/// The walk-forward signals of every row: the values of [`analyse`]'s
/// `series` plus each row's point-in-time segment, without the final
/// statistics. Row t depends on rows up to t only.
pub fn walk_forward(
    dates: &[i32],
    closes: &[f64],
    params: &Params,
) -> Result<WalkForward, EngineError> {
    let w = walk(dates, closes, params, Keep::Signals)?;
    let nan = |v: Vec<Option<f64>>| v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect();
    Ok(WalkForward {
        periods_per_year: w.periods_per_year,
        drawdowns: w.drawdowns,
        segments: w.segments,
        expected_returns: w.series.expected_returns,
        median_returns: w.series.median_returns,
        prediction_error_cumavg: nan(w.series.prediction_error_cumavg),
        median_error_cumavg: nan(w.series.median_error_cumavg),
    })
}

/// The state at the last row and the per-segment statistics of a walk over
/// `drawdowns` and `closes`.
fn summarise(
    w: &Walk,
    drawdowns: &[f64],
    closes: &[f64],
    typical_max_drawdown: Option<f64>,
) -> StateSummary {
    let last = closes.len() - 1;
    let current_segment = w.grid.segment(drawdowns[last]);
    StateSummary {
        periods_per_year: w.periods_per_year,
        current: current_state(
            &w.series,
            &w.outcomes,
            drawdowns,
            &w.grid,
            closes[last],
            current_segment,
        ),
        segments: segment_stats(closes, drawdowns, &w.outcomes, &w.per_segment, &w.grid),
        typical_max_drawdown,
    }
}

/// The state of each prefix `rows 0..=end` for `end` in `ends` (strictly
/// ascending, each prefix at least [`MIN_ROWS`] long), in one walk over
/// the series: entry `i` equals, value for value, the `current`, the
/// `segments[current.segment]` and the `typical_max_drawdown` of
/// [`analyse_state`] of the series cut after row `ends[i]`. Without
/// `periods_per_year` each prefix infers its own, as `analyse_state` of the
/// cut series would.
pub fn analyse_states_at(
    dates: &[i32],
    closes: &[f64],
    params: &Params,
    ends: &[u32],
) -> Result<Vec<StateAt>, EngineError> {
    analyse_states_at_many(dates, closes, std::slice::from_ref(params), ends)
        .pop()
        .expect("one answer per parameter set")
}

/// [`analyse_states_at`] for each of `params` over one series, in order,
/// sharing the checks of the series, the drawdowns, the return prefix sums
/// and each horizon's exits. An error in the series or in `ends` is every
/// entry's; a bad parameter set is its own.
pub fn analyse_states_at_many(
    dates: &[i32],
    closes: &[f64],
    params: &[Params],
    ends: &[u32],
) -> Vec<Result<Vec<StateAt>, EngineError>> {
    let with_prefix = params.iter().any(|p| reads_prefix(p.metric));
    let checked = Prepared::new(dates, closes, with_prefix).and_then(|prepared| {
        check_ends(ends, closes.len())?;
        Ok(prepared)
    });
    let prepared = match checked {
        Ok(p) => p,
        Err(e) => return params.iter().map(|_| Err(e.clone())).collect(),
    };
    let ends: Vec<usize> = ends.iter().map(|&e| e as usize).collect();
    let mut exits = ExitsByHorizon::default();
    params
        .iter()
        .map(|p| {
            validate_params(p)?;
            Ok(states_at(&prepared, p, exits.of(dates, p), &ends))
        })
        .collect()
}

/// Each horizon's exits, computed once for the parameter sets of one call
/// that share it.
#[derive(Default)]
struct ExitsByHorizon(Vec<(i32, Vec<Option<usize>>)>);

impl ExitsByHorizon {
    fn of(&mut self, dates: &[i32], params: &Params) -> &[Option<usize>] {
        let horizon = params.return_period as i32;
        let at = match self.0.iter().position(|(h, _)| *h == horizon) {
            Some(i) => i,
            None => {
                self.0.push((horizon, exits(dates, horizon)));
                self.0.len() - 1
            }
        };
        &self.0[at].1
    }
}

/// Refuses `ends` that are not strictly ascending rows of an `n`-row
/// series with at least [`MIN_ROWS`] rows up to each.
fn check_ends(ends: &[u32], n: usize) -> Result<(), EngineError> {
    if let Some(w) = ends.windows(2).find(|w| w[1] <= w[0]) {
        return Err(EngineError::InvalidInput(format!(
            "ends not strictly ascending at {}",
            w[1]
        )));
    }
    if let Some(&e) = ends
        .iter()
        .find(|&&e| e as usize >= n || (e as usize) + 1 < MIN_ROWS)
    {
        return Err(EngineError::InvalidInput(format!(
            "end row {e} outside {}..{n}",
            MIN_ROWS - 1
        )));
    }
    Ok(())
}

/// The states at `ends` for one checked parameter set.
fn states_at(
    prepared: &Prepared,
    params: &Params,
    exits: &[Option<usize>],
    ends: &[usize],
) -> Vec<StateAt> {
    let mut out = Vec::with_capacity(ends.len());
    for (p, part) in prefix_periods(prepared.dates, params, ends) {
        out.extend(walk_prepared(prepared, &p, exits, Keep::State, Marks::States(part)).snapshots);
    }
    out
}

/// `ends` in parts walked with one `periods_per_year` each, as the state
/// of each prefix infers it: `params`' own when given; otherwise 252 for
/// the ends before the first weekend and 365 from it (a prefix infers 365
/// once it holds a weekend).
fn prefix_periods<'e>(
    dates: &[i32],
    params: &Params,
    ends: &'e [usize],
) -> Vec<(Params, &'e [usize])> {
    if params.periods_per_year.is_some() {
        return vec![(*params, ends)];
    }
    let first_weekend = dates
        .iter()
        .position(|&d| is_weekend(d))
        .unwrap_or(dates.len());
    let split = ends.partition_point(|&e| e < first_weekend);
    [(&ends[..split], 252), (&ends[split..], 365)]
        .into_iter()
        .filter(|(part, _)| !part.is_empty())
        .map(|(part, a)| {
            let p = Params {
                periods_per_year: Some(a),
                ..*params
            };
            (p, part)
        })
        .collect()
}

/// What a forecast of the prefixes ending at some rows needs from the
/// engine ([`forecast_inputs`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ForecastInputs {
    /// At each end: the median prediction of the prefix ending there (the
    /// `current.median_return` of [`analyse_states_at`]).
    pub medians: Vec<f64>,
    /// At each end: the confirmed episodes of that prefix's current bucket
    /// (what [`episodes_at`] answers).
    pub episodes: Vec<u32>,
    /// The state of the whole series (what [`analyse_state`] answers).
    pub state: StateSummary,
}

/// The median predictions and episodes at `ends` (as
/// [`analyse_states_at`] and [`episodes_at`] answer them, with their
/// checks) and the state of the whole series, in one walk where the
/// prefixes' periods per year agree (given, or the `return` metric, whose
/// outcomes do not annualise): a live forecast's engine work at the cost
/// of one [`analyse_state`], without the per-prefix bucket statistics.
pub fn forecast_inputs(
    dates: &[i32],
    closes: &[f64],
    params: &Params,
    ends: &[u32],
) -> Result<ForecastInputs, EngineError> {
    let prepared = Prepared::new(dates, closes, reads_prefix(params.metric))?;
    check_ends(ends, closes.len())?;
    validate_params(params)?;
    let ends: Vec<usize> = ends.iter().map(|&e| e as usize).collect();
    let exits = exits(dates, params.return_period as i32);
    let one_walk = params.periods_per_year.is_some() || !reads_prefix(params.metric);
    let marks = if one_walk {
        Marks::Forecast(&ends)
    } else {
        Marks::None
    };
    let mut w = walk_prepared(&prepared, params, &exits, Keep::State, marks);
    let state = summarise(
        &w,
        &prepared.drawdowns,
        closes,
        typical_max_drawdown(dates, closes),
    );
    if !one_walk {
        for (p, part) in prefix_periods(dates, params, &ends) {
            let m = walk_prepared(&prepared, &p, &exits, Keep::State, Marks::Forecast(part));
            w.medians.extend(m.medians);
            w.episodes.extend(m.episodes);
        }
    }
    Ok(ForecastInputs {
        medians: w.medians,
        episodes: w.episodes,
        state,
    })
}

/// [`typical_max_drawdown`] of the rows pushed so far, kept up to date one
/// row at a time.
#[derive(Default)]
struct TypicalMaxDrawdown {
    /// Worst drawdown of each finished year with enough rows.
    finished: Vec<f64>,
    year: Option<i32>,
    peak: f64,
    worst: f64,
    rows: usize,
}

impl TypicalMaxDrawdown {
    fn push(&mut self, date: i32, close: f64) {
        let year = civil_from_days(date).0;
        if self.year != Some(year) {
            if self.rows >= MIN_ROWS_PER_YEAR {
                self.finished.push(self.worst);
            }
            (self.year, self.peak, self.worst, self.rows) = (Some(year), f64::MIN, 0.0, 0);
        }
        self.peak = max_num(self.peak, close);
        self.worst = min_num(self.worst, close / self.peak - 1.0);
        self.rows += 1;
    }

    fn value(&self) -> Option<f64> {
        let mut years = self.finished.clone();
        if self.rows >= MIN_ROWS_PER_YEAR {
            years.push(self.worst);
        }
        if years.is_empty() {
            return None;
        }
        years.sort_unstable_by(f64::total_cmp);
        Some(median_sorted(&years))
    }
}

fn walk(dates: &[i32], closes: &[f64], params: &Params, keep: Keep) -> Result<Walk, EngineError> {
    validate_params(params)?;
    let prepared = Prepared::new(dates, closes, reads_prefix(params.metric))?;
    let exits = exits(dates, params.return_period as i32);
    let mut w = walk_prepared(&prepared, params, &exits, keep, Marks::None);
    w.drawdowns = prepared.drawdowns;
    Ok(w)
}

/// The walk-forward of DESIGN.md §4 over a checked series for one checked
/// `params`, whose horizon's exits are `exits`; keeps what `keep` says, and
/// what `marks` asks at its rows (ascending row indices): the state of the
/// rows up to each as [`analyse_state`] would answer it for that prefix,
/// or its median prediction and episodes.
fn walk_prepared(
    prepared: &Prepared,
    params: &Params,
    exits: &[Option<usize>],
    keep: Keep,
    marks: Marks<'_>,
) -> Walk {
    let mut walker = Walker::new(prepared, params, exits, keep, marks);
    for t in 0..prepared.closes.len() {
        walker.row(t);
    }
    walker.finish()
}

/// One walk of [`walk_prepared`] under way: its inputs, the outcomes
/// confirmed and the estimators over them on the current grid, and what
/// it keeps of the rows walked so far.
struct Walker<'w> {
    params: &'w Params,
    dates: &'w [i32],
    closes: &'w [f64],
    drawdowns: &'w [f64],
    floor_steps: &'w [u32],
    prefix: &'w Prefix,
    exits: &'w [Option<usize>],
    /// The rows whose prefix state is asked ([`Marks::States`]), ascending.
    snapshots: &'w [usize],
    /// `A` used for annualisation.
    periods_per_year: u32,
    /// Whether every series is kept ([`Keep::Full`]).
    full: bool,
    /// Whether each row's segment and cumulative errors are kept.
    signals: bool,
    series: TimeSeries,
    outcomes: Vec<Outcome>,
    per_segment: Vec<Estimators>,
    regroup: Regroup,
    all: Overall,
    grid: Grid,
    segments: Vec<u8>,
    /// The first start whose outcome is neither confirmed nor skipped.
    next_start: usize,
    /// Sums of the absolute errors of the EMA and median predictions of
    /// the confirmed outcomes, and their count.
    ema_err_sum: f64,
    med_err_sum: f64,
    err_n: u32,
    taken: Vec<StateAt>,
    typical: TypicalMaxDrawdown,
    tracker: Option<snapshot::Tracker>,
    marked: Option<episodes::Marked<'w>>,
}

impl<'w> Walker<'w> {
    fn new(
        prepared: &'w Prepared,
        params: &'w Params,
        exits: &'w [Option<usize>],
        keep: Keep,
        marks: Marks<'w>,
    ) -> Self {
        let snapshots = match marks {
            Marks::States(rows) => rows,
            _ => &[],
        };
        let Prepared {
            dates,
            closes,
            drawdowns,
            floor_steps,
            prefix,
        } = prepared;
        let (dates, closes) = (*dates, *closes);
        let n = closes.len();
        let k = params.num_segments;
        let full = keep == Keep::Full;
        let signals = keep != Keep::State;
        let rows = |on: bool| if on { n } else { 0 };
        Walker {
            params,
            dates,
            closes,
            drawdowns,
            floor_steps,
            prefix,
            exits,
            snapshots,
            periods_per_year: params
                .periods_per_year
                .unwrap_or_else(|| infer_periods_per_year(dates)),
            full,
            signals,
            // The predictions at every row are needed for the errors of the
            // outcomes they start; the other series only when kept.
            series: TimeSeries {
                drawdowns: if full { drawdowns.clone() } else { Vec::new() },
                expected_returns: Vec::with_capacity(n),
                prediction_errors: vec![None; rows(full)],
                prediction_error_cumavg: Vec::with_capacity(rows(signals)),
                actual_returns: vec![None; rows(full)],
                median_returns: Vec::with_capacity(n),
                median_errors: vec![None; rows(full)],
                median_error_cumavg: Vec::with_capacity(rows(signals)),
                projected_prices: Vec::with_capacity(rows(full)),
            },
            outcomes: Vec::with_capacity(n),
            per_segment: (0..k).map(|_| Estimators::new()).collect(),
            regroup: Regroup::new(k as usize),
            all: Overall::new(),
            grid: Grid::new(floor_steps[0], k),
            segments: Vec::with_capacity(rows(signals)),
            next_start: 0,
            ema_err_sum: 0.0,
            med_err_sum: 0.0,
            err_n: 0,
            taken: Vec::with_capacity(snapshots.len()),
            typical: TypicalMaxDrawdown::default(),
            tracker: (!snapshots.is_empty()).then(|| snapshot::Tracker::new(k as usize)),
            marked: match marks {
                Marks::Forecast(rows) => Some(episodes::Marked::new(dates, exits, params, rows)),
                _ => None,
            },
        }
    }

    /// Row `t`: the grid moved to its floor, the outcomes exiting at it
    /// confirmed, then its predictions made and kept.
    fn row(&mut self, t: usize) {
        let steps = self.floor_steps[t];
        if steps != self.grid.steps {
            self.regrid(t, steps);
        }
        // Confirm every outcome whose exit is t.
        while self.next_start < t && self.exits[self.next_start] == Some(t) {
            let s = self.next_start;
            self.next_start += 1;
            let p = &self.params;
            if let Some(y) = outcome(
                p.metric,
                self.closes,
                self.prefix,
                s,
                t,
                self.periods_per_year,
            ) {
                self.confirm(s, t, y);
            }
        }
        // Starts whose exit lies past the window never confirm; skip them.
        while self.next_start < t && self.exits[self.next_start].is_none() {
            self.next_start += 1;
        }
        self.predict(t);
    }

    /// The floor deepened at row `t`: every past outcome is re-bucketed on
    /// the new grid and the bucket estimators replayed in confirmation
    /// order.
    fn regrid(&mut self, t: usize, steps: u32) {
        let lambda = self.params.decay_factor;
        self.grid = Grid::new(steps, self.params.num_segments);
        self.regroup
            .group(&self.outcomes, self.drawdowns, &self.grid);
        for (i, est) in self.per_segment.iter_mut().enumerate() {
            est.refill(self.regroup.ys(i), lambda);
        }
        if let Some(tracker) = &mut self.tracker {
            tracker.regroup(&self.grid, self.drawdowns, t, &self.outcomes);
        }
        if let Some(marked) = &mut self.marked {
            marked.regroup(&self.grid, self.drawdowns, t);
        }
    }

    /// Confirms `y`, the outcome of start `s` at its exit `t`: the errors
    /// of the predictions made at `s`, its bucket's estimators and the
    /// overall one.
    fn confirm(&mut self, s: usize, t: usize, y: f64) {
        let lambda = self.params.decay_factor;
        let series = &mut self.series;
        let ema_err = (series.expected_returns[s] - y).abs();
        let med_err = (series.median_returns[s] - y).abs();
        if self.full {
            series.actual_returns[s] = Some(y);
            series.prediction_errors[s] = Some(ema_err);
            series.median_errors[s] = Some(med_err);
        }
        self.ema_err_sum += ema_err;
        self.med_err_sum += med_err;
        self.err_n += 1;
        let bucket = self.grid.segment(self.drawdowns[s]);
        self.per_segment[bucket].push(y, lambda);
        self.all.push(y, lambda);
        let o = Outcome {
            start: s,
            exit: t,
            y,
            ema_err,
            med_err,
        };
        if let Some(tracker) = &mut self.tracker {
            tracker.outcome(&o, bucket, self.closes);
        }
        self.outcomes.push(o);
    }

    /// Row `t`'s predictions, from its bucket (else every outcome), and
    /// what is kept of them; its state when asked.
    fn predict(&mut self, t: usize) {
        let (closes, drawdowns) = (self.closes, self.drawdowns);
        let segment = self.grid.segment(drawdowns[t]);
        // validate() bounds num_segments to 50, so the index fits a byte.
        if self.signals {
            self.segments.push(segment as u8);
        }
        let (ema, med) = self.per_segment[segment]
            .predict()
            .or_else(|| self.all.predict(&self.outcomes))
            .unwrap_or((0.0, 0.0));
        self.series.expected_returns.push(ema);
        self.series.median_returns.push(med);
        if let Some(marked) = &mut self.marked {
            marked.row(t, segment, med);
        }
        if self.signals {
            let n = self.err_n;
            let cum = |sum: f64| (n > 0).then(|| sum / f64::from(n));
            self.series
                .prediction_error_cumavg
                .push(cum(self.ema_err_sum));
            self.series.median_error_cumavg.push(cum(self.med_err_sum));
        }
        if self.full {
            self.series.projected_prices.push(match self.params.metric {
                Metric::Return => Some(closes[t] * (1.0 + med)),
                _ => None,
            });
        }
        if let Some(tracker) = &mut self.tracker {
            self.typical.push(self.dates[t], closes[t]);
            tracker.row(segment);
            if self.snapshots.get(self.taken.len()) == Some(&t) {
                self.taken.push(tracker.take(snapshot::Snapshot {
                    periods_per_year: self.periods_per_year,
                    grid: &self.grid,
                    estimators: &self.per_segment,
                    segment,
                    price: closes[t],
                    drawdown: drawdowns[t],
                    expected_return: ema,
                    median_return: med,
                    all_errors: (self.ema_err_sum, self.med_err_sum, self.err_n),
                    typical_max_drawdown: self.typical.value(),
                }));
            }
        }
    }

    /// The walk's products.
    fn finish(self) -> Walk {
        let mut marked = self.marked;
        Walk {
            periods_per_year: self.periods_per_year,
            drawdowns: Vec::new(),
            series: self.series,
            outcomes: self.outcomes,
            per_segment: self.per_segment,
            grid: self.grid,
            segments: self.segments,
            snapshots: self.taken,
            medians: marked
                .as_mut()
                .map_or(Vec::new(), |m| std::mem::take(&mut m.medians)),
            episodes: marked.map_or(Vec::new(), |m| m.episodes),
        }
    }
}

/// Checks the series: as long as each other, enough rows, dates strictly
/// increasing, closes positive.
fn validate_series(dates: &[i32], closes: &[f64]) -> Result<(), EngineError> {
    let invalid = |m: String| Err(EngineError::InvalidInput(m));
    if dates.len() != closes.len() {
        return invalid(format!("{} dates but {} closes", dates.len(), closes.len()));
    }
    if closes.len() < MIN_ROWS {
        return Err(EngineError::InsufficientData {
            rows: closes.len() as u32,
            required: MIN_ROWS as u32,
        });
    }
    if let Some(i) = dates.windows(2).position(|w| w[1] <= w[0]) {
        return invalid(format!("dates not strictly increasing at row {}", i + 1));
    }
    if let Some(i) = closes.iter().position(|p| !(p.is_finite() && *p > 0.0)) {
        return invalid(format!("close at row {i} is not a positive number"));
    }
    Ok(())
}

/// Checks the parameters against their ranges.
fn validate_params(params: &Params) -> Result<(), EngineError> {
    let invalid = |m: String| Err(EngineError::InvalidInput(m));
    if !(7..=365).contains(&params.return_period) {
        return invalid(format!(
            "return_period {} outside 7..=365",
            params.return_period
        ));
    }
    if !(10..=50).contains(&params.num_segments) {
        return invalid(format!(
            "num_segments {} outside 10..=50",
            params.num_segments
        ));
    }
    if !(0.80..=0.99).contains(&params.decay_factor) {
        return invalid(format!(
            "decay_factor {} outside 0.80..=0.99",
            params.decay_factor
        ));
    }
    if let Some(a) = params.periods_per_year {
        if a != 252 && a != 365 {
            return invalid(format!("periods_per_year {a} is neither 252 nor 365"));
        }
    }
    Ok(())
}

/// 365 when the series trades on weekends (crypto, CS2 cases), else 252.
pub fn infer_periods_per_year(dates: &[i32]) -> u32 {
    if dates.iter().any(|&d| is_weekend(d)) {
        365
    } else {
        252
    }
}

/// `d_t = P_t / max_{s<=t} P_s − 1`.
pub fn drawdowns(closes: &[f64]) -> Vec<f64> {
    let mut peak = f64::MIN;
    closes
        .iter()
        .map(|&p| {
            peak = max_num(peak, p);
            p / peak - 1.0
        })
        .collect()
}

/// `exit(t)`: the first index `j > t` with `date_j >= date_t + h`.
fn exits(dates: &[i32], horizon: i32) -> Vec<Option<usize>> {
    let n = dates.len();
    let mut j = 0usize;
    (0..n)
        .map(|t| {
            j = j.max(t + 1);
            while j < n && dates[j] < dates[t] + horizon {
                j += 1;
            }
            (j < n).then_some(j)
        })
        .collect()
}

/// `r[v] = P_v / P_{v−1} − 1` (r[0] = 0, never used).
fn daily_returns(closes: &[f64]) -> Vec<f64> {
    std::iter::once(0.0)
        .chain(closes.windows(2).map(|w| w[1] / w[0] - 1.0))
        .collect()
}

/// Prefix sums of the daily returns, their squares and their squared
/// downsides, so a Sharpe or Sortino outcome over `(s, j]` costs O(1)
/// instead of O(j − s). Entry `k` covers rows `1..=k`, so it depends on no
/// row after `k` (the no-look-ahead invariant holds).
pub(crate) struct Prefix {
    sum: Vec<f64>,
    squares: Vec<f64>,
    downside: Vec<f64>,
}

impl Prefix {
    pub(crate) fn new(daily: &[f64]) -> Self {
        let n = daily.len();
        let (mut sum, mut squares, mut downside) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
        for (k, &r) in daily.iter().enumerate() {
            if k > 0 {
                a += r;
                b += r * r;
                // A return is never -0.0 (p / q - 1 rounds to +0.0).
                let down = min_num(r, 0.0);
                c += down * down;
            }
            sum.push(a);
            squares.push(b);
            downside.push(c);
        }
        Prefix {
            sum,
            squares,
            downside,
        }
    }
}

/// Whether [`outcome`] reads the [`Prefix`] sums for `metric`.
fn reads_prefix(metric: Metric) -> bool {
    matches!(metric, Metric::Sharpe | Metric::Sortino)
}

/// The outcome of a start `s` exiting at `j`, or `None` when undefined.
pub(crate) fn outcome(
    metric: Metric,
    closes: &[f64],
    prefix: &Prefix,
    s: usize,
    j: usize,
    a: u32,
) -> Option<f64> {
    let a = f64::from(a);
    let value = match metric {
        Metric::Return => closes[j] / closes[s] - 1.0,
        Metric::Sharpe | Metric::Sortino => {
            let n = (j - s) as f64;
            if j - s < 2 {
                return None;
            }
            let m = (prefix.sum[j] - prefix.sum[s]) / n;
            if metric == Metric::Sharpe {
                let sq = prefix.squares[j] - prefix.squares[s];
                let var = (sq - n * m * m) / (n - 1.0);
                // Constant returns have no deviation; the prefix sums can
                // only say so up to rounding.
                if var <= 1e-12 * max_num(m * m, f64::MIN_POSITIVE) || var <= 0.0 {
                    return None;
                }
                m / var.sqrt() * a.sqrt()
            } else {
                let down = prefix.downside[j] - prefix.downside[s];
                if down <= 0.0 {
                    return None;
                }
                let downside = (down / n).sqrt();
                m * a / (downside * a.sqrt())
            }
        }
    };
    value.is_finite().then_some(value)
}

fn current_state(
    series: &TimeSeries,
    outcomes: &[Outcome],
    drawdowns: &[f64],
    grid: &Grid,
    price: f64,
    segment: usize,
) -> CurrentState {
    let last = drawdowns.len() - 1;
    let errors = |pick: &dyn Fn(&Outcome) -> bool| -> (f64, f64, u32) {
        let (mut e, mut m, mut c) = (0.0, 0.0, 0u32);
        for o in outcomes.iter().filter(|o| pick(o)) {
            e += o.ema_err;
            m += o.med_err;
            c += 1;
        }
        (e, m, c)
    };
    let (e, m, confirmed) = errors(&|o| grid.segment(drawdowns[o.start]) == segment);
    let (e, m, c) = if confirmed > 0 {
        (e, m, confirmed)
    } else {
        errors(&|_| true)
    };
    let at = Figures {
        price,
        drawdown: drawdowns[last],
        segment: segment as u32,
        expected_return: series.expected_returns[last],
        median_return: series.median_returns[last],
    };
    at.state((e, m, c), confirmed)
}

/// The point-in-time figures of a current state, before its errors.
pub(crate) struct Figures {
    pub(crate) price: f64,
    pub(crate) drawdown: f64,
    pub(crate) segment: u32,
    pub(crate) expected_return: f64,
    pub(crate) median_return: f64,
}

impl Figures {
    /// The current state from the EMA and median error sums `e` and `m`
    /// over `c` outcomes (mean errors 0 without any; the median is the
    /// better method on a tie), `confirmed` outcomes in its bucket.
    pub(crate) fn state(self, (e, m, c): (f64, f64, u32), confirmed: u32) -> CurrentState {
        let (prediction_error, median_error) = if c > 0 {
            (e / f64::from(c), m / f64::from(c))
        } else {
            (0.0, 0.0)
        };
        let (best_method, best_error) = if median_error <= prediction_error {
            (Method::Median, median_error)
        } else {
            (Method::Ema, prediction_error)
        };
        CurrentState {
            price: self.price,
            drawdown: self.drawdown,
            segment: self.segment,
            expected_return: self.expected_return,
            prediction_error,
            median_return: self.median_return,
            median_error,
            best_method,
            best_error,
            insufficient_data: confirmed < SUFFICIENT_OUTCOMES,
            confirmed_count: confirmed,
        }
    }
}

fn segment_stats(
    closes: &[f64],
    drawdowns: &[f64],
    outcomes: &[Outcome],
    estimators: &[Estimators],
    grid: &Grid,
) -> Vec<SegmentStats> {
    let k = grid.k as usize;
    let mut counts = vec![0u32; k];
    for &d in drawdowns {
        counts[grid.segment(d)] += 1;
    }
    let mut ys: Vec<Vec<f64>> = vec![Vec::new(); k];
    let mut losses: Vec<f64> = vec![0.0; k];
    // Lowest close over each holding window (start, exit]: both ends only
    // move forward (outcomes are in start order, exits are monotone), so a
    // monotone deque gives every window's minimum in O(n) overall.
    let mut window: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    let mut next = 0usize;
    for o in outcomes {
        let seg = grid.segment(drawdowns[o.start]);
        ys[seg].push(o.y);
        next = next.max(o.start + 1);
        while next <= o.exit {
            while window.back().is_some_and(|&b| closes[b] >= closes[next]) {
                window.pop_back();
            }
            window.push_back(next);
            next += 1;
        }
        while window.front().is_some_and(|&f| f <= o.start) {
            window.pop_front();
        }
        // min_v (P_v / P_s − 1) = (min_v P_v) / P_s − 1 exactly: division by
        // a positive constant is monotone, so one division suffices.
        let lowest = closes[*window.front().expect("exit > start")];
        // Neither is ever -0.0: x / y - 1 rounds to +0.0, losses start at +0.0.
        let worst = min_num(lowest / closes[o.start] - 1.0, 0.0);
        losses[seg] = min_num(losses[seg], worst);
    }
    (0..k)
        .map(|i| {
            let y = &mut ys[i];
            let has = !y.is_empty();
            let avg = has.then(|| mean(y));
            let win = has.then(|| y.iter().filter(|&&v| v > 0.0).count() as f64 / y.len() as f64);
            SegmentStats {
                segment_idx: i as u32,
                lower_bound: -((i + 1) as f64) * grid.width,
                upper_bound: -(i as f64) * grid.width,
                count: counts[i],
                expected_return: estimators[i].ema,
                avg_return: avg,
                median_return: has.then(|| estimators[i].window.median()),
                static_median_return: has.then(|| median_select(y)),
                max_loss: has.then_some(losses[i]),
                win_rate: win,
            }
        })
        .collect()
}

fn distribution(outcomes: &[Outcome]) -> Distribution {
    if outcomes.is_empty() {
        return Distribution::default();
    }
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for o in outcomes {
        lo = lo.min(o.y);
        hi = hi.max(o.y);
    }
    if lo == hi {
        // Same convention as numpy.histogram for a degenerate range.
        lo -= 0.5;
        hi += 0.5;
    }
    let width = (hi - lo) / DISTRIBUTION_BINS as f64;
    let bins = (0..=DISTRIBUTION_BINS)
        .map(|i| {
            if i == DISTRIBUTION_BINS {
                hi
            } else {
                lo + width * i as f64
            }
        })
        .collect();
    let mut counts = vec![0u32; DISTRIBUTION_BINS];
    for o in outcomes {
        let i = (((o.y - lo) / width).floor() as usize).min(DISTRIBUTION_BINS - 1);
        counts[i] += 1;
    }
    Distribution { bins, counts }
}

/// Indices of `m` items spread evenly over `0..len`, first and last included.
fn spread(len: usize, m: usize) -> Vec<usize> {
    if len <= m {
        return (0..len).collect();
    }
    if m == 1 {
        return vec![len - 1];
    }
    (0..m)
        .map(|i| ((i as f64) * (len - 1) as f64 / (m - 1) as f64).round() as usize)
        .collect()
}

fn scatter(outcomes: &[Outcome], drawdowns: &[f64], grid: &Grid) -> Vec<ScatterPoint> {
    spread(outcomes.len(), MAX_SCATTER_POINTS)
        .into_iter()
        .map(|i| {
            let o = outcomes[i];
            let d = drawdowns[o.start];
            ScatterPoint {
                drawdown: d,
                future_return: o.y,
                segment: grid.segment(d) as u32,
            }
        })
        .collect()
}

fn segment_paths(closes: &[f64], drawdowns: &[f64], grid: &Grid, len: usize) -> Vec<SegmentPaths> {
    let n = closes.len();
    if n <= len {
        return Vec::new();
    }
    let mut starts: Vec<Vec<usize>> = vec![Vec::new(); grid.k as usize];
    for t in 0..n - len {
        starts[grid.segment(drawdowns[t])].push(t);
    }
    let path = |t: usize| -> Vec<f64> {
        let p0 = closes[t];
        closes[t..=t + len].iter().map(|p| p / p0 - 1.0).collect()
    };
    let mut column = Vec::new();
    starts
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.is_empty())
        .map(|(seg, s)| {
            let mut q: [Vec<f64>; 5] = Default::default();
            for step in 0..=len {
                column.clear();
                column.extend(
                    s.iter()
                        .map(|&t| order_key(closes[t + step] / closes[t] - 1.0)),
                );
                let values = percentiles_select(&mut column, [0.10, 0.25, 0.50, 0.75, 0.90]);
                for (out, v) in q.iter_mut().zip(values) {
                    out.push(v);
                }
            }
            let [p10, p25, p50, p75, p90] = q;
            SegmentPaths {
                segment: seg as u32,
                paths: spread(s.len(), MAX_SAMPLE_PATHS)
                    .into_iter()
                    .map(|i| path(s[i]))
                    .collect(),
                p10,
                p25,
                p50,
                p75,
                p90,
                num_paths_total: s.len() as u32,
            }
        })
        .collect()
}

/// Median over calendar years with at least [`MIN_ROWS_PER_YEAR`] rows of the
/// worst drawdown within the year, the peak restarting each year.
pub fn typical_max_drawdown(dates: &[i32], closes: &[f64]) -> Option<f64> {
    let mut worst_per_year = Vec::new();
    let mut i = 0;
    while i < dates.len() {
        let year = civil_from_days(dates[i]).0;
        let (mut peak, mut worst, mut rows) = (f64::MIN, 0.0f64, 0usize);
        while i < dates.len() && civil_from_days(dates[i]).0 == year {
            peak = max_num(peak, closes[i]);
            worst = min_num(worst, closes[i] / peak - 1.0);
            rows += 1;
            i += 1;
        }
        if rows >= MIN_ROWS_PER_YEAR {
            worst_per_year.push(worst);
        }
    }
    if worst_per_year.is_empty() {
        return None;
    }
    worst_per_year.sort_unstable_by(f64::total_cmp);
    Some(median_sorted(&worst_per_year))
}

#[cfg(test)]
mod tests;
