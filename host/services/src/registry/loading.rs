//! A component compiled and type-checked as its kind's world, through the
//! one generic loader of `forecast-plugins`, and a stored version loaded
//! and checked before it may serve.

use std::sync::Arc;

use forecast_domain::PluginKind;
use forecast_plugins::llm::LlmClient;
use forecast_plugins::{
    MatcherPlugin, PluginError, PluginInfo, PluginRuntime, ScorerPlugin, SegmentationPlugin,
    StrategyPlugin,
};
use forecast_store::PluginRegistry;

use super::kinds::label;
use super::{self_test, Error};

/// A compiled, type-checked plugin of some kind.
#[derive(Clone)]
pub enum Loaded {
    /// A segmentation engine.
    Segmentation(Arc<SegmentationPlugin>),
    /// A scorer.
    Scorer(Arc<ScorerPlugin>),
    /// A strategy.
    Strategy(Arc<StrategyPlugin>),
    /// A ticker matcher.
    Matcher(Arc<MatcherPlugin>),
}

impl Loaded {
    /// Who it is: kind, name, the version the component reports, sha256.
    pub fn info(&self) -> &PluginInfo {
        match self {
            Loaded::Segmentation(p) => p.info(),
            Loaded::Scorer(p) => p.info(),
            Loaded::Strategy(p) => p.info(),
            Loaded::Matcher(p) => p.info(),
        }
    }

    /// Its kind.
    pub fn kind(&self) -> PluginKind {
        self.info().kind
    }

    /// The version the component reports about itself.
    pub fn version(&self) -> &str {
        &self.info().version
    }

    /// Hex SHA-256 of its bytes.
    pub fn sha256(&self) -> &str {
        &self.info().sha256
    }
}

/// Compiles `bytes` and type-checks them against `kind`'s world (the
/// component's own version comes with it). Blocking (compilation). A
/// matcher gets `llm`, the language model lent to it (none for checks).
pub fn load(
    runtime: &Arc<PluginRuntime>,
    kind: PluginKind,
    name: &str,
    bytes: &[u8],
    llm: Option<Arc<LlmClient>>,
) -> Result<Loaded, Error> {
    let refused = |e: PluginError| {
        Error::Refused(format!(
            "the component is not a loadable {kind} plugin: {e}"
        ))
    };
    let runtime = runtime.clone();
    Ok(match kind {
        PluginKind::Segmentation => Loaded::Segmentation(Arc::new(
            SegmentationPlugin::load(runtime, name, bytes).map_err(refused)?,
        )),
        PluginKind::Scorer => Loaded::Scorer(Arc::new(
            ScorerPlugin::load(runtime, name, bytes).map_err(refused)?,
        )),
        PluginKind::Matcher => Loaded::Matcher(Arc::new(
            MatcherPlugin::load(runtime, name, bytes)
                .map_err(refused)?
                .lending(llm),
        )),
        PluginKind::Strategy => {
            let plugin = StrategyPlugin::load(runtime, name, bytes).map_err(refused)?;
            // A strategy names itself; the registry's name must be that one.
            if plugin.info().name != name {
                return Err(Error::Refused(format!(
                    "the strategy calls itself '{}', not '{name}'",
                    plugin.info().name
                )));
            }
            Loaded::Strategy(Arc::new(plugin))
        }
    })
}

/// [`load`] off the async workers.
pub(crate) async fn blocking_load(
    runtime: &Arc<PluginRuntime>,
    kind: PluginKind,
    name: &str,
    bytes: Vec<u8>,
) -> Result<Loaded, Error> {
    let (runtime, name) = (runtime.clone(), name.to_string());
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || span.in_scope(|| load(&runtime, kind, &name, &bytes, None)))
        .await
        .map_err(|e| Error::Refused(format!("loading failed: {e}")))?
}

/// Loads a stored version and runs its kind's checks (blocking work off
/// the async workers, the checks under one call permit).
pub async fn load_checked(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    kind: PluginKind,
    name: &str,
    version: &str,
) -> Result<Loaded, Error> {
    let bytes = db
        .plugin_wasm(kind, name, version)
        .await?
        .ok_or_else(|| not_found(kind, name, version))?;
    let loaded = blocking_load(runtime, kind, name, bytes).await?;
    let checked = loaded.clone();
    let permit = runtime.acquire().await;
    // The checks' guest calls nest under the registry action's span.
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || span.in_scope(|| self_test(&checked, &permit)))
        .await
        .map_err(|e| Error::Refused(format!("self-test crashed: {e}")))??;
    Ok(loaded)
}

/// A version that is not in the store.
pub(crate) fn not_found(kind: PluginKind, name: &str, version: &str) -> Error {
    Error::NotFound(format!(
        "{} is not registered (add it first)",
        label(kind, name, version)
    ))
}
