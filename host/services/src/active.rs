//! The active plugin versions of this server, following the registry in
//! the store: each request clones the `Arc` of the version it starts with.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::Context;

use crate::registry::{self, Loaded};
use forecast_domain::PluginKind;
use forecast_plugins::llm::{LlmClient, LlmConfig};
use forecast_plugins::strategy::UNNAMED;
use forecast_plugins::{
    MatcherPlugin, PluginInfo, PluginRuntime, RuntimeConfig, ScorerPlugin, SegmentationPlugin,
    StrategyPlugin,
};
use forecast_store::PluginRegistry;

/// What the plugin set is loaded with (the operator's configuration).
#[derive(Debug, Clone, Default)]
pub struct PluginsConfig {
    /// Limits of every plugin call.
    pub runtime: RuntimeConfig,
    /// The language model lent to the matcher, when configured.
    pub llm: Option<LlmConfig>,
    /// Serve this component as the segmentation engine instead of the
    /// registry's (`FORECAST_SEGMENTATION_WASM`).
    pub segmentation_wasm: Option<PathBuf>,
    /// A folder of strategy components loaded beside the registry's
    /// (`FORECAST_PLUGIN_DIR`).
    pub plugin_dir: Option<PathBuf>,
    /// Which signers the folder's bundles may have and whether bare
    /// components are allowed (`FORECAST_PLUGIN_TRUST`,
    /// `FORECAST_PLUGIN_UNSIGNED`).
    pub trust: forecast_bundle::TrustPolicy,
}

/// The active plugin versions. Each request clones the `Arc` of the
/// version it starts with, so a swap never affects requests in flight.
/// What is active comes from the registry in the store; [`Plugins::sync`]
/// follows it (every replica polls it, see [`Plugins::follow`]).
pub struct Plugins {
    runtime: Arc<PluginRuntime>,
    segmentation: RwLock<Arc<SegmentationPlugin>>,
    scorer: RwLock<Arc<ScorerPlugin>>,
    matcher: RwLock<Option<Arc<MatcherPlugin>>>,
    /// The language model lent to the matcher, when configured.
    llm: Option<Arc<LlmClient>>,
    strategies: RwLock<BTreeMap<String, Arc<StrategyPlugin>>>,
    /// Strategies of `FORECAST_PLUGIN_DIR`, outside the registry.
    local_strategies: BTreeMap<String, Arc<StrategyPlugin>>,
    /// The segmentation candidate of a shadow run and its sample share.
    shadow_segmentation: RwLock<Option<(Arc<SegmentationPlugin>, f64)>>,
    /// `FORECAST_SEGMENTATION_WASM` pins the engine (the registry's is ignored).
    pinned_segmentation: bool,
    /// Compiled versions by sha256, so a rollback never recompiles.
    compiled: Mutex<HashMap<String, Loaded>>,
    /// The store's plugins generation last applied.
    generation: AtomicI64,
    /// Woken when the engine or the scorer changed (the grading scheduler
    /// re-grades).
    pub changed: tokio::sync::Notify,
}

impl Plugins {
    /// Registers the built-in components in the store, then loads what the
    /// registry says is active (`FORECAST_SEGMENTATION_WASM` pins the
    /// engine instead) and the strategies of `FORECAST_PLUGIN_DIR`. The
    /// built-ins' registrations are dated by `clock`.
    pub async fn load(
        config: &PluginsConfig,
        db: &dyn PluginRegistry,
        clock: &dyn forecast_domain::Clock,
    ) -> anyhow::Result<Self> {
        let runtime = Arc::new(PluginRuntime::new(config.runtime)?);
        let builtins = registry::ensure_builtins(db, &runtime, clock)
            .await
            .context("register the built-in plugins")?;
        let mut compiled = HashMap::new();
        let (mut segmentation, mut scorer) = (None, None);
        for (_, _, loaded) in builtins {
            match &loaded {
                Loaded::Segmentation(p) => segmentation = Some(p.clone()),
                Loaded::Scorer(p) => scorer = Some(p.clone()),
                Loaded::Strategy(_) => {}
                // Loaded again with the language model by `compiled`.
                Loaded::Matcher(_) => continue,
            }
            compiled.insert(loaded.sha256().to_string(), loaded);
        }
        let llm = match &config.llm {
            Some(c) => {
                tracing::info!(url = %c.url, model = %c.model, "language model lent to the matcher");
                Some(Arc::new(LlmClient::new(c.clone())?))
            }
            None => None,
        };
        let pinned_segmentation = config.segmentation_wasm.is_some();
        if let Some(path) = &config.segmentation_wasm {
            let bytes = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("custom");
            segmentation = Some(Arc::new(SegmentationPlugin::load(
                runtime.clone(),
                name,
                &bytes,
            )?));
            tracing::warn!(
                file = %path.display(),
                "FORECAST_SEGMENTATION_WASM pins the segmentation engine; registry activations of it are ignored"
            );
        }
        let mut local_strategies = BTreeMap::new();
        if let Some(dir) = &config.plugin_dir {
            for plugin in load_strategy_dir(&runtime, dir, &config.trust)? {
                local_strategies.insert(plugin.info().name.clone(), Arc::new(plugin));
            }
        }
        let plugins = Plugins {
            runtime,
            segmentation: RwLock::new(segmentation.expect("a built-in engine")),
            scorer: RwLock::new(scorer.expect("a built-in scorer")),
            matcher: RwLock::new(None),
            llm,
            strategies: RwLock::new(BTreeMap::new()),
            local_strategies,
            shadow_segmentation: RwLock::new(None),
            pinned_segmentation,
            compiled: Mutex::new(compiled),
            generation: AtomicI64::new(i64::MIN),
            changed: tokio::sync::Notify::new(),
        };
        plugins.sync(db).await?;
        for info in plugins.active() {
            tracing::info!(plugin = %info.label(), sha256 = %info.sha256, "plugin active");
        }
        Ok(plugins)
    }

