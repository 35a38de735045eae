//! The `matcher` world: the ticker matcher, the one plugin granted the
//! `llm` and `semantic` imports. Instances are kept warm with the catalog
//! loaded (building the index costs far more than a query); a trapped
//! instance is dropped.

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

pub use exports::forecast::plugins::catalog_priors::Prior;
pub use exports::forecast::plugins::matching::{Candidate, CatalogEntry};
pub use exports::forecast::plugins::mentions::Mention;
use exports::forecast::plugins::{catalog_priors, matching, mentions};

impl self::forecast::plugins::llm::Host for CallState {
    fn complete(&mut self, prompt: String) -> Option<String> {
        let client = self.llm.clone()?;
        // Bound what a guest can send out.
        let prompt: String = prompt.chars().take(8_000).collect();
        client.complete(&prompt)
    }
}

/// Texts a guest may ask `semantic.nearest` about in one call.
pub const MAX_SEMANTIC_TEXTS: usize = 8;
/// Characters of each text the model sees.
pub const MAX_SEMANTIC_CHARS: usize = 500;
/// Neighbours a guest may ask for per text.
pub const MAX_SEMANTIC_K: u32 = 50;

impl self::forecast::plugins::semantic::Host for CallState {
    fn nearest(
        &mut self,
        texts: Vec<String>,
        k: u32,
    ) -> Vec<Vec<self::forecast::plugins::semantic::Neighbour>> {
        let texts: Vec<String> = texts
            .into_iter()
            .take(MAX_SEMANTIC_TEXTS)
            .map(|t| t.chars().take(MAX_SEMANTIC_CHARS).collect())
            .collect();
        let Some(semantic) = self.semantic.clone() else {
            return vec![Vec::new(); texts.len()];
        };
        let k = k.min(MAX_SEMANTIC_K) as usize;
        let mut found = semantic.nearest(&texts, k);
        found.resize(texts.len(), Vec::new());
        found
            .into_iter()
            .map(|list| {
                list.into_iter()
                    .take(k)
                    .map(
                        |(entry, similarity)| self::forecast::plugins::semantic::Neighbour {
                            entry,
                            similarity,
                        },
                    )
                    .collect()
            })
            .collect()
    }
}

/// Meaning-based search over one catalog (the `semantic` import): for each
/// text, the `k` entries closest in meaning as (index into the catalog's
/// entries, cosine similarity), closest first. Implemented by the services
/// layer over the sentence-embedding model; blocking.
pub trait Semantic: Send + Sync {
    /// The neighbours of each of `texts`, in order.
    fn nearest(&self, texts: &[String], k: usize) -> Vec<Vec<(u32, f32)>>;
}

/// The active catalog as the matcher sees it, with a version that changes
/// whenever its content does.
pub struct Catalog {
    /// Content hash.
    pub version: u64,
    /// Entries, in the order `Candidate::entry` refers to.
    pub entries: Vec<CatalogEntry>,
    /// What the host knows about them beyond their text (prominence,
    /// ISINs), sent to matchers that export `catalog-priors` (WIT 1.8.0).
    pub priors: Vec<Prior>,
    /// Meaning-based search over exactly these entries, when the host has
    /// the model (the `semantic` import answers nothing otherwise).
    pub semantic: Option<Arc<dyn Semantic>>,
}

/// Most results a caller may ask for.
pub const MAX_LIMIT: u32 = 10;
/// Most mentions a matcher may answer (the WIT's promise).
pub const MAX_MENTIONS: usize = 12;

/// An idle instance with the catalog of version `catalog` loaded.
struct Warm {
    live: Instance<MatcherWorld>,
    catalog: u64,
}

/// A pre-linked matcher: `matching` always, `catalog-priors` and
/// `mentions` when the component exports them (built against WIT 1.8.0 or
/// later). Not the bindgen'd world type, which would refuse matchers of
/// earlier minors.
pub struct LinkedMatcher {
    pre: InstancePre<CallState>,
    matching: matching::GuestIndices,
    priors: Option<catalog_priors::GuestIndices>,
    mentions: Option<mentions::GuestIndices>,
}

/// The exports of one matcher instance.
pub struct MatcherExports {
    matching: matching::Guest,
    priors: Option<catalog_priors::Guest>,
    mentions: Option<mentions::Guest>,
}

impl MatcherExports {
    fn forecast_plugins_matching(&self) -> &matching::Guest {
        &self.matching
    }

    /// The `mentions` interface: an error naming the matcher's age when it
    /// has none (callers ask [`MatcherPlugin::has_mentions`] first).
    fn mentions(&self) -> wasmtime::Result<&mentions::Guest> {
        self.mentions.as_ref().ok_or_else(|| {
            wasmtime::format_err!("the matcher exports no `mentions` interface (WIT before 1.8.0)")
        })
    }
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
    type Bindings = MatcherExports;
    type Pre = LinkedMatcher;
    type Ext = MatcherExt;

