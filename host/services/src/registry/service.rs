//! The registry as the admin API uses it: each action on the store,
//! answered in the wire shapes, and applied on this replica at once (the
//! others follow by polling).

use std::sync::Arc;

use forecast_api::admin::{
    ActiveResponse, ActiveVersion, AddedPlugin, Listed, ShadowReport, ShadowRequest, ShadowStarted,
};
use forecast_bundle::TrustPolicy;
use forecast_domain::PluginKind;
use forecast_store::{ActivationRecord, Database};

use super::{kinds::parse_kind, lifecycle, report};
use crate::active::Plugins;
use crate::budget::{compile_bytes, Ticket, Work, WorkBudget};
use crate::error::Error;

/// Registry actions taken in the name of `actor` (the activation history
/// says who).
pub struct RegistryService {
    db: Arc<dyn Database>,
    plugins: Arc<Plugins>,
    actor: &'static str,
    /// The server's budget for heavy work: compiling a component takes a
    /// ticket first.
    budget: WorkBudget,
    /// Which components may be added: signed by whom, and whether unsigned
    /// (`FORECAST_PLUGIN_TRUST`, `FORECAST_PLUGIN_UNSIGNED`).
    trust: TrustPolicy,
    /// When versions are added, activated, rolled back and shadowed.
    clock: forecast_domain::SharedClock,
}

impl RegistryService {
    /// Acts on `db`'s registry as `actor`, applying changes to `plugins`,
    /// compiling within `budget`, adding only what `trust` allows, dating
    /// changes by `clock`.
    pub fn new(
        db: Arc<dyn Database>,
        plugins: Arc<Plugins>,
        actor: &'static str,
        budget: WorkBudget,
        trust: TrustPolicy,
        clock: forecast_domain::SharedClock,
    ) -> Self {
        RegistryService {
            db,
            plugins,
            actor,
            budget,
            trust,
            clock,
        }
    }

    /// A ticket for compiling a component of `bytes` (its size unknown
    /// before the store is read: 0).
    async fn compiling(&self, bytes: usize) -> Result<Ticket, Error> {
        self.budget
            .admit(self.actor, Work::Compile, compile_bytes(bytes))
            .await
    }

    /// Every registered version and whether it is active or shadowed.
    pub async fn list(&self) -> Result<Vec<Listed>, Error> {
        lifecycle::list(self.db.as_ref()).await
    }

    /// Registers a component of `kind` (a wire name) as `name@version`: a
    /// bare component, or a signed bundle (a strategy) whose manifest names
    /// the same name and version, as the trust policy allows.
    pub async fn add(
        &self,
        kind: &str,
        name: &str,
        version: &str,
        bytes: Vec<u8>,
    ) -> Result<AddedPlugin, Error> {
        if bytes.is_empty() {
            return Err(Error::Invalid(
                "the body must be the component's bytes (Content-Type: application/wasm)".into(),
            ));
        }
        let kind = parse_kind(kind)?;
        let (bytes, signer) = self.admitted(kind, name, version, bytes)?;
        let by = match &signer {
            Some(signer) => format!("{}, signed by {signer}", self.actor),
            None => self.actor.to_string(),
        };
        let _ticket = self.compiling(bytes.len()).await?;
        let r = lifecycle::add(
            self.db.as_ref(),
            self.plugins.runtime_handle(),
            kind,
            name,
            version,
            bytes,
            &by,
            self.clock.as_ref(),
        )
        .await?;
        Ok(AddedPlugin {
            kind: r.kind.to_string(),
            name: r.name,
            version: r.version,
            sha256: r.sha256,
            size: r.size,
        })
    }

