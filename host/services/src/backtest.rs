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
//! ended); a backtest waits at most `queue_wait` for its plugin slots
//! (then [`Error::Busy`], 503) and loads the histories only once it holds
//! them; a dropped request or a passed deadline raises a flag the signal
//! loop and the accounting poll; the body carries at most
//! [`MAX_TRADES`] trades and the accounting keeps no more.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{Months, NaiveDate};
use forecast_backtest as bt;

use crate::active::Plugins;
use crate::error::Error;
use forecast_api::assets::DataSources;
pub use forecast_api::backtest::{
    BacktestMetadata, BacktestRequest, BacktestResponse, BenchmarkBody, EquityPoint, MetricsBody,
    TradeBody, UniverseSpec, UnusableAsset, ValidRequest, DEFAULT_STRATEGY, DEFAULT_YEARS,
    MAX_TICKERS, MAX_TRADES, MAX_UNUSABLE_LISTED,
};
use forecast_domain::series::{from_days, to_days, PriceSeries};
use forecast_domain::{Asset, Metric};
use forecast_plugins::segmentation::{AnalysisParams, EngineError};
use forecast_plugins::strategy::RunFailure;
use forecast_plugins::{Permit, PluginError, SegmentationPlugin, StrategyPlugin};
use forecast_store::AssetStore;

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

/// Key of one asset's stored history: it changes with every ingest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct HistoryKey {
    asset_id: i64,
    data_version: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CacheKey {
    History(HistoryKey),
    Signals(SignalKey),
}

#[derive(Clone)]
enum Cached {
    History(Arc<PriceSeries>),
    Signals(Arc<bt::Signals>),
}

impl Cached {
    fn heap_bytes(&self) -> usize {
        match self {
            Cached::History(s) => {
                s.dates.len() * std::mem::size_of::<i32>()
                    + s.closes.len() * std::mem::size_of::<f64>()
            }
            Cached::Signals(s) => s.heap_bytes(),
        }
    }
}

struct Entry {
    value: Cached,
    last_used: u64,
}

/// The memory-resident columns backtests read, bounded in bytes together:
/// each asset's history (dates and closes) and the engine's walk-forward
/// signals per asset and engine parameters. The least recently used
/// entries go first. Keys carry the asset's data version (and for signals
/// the engine's sha256), so an ingest or an engine swap is never served
/// stale. A repeated backtest over the whole universe therefore touches
/// neither the store nor the engine.
pub struct SignalCache {
    budget: usize,
    inner: Mutex<CacheInner>,
}

#[derive(Default)]
struct CacheInner {
    map: HashMap<CacheKey, Entry>,
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

    fn get(&self, key: &CacheKey) -> Option<Cached> {
        let mut inner = self.inner.lock().expect("signal cache poisoned");
        inner.clock += 1;
        let now = inner.clock;
        inner.map.get_mut(key).map(|e| {
            e.last_used = now;
            e.value.clone()
        })
    }

    fn signals(&self, key: &SignalKey) -> Option<Arc<bt::Signals>> {
        match self.get(&CacheKey::Signals(key.clone()))? {
            Cached::Signals(s) => Some(s),
            Cached::History(_) => None,
        }
    }

    fn history(&self, key: HistoryKey) -> Option<Arc<PriceSeries>> {
        match self.get(&CacheKey::History(key))? {
            Cached::History(s) => Some(s),
            Cached::Signals(_) => None,
        }
    }

    fn put(&self, key: CacheKey, value: Cached) {
        let size = value.heap_bytes();
        if size > self.budget {
            return;
        }
        let mut inner = self.inner.lock().expect("signal cache poisoned");
        inner.clock += 1;
        let now = inner.clock;
        if let Some(old) = inner.map.insert(
            key,
            Entry {
                value,
                last_used: now,
            },
        ) {
            inner.bytes -= old.value.heap_bytes();
        }
        inner.bytes += size;
        if inner.bytes > self.budget {
            // Evict the oldest tenth at once, so that eviction stays rare.
            let mut ages: Vec<(u64, CacheKey)> = inner
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
                    inner.bytes -= e.value.heap_bytes();
                }
            }
        }
    }

    fn put_signals(&self, key: SignalKey, signals: Arc<bt::Signals>) {
        self.put(CacheKey::Signals(key), Cached::Signals(signals));
    }

    fn put_history(&self, key: HistoryKey, series: Arc<PriceSeries>) {
        self.put(CacheKey::History(key), Cached::History(series));
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.inner.lock().expect("signal cache poisoned").bytes
    }
}

