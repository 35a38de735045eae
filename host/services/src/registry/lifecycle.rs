//! The life of a version: added (type-checked), activated (after its
//! self-tests), rolled back, shadowed; and the listing of them all.

use std::sync::Arc;

use forecast_api::admin::Listed;
use forecast_domain::{Clock, PluginKind};
use forecast_plugins::strategy::valid_name;
use forecast_plugins::{sha256_hex, PluginRuntime};
use forecast_store::{ActivationRecord, AddOutcome, PluginRecord, PluginRegistry, ShadowConfig};

use super::builtins::BUILTIN;
use super::kinds::{slot, valid_version, SHADOW_KINDS};
use super::loading::{blocking_load, load_checked, Loaded};
use super::Error;
use crate::models::{Model, Part};
use forecast_api::models::ModelComparison;
use forecast_store::Database;

/// Largest component accepted.
pub const MAX_COMPONENT_BYTES: usize = 64 << 20;

/// Adds a version (type-checked; its reported version must be `version`),
/// added at `clock`'s now.
#[tracing::instrument(
    name = "plugin_add",
    skip_all,
    fields(plugin = %format_args!("{kind}/{name}@{version}"), by = %by)
)]
#[allow(clippy::too_many_arguments)]
pub async fn add(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    kind: PluginKind,
    name: &str,
    version: &str,
    bytes: Vec<u8>,
    by: &str,
    clock: &dyn Clock,
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
        added_at: clock.timestamp(),
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
#[allow(clippy::too_many_arguments)]
pub async fn activate(
    db: &dyn Database,
    runtime: &Arc<PluginRuntime>,
    kind: PluginKind,
    name: &str,
    version: &str,
    by: &str,
    force: Option<&str>,
    clock: &dyn Clock,
) -> Result<ActivationRecord, Error> {
    let slot = slot(kind, name);
    let active = db.active_plugins().await?;
    let current = active.iter().find(|a| a.slot == slot);
    if let Some(current) = current {
        if current.name == name && current.version == version {
            return Ok(current.clone());
        }
    }
    let candidate = load_checked(db, runtime, kind, name, version).await?;
    if let Some(current) = current {
        if let Some(cmp) = gate(db, runtime, &active, current, &candidate).await? {
            if cmp.b_significantly_worse && force.is_none() {
                return Err(Error::Refused(refusal(&cmp)));
            }
        }
    }
    let by = match force {
        Some(why) => format!("{by} (forced: {why})"),
        None => by.to_string(),
    };
    let by = by.as_str();
    let now = clock.timestamp();
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

/// The activation gate (decision 0080): for a scorer or an engine, the
/// candidate against the active version on the same walk-forward rows of
/// real prices at 90 days, the other part being the active one. None for
/// other kinds.
async fn gate(
    db: &dyn Database,
    runtime: &Arc<PluginRuntime>,
    active: &[ActivationRecord],
    current: &ActivationRecord,
    candidate: &Loaded,
) -> Result<Option<ModelComparison>, Error> {
    let part = match candidate.kind() {
        PluginKind::Scorer => Part::Scorer,
        PluginKind::Segmentation => Part::Engine,
        _ => return Ok(None),
    };
    let other = match part {
        Part::Scorer => PluginKind::Segmentation,
        Part::Engine => PluginKind::Scorer,
    };
    let Some(partner) = active.iter().find(|a| a.kind == other) else {
        return Ok(None);
    };
    let partner = load_checked(db, runtime, other, &partner.name, &partner.version).await?;
    let incumbent =
        load_checked(db, runtime, current.kind, &current.name, &current.version).await?;
    let model = |part_plugin: &Loaded| -> Option<Model> {
        let (engine, scorer) = match (part, part_plugin, &partner) {
            (Part::Scorer, Loaded::Scorer(s), Loaded::Segmentation(e)) => (e.clone(), s.clone()),
            (Part::Engine, Loaded::Segmentation(e), Loaded::Scorer(s)) => (e.clone(), s.clone()),
            _ => return None,
        };
        Some(Model { engine, scorer })
    };
    let (Some(a), Some(b)) = (model(&incumbent), model(candidate)) else {
        return Ok(None);
    };
    if !a.engine.has_evidence() || !b.engine.has_evidence() {
        return Ok(None);
    }
    let series = crate::models::observed(db).await?;
    let permit = runtime.acquire().await;
    let span = tracing::Span::current();
    let cmp = tokio::task::spawn_blocking(move || {
        span.in_scope(|| {
            crate::models::compare(
                &permit,
                &a,
                &b,
                part,
                &series,
                crate::models::DEFAULT_HORIZON,
            )
            .map(|c| c.0)
        })
    })
    .await
    .map_err(|e| Error::Internal(format!("the comparison crashed: {e}")))??;
    Ok(Some(cmp))
}

/// Compares versions `a` and `b` of `kind`/`name` (a scorer or an engine)
/// with the active version of the other part, on real prices at `horizon`.
pub async fn compare(
    db: &dyn Database,
    runtime: &Arc<PluginRuntime>,
    kind: PluginKind,
    name: &str,
    (a, b): (&str, &str),
    horizon: u32,
) -> Result<(ModelComparison, Vec<forecast_domain::evaluation::EvalRow>), Error> {
    let (part, other) = match kind {
        PluginKind::Scorer => (Part::Scorer, PluginKind::Segmentation),
        PluginKind::Segmentation => (Part::Engine, PluginKind::Scorer),
        _ => {
            return Err(Error::Invalid(format!(
                "only scorer and segmentation versions make forecasts to compare, not {kind}"
            )))
        }
    };
    let active = db.active_plugins().await?;
    let partner = active
        .iter()
        .find(|x| x.kind == other)
        .ok_or_else(|| Error::Unavailable(format!("no active {other} to compare with")))?;
    let partner = load_checked(db, runtime, other, &partner.name, &partner.version).await?;
    let pair = |p: Loaded| -> Result<Model, Error> {
        match (p, partner.clone()) {
            (Loaded::Scorer(scorer), Loaded::Segmentation(engine))
            | (Loaded::Segmentation(engine), Loaded::Scorer(scorer)) => {
                Ok(Model { engine, scorer })
            }
            _ => Err(Error::Internal("unexpected plugin kinds".into())),
        }
    };
    let ma = pair(load_checked(db, runtime, kind, name, a).await?)?;
    let mb = pair(load_checked(db, runtime, kind, name, b).await?)?;
    if !ma.engine.has_evidence() || !mb.engine.has_evidence() {
        return Err(Error::Unavailable(
            "an engine built before WIT 1.7.0 cannot compute past states".into(),
        ));
    }
    let series = crate::models::observed(db).await?;
    let permit = runtime.acquire().await;
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || {
        span.in_scope(|| crate::models::compare(&permit, &ma, &mb, part, &series, horizon))
    })
    .await
    .map_err(|e| Error::Internal(format!("the comparison crashed: {e}")))?
}

/// Why a candidate is refused, with the figures.
fn refusal(c: &ModelComparison) -> String {
    let crps = |card: &forecast_api::models::ModelCard| {
        card.evaluation
            .as_ref()
            .map_or("n/a".to_string(), |e| format!("{:.5}", e.crps.forecast))
    };
    format!(
        "{} forecast significantly worse than the active {} on real prices at {} days \
         ({} rows, {} month-ends): mean CRPS {} against {}, Diebold-Mariano {:.2} (p = {:.4}); \
         compare them with `forecast plugin compare`, or activate anyway with --force --reason \"...\"",
        c.b.model,
        c.a.model,
        c.return_period,
        c.rows,
        c.months,
        crps(&c.b),
        crps(&c.a),
        c.dm_stat,
        c.dm_p
    )
}

/// Returns `kind`'s slot (for strategies, `name`'s) to the version active
/// before the current one.
#[tracing::instrument(name = "plugin_rollback", skip_all, fields(slot = %slot(kind, name)))]
pub async fn rollback(
    db: &dyn PluginRegistry,
    kind: PluginKind,
    name: &str,
    clock: &dyn Clock,
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
        match db.rollback_plugin(&slot, clock.timestamp()).await? {
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
#[allow(clippy::too_many_arguments)]
pub async fn start_shadow(
    db: &dyn PluginRegistry,
    runtime: &Arc<PluginRuntime>,
    kind: PluginKind,
    name: &str,
    version: &str,
    sample: f64,
    by: &str,
    clock: &dyn Clock,
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
        started_at: clock.timestamp(),
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
            activated_by: active
                .iter()
                .find(|a| a.kind == r.kind && a.name == r.name && a.version == r.version)
                .map(|a| a.activated_by.clone()),
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
