//! Application state shared by every request, and the server's life cycle.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use anyhow::Context;
use tokio::net::TcpListener;

use crate::backtest::SignalCache;
use crate::config::Config;
use crate::metadata::{CatalogProvider, MetadataProvider};
use crate::plugins::{
    builtin, PluginInfo, PluginRuntime, ScorerPlugin, SegmentationPlugin, StrategyPlugin,
};
use crate::store::{self, Database};

/// The active plugin versions. Each request clones the `Arc` of the
/// version it starts with, so a swap never affects requests in flight.
pub struct Plugins {
    runtime: Arc<PluginRuntime>,
    segmentation: RwLock<Arc<SegmentationPlugin>>,
    scorer: RwLock<Arc<ScorerPlugin>>,
    strategies: RwLock<BTreeMap<String, Arc<StrategyPlugin>>>,
}

impl Plugins {
    /// Loads the configured (or built-in) components.
    pub fn load(config: &Config) -> anyhow::Result<Self> {
        let runtime = Arc::new(PluginRuntime::new(config.runtime)?);
        let segmentation = match &config.segmentation_wasm {
            Some(path) => {
                let bytes =
                    std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
                let name = path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("custom");
                SegmentationPlugin::load(runtime.clone(), name, &bytes)?
            }
            None => SegmentationPlugin::load(runtime.clone(), "default", builtin::SEGMENTATION)?,
        };
        let scorer = ScorerPlugin::load(runtime.clone(), "default", builtin::SCORER)?;
        for info in [segmentation.info(), scorer.info()] {
            tracing::info!(plugin = %info.label(), sha256 = %info.sha256, "plugin loaded");
        }
        let mut strategies = BTreeMap::new();
        for bytes in builtin::STRATEGIES {
            let plugin = StrategyPlugin::load(runtime.clone(), bytes)?;
            strategies.insert(plugin.info().name.clone(), Arc::new(plugin));
        }
        if let Some(dir) = &config.plugin_dir {
            for plugin in load_strategy_dir(&runtime, dir)? {
                let name = plugin.info().name.clone();
                if let Some(existing) = strategies.get(&name) {
                    anyhow::bail!(
                        "{}: strategy '{name}' is already provided by {}; rename the plugin",
                        dir.display(),
                        existing.info().label()
                    );
                }
                strategies.insert(name, Arc::new(plugin));
            }
        }
        for plugin in strategies.values() {
            let info = plugin.info();
            tracing::info!(plugin = %info.label(), sha256 = %info.sha256, "plugin loaded");
        }
        Ok(Plugins {
            runtime,
            segmentation: RwLock::new(Arc::new(segmentation)),
            scorer: RwLock::new(Arc::new(scorer)),
            strategies: RwLock::new(strategies),
        })
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
        active.extend(self.strategies().iter().map(|s| s.info().clone()));
        active
    }
}

/// Loads every `*.wasm` file of `dir` as a strategy component, in file name
/// order. A file that is not a valid strategy stops the start with its name:
/// a plugin folder is configuration, and half of it is not a safe default.
pub fn load_strategy_dir(
    runtime: &Arc<PluginRuntime>,
    dir: &Path,
) -> anyhow::Result<Vec<StrategyPlugin>> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("FORECAST_PLUGIN_DIR {}: cannot read it", dir.display()))?;
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wasm"))
        .collect();
    files.sort();
    let mut out: Vec<StrategyPlugin> = Vec::new();
    for path in files {
        let bytes = std::fs::read(&path).with_context(|| format!("read {}", path.display()))?;
        let plugin = StrategyPlugin::load(runtime.clone(), &bytes)
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

/// Shared state handed to every handler.
#[derive(Clone)]
pub struct AppState {
    /// The store.
    pub db: Arc<dyn Database>,
    /// Active plugins.
    pub plugins: Arc<Plugins>,
    /// Where asset metadata comes from.
    pub metadata: Arc<dyn MetadataProvider>,
    /// The configuration the server started with.
    pub config: Arc<Config>,
    /// Start time, for uptime.
    pub started: Instant,
    /// The origin cookie-authenticated state changes must come from.
    pub origin: Arc<str>,
    /// Whether the session cookie is `Secure`.
    pub cookie_secure: bool,
    /// Walk-forward signals of recent backtests.
    pub signals: Arc<SignalCache>,
}

/// The demo account created on a fresh database, printed once by `serve`.
#[derive(Debug, Clone)]
pub struct DemoAccount {
    /// Login e-mail.
    pub email: String,
    /// Login password.
    pub password: String,
    /// A Premium API key.
    pub key: String,
}

/// E-mail of the demo account.
pub const DEMO_EMAIL: &str = "demo@forecast.local";

impl AppState {
    /// Opens the store (loading the demo universe and creating the demo
    /// account in an empty one) and loads the plugins. `bound` is the
    /// listening address, the default web origin.
    pub async fn build(
        config: Config,
        bound: std::net::SocketAddr,
    ) -> anyhow::Result<(Self, Option<DemoAccount>)> {
        let db = store::connect(&config.database_url)
            .await
            .with_context(|| format!("open database {}", store::redact(&config.database_url)))?;
        if !crate::demo::is_loaded(db.as_ref()).await? && db.counts().await?.assets == 0 {
            tracing::info!("empty database: loading the demo universe");
            let started = Instant::now();
            let summary = crate::demo::load(db.as_ref(), &mut |done, total| {
                tracing::info!(done, total, "loading demo universe");
            })
            .await?;
            tracing::info!(
                ?summary,
                seconds = started.elapsed().as_secs_f64(),
                "demo universe loaded"
            );
        }
        let demo = ensure_demo_account(db.as_ref()).await?;
        let plugins = Arc::new(Plugins::load(&config)?);
        let origin = config.resolved_origin(bound);
        let cookie_secure = config.resolved_cookie_secure(&origin);
        let signals = Arc::new(SignalCache::new(config.signal_cache_bytes));
        Ok((
            AppState {
                db,
                plugins,
                metadata: Arc::new(CatalogProvider),
                config: Arc::new(config),
                started: Instant::now(),
                origin: Arc::from(origin.as_str()),
                cookie_secure,
                signals,
            },
            demo,
        ))
    }
}

/// Creates the demo Premium account and one key the first time a database
/// is served; `None` afterwards (the key cannot be shown again).
pub async fn ensure_demo_account(db: &dyn Database) -> anyhow::Result<Option<DemoAccount>> {
    const SETTING: &str = "demo_account_created";
    if db.setting(SETTING).await?.is_some() || db.user_by_email(DEMO_EMAIL).await?.is_some() {
        return Ok(None);
    }
    let password = crate::auth::random_password();
    let user = crate::auth::create_user(
        db,
        DEMO_EMAIL,
        password.clone(),
        crate::domain::Tier::Premium,
    )
    .await?;
    let key = crate::auth::new_api_key();
    db.create_api_key(
        &user.id,
        "demo",
        &key.hash,
        &key.prefix,
        crate::auth::MAX_ACTIVE_KEYS,
        chrono::Utc::now().timestamp(),
    )
    .await?;
    db.set_setting(SETTING, "1").await?;
    Ok(Some(DemoAccount {
        email: user.email,
        password,
        key: key.key,
    }))
}

impl AppState {}

/// Serves `state` on `listener` until `shutdown` resolves, then drains
/// in-flight requests.
pub async fn serve(
    state: AppState,
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let app = crate::http::router(state);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
        .context("server error")
}
