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
pub mod montecarlo;
pub mod pnl;
pub mod risk;
mod types;
pub mod walkforward;

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
    /// Its risk figures ([`risk`]).
    pub risk: risk::Risk,
    /// Its figures against each benchmark, in `benchmarks` order.
    pub relative: Vec<(&'static str, risk::Relative)>,
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
    /// Value of every fill, `qty * price`, kept or not.
    traded: f64,
}

impl TradeLog {
    fn new(max: usize) -> TradeLog {
        TradeLog {
            kept: Vec::new(),
            max,
            total: 0,
            traded: 0.0,
        }
    }

    fn record(&mut self, trade: Trade) {
        self.total += 1;
        self.traded += trade.qty * trade.price;
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
        Rebalance::Never => false,
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

/// Checks `top_n` against the universe's `inputs` and starts the strategy on
/// their assets (what every run does before its first row).
pub(crate) fn start_on<S: Strategy>(
    inputs: &[&AssetInput<'_>],
    params: &RunParams,
    strategy: &mut S,
) -> Result<(), RunError<S::Error>> {
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
    Ok(())
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
    // The universe: 300 rows by the end and at least one row in the window;
    // `span` is each input's rows inside the window.
    let mut universe = Vec::new();
    let mut spans = Vec::new();
    for (i, a) in assets.iter().enumerate() {
        let by_end = a.dates.partition_point(|&d| d <= window.end);
        let before = a.dates.partition_point(|&d| d < window.start);
        if by_end >= MIN_HISTORY && by_end > before {
            universe.push(i);
            spans.push((before, by_end));
        }
    }
    if universe.is_empty() {
        return Err(RunError::EmptyUniverse);
    }
    let inputs: Vec<&AssetInput<'_>> = universe.iter().map(|&i| &assets[i]).collect();
    start_on(&inputs, params, strategy)?;

    let Calendar { dates, data_points } = Calendar::new(&inputs, &spans);

    let rows = dates.len();
    // The decision rows, known from the calendar alone.
    let decision_rows: Vec<usize> = (0..rows.saturating_sub(1))
        .filter(|&i| is_rebalance_row(&dates, i, params.rebalance))
        .collect();
    let mut snapshots = Snapshots::new(
        &inputs,
        &dates,
        &decision_rows,
        params.zscore_lookback as usize,
    );
    let tape = TapeRef {
        dates: &dates,
        spans: &spans,
        decision_rows: &decision_rows,
    };
    #[cfg(feature = "parallel")]
    let outcome = {
        // What a strategy sees except the portfolio's own state depends on
        // the data alone, so a second thread assembles the contexts (and
        // their z-scores) a block or so ahead while this one fills, marks
        // to market and calls the strategy. Buffers travel back to be reused.
        use std::sync::mpsc::sync_channel;
        const AHEAD: usize = 8;
        let (tx, rx) = sync_channel::<Snapshot>(AHEAD);
        let (back_tx, back_rx) = sync_channel::<Snapshot>(AHEAD + 2);
        std::thread::scope(|scope| {
            let producer = &mut snapshots;
            scope.spawn(move || {
                while let Some(snap) = producer.next(back_rx.try_recv().ok()) {
                    if tx.send(snap).is_err() {
                        return; // the run ended early
                    }
                }
            });
            let outcome = simulate(
                &inputs,
                tape,
                params,
                strategy,
                cancelled,
                max_trades,
                &mut || rx.recv().ok(),
                &mut |used| {
                    let _ = back_tx.try_send(used);
                },
            );
            // Dropping the receiver stops a producer still ahead.
            drop(rx);
            outcome
        })
    };
    #[cfg(not(feature = "parallel"))]
    let outcome = {
        let spare = std::cell::Cell::new(None);
        simulate(
            &inputs,
            tape,
            params,
            strategy,
            cancelled,
            max_trades,
            &mut || snapshots.next(spare.take()),
            &mut |used| spare.set(Some(used)),
        )
    };
    Ok(report(universe, dates, outcome?, data_points))
}

/// The report of a finished simulation: its curves, metrics, risk figures
/// and figures against the two benchmarks.
fn report(universe: Vec<usize>, dates: Vec<i32>, sim: Simulated, data_points: u64) -> Report {
    let Simulated {
        equity,
        cash,
        hold_curve,
        rebal_curve,
        trades,
        total_costs,
        decisions,
    } = sim;
    let periods_per_year = if dates.iter().any(|&d| is_weekend(d)) {
        365
    } else {
        252
    };
    let metrics = metrics(&equity, periods_per_year, total_costs, trades.total);
    let risk = risk::risk(
        &dates,
        &equity,
        &cash,
        trades.traded,
        periods_per_year,
        metrics.cagr,
        metrics.max_drawdown,
    );
    let benchmarks = vec![(BUY_HOLD, hold_curve), (REBALANCED, rebal_curve)];
    let relative = benchmarks
        .iter()
        .map(|(name, curve)| (*name, risk::relative(&equity, curve, periods_per_year)))
        .collect();
    Report {
        universe,
        dates,
        equity,
        cash,
        trades: trades.kept,
        trades_total: trades.total,
        benchmarks,
        metrics,
        risk,
        relative,
        periods_per_year,
        rebalance_dates: decisions,
        data_points,
    }
}

/// The calendar, each asset's rows inside the window and the decision
/// rows, borrowed by [`simulate`].
#[derive(Clone, Copy)]
struct TapeRef<'t> {
    dates: &'t [i32],
    spans: &'t [(usize, usize)],
    decision_rows: &'t [usize],
}

/// The curves and totals of [`simulate`].
struct Simulated {
    equity: Vec<f64>,
    cash: Vec<f64>,
    hold_curve: Vec<f64>,
    rebal_curve: Vec<f64>,
    trades: TradeLog,
    total_costs: f64,
    decisions: u32,
}

/// The accounting loop proper: row by row, the fills of the previous
/// decision at today's close, the marks to market, and at each decision
/// row the next [`Snapshot`] completed with the portfolio's weights and
/// handed to the strategy. `next` yields the snapshots in decision order;
/// `recycle` takes each back once the strategy has answered.
#[allow(clippy::too_many_arguments)]
fn simulate<S: Strategy>(
    inputs: &[&AssetInput<'_>],
    tape: TapeRef<'_>,
    params: &RunParams,
    strategy: &mut S,
    cancelled: &mut dyn FnMut() -> bool,
    max_trades: usize,
    next: &mut dyn FnMut() -> Option<Snapshot>,
    recycle: &mut dyn FnMut(Snapshot),
) -> Result<Simulated, RunError<S::Error>> {
    let n_assets = inputs.len();
    let dates = tape.dates;
    let cost_bps: Vec<f64> = inputs.iter().map(|a| a.cost_bps).collect();
    let costs = params.include_costs.then_some(cost_bps.as_slice());
    let capital = params.initial_capital;

    // Each asset's carried-forward close (from before the window when it
    // has rows there), a block of rows at a time.
    let mut block = PriceBlock::new(inputs, dates, tape.spans);

    let mut book = Book::new(capital, n_assets);
    let mut hold = Book::new(capital, n_assets);
    let mut rebal = Book::new(capital, n_assets);
    let mut pending: Option<Vec<f64>> = None;
    let mut hold_pending: Option<Vec<f64>> = None;
    let mut hold_bought = false;
    let mut rebal_pending: Option<Vec<f64>> = None;

    let rows = dates.len();
    let mut out = Simulated {
        equity: Vec::with_capacity(rows),
        cash: Vec::with_capacity(rows),
        hold_curve: Vec::with_capacity(rows),
        rebal_curve: Vec::with_capacity(rows),
        trades: TradeLog::new(max_trades),
        total_costs: 0.0,
        decisions: 0,
    };

    for (i, &date) in dates.iter().enumerate() {
        if cancelled() {
            return Err(RunError::Cancelled);
        }
        let prices = block.row(i);
        // Fill yesterday's decisions at today's close.
        if let Some(w) = pending.take() {
            out.total_costs += book.fill(&w, prices, costs, date, Some(&mut out.trades));
        }
        if let Some(w) = hold_pending.take() {
            hold.fill(&w, prices, None, date, None);
        }
        if let Some(w) = rebal_pending.take() {
            rebal.fill(&w, prices, None, date, None);
        }
        let e = book.equity(prices);
        out.equity.push(e);
        out.cash.push(book.cash);
        out.hold_curve.push(hold.equity(prices));
        out.rebal_curve.push(rebal.equity(prices));

        // Decide at today's close, to be filled at the next row.
        if tape.decision_rows.get(out.decisions as usize) != Some(&i) {
            continue;
        }
        let Some(mut snap) = next() else {
            unreachable!("one snapshot per decision row");
        };
        debug_assert_eq!(snap.row, i);
        for (s, &a) in snap.assets.iter_mut().zip(&snap.eligible) {
            s.weight = if e > 0.0 {
                book.qty[a] * prices[a] / e
            } else {
                0.0
            };
        }
        let ctx = Context {
            date,
            equity: e,
            cash: book.cash,
            assets: std::mem::take(&mut snap.assets),
        };
        if cancelled() {
            return Err(RunError::Cancelled);
        }
        let targets = strategy.rebalance(&ctx).map_err(RunError::Strategy)?;
        snap.assets = ctx.assets;
        out.decisions += 1;
        pending =
            Some(dense_weights(&targets, &snap.eligible, n_assets).map_err(RunError::Contract)?);

        if !snap.eligible.is_empty() {
            let mut equal = vec![0.0; n_assets];
            for &a in &snap.eligible {
                equal[a] = 1.0 / snap.eligible.len() as f64;
            }
            if !hold_bought {
                hold_bought = true;
                hold_pending = Some(equal.clone());
            }
            rebal_pending = Some(equal);
        }
        recycle(snap);
    }
    Ok(out)
}

/// What a strategy sees at one decision except the portfolio's own state
/// (equity, cash and the weights, filled in by [`simulate`]): the tradeable
/// assets (300 rows by that date) with their prices and signals. It depends
/// on the data alone, so it can be assembled ahead of the loop.
struct Snapshot {
    /// Calendar row of the decision.
    row: usize,
    /// Universe indexes of the tradeable assets, increasing.
    eligible: Vec<usize>,
    /// Their states, `weight` still 0.
    assets: Vec<AssetState>,
}

/// Yields the [`Snapshot`] of every decision in order, assembled a block of
/// [`ZSCORE_BLOCK`] decisions at a time: the block's z-scores, then each
/// asset's values for every decision of the block (asset by asset, so each
/// asset's columns are read a few neighbouring rows at a time). Decision by
/// decision, the same values meant a read from seven columns of every asset
/// per decision: some 22,000 scattered pages for the whole universe, so most
/// of a cached daily run went to TLB misses.
struct Snapshots<'r, 'a> {
    inputs: &'r [&'r AssetInput<'a>],
    calendar: &'r [i32],
    decision_rows: &'r [usize],
    lookback: usize,
    /// The first decision of the next block.
    next: usize,
    block: ZscoreBlock,
    /// The current block's snapshots not yet handed out, last decision first.
    ready: Vec<Snapshot>,
    /// Buffers handed back, reused by the next block.
    spare: Vec<Snapshot>,
}

impl Snapshots<'_, '_> {
    fn new<'r, 'a>(
        inputs: &'r [&'r AssetInput<'a>],
        calendar: &'r [i32],
        decision_rows: &'r [usize],
        lookback: usize,
    ) -> Snapshots<'r, 'a> {
        Snapshots {
            inputs,
            calendar,
            decision_rows,
            lookback,
            next: 0,
            block: ZscoreBlock::new(inputs.len()),
            ready: Vec::with_capacity(ZSCORE_BLOCK),
            spare: Vec::with_capacity(ZSCORE_BLOCK),
        }
    }

    /// The next decision's snapshot; `reuse` is a buffer handed back.
    fn next(&mut self, reuse: Option<Snapshot>) -> Option<Snapshot> {
        if let Some(buffer) = reuse {
            if self.spare.len() < ZSCORE_BLOCK {
                self.spare.push(buffer);
            }
        }
        if self.ready.is_empty() {
            if self.next >= self.decision_rows.len() {
                return None;
            }
            self.fill_block();
        }
        self.ready.pop()
    }

    /// Assembles the snapshots of the block of decisions from `self.next`.
    fn fill_block(&mut self) {
        let first = self.next;
        self.block.fill(
            self.inputs,
            self.calendar,
            self.decision_rows,
            first,
            self.lookback,
        );
        let len = self.block.len;
        let assets = self.inputs.len();
        let mut snaps: Vec<Snapshot> = self.decision_rows[first..first + len]
            .iter()
            .map(|&row| {
                let mut snap = self.spare.pop().unwrap_or_else(|| Snapshot {
                    row,
                    eligible: Vec::with_capacity(assets),
                    assets: Vec::with_capacity(assets),
                });
                snap.row = row;
                snap.eligible.clear();
                snap.assets.clear();
                snap
            })
            .collect();
        let opt = |x: f64| (!x.is_nan()).then_some(x);
        for (a, input) in self.inputs.iter().enumerate() {
            let sig = input.signals;
            for (i, snap) in snaps.iter_mut().enumerate() {
                let k = first + i;
                // Rows up to the decision's date: the block's cursor.
                let seen = self.block.seen(a, k);
                debug_assert!(
                    seen == input
                        .dates
                        .partition_point(|&d| d <= self.calendar[snap.row])
                );
                if seen < MIN_HISTORY {
                    continue;
                }
                let j = seen - 1;
                snap.eligible.push(a);
                snap.assets.push(AssetState {
                    asset: a as u32,
                    price: input.closes[j],
                    drawdown: sig.drawdowns[j],
                    segment: u32::from(sig.segments[j]),
                    expected_return: sig.expected_returns[j],
                    median_return: sig.median_returns[j],
                    prediction_error: opt(sig.prediction_error_cumavg[j]),
                    median_error: opt(sig.median_error_cumavg[j]),
                    zscore: opt(self.block.get(a, k)),
                    weight: 0.0,
                });
            }
        }
        self.next = first + len;
        self.ready.extend(snaps.into_iter().rev());
    }
}

/// Decisions whose z-scores are computed at once.
const ZSCORE_BLOCK: usize = 32;

/// Each asset's cursor and drawdown z-score for a block of upcoming
/// decisions ([`ZSCORE_BLOCK`] of them), several windows at a time. NaN
/// stands for none. Each value is [`zscore`]'s, bit for bit: the same sums
/// in the same order, only interleaved.
struct ZscoreBlock {
    /// First decision of the block.
    first: usize,
    /// Decisions covered.
    len: usize,
    /// `values[a * ZSCORE_BLOCK + (k - first)]`.
    values: Vec<f64>,
    /// Rows of the asset up to the decision's date, same layout.
    seen: Vec<u32>,
    /// Each asset's rows up to the previous block's last decision: where
    /// the next block's search starts (blocks come in date order).
    cursors: Vec<usize>,
}

impl ZscoreBlock {
    fn new(assets: usize) -> Self {
        ZscoreBlock {
            first: 0,
            len: 0,
            values: vec![f64::NAN; assets * ZSCORE_BLOCK],
            seen: vec![0; assets * ZSCORE_BLOCK],
            cursors: vec![0; assets],
        }
    }

    fn get(&self, a: usize, k: usize) -> f64 {
        self.values[a * ZSCORE_BLOCK + (k - self.first)]
    }

    fn seen(&self, a: usize, k: usize) -> usize {
        self.seen[a * ZSCORE_BLOCK + (k - self.first)] as usize
    }

    /// Computes the block starting at decision `k`.
    fn fill(
        &mut self,
        inputs: &[&AssetInput<'_>],
        calendar: &[i32],
        decision_rows: &[usize],
        k: usize,
        lookback: usize,
    ) {
        let rows = &decision_rows[k..(k + ZSCORE_BLOCK).min(decision_rows.len())];
        self.first = k;
        self.len = rows.len();
        let blocks = self
            .values
            .chunks_mut(ZSCORE_BLOCK)
            .zip(self.seen.chunks_mut(ZSCORE_BLOCK));
        for (((out, seen_out), input), cursor) in blocks.zip(inputs).zip(&mut self.cursors) {
            let mut s = advance_to(input.dates, *cursor, calendar[rows[0]]);
            // The distinct rows the block reads (a row repeats on the dates
            // the asset did not trade), each z-score computed once.
            let mut distinct = [usize::MAX; ZSCORE_BLOCK];
            let mut which = [0usize; ZSCORE_BLOCK];
            let mut n = 0;
            for ((w, seen), &row) in which.iter_mut().zip(seen_out.iter_mut()).zip(rows) {
                while s < input.dates.len() && input.dates[s] <= calendar[row] {
                    s += 1;
                }
                *seen = s as u32;
                // Not tradeable yet: never read, so not computed (usize::MAX
                // is never a row: NaN).
                let j = if s >= MIN_HISTORY { s - 1 } else { usize::MAX };
                if n == 0 || distinct[n - 1] != j {
                    distinct[n] = j;
                    n += 1;
                }
                *w = n - 1;
            }
            *cursor = s;
            let mut values = [f64::NAN; ZSCORE_BLOCK];
            zscores_into(
                &input.signals.drawdowns,
                &distinct[..n],
                lookback,
                &mut values[..n],
            );
            for (o, &w) in out.iter_mut().zip(&which[..rows.len()]) {
                *o = values[w];
            }
        }
    }
}

/// `from + dates[from..].partition_point(|&d| d < day)` for increasing
/// `dates`, galloping from `from`: a few reads next to `from` when the
/// answer is near it, as it is from one block of decisions to the next (a
/// binary search over the whole history missed the cache at every step).
fn advance_to(dates: &[i32], from: usize, day: i32) -> usize {
    let mut lo = from;
    let mut step = 1;
    // Invariant: every date of `dates[from..lo]` is before `day`.
    while lo + step <= dates.len() && dates[lo + step - 1] < day {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(dates.len());
    lo + dates[lo..hi].partition_point(|&d| d < day)
}

/// The calendar of a run: the union of the universe's dates inside the
/// window, found by counting rows per day (no sort).
struct Calendar {
    /// Calendar dates of the window, increasing.
    dates: Vec<i32>,
    /// Price rows of the universe inside the window.
    data_points: u64,
}

impl Calendar {
    fn new(inputs: &[&AssetInput<'_>], spans: &[(usize, usize)]) -> Calendar {
        let in_window = |a: usize| &inputs[a].dates[spans[a].0..spans[a].1];
        let first = (0..inputs.len())
            .filter_map(|a| in_window(a).first().copied())
            .min()
            .expect("every asset of the universe has a row in the window");
        let last = (0..inputs.len())
            .filter_map(|a| in_window(a).last().copied())
            .max()
            .expect("every asset of the universe has a row in the window");
        let mut traded = vec![false; (last - first) as usize + 1];
        let mut data_points = 0u64;
        for a in 0..inputs.len() {
            let days = in_window(a);
            data_points += days.len() as u64;
            for &d in days {
                traded[(d - first) as usize] = true;
            }
        }
        let dates = (first..=last)
            .zip(&traded)
            .filter_map(|(d, &t)| t.then_some(d))
            .collect();
        Calendar { dates, data_points }
    }
}

/// Calendar rows whose prices are laid out at once ([`PriceBlock`]).
const PRICE_BLOCK_ROWS: usize = 32;

/// Every asset's close carried forward to each calendar row of a block of
/// [`PRICE_BLOCK_ROWS`] rows, row by row: what the accounting marks to
/// market with. Filled asset by asset, each asset's rows of the block read
/// together, into one buffer reused by every block (a few hundred KB for
/// the whole universe) instead of a run-long table of every price row.
struct PriceBlock<'t, 'a> {
    inputs: &'t [&'t AssetInput<'a>],
    calendar: &'t [i32],
    /// Each asset's rows inside the window.
    spans: &'t [(usize, usize)],
    /// First calendar row of the block.
    first: usize,
    /// Rows of the block.
    len: usize,
    /// `prices[r * assets + a]`: asset `a`'s close at row `first + r`
    /// (NaN before its first row).
    prices: Vec<f64>,
    /// Each asset's close before the block.
    carry: Vec<f64>,
    /// Each asset's next row.
    next: Vec<usize>,
}

impl<'t, 'a> PriceBlock<'t, 'a> {
    fn new(
        inputs: &'t [&'t AssetInput<'a>],
        calendar: &'t [i32],
        spans: &'t [(usize, usize)],
    ) -> Self {
        // The calendar starts at the universe's first row in the window, so
        // each asset's rows before that are its rows before the window.
        let carry = inputs
            .iter()
            .zip(spans)
            .map(|(a, &(lo, _))| if lo > 0 { a.closes[lo - 1] } else { f64::NAN })
            .collect();
        PriceBlock {
            inputs,
            calendar,
            spans,
            first: 0,
            len: 0,
            prices: vec![f64::NAN; PRICE_BLOCK_ROWS * inputs.len()],
            carry,
            next: spans.iter().map(|&(lo, _)| lo).collect(),
        }
    }

    /// The closes at calendar row `i`, one per asset, laying out the next
    /// block when `i` is past this one. Rows are asked for in order.
    fn row(&mut self, i: usize) -> &[f64] {
        let n = self.inputs.len();
        if i >= self.first + self.len {
            debug_assert_eq!(i, self.first + self.len, "rows are asked for in order");
            self.first = i;
            self.len = PRICE_BLOCK_ROWS.min(self.calendar.len() - i);
            let days = &self.calendar[i..i + self.len];
            for (a, input) in self.inputs.iter().enumerate() {
                let (mut at, hi) = (self.next[a], self.spans[a].1);
                let mut close = self.carry[a];
                for (r, &day) in days.iter().enumerate() {
                    // Every date of the window is a calendar date.
                    if at < hi && input.dates[at] == day {
                        close = input.closes[at];
                        at += 1;
                    }
                    self.prices[r * n + a] = close;
                }
                self.next[a] = at;
                self.carry[a] = close;
            }
        }
        &self.prices[(i - self.first) * n..][..n]
    }
}

/// Windows summed side by side in [`zscores_into`].
const LANES: usize = 8;

/// `out[l] = zscore(d, js[l], lookback)` (NaN for none), the sums of
/// [`LANES`] windows interleaved: each window's sums keep [`zscore`]'s
/// order, so every value is identical, but the additions of different
/// windows no longer wait for one another.
pub fn zscores_into(d: &[f64], js: &[usize], lookback: usize, out: &mut [f64]) {
    // `j < d.len()` first: `usize::MAX` may stand for "no row".
    let ready = |j: usize| j < d.len() && lookback >= 2 && j + 1 >= lookback;
    for (js, out) in js.chunks(LANES).zip(out.chunks_mut(LANES)) {
        if !js.iter().all(|&j| ready(j)) {
            for (o, &j) in out.iter_mut().zip(js) {
                *o = if ready(j) {
                    zscore(d, j, lookback).unwrap_or(f64::NAN)
                } else {
                    f64::NAN
                };
            }
            continue;
        }
        // A short last chunk repeats its last row in the spare lanes.
        let lanes: [usize; LANES] = std::array::from_fn(|l| js[l.min(js.len() - 1)]);
        let z = zscore_lanes(d, &lanes, lookback);
        out.copy_from_slice(&z[..out.len()]);
    }
}

/// [`zscore`] of [`LANES`] rows at once (each ready), NaN for none.
// Indexing by step and lane is the point: one step of every lane per
// iteration keeps the lanes' sums independent of one another.
#[allow(clippy::needless_range_loop)]
fn zscore_lanes(d: &[f64], js: &[usize; LANES], lookback: usize) -> [f64; LANES] {
    let starts: [usize; LANES] = std::array::from_fn(|l| js[l] + 1 - lookback);
    let contiguous = (1..LANES).all(|l| js[l] == js[0] + l);
    // `-0.0` is the neutral element of `Iterator::sum` for floats.
    let mut sum = [-0.0f64; LANES];
    let mut sq = [-0.0f64; LANES];
    let mean: [f64; LANES];
    if contiguous {
        // Consecutive rows (daily decisions): lane `l`'s k-th value is
        // `w[k + l]`, so each step is one contiguous load.
        let w = &d[starts[0]..starts[0] + lookback + LANES - 1];
        let step =
            |k: usize| -> &[f64; LANES] { w[k..k + LANES].try_into().expect("LANES values") };
        for k in 0..lookback {
            let x = step(k);
            for l in 0..LANES {
                sum[l] += x[l];
            }
        }
        mean = std::array::from_fn(|l| sum[l] / lookback as f64);
        for k in 0..lookback {
            let x = step(k);
            for l in 0..LANES {
                sq[l] += (x[l] - mean[l]).powi(2);
            }
        }
    } else {
        let w: [&[f64]; LANES] = std::array::from_fn(|l| &d[starts[l]..starts[l] + lookback]);
        for k in 0..lookback {
            for l in 0..LANES {
                sum[l] += w[l][k];
            }
        }
        mean = std::array::from_fn(|l| sum[l] / lookback as f64);
        for k in 0..lookback {
            for l in 0..LANES {
                sq[l] += (w[l][k] - mean[l]).powi(2);
            }
        }
    }
    std::array::from_fn(|l| {
        let sd = (sq[l] / (lookback - 1) as f64).sqrt();
        if sd > 1e-12 {
            (d[js[l]] - mean[l]) / sd
        } else {
            f64::NAN
        }
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
mod reference;
#[cfg(test)]
mod tests;
