//! The `matcher` world: the ticker matcher, the one plugin granted the
//! `llm` import. Instances are kept warm with the catalog loaded (building
//! the index costs far more than a query); a trapped instance is dropped.

use std::sync::{Arc, Mutex};

use forecast_domain::PluginKind;
use wasmtime::component::{HasSelf, InstancePre, Linker};
use wasmtime::Store;

use crate::llm::LlmClient;
use crate::plugin::{Identity, Instance, Plugin, World};
use crate::runtime::{CallState, Permit, WARM_SLOTS};
use crate::PluginError;

// The shared interfaces are the segmentation world's types, so `CallState`
// implements `host-log` once (in `segmentation.rs`).
wasmtime::component::bindgen!({
    path: "../../wit",
    world: "matcher",
    with: {
        "forecast:plugins/host-log": crate::segmentation::forecast::plugins::host_log,
    },
});

pub use exports::forecast::plugins::matching::{Candidate, CatalogEntry};

impl self::forecast::plugins::llm::Host for CallState {
    fn complete(&mut self, prompt: String) -> Option<String> {
        let client = self.llm.clone()?;
        // Bound what a guest can send out.
        let prompt: String = prompt.chars().take(8_000).collect();
        client.complete(&prompt)
    }
}

/// The active catalog as the matcher sees it, with a version that changes
/// whenever its content does.
pub struct Catalog {
    /// Content hash.
    pub version: u64,
    /// Entries, in the order `Candidate::entry` refers to.
    pub entries: Vec<CatalogEntry>,
}

/// Most results a caller may ask for.
pub const MAX_LIMIT: u32 = 10;

/// An idle instance with the catalog of version `catalog` loaded.
struct Warm {
    live: Instance<MatcherWorld>,
    catalog: u64,
}

/// What a loaded matcher keeps beside its component.
#[derive(Default)]
pub struct MatcherExt {
    /// The language model lent to its instances, if configured.
    llm: Option<Arc<LlmClient>>,
    /// Idle instances, at most [`WARM_SLOTS`].
    warm: Mutex<Vec<Warm>>,
}

/// The `matcher` world.
pub struct MatcherWorld;

impl World for MatcherWorld {
    const KIND: PluginKind = PluginKind::Matcher;
    type Bindings = Matcher;
    type Pre = MatcherPre<CallState>;
    type Ext = MatcherExt;

    fn link(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
        Matcher::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
    }

    fn pre(pre: InstancePre<CallState>) -> wasmtime::Result<Self::Pre> {
        MatcherPre::new(pre)
    }

    fn instantiate(pre: &Self::Pre, store: &mut Store<CallState>) -> wasmtime::Result<Matcher> {
        pre.instantiate(store)
    }

    /// The version is `matcher-version`'s; the name is the registry's.
    fn identify(
        store: &mut Store<CallState>,
        bindings: &Matcher,
    ) -> wasmtime::Result<Result<Identity, String>> {
        let version = bindings
            .forecast_plugins_matching()
            .call_matcher_version(store)?;
        Ok(Ok(Identity {
            name: None,
            version,
            description: String::new(),
        }))
    }

    fn prepare(ext: &MatcherExt, state: &mut CallState) {
        state.llm = ext.llm.clone();
    }
}

/// A loaded, pre-linked matcher version.
pub type MatcherPlugin = Plugin<MatcherWorld>;

impl Plugin<MatcherWorld> {
    /// Lends `llm`, the language model, to this matcher's instances (none
    /// for checks and benchmarks).
    pub fn lending(mut self, llm: Option<Arc<LlmClient>>) -> Self {
        self.ext.llm = llm;
        // Instances made before have no model; the pool starts afresh.
        self.ext.warm = Mutex::default();
        self
    }

    /// The best matches for `text` in `catalog` (blocking: run it from
    /// `spawn_blocking` after a permit). Answers outside the contract
    /// (unknown entries, confidences outside [0, 1], more than `limit`,
    /// unsorted) are reported as a failure of the plugin.
    pub fn find(
        &self,
        permit: &Permit,
        catalog: &Catalog,
        text: &str,
        limit: u32,
    ) -> Result<Vec<Candidate>, PluginError> {
        let limit = limit.min(MAX_LIMIT);
        let reused = {
            let mut pool = self.ext.warm.lock().expect("poisoned");
            let at = pool.iter().position(|w| w.catalog == catalog.version);
            at.map(|i| pool.swap_remove(i)).or_else(|| pool.pop())
        };
        let mut warm = match reused {
            Some(w) => w,
            None => Warm {
                live: self.fresh_instance(permit)?,
                catalog: 0,
            },
        };
        // A failed call drops `warm` here: a trapped instance is never
        // used again.
        if warm.catalog != catalog.version {
            self.call_on(permit, &mut warm.live, None, |store, b| {
                b.forecast_plugins_matching()
                    .call_load_catalog(store, &catalog.entries)
            })?;
            warm.catalog = catalog.version;
        }
        let found = self.call_on(permit, &mut warm.live, None, |store, b| {
            b.forecast_plugins_matching().call_find(store, text, limit)
        })?;
        let broken = |message: String| self.broken(message);
        if found.len() > limit as usize {
            return Err(broken(format!(
                "answered {} matches for a limit of {limit}",
                found.len()
            )));
        }
        for (i, c) in found.iter().enumerate() {
            if c.entry as usize >= catalog.entries.len() {
                return Err(broken(format!(
                    "answered unknown catalog entry {}",
                    c.entry
                )));
            }
            if !(0.0..=1.0).contains(&c.confidence) {
                return Err(broken(format!(
                    "confidence {} is outside [0, 1]",
                    c.confidence
                )));
            }
            if i > 0 && found[i - 1].confidence < c.confidence {
                return Err(broken("matches are not sorted by confidence".into()));
            }
        }
        // Healthy: keep the instance warm for the next request.
        let mut pool = self.ext.warm.lock().expect("poisoned");
        if pool.len() < WARM_SLOTS {
            pool.push(warm);
        }
        Ok(found)
    }
}
