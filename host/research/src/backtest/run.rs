//! One backtest end to end: resolve the universe, wait for plugin slots,
//! load the histories with the signals computed beside them, check the
//! window, then run the accounting and shape the body on a blocking thread.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use forecast_api::backtest::{BacktestResponse, ValidRequest, MAX_TRADES};
use forecast_backtest as bt;
use forecast_domain::series::{to_days, PriceSeries};
use forecast_domain::Asset;
use forecast_plugins::strategy::RunFailure;
use forecast_plugins::{Permit, Permits, PluginError, SegmentationPlugin, StrategyPlugin};

use super::admission::{self, UserSlot, WaitingForSlots};
use super::benchmarks;
use super::response::{shape, DataUse};
use super::signals::{signals_for, Cancel, CancelOnDrop};
use super::universe::{load_histories, universe_assets, FEED_AHEAD};
use super::{timed_out, validation, BacktestService};
use crate::progress::{self, Phase, Progress};
use forecast_services::budget::{backtest_bytes, Ticket, Work};
use forecast_services::error::Error;

/// Runs a validated request end to end under `slot` (see
/// [`BacktestService::run`]).
pub(super) async fn run(
    svc: &BacktestService,
    req: ValidRequest,
    slot: UserSlot,
) -> Result<BacktestResponse, Error> {
    let queued = Instant::now();
    let user_id = slot.user().to_string();
    let engine = svc.plugins.segmentation();
    // From here on a dropped request is logged, whatever the phase.
    tracing::info!(strategy = %req.strategy, "backtest started");
    let benchmark_assets = benchmarks::resolve(svc.assets.as_ref(), &req).await?;
    let (strategy, assets, permits, held) = hold(svc, &req, slot, queued).await?;
    progress::enter(Phase::Loading, assets.len() as u64);
    let started = Instant::now();
    let flag = Arc::new(AtomicBool::new(false));
    // Dropped with this future: a client that goes away stops the work.
    let mut stop_on_drop = CancelOnDrop {
        flag: flag.clone(),
        loading: Some(started),
    };
    let cancel = Cancel {
        flag,
        deadline: started + svc.limits.timeout,
    };
    let loaded = load(
        svc,
        &engine,
        &req,
        assets,
        permits,
        &cancel,
        &mut stop_on_drop,
    )
    .await?;
    let (start, end) = validation::window(&req, &loaded.universe)?;
    let benchmarks = benchmarks::load(svc.assets.as_ref(), &svc.signals, benchmark_assets).await?;
    let job = Job {
        held,
        benchmarks,
        progress: progress::current(),
        cancel,
        strategy,
        engine_version: engine.info().version.clone(),
        req,
        loaded,
        start,
        end,
        waited: started.duration_since(queued),
        started,
        clock: svc.clock.clone(),
    };
    let sha256 = job.strategy.info().sha256.clone();
    // The strategy's calls nest under the run's span on the blocking thread.
    let span = tracing::Span::current();
    let body = forecast_services::budget::spawn_heavy(move || span.in_scope(|| job.execute()))
        .await
        .map_err(|e| Error::Internal(format!("backtest task failed: {e}")))??;
    // What the strategy used, for its figures in GET /api/strategies.
    if let Some(usage) = body.metadata.plugin_usage.first() {
        svc.authored.record_run(&sha256, &user_id, usage).await;
    }
    Ok(body)
}

/// What a run or a batch holds until its work has stopped: the user's
/// slot, the heavy-work ticket and an upload's metered permit (the plugin
/// slots travel with the loaded data).
pub(super) struct Held {
    _slot: UserSlot,
    _ticket: Ticket,
    /// The metered runtime's permit an uploaded strategy runs under.
    pub(super) strategy_permit: Option<Permit>,
}

