//! The `matcher` world: the ticker matcher, the one plugin granted the
//! `llm` import. Instances are kept warm with the catalog loaded (building
//! the index costs far more than a query); a trapped instance is dropped.

use std::sync::{Arc, Mutex};

use wasmtime::component::HasSelf;

use super::{load_error, prelink, sha256_hex, CallState, PluginError, PluginInfo, PluginRuntime};

// The shared interfaces are the segmentation world's types, so `CallState`
// implements `host-log` once (in `segmentation.rs`).
wasmtime::component::bindgen!({
    path: "../../wit",
    world: "matcher",
    with: {
        "forecast:plugins/host-log": super::segmentation::forecast::plugins::host_log,
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

struct Warm {
    store: wasmtime::Store<CallState>,
    bindings: Matcher,
    catalog: u64,
}

/// A loaded, pre-linked matcher version.
pub struct MatcherPlugin {
    info: PluginInfo,
    label: Arc<str>,
    pre: MatcherPre<CallState>,
    runtime: Arc<PluginRuntime>,
    llm: Option<Arc<crate::llm::LlmClient>>,
    warm: Mutex<Vec<Warm>>,
}

impl MatcherPlugin {
    /// Compiles and links `bytes` as the matcher `name` (version from
    /// `matcher-version`); `llm` is the model lent to it, if configured.
    pub fn load(
        runtime: Arc<PluginRuntime>,
        name: &str,
        bytes: &[u8],
        llm: Option<Arc<crate::llm::LlmClient>>,
    ) -> Result<Self, PluginError> {
        let provisional = format!("matcher/{name}");
        let pre = prelink(&runtime, &provisional, bytes, |linker| {
            Matcher::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
        })?;
        let pre = MatcherPre::new(pre).map_err(load_error(&provisional))?;
        let mut plugin = MatcherPlugin {
            info: PluginInfo {
                kind: "matcher".into(),
                name: name.into(),
                version: "unknown".into(),
                sha256: sha256_hex(bytes),
            },
            label: Arc::from(provisional.as_str()),
            pre,
            runtime,
            llm,
            warm: Mutex::new(Vec::new()),
        };
        let mut warm = plugin.instantiate()?;
        let version = warm
            .bindings
            .forecast_plugins_matching()
            .call_matcher_version(&mut warm.store)
            .map_err(|e| plugin.runtime.classify(&warm.store, &plugin.label, e))?;
        plugin.info.version = version;
        plugin.label = Arc::from(plugin.info.label().as_str());
        Ok(plugin)
    }

    /// Who this is.
    pub fn info(&self) -> &PluginInfo {
        &self.info
    }

    fn instantiate(&self) -> Result<Warm, PluginError> {
        let mut store = self.runtime.store(self.label.clone());
        store.data_mut().llm = self.llm.clone();
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| self.runtime.instantiate_failed(&store, &self.label, e))?;
        Ok(Warm {
            store,
            bindings,
            catalog: 0,
        })
    }

    /// The best matches for `text` in `catalog` (blocking: run it from
    /// `spawn_blocking` after a permit). Answers outside the contract
    /// (unknown entries, confidences outside [0, 1], more than `limit`,
    /// unsorted) are reported as a failure of the plugin.
    pub fn find(
        &self,
        catalog: &Catalog,
        text: &str,
        limit: u32,
    ) -> Result<Vec<Candidate>, PluginError> {
        let limit = limit.min(MAX_LIMIT);
        let reused = {
            let mut pool = self.warm.lock().expect("poisoned");
            let at = pool.iter().position(|w| w.catalog == catalog.version);
            at.map(|i| pool.swap_remove(i)).or_else(|| pool.pop())
        };
        let mut warm = match reused {
            Some(w) => w,
            None => self.instantiate()?,
        };
        self.runtime.reset_deadline(&mut warm.store);
        let fail = |w: &Warm, e: wasmtime::Error| self.runtime.classify(&w.store, &self.label, e);
        if warm.catalog != catalog.version {
            warm.bindings
                .forecast_plugins_matching()
                .call_load_catalog(&mut warm.store, &catalog.entries)
                .map_err(|e| fail(&warm, e))?;
            warm.catalog = catalog.version;
            self.runtime.reset_deadline(&mut warm.store);
        }
        let found = warm
            .bindings
            .forecast_plugins_matching()
            .call_find(&mut warm.store, text, limit)
            .map_err(|e| fail(&warm, e))?;
        let broken = |message: String| PluginError::Trap {
            plugin: self.label.to_string(),
            message,
        };
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
        let mut pool = self.warm.lock().expect("poisoned");
        if pool.len() < super::WARM_SLOTS {
            pool.push(warm);
        }
        Ok(found)
    }
}
