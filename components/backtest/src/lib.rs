//! Backtest accounting (DESIGN.md §6) in plain Rust.
//!
//! A strategy only answers target weights; everything else happens here:
//! the calendar (the union of the universe's dates, prices carried forward,
//! never backward), who may trade when (300 rows of history), the
//! point-in-time context of each rebalance date, fills at the next row's
//! close, costs, cash and shorts, the equity curve, trades, metrics and the
//! two equal-weight benchmarks.
//!
//! The host runs Wasm strategies through [`run`]; the SDK's native harness
//! runs native strategies through the very same function, so a strategy
//! tested natively behaves identically behind `POST /api/backtest`.
//!
//! No look-ahead by construction: the context of row `t` is assembled from
//! each asset's rows up to `t` and from signals that depend on rows up to
//! `t` only; the decision is filled at row `t + 1`.

mod metrics;
mod types;

pub use metrics::{metrics, Metrics};
pub use types::{
    AssetMeta, AssetState, Context, Metric, ParamError, Rebalance, RunParams, Signals, Strategy,
    Target,
};

use forecast_engine::{civil_from_days, is_weekend};

/// Rows of history an asset needs before a strategy may trade it.
pub const MIN_HISTORY: usize = 300;

/// Slack allowed on the gross exposure of a target portfolio (rounding of
/// weights like 1/3).
const GROSS_SLACK: f64 = 1e-9;

/// Name of the buy-and-hold benchmark.
pub const BUY_HOLD: &str = "equal_weight_buy_hold";
/// Name of the rebalanced benchmark.
pub const REBALANCED: &str = "equal_weight_rebalanced";

/// Trading cost per side in basis points of traded notional, by category
/// (DESIGN §6): equities (every stock exchange, BMV) and ETFs 6, Crypto and
/// CS2 Cases 15, Forex 2, everything else (Commodities, Indices) 5.
pub fn cost_bps(category: &str) -> f64 {
    match category {
        "Crypto" | "CS2 Cases" => 15.0,
        "Forex" => 2.0,
        "ETFs" | "BMV" => 6.0,
        c if c.ends_with("Stocks") => 6.0,
        _ => 5.0,
    }
}

/// One asset's data for a run. `dates`, `closes` and `signals` are aligned
/// and may extend before the window (history counts towards eligibility and
/// the z-score) and after it (ignored).
#[derive(Debug, Clone, Copy)]
pub struct AssetInput<'a> {
    /// Who it is.
    pub meta: &'a AssetMeta,
    /// Trading cost per side, in basis points of traded notional.
    pub cost_bps: f64,
    /// Days since 1970-01-01, strictly increasing.
    pub dates: &'a [i32],
    /// Closes, > 0.
    pub closes: &'a [f64],
    /// The engine's walk-forward signals over the same rows.
    pub signals: &'a Signals,
}

/// The dates of a run, inclusive, in days since 1970-01-01.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First date.
    pub start: i32,
    /// Last date.
    pub end: i32,
}

/// Side of a trade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Quantity bought.
    Buy,
    /// Quantity sold (or sold short).
    Sell,
}

/// One fill.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trade {
    /// Fill date (the row after the decision).
    pub date: i32,
    /// Index into [`Report::universe`].
    pub asset: usize,
    /// Buy or sell.
    pub side: Side,
    /// Quantity, > 0 (fractional).
    pub qty: f64,
    /// The fill's reference close.
    pub price: f64,
    /// Cost charged: `qty * price * cost_bps / 10_000`, 0 without costs.
    pub cost: f64,
}

/// Everything a run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Indexes into the run's inputs of the assets that formed the universe
    /// (300 rows by the window's end and a row inside it), in input order.
    pub universe: Vec<usize>,
    /// Calendar dates of the window.
    pub dates: Vec<i32>,
    /// Equity at each date's close, `equity[0]` the initial capital.
    pub equity: Vec<f64>,
    /// Cash at each date's close.
    pub cash: Vec<f64>,
    /// The fills in date order: every fill, or the first `max_trades` of
    /// [`run_capped`] (`trades_total` counts them all).
    pub trades: Vec<Trade>,
    /// How many fills the run made (`metrics.total_trades`), kept or not.
    pub trades_total: u64,
    /// The benchmarks' equity over the same dates.
    pub benchmarks: Vec<(&'static str, Vec<f64>)>,
    /// Metrics of `equity`.
    pub metrics: Metrics,
    /// 365 when the calendar has weekend dates, else 252.
    pub periods_per_year: u32,
    /// Decisions taken (strategy calls).
    pub rebalance_dates: u32,
    /// Price rows of the universe inside the window.
    pub data_points: u64,
}

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError<E> {
    /// No asset of the inputs has 300 rows by the end and a row in the window.
    EmptyUniverse,
    /// A parameter the host or the strategy refused (a 400).
    Param(ParamError),
    /// The strategy failed.
    Strategy(E),
    /// The strategy answered something the contract forbids.
    Contract(String),
    /// `cancelled` answered true (the host's deadline passed).
    Cancelled,
}