    /// A stored version, compiled once per sha256.
    async fn compiled(
        &self,
        db: &dyn PluginRegistry,
        kind: PluginKind,
        name: &str,
        version: &str,
    ) -> anyhow::Result<Loaded> {
        let record = db
            .plugin(kind, name, version)
            .await?
            .with_context(|| format!("{kind}/{name}@{version} is active but not stored"))?;
        if let Some(l) = self.compiled.lock().expect("poisoned").get(&record.sha256) {
            return Ok(l.clone());
        }
        let bytes = db
            .plugin_wasm(kind, name, version)
            .await?
            .with_context(|| format!("{kind}/{name}@{version} has no bytes"))?;
        let (runtime, n) = (self.runtime.clone(), name.to_string());
        let llm = self.llm.clone();
        let loaded =
            tokio::task::spawn_blocking(move || registry::load(&runtime, kind, &n, &bytes, llm))
                .await??;
        self.compiled
            .lock()
            .expect("poisoned")
            .insert(record.sha256.clone(), loaded.clone());
        Ok(loaded)
    }

    /// Applies the registry's active versions and shadow runs when the
    /// store's plugins generation moved. Returns whether anything changed.
    /// A version that fails to load keeps the previous one serving (logged).
    pub async fn sync(&self, db: &dyn PluginRegistry) -> anyhow::Result<bool> {
        let generation = db.plugins_generation().await?;
        if self.generation.load(Ordering::Acquire) == generation {
            return Ok(false);
        }
        let mut engine_or_scorer = false;
        let mut strategies = self.local_strategies.clone();
        for a in db.active_plugins().await? {
            let loaded = match self.compiled(db, a.kind, &a.name, &a.version).await {
                Ok(l) => l,
                Err(e) => {
                    tracing::error!(error = %e, slot = %a.slot, "cannot load the active version; keeping the previous one");
                    continue;
                }
            };
            match loaded {
                Loaded::Segmentation(p) if !self.pinned_segmentation => {
                    let mut slot = self.segmentation.write().expect("poisoned");
                    if slot.info() != p.info() {
                        tracing::info!(from = %slot.info().label(), to = %p.info().label(), "segmentation engine swapped");
                        *slot = p;
                        engine_or_scorer = true;
                    }
                }
                Loaded::Segmentation(_) => {}
                Loaded::Scorer(p) => {
                    let mut slot = self.scorer.write().expect("poisoned");
                    if slot.info() != p.info() {
                        tracing::info!(from = %slot.info().label(), to = %p.info().label(), "scorer swapped");
                        *slot = p;
                        engine_or_scorer = true;
                    }
                }
                Loaded::Matcher(p) => {
                    let mut slot = self.matcher.write().expect("poisoned");
                    if slot.as_ref().map(|m| m.info()) != Some(p.info()) {
                        tracing::info!(to = %p.info().label(), "matcher active");
                        *slot = Some(p);
                    }
                }
                Loaded::Strategy(p) => {
                    let name = p.info().name.clone();
                    if let Some(local) = self.local_strategies.get(&name) {
                        anyhow::bail!(
                            "strategy '{name}' of FORECAST_PLUGIN_DIR ({}) is also a registered strategy; rename the plugin",
                            local.info().label()
                        );
                    }
                    strategies.insert(name, p);
                }
            }
        }
        *self.strategies.write().expect("poisoned") = strategies;
        let mut shadow = None;
        for s in db.shadows().await? {
            if s.kind == PluginKind::Segmentation {
                match self.compiled(db, s.kind, &s.name, &s.version).await {
                    Ok(Loaded::Segmentation(p)) => shadow = Some((p, s.sample)),
                    Ok(_) => {}
                    Err(e) => tracing::error!(error = %e, "cannot load the shadow candidate"),
                }
            }
        }
        *self.shadow_segmentation.write().expect("poisoned") = shadow;
        self.generation.store(generation, Ordering::Release);
        if engine_or_scorer {
            self.changed.notify_one();
        }
        Ok(true)
    }

