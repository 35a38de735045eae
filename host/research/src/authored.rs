//! Strategies uploaded by their authors (issue 26): the upload (compiled
//! and type-checked as the `strategy` world within the heavy-work budget
//! and a deadline, its imports checked, its self-tests run, then stored
//! immutable), who may see and run which, and the compiled plugins kept
//! by sha256.
//!
//! Names: an author's strategies live under the author's handle,
//! `@u` followed by 10 hex digits of the SHA-256 of the account id
//! ([`handle_of`]), so no upload can take a built-in's name or another
//! author's, and a handle says nothing about its owner's e-mail. A request
//! names `@handle/name` (the version chosen by the owner) or
//! `@handle/name@version`. A private strategy of another account is
//! answered exactly as a name that does not exist.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use forecast_api::authored::{StrategyChange, StrategyState, UploadedStrategy};
use forecast_api::backtest::{
    PluginUsage, ResourceFigures, Spread, StrategyItem, StrategyManifest,
};
use forecast_plugins::strategy::{valid_name, UNNAMED};
use forecast_plugins::{Permit, PluginError, PluginRuntime, RuntimeConfig, StrategyPlugin};
use forecast_store::{
    AuthoredStrategy, PluginRun, StrategyStore, UpdateOutcome, UploadLimits, UploadOutcome,
    UploadRecord,
};
use sha2::{Digest, Sha256};

use forecast_bundle::TrustPolicy;

use forecast_services::active::Plugins;
use forecast_services::budget::{compile_bytes, spawn_heavy, Work, WorkBudget};
use forecast_services::error::Error;
use forecast_services::registry::{self_test, Loaded};

/// The largest component or bundle an upload may carry: a Python strategy
/// (componentize-py 0.25.1, a CPython interpreter inside) is 18 MB, a Rust
/// one under 0.2 MB (issue 43; was 8 MiB).
pub const MAX_UPLOAD_BYTES: usize = 32 << 20;

/// Strategies one account may have, and versions one strategy may have.
pub const LIMITS: UploadLimits = UploadLimits {
    strategies_per_owner: 20,
    versions_per_strategy: 50,
};

/// How long waiting for a plugin slot and then compiling, type-checking
/// and self-testing an upload may take together by default, once its
/// heavy-work turn has come (`FORECAST_UPLOAD_COMPILE_TIMEOUT_MS`); past it
/// the upload is refused (its thread finishes on its own, still holding its
/// share of the heavy-work budget). A Python strategy took 14-26 s on a
/// busy 2-core machine (was 30 s). The request deadline exceeds the
/// heavy-work wait plus this, so an upload always gets its own answer,
/// never the server's 504 (decision 0096).
pub const COMPILE_DEADLINE: Duration = Duration::from_secs(60);

/// Compiled uploads kept in memory, by sha256.
const COMPILED_KEPT: usize = 64;
/// The most compiled image one upload may be (issue 40, finding 1): past
/// it, refused uncharged and not kept. The project's strategies compile to
/// 0.3–0.4 MB (`forecast-plugins` `compiled_strategies_are_small`), a
/// Python one to 38 MiB (issue 43; was 32 MiB).
pub const MAX_COMPILED_BYTES: usize = 64 << 20;
/// The most compiled images the in-memory set may hold together.
const COMPILED_KEPT_BYTES: usize = 256 << 20;

/// Runs kept per strategy component for its resource figures.
pub const RUNS_KEPT: u32 = 50;

/// How long the figures read from the store are reused before they are
/// read again (a run on this replica refreshes them at once).
const FIGURES_TTL: Duration = Duration::from_secs(5);

/// Each account's resource figures by component sha256, and when they
/// were read.
type Figures = HashMap<String, (Instant, Arc<HashMap<String, ResourceFigures>>)>;
/// Accounts whose figures are held at once; past it the expired go.
const FIGURES_HELD: usize = 1_000;

