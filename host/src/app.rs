//! Application state shared by every request, and the server's life cycle.

use std::sync::{Arc, RwLock};
use std::time::Instant;

use anyhow::Context;
use tokio::net::TcpListener;

use crate::config::Config;
use crate::metadata::{CatalogProvider, MetadataProvider};
use crate::plugins::{builtin, PluginInfo, PluginRuntime, SegmentationPlugin};
use crate::store::{self, Database};

/// The active plugin versions. Each request clones the `Arc` of the
/// version it starts with, so a swap never affects requests in flight.
pub struct Plugins {
    runtime: Arc<PluginRuntime>,
    segmentation: RwLock<Arc<SegmentationPlugin>>,
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
        tracing::info!(plugin = %segmentation.info().label(), sha256 = %segmentation.info().sha256, "segmentation engine loaded");
        Ok(Plugins {
            runtime,
            segmentation: RwLock::new(Arc::new(segmentation)),
        })
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

    /// Every active plugin version, for diagnostics.
    pub fn active(&self) -> Vec<PluginInfo> {
        vec![self.segmentation().info().clone()]
    }
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
}

impl AppState {
    /// Opens the store (loading the demo universe into an empty one) and
    /// loads the plugins.
    pub async fn build(config: Config) -> anyhow::Result<Self> {
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
        let plugins = Arc::new(Plugins::load(&config)?);
        Ok(AppState {
            db,
            plugins,
            metadata: Arc::new(CatalogProvider),
            config: Arc::new(config),
            started: Instant::now(),
        })
    }
}

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
