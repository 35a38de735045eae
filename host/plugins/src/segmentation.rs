//! The `segmentation` world: host bindings and its typed, sandboxed calls.

use std::sync::Arc;
use std::time::Duration;

use forecast_domain::series::PriceSeries as Series;
use forecast_domain::PluginKind;
use wasmtime::component::{HasSelf, InstancePre, Linker};
use wasmtime::Store;

use crate::plugin::{Identity, Instance, Plugin, World};
use crate::runtime::{CallState, Permit};
use crate::{guest_log, PluginError};

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "segmentation",
});

pub use self::forecast::plugins::types::{Metric, PriceSeries};
pub use exports::forecast::plugins::engine::{
    Analysis, AnalysisParams, CurrentState, EngineError, Method, SegmentStats, StateSummary,
    WalkForwardSeries,
};

impl self::forecast::plugins::host_log::Host for CallState {
    fn log(&mut self, level: self::forecast::plugins::host_log::Level, message: String) {
        use self::forecast::plugins::host_log::Level;
        let level = match level {
            Level::Debug => tracing::Level::DEBUG,
            Level::Info => tracing::Level::INFO,
            Level::Warn => tracing::Level::WARN,
            Level::Error => tracing::Level::ERROR,
        };
        guest_log(&self.plugin, level, &message);
    }
}

impl self::forecast::plugins::types::Host for CallState {}

/// The `segmentation` world (the engine).
pub struct SegmentationWorld;

impl World for SegmentationWorld {
    const KIND: PluginKind = PluginKind::Segmentation;
    type Bindings = Segmentation;
    type Pre = SegmentationPre<CallState>;
    type Ext = ();

    fn link(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
        Segmentation::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
    }

    fn pre(pre: InstancePre<CallState>) -> wasmtime::Result<Self::Pre> {
        SegmentationPre::new(pre)
    }

    fn instantiate(
        pre: &Self::Pre,
        store: &mut Store<CallState>,
    ) -> wasmtime::Result<Segmentation> {
        pre.instantiate(store)
    }

    /// The engine names no one; its version is `engine-version`'s.
    fn identify(
        store: &mut Store<CallState>,
        bindings: &Segmentation,
    ) -> wasmtime::Result<Result<Identity, String>> {
        let version = bindings
            .forecast_plugins_engine()
            .call_engine_version(store)?;
        Ok(Ok(Identity {
            name: None,
            version,
            description: String::new(),
        }))
    }
}

/// A loaded, pre-linked segmentation engine version.
pub type SegmentationPlugin = Plugin<SegmentationWorld>;

fn wit_series(series: &Series) -> PriceSeries {
    PriceSeries {
        dates: series.dates.clone(),
        closes: series.closes.clone(),
    }
}

impl Plugin<SegmentationWorld> {
    /// Instantiates a fresh instance and asks its version: the fixed cost
    /// of every call (used by benchmarks and diagnostics).
    pub fn ping(&self, permit: &Permit) -> Result<String, PluginError> {
        let _call = guest_span!("engine-version", self.label()).entered();
        self.call(permit, |store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_engine_version(store)
        })
    }

    /// Runs one analysis in a fresh, bounded instance. Blocking: call it
    /// from `spawn_blocking` with a [`Permit`].
    pub fn analyse(
        &self,
        permit: &Permit,
        series: &Series,
        params: AnalysisParams,
    ) -> Result<Result<Analysis, EngineError>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("analyse", self.label()).entered();
        self.call(permit, |store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_analyse(store, &input, params)
        })
    }

    /// The final state only (no per-row series): grading and verdicts.
    /// Blocking, like [`SegmentationPlugin::analyse`].
    pub fn analyse_state(
        &self,
        permit: &Permit,
        series: &Series,
        params: AnalysisParams,
    ) -> Result<Result<StateSummary, EngineError>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("analyse-state", self.label()).entered();
        self.call(permit, |store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_analyse_state(store, &input, params)
        })
    }

    /// `analyse-state` for each of `params` in one call (the series crosses
    /// the boundary once): one answer per set, in order. Blocking, like
    /// [`SegmentationPlugin::analyse`].
    pub fn analyse_states(
        &self,
        permit: &Permit,
        series: &Series,
        params: &[AnalysisParams],
    ) -> Result<Vec<Result<StateSummary, EngineError>>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("analyse-states", self.label()).entered();
        self.call(permit, |store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_analyse_states(store, &input, params)
        })
    }

    /// A reusable instance for many calls in a row (the grading job): one
    /// instantiation, a fresh deadline per call, and a fresh instance after
    /// any failure. Each call still takes a [`Permit`].
    pub fn session(self: &Arc<Self>) -> SegmentationSession {
        SegmentationSession {
            plugin: self.clone(),
            live: None,
        }
    }
}

/// See [`SegmentationPlugin::session`]. `Send`, so it can move into
/// `spawn_blocking` and back.
pub struct SegmentationSession {
    plugin: Arc<SegmentationPlugin>,
    live: Option<Instance<SegmentationWorld>>,
}

impl SegmentationSession {
    /// The plugin this session runs.
    pub fn plugin(&self) -> &Arc<SegmentationPlugin> {
        &self.plugin
    }

    /// [`SegmentationPlugin::analyse_state`] on the session's instance.
    pub fn analyse_state(
        &mut self,
        permit: &Permit,
        series: &Series,
        params: AnalysisParams,
    ) -> Result<Result<StateSummary, EngineError>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("analyse-state", self.plugin.label()).entered();
        self.call(permit, None, |store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_analyse_state(store, &input, params)
        })
    }

    /// [`SegmentationPlugin::analyse_states`] on the session's instance:
    /// every graded (period, metric) of one asset in one call.
    pub fn analyse_states(
        &mut self,
        permit: &Permit,
        series: &Series,
        params: &[AnalysisParams],
    ) -> Result<Vec<Result<StateSummary, EngineError>>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("analyse-states", self.plugin.label()).entered();
        self.call(permit, None, |store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_analyse_states(store, &input, params)
        })
    }

    /// `engine.walk-forward` on the session's instance, within `budget`
    /// (at most the runtime's call timeout): the point-in-time signals of
    /// every row, for backtests.
    pub fn walk_forward(
        &mut self,
        permit: &Permit,
        series: &Series,
        params: AnalysisParams,
        budget: Option<Duration>,
    ) -> Result<Result<WalkForwardSeries, EngineError>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("walk-forward", self.plugin.label()).entered();
        self.call(permit, budget, |store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_walk_forward(store, &input, params)
        })
    }

    fn call<R>(
        &mut self,
        permit: &Permit,
        budget: Option<Duration>,
        f: impl FnOnce(&mut Store<CallState>, &Segmentation) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        let live = match &mut self.live {
            Some(live) => live,
            empty => empty.insert(self.plugin.fresh_instance(permit)?),
        };
        let answer = self.plugin.call_on(permit, live, budget, f);
        if answer.is_err() {
            // A trapped instance is never used again.
            self.live = None;
        }
        answer
    }
}
