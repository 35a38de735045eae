//! The strategy contract in plain Rust: what a strategy sees and answers.
//! These mirror the `strategy` interface of `wit/forecast.wit` field for
//! field; the SDK re-exports them to strategy authors.

pub use forecast_engine::Metric;

/// When decisions are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rebalance {
    /// Every calendar row.
    Daily,
    /// The first row of each ISO week (Monday to Sunday).
    Weekly,
    /// The first row of each calendar month.
    Monthly,
    /// The window's first row only: one decision, then held (buy and hold).
    Never,
}

impl Rebalance {
    /// The request spelling: `daily`, `weekly`, `monthly` or `never`.
    pub fn as_str(self) -> &'static str {
        match self {
            Rebalance::Daily => "daily",
            Rebalance::Weekly => "weekly",
            Rebalance::Monthly => "monthly",
            Rebalance::Never => "never",
        }
    }

    /// Parses the request spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "daily" => Some(Rebalance::Daily),
            "weekly" => Some(Rebalance::Weekly),
            "monthly" => Some(Rebalance::Monthly),
            "never" => Some(Rebalance::Never),
            _ => None,
        }
    }
}

/// A run's parameters with every default filled in (the spec's
/// `BacktestRequest` minus the universe and the dates).
#[derive(Debug, Clone, PartialEq)]
pub struct RunParams {
    /// Positions to hold; what that means is the strategy's business.
    pub top_n: u32,
    /// The rebalance schedule.
    pub rebalance: Rebalance,
    /// The engine's horizon in calendar days (7..=365).
    pub return_period: u32,
    /// The engine's bucket count (10..=50).
    pub num_segments: u32,
    /// The engine's EMA decay (0.80..=0.99).
    pub decay_factor: f64,
    /// The metric the engine predicts.
    pub metric: Metric,
    /// Equity at the start (> 0).
    pub initial_capital: f64,
    /// Whether trading costs are charged.
    pub include_costs: bool,
    /// Rows of the drawdown z-score window.
    pub zscore_lookback: u32,
    /// Enter at z <= -zscore_entry.
    pub zscore_entry: f64,
    /// Exit at z >= -zscore_exit.
    pub zscore_exit: f64,
}

impl Default for RunParams {
    /// The spec's defaults (and DESIGN §6's for the z-score fields).
    fn default() -> Self {
        RunParams {
            top_n: 10,
            rebalance: Rebalance::Monthly,
            return_period: 90,
            num_segments: 20,
            decay_factor: 0.95,
            metric: Metric::Return,
            initial_capital: 100_000.0,
            include_costs: true,
            zscore_lookback: 252,
            zscore_entry: 2.0,
            zscore_exit: 0.0,
        }
    }
}

impl RunParams {
    /// Checks the bounds every run needs (the server answers a 400 naming
    /// the field; the SDK's harness refuses the same values): `top_n`
    /// 1..=500, `return_period` 7..=365, `num_segments` 10..=50,
    /// `decay_factor` 0.80..=0.99, `initial_capital` in (0, 1e12],
    /// `zscore_lookback` 20..=1260, `zscore_entry` in (0, 10],
    /// `zscore_exit` in [-10, 10].
    pub fn validate(&self) -> Result<(), ParamError> {
        fn check(field: &str, ok: bool, bounds: &str, got: String) -> Result<(), ParamError> {
            match ok {
                true => Ok(()),
                false => Err(ParamError::new(
                    field,
                    format!("{field} must be {bounds} (got {got})"),
                )),
            }
        }
        let int = "an integer between";
        check(
            "top_n",
            (1..=500).contains(&self.top_n),
            &format!("{int} 1 and 500"),
            self.top_n.to_string(),
        )?;
        check(
            "return_period",
            (7..=365).contains(&self.return_period),
            &format!("{int} 7 and 365"),
            self.return_period.to_string(),
        )?;
        check(
            "num_segments",
            (10..=50).contains(&self.num_segments),
            &format!("{int} 10 and 50"),
            self.num_segments.to_string(),
        )?;
        check(
            "decay_factor",
            (0.80..=0.99).contains(&self.decay_factor),
            "a number between 0.80 and 0.99 inclusive",
            self.decay_factor.to_string(),
        )?;
        check(
            "initial_capital",
            self.initial_capital > 0.0 && self.initial_capital <= 1e12,
            "a number greater than 0 and at most 1e12",
            self.initial_capital.to_string(),
        )?;
        check(
            "zscore_lookback",
            (20..=1_260).contains(&self.zscore_lookback),
            &format!("{int} 20 and 1260"),
            self.zscore_lookback.to_string(),
        )?;
        check(
            "zscore_entry",
            self.zscore_entry > 0.0 && self.zscore_entry <= 10.0,
            "a number greater than 0 and at most 10",
            self.zscore_entry.to_string(),
        )?;
        check(
            "zscore_exit",
            (-10.0..=10.0).contains(&self.zscore_exit),
            "a number between -10 and 10 inclusive",
            self.zscore_exit.to_string(),
        )
    }
}