    fn link(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
        Matcher::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
    }

    fn pre(pre: InstancePre<CallState>) -> wasmtime::Result<Self::Pre> {
        Ok(LinkedMatcher {
            matching: matching::GuestIndices::new(&pre)?,
            priors: catalog_priors::GuestIndices::new(&pre).ok(),
            mentions: mentions::GuestIndices::new(&pre).ok(),
            pre,
        })
    }

    fn instantiate(
        pre: &Self::Pre,
        store: &mut Store<CallState>,
    ) -> wasmtime::Result<MatcherExports> {
        let instance = pre.pre.instantiate(&mut *store)?;
        Ok(MatcherExports {
            matching: pre.matching.load(&mut *store, &instance)?,
            priors: match &pre.priors {
                Some(p) => Some(p.load(&mut *store, &instance)?),
                None => None,
            },
            mentions: match &pre.mentions {
                Some(m) => Some(m.load(&mut *store, &instance)?),
                None => None,
            },
        })
    }

    /// The version is `matcher-version`'s; the name is the registry's.
    fn identify(
        store: &mut Store<CallState>,
        bindings: &MatcherExports,
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

    /// Whether the matcher exports `mentions` (WIT 1.8.0 or later).
    pub fn has_mentions(&self) -> bool {
        self.pre().mentions.is_some()
    }

    /// Whether the matcher exports `catalog-priors` (WIT 1.8.0 or later).
    pub fn has_priors(&self) -> bool {
        self.pre().priors.is_some()
    }

    /// Runs `call` on a warm instance holding `catalog` (loading it, and
    /// its priors, first when the instance has another); a healthy
    /// instance goes back to the pool, a failed one is dropped.
    fn on_warm<R>(
        &self,
        permit: &Permit,
        catalog: &Catalog,
        call: impl FnOnce(&mut Store<CallState>, &MatcherExports) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
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
        // The semantic search answers over this catalog's entries only.
        warm.live.store.data_mut().semantic = catalog.semantic.clone();
        // A failed call drops `warm` here: a trapped instance is never
        // used again.
        if warm.catalog != catalog.version {
            let _load = guest_span!("load-catalog", self.label()).entered();
            self.call_on(permit, &mut warm.live, None, |store, b| {
                b.forecast_plugins_matching()
                    .call_load_catalog(&mut *store, &catalog.entries)?;
                match &b.priors {
                    Some(p) => p.call_load_priors(store, &catalog.priors),
                    None => Ok(()),
                }
            })?;
            warm.catalog = catalog.version;
        }
        let out = self.call_on(permit, &mut warm.live, None, call)?;
        // Healthy: keep the instance warm for the next request.
        let mut pool = self.ext.warm.lock().expect("poisoned");
        if pool.len() < WARM_SLOTS {
            pool.push(warm);
        }
        Ok(out)
    }

    /// Checks one list of candidates against the contract.
    fn check(&self, catalog: &Catalog, found: &[Candidate], limit: u32) -> Result<(), PluginError> {
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
        Ok(())
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
        let _call = guest_span!("find", self.label()).entered();
        let found = self.on_warm(permit, catalog, |store, b| {
            b.forecast_plugins_matching().call_find(store, text, limit)
        })?;
        self.check(catalog, &found, limit)?;
        Ok(found)
    }

    /// The assets `text` names, each with its best matches in `catalog`
    /// (`mentions.find-mentions`; blocking, like [`MatcherPlugin::find`]).
    /// A matcher without `mentions` (WIT before 1.8.0) answers one mention,
    /// the whole text, with its `find` answer. Answers outside the contract
    /// (more than [`MAX_MENTIONS`], or a mention's candidates as
    /// [`MatcherPlugin::find`] checks them) are a failure of the plugin.
    pub fn find_mentions(
        &self,
        permit: &Permit,
        catalog: &Catalog,
        text: &str,
        limit: u32,
    ) -> Result<Vec<Mention>, PluginError> {
        let limit = limit.min(MAX_LIMIT);
        if !self.has_mentions() {
            let candidates = self.find(permit, catalog, text, limit)?;
            return Ok(vec![Mention {
                text: text.trim().to_string(),
                candidates,
            }]);
        }
        let _call = guest_span!("find-mentions", self.label()).entered();
        let found = self.on_warm(permit, catalog, |store, b| {
            b.mentions()?.call_find_mentions(store, text, limit)
        })?;
        if found.len() > MAX_MENTIONS {
            return Err(self.broken(format!(
                "answered {} mentions (at most {MAX_MENTIONS})",
                found.len()
            )));
        }
        for m in &found {
            self.check(catalog, &m.candidates, limit)?;
        }
        Ok(found)
    }
}
