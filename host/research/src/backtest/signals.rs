//! The engine's walk-forward signals of the universe, one pass per asset
//! (cached), on one thread per plugin slot; and the stop flag the workers
//! and the accounting poll.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use forecast_api::backtest::ValidRequest;
use forecast_backtest as bt;
use forecast_domain::series::PriceSeries;
use forecast_domain::Asset;
use forecast_plugins::segmentation::{AnalysisParams, EngineError, WalkForwardSeries};
use forecast_plugins::{Permit, PluginError, SegmentationPlugin, SegmentationSession};
use tokio::sync::mpsc::Receiver;

use super::cache::{SignalCache, SignalKey};
use super::timed_out;
use super::universe::Work;
use forecast_services::error::Error;

/// The stop flag of one backtest: raised when the request is dropped (the
/// client went away: [`CancelOnDrop`]) or its deadline passes; the signal
/// workers and the accounting poll it between steps.
#[derive(Clone)]
pub(super) struct Cancel {
    pub(super) flag: Arc<AtomicBool>,
    pub(super) deadline: Instant,
}

impl Cancel {
    pub(super) fn is_raised(&self) -> bool {
        if self.flag.load(Ordering::Relaxed) {
            return true;
        }
        if Instant::now() >= self.deadline {
            self.flag.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Raises the flag (the load failed: the workers stop).
    pub(super) fn raise(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// Whether the stop came from a dropped request rather than the clock.
    pub(super) fn dropped(&self) -> bool {
        self.flag.load(Ordering::Relaxed) && Instant::now() < self.deadline
    }
}

/// Raises the flag when the request's future is dropped, finished or not
/// (after a normal end the blocking work has already stopped). While the
/// histories load and the signals are computed beside them (`loading` is
/// the time that started), a drop is the client going away, and is logged
/// here; later the blocking work logs it.
pub(super) struct CancelOnDrop {
    pub(super) flag: Arc<AtomicBool>,
    pub(super) loading: Option<Instant>,
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

/// The signals of each asset by universe index (`None`: it can never
/// trade), and how many came from the cache.
pub(super) type Computed = (Vec<Option<Arc<bt::Signals>>>, usize);

/// Computes (or fetches) the signals of the `assets` histories arriving on
/// `feed` (until it closes), on one thread per permit, each with one reused
/// engine instance. Assets the engine refuses (fewer than 300 rows) get
/// `None`: they can never trade. Returns them by universe index, and how
/// many came from the cache.
pub(super) fn signals_for(
    engine: &Arc<SegmentationPlugin>,
    cache: &SignalCache,
    feed: Receiver<Work>,
    assets: usize,
    req: &ValidRequest,
    permits: &[Permit],
    cancel: &Cancel,
) -> Result<Computed, Error> {
    let workers = Workers {
        engine,
        cache,
        req,
        cancel,
        feed: Mutex::new(feed),
        cached: AtomicUsize::new(0),
        results: Mutex::new(Vec::new()),
        failure: Mutex::new(None),
    };
    // The engine's calls nest under the run's span on every thread.
    let span = tracing::Span::current();
    std::thread::scope(|scope| {
        for permit in permits {
            // Each thread owns its permit's borrow; the rest is shared.
            let (workers, span) = (&workers, &span);
            scope.spawn(move || span.in_scope(|| workers.work(permit)));
        }
    });
    workers.finish(assets)
}

/// What the signal threads share.
struct Workers<'a> {
    engine: &'a Arc<SegmentationPlugin>,
    cache: &'a SignalCache,
    req: &'a ValidRequest,
    cancel: &'a Cancel,
    feed: Mutex<Receiver<Work>>,
    /// Signals served by the cache.
    cached: AtomicUsize,
    /// Signals by universe index.
    results: Mutex<Vec<(usize, Arc<bt::Signals>)>>,
    /// The first failure stops every thread.
    failure: Mutex<Option<Error>>,
}

/// What a thread does after one asset.
enum Step {
    Next,
    Stop(Error),
}

impl Workers<'_> {
    /// One thread: takes histories until the feed closes or a thread fails.
    fn work(&self, permit: &Permit) {
        let mut session = self.engine.session();
        loop {
            if self.failure.lock().expect("poisoned").is_some() {
                return;
            }
            let next = self.feed.lock().expect("poisoned").blocking_recv();
            let Some(work) = next else {
                return;
            };
            if let Step::Stop(e) = self.one(&mut session, permit, work) {
                *self.failure.lock().expect("poisoned") = Some(e);
                return;
            }
        }
    }

    /// The signals of one history: from the cache, else from the engine
    /// (and then kept); none for a history too short to trade.
    fn one(&self, session: &mut SegmentationSession, permit: &Permit, work: Work) -> Step {
        let Work {
            index: i,
            asset,
            series,
        } = work;
        let key = self.key(&asset);
        if let Some(hit) = self.cache.signals(&key) {
            self.cached.fetch_add(1, Ordering::Relaxed);
            self.results.lock().expect("poisoned").push((i, hit));
            return Step::Next;
        }
        if series.len() < bt::MIN_HISTORY {
            return Step::Next;
        }
        if self.cancel.is_raised() {
            return Step::Stop(timed_out());
        }
        let deadline = self.cancel.deadline;
        let left = deadline.saturating_duration_since(Instant::now());
        let params = AnalysisParams {
            return_period: self.req.params.return_period,
            num_segments: self.req.params.num_segments,
            decay_factor: self.req.params.decay_factor,
            metric: forecast_services::analysis::wit_metric(self.req.metric),
            periods_per_year: Some(series.periods_per_year()),
        };
        let _asset = tracing::info_span!("signals", ticker = %asset.ticker).entered();
        match session.walk_forward(permit, &series, params, Some(left)) {
            Ok(Ok(w)) => match self.checked(w, &series) {
                Ok(signals) => {
                    self.cache.put_signals(key, signals.clone());
                    self.results.lock().expect("poisoned").push((i, signals));
                    Step::Next
                }
                Err(e) => Step::Stop(e),
            },
            Ok(Err(EngineError::InsufficientData(_))) => Step::Next,
            Ok(Err(EngineError::InvalidInput(m))) => {
                tracing::warn!(ticker = %asset.ticker, "engine refused the history: {m}");
                Step::Next
            }
            Err(PluginError::Timeout { .. }) if Instant::now() >= deadline => {
                Step::Stop(timed_out())
            }
            Err(e) => Step::Stop(Error::Plugin(e)),
        }
    }

    /// The key of `asset`'s signals under this engine and request.
    fn key(&self, a: &Asset) -> SignalKey {
        SignalKey {
            asset_id: a.id,
            data_version: a.data_version,
            engine_sha256: self.engine.info().sha256.clone(),
            return_period: self.req.params.return_period,
            num_segments: self.req.params.num_segments,
            // Already quantised (`forecast_api::backtest::quantise_decay`), so
            // nearby decays share entries.
            decay_bits: self.req.params.decay_factor.to_bits(),
            metric: self.req.metric,
        }
    }

    /// The engine's columns as signals, one row per input row (else the
    /// engine broke its contract).
    fn checked(
        &self,
        w: WalkForwardSeries,
        series: &PriceSeries,
    ) -> Result<Arc<bt::Signals>, Error> {
        let signals = Arc::new(bt::Signals {
            drawdowns: w.drawdowns,
            segments: w.segments,
            expected_returns: w.expected_returns,
            median_returns: w.median_returns,
            prediction_error_cumavg: w.prediction_error_cumavg,
            median_error_cumavg: w.median_error_cumavg,
        });
        if signals.len() != series.len() {
            return Err(Error::Plugin(PluginError::Trap {
                plugin: self.engine.info().label(),
                message: format!(
                    "walk-forward returned {} rows for {} inputs",
                    signals.len(),
                    series.len()
                ),
            }));
        }
        Ok(signals)
    }

    /// The first failure, else the signals by universe index.
    fn finish(self, assets: usize) -> Result<Computed, Error> {
        if let Some(e) = self.failure.into_inner().expect("poisoned") {
            return Err(e);
        }
        let mut out: Vec<Option<Arc<bt::Signals>>> = vec![None; assets];
        for (i, s) in self.results.into_inner().expect("poisoned") {
            out[i] = Some(s);
        }
        Ok((out, self.cached.into_inner()))
    }
}
