//! The components embedded in the binary (`components/manifest.txt`):
//! registered at first start; the built-ins are activated where nothing
//! else is, the kept ones never.

use std::sync::Arc;

use forecast_domain::{Clock, PluginKind};
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
    entries(builtin::builtins())
}

/// The kept components of `components/manifest.txt` (role `kept`, e.g. the
/// scorer of before 1.9.0), as [`builtins`] lists them: registered at first
/// start like the built-ins, never activated by it.
pub fn kept() -> Vec<(PluginKind, Option<&'static str>, &'static [u8])> {
    entries(builtin::kept())
}

fn entries(
    components: impl Iterator<Item = &'static builtin::Component>,
) -> Vec<(PluginKind, Option<&'static str>, &'static [u8])> {
    components
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
/// never overridden. Then registers the kept components the same way
/// without activating them (an operator may). Returns the loaded
/// built-ins (not the kept ones).
pub async fn ensure_builtins(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    clock: &dyn Clock,
) -> Result<Vec<(String, String, Loaded)>, Error> {
    let active = db.active_plugins().await?;
    let mut out = Vec::new();
    for (kind, name, bytes) in builtins() {
        let (name, version, loaded) = register(db, runtime, kind, name, bytes, clock).await?;
        let slot = slot(kind, &name);
        let replace = match active.iter().find(|a| a.slot == slot) {
            None => true,
            Some(a) => a.activated_by == BUILTIN && !(a.name == name && a.version == version),
        };
        if replace {
            db.activate_plugin(&slot, kind, &name, &version, BUILTIN, clock.timestamp())
                .await?;
        }
        out.push((name, version, loaded));
    }
    for (kind, name, bytes) in kept() {
        register(db, runtime, kind, name, bytes, clock).await?;
    }
    Ok(out)
}

/// Loads one embedded component and stores it as a version added by
/// [`BUILTIN`] (with `+<sha256 prefix>` when its version is taken by other
/// bytes): its name, the version stored and the loaded plugin.
async fn register(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    kind: PluginKind,
    name: Option<&'static str>,
    bytes: &'static [u8],
    clock: &dyn Clock,
) -> Result<(String, String, Loaded), Error> {
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
        added_at: clock.timestamp(),
    };
    if let AddOutcome::Conflict(_) = db.add_plugin(&record(&version), bytes).await? {
        version = format!("{version}+{}", &loaded.sha256()[..12]);
        db.add_plugin(&record(&version), bytes).await?;
    }
    Ok((name, version, loaded))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At first start the built-in scorer (2.1.0) is registered and active,
    /// and the kept `scorer_classic` (1.0.0) is registered beside it but
    /// not active, nor among the loaded built-ins; a second start changes
    /// nothing.
    #[tokio::test]
    async fn registry_kept_components_are_registered_but_never_activated() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("r.db").display());
        let db = forecast_store::connect(&url).await.unwrap();
        let runtime = Arc::new(PluginRuntime::new(Default::default()).unwrap());
        assert!(kept()
            .iter()
            .any(|(kind, name, _)| *kind == PluginKind::Scorer && *name == Some("default")));
        for _ in 0..2 {
            let loaded = ensure_builtins(db.as_ref(), &runtime, &forecast_domain::SystemClock)
                .await
                .unwrap();
            let scorers: Vec<&str> = loaded
                .iter()
                .filter(|(_, _, l)| matches!(l, Loaded::Scorer(_)))
                .map(|(_, version, _)| version.as_str())
                .collect();
            assert_eq!(scorers, ["2.1.0"]);
            let active = db.active_plugins().await.unwrap();
            let scorer: Vec<&str> = active
                .iter()
                .filter(|a| a.kind == PluginKind::Scorer)
                .map(|a| a.version.as_str())
                .collect();
            assert_eq!(scorer, ["2.1.0"]);
            let mut versions: Vec<(String, bool)> = db
                .list_plugins()
                .await
                .unwrap()
                .into_iter()
                .filter(|p| p.kind == PluginKind::Scorer && p.name == "default")
                .map(|p| (p.version, p.builtin))
                .collect();
            versions.sort();
            assert_eq!(
                versions,
                [("1.0.0".to_string(), true), ("2.1.0".to_string(), true)]
            );
        }
    }
}
