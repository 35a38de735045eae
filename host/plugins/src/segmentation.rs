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
pub use exports::forecast::plugins::evidence::{
    EvidenceReport, EvidenceRequest, SegmentEvidence, StateAt,
};
pub use exports::forecast::plugins::forecast_inputs::Inputs as ForecastInputs;
use exports::forecast::plugins::{engine, episodes, evidence, forecast_inputs};

impl self::forecast::plugins::host_log::Host for CallState {
    fn log(&mut self, level: self::forecast::plugins::host_log::Level, message: String) {
        use self::forecast::plugins::host_log::Level;
        let level = match level {
            Level::Debug => tracing::Level::DEBUG,
            Level::Info => tracing::Level::INFO,
            Level::Warn => tracing::Level::WARN,
            Level::Error => tracing::Level::ERROR,
        };
        guest_log(&self.plugin, &mut self.log, level, &message);
    }
}

impl self::forecast::plugins::types::Host for CallState {}

/// The `segmentation` world (the engine).
pub struct SegmentationWorld;

/// A pre-linked engine: `engine` always, `evidence` when the component
/// exports it (built against WIT 1.7.0 or later), `episodes` likewise
/// (1.9.0 or later), `forecast-inputs` (1.10.0 or later). Not the bindgen'd
/// world type, which would refuse engines of earlier minors.
pub struct LinkedSegmentation {
    pre: InstancePre<CallState>,
    engine: engine::GuestIndices,
    evidence: Option<evidence::GuestIndices>,
    episodes: Option<episodes::GuestIndices>,
    inputs: Option<forecast_inputs::GuestIndices>,
}

/// The exports of one engine instance.
pub struct SegmentationExports {
    engine: engine::Guest,
    evidence: Option<evidence::Guest>,
    episodes: Option<episodes::Guest>,
    inputs: Option<forecast_inputs::Guest>,
}

impl SegmentationExports {
    fn forecast_plugins_engine(&self) -> &engine::Guest {
        &self.engine
    }

    /// The `evidence` interface: an error naming the engine's age when it
    /// has none (callers ask [`SegmentationPlugin::has_evidence`] first).
    fn evidence(&self) -> wasmtime::Result<&evidence::Guest> {
        self.evidence.as_ref().ok_or_else(|| {
            wasmtime::format_err!("the engine exports no `evidence` interface (WIT before 1.7.0)")
        })
    }

    /// The `episodes` interface: an error naming the engine's age when it
    /// has none (callers ask [`SegmentationPlugin::has_episodes`] first).
    fn episodes(&self) -> wasmtime::Result<&episodes::Guest> {
        self.episodes.as_ref().ok_or_else(|| {
            wasmtime::format_err!("the engine exports no `episodes` interface (WIT before 1.9.0)")
        })
    }

    /// The `forecast-inputs` interface, or an error naming the engine's
    /// age (callers ask [`SegmentationPlugin::has_forecast_inputs`] first).
    fn inputs(&self) -> wasmtime::Result<&forecast_inputs::Guest> {
        self.inputs.as_ref().ok_or_else(|| {
            wasmtime::format_err!(
                "the engine exports no `forecast-inputs` interface (WIT before 1.10.0)"
            )
        })
    }
}

impl World for SegmentationWorld {
    const KIND: PluginKind = PluginKind::Segmentation;
    type Bindings = SegmentationExports;
    type Pre = LinkedSegmentation;
    type Ext = ();

    fn link(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
        Segmentation::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
    }

    fn pre(pre: InstancePre<CallState>) -> wasmtime::Result<Self::Pre> {
        Ok(LinkedSegmentation {
            engine: engine::GuestIndices::new(&pre)?,
            evidence: evidence::GuestIndices::new(&pre).ok(),
            episodes: episodes::GuestIndices::new(&pre).ok(),
            inputs: forecast_inputs::GuestIndices::new(&pre).ok(),
            pre,
        })
    }

    fn instantiate(
        pre: &Self::Pre,
        store: &mut Store<CallState>,
    ) -> wasmtime::Result<SegmentationExports> {
        let instance = pre.pre.instantiate(&mut *store)?;
        Ok(SegmentationExports {
            engine: pre.engine.load(&mut *store, &instance)?,
            evidence: match &pre.evidence {
                Some(evidence) => Some(evidence.load(&mut *store, &instance)?),
                None => None,
            },
            episodes: match &pre.episodes {
                Some(episodes) => Some(episodes.load(&mut *store, &instance)?),
                None => None,
            },
            inputs: match &pre.inputs {
                Some(inputs) => Some(inputs.load(&mut *store, &instance)?),
                None => None,
            },
        })
    }

