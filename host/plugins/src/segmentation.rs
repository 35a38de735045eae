//! The `segmentation` world: host bindings and a typed, sandboxed call.

use std::sync::Arc;

use wasmtime::component::HasSelf;

use super::{
    guest_log, load_error, prelink, sha256_hex, CallState, PluginError, PluginInfo, PluginRuntime,
};
use forecast_domain::series::PriceSeries as Series;

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

/// A loaded, pre-linked segmentation engine version.
pub struct SegmentationPlugin {
    info: PluginInfo,
    label: Arc<str>,
    pre: SegmentationPre<CallState>,
    runtime: Arc<PluginRuntime>,
}

impl SegmentationPlugin {
    /// Compiles and links `bytes` as the segmentation engine `name`. The
    /// version is the one the component reports (`engine-version`), which
    /// doubles as a smoke test of the instance.
    pub fn load(
        runtime: Arc<PluginRuntime>,
        name: &str,
        bytes: &[u8],
    ) -> Result<Self, PluginError> {
        let provisional = format!("segmentation/{name}");
        let pre = prelink(&runtime, &provisional, bytes, |linker| {
            Segmentation::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
        })?;
        let pre = SegmentationPre::new(pre).map_err(load_error(&provisional))?;
        let mut plugin = SegmentationPlugin {
            info: PluginInfo {
                kind: "segmentation".into(),
                name: name.into(),
                version: "unknown".into(),
                sha256: sha256_hex(bytes),
            },
            label: Arc::from(provisional.as_str()),
            pre,
            runtime,
        };
        let version = plugin.call(|store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_engine_version(store)
        })?;
        plugin.info.version = version;
        plugin.label = Arc::from(plugin.info.label().as_str());
        Ok(plugin)
    }

    /// Who this is.
    pub fn info(&self) -> &PluginInfo {
        &self.info
    }

    /// Instantiates a fresh instance and asks its version: the fixed cost
    /// of every call (used by benchmarks and diagnostics).
    pub fn ping(&self) -> Result<String, PluginError> {
        self.call(|store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_engine_version(store)
        })
    }

    /// Runs one analysis in a fresh, bounded instance. Blocking: call it
    /// from `spawn_blocking` after [`PluginRuntime::acquire`].
    pub fn analyse(
        &self,
        series: &Series,
        params: AnalysisParams,
    ) -> Result<Result<Analysis, EngineError>, PluginError> {
        let input = PriceSeries {
            dates: series.dates.clone(),
            closes: series.closes.clone(),
        };
        self.call(|store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_analyse(store, &input, params)
        })
    }

    /// The final state only (no per-row series): grading and verdicts.
    /// Blocking, like [`SegmentationPlugin::analyse`].
    pub fn analyse_state(
        &self,
        series: &Series,
        params: AnalysisParams,
    ) -> Result<Result<StateSummary, EngineError>, PluginError> {
        let input = PriceSeries {
            dates: series.dates.clone(),
            closes: series.closes.clone(),
        };
        self.call(|store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_analyse_state(store, &input, params)
        })
    }

    /// A reusable instance for many calls in a row (the grading job): one
    /// instantiation, a fresh deadline per call, and a fresh instance after
    /// any failure.
    pub fn session(self: &Arc<Self>) -> SegmentationSession {
        SegmentationSession {
            plugin: self.clone(),
            live: None,
        }
    }

    fn call<R>(
        &self,
        f: impl FnOnce(&mut wasmtime::Store<CallState>, &Segmentation) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        let mut store = self.runtime.store(self.label.clone());
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| self.runtime.instantiate_failed(&store, &self.label, e))?;
        f(&mut store, &bindings).map_err(|e| self.runtime.classify(&store, &self.label, e))
    }
}

/// See [`SegmentationPlugin::session`]. `Send`, so it can move into
/// `spawn_blocking` and back.
pub struct SegmentationSession {
    plugin: Arc<SegmentationPlugin>,
    live: Option<(wasmtime::Store<CallState>, Segmentation)>,
}

impl SegmentationSession {
    /// The plugin this session runs.
    pub fn plugin(&self) -> &Arc<SegmentationPlugin> {
        &self.plugin
    }

    /// [`SegmentationPlugin::analyse_state`] on the session's instance.
    pub fn analyse_state(
        &mut self,
        series: &Series,
        params: AnalysisParams,
    ) -> Result<Result<StateSummary, EngineError>, PluginError> {
        let input = PriceSeries {
            dates: series.dates.clone(),
            closes: series.closes.clone(),
        };
        self.call(None, |store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_analyse_state(store, &input, params)
        })
    }

    /// `engine.walk-forward` on the session's instance, within `budget`
    /// (at most the runtime's call timeout): the point-in-time signals of
    /// every row, for backtests.
    pub fn walk_forward(
        &mut self,
        series: &Series,
        params: AnalysisParams,
        budget: Option<std::time::Duration>,
    ) -> Result<Result<WalkForwardSeries, EngineError>, PluginError> {
        let input = PriceSeries {
            dates: series.dates.clone(),
            closes: series.closes.clone(),
        };
        self.call(budget, |store, bindings| {
            bindings
                .forecast_plugins_engine()
                .call_walk_forward(store, &input, params)
        })
    }

    fn call<R>(
        &mut self,
        budget: Option<std::time::Duration>,
        f: impl FnOnce(&mut wasmtime::Store<CallState>, &Segmentation) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        let plugin = &self.plugin;
        if self.live.is_none() {
            let mut store = plugin.runtime.store(plugin.label.clone());
            let bindings = plugin
                .pre
                .instantiate(&mut store)
                .map_err(|e| plugin.runtime.instantiate_failed(&store, &plugin.label, e))?;
            self.live = Some((store, bindings));
        }
        let (store, bindings) = self.live.as_mut().expect("instantiated above");
        match budget {
            Some(budget) => plugin.runtime.set_deadline(store, budget),
            None => plugin.runtime.reset_deadline(store),
        }
        match f(&mut *store, bindings) {
            Ok(answer) => Ok(answer),
            Err(e) => {
                let err = plugin.runtime.classify(store, &plugin.label, e);
                // A trapped instance is never used again.
                self.live = None;
                Err(err)
            }
        }
    }
}
