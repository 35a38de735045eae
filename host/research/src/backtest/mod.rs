//! `POST /api/backtest` (DESIGN §6): validation, the universe, the engine's
//! walk-forward signals (one pass per asset, cached), and the run.
//!
//! The host moves data and enforces limits; the accounting is
//! `forecast-backtest` (shared with the SDK's native harness) and the
//! decisions come from a strategy component. One deadline bounds the work
//! (loading, signals, the run); every plugin call inside it gets what is
//! left of it, capped at the runtime's call timeout.
//!
//! Bounded work (issue 14): a user runs at most `per_user` backtests at
//! once on a server ([`BacktestService::admit`], taken by the HTTP guard
//! before the quota is charged, held until the blocking work has really
//! ended); a backtest then takes a ticket of the server's heavy-work
//! budget ([`forecast_services::budget`]; 503 before any work when there is no room
//! in time), waits at most `queue_wait` for its plugin slots
//! (then [`Error::Busy`], 503) and loads the histories only once it holds
//! them; a dropped request or a passed deadline raises a flag the signal
//! loop and the accounting poll; the body carries at most
//! [`MAX_TRADES`] trades and the accounting keeps no more.
//!
//! The parts: [`admission`] (the user's and the plugin slots),
//! [`validation`] (the request against what the server holds, and why an
//! asset was left out), [`universe`] (its assets and histories),
//! [`signals`] (the engine's signals and the stop flag), [`run`] (the run
//! end to end), [`response`] (its body) and [`cache`] (histories and
//! signals kept between runs).

use std::sync::Arc;
use std::time::Duration;

use crate::authored::AuthoredService;
pub use forecast_api::backtest::{
    BacktestMetadata, BacktestRequest, BacktestResponse, BenchmarkBody, EquityPoint, FanPoint,
    MetricsBody, MonteCarloParams, MonteCarloRequest, MonteCarloResponse, PathSpread, TradeBody,
    UniverseSpec, UnusableAsset, ValidRequest, DEFAULT_STRATEGY, DEFAULT_YEARS, MAX_TICKERS,
    MAX_TRADES, MAX_UNUSABLE_LISTED,
};
use forecast_api::research::{SplitParams, SweepResponse, ValidSweep, WalkForwardResponse};
use forecast_services::active::Plugins;
use forecast_services::budget::WorkBudget;
use forecast_services::error::Error;
use forecast_store::AssetStore;

mod admission;
mod batch;
mod benchmarks;
mod cache;
mod research;
mod response;
mod run;
mod signals;
mod universe;
mod validation;

pub use admission::UserSlot;
pub use cache::SignalCache;

/// The limits of the backtest service.
#[derive(Debug, Clone, Copy)]
pub struct BacktestLimits {
    /// Time limit of one run once it holds its plugin slots (then 504).
    pub timeout: Duration,
    /// Bytes of walk-forward signals kept (0 disables the cache).
    pub signal_cache_bytes: usize,
    /// Backtests one user may run at once on this server (then 429).
    pub per_user: usize,
    /// How long a backtest waits for plugin slots (then 503).
    pub queue_wait: Duration,
    /// Time limit of a sweep or walk-forward (every combination) once it
    /// holds its plugin slots (then 504).
    pub research_timeout: Duration,
}

/// The backtest service: the universe's series from the store, signals of
/// the active engine (cached), the strategies, and its limits.
#[derive(Clone)]
pub struct BacktestService {
    assets: Arc<dyn AssetStore>,
    plugins: Arc<Plugins>,
    signals: Arc<SignalCache>,
    slots: Arc<admission::SlotTable>,
    limits: BacktestLimits,
    /// The server's budget for heavy work: a run takes a ticket before it
    /// waits for plugin slots or reads any history.
    budget: WorkBudget,
    /// The authors' uploaded strategies (`@handle/name`).
    authored: AuthoredService,
    /// When a run's answer was calculated.
    clock: forecast_domain::SharedClock,
}

impl BacktestService {
    /// A service over the series of `assets` and `plugins` within `limits`
    /// and the server's heavy-work `budget`, dating answers by `clock`.
    pub fn new(
        assets: Arc<dyn AssetStore>,
        plugins: Arc<Plugins>,
        limits: BacktestLimits,
        budget: WorkBudget,
        authored: AuthoredService,
        clock: forecast_domain::SharedClock,
    ) -> Self {
        BacktestService {
            authored,
            assets,
            plugins,
            signals: Arc::new(SignalCache::new(limits.signal_cache_bytes)),
            slots: Arc::new(admission::SlotTable::default()),
            limits,
            budget,
            clock,
        }
    }

    /// One of `user`'s concurrent-backtest slots, or
    /// [`Error::TooManyAttempts`] (429) when `per_user` are running; its
    /// `retry_after` is when the oldest of them ends at the latest (its
    /// wait for slots and its time limit).
    pub fn admit(&self, user: &str) -> Result<UserSlot, Error> {
        admission::admit(&self.slots, &self.limits, user)
    }