/// Imports an upload may have besides none, by exact interface name (any
/// version; the linker refuses one it cannot serve): the `strategy` world's,
/// and the WASI interfaces a Rust standard library on `wasm32-wasip2`
/// imports, which the host links as traps. Anything else (a filesystem, a
/// socket, HTTP, another world's `forecast:plugins/llm`, a made-up
/// `wasi:cli/evil`) refuses the upload, naming the import.
const ALLOWED_IMPORTS: &[&str] = &[
    "forecast:plugins/host-log",
    "forecast:plugins/types",
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:clocks/monotonic-clock",
    "wasi:clocks/wall-clock",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
];

/// An author's handle: `u` and 10 hex digits of the SHA-256 of the account
/// id (stable, unique in practice, and no hint of the e-mail).
pub fn handle_of(user_id: &str) -> String {
    let digest = hex::encode(Sha256::digest(user_id.as_bytes()));
    format!("u{}", &digest[..10])
}

/// `@handle/name[@version]`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyRef {
    /// Without `@`.
    pub handle: String,
    /// The strategy's bare name.
    pub name: String,
    /// A pinned version, if any.
    pub version: Option<String>,
}

impl StrategyRef {
    /// `@handle/name[@version]`; `None` for anything else (a built-in's name).
    pub fn parse(s: &str) -> Option<StrategyRef> {
        let rest = s.strip_prefix('@')?;
        let (handle, rest) = rest.split_once('/')?;
        let (name, version) = match rest.split_once('@') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (rest, None),
        };
        let handle_ok = (2..=32).contains(&handle.len())
            && handle
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        let version_ok = version
            .as_deref()
            .is_none_or(|v| (1..=32).contains(&v.len()));
        (handle_ok && valid_name(name) && version_ok).then(|| StrategyRef {
            handle: handle.to_string(),
            name: name.to_string(),
            version,
        })
    }

    fn label(&self) -> String {
        format!("@{}/{}", self.handle, self.name)
    }
}

/// What an upload carries.
pub enum Upload {
    /// A bare component (`application/wasm`).
    Component(Vec<u8>),
    /// A signed bundle (`application/vnd.forecast.bundle`): a manifest, the
    /// component and an ed25519 signature over both (docs/PLUGIN_BUNDLES.md).
    Bundle(Vec<u8>),
}

/// The uploads' service.
#[derive(Clone)]
pub struct AuthoredService {
    store: Arc<dyn StrategyStore>,
    budget: WorkBudget,
    /// The metered runtime uploads are compiled for and run on: every call
    /// has a fuel budget besides the memory cap and the deadline.
    runtime: Arc<PluginRuntime>,
    compiled: Arc<Mutex<HashMap<String, Arc<StrategyPlugin>>>>,
    /// Who may sign a strategy that is shared (`FORECAST_PLUGIN_TRUST`,
    /// `FORECAST_PLUGIN_UNSIGNED`); private uploads may be unsigned.
    trust: TrustPolicy,
    /// Every strategy's recent resource figures, as last read.
    figures: Arc<Mutex<Figures>>,
    /// Each account's listing (without figures), under one `strategies`
    /// generation of the store.
    listings: Arc<Mutex<Listings>>,
    /// When uploads and runs happen.
    clock: forecast_domain::SharedClock,
    /// How long an upload's slot wait and compilation may take together.
    compile_deadline: Duration,
}

/// The listings kept: the generation they were read under, and by viewer.
#[derive(Default)]
struct Listings {
    generation: i64,
    by_viewer: HashMap<String, Arc<Vec<StrategyItem>>>,
}

/// Viewers whose listing is kept at most; past it, the map starts over.
const LISTINGS_HELD: usize = 16_384;