/// The universe's assets (no histories yet: those are loaded once the run
/// holds its plugin slots), ticker order.
async fn universe_assets(db: &dyn AssetStore, spec: &UniverseSpec) -> Result<Vec<Asset>, Error> {
    let mut assets: Vec<Asset> = match spec {
        UniverseSpec::Tickers(tickers) => {
            let mut out = Vec::with_capacity(tickers.len());
            for t in tickers {
                match db.asset_by_ticker(t).await? {
                    Some(a) if a.is_active => out.push(a),
                    _ => {
                        return Err(Error::Invalid(format!(
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
    assets.sort_by(|a, b| a.ticker.cmp(&b.ticker));
    Ok(assets)
}

/// The histories of `assets`, in their order: from the cache when it holds
/// the asset's data version, else from the store (and then kept); stops
/// early when `cancel` is raised (the request was dropped or its deadline
/// passed). Each history is also handed to the signal workers through
/// `feed` as soon as it is loaded, so the engine runs while the store reads.
/// Returns how many came from the cache.
async fn load_histories(
    db: &dyn AssetStore,
    cache: &SignalCache,
    assets: Vec<Asset>,
    cancel: &Cancel,
    feed: tokio::sync::mpsc::Sender<Work>,
) -> Result<(Vec<(Asset, Arc<PriceSeries>)>, usize), Error> {
    let mut out = Vec::with_capacity(assets.len());
    let mut hits = 0;
    for (index, a) in assets.into_iter().enumerate() {
        let key = HistoryKey {
            asset_id: a.id,
            data_version: a.data_version,
        };
        let series = match cache.history(key) {
            Some(series) => {
                hits += 1;
                series
            }
            None => {
                if cancel.is_raised() {
                    return Err(timed_out());
                }
                let series = Arc::new(db.load_series(a.id).await?.unwrap_or_default());
                cache.put_history(key, series.clone());
                series
            }
        };
        let work = Work {
            index,
            asset: a.clone(),
            series: series.clone(),
        };
        // The workers stop only on a failure, which the caller reports.
        if feed.send(work).await.is_err() {
            break;
        }
        out.push((a, series));
    }
    Ok((out, hits))
}

/// One loaded history for the signal workers.
struct Work {
    /// Index in the universe.
    index: usize,
    asset: Asset,
    series: Arc<PriceSeries>,
}

/// Histories loaded ahead of the signal workers at most.
const FEED_AHEAD: usize = 64;

/// The stop flag of one backtest: raised when the request is dropped (the
/// client went away: [`CancelOnDrop`]) or its deadline passes; the signal
/// workers and the accounting poll it between steps.
#[derive(Clone)]
struct Cancel {
    flag: Arc<AtomicBool>,
    deadline: Instant,
}

impl Cancel {
    fn is_raised(&self) -> bool {
        if self.flag.load(Ordering::Relaxed) {
            return true;
        }
        if Instant::now() >= self.deadline {
            self.flag.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Whether the stop came from a dropped request rather than the clock.
    fn dropped(&self) -> bool {
        self.flag.load(Ordering::Relaxed) && Instant::now() < self.deadline
    }
}

/// Raises the flag when the request's future is dropped, finished or not
/// (after a normal end the blocking work has already stopped). While the
/// histories load and the signals are computed beside them (`loading` is
/// the time that started), a drop is the client going away, and is logged
/// here; later the blocking work logs it.
struct CancelOnDrop {
    flag: Arc<AtomicBool>,
    loading: Option<Instant>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.flag.store(true, Ordering::Relaxed);
        if let Some(started) = self.loading {
            tracing::info!(
                seconds = started.elapsed().as_secs_f64(),
                "backtest stopped: the request was dropped (while loading histories and computing signals)"
            );
        }
    }
}

/// Logs a drop before the work starts: while the run resolves its
/// universe or waits for its plugin slots (nothing has started yet; the
/// user's slot is freed with the request).
struct WaitingForSlots {
    since: Instant,
    armed: bool,
    /// What the run was doing, for the log.
    phase: &'static str,
}

impl Drop for WaitingForSlots {
    fn drop(&mut self) {
        if self.armed {
            tracing::info!(
                seconds = self.since.elapsed().as_secs_f64(),
                phase = self.phase,
                "backtest stopped: the request was dropped (before it started)"
            );
        }
    }
}

/// The backtests each user has running on this server.
#[derive(Default)]
struct SlotTable {
    running: Mutex<HashMap<String, Vec<Instant>>>,
}

/// One of a user's concurrent-backtest slots ([`BacktestService::admit`]).
/// Free again when dropped: [`BacktestService::run`] moves it into the
/// blocking work, so it outlives a dropped request until that work stops.
pub struct UserSlot {
    table: Arc<SlotTable>,
    user: String,
    since: Instant,
}

impl std::fmt::Debug for UserSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserSlot")
            .field("user", &self.user)
            .finish()
    }
}

impl Drop for UserSlot {
    fn drop(&mut self) {
        let mut running = self.table.running.lock().expect("slot table poisoned");
        if let Some(list) = running.get_mut(&self.user) {
            if let Some(i) = list.iter().position(|t| *t == self.since) {
                list.swap_remove(i);
            }
            if list.is_empty() {
                running.remove(&self.user);
            }
        }
    }
}

/// Computes (or fetches) the signals of the `assets` histories arriving on
/// `feed` (until it closes), on one thread per permit, each with one reused
/// engine instance. Assets the engine refuses (fewer than 300 rows) get
/// `None`: they can never trade. Returns them by universe index, and how
/// many came from the cache.
#[allow(clippy::type_complexity)]
fn signals_for(
    engine: &Arc<SegmentationPlugin>,
    cache: &SignalCache,
    feed: tokio::sync::mpsc::Receiver<Work>,
    assets: usize,
    req: &ValidRequest,
    permits: &[Permit],
    cancel: &Cancel,
) -> Result<(Vec<Option<Arc<bt::Signals>>>, usize), Error> {
    let deadline = cancel.deadline;
    let key = |a: &Asset| SignalKey {
        asset_id: a.id,
        data_version: a.data_version,
        engine_sha256: engine.info().sha256.clone(),
        return_period: req.params.return_period,
        num_segments: req.params.num_segments,
        // Already quantised (`forecast_api::backtest::quantise_decay`), so
        // nearby decays share entries.
        decay_bits: req.params.decay_factor.to_bits(),
        metric: req.metric,
    };
    let feed = Mutex::new(feed);
    let cached = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Arc<bt::Signals>)>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for permit in permits {
            // Each thread owns its permit's borrow; the rest is shared.
            let (feed, cached, results, failure) = (&feed, &cached, &results, &failure);
            scope.spawn(move || {
                let mut session = engine.session();
                loop {
                    if failure.lock().expect("poisoned").is_some() {
                        return;
                    }
                    let next = feed.lock().expect("poisoned").blocking_recv();
                    let Some(Work {
                        index: i,
                        asset,
                        series,
                    }) = next
                    else {
                        return;
                    };
                    if let Some(hit) = cache.signals(&key(&asset)) {
                        cached.fetch_add(1, Ordering::Relaxed);
                        results.lock().expect("poisoned").push((i, hit));
                        continue;
                    }
                    if series.len() < bt::MIN_HISTORY {
                        continue;
                    }
                    if cancel.is_raised() {
                        *failure.lock().expect("poisoned") = Some(timed_out());
                        return;
                    }
                    let left = deadline.saturating_duration_since(Instant::now());
                    let params = AnalysisParams {
                        return_period: req.params.return_period,
                        num_segments: req.params.num_segments,
                        decay_factor: req.params.decay_factor,
                        metric: crate::analysis::wit_metric(req.metric),
                        periods_per_year: Some(series.periods_per_year()),
                    };
                    match session.walk_forward(permit, &series, params, Some(left)) {
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
                                    Some(Error::Plugin(PluginError::Trap {
                                        plugin: engine.info().label(),
                                        message: format!(
                                            "walk-forward returned {} rows for {} inputs",
                                            signals.len(),
                                            series.len()
                                        ),
                                    }));
                                return;
                            }
                            cache.put_signals(key(&asset), signals.clone());
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
                            *failure.lock().expect("poisoned") = Some(Error::Plugin(e));
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
    let mut out: Vec<Option<Arc<bt::Signals>>> = vec![None; assets];
    for (i, s) in results.into_inner().expect("poisoned") {
        out[i] = Some(s);
    }
    Ok((out, cached.into_inner()))
}

fn timed_out() -> Error {
    Error::TimedOut(
        "the backtest passed its time limit; reduce its scope (fewer assets, a shorter \
         window or a less frequent rebalance)"
            .into(),
    )
}

fn server_busy(retry_after: u64) -> Error {
    Error::Busy {
        detail: format!(
            "the server is running as many backtests as it can; nothing was computed, \
             retry in {retry_after} s"
        ),
        retry_after,
    }
}

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
    slots: Arc<SlotTable>,
    limits: BacktestLimits,
}

impl BacktestService {
    /// A service over the series of `assets` and `plugins` within `limits`.
    pub fn new(assets: Arc<dyn AssetStore>, plugins: Arc<Plugins>, limits: BacktestLimits) -> Self {
        BacktestService {
            assets,
            plugins,
            signals: Arc::new(SignalCache::new(limits.signal_cache_bytes)),
            slots: Arc::new(SlotTable::default()),
            limits,
        }
    }

    /// One of `user`'s concurrent-backtest slots, or
    /// [`Error::TooManyAttempts`] (429) when `per_user` are running; its
    /// `retry_after` is when the oldest of them ends at the latest (its
    /// wait for slots and its time limit).
    pub fn admit(&self, user: &str) -> Result<UserSlot, Error> {
        let now = Instant::now();
        let mut running = self.slots.running.lock().expect("slot table poisoned");
        let list = running.entry(user.to_string()).or_default();
        if list.len() >= self.limits.per_user {
            let longest = self.limits.queue_wait + self.limits.timeout;
            let oldest = list.iter().min().copied().unwrap_or(now);
            let left = (oldest + longest).saturating_duration_since(now);
            let n = self.limits.per_user;
            return Err(Error::TooManyAttempts {
                detail: format!(
                    "{n} backtest{} of this account {} already running; at most {n} at once \
                     (nothing was charged): retry when one has finished",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "is" } else { "are" }
                ),
                retry_after: left.as_secs_f64().ceil().max(1.0) as u64,
            });
        }
        list.push(now);
        Ok(UserSlot {
            table: self.slots.clone(),
            user: user.to_string(),
            since: now,
        })
    }

    /// Runs a validated request end to end under `slot`, which is released
    /// when the work has stopped (the request may have been dropped long
    /// before).
    pub async fn run(&self, req: ValidRequest, slot: UserSlot) -> Result<BacktestResponse, Error> {
        let queued = Instant::now();
        let strategy: Arc<StrategyPlugin> =
            self.plugins.strategy(&req.strategy).ok_or_else(|| {
                Error::Invalid(format!(
                    "strategy: unknown strategy '{}'; loaded strategies: {}",
                    forecast_api::quote(&req.strategy),
                    self.plugins.strategy_names().join(", ")
                ))
            })?;
        let engine = self.plugins.segmentation();
        // From here on a dropped request is logged, whatever the phase.
        tracing::info!(strategy = %req.strategy, "backtest started");
        // Names only: an unknown ticker is a 400 before any wait or load.
        let mut resolving = WaitingForSlots {
            since: queued,
            armed: true,
            phase: "resolving the universe",
        };
        let assets = universe_assets(self.assets.as_ref(), &req.universe).await;
        resolving.armed = false;
        let assets = assets?;
        let runtime = self.plugins.runtime();
        let workers = runtime
            .config()
            .max_concurrency
            .min(std::thread::available_parallelism().map_or(2, |n| n.get()));
        let mut waiting = WaitingForSlots {
            since: queued,
            armed: true,
            phase: "waiting for plugin slots",
        };
        let permits =
            tokio::time::timeout(self.limits.queue_wait, runtime.acquire_many(workers as u32))
                .await
                .map_err(|_| server_busy(self.limits.queue_wait.as_secs().max(1)));
        waiting.armed = false;
        let permits = permits?;
        let started = Instant::now();
        let flag = Arc::new(AtomicBool::new(false));
        // Dropped with this future: a client that goes away stops the work.
        let mut stop_on_drop = CancelOnDrop {
            flag: flag.clone(),
            loading: Some(started),
        };
        let cancel = Cancel {
            flag,
            deadline: started + self.limits.timeout,
        };
        let deadline = cancel.deadline;
        // The signal workers start on the first history loaded and take the
        // rest as the store reads them; they give the permits back.
        let (feed, fed) = tokio::sync::mpsc::channel(FEED_AHEAD);
        let assets_count = assets.len();
        let signals_task = tokio::task::spawn_blocking({
            let (engine, cache, req, cancel) = (
                engine.clone(),
                self.signals.clone(),
                req.clone(),
                cancel.clone(),
            );
            move || {
                let signals =
                    signals_for(&engine, &cache, fed, assets_count, &req, &permits, &cancel);
                (signals, permits)
            }
        });
        let loaded =
            load_histories(self.assets.as_ref(), &self.signals, assets, &cancel, feed).await;
        let loaded_at = Instant::now();
        if loaded.is_err() {
            // Stop the workers before answering: the plugin slots are free
            // only once the work has stopped.
            cancel.flag.store(true, Ordering::Relaxed);
        }
        let (signals, permits) = signals_task
            .await
            .map_err(|e| Error::Internal(format!("backtest signal task failed: {e}")))?;
        stop_on_drop.loading = None;
        let signals_at = Instant::now();
        let (universe, histories_cached) = loaded?;
        // A failed engine is the answer, also when the load stopped early
        // because the workers had stopped.
        let (signals, signals_cached) = signals?;
        let latest = universe
            .iter()
            .filter_map(|(_, s)| s.dates.last().copied())
            .max();
        let Some(latest) = latest else {
            return Err(Error::Invalid("the universe has no price data".into()));
        };
        let end = req.end_date.unwrap_or_else(|| from_days(latest));
        let start = req.start_date.unwrap_or_else(|| {
            end.checked_sub_months(Months::new(12 * DEFAULT_YEARS))
                .unwrap_or(end)
        });
        if start > end {
            return Err(Error::Invalid(format!(
                "start_date {start} is after the end of the window {end}"
            )));
        }
        let engine_version = engine.info().version.clone();
        let waited = started.duration_since(queued);
        tokio::task::spawn_blocking(move || {
            // Held until this closure returns: the user's slot and the
            // plugin slots are free only once the work has stopped.
            let _slot = slot;
            let stopped = |e: Error| {
                if cancel.dropped() {
                    tracing::info!(
                        seconds = started.elapsed().as_secs_f64(),
                        "backtest stopped: the request was dropped"
                    );
                }
                e
            };
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
            let report = bt::run_capped(
                &inputs,
                window,
                &req.params,
                &mut instance,
                &mut || cancel.is_raised(),
                MAX_TRADES,
            )
            .map_err(|e| match e {
                bt::RunError::EmptyUniverse => Error::Invalid(format!(
                    "no asset of the universe has {} rows of history by {end} and a price between \
                 start_date {start} and end_date {end}",
                    bt::MIN_HISTORY
                )),
                bt::RunError::Param(p) => Error::Invalid(p.to_string()),
                bt::RunError::Cancelled | bt::RunError::Strategy(RunFailure::RunTimedOut) => {
                    timed_out()
                }
                bt::RunError::Strategy(RunFailure::Plugin(p)) => Error::Plugin(p),
                bt::RunError::Strategy(RunFailure::Refused { plugin, message }) => {
                    Error::PluginContract(format!("strategy {plugin} ended the run: {message}"))
                }
                bt::RunError::Contract(m) => Error::PluginContract(format!(
                    "strategy {} broke the strategy contract: {m}",
                    strategy.info().label()
                )),
            })
            .map_err(stopped)?;
            let run_at = Instant::now();
            // What the run used and what it could not, by universe index.
            let mut used = vec![false; universe.len()];
            for &k in &report.universe {
                used[kept[k]] = true;
            }
            let data = DataUse {
                sources: DataSources::count(
                    universe
                        .iter()
                        .zip(&used)
                        .filter(|(_, &u)| u)
                        .map(|((a, _), _)| a.data_source),
                ),
                unusable_count: used.iter().filter(|&&u| !u).count(),
                unusable: universe
                    .iter()
                    .zip(&used)
                    .filter(|(_, &u)| !u)
                    .take(MAX_UNUSABLE_LISTED)
                    .map(|((a, s), _)| UnusableAsset {
                        ticker: a.ticker.clone(),
                        last_price_date: s.dates.last().map(|&d| from_days(d)),
                        reason: unusable_reason(s, window),
                    })
                    .collect(),
            };
            let (label, assets, rows, trades) = (
                strategy.info().label(),
                report.universe.len(),
                report.dates.len(),
                report.trades_total,
            );
            let body = shape(
                report,
                &inputs,
                &strategy,
                &engine_version,
                &req,
                signals_cached,
                data,
            );
            // Where the time went, phase by phase (issue 17).
            tracing::info!(
                strategy = %label,
                assets,
                rows,
                trades,
                histories_cached,
                signals_cached,
                waited_seconds = waited.as_secs_f64(),
                load_seconds = loaded_at.duration_since(started).as_secs_f64(),
                // Beside the load, and after it for this long.
                signals_seconds = signals_at.duration_since(loaded_at).as_secs_f64(),
                run_seconds = run_at.duration_since(signals_at).as_secs_f64(),
                shape_seconds = run_at.elapsed().as_secs_f64(),
                seconds = started.elapsed().as_secs_f64(),
                "backtest finished"
            );
            Ok(body)
        })
        .await
        .map_err(|e| Error::Internal(format!("backtest task failed: {e}")))?
    }
    pub fn signal_cache_bytes(&self) -> usize {
        self.signals.bytes()
    }
}

/// How much of the requested universe a run used, and of what provenance.
struct DataUse {
    sources: DataSources,
    unusable_count: usize,
    unusable: Vec<UnusableAsset>,
}

/// Why an asset left out of a run's universe was left out (the rule of
/// [`bt::Report::universe`]: a price inside the window and
/// [`bt::MIN_HISTORY`] rows by its end).
fn unusable_reason(series: &PriceSeries, window: bt::Window) -> String {
    let (Some(&first), Some(&last)) = (series.dates.first(), series.dates.last()) else {
        return "no prices stored".to_string();
    };
    let (start, end) = (from_days(window.start), from_days(window.end));
    if last < window.start {
        return format!(
            "its last price ({}) is before the window starts ({start})",
            from_days(last)
        );
    }
    if first > window.end {
        return format!(
            "its first price ({}) is after the window ends ({end})",
            from_days(first)
        );
    }
    let by_end = series.dates.partition_point(|&d| d <= window.end);
    let in_window = by_end - series.dates.partition_point(|&d| d < window.start);
    if in_window == 0 {
        return format!("no price between {start} and {end}");
    }
    format!(
        "only {by_end} price rows by {end}; {} are needed for signals",
        bt::MIN_HISTORY
    )
}

fn shape(
    report: bt::Report,
    inputs: &[bt::AssetInput<'_>],
    strategy: &StrategyPlugin,
    engine_version: &str,
    req: &ValidRequest,
    signals_cached: usize,
    data: DataUse,
) -> BacktestResponse {
    // The report's columns move into the body; only the dates are
    // converted, once, and shared by the curve and the two benchmarks.
    let dates: Vec<NaiveDate> = report.dates.iter().map(|&d| from_days(d)).collect();
    let universe = &report.universe;
    let ticker = |k: usize| inputs[universe[k]].meta.ticker.clone();
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
            .into_iter()
            .map(|(name, curve)| {
                (
                    name.to_string(),
                    BenchmarkBody {
                        dates: dates.clone(),
                        equity: curve,
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
            decay_factor: Some(req.params.decay_factor),
            trades_total: Some(report.trades_total),
            trades_truncated: Some(report.trades_total > report.trades.len() as u64),
            data_sources: data.sources,
            unusable_assets_count: data.unusable_count,
            unusable_assets: data.unusable,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
            cache.put_signals(key(id), sig(1_000));
            // Keep asset 0 hot.
            assert!(cache.signals(&key(0)).is_some(), "the hot entry survives");
        }
        assert!(cache.bytes() <= one * 10);
        assert!(cache.signals(&key(24)).is_some());
        assert!(cache.signals(&key(1)).is_none(), "cold entries went first");
        let other_version = SignalKey {
            data_version: 2,
            ..key(24)
        };
        assert!(
            cache.signals(&other_version).is_none(),
            "a new data version misses"
        );
        let other_engine = SignalKey {
            engine_sha256: "y".into(),
            ..key(24)
        };
        assert!(
            cache.signals(&other_engine).is_none(),
            "another engine's signals are not served"
        );
        // Histories share the budget and the keys' data versions.
        let series = Arc::new(PriceSeries {
            dates: (0..1_000).collect(),
            closes: vec![1.0; 1_000],
        });
        let h = |v: i64| HistoryKey {
            asset_id: 7,
            data_version: v,
        };
        cache.put_history(h(1), series);
        assert!(cache.history(h(1)).is_some());
        assert!(cache.history(h(2)).is_none(), "an ingest misses");
        assert!(cache.bytes() <= one * 10);
    }
}
