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
//! budget ([`crate::budget`]; 503 before any work when there is no room
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

use crate::active::Plugins;
use crate::authored::AuthoredService;
use crate::budget::WorkBudget;
use crate::error::Error;
pub use forecast_api::backtest::{
    BacktestMetadata, BacktestRequest, BacktestResponse, BenchmarkBody, EquityPoint, MetricsBody,
    TradeBody, UniverseSpec, UnusableAsset, ValidRequest, DEFAULT_STRATEGY, DEFAULT_YEARS,
    MAX_TICKERS, MAX_TRADES, MAX_UNUSABLE_LISTED,
};
use forecast_store::AssetStore;

mod admission;
mod cache;
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
}

impl BacktestService {
    /// A service over the series of `assets` and `plugins` within `limits`
    /// and the server's heavy-work `budget`.
    pub fn new(
        assets: Arc<dyn AssetStore>,
        plugins: Arc<Plugins>,
        limits: BacktestLimits,
        budget: WorkBudget,
        authored: AuthoredService,
    ) -> Self {
        BacktestService {
            authored,
            assets,
            plugins,
            signals: Arc::new(SignalCache::new(limits.signal_cache_bytes)),
            slots: Arc::new(admission::SlotTable::default()),
            limits,
            budget,
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

    /// Bytes held by the history and signal cache.
    pub fn signal_cache_bytes(&self) -> usize {
        self.signals.bytes()
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
