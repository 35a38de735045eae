//! The life of a version: added (type-checked), activated (after its
//! self-tests), rolled back, shadowed; and the listing of them all.

use std::sync::Arc;

use forecast_api::admin::Listed;
use forecast_domain::PluginKind;
use forecast_plugins::strategy::valid_name;
use forecast_plugins::{sha256_hex, PluginRuntime};
use forecast_store::{ActivationRecord, AddOutcome, PluginRecord, PluginRegistry, ShadowConfig};

use super::builtins::BUILTIN;
use super::kinds::{slot, valid_version, SHADOW_KINDS};
use super::loading::{blocking_load, load_checked};
use super::Error;

/// Largest component accepted.
pub const MAX_COMPONENT_BYTES: usize = 64 << 20;

/// Adds a version (type-checked; its reported version must be `version`).
#[tracing::instrument(
    name = "plugin_add",
    skip_all,
    fields(plugin = %format_args!("{kind}/{name}@{version}"), by = %by)
)]
pub async fn add(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    kind: PluginKind,
    name: &str,
    version: &str,
    bytes: Vec<u8>,
    by: &str,
) -> Result<PluginRecord, Error> {
    if !valid_name(name) {
        return Err(Error::Invalid(format!(
            "name '{name}' must be 1-64 lower-case letters, digits, '-' or '_'"
        )));
    }
    if !valid_version(version) {
        return Err(Error::Invalid(format!(
            "version '{version}' is not a semantic version (MAJOR.MINOR.PATCH[-pre][+build])"
        )));
    }
    if bytes.len() > MAX_COMPONENT_BYTES {
        return Err(Error::Invalid(format!(
            "the component has {} bytes; at most {MAX_COMPONENT_BYTES} are accepted",
            bytes.len()
        )));
    }
    let loaded = blocking_load(runtime, kind, name, bytes.clone()).await?;
    let reported = loaded.version().split('+').next().unwrap_or("");
    if reported != version.split('+').next().unwrap_or("") {
        return Err(Error::Refused(format!(
            "the component reports version {}, not {version}",
            loaded.version()
        )));
    }
    let record = PluginRecord {
        kind,
        name: name.into(),
        version: version.into(),
        sha256: sha256_hex(&bytes),
        size: bytes.len() as i64,
        builtin: by == BUILTIN,
        added_by: by.into(),
        added_at: chrono::Utc::now().timestamp(),
    };
    match db.add_plugin(&record, &bytes).await? {
        AddOutcome::Added | AddOutcome::AlreadyPresent => Ok(record),
        AddOutcome::Conflict(sha) => Err(Error::Conflict(format!(
            "{kind}/{name}@{version} is already registered with other bytes (sha256 {sha}); \
             give the new build another version"
        ))),
    }
}

/// Activates a registered version after its checks pass. Activating the
/// version already active changes nothing.
#[tracing::instrument(
    name = "plugin_activate",
    skip_all,
    fields(plugin = %format_args!("{kind}/{name}@{version}"), by = %by)
)]
pub async fn activate(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    kind: PluginKind,
    name: &str,
    version: &str,
    by: &str,
) -> Result<ActivationRecord, Error> {
    let slot = slot(kind, name);
    if let Some(current) = db
        .active_plugins()
        .await?
        .into_iter()
        .find(|a| a.slot == slot)
    {
        if current.name == name && current.version == version {
            return Ok(current);
        }
    }
    load_checked(db, runtime, kind, name, version).await?;
    let now = chrono::Utc::now().timestamp();
    let activation = db
        .activate_plugin(&slot, kind, name, version, by, now)
        .await?;
    // Promoting the shadowed candidate ends its shadow run.
    let promoted = db
        .shadows()
        .await?
        .into_iter()
        .any(|s| s.kind == kind && s.name == name && s.version == version);
    if promoted {
        db.clear_shadow(kind).await?;
    }
    Ok(activation)
}

