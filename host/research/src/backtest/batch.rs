//! Many runs of one strategy over one universe and window, differing only
//! in their parameters (a sweep's combinations): the universe is resolved,
//! admitted and waited for once; the engine makes one pass per distinct
//! set of engine parameters, whose signals every combination of that set
//! shares; the combinations' accounting runs on every held plugin slot at
//! once. One deadline bounds the whole batch.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use forecast_api::backtest::ValidRequest;
use forecast_backtest as bt;
use forecast_domain::series::to_days;
use forecast_plugins::{Permit, Permits, StrategyPlugin};

use super::admission::UserSlot;
use super::run::{hold, inputs, load, metas, run_error, Held, Loaded};
use super::signals::{Cancel, CancelOnDrop};
use super::{validation, BacktestService};
use crate::progress::{self, Phase, Progress};
use forecast_services::error::Error;

/// The runs of a batch, in the order of its requests, and what they share.
pub(super) struct Batch {
    /// One report per request (no trades kept; `trades_total` counts them).
    pub(super) reports: Vec<bt::Report>,
    /// The strategy as the base request named it.
    pub(super) strategy: Arc<StrategyPlugin>,
    /// The engine's version.
    pub(super) engine_version: String,
    /// The window.
    pub(super) start: NaiveDate,
    /// The window's end.
    pub(super) end: NaiveDate,
    /// Passes of the engine over the universe.
    pub(super) signal_passes: usize,
    /// Assets whose signals came from the cache, over all passes.
    pub(super) signals_cached: usize,
}

/// Runs every request of `requests` (the same strategy, universe and
/// dates as `base`; other parameters) under `slot`, within `timeout` from
/// when the plugin slots are held. A request refused by the data (a 400)
/// is named by its `labels` entry.
pub(super) async fn run_batch(
    svc: &BacktestService,
    base: &ValidRequest,
    requests: &[ValidRequest],
    labels: &[String],
    slot: UserSlot,
    timeout: Duration,
) -> Result<Batch, Error> {
    let queued = Instant::now();
    let engine = svc.plugins.segmentation();
    tracing::info!(strategy = %base.strategy, runs = requests.len(), "batch started");
    let (strategy, assets, mut permits, mut held) = hold(svc, base, slot, queued).await?;
    progress::enter(Phase::Loading, assets.len() as u64);
    let started = Instant::now();
    let flag = Arc::new(AtomicBool::new(false));
    let mut stop_on_drop = CancelOnDrop {
        flag: flag.clone(),
        loading: None,
    };
    let cancel = Cancel {
        flag,
        deadline: started + timeout,
    };
    let mut reports: Vec<Option<bt::Report>> = vec![None; requests.len()];
    let mut window = None;
    let mut signals_cached = 0;
    let groups = engine_groups(requests);
    for group in &groups {
        stop_on_drop.loading = Some(Instant::now());
        let loaded = load(
            svc,
            &engine,
            &requests[group[0]],
            assets.clone(),
            permits,
            &cancel,
            &mut stop_on_drop,
        )
        .await
        .map_err(|e| after(e, &reports))?;
        signals_cached += loaded.signals_cached;
        if window.is_none() {
            progress::enter(Phase::Combinations, requests.len() as u64);
        }
        let (start, end) = match window {
            Some(w) => w,
            None => *window.insert(validation::window(base, &loaded.universe)?),
        };
        let work = Group {
            loaded,
            requests: group
                .iter()
                .map(|&i| (i, requests[i].clone(), labels[i].clone()))
                .collect(),
            strategy: strategy.clone(),
            cancel: cancel.clone(),
            window: bt::Window {
                start: to_days(start),
                end: to_days(end),
            },
            held,
            progress: progress::current(),
        };
        let span = tracing::Span::current();
        let done = forecast_services::budget::spawn_heavy(move || span.in_scope(|| work.execute()))
            .await
            .map_err(|e| Error::Internal(format!("batch task failed: {e}")))?;
        let (runs, back, back_held) = done.map_err(|e| after(e, &reports))?;
        for (i, report) in runs {
            reports[i] = Some(report);
        }
        permits = back;
        held = back_held;
    }
    drop(held);
    let (start, end) = window.ok_or_else(|| Error::Internal("a batch of no runs".into()))?;
    tracing::info!(
        runs = requests.len(),
        signal_passes = groups.len(),
        seconds = started.elapsed().as_secs_f64(),
        "batch finished"
    );
    Ok(Batch {
        reports: reports
            .into_iter()
            .map(|r| r.ok_or_else(|| Error::Internal("a run of the batch is missing".into())))
            .collect::<Result<_, _>>()?,
        strategy,
        engine_version: engine.info().version.clone(),
        start,
        end,
        signal_passes: groups.len(),
        signals_cached,
    })
}