impl AuthoredService {
    /// A service over `store`, compiling and running uploads on a metered
    /// runtime of its own (`plugins`' limits, plus fuel) within `budget`,
    /// sharing only what `trust` allows, keeping compiled uploads in
    /// `module_cache`, writing their `host-log` lines at most as loud as
    /// `log_ceiling`, dating uploads and runs by `clock`.
    pub fn new(
        store: Arc<dyn StrategyStore>,
        plugins: Arc<Plugins>,
        budget: WorkBudget,
        trust: TrustPolicy,
        module_cache: Option<&std::path::Path>,
        log_ceiling: tracing::Level,
        clock: forecast_domain::SharedClock,
    ) -> Result<Self, PluginError> {
        let mut runtime = PluginRuntime::new(RuntimeConfig {
            fuel: true,
            guest_log_ceiling: log_ceiling,
            ..plugins.runtime().config()
        })?;
        // Compiled uploads on disk, so a restart does not compile them all
        // again; without a usable folder, each is compiled when first run.
        if let Some(dir) = module_cache {
            if let Err(e) = runtime.set_module_cache(dir) {
                tracing::warn!(
                    dir = %dir.display(), error = %e,
                    "FORECAST_MODULE_CACHE is not usable; uploads are compiled on every start"
                );
            }
        }
        let runtime = Arc::new(runtime);
        Ok(AuthoredService {
            store,
            budget,
            runtime,
            compiled: Arc::new(Mutex::new(HashMap::new())),
            trust,
            figures: Arc::new(Mutex::new(HashMap::new())),
            listings: Arc::default(),
            clock,
            compile_deadline: COMPILE_DEADLINE,
        })
    }

    /// The service with `deadline` for an upload's slot wait and
    /// compilation together instead of [`COMPILE_DEADLINE`].
    pub fn with_compile_deadline(mut self, deadline: Duration) -> Self {
        self.compile_deadline = deadline;
        self
    }

    /// Records what `user_id`'s backtest used of the strategy component
    /// `sha256` (built-in or uploaded). A failure is logged, not returned:
    /// the backtest's answer does not depend on it.
    pub async fn record_run(&self, sha256: &str, user_id: &str, usage: &PluginUsage) {
        let run = PluginRun {
            sha256: sha256.to_string(),
            ran_at: self.clock.timestamp(),
            calls: usage.calls,
            fuel: usage.fuel,
            guest_ms: usage.guest_ms,
            peak_memory_bytes: usage.peak_memory_bytes,
            user_id: user_id.to_string(),
        };
        match self.store.record_plugin_run(&run, RUNS_KEPT).await {
            Ok(()) => {
                self.figures
                    .lock()
                    .expect("figures poisoned")
                    .remove(user_id);
            }
            Err(e) => tracing::warn!(error = %e, sha256, "recording a strategy's run failed"),
        }
    }

    /// Min / mean / max of `user_id`'s recent runs of each strategy
    /// component, by sha256: an account sees its own runs only, never
    /// another's activity (read from the store at most every few seconds).
    pub async fn figures(
        &self,
        user_id: &str,
    ) -> Result<Arc<HashMap<String, ResourceFigures>>, Error> {
        if let Some((at, held)) = self.figures.lock().expect("figures poisoned").get(user_id) {
            if at.elapsed() < FIGURES_TTL {
                return Ok(held.clone());
            }
        }
        // The account's kept runs: at most RUNS_KEPT per component.
        let runs = self.store.plugin_runs(user_id, RUNS_KEPT * 2_000).await?;
        let mut by_sha: HashMap<&str, Vec<&PluginRun>> = HashMap::new();
        for r in &runs {
            by_sha.entry(&r.sha256).or_default().push(r);
        }
        let figures: HashMap<String, ResourceFigures> = by_sha
            .into_iter()
            .filter_map(|(sha, runs)| Some((sha.to_string(), figures_of(&runs)?)))
            .collect();
        let figures = Arc::new(figures);
        let mut held = self.figures.lock().expect("figures poisoned");
        if held.len() >= FIGURES_HELD {
            held.retain(|_, (at, _)| at.elapsed() < FIGURES_TTL);
        }
        if held.len() < FIGURES_HELD {
            held.insert(user_id.to_string(), (Instant::now(), figures.clone()));
        }
        Ok(figures)
    }

    /// A call slot of the metered runtime (a run of an upload takes one).
    pub async fn permit(&self) -> Permit {
        self.runtime.acquire().await
    }

