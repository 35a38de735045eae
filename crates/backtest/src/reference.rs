//! The accounting loop as it was before issue 17 (one cursor walk per asset
//! and row, the z-score recomputed per decision), kept as the oracle the
//! columnar loop of [`super::run_capped`] must match bit for bit: its
//! arithmetic verbatim, its steps in functions of their own (issue 42).

use super::*;

pub fn reference_run_capped<S: Strategy>(
    assets: &[AssetInput<'_>],
    window: Window,
    params: &RunParams,
    strategy: &mut S,
    cancelled: &mut dyn FnMut() -> bool,
    max_trades: usize,
) -> Result<Report, RunError<S::Error>> {
    let universe = universe_of(assets, window)?;
    let inputs: Vec<&AssetInput<'_>> = universe.iter().map(|&i| &assets[i]).collect();
    let n_assets = inputs.len();
    start_on(&inputs, params, strategy)?;

    let (dates, data_points) = calendar(&inputs, window);
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
    let mut pending: Option<Vec<f64>> = None;
    let rows = dates.len();
    let mut benchmarks = Benchmarks::new(capital, n_assets, rows);
    let mut equity = Vec::with_capacity(rows);
    let mut cash = Vec::with_capacity(rows);
    let mut trades = TradeLog::new(max_trades);
    let mut total_costs = 0.0;
    let mut decisions = 0u32;

    for (i, &date) in dates.iter().enumerate() {
        if cancelled() {
            return Err(RunError::Cancelled);
        }
        advance(&inputs, date, &mut seen, &mut prices);
        // Fill yesterday's decisions at today's close.
        if let Some(w) = pending.take() {
            total_costs += book.fill(&w, &prices, costs, date, Some(&mut trades));
        }
        benchmarks.row(&prices, date);
        let e = book.equity(&prices);
        equity.push(e);
        cash.push(book.cash);

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
                    let weight = if e > 0.0 {
                        book.qty[a] * prices[a] / e
                    } else {
                        0.0
                    };
                    asset_state(a, inputs[a], seen[a] - 1, prices[a], weight, lookback)
                })
                .collect(),
        };
        if cancelled() {
            return Err(RunError::Cancelled);
        }
        let targets = strategy.rebalance(&ctx).map_err(RunError::Strategy)?;
        decisions += 1;
        pending = Some(dense_weights(&targets, &eligible, n_assets).map_err(RunError::Contract)?);
        benchmarks.decide(&eligible, n_assets);
    }

    Ok(super::report(
        universe,
        dates,
        super::Simulated {
            equity,
            cash,
            hold_curve: benchmarks.hold_curve,
            rebal_curve: benchmarks.rebal_curve,
            trades,
            total_costs,
            decisions,
        },
        data_points,
    ))
}

/// The universe: 300 rows by the end and at least one row in the window.
fn universe_of<E>(assets: &[AssetInput<'_>], window: Window) -> Result<Vec<usize>, RunError<E>> {
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
    Ok(universe)
}

/// The calendar: the union of the universe's dates inside the window; and
/// how many rows of prices it holds.
fn calendar(inputs: &[&AssetInput<'_>], window: Window) -> (Vec<i32>, u64) {
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
    (dates, data_points)
}

/// Moves each asset's cursor in `seen` past its rows up to `date`, its
/// close (carried forward) into `prices`.
fn advance(inputs: &[&AssetInput<'_>], date: i32, seen: &mut [usize], prices: &mut [f64]) {
    for (a, input) in inputs.iter().enumerate() {
        let s = &mut seen[a];
        while *s < input.dates.len() && input.dates[*s] <= date {
            *s += 1;
        }
        if *s > 0 {
            prices[a] = input.closes[*s - 1];
        }
    }
}

/// What the strategy sees of asset `a` (`input`) at its row `j`, priced
/// at `price`, held at `weight` of the equity.
fn asset_state(
    a: usize,
    input: &AssetInput<'_>,
    j: usize,
    price: f64,
    weight: f64,
    lookback: usize,
) -> AssetState {
    let sig = input.signals;
    let opt = |x: f64| (!x.is_nan()).then_some(x);
    AssetState {
        asset: a as u32,
        price,
        drawdown: sig.drawdowns[j],
        segment: u32::from(sig.segments[j]),
        expected_return: sig.expected_returns[j],
        median_return: sig.median_returns[j],
        prediction_error: opt(sig.prediction_error_cumavg[j]),
        median_error: opt(sig.median_error_cumavg[j]),
        zscore: zscore(&sig.drawdowns, j, lookback),
        weight,
    }
}

/// The two benchmarks of the report: the eligible assets of the first
/// decision bought at equal weight and held, and the eligible assets at
/// equal weight again at every decision; each filled, like the strategy,
/// at the next row's close, without costs.
struct Benchmarks {
    hold: Book,
    rebal: Book,
    hold_pending: Option<Vec<f64>>,
    hold_bought: bool,
    rebal_pending: Option<Vec<f64>>,
    hold_curve: Vec<f64>,
    rebal_curve: Vec<f64>,
}

impl Benchmarks {
    fn new(capital: f64, n_assets: usize, rows: usize) -> Self {
        Benchmarks {
            hold: Book::new(capital, n_assets),
            rebal: Book::new(capital, n_assets),
            hold_pending: None,
            hold_bought: false,
            rebal_pending: None,
            hold_curve: Vec::with_capacity(rows),
            rebal_curve: Vec::with_capacity(rows),
        }
    }

    /// Fills yesterday's decisions at today's `prices` and records the
    /// equity of each.
    fn row(&mut self, prices: &[f64], date: i32) {
        if let Some(w) = self.hold_pending.take() {
            self.hold.fill(&w, prices, None, date, None);
        }
        if let Some(w) = self.rebal_pending.take() {
            self.rebal.fill(&w, prices, None, date, None);
        }
        self.hold_curve.push(self.hold.equity(prices));
        self.rebal_curve.push(self.rebal.equity(prices));
    }

    /// Decides at a rebalance row: equal weights of the `eligible` assets.
    fn decide(&mut self, eligible: &[usize], n_assets: usize) {
        if !eligible.is_empty() {
            let mut equal = vec![0.0; n_assets];
            for &a in eligible {
                equal[a] = 1.0 / eligible.len() as f64;
            }
            if !self.hold_bought {
                self.hold_bought = true;
                self.hold_pending = Some(equal.clone());
            }
            self.rebal_pending = Some(equal);
        }
    }
}
