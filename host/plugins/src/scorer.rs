//! The `scorer` world: grades from analysis states. The host never computes
//! a grade itself; it only moves states in and grades out.

use forecast_domain::PluginKind;
use wasmtime::component::{HasSelf, InstancePre, Linker};
use wasmtime::Store;

use crate::plugin::{Identity, Plugin, World};
use crate::runtime::{CallState, Permit};
use crate::PluginError;

// The shared interfaces are the segmentation world's types, so `CallState`
// implements `host-log` once (in `segmentation.rs`).
wasmtime::component::bindgen!({
    path: "../../wit",
    world: "scorer",
    with: {
        "forecast:plugins/host-log": crate::segmentation::forecast::plugins::host_log,
    },
});

pub use exports::forecast::plugins::scoring::{Grade, ScoreInput};

/// The `scorer` world.
pub struct ScorerWorld;

impl World for ScorerWorld {
    const KIND: PluginKind = PluginKind::Scorer;
    type Bindings = Scorer;
    type Pre = ScorerPre<CallState>;
    type Ext = ();

    fn link(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
        Scorer::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
    }

    fn pre(pre: InstancePre<CallState>) -> wasmtime::Result<Self::Pre> {
        ScorerPre::new(pre)
    }

    fn instantiate(pre: &Self::Pre, store: &mut Store<CallState>) -> wasmtime::Result<Scorer> {
        pre.instantiate(store)
    }

    /// The version is `scorer-version`'s; the name is the registry's.
    fn identify(
        store: &mut Store<CallState>,
        bindings: &Scorer,
    ) -> wasmtime::Result<Result<Identity, String>> {
        let version = bindings
            .forecast_plugins_scoring()
            .call_scorer_version(store)?;
        Ok(Ok(Identity {
            name: None,
            version,
            description: String::new(),
        }))
    }
}

/// A loaded, pre-linked scorer version.
pub type ScorerPlugin = Plugin<ScorerWorld>;

impl Plugin<ScorerWorld> {
    /// Grades `inputs` in a fresh, bounded instance (blocking). A scorer
    /// that answers a different number of grades, or a score outside
    /// [0, 100], breaks its contract and is reported as failed.
    pub fn score(&self, permit: &Permit, inputs: &[ScoreInput]) -> Result<Vec<Grade>, PluginError> {
        let _call = guest_span!("score", self.label()).entered();
        let grades = self.call(permit, |store, b| {
            b.forecast_plugins_scoring().call_score(store, inputs)
        })?;
        if grades.len() != inputs.len() {
            return Err(self.broken(format!(
                "answered {} grades for {} inputs",
                grades.len(),
                inputs.len()
            )));
        }
        if let Some(g) = grades.iter().find(|g| !(0.0..=100.0).contains(&g.score)) {
            return Err(self.broken(format!("score {} is outside 0..=100", g.score)));
        }
        Ok(grades)
    }
}