    /// The component to add and its signer, as the trust policy allows:
    /// a bundle must verify, be signed by a trusted key and describe the
    /// strategy the request names; a bare component needs unsigned
    /// components allowed. Refused with the reason otherwise.
    fn admitted(
        &self,
        kind: PluginKind,
        name: &str,
        version: &str,
        bytes: Vec<u8>,
    ) -> Result<(Vec<u8>, Option<String>), Error> {
        if !forecast_bundle::is_bundle(&bytes) {
            self.trust.check_unsigned().map_err(Error::Refused)?;
            return Ok((bytes, None));
        }
        let refused = |e: String| Error::Refused(format!("the bundle was refused: {e}"));
        let opened = forecast_bundle::open(&bytes).map_err(|e| refused(e.to_string()))?;
        self.trust.check_signed(&opened.signer).map_err(refused)?;
        let m = &opened.manifest;
        if kind != PluginKind::Strategy || m.name != name || m.version != version {
            return Err(Error::Invalid(format!(
                "the bundle holds {} {}@{}, but the request names {kind} {}@{}",
                m.world,
                m.name,
                m.version,
                forecast_api::quote(name),
                forecast_api::quote(version)
            )));
        }
        Ok((opened.component, Some(opened.signer)))
    }

    /// Activates a registered version after its checks pass and, for a
    /// scorer or an engine, the evidence gate (refused when significantly
    /// worse than the active version, unless `force` gives a reason).
    pub async fn activate(
        &self,
        kind: &str,
        name: &str,
        version: &str,
        force: Option<&str>,
    ) -> Result<ActiveResponse, Error> {
        let _ticket = self.compiling(0).await?;
        let a = lifecycle::activate(
            self.db.as_ref(),
            self.plugins.runtime_handle(),
            parse_kind(kind)?,
            name,
            version,
            self.actor,
            force,
            self.clock.as_ref(),
        )
        .await?;
        self.apply().await;
        Ok(active(a))
    }

    /// Compares two registered versions of a scorer or an engine on the
    /// same walk-forward rows of real prices.
    pub async fn compare(
        &self,
        req: &forecast_api::models::CompareRequest,
    ) -> Result<forecast_api::models::ModelComparison, Error> {
        let horizon = req.horizon()?;
        let _ticket = self.compiling(0).await?;
        lifecycle::compare(
            self.db.as_ref(),
            self.plugins.runtime_handle(),
            parse_kind(&req.kind)?,
            &req.name,
            (&req.a, &req.b),
            horizon,
        )
        .await
        .map(|c| c.0)
    }

    /// Returns a slot to the version active before the current one.
    pub async fn rollback(&self, kind: &str, name: &str) -> Result<ActiveResponse, Error> {
        let a = lifecycle::rollback(
            self.db.as_ref(),
            parse_kind(kind)?,
            name,
            self.clock.as_ref(),
        )
        .await?;
        self.apply().await;
        Ok(active(a))
    }

    /// Starts a shadow run of a registered candidate.
    pub async fn start_shadow(&self, s: &ShadowRequest) -> Result<ShadowStarted, Error> {
        let _ticket = self.compiling(0).await?;
        let c = lifecycle::start_shadow(
            self.db.as_ref(),
            self.plugins.runtime_handle(),
            parse_kind(&s.kind)?,
            &s.name,
            &s.version,
            s.sample,
            self.actor,
            self.clock.as_ref(),
        )
        .await?;
        self.apply().await;
        Ok(ShadowStarted {
            shadow: ShadowRequest {
                kind: c.kind.to_string(),
                name: c.name,
                version: c.version,
                sample: c.sample,
            },
        })
    }

    /// The report of a kind's running shadow.
    pub async fn shadow_report(&self, kind: &str) -> Result<ShadowReport, Error> {
        report::shadow_report(self.db.as_ref(), parse_kind(kind)?).await
    }

    /// Stops a kind's shadow run.
    pub async fn stop_shadow(&self, kind: &str) -> Result<(), Error> {
        lifecycle::stop_shadow(self.db.as_ref(), parse_kind(kind)?).await?;
        self.apply().await;
        Ok(())
    }

    /// Applies a change on this replica at once (others follow by polling).
    async fn apply(&self) {
        if let Err(e) = self.plugins.sync(self.db.as_ref()).await {
            tracing::error!(error = %e, "applying the registry change failed; the poller retries");
        }
    }
}

fn active(a: ActivationRecord) -> ActiveResponse {
    ActiveResponse {
        active: ActiveVersion {
            kind: a.kind.to_string(),
            name: a.name,
            version: a.version,
        },
    }
}