/// The fills of a run: every one counted, the first `max` kept.
struct TradeLog {
    kept: Vec<Trade>,
    max: usize,
    total: u64,
}

impl TradeLog {
    fn record(&mut self, trade: Trade) {
        self.total += 1;
        if self.kept.len() < self.max {
            self.kept.push(trade);
        }
    }
}

/// The portfolio of one book (the strategy's or a benchmark's).
struct Book {
    cash: f64,
    qty: Vec<f64>,
    /// Indexes with a non-zero quantity.
    held: Vec<usize>,
}

impl Book {
    fn new(cash: f64, assets: usize) -> Self {
        Book {
            cash,
            qty: vec![0.0; assets],
            held: Vec::new(),
        }
    }

    fn equity(&self, prices: &[f64]) -> f64 {
        self.cash
            + self
                .held
                .iter()
                .map(|&a| self.qty[a] * prices[a])
                .sum::<f64>()
    }

    /// Trades to `weights` (dense, one per asset) of the equity at `prices`.
    /// Returns the costs charged. With equity <= 0 every position is closed.
    fn fill(
        &mut self,
        weights: &[f64],
        prices: &[f64],
        cost_bps: Option<&[f64]>,
        date: i32,
        mut trades: Option<&mut TradeLog>,
    ) -> f64 {
        let equity = self.equity(prices);
        let mut costs = 0.0;
        for a in 0..self.qty.len() {
            let w = if equity > 0.0 { weights[a] } else { 0.0 };
            if w == 0.0 && self.qty[a] == 0.0 {
                continue;
            }
            let price = prices[a];
            let target = w * equity / price;
            let delta = target - self.qty[a];
            // Skip dust: a trade below a billionth of the equity.
            if (delta * price).abs() <= 1e-9 * equity.abs().max(1.0) && w != 0.0 {
                continue;
            }
            if delta == 0.0 {
                continue;
            }
            let notional = delta.abs() * price;
            let cost = cost_bps.map_or(0.0, |bps| notional * bps[a] / 10_000.0);
            self.cash -= delta * price + cost;
            costs += cost;
            self.qty[a] = if w == 0.0 { 0.0 } else { target };
            if let Some(trades) = trades.as_deref_mut() {
                trades.record(Trade {
                    date,
                    asset: a,
                    side: if delta > 0.0 { Side::Buy } else { Side::Sell },
                    qty: delta.abs(),
                    price,
                    cost,
                });
            }
        }
        self.held = (0..self.qty.len())
            .filter(|&a| self.qty[a] != 0.0)
            .collect();
        costs
    }
}

/// True when row `i` of `dates` starts a rebalance period.
fn is_rebalance_row(dates: &[i32], i: usize, schedule: Rebalance) -> bool {
    if i == 0 {
        return true;
    }
    let (prev, cur) = (dates[i - 1], dates[i]);
    match schedule {
        Rebalance::Daily => true,
        // Weeks run Monday to Sunday; day 4 (1970-01-05) was a Monday.
        Rebalance::Weekly => (prev - 4).div_euclid(7) != (cur - 4).div_euclid(7),
        Rebalance::Monthly => {
            let (y0, m0, _) = civil_from_days(prev);
            let (y1, m1, _) = civil_from_days(cur);
            (y0, m0) != (y1, m1)
        }
    }
}

/// z-score of `d[j]` within `d[j + 1 - lookback ..= j]` (sample standard
/// deviation); none before `lookback` rows exist or when they are all equal.
pub fn zscore(d: &[f64], j: usize, lookback: usize) -> Option<f64> {
    if lookback < 2 || j + 1 < lookback {
        return None;
    }
    let window = &d[j + 1 - lookback..=j];
    let mean = window.iter().sum::<f64>() / lookback as f64;
    let var = window.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (lookback - 1) as f64;
    let sd = var.sqrt();
    (sd > 1e-12).then(|| (d[j] - mean) / sd)
}