    /// Stores an upload of `owner_id`: 201-worthy (`created`) or the same
    /// version again; refused with the reason otherwise, nothing stored.
    pub async fn upload(&self, owner_id: &str, upload: Upload) -> Result<UploadedStrategy, Error> {
        let (bytes, signer, manifest) = match upload {
            Upload::Component(bytes) => (bytes, None, None),
            Upload::Bundle(bytes) => {
                let opened = forecast_bundle::open(&bytes)
                    .map_err(|e| Error::Refused(format!("the bundle was refused: {e}")))?;
                let manifest = serde_json::to_string(&opened.manifest)
                    .map_err(|e| Error::Internal(format!("manifest: {e}")))?;
                (
                    opened.component,
                    Some(opened.signer),
                    Some((opened.manifest, manifest)),
                )
            }
        };
        if bytes.is_empty() {
            return Err(Error::Invalid(
                "the body must be a strategy component (Content-Type: application/wasm)".into(),
            ));
        }
        let plugin = self.compile(owner_id, bytes.clone()).await?;
        let info = plugin.info().clone();
        // A bundle's manifest must describe the component it carries.
        if let Some((m, _)) = &manifest {
            if m.world != "strategy" || m.name != info.name || m.version != info.version {
                return Err(Error::Refused(format!(
                    "the bundle's manifest says {} {}@{}, but its component is strategy {}@{}",
                    m.world, m.name, m.version, info.name, info.version
                )));
            }
        }
        // A bare component's manifest is what it reports about itself
        // (no licence or author; the listing reads its description).
        let manifest = match manifest {
            Some((_, json)) => Some(json),
            None => Some(
                serde_json::json!({
                    "name": info.name,
                    "version": info.version,
                    "world": "strategy",
                    "description": plugin.description(),
                    "sha256": info.sha256,
                })
                .to_string(),
            ),
        };
        let handle = handle_of(owner_id);
        let record = UploadRecord {
            owner_id: owner_id.to_string(),
            name: info.name.clone(),
            version: info.version.clone(),
            sha256: info.sha256.clone(),
            size: bytes.len() as i64,
            signer: signer.clone(),
            manifest,
            uploaded_at: self.clock.timestamp(),
            imports: plugin.imports().to_vec(),
        };
        let label = format!("@{handle}/{}", info.name);
        let outcome = self
            .store
            .add_upload(&handle, &record, &bytes, LIMITS)
            .await?;
        let created = added(outcome, &label, &info.version)?;
        self.keep(plugin.clone()).await;
        let held = self
            .store
            .authored_strategy(&handle, &info.name)
            .await?
            .ok_or_else(|| Error::Internal(format!("{label} vanished after its upload")))?;
        Ok(UploadedStrategy {
            strategy: label,
            version: info.version,
            sha256: info.sha256,
            size: record.size,
            description: plugin.description().to_string(),
            imports: plugin.imports().to_vec(),
            signer,
            current_version: held.current_version,
            shared: held.shared,
            created,
        })
    }

    /// Compiles, type-checks and self-tests `bytes` as a strategy, as a
    /// heavy job of `owner_id` with its compile deadline for its slot and
    /// its work.
    async fn compile(&self, owner_id: &str, bytes: Vec<u8>) -> Result<Arc<StrategyPlugin>, Error> {
        // What it would compile into, bounded before any work is admitted:
        // its modules, memories, tables and the initial memory its data
        // segments span (issue 40, finding 1).
        forecast_plugins::shape::shape(&bytes)
            .and_then(|s| s.check(&forecast_plugins::shape::LIMITS))
            .map_err(|e| {
                Error::RefusedUncharged(format!(
                    "the component is not a loadable strategy: {e}; nothing was compiled \
                     or charged"
                ))
            })?;
        let ticket = self
            .budget
            .admit(owner_id, Work::Compile, compile_bytes(bytes.len()))
            .await?;
        let runtime = self.runtime.clone();
        // One deadline for the slot and the work, so the two waits together
        // stay within what the request deadline allows for.
        let limit = self.compile_deadline;
        let deadline = tokio::time::Instant::now() + limit;
        let permit = tokio::time::timeout_at(deadline, runtime.acquire())
            .await
            .map_err(|_| Error::Busy {
                detail: "no plugin slot came free to check the upload; nothing was stored, \
                         retry shortly"
                    .into(),
                retry_after: 5,
            })?;
        let span = tracing::Span::current();
        let work = spawn_heavy(move || {
            let _in = span.enter();
            // Held until the compilation has really ended.
            let _ticket = ticket;
            let plugin = StrategyPlugin::load(runtime, UNNAMED, &bytes).map_err(|e| {
                Error::Refused(format!("the component is not a loadable strategy: {e}"))
            })?;
            if plugin.compiled_bytes() > MAX_COMPILED_BYTES {
                return Err(Error::RefusedUncharged(format!(
                    "the component compiles to {} MiB, more than the {} MiB an uploaded \
                     strategy may; nothing was stored or charged",
                    plugin.compiled_bytes().div_ceil(1 << 20),
                    MAX_COMPILED_BYTES >> 20
                )));
            }
            check_imports(plugin.imports())?;
            let info = plugin.info();
            if !valid_name(&info.name) {
                return Err(Error::Refused(format!(
                    "the strategy calls itself '{}': a name is 1 to 64 lower-case letters, \
                     digits, '-' or '_'",
                    forecast_api::quote(&info.name)
                )));
            }
            if !forecast_services::registry::valid_version(&info.version) {
                return Err(Error::Refused(format!(
                    "the strategy reports version '{}', not a semantic version such as 1.2.3",
                    forecast_api::quote(&info.version)
                )));
            }
            let loaded = Loaded::Strategy(Arc::new(plugin));
            self_test(&loaded, &permit)?;
            match loaded {
                Loaded::Strategy(p) => Ok(p),
                _ => unreachable!("loaded as a strategy"),
            }
        });
        match tokio::time::timeout_at(deadline, work).await {
            Ok(done) => done.map_err(|e| Error::Internal(format!("checking the upload: {e}")))?,
            Err(_) => Err(Error::Refused(format!(
                "checking the component took longer than {} s (compilation and self-tests); \
                 nothing was stored",
                limit.as_secs_f64()
            ))),
        }
    }