    /// Runs a validated request end to end under `slot`, which is released
    /// when the work has stopped (the request may have been dropped long
    /// before).
    #[tracing::instrument(
        name = "backtest",
        skip_all,
        fields(strategy = %req.strategy, universe = %universe_field(&req.universe))
    )]
    pub async fn run(&self, req: ValidRequest, slot: UserSlot) -> Result<BacktestResponse, Error> {
        run::run(self, req, slot).await
    }

    /// Runs `req` as [`BacktestService::run`] does, then reorders its
    /// daily returns `mc.runs` times by a seeded stationary block bootstrap
    /// (`forecast_backtest::montecarlo`; at most 5,000 paths, so at most
    /// 5,000 × the run's days steps and 20 MB of fan-chart columns).
    #[tracing::instrument(name = "monte_carlo", skip_all, fields(runs = mc.runs))]
    pub async fn monte_carlo(
        &self,
        req: ValidRequest,
        mc: MonteCarloParams,
        slot: UserSlot,
    ) -> Result<MonteCarloResponse, Error> {
        let run = run::run(self, req, slot).await?;
        crate::progress::enter(crate::progress::Phase::Simulating, 0);
        tokio::task::spawn_blocking(move || monte_carlo_of(run, mc))
            .await
            .map_err(|e| Error::Internal(format!("monte carlo task failed: {e}")))
    }

    /// Runs every combination of a validated sweep under `slot` (one
    /// engine pass per distinct set of engine parameters) and ranks them.
    #[tracing::instrument(name = "sweep", skip_all, fields(combinations = sweep.combinations.len()))]
    pub async fn sweep(&self, sweep: ValidSweep, slot: UserSlot) -> Result<SweepResponse, Error> {
        research::sweep(self, sweep, slot).await
    }

    /// Runs every combination of `sweep` over the window, then chooses the
    /// best on each train split and applies it to the next test split.
    #[tracing::instrument(name = "walk_forward", skip_all, fields(combinations = sweep.combinations.len()))]
    pub async fn walk_forward(
        &self,
        sweep: ValidSweep,
        split: SplitParams,
        slot: UserSlot,
    ) -> Result<WalkForwardResponse, Error> {
        research::walk_forward(self, sweep, split, slot).await
    }

    /// Bytes held by the history and signal cache.
    pub fn signal_cache_bytes(&self) -> usize {
        self.signals.bytes()
    }
}

/// The simulation of a finished run's equity curve.
fn monte_carlo_of(run: BacktestResponse, mc: MonteCarloParams) -> MonteCarloResponse {
    let equity: Vec<f64> = run.equity_curve.iter().map(|p| p.equity).collect();
    let returns = forecast_backtest::risk::returns(&equity);
    let initial = equity.first().copied().unwrap_or(0.0);
    let sim = forecast_backtest::montecarlo::monte_carlo(
        &returns,
        initial,
        run.metadata.periods_per_year,
        mc.runs,
        mc.block_days,
        mc.seed,
    );
    let spread = |s: forecast_backtest::montecarlo::Spread| PathSpread {
        p5: s.p5,
        p50: s.p50,
        p95: s.p95,
    };
    MonteCarloResponse {
        runs: sim.runs,
        block_days: mc.block_days,
        seed: mc.seed,
        days: sim.days,
        cagr: spread(sim.cagr),
        max_drawdown: spread(sim.max_drawdown),
        final_equity: spread(sim.final_equity),
        probability_of_loss: sim.probability_of_loss,
        probability_of_drawdown_beyond_50: sim.probability_of_drawdown_beyond_50,
        fan: sim
            .fan
            .iter()
            .map(|f| FanPoint {
                date: run.equity_curve[f.day].date,
                p5: f.equity[0],
                p25: f.equity[1],
                p50: f.equity[2],
                p75: f.equity[3],
                p95: f.equity[4],
            })
            .collect(),
        metrics: run.metrics,
        metadata: run.metadata,
    }
}

/// The universe as the run's span names it: its category, `all`, or how
/// many tickers (up to [`MAX_TICKERS`], too many to list).
fn universe_field(universe: &UniverseSpec) -> String {
    match universe {
        UniverseSpec::Category(c) => c.as_str().to_string(),
        UniverseSpec::All => "all".into(),
        UniverseSpec::Tickers(t) => format!("{} tickers", t.len()),
    }
}

/// The answer to a run past its time limit (or whose loading was stopped
/// by it).
fn timed_out() -> Error {
    Error::TimedOut(
        "the backtest passed its time limit; reduce its scope (fewer assets, a shorter \
         window or a less frequent rebalance)"
            .into(),
    )
}