    /// Polls the registry every `every` until the process ends, so every
    /// replica follows activations, rollbacks and shadow changes.
    pub async fn follow(self: Arc<Self>, db: Arc<dyn PluginRegistry>, every: std::time::Duration) {
        loop {
            tokio::time::sleep(every).await;
            if let Err(e) = self.sync(db.as_ref()).await {
                tracing::error!(error = %e, "plugin registry sync failed");
            }
        }
    }

    /// The active ticker matcher (none only if its version failed to load).
    pub fn matcher(&self) -> Option<Arc<MatcherPlugin>> {
        self.matcher.read().expect("poisoned").clone()
    }

    /// The shadow candidate for the segmentation engine and its sample share.
    pub fn shadow_segmentation(&self) -> Option<(Arc<SegmentationPlugin>, f64)> {
        self.shadow_segmentation.read().expect("poisoned").clone()
    }

    /// The strategy named `name`, if loaded.
    pub fn strategy(&self, name: &str) -> Option<Arc<StrategyPlugin>> {
        self.strategies
            .read()
            .expect("plugin lock poisoned")
            .get(name)
            .cloned()
    }

    /// Names of the loaded strategies, sorted.
    pub fn strategy_names(&self) -> Vec<String> {
        self.strategies
            .read()
            .expect("plugin lock poisoned")
            .keys()
            .cloned()
            .collect()
    }

    /// Every loaded strategy, by name.
    pub fn strategies(&self) -> Vec<Arc<StrategyPlugin>> {
        self.strategies
            .read()
            .expect("plugin lock poisoned")
            .values()
            .cloned()
            .collect()
    }

    /// The shared runtime, as the registry's checks take it.
    pub fn runtime_handle(&self) -> &Arc<PluginRuntime> {
        &self.runtime
    }

    /// The shared runtime (limits, concurrency permits).
    pub fn runtime(&self) -> &PluginRuntime {
        &self.runtime
    }

    /// The active segmentation engine.
    pub fn segmentation(&self) -> Arc<SegmentationPlugin> {
        self.segmentation
            .read()
            .expect("plugin lock poisoned")
            .clone()
    }

    /// The active scorer.
    pub fn scorer(&self) -> Arc<ScorerPlugin> {
        self.scorer.read().expect("plugin lock poisoned").clone()
    }

    /// Every active plugin version, for diagnostics.
    pub fn active(&self) -> Vec<PluginInfo> {
        let mut active = vec![
            self.segmentation().info().clone(),
            self.scorer().info().clone(),
        ];
        active.extend(self.matcher().map(|m| m.info().clone()));
        active.extend(self.strategies().iter().map(|s| s.info().clone()));
        active
    }
}

/// Loads every `*.wasm` component and `*.bundle` signed bundle of `dir` as
/// a strategy, in file name order, as `trust` allows (a bundle's signer
/// must be trusted; a bare component needs unsigned components allowed).
/// A file that is not a valid, allowed strategy stops the start with its
/// name: a plugin folder is configuration, and half of it is not a safe
/// default.
pub fn load_strategy_dir(
    runtime: &Arc<PluginRuntime>,
    dir: &Path,
    trust: &forecast_bundle::TrustPolicy,
) -> anyhow::Result<Vec<StrategyPlugin>> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("FORECAST_PLUGIN_DIR {}: cannot read it", dir.display()))?;
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wasm" || e == "bundle"))
        .collect();
    files.sort();
    let mut out: Vec<StrategyPlugin> = Vec::new();
    for path in files {
        let read = std::fs::read(&path).with_context(|| format!("read {}", path.display()))?;
        let bytes = if forecast_bundle::is_bundle(&read) {
            let opened = forecast_bundle::open(&read)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            trust
                .check_signed(&opened.signer)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            opened.component
        } else {
            trust
                .check_unsigned()
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            read
        };
        let plugin = StrategyPlugin::load(runtime.clone(), UNNAMED, &bytes)
            .with_context(|| format!("{}: not a loadable strategy component", path.display()))?;
        if let Some(twin) = out.iter().find(|p| p.info().name == plugin.info().name) {
            anyhow::bail!(
                "{}: strategy '{}' is already provided by {} in the same folder",
                path.display(),
                plugin.info().name,
                twin.info().label()
            );
        }
        out.push(plugin);
    }
    Ok(out)
}