    /// Keeps a stored upload's compiled plugin: in memory (a bounded
    /// number) and in the module cache on disk, so a restart loads it.
    async fn keep(&self, plugin: Arc<StrategyPlugin>) {
        {
            let mut compiled = self.compiled.lock().expect("compiled poisoned");
            // Bounded in entries and in compiled bytes; any one goes first
            // (a dropped entry is compiled again, or read from the module
            // cache, when next run).
            let held = |c: &HashMap<String, Arc<StrategyPlugin>>| -> usize {
                c.values().map(|p| p.compiled_bytes()).sum()
            };
            while !compiled.is_empty()
                && (compiled.len() >= COMPILED_KEPT
                    || held(&compiled) + plugin.compiled_bytes() > COMPILED_KEPT_BYTES)
            {
                if let Some(k) = compiled.keys().next().cloned() {
                    compiled.remove(&k);
                }
            }
            compiled.insert(plugin.info().sha256.clone(), plugin.clone());
        }
        // Serialising and writing is file work: off the async threads.
        if let Err(e) = tokio::task::spawn_blocking(move || plugin.keep_compiled()).await {
            tracing::warn!(error = %e, "keeping a compiled upload on disk failed");
        }
    }

    /// The strategy `reference` names for `viewer_id`: its own or a shared
    /// one; anything else is the same 400 as an unknown name.
    pub async fn resolve(
        &self,
        viewer_id: &str,
        reference: &str,
    ) -> Result<Arc<StrategyPlugin>, Error> {
        let unknown = || {
            Error::Invalid(format!(
                "strategy: unknown strategy '{}'; GET /api/strategies lists the ones you can run",
                forecast_api::quote(reference)
            ))
        };
        let r = StrategyRef::parse(reference).ok_or_else(unknown)?;
        let s = self
            .store
            .authored_strategy(&r.handle, &r.name)
            .await?
            .filter(|s| s.shared || s.owner_id == viewer_id)
            .ok_or_else(unknown)?;
        let version = r.version.clone().unwrap_or(s.current_version.clone());
        let record = s
            .versions
            .iter()
            .find(|v| v.version == version)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "strategy: {} has no version '{}'; it has {}",
                    r.label(),
                    forecast_api::quote(&version),
                    versions_of(&s).join(", ")
                ))
            })?;
        // Another account runs only what the operator's policy admits, also
        // when it pins a version that is not the current one.
        if s.owner_id != viewer_id {
            self.admits(record).map_err(|e| {
                Error::Refused(format!(
                    "strategy: {}@{version} runs only for its owner on this server: {e}",
                    r.label()
                ))
            })?;
        }
        if let Some(p) = self
            .compiled
            .lock()
            .expect("compiled poisoned")
            .get(&record.sha256)
            .cloned()
        {
            return Ok(p);
        }
        let bytes = self
            .store
            .upload_wasm(&s.owner_id, &s.name, &version)
            .await?
            .ok_or_else(unknown)?;
        let plugin = self.compile(viewer_id, bytes).await?;
        self.keep(plugin.clone()).await;
        Ok(plugin)
    }

    /// The uploaded strategies `viewer_id` may run, as listed beside the
    /// built-ins, with the viewer's own figures. The listing is read from
    /// the store once per change of its `strategies` generation
    /// (`generation`, read after the request arrived; `None`: read now).
    pub async fn listed(
        &self,
        viewer_id: &str,
        generation: Option<i64>,
    ) -> Result<Vec<StrategyItem>, Error> {
        let kept = generation.and_then(|g| {
            let mut held = self.listings.lock().expect("listings poisoned");
            if held.generation != g {
                *held = Listings {
                    generation: g,
                    ..Listings::default()
                };
            }
            held.by_viewer.get(viewer_id).cloned()
        });
        forecast_services::cache_lookup("strategies", kept.is_some());
        let items = match kept {
            Some(items) => items,
            None => {
                let items = Arc::new(self.listing(viewer_id).await?);
                let mut held = self.listings.lock().expect("listings poisoned");
                if generation == Some(held.generation) {
                    if held.by_viewer.len() >= LISTINGS_HELD {
                        held.by_viewer.clear();
                    }
                    held.by_viewer.insert(viewer_id.to_string(), items.clone());
                }
                items
            }
        };
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let figures = self.figures(viewer_id).await?;
        Ok(items
            .iter()
            .map(|i| StrategyItem {
                resources: figures.get(&i.sha256).cloned(),
                ..i.clone()
            })
            .collect())
    }

    /// The uploaded strategies `viewer_id` may run, read from the store
    /// (without figures).
    async fn listing(&self, viewer_id: &str) -> Result<Vec<StrategyItem>, Error> {
        let all = self.store.visible_strategies(viewer_id).await?;
        Ok(all
            .iter()
            .filter_map(|s| {
                let current = s.versions.iter().find(|v| v.version == s.current_version)?;
                // Another account sees only what it may run: nothing when
                // the current version fails the policy (it changed since the
                // strategy was shared), and of the versions only those it
                // admits.
                let owned = s.owner_id == viewer_id;
                if !owned && self.admits(current).is_err() {
                    return None;
                }
                let versions = s
                    .versions
                    .iter()
                    .filter(|v| owned || self.admits(v).is_ok())
                    .map(|v| v.version.clone())
                    .collect();
                let manifest = current
                    .manifest
                    .as_deref()
                    .and_then(|m| serde_json::from_str::<StrategyManifest>(m).ok())
                    // An empty licence or author is none.
                    .map(|mut m| {
                        m.licence = m.licence.filter(|v| !v.is_empty());
                        m.author = m.author.filter(|v| !v.is_empty());
                        m
                    });
                let description = manifest
                    .as_ref()
                    .map(|m| m.description.clone())
                    .unwrap_or_default();
                Some(StrategyItem {
                    name: format!("@{}/{}", s.handle, s.name),
                    version: s.current_version.clone(),
                    description,
                    sha256: current.sha256.clone(),
                    visibility: if s.owner_id == viewer_id && !s.shared {
                        "private".into()
                    } else {
                        "shared".into()
                    },
                    owner: Some(format!("@{}", s.handle)),
                    signer: current.signer.clone(),
                    versions,
                    owned,
                    resources: None,
                    imports: current.imports.clone(),
                    wit_version: forecast_api::backtest::wit_version(&current.imports),
                    manifest,
                })
            })
            .collect())
    }

    /// Shares, unshares or picks the running version of an owner's strategy.
    pub async fn change(
        &self,
        owner_id: &str,
        handle: &str,
        name: &str,
        change: &StrategyChange,
    ) -> Result<StrategyState, Error> {
        let label = format!("@{handle}/{name}");
        let held = self.owned(owner_id, handle, name).await?;
        if change.shared.is_none() && change.current_version.is_none() {
            // Nothing to change: the strategy as it is.
            return Ok(StrategyState {
                strategy: label,
                current_version: held.current_version.clone(),
                shared: held.shared,
                versions: versions_of(&held),
            });
        }
        if change.shared.unwrap_or(held.shared) {
            // What is shared must be signed as the operator's policy says:
            // the version that will run, whether the change shares the
            // strategy or picks another version of a shared one (a pinned
            // version is checked when it is run, by `resolve`).
            let running = change
                .current_version
                .as_deref()
                .unwrap_or(&held.current_version);
            for v in held.versions.iter().filter(|v| v.version == running) {
                self.admits(v).map_err(|e| {
                    Error::Refused(format!(
                        "{label}@{} cannot be shared on this server: {e}",
                        v.version
                    ))
                })?;
            }
        }
        match self
            .store
            .update_strategy(
                owner_id,
                name,
                change.shared,
                change.current_version.as_deref(),
            )
            .await?
        {
            UpdateOutcome::Updated => {}
            UpdateOutcome::NoStrategy => return Err(not_yours(&label)),
            UpdateOutcome::NoVersion => {
                return Err(Error::Invalid(format!(
                    "current_version: {label} has no version '{}'",
                    forecast_api::quote(change.current_version.as_deref().unwrap_or_default())
                )))
            }
        }
        let s = self.owned(owner_id, handle, name).await?;
        Ok(StrategyState {
            strategy: label,
            current_version: s.current_version.clone(),
            shared: s.shared,
            versions: versions_of(&s),
        })
    }

    /// Whether the operator's trust policy admits `version` for accounts
    /// other than its owner, or why not.
    fn admits(&self, version: &UploadRecord) -> Result<(), String> {
        match &version.signer {
            Some(signer) => self.trust.check_signed(signer),
            None => self.trust.check_unsigned(),
        }
    }

    /// Deletes an owner's strategy (its versions are never reused).
    /// Its compiled code is let go: from memory, and from the module cache
    /// on disk.
    pub async fn delete(&self, owner_id: &str, handle: &str, name: &str) -> Result<(), Error> {
        let held = self.owned(owner_id, handle, name).await?;
        if !self.store.delete_strategy(owner_id, name).await? {
            return Err(not_yours(&format!("@{handle}/{name}")));
        }
        let mut compiled = self.compiled.lock().expect("compiled poisoned");
        for v in &held.versions {
            compiled.remove(&v.sha256);
            if let Some(cache) = self.runtime.module_cache() {
                cache.forget(&v.sha256);
            }
        }
        Ok(())
    }

    /// `@handle/name` when `owner_id` owns it; else the 404 of a name that
    /// does not exist (also for another account's strategy, shared or not).
    async fn owned(
        &self,
        owner_id: &str,
        handle: &str,
        name: &str,
    ) -> Result<AuthoredStrategy, Error> {
        let label = format!("@{handle}/{name}");
        if handle != handle_of(owner_id) {
            return Err(not_yours(&label));
        }
        self.store
            .authored_strategy(handle, name)
            .await?
            .filter(|s| s.owner_id == owner_id)
            .ok_or_else(|| not_yours(&label))
    }
}

