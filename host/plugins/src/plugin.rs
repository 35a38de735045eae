//! The one plugin loader, generic over the WIT world.
//!
//! Loading is the same for every world: compile the component, link the
//! world's own imports, link every other import to a trap, pre-instantiate,
//! hash the bytes, and ask a first instance who it is. So is calling: a
//! fresh `Store` with the deadline and the memory cap, instantiation, and
//! the classification of a failure. A [`World`] supplies only what differs
//! (its bindgen'd types, how to link its imports, how to read its identity);
//! the world modules add their typed calls to [`Plugin`]`<TheirWorld>`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use forecast_domain::PluginKind;
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::Store;

use crate::runtime::{CallState, Permit, PluginRuntime};
use crate::{sha256_hex, PluginError, PluginInfo};

/// What a component says about itself when first instantiated.
pub struct Identity {
    /// The name, for worlds whose components name themselves (strategies);
    /// otherwise the registry's name is kept.
    pub name: Option<String>,
    /// Its semantic version.
    pub version: String,
    /// A one-sentence description (strategies; empty otherwise).
    pub description: String,
}

/// What differs between the WIT worlds; everything else is [`Plugin`]'s.
/// Implemented by one marker type per world module.
pub trait World: Sized + Send + Sync + 'static {
    /// The world's kind, as the registry names it.
    const KIND: PluginKind;
    /// The bindgen'd exports of an instance.
    type Bindings: Send + 'static;
    /// The bindgen'd pre-linked component.
    type Pre: Send + Sync + 'static;
    /// State a loaded plugin of this world keeps beside the component (the
    /// matcher's warm instances and language model); `()` for most.
    type Ext: Default + Send + Sync + 'static;

    /// Links the world's own imports (`host-log`, the matcher's `llm`).
    fn link(linker: &mut Linker<CallState>) -> wasmtime::Result<()>;
    /// Type-checks the pre-linked component against the world's exports.
    fn pre(pre: InstancePre<CallState>) -> wasmtime::Result<Self::Pre>;
    /// Instantiates into `store`.
    fn instantiate(
        pre: &Self::Pre,
        store: &mut Store<CallState>,
    ) -> wasmtime::Result<Self::Bindings>;
    /// Asks a fresh instance who it is; `Ok(Err(why))` refuses the load.
    fn identify(
        store: &mut Store<CallState>,
        bindings: &Self::Bindings,
    ) -> wasmtime::Result<Result<Identity, String>>;
    /// Fills a new store's data before instantiation (what the world lends
    /// its guests).
    fn prepare(_ext: &Self::Ext, _state: &mut CallState) {}
}

/// A loaded, pre-linked plugin version of world `W`. Shared behind an
/// `Arc`: every call instantiates afresh (or reuses an instance of its own,
/// see [`Instance`]), so concurrent calls never share guest state.
pub struct Plugin<W: World> {
    info: PluginInfo,
    description: String,
    label: Arc<str>,
    /// What the component imports, by name (whatever the world does not
    /// provide is linked as a trap).
    imports: Vec<String>,
    pre: W::Pre,
    /// The compiled component (kept for the runtime's module cache).
    component: Component,
    runtime: Arc<PluginRuntime>,
    pub(crate) ext: W::Ext,
}

/// A live instance of a [`Plugin`]: its own store and exports, kept for
/// several calls in a row (sessions, strategy runs, warm matchers).
pub(crate) struct Instance<W: World> {
    pub(crate) store: Store<CallState>,
    pub(crate) bindings: W::Bindings,
}

impl<W: World> Plugin<W> {
    /// The pre-linked component.
    pub(crate) fn pre(&self) -> &W::Pre {
        &self.pre
    }

    /// Compiles `bytes` against `W`'s world and asks a first instance for
    /// its identity (which doubles as a smoke test). `name` is the
    /// registry's name; a world whose components name themselves uses it
    /// only to label errors until the component has answered. Blocking
    /// (compilation). This first call takes no [`Permit`]: loading is an
    /// operator's act, and the instance pool keeps a margin beyond the
    /// permits for it.
    pub fn load(
        runtime: Arc<PluginRuntime>,
        name: &str,
        bytes: &[u8],
    ) -> Result<Self, PluginError> {
        let provisional: Arc<str> = Arc::from(format!("{}/{name}", W::KIND).as_str());
        let fail = |e: wasmtime::Error| PluginError::Load {
            plugin: provisional.to_string(),
            message: format!("{e:#}"),
        };
        let sha256 = sha256_hex(bytes);
        let component = runtime.compile(bytes, &sha256).map_err(fail)?;
        let imports = component
            .component_type()
            .imports(runtime.engine())
            .map(|(name, _)| name.to_string())
            .collect();
        let mut linker = Linker::new(runtime.engine());
        W::link(&mut linker).map_err(fail)?;
        // Whatever else the component imports (WASI included) traps: a
        // guest gets no filesystem, network, environment, process or clock.
        linker
            .define_unknown_imports_as_traps(&component)
            .map_err(fail)?;
        let pre = linker.instantiate_pre(&component).map_err(fail)?;
        let compiled = component.clone();
        let pre = W::pre(pre).map_err(fail)?;
        let mut plugin = Plugin {
            info: PluginInfo {
                kind: W::KIND,
                name: name.into(),
                version: "unknown".into(),
                sha256,
            },
            description: String::new(),
            label: provisional.clone(),
            imports,
            pre,
            component: compiled,
            runtime,
            ext: W::Ext::default(),
        };
        let mut first = plugin.instantiate()?;
        let identity = W::identify(&mut first.store, &first.bindings)
            .map_err(|e| plugin.classify(&first.store, e))?
            .map_err(|message| PluginError::Load {
                plugin: provisional.to_string(),
                message,
            })?;
        if let Some(name) = identity.name {
            plugin.info.name = name;
        }
        plugin.info.version = identity.version;
        plugin.description = identity.description;
        plugin.label = Arc::from(plugin.info.label().as_str());
        Ok(plugin)
    }