/// What a run or a batch waits for before its first pass, in order: the strategy,
/// the universe, the heavy-work ticket, the plugin slots and an upload's
/// metered permit (every wait measured from `queued`).
pub(super) async fn hold(
    svc: &BacktestService,
    base: &ValidRequest,
    slot: UserSlot,
    queued: Instant,
) -> Result<(Arc<StrategyPlugin>, Vec<Asset>, Permits, Held), Error> {
    let strategy = match base.strategy.starts_with('@') {
        true => svc.authored.resolve(slot.user(), &base.strategy).await?,
        false => validation::strategy(&svc.plugins, &base.strategy)?,
    };
    let assets = resolve(svc, base, queued).await?;
    let ticket = admit(svc, &slot, assets.len(), queued).await?;
    let runtime = svc.plugins.runtime();
    let permits = admission::plugin_slots(runtime, svc.limits.queue_wait, queued).await?;
    let strategy_permit = match strategy.metered() {
        true => Some(svc.authored.permit().await),
        false => None,
    };
    let held = Held {
        _slot: slot,
        _ticket: ticket,
        strategy_permit,
    };
    Ok((strategy, assets, permits, held))
}

/// The universe's assets by name: an unknown ticker is a 400 before any
/// wait or load. A drop meanwhile is logged from `queued`.
pub(super) async fn resolve(
    svc: &BacktestService,
    req: &ValidRequest,
    queued: Instant,
) -> Result<Vec<Asset>, Error> {
    let mut resolving = WaitingForSlots {
        since: queued,
        armed: true,
        phase: "resolving the universe",
    };
    let assets = universe_assets(svc.assets.as_ref(), &req.universe).await;
    resolving.armed = false;
    assets
}

/// The run's ticket of the heavy-work budget, by the size of its
/// universe; a drop while waiting is logged from `queued`.
pub(super) async fn admit(
    svc: &BacktestService,
    slot: &UserSlot,
    assets: usize,
    queued: Instant,
) -> Result<Ticket, Error> {
    let mut waiting = WaitingForSlots {
        since: queued,
        armed: true,
        phase: "waiting for the heavy-work budget",
    };
    let ticket = svc
        .budget
        .admit(slot.user(), Work::Backtest, backtest_bytes(assets))
        .await;
    waiting.armed = false;
    ticket
}

/// The histories and their signals, with the permits back from the
/// signal workers and when each phase ended.
pub(super) struct Loaded {
    pub(super) universe: Vec<(Asset, Arc<PriceSeries>)>,
    histories_cached: usize,
    pub(super) signals: Vec<Option<Arc<bt::Signals>>>,
    pub(super) signals_cached: usize,
    pub(super) permits: Permits,
    loaded_at: Instant,
    signals_at: Instant,
}