/// Runs `strategy` over `assets` inside `window` with `params`.
/// `cancelled` is polled every row and before every strategy call.
pub fn run<S: Strategy>(
    assets: &[AssetInput<'_>],
    window: Window,
    params: &RunParams,
    strategy: &mut S,
    cancelled: &mut dyn FnMut() -> bool,
) -> Result<Report, RunError<S::Error>> {
    run_capped(assets, window, params, strategy, cancelled, usize::MAX)
}

/// [`run`] keeping only the first `max_trades` fills in
/// [`Report::trades`]: the accounting (cash, costs, equity, metrics,
/// `trades_total`) still sees every fill, but memory holds at most
/// `max_trades` of them (a daily long-short of 1,000 positions over a
/// century makes tens of millions).
pub fn run_capped<S: Strategy>(
    assets: &[AssetInput<'_>],
    window: Window,
    params: &RunParams,
    strategy: &mut S,
    cancelled: &mut dyn FnMut() -> bool,
    max_trades: usize,
) -> Result<Report, RunError<S::Error>> {
    // The universe: 300 rows by the end and at least one row in the window.
    let universe: Vec<usize> = assets
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            let by_end = a.dates.partition_point(|&d| d <= window.end);
            let before = a.dates.partition_point(|&d| d < window.start);
            by_end >= MIN_HISTORY && by_end > before
        })
        .map(|(i, _)| i)
        .collect();
    if universe.is_empty() {
        return Err(RunError::EmptyUniverse);
    }
    let inputs: Vec<&AssetInput<'_>> = universe.iter().map(|&i| &assets[i]).collect();
    let n_assets = inputs.len();
    if params.top_n == 0 || params.top_n as usize > n_assets {
        return Err(RunError::Param(ParamError::new(
            "top_n",
            format!(
                "top_n must be between 1 and {n_assets}, the number of assets in the universe \
                 with {MIN_HISTORY} rows of history by end_date (got {})",
                params.top_n
            ),
        )));
    }
    let metas: Vec<AssetMeta> = inputs.iter().map(|a| a.meta.clone()).collect();
    match strategy.start(&metas, params) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(RunError::Param(e)),
        Err(e) => return Err(RunError::Strategy(e)),
    }

    // The calendar: the union of the universe's dates inside the window.
    let mut dates: Vec<i32> = inputs
        .iter()
        .flat_map(|a| {
            let lo = a.dates.partition_point(|&d| d < window.start);
            let hi = a.dates.partition_point(|&d| d <= window.end);
            a.dates[lo..hi].iter().copied()
        })
        .collect();
    dates.sort_unstable();
    dates.dedup();
    let data_points: u64 = inputs
        .iter()
        .map(|a| {
            let lo = a.dates.partition_point(|&d| d < window.start);
            let hi = a.dates.partition_point(|&d| d <= window.end);
            (hi - lo) as u64
        })
        .sum();

    let cost_bps: Vec<f64> = inputs.iter().map(|a| a.cost_bps).collect();
    let costs = params.include_costs.then_some(cost_bps.as_slice());
    let capital = params.initial_capital;
    let lookback = params.zscore_lookback as usize;

    // Rows of each asset seen so far (its cursor) and its carried-forward close.
    let mut seen: Vec<usize> = inputs
        .iter()
        .map(|a| a.dates.partition_point(|&d| d < dates[0]))
        .collect();
    let mut prices: Vec<f64> = vec![f64::NAN; n_assets];

    let mut book = Book::new(capital, n_assets);
    let mut hold = Book::new(capital, n_assets);
    let mut rebal = Book::new(capital, n_assets);
    let mut pending: Option<Vec<f64>> = None;
    let mut hold_pending: Option<Vec<f64>> = None;
    let mut hold_bought = false;
    let mut rebal_pending: Option<Vec<f64>> = None;

    let rows = dates.len();
    let mut equity = Vec::with_capacity(rows);
    let mut cash = Vec::with_capacity(rows);
    let mut hold_curve = Vec::with_capacity(rows);
    let mut rebal_curve = Vec::with_capacity(rows);
    let mut trades = TradeLog {
        kept: Vec::new(),
        max: max_trades,
        total: 0,
    };
    let mut total_costs = 0.0;
    let mut decisions = 0u32;

    for (i, &date) in dates.iter().enumerate() {
        if cancelled() {
            return Err(RunError::Cancelled);
        }
        for (a, input) in inputs.iter().enumerate() {
            let s = &mut seen[a];
            while *s < input.dates.len() && input.dates[*s] <= date {
                *s += 1;
            }
            if *s > 0 {
                prices[a] = input.closes[*s - 1];
            }
        }
        // Fill yesterday's decisions at today's close.
        if let Some(w) = pending.take() {
            total_costs += book.fill(&w, &prices, costs, date, Some(&mut trades));
        }
        if let Some(w) = hold_pending.take() {
            hold.fill(&w, &prices, None, date, None);
        }
        if let Some(w) = rebal_pending.take() {
            rebal.fill(&w, &prices, None, date, None);
        }
        let e = book.equity(&prices);
        equity.push(e);
        cash.push(book.cash);
        hold_curve.push(hold.equity(&prices));
        rebal_curve.push(rebal.equity(&prices));

        // Decide at today's close, to be filled at the next row.
        if i + 1 == rows || !is_rebalance_row(&dates, i, params.rebalance) {
            continue;
        }
        let eligible: Vec<usize> = (0..n_assets).filter(|&a| seen[a] >= MIN_HISTORY).collect();
        let ctx = Context {
            date,
            equity: e,
            cash: book.cash,
            assets: eligible
                .iter()
                .map(|&a| {
                    let j = seen[a] - 1;
                    let sig = inputs[a].signals;
                    let opt = |x: f64| (!x.is_nan()).then_some(x);
                    AssetState {
                        asset: a as u32,
                        price: prices[a],
                        drawdown: sig.drawdowns[j],
                        segment: u32::from(sig.segments[j]),
                        expected_return: sig.expected_returns[j],
                        median_return: sig.median_returns[j],
                        prediction_error: opt(sig.prediction_error_cumavg[j]),
                        median_error: opt(sig.median_error_cumavg[j]),
                        zscore: zscore(&sig.drawdowns, j, lookback),
                        weight: if e > 0.0 {
                            book.qty[a] * prices[a] / e
                        } else {
                            0.0
                        },
                    }
                })
                .collect(),
        };
        if cancelled() {
            return Err(RunError::Cancelled);
        }
        let targets = strategy.rebalance(&ctx).map_err(RunError::Strategy)?;
        decisions += 1;
        pending = Some(dense_weights(&targets, &eligible, n_assets).map_err(RunError::Contract)?);

        if !eligible.is_empty() {
            let mut equal = vec![0.0; n_assets];
            for &a in &eligible {
                equal[a] = 1.0 / eligible.len() as f64;
            }
            if !hold_bought {
                hold_bought = true;
                hold_pending = Some(equal.clone());
            }
            rebal_pending = Some(equal);
        }
    }

    let periods_per_year = if dates.iter().any(|&d| is_weekend(d)) {
        365
    } else {
        252
    };
    let metrics = metrics(&equity, periods_per_year, total_costs, trades.total);
    Ok(Report {
        universe,
        dates,
        equity,
        cash,
        trades: trades.kept,
        trades_total: trades.total,
        benchmarks: vec![(BUY_HOLD, hold_curve), (REBALANCED, rebal_curve)],
        metrics,
        periods_per_year,
        rebalance_dates: decisions,
        data_points,
    })
}

/// Checks a strategy's answer against the contract and spreads it over the
/// universe: known, tradeable assets, each at most once, finite weights,
/// gross exposure at most 1.
fn dense_weights(targets: &[Target], eligible: &[usize], n: usize) -> Result<Vec<f64>, String> {
    let mut tradeable = vec![false; n];
    for &a in eligible {
        tradeable[a] = true;
    }
    let mut weights = vec![0.0; n];
    let mut named = vec![false; n];
    let mut gross = 0.0;
    for t in targets {
        let a = t.asset as usize;
        if a >= n || !tradeable[a] {
            return Err(format!(
                "target for asset {a}, which is not tradeable at this date"
            ));
        }
        if named[a] {
            return Err(format!("asset {a} targeted twice"));
        }
        if !t.weight.is_finite() {
            return Err(format!("weight {} for asset {a} is not finite", t.weight));
        }
        named[a] = true;
        weights[a] = t.weight;
        gross += t.weight.abs();
    }
    if gross > 1.0 + GROSS_SLACK {
        return Err(format!(
            "gross exposure {gross} exceeds 1 (the absolute weights must add up to at most 1)"
        ));
    }
    Ok(weights)
}

#[cfg(test)]
mod tests;
