//! The components embedded in the binary (`components/manifest.txt`):
//! registered at first start and activated where nothing else is.

use std::sync::Arc;

use forecast_domain::PluginKind;
use forecast_plugins::strategy::UNNAMED;
use forecast_plugins::{builtin, PluginRuntime, StrategyPlugin};
use forecast_store::{AddOutcome, PluginRecord, PluginRegistry};

use super::kinds::slot;
use super::loading::{load, Loaded};
use super::Error;

/// Who registers the built-in components.
pub const BUILTIN: &str = "builtin";

/// The built-in components of `components/manifest.txt`, as (kind, name,
/// bytes): strategies are named by the component itself.
pub fn builtins() -> Vec<(PluginKind, Option<&'static str>, &'static [u8])> {
    builtin::builtins()
        .map(|c| {
            let name = (c.kind != PluginKind::Strategy).then_some("default");
            (c.kind, name, c.bytes)
        })
        .collect()
}

/// Registers the binary's built-in components as versions (a rebuilt
/// component whose version did not change gets `+<sha256 prefix>` build
/// metadata) and activates them where nothing is active, or where the
/// active version is an older built-in. An operator's own activation is
/// never overridden. Returns the loaded built-ins.
pub async fn ensure_builtins(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
) -> Result<Vec<(String, String, Loaded)>, Error> {
    let active = db.active_plugins().await?;
    let mut out = Vec::new();
    for (kind, name, bytes) in builtins() {
        if bytes.is_empty() {
            return Err(Error::Refused(format!(
                "this binary was built without its {kind} component: run `make components`, then rebuild"
            )));
        }
        let runtime2 = runtime.clone();
        let loaded = tokio::task::spawn_blocking(move || match name {
            Some(name) => load(&runtime2, kind, name, bytes, None),
            // Strategies are named by the component itself.
            None => StrategyPlugin::load(runtime2, UNNAMED, bytes)
                .map(|p| Loaded::Strategy(Arc::new(p)))
                .map_err(|e| Error::Refused(format!("built-in strategy: {e}"))),
        })
        .await
        .map_err(|e| Error::Refused(format!("loading built-ins failed: {e}")))??;
        let name = match (&loaded, name) {
            (Loaded::Strategy(p), _) => p.info().name.clone(),
            (_, Some(n)) => n.to_string(),
            (_, None) => unreachable!("segmentation and scorer built-ins are named"),
        };
        let mut version = loaded.version().to_string();
        let record = |version: &str| PluginRecord {
            kind,
            name: name.clone(),
            version: version.into(),
            sha256: loaded.sha256().into(),
            size: bytes.len() as i64,
            builtin: true,
            added_by: BUILTIN.into(),
            added_at: chrono::Utc::now().timestamp(),
        };
        if let AddOutcome::Conflict(_) = db.add_plugin(&record(&version), bytes).await? {
            version = format!("{version}+{}", &loaded.sha256()[..12]);
            db.add_plugin(&record(&version), bytes).await?;
        }
        let slot = slot(kind, &name);
        let replace = match active.iter().find(|a| a.slot == slot) {
            None => true,
            Some(a) => a.activated_by == BUILTIN && !(a.name == name && a.version == version),
        };
        if replace {
            db.activate_plugin(
                &slot,
                kind,
                &name,
                &version,
                BUILTIN,
                chrono::Utc::now().timestamp(),
            )
            .await?;
        }
        out.push((name, version, loaded));
    }
    Ok(out)
}
