//! The `scorer` world: grades from analysis states. The host never computes
//! a grade itself; it only moves states in and grades out.

use std::sync::Arc;

use wasmtime::component::HasSelf;

use super::{load_error, prelink, sha256_hex, CallState, PluginError, PluginInfo, PluginRuntime};

// The shared interfaces are the segmentation world's types, so `CallState`
// implements `host-log` once (in `segmentation.rs`).
wasmtime::component::bindgen!({
    path: "../../wit",
    world: "scorer",
    with: {
        "forecast:plugins/host-log": super::segmentation::forecast::plugins::host_log,
    },
});

pub use exports::forecast::plugins::scoring::{Grade, ScoreInput};

/// A loaded, pre-linked scorer version.
pub struct ScorerPlugin {
    info: PluginInfo,
    label: Arc<str>,
    pre: ScorerPre<CallState>,
    runtime: Arc<PluginRuntime>,
}

impl ScorerPlugin {
    /// Compiles and links `bytes` as the scorer `name`; the version is the
    /// one the component reports (`scorer-version`).
    pub fn load(
        runtime: Arc<PluginRuntime>,
        name: &str,
        bytes: &[u8],
    ) -> Result<Self, PluginError> {
        let provisional = format!("scorer/{name}");
        let pre = prelink(&runtime, &provisional, bytes, |linker| {
            Scorer::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
        })?;
        let pre = ScorerPre::new(pre).map_err(load_error(&provisional))?;
        let mut plugin = ScorerPlugin {
            info: PluginInfo {
                kind: "scorer".into(),
                name: name.into(),
                version: "unknown".into(),
                sha256: sha256_hex(bytes),
            },
            label: Arc::from(provisional.as_str()),
            pre,
            runtime,
        };
        let version =
            plugin.call(|store, b| b.forecast_plugins_scoring().call_scorer_version(store))?;
        plugin.info.version = version;
        plugin.label = Arc::from(plugin.info.label().as_str());
        Ok(plugin)
    }

    /// Who this is.
    pub fn info(&self) -> &PluginInfo {
        &self.info
    }

    /// Grades `inputs` in a fresh, bounded instance (blocking). A scorer
    /// that answers a different number of grades, or a score outside
    /// [0, 100], breaks its contract and is reported as failed.
    pub fn score(&self, inputs: &[ScoreInput]) -> Result<Vec<Grade>, PluginError> {
        let grades =
            self.call(|store, b| b.forecast_plugins_scoring().call_score(store, inputs))?;
        let broken = |message: String| PluginError::Trap {
            plugin: self.label.to_string(),
            message,
        };
        if grades.len() != inputs.len() {
            return Err(broken(format!(
                "answered {} grades for {} inputs",
                grades.len(),
                inputs.len()
            )));
        }
        if let Some(g) = grades.iter().find(|g| !(0.0..=100.0).contains(&g.score)) {
            return Err(broken(format!("score {} is outside 0..=100", g.score)));
        }
        Ok(grades)
    }

    fn call<R>(
        &self,
        f: impl FnOnce(&mut wasmtime::Store<CallState>, &Scorer) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        let mut store = self.runtime.store(self.label.clone());
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| self.runtime.instantiate_failed(&store, &self.label, e))?;
        f(&mut store, &bindings).map_err(|e| self.runtime.classify(&store, &self.label, e))
    }
}