/// A time limit reached after some of the batch's runs had ended: the
/// error says how many, so the answer is charged by what ran.
fn after(e: Error, reports: &[Option<bt::Report>]) -> Error {
    match e {
        Error::TimedOut(detail) => Error::TimedOutAfter {
            detail,
            finished: reports.iter().flatten().count() as u32,
        },
        other => other,
    }
}

/// The requests' indexes grouped by their engine parameters, each group in
/// request order, the groups in order of first appearance.
fn engine_groups(requests: &[ValidRequest]) -> Vec<Vec<usize>> {
    let key = |r: &ValidRequest| {
        (
            r.params.return_period,
            r.params.num_segments,
            r.params.decay_factor.to_bits(),
            r.metric,
        )
    };
    let mut groups: Vec<(_, Vec<usize>)> = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        match groups.iter_mut().find(|(k, _)| *k == key(r)) {
            Some((_, g)) => g.push(i),
            None => groups.push((key(r), vec![i])),
        }
    }
    groups.into_iter().map(|(_, g)| g).collect()
}

/// One engine pass's combinations, run on a blocking thread.
struct Group {
    loaded: Loaded,
    /// Index, request and label of each combination.
    requests: Vec<(usize, ValidRequest, String)>,
    strategy: Arc<StrategyPlugin>,
    cancel: Cancel,
    window: bt::Window,
    held: Held,
    /// The batch's progress, when its client asked for it.
    progress: Option<Arc<Progress>>,
}

/// A group's reports by request index, with the permits and holdings back.
type GroupDone = Result<(Vec<(usize, bt::Report)>, Permits, Held), Error>;

impl Group {
    fn execute(self) -> GroupDone {
        let Group {
            loaded,
            requests,
            strategy,
            cancel,
            window,
            held,
            progress,
        } = self;
        let metas = metas(&loaded.universe);
        let kept: Vec<usize> = (0..loaded.universe.len())
            .filter(|&i| loaded.signals[i].is_some())
            .collect();
        let inputs = inputs(&kept, &metas, &loaded);
        // An upload runs on its one metered permit; a built-in on every
        // plugin slot the batch holds, one combination per thread.
        let slots: Vec<&Permit> = match &held.strategy_permit {
            Some(p) => vec![p],
            None => loaded.permits.iter().collect(),
        };
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<(usize, bt::Report)>> = Mutex::new(Vec::new());
        let failure: Mutex<Option<Error>> = Mutex::new(None);
        let failed = AtomicBool::new(false);
        std::thread::scope(|scope| {
            for permit in slots {
                let (next, results, failure, failed) = (&next, &results, &failure, &failed);
                let (requests, inputs, strategy, cancel) = (&requests, &inputs, &strategy, &cancel);
                let progress = progress.as_deref();
                let span = tracing::Span::current();
                scope.spawn(move || {
                    let _in = span.enter();
                    loop {
                        if failed.load(Ordering::Relaxed) {
                            return;
                        }
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some((i, req, label)) = requests.get(k) else {
                            return;
                        };
                        match one(inputs, window, req, strategy, permit, cancel) {
                            Ok(report) => {
                                results.lock().expect("poisoned").push((*i, report));
                                if let Some(p) = progress {
                                    p.step();
                                }
                            }
                            Err(e) => {
                                let e = match e {
                                    Error::Invalid(m) => Error::Invalid(format!("{label}: {m}")),
                                    e => e,
                                };
                                failed.store(true, Ordering::Relaxed);
                                failure.lock().expect("poisoned").get_or_insert(e);
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
        let runs = results.into_inner().expect("poisoned");
        drop(inputs);
        Ok((runs, loaded.permits, held))
    }
}

/// One combination's run, keeping no trades.
fn one(
    inputs: &[bt::AssetInput<'_>],
    window: bt::Window,
    req: &ValidRequest,
    strategy: &Arc<StrategyPlugin>,
    permit: &Permit,
    cancel: &Cancel,
) -> Result<bt::Report, Error> {
    let mut instance = strategy
        .instance(permit, cancel.deadline)?
        .with_weights(req.weights.as_deref());
    let (start, end) = (
        forecast_domain::series::from_days(window.start),
        forecast_domain::series::from_days(window.end),
    );
    bt::run_capped(
        inputs,
        window,
        &req.params,
        &mut instance,
        &mut || cancel.is_raised(),
        0,
    )
    .map_err(|e| run_error(e, start, end, strategy))
}