/// Loads the histories of `assets` while the signal workers, which hold
/// `permits`, compute their signals; both stop on `cancel`. Past this
/// phase a dropped request is no longer logged by `stop_on_drop`.
pub(super) async fn load(
    svc: &BacktestService,
    engine: &Arc<SegmentationPlugin>,
    req: &ValidRequest,
    assets: Vec<Asset>,
    permits: Permits,
    cancel: &Cancel,
    stop_on_drop: &mut CancelOnDrop,
) -> Result<Loaded, Error> {
    // The signal workers start on the first history loaded and take the
    // rest as the store reads them; they give the permits back.
    let (feed, fed) = tokio::sync::mpsc::channel(FEED_AHEAD);
    let assets_count = assets.len();
    let signals_task = forecast_services::budget::spawn_heavy({
        let (engine, cache, req, cancel) = (
            engine.clone(),
            svc.signals.clone(),
            req.clone(),
            cancel.clone(),
        );
        let span = tracing::Span::current();
        move || {
            let _in = span.enter();
            let signals = signals_for(&engine, &cache, fed, assets_count, &req, &permits, &cancel);
            (signals, permits)
        }
    });
    let loaded = load_histories(svc.assets.as_ref(), &svc.signals, assets, cancel, feed).await;
    let loaded_at = Instant::now();
    if loaded.is_err() {
        // Stop the workers before answering: the plugin slots are free
        // only once the work has stopped.
        cancel.raise();
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
    Ok(Loaded {
        universe,
        histories_cached,
        signals,
        signals_cached,
        permits,
        loaded_at,
        signals_at,
    })
}

/// The blocking part of a run: the accounting and the body.
struct Job {
    held: Held,
    /// The run's progress, when its client asked for it.
    progress: Option<Arc<Progress>>,
    /// The benchmarks chosen by ticker, with their histories.
    benchmarks: Vec<(String, Arc<PriceSeries>)>,
    cancel: Cancel,
    strategy: Arc<StrategyPlugin>,
    engine_version: String,
    req: ValidRequest,
    loaded: Loaded,
    start: NaiveDate,
    end: NaiveDate,
    /// How long the run waited for its plugin slots.
    waited: Duration,
    /// When it got them.
    started: Instant,
    /// When its answer is calculated.
    clock: forecast_domain::SharedClock,
}

impl Job {
    fn execute(self) -> Result<BacktestResponse, Error> {
        let Job {
            held,
            benchmarks,
            progress,
            cancel,
            strategy,
            engine_version,
            req,
            loaded,
            start,
            end,
            waited,
            started,
            clock,
        } = self;
        // `held` and the loaded plugin slots live until this returns: they
        // are free only once the work has stopped.
        let stopped = |e: Error| {
            if cancel.dropped() {
                tracing::info!(
                    seconds = started.elapsed().as_secs_f64(),
                    "backtest stopped: the request was dropped"
                );
            }
            e
        };
        let metas = metas(&loaded.universe);
        // Assets without signals (short histories) cannot trade; leave them out.
        let kept: Vec<usize> = (0..loaded.universe.len())
            .filter(|&i| loaded.signals[i].is_some())
            .collect();
        let inputs = inputs(&kept, &metas, &loaded);
        // The signal workers are done: the run takes the first permit.
        let permit = held.strategy_permit.as_ref().unwrap_or(&loaded.permits[0]);
        let mut instance = strategy
            .instance(permit, cancel.deadline)?
            .with_weights(req.weights.as_deref());
        let window = bt::Window {
            start: to_days(start),
            end: to_days(end),
        };
        if let Some(p) = &progress {
            p.enter(Phase::Running, calendar_rows(&loaded.universe, window));
        }
        let report = bt::run_capped(
            &inputs,
            window,
            &req.params,
            &mut instance,
            &mut || {
                if let Some(p) = &progress {
                    p.step();
                }
                cancel.is_raised()
            },
            MAX_TRADES,
        )
        .map_err(|e| run_error(e, start, end, &strategy))
        .map_err(stopped)?;
        let run_at = Instant::now();
        let usage = instance.usage();
        // What the run used and what it could not, by universe index.
        let data = DataUse::of(&loaded.universe, &kept, &report.universe, window);
        let finished = Finished {
            label: strategy.info().label(),
            assets: report.universe.len(),
            rows: report.dates.len(),
            trades: report.trades_total,
            histories_cached: loaded.histories_cached,
            signals_cached: loaded.signals_cached,
        };
        let curves = benchmarks::curves(
            &benchmarks,
            &report.dates,
            &report.equity,
            req.params.initial_capital,
            report.periods_per_year,
        );
        let mut body = shape(
            report,
            &inputs,
            &strategy,
            &engine_version,
            &req,
            loaded.signals_cached,
            data,
            usage,
            clock.now(),
        );
        benchmarks::attach(&mut body, curves);
        finished.log(waited, started, loaded.loaded_at, loaded.signals_at, run_at);
        Ok(body)
    }
}

/// Rows of the run's calendar: the days inside `window` on which an asset
/// of the universe has a price (what the accounting walks).
fn calendar_rows(universe: &[(Asset, Arc<PriceSeries>)], window: bt::Window) -> u64 {
    let days = (window.end - window.start + 1).max(0) as usize;
    let mut seen = vec![false; days];
    for (_, s) in universe {
        let from = s.dates.partition_point(|&d| d < window.start);
        for &d in s.dates[from..].iter().take_while(|&&d| d <= window.end) {
            seen[(d - window.start) as usize] = true;
        }
    }
    seen.iter().filter(|&&b| b).count() as u64
}

/// The accounting's view of each asset of the universe.
pub(super) fn metas(universe: &[(Asset, Arc<PriceSeries>)]) -> Vec<bt::AssetMeta> {
    universe
        .iter()
        .map(|(a, _)| bt::AssetMeta {
            ticker: a.ticker.clone(),
            name: a.name.clone(),
            category: a.category.as_str().to_string(),
        })
        .collect()
}

/// The run's inputs: the `kept` assets of the universe, with their signals.
pub(super) fn inputs<'a>(
    kept: &[usize],
    metas: &'a [bt::AssetMeta],
    loaded: &'a Loaded,
) -> Vec<bt::AssetInput<'a>> {
    kept.iter()
        .map(|&i| bt::AssetInput {
            meta: &metas[i],
            cost_bps: bt::cost_bps(&metas[i].category),
            dates: &loaded.universe[i].1.dates,
            closes: &loaded.universe[i].1.closes,
            signals: loaded.signals[i].as_deref().expect("kept"),
        })
        .collect()
}