    /// The engine names no one; its version is `engine-version`'s.
    fn identify(
        store: &mut Store<CallState>,
        bindings: &SegmentationExports,
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

    /// Whether the engine exports `evidence` (WIT 1.7.0 or later).
    pub fn has_evidence(&self) -> bool {
        self.pre().evidence.is_some()
    }

    /// `evidence.analyse-evidence` in a fresh instance: the evidence of the
    /// buckets each request names. Blocking, like
    /// [`SegmentationPlugin::analyse`]; a [`PluginError`] when the engine
    /// has no `evidence` (see [`SegmentationPlugin::has_evidence`]).
    pub fn analyse_evidence(
        &self,
        permit: &Permit,
        series: &Series,
        requests: &[EvidenceRequest],
    ) -> Result<Vec<Result<EvidenceReport, EngineError>>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("analyse-evidence", self.label()).entered();
        self.call(permit, |store, bindings| {
            bindings
                .evidence()?
                .call_analyse_evidence(store, &input, requests)
        })
    }

    /// `evidence.states-at` in a fresh instance: for each of `params`, the
    /// state of each prefix ending at `ends`. Blocking, like
    /// [`SegmentationPlugin::analyse`].
    pub fn states_at(
        &self,
        permit: &Permit,
        series: &Series,
        params: &[AnalysisParams],
        ends: &[u32],
    ) -> Result<Vec<Result<Vec<StateAt>, EngineError>>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("states-at", self.label()).entered();
        self.call(permit, |store, bindings| {
            bindings
                .evidence()?
                .call_states_at(store, &input, params, ends)
        })
    }

    /// Whether the engine exports `episodes` (WIT 1.9.0 or later).
    pub fn has_episodes(&self) -> bool {
        self.pre().episodes.is_some()
    }

    /// `episodes.episodes-at` in a fresh instance: for each of `params`,
    /// the independent episodes behind the current bucket of each prefix
    /// ending at `ends` (what `analyse_evidence` of the cut series reports
    /// for that bucket). Blocking, like [`SegmentationPlugin::analyse`]; a
    /// [`PluginError`] when the engine has no `episodes` (see
    /// [`SegmentationPlugin::has_episodes`]).
    pub fn episodes_at(
        &self,
        permit: &Permit,
        series: &Series,
        params: &[AnalysisParams],
        ends: &[u32],
    ) -> Result<Vec<Result<Vec<u32>, EngineError>>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("episodes-at", self.label()).entered();
        self.call(permit, |store, bindings| {
            bindings
                .episodes()?
                .call_episodes_at(store, &input, params, ends)
        })
    }

    /// Whether the engine exports `forecast-inputs` (WIT 1.10.0 or later).
    pub fn has_forecast_inputs(&self) -> bool {
        self.pre().inputs.is_some()
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

    /// [`SegmentationPlugin::analyse_evidence`] on the session's instance.
    pub fn analyse_evidence(
        &mut self,
        permit: &Permit,
        series: &Series,
        requests: &[EvidenceRequest],
    ) -> Result<Vec<Result<EvidenceReport, EngineError>>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("analyse-evidence", self.plugin.label()).entered();
        self.call(permit, None, |store, bindings| {
            bindings
                .evidence()?
                .call_analyse_evidence(store, &input, requests)
        })
    }

    /// [`SegmentationPlugin::states_at`] on the session's instance.
    pub fn states_at(
        &mut self,
        permit: &Permit,
        series: &Series,
        params: &[AnalysisParams],
        ends: &[u32],
    ) -> Result<Vec<Result<Vec<StateAt>, EngineError>>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("states-at", self.plugin.label()).entered();
        self.call(permit, None, |store, bindings| {
            bindings
                .evidence()?
                .call_states_at(store, &input, params, ends)
        })
    }

    /// [`SegmentationPlugin::episodes_at`] on the session's instance.
    pub fn episodes_at(
        &mut self,
        permit: &Permit,
        series: &Series,
        params: &[AnalysisParams],
        ends: &[u32],
    ) -> Result<Vec<Result<Vec<u32>, EngineError>>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("episodes-at", self.plugin.label()).entered();
        self.call(permit, None, |store, bindings| {
            bindings
                .episodes()?
                .call_episodes_at(store, &input, params, ends)
        })
    }

    /// `forecast-inputs.inputs-at` on the session's instance: the median
    /// predictions and episodes at `ends` and the whole series' state, in
    /// one walk (what [`SegmentationSession::states_at`],
    /// [`SegmentationSession::episodes_at`] and
    /// [`SegmentationSession::analyse_state`] answer of them). A
    /// [`PluginError`] when the engine has none (see
    /// [`SegmentationPlugin::has_forecast_inputs`]).
    pub fn forecast_inputs(
        &mut self,
        permit: &Permit,
        series: &Series,
        params: AnalysisParams,
        ends: &[u32],
    ) -> Result<Result<ForecastInputs, EngineError>, PluginError> {
        let input = wit_series(series);
        let _call = guest_span!("inputs-at", self.plugin.label()).entered();
        self.call(permit, None, |store, bindings| {
            bindings
                .inputs()?
                .call_inputs_at(store, &input, params, ends)
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
        f: impl FnOnce(&mut Store<CallState>, &SegmentationExports) -> wasmtime::Result<R>,
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