/// One asset of the universe; decisions refer to it by its index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetMeta {
    /// Ticker.
    pub ticker: String,
    /// Display name.
    pub name: String,
    /// Category, e.g. `US Stocks` or `Crypto`.
    pub category: String,
}

/// What is known of one asset at a rebalance date, from its rows up to that
/// date only (the values of its latest row when it did not trade that day).
#[derive(Debug, Clone, PartialEq)]
pub struct AssetState {
    /// Index into the universe.
    pub asset: u32,
    /// Close.
    pub price: f64,
    /// Drawdown from the running peak, in [-1, 0].
    pub drawdown: f64,
    /// Segment of that drawdown on the grid of that date (0 is the shallowest).
    pub segment: u32,
    /// The engine's EMA prediction in the run's metric.
    pub expected_return: f64,
    /// The engine's median prediction in the run's metric.
    pub median_return: f64,
    /// Mean absolute EMA error over the outcomes confirmed so far.
    pub prediction_error: Option<f64>,
    /// Mean absolute median error over the outcomes confirmed so far.
    pub median_error: Option<f64>,
    /// z-score of the drawdown over the last `zscore_lookback` rows.
    pub zscore: Option<f64>,
    /// Current weight in the portfolio (negative when short).
    pub weight: f64,
}

/// Everything a strategy sees at one rebalance date.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// The date, days since 1970-01-01.
    pub date: i32,
    /// Portfolio value at that date's close.
    pub equity: f64,
    /// Cash at that date's close.
    pub cash: f64,
    /// The assets tradeable at that date, in universe order.
    pub assets: Vec<AssetState>,
}

/// A target weight for one asset after the next fill; negative is short.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// Index into the universe.
    pub asset: u32,
    /// Share of equity; the absolute weights add up to at most 1.
    pub weight: f64,
}

/// A request field the strategy (or the host) cannot work with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    /// The request field at fault, e.g. `top_n`.
    pub field: String,
    /// What is wrong, for the client.
    pub message: String,
}

impl ParamError {
    /// A new error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ParamError {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ParamError {}

/// The engine's point-in-time signals of one asset, aligned with its rows
/// (what `engine.walk-forward` returns; NaN is "none" in the error series).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Signals {
    /// Drawdown from the running peak.
    pub drawdowns: Vec<f64>,
    /// Segment on the grid of each row.
    pub segments: Vec<u8>,
    /// EMA prediction.
    pub expected_returns: Vec<f64>,
    /// Median prediction.
    pub median_returns: Vec<f64>,
    /// Mean EMA error confirmed by the row (NaN: none).
    pub prediction_error_cumavg: Vec<f64>,
    /// Mean median error confirmed by the row (NaN: none).
    pub median_error_cumavg: Vec<f64>,
}

impl Signals {
    /// Rows covered.
    pub fn len(&self) -> usize {
        self.drawdowns.len()
    }

    /// True when no row is covered.
    pub fn is_empty(&self) -> bool {
        self.drawdowns.is_empty()
    }

    /// Approximate heap size, for cache budgets.
    pub fn heap_bytes(&self) -> usize {
        self.len() * (5 * std::mem::size_of::<f64>() + 1)
    }
}

impl From<forecast_engine::WalkForward> for Signals {
    fn from(w: forecast_engine::WalkForward) -> Self {
        Signals {
            drawdowns: w.drawdowns,
            segments: w.segments,
            expected_returns: w.expected_returns,
            median_returns: w.median_returns,
            prediction_error_cumavg: w.prediction_error_cumavg,
            median_error_cumavg: w.median_error_cumavg,
        }
    }
}

/// A strategy as the accounting drives it. The host implements it over a
/// Wasm instance (its `Error` is the sandbox's), the SDK over native code.
pub trait Strategy {
    /// A failure of the strategy itself (trap, timeout, refusal).
    type Error;

    /// Begins a run; the inner error refuses a parameter (a 400 for the
    /// client), the outer one is a failure of the strategy.
    fn start(
        &mut self,
        universe: &[AssetMeta],
        params: &RunParams,
    ) -> Result<Result<(), ParamError>, Self::Error>;

    /// The target portfolio at one rebalance date.
    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, Self::Error>;
}