/// The figures of one component's runs; `None` without runs. Fuel is
/// given when every run was metered.
fn figures_of(runs: &[&PluginRun]) -> Option<ResourceFigures> {
    let fuel: Option<Vec<f64>> = runs.iter().map(|r| r.fuel.map(|f| f as f64)).collect();
    Some(ResourceFigures {
        runs: runs.len() as u64,
        calls: Spread::of(runs.iter().map(|r| r.calls as f64))?,
        fuel: fuel.and_then(Spread::of),
        guest_ms: Spread::of(runs.iter().map(|r| r.guest_ms))?,
        peak_memory_bytes: Spread::of(runs.iter().map(|r| r.peak_memory_bytes as f64))?,
    })
}

fn not_yours(label: &str) -> Error {
    Error::NotFound(format!(
        "you have no strategy {}; GET /api/strategies lists yours",
        forecast_api::quote(label)
    ))
}

fn versions_of(s: &AuthoredStrategy) -> Vec<String> {
    s.versions.iter().map(|v| v.version.clone()).collect()
}

/// Refuses an import outside [`ALLOWED_IMPORTS`] (its name before any
/// `@version`, compared exactly), naming it.
fn check_imports(imports: &[String]) -> Result<(), Error> {
    for import in imports {
        let name = import.split_once('@').map_or(import.as_str(), |(n, _)| n);
        if !ALLOWED_IMPORTS.contains(&name) {
            return Err(Error::Refused(format!(
                "the component imports '{}', which the strategy world does not provide \
                 (allowed: the strategy world's imports and the WASI interfaces of a Rust \
                 standard library, linked as traps: {})",
                forecast_api::quote(import),
                ALLOWED_IMPORTS[2..].join(", ")
            )));
        }
    }
    Ok(())
}