    /// Writes the compiled component to the runtime's module cache, if it
    /// has one and the file is not there yet: for components that are
    /// kept (a stored upload), never for one that was refused.
    pub fn keep_compiled(&self) {
        self.runtime
            .keep_compiled(&self.info.sha256, &self.component);
    }

    /// Bytes of its compiled image (code and data) in the host's memory:
    /// what keeping it costs, whatever its upload's size.
    pub fn compiled_bytes(&self) -> usize {
        let range = self.component.image_range();
        (range.end as usize).saturating_sub(range.start as usize)
    }

    /// Who this is.
    pub fn info(&self) -> &PluginInfo {
        &self.info
    }

    /// Its world.
    pub fn kind(&self) -> PluginKind {
        W::KIND
    }

    /// The component's one-sentence description of itself (strategies;
    /// empty for the other worlds).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// `kind/name@version`, shared with every store of this plugin.
    /// Whether its calls are metered in fuel (its runtime's setting).
    pub fn metered(&self) -> bool {
        self.runtime.config().fuel
    }

    /// What the component imports, by name (e.g.
    /// `forecast:plugins/host-log@0.1.0`, `wasi:cli/stdout@0.2.6`).
    pub fn imports(&self) -> &[String] {
        &self.imports
    }

    pub(crate) fn label(&self) -> &Arc<str> {
        &self.label
    }

    /// A fresh instance, in a store with a full call budget.
    fn instantiate(&self) -> Result<Instance<W>, PluginError> {
        let mut store = self.runtime.store(self.label.clone());
        W::prepare(&self.ext, store.data_mut());
        let bindings = W::instantiate(&self.pre, &mut store)
            .map_err(|e| self.runtime.instantiate_failed(&store, &self.label, e))?;
        Ok(Instance { store, bindings })
    }

    /// A fresh instance for calls made under `permit`.
    pub(crate) fn fresh_instance(&self, permit: &Permit) -> Result<Instance<W>, PluginError> {
        debug_assert!(permit.is_of(&self.runtime), "a permit of another runtime");
        self.instantiate()
    }

    /// One call in a fresh, bounded instance (blocking).
    pub(crate) fn call<R>(
        &self,
        permit: &Permit,
        f: impl FnOnce(&mut Store<CallState>, &W::Bindings) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        let started = Instant::now();
        let result = self.fresh_instance(permit).and_then(|mut live| {
            f(&mut live.store, &live.bindings).map_err(|e| self.classify(&live.store, e))
        });
        self.observe(started, &result);
        result
    }

    /// One more call on a kept instance, within `budget` (at most the call
    /// timeout; `None` is the full timeout). The caller drops an instance
    /// whose call failed: a trapped instance is never used again.
    pub(crate) fn call_on<R>(
        &self,
        _permit: &Permit,
        live: &mut Instance<W>,
        budget: Option<Duration>,
        f: impl FnOnce(&mut Store<CallState>, &W::Bindings) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        match budget {
            Some(budget) => self.runtime.set_deadline(&mut live.store, budget),
            None => self.runtime.reset_deadline(&mut live.store),
        }
        let started = Instant::now();
        let result = f(&mut live.store, &live.bindings).map_err(|e| self.classify(&live.store, e));
        self.observe(started, &result);
        result
    }

    /// Records one call's outcome on the current span (the guest call's)
    /// and in the process's metrics: `forecast_plugin_calls_total`
    /// by plugin (`kind/name`), version and outcome, and its duration. The
    /// label values are bounded by the registry (operators add versions).
    fn observe<R>(&self, started: Instant, result: &Result<R, PluginError>) {
        let outcome = match result {
            Ok(_) => "ok",
            Err(PluginError::Timeout { .. }) => "timeout",
            Err(PluginError::OutOfMemory { .. }) => "out_of_memory",
            Err(PluginError::OutOfFuel { .. }) => "out_of_fuel",
            Err(PluginError::Trap { .. }) => "trap",
            Err(_) => "error",
        };
        // The guest call's span (see `guest_span!`), when the caller entered one.
        let span = tracing::Span::current();
        span.record("outcome", outcome);
        if outcome != "ok" {
            span.record("otel.status_code", "ERROR");
        }
        let plugin = format!("{}/{}", self.info.kind, self.info.name);
        let version = self.info.version.clone();
        metrics::counter!(
            "forecast_plugin_calls_total",
            "plugin" => plugin.clone(),
            "version" => version.clone(),
            "outcome" => outcome
        )
        .increment(1);
        metrics::histogram!(
            "forecast_plugin_call_duration_seconds",
            "plugin" => plugin,
            "version" => version
        )
        .record(started.elapsed().as_secs_f64());
    }

    /// Turns a wasmtime error of a call into a [`PluginError`].
    pub(crate) fn classify(&self, store: &Store<CallState>, err: wasmtime::Error) -> PluginError {
        self.runtime.classify(store, &self.label, err)
    }

    /// A reply outside the world's contract, reported as a failed call.
    pub(crate) fn broken(&self, message: String) -> PluginError {
        PluginError::Trap {
            plugin: self.label.to_string(),
            message,
        }
    }
}