/// Returns `kind`'s slot (for strategies, `name`'s) to the version active
/// before the current one.
#[tracing::instrument(name = "plugin_rollback", skip_all, fields(slot = %slot(kind, name)))]
pub async fn rollback(
    db: &dyn PluginRegistry,
    kind: PluginKind,
    name: &str,
) -> Result<ActivationRecord, Error> {
    let slot = slot(kind, name);
    let current = db
        .active_plugins()
        .await?
        .into_iter()
        .find(|a| a.slot == slot)
        .ok_or_else(|| Error::NotFound(format!("nothing is active for {slot}")))?;
    if current.name != name {
        return Err(Error::Invalid(format!(
            "the active {kind} is {}/{}@{}, not '{name}'",
            current.kind, current.name, current.version
        )));
    }
    // Undo activations until another version is active: replicas starting
    // together may each have recorded the same built-in activation.
    loop {
        match db
            .rollback_plugin(&slot, chrono::Utc::now().timestamp())
            .await?
        {
            Some(a) if a.name == current.name && a.version == current.version => continue,
            Some(a) => return Ok(a),
            None => {
                return Err(Error::Conflict(format!(
                    "{slot} has no earlier version to roll back to ({}@{} is its only activation)",
                    current.name, current.version
                )))
            }
        }
    }
}

/// Starts a shadow run of a registered candidate on `sample` of live requests.
#[tracing::instrument(
    name = "shadow_start",
    skip_all,
    fields(plugin = %format_args!("{kind}/{name}@{version}"), sample = sample, by = %by)
)]
pub async fn start_shadow(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    kind: PluginKind,
    name: &str,
    version: &str,
    sample: f64,
    by: &str,
) -> Result<ShadowConfig, Error> {
    if !SHADOW_KINDS.contains(&kind) {
        let all: Vec<&str> = SHADOW_KINDS.iter().map(|k| k.as_str()).collect();
        return Err(Error::Invalid(format!(
            "shadow runs are supported for: {} (not {kind})",
            all.join(", ")
        )));
    }
    if !(sample > 0.0 && sample <= 1.0) {
        return Err(Error::Invalid(format!(
            "sample must be a share in (0, 1] (got {sample})"
        )));
    }
    let active = db
        .active_plugins()
        .await?
        .into_iter()
        .find(|a| a.slot == slot(kind, name));
    if active.is_some_and(|a| a.name == name && a.version == version) {
        return Err(Error::Conflict(format!(
            "{kind}/{name}@{version} is the active version; shadow a candidate"
        )));
    }
    load_checked(db, runtime, kind, name, version).await?;
    let config = ShadowConfig {
        kind,
        name: name.into(),
        version: version.into(),
        sample,
        started_by: by.into(),
        started_at: chrono::Utc::now().timestamp(),
    };
    db.set_shadow(&config).await?;
    Ok(config)
}

/// Stops `kind`'s shadow run.
#[tracing::instrument(name = "shadow_stop", skip_all, fields(kind = %kind))]
pub async fn stop_shadow(db: &dyn PluginRegistry, kind: PluginKind) -> Result<(), Error> {
    if db.clear_shadow(kind).await? {
        Ok(())
    } else {
        Err(Error::NotFound(format!("no shadow run for {kind}")))
    }
}

/// Every registered version with its state.
pub async fn list(db: &dyn PluginRegistry) -> Result<Vec<Listed>, Error> {
    let active = db.active_plugins().await?;
    let shadows = db.shadows().await?;
    Ok(db
        .list_plugins()
        .await?
        .into_iter()
        // Only the registry writes versions, so every stored kind parses;
        // one that does not is no plugin this binary could serve.
        .map(|r| (r.kind, r))
        .map(|(kind, r)| Listed {
            active: active
                .iter()
                .any(|a| a.kind == r.kind && a.name == r.name && a.version == r.version),
            shadow: shadows
                .iter()
                .any(|s| s.kind == r.kind && s.name == r.name && s.version == r.version),
            added_at: chrono::DateTime::from_timestamp(r.added_at, 0)
                .map(|t| t.to_rfc3339())
                .unwrap_or_default(),
            kind,
            name: r.name,
            version: r.version,
            sha256: r.sha256,
            size: r.size,
            builtin: r.builtin,
            added_by: r.added_by,
        })
        .collect())
}