/// Whether an upload's store outcome added the version (`false`: the same
/// bytes were already there), or the 409 that refuses it.
fn added(outcome: UploadOutcome, label: &str, version: &str) -> Result<bool, Error> {
    Ok(match outcome {
        UploadOutcome::Added => true,
        UploadOutcome::AlreadyPresent => false,
        UploadOutcome::Conflict(existing) => {
            return Err(Error::Conflict(format!(
                "{label} version {} is already stored with other bytes (sha256 {existing}); \
                 a version never changes: raise the version your component reports",
                version
            )))
        }
        UploadOutcome::TooManyStrategies => {
            return Err(Error::Conflict(format!(
                "this account already has {} strategies, the most one account may; \
                 delete one first",
                LIMITS.strategies_per_owner
            )))
        }
        UploadOutcome::TooManyVersions => {
            return Err(Error::Conflict(format!(
                "{label} already has {} versions, the most one strategy may; delete it \
                 and upload again, or publish under another name",
                LIMITS.versions_per_strategy
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_only_in_the_namespaced_form() {
        let r = StrategyRef::parse("@u0123456789/dip-buyer@1.2.0").unwrap();
        assert_eq!(r.handle, "u0123456789");
        assert_eq!(r.name, "dip-buyer");
        assert_eq!(r.version.as_deref(), Some("1.2.0"));
        assert_eq!(
            StrategyRef::parse("@u0123456789/dip-buyer")
                .unwrap()
                .version,
            None
        );
        for bad in [
            "topn", "@/x", "@U01/x", "@u01/", "@u01/Bad", "@u01/x@", "u01/x", "@u01",
        ] {
            assert_eq!(StrategyRef::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn handles_are_stable_and_say_nothing_of_the_account() {
        let h = handle_of("user-1");
        assert_eq!(h, handle_of("user-1"));
        assert_ne!(h, handle_of("user-2"));
        assert_eq!(h.len(), 11);
        assert!(StrategyRef::parse(&format!("@{h}/x")).is_some());
    }

    #[test]
    fn imports_outside_the_world_and_the_std_interfaces_are_refused_by_name() {
        let ok = [
            "forecast:plugins/host-log@0.1.0".to_string(),
            "wasi:cli/stdout@0.2.6".to_string(),
            "wasi:io/streams@0.2.6".to_string(),
        ];
        assert!(check_imports(&ok).is_ok());
        let e = check_imports(&["wasi:filesystem/types@0.2.6".to_string()]).unwrap_err();
        assert!(
            e.to_string().contains("'wasi:filesystem/types@0.2.6'"),
            "{e}"
        );
        assert!(check_imports(&["wasi:sockets/tcp@0.2.0".to_string()]).is_err());
        // A name is matched whole, not by its prefix.
        for bad in [
            "forecast:plugins/llm@1.8.0",
            "forecast:plugins/semantic@1.11.0",
            "wasi:cli/evil@0.2.6",
            "wasi:io/streamsx@0.2.6",
            "wasi:random",
        ] {
            let e = check_imports(&[bad.to_string()]).unwrap_err();
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
        let std_imports: Vec<String> = ALLOWED_IMPORTS
            .iter()
            .map(|n| format!("{n}@0.2.0"))
            .chain(["wasi:clocks/wall-clock".to_string()])
            .collect();
        assert!(check_imports(&std_imports).is_ok());
    }
}