/// The answer to a run that failed.
pub(super) fn run_error(
    e: bt::RunError<RunFailure>,
    start: NaiveDate,
    end: NaiveDate,
    strategy: &StrategyPlugin,
) -> Error {
    match e {
        bt::RunError::EmptyUniverse => Error::Invalid(format!(
            "no asset of the universe has {} rows of history by {end} and a price between \
                 start_date {start} and end_date {end}",
            bt::MIN_HISTORY
        )),
        bt::RunError::Param(p) => Error::Invalid(p.to_string()),
        bt::RunError::Cancelled | bt::RunError::Strategy(RunFailure::RunTimedOut) => timed_out(),
        bt::RunError::Strategy(RunFailure::Plugin(PluginError::OutOfFuel { plugin, budget })) => {
            Error::Refused(format!(
                "strategy {plugin} used up its fuel budget: one call may use {budget} units \
                 ({} plus {} per asset of its input); the run stopped there, as it would on \
                 every rerun",
                forecast_plugins::strategy::FUEL_PER_CALL,
                forecast_plugins::strategy::FUEL_PER_ASSET
            ))
        }
        bt::RunError::Strategy(RunFailure::RunOutOfFuel { plugin }) => Error::Refused(format!(
            "strategy {plugin} used up the fuel budget of one run: its calls may use {} units \
             together (each call also {} plus {} per asset of its input); the run stopped \
             there, as it would on every rerun",
            forecast_plugins::strategy::FUEL_PER_RUN,
            forecast_plugins::strategy::FUEL_PER_CALL,
            forecast_plugins::strategy::FUEL_PER_ASSET
        )),
        // An author's upload that fails is the author's to fix: 422 with
        // the reason (its deadline stays a 504). A built-in that fails is
        // the server's fault: 500.
        bt::RunError::Strategy(RunFailure::Plugin(p)) => match p {
            p @ PluginError::Timeout { .. } => Error::Plugin(p),
            p if strategy.metered() => Error::Refused(format!("the run stopped: {p}")),
            p => Error::Plugin(p),
        },
        bt::RunError::Strategy(RunFailure::Refused { plugin, message }) => {
            let m = format!("strategy {plugin} ended the run: {message}");
            match strategy.metered() {
                true => Error::Refused(m),
                false => Error::PluginContract(m),
            }
        }
        bt::RunError::Contract(m) => {
            let m = format!(
                "strategy {} broke the strategy contract: {m}",
                strategy.info().label()
            );
            match strategy.metered() {
                true => Error::Refused(m),
                false => Error::PluginContract(m),
            }
        }
    }
}

/// What the log of a finished run tells.
struct Finished {
    label: String,
    assets: usize,
    rows: usize,
    trades: u64,
    histories_cached: usize,
    signals_cached: usize,
}

impl Finished {
    /// Where the time went, phase by phase (issue 17).
    fn log(
        self,
        waited: Duration,
        started: Instant,
        loaded_at: Instant,
        signals_at: Instant,
        run_at: Instant,
    ) {
        tracing::info!(
            strategy = %self.label,
            assets = self.assets,
            rows = self.rows,
            trades = self.trades,
            histories_cached = self.histories_cached,
            signals_cached = self.signals_cached,
            waited_seconds = waited.as_secs_f64(),
            load_seconds = loaded_at.duration_since(started).as_secs_f64(),
            // Beside the load, and after it for this long.
            signals_seconds = signals_at.duration_since(loaded_at).as_secs_f64(),
            run_seconds = run_at.duration_since(signals_at).as_secs_f64(),
            shape_seconds = run_at.elapsed().as_secs_f64(),
            seconds = started.elapsed().as_secs_f64(),
            "backtest finished"
        );
    }
}
