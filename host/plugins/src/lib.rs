//! The plugin runtime: wasmtime's component model with the sandbox of
//! DESIGN.md §2.
//!
//! * Components are compiled once at load and pre-linked (`InstancePre`);
//!   a request only instantiates (pooling allocator, microseconds).
//! * Every call gets a fresh `Store` (so a trap never poisons a later call),
//!   a wall-clock deadline enforced by epoch interruption, and a memory cap
//!   over all of the instance's memories.
//! * Only the imports of the plugin's world are linked (`host-log`); anything
//!   else the component imports — e.g. the WASI interfaces the Rust standard
//!   library references — is linked to a trap, so a guest gets no
//!   filesystem, network, environment, process or clock.
//! * Concurrency is bounded by a semaphore sized below the instance pool.

pub mod llm;
pub mod matcher;
pub mod scorer;
pub mod segmentation;
pub mod strategy;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, ResourceLimiter,
};

pub use matcher::MatcherPlugin;
pub use scorer::ScorerPlugin;
pub use segmentation::{SegmentationPlugin, SegmentationSession};
pub use strategy::{StrategyPlugin, StrategyRun};

/// Linear memory kept resident per pool slot between instances.
const KEEP_RESIDENT_BYTES: usize = 16 << 20;

/// Instances kept warm between calls (the matcher's, with its catalog
/// loaded); the pool has this many slots beyond the concurrent calls.
pub(crate) const WARM_SLOTS: usize = 4;

/// How often the epoch advances; deadlines are whole ticks.
const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Limits applied to every plugin call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// Wall-clock budget of one call.
    pub call_timeout: Duration,
    /// Cap over the linear memories of one instance, in bytes.
    pub memory_limit: usize,
    /// Calls running at once (and the size of the instance pool / 2).
    pub max_concurrency: usize,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            call_timeout: Duration::from_secs(10),
            memory_limit: 256 << 20,
            max_concurrency: 16,
        }
    }
}

/// Identity of a loaded plugin version.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PluginInfo {
    /// Plugin kind (the WIT world), e.g. `segmentation`.
    pub kind: String,
    /// Plugin name within its kind, e.g. `default`.
    pub name: String,
    /// Semantic version.
    pub version: String,
    /// Hex SHA-256 of the component bytes.
    pub sha256: String,
}

impl PluginInfo {
    /// `kind/name@version`, the label used in errors and logs.
    pub fn label(&self) -> String {
        format!("{}/{}@{}", self.kind, self.name, self.version)
    }
}

/// A plugin failed in a way the host must turn into an error response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PluginError {
    /// The component did not compile, link or type-check against its world.
    #[error("plugin {plugin} could not be loaded: {message}")]
    Load {
        /// Label of the plugin.
        plugin: String,
        /// Why.
        message: String,
    },
    /// The call passed its wall-clock deadline.
    #[error("plugin {plugin} timed out after {millis} ms")]
    Timeout {
        /// Label of the plugin.
        plugin: String,
        /// The deadline.
        millis: u64,
    },
    /// The instance tried to grow its memory past the cap.
    #[error("plugin {plugin} exceeded its memory limit of {mib} MiB")]
    OutOfMemory {
        /// Label of the plugin.
        plugin: String,
        /// The cap.
        mib: usize,
    },
    /// The guest trapped (panic, unreachable, a denied import, …).
    #[error("plugin {plugin} failed: {message}")]
    Trap {
        /// Label of the plugin.
        plugin: String,
        /// The trap, without a backtrace.
        message: String,
    },
    /// The runtime has no capacity (should not happen: callers wait on the
    /// semaphore first).
    #[error("plugin {plugin} could not be instantiated: {message}")]
    Instantiate {
        /// Label of the plugin.
        plugin: String,
        /// Why.
        message: String,
    },
}

/// Per-call store data: the memory cap and the plugin's label for its logs.
pub(crate) struct CallState {
    pub(crate) limiter: MemoryCap,
    pub(crate) plugin: Arc<str>,
    /// The language model, lent to matcher instances only.
    pub(crate) llm: Option<Arc<crate::llm::LlmClient>>,
}

/// Caps the sum of an instance's linear memories and remembers whether the
/// cap was hit, so the resulting trap can be reported as out-of-memory.
pub(crate) struct MemoryCap {
    cap: usize,
    total: usize,
    exceeded: bool,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.total - current.min(self.total) + desired;
        if total > self.cap {
            self.exceeded = true;
            return Err(wasmtime::format_err!(
                "memory limit of {} MiB exceeded",
                self.cap >> 20
            ));
        }
        self.total = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1_000_000)
    }
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until dropped.
struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    fn start(engine: Engine) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("wasm-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .expect("spawn the epoch thread");
        EpochTicker {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The shared wasmtime engine, its limits and the concurrency bound.
pub struct PluginRuntime {
    engine: Engine,
    config: RuntimeConfig,
    permits: Arc<Semaphore>,
    _ticker: EpochTicker,
}

impl PluginRuntime {
    /// Builds the engine (pooling allocator, epoch interruption).
    pub fn new(config: RuntimeConfig) -> Result<Self, PluginError> {
        let slots = (config.max_concurrency * 2 + WARM_SLOTS).max(4) as u32;
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(slots)
            .total_core_instances(slots * 8)
            .total_memories(slots * 2)
            .total_tables(slots * 4)
            .max_memory_size(config.memory_limit)
            // Reset the first pages of a returned slot with memset instead of
            // madvise: the next instance then reuses them without page faults
            // (an analysis of 5,000 rows touches a few MiB).
            .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
            .table_keep_resident(64 << 10);
        let mut wasm = Config::new();
        wasm.wasm_component_model(true)
            .epoch_interruption(true)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&wasm).map_err(|e| PluginError::Load {
            plugin: "runtime".into(),
            message: e.to_string(),
        })?;
        Ok(PluginRuntime {
            _ticker: EpochTicker::start(engine.clone()),
            engine,
            permits: Arc::new(Semaphore::new(config.max_concurrency)),
            config,
        })
    }

    /// The limits in force.
    pub fn config(&self) -> RuntimeConfig {
        self.config
    }

    /// Waits for a free call slot (bounds concurrent guest calls).
    pub async fn acquire(&self) -> tokio::sync::OwnedSemaphorePermit {
        self.permits
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed")
    }

    /// Waits for `n` call slots at once (a job that runs `n` plugin
    /// instances in parallel); `n` is capped at the concurrency bound.
    pub async fn acquire_many(&self, n: u32) -> tokio::sync::OwnedSemaphorePermit {
        let n = n.clamp(1, self.config.max_concurrency as u32);
        self.permits
            .clone()
            .acquire_many_owned(n)
            .await
            .expect("the semaphore is never closed")
    }

    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// A fresh store for one call: deadline, memory cap, label.
    pub(crate) fn store(&self, plugin: Arc<str>) -> wasmtime::Store<CallState> {
        let mut store = wasmtime::Store::new(
            &self.engine,
            CallState {
                limiter: MemoryCap {
                    cap: self.config.memory_limit,
                    total: 0,
                    exceeded: false,
                },
                plugin,
                llm: None,
            },
        );
        store.limiter(|s| &mut s.limiter);
        self.reset_deadline(&mut store);
        store
    }

    /// Gives a store a full call budget from now (before each call of a
    /// reused instance).
    pub(crate) fn reset_deadline(&self, store: &mut wasmtime::Store<CallState>) {
        self.set_deadline(store, self.config.call_timeout);
    }

    /// Gives a store `budget` from now, at most the call timeout (a call
    /// inside a longer job gets what is left of the job's time).
    pub(crate) fn set_deadline(&self, store: &mut wasmtime::Store<CallState>, budget: Duration) {
        let budget = budget.min(self.config.call_timeout);
        let ticks = budget.as_millis().div_ceil(EPOCH_TICK.as_millis()) as u64;
        store.set_epoch_deadline(ticks.max(1));
    }

    /// Turns a failed instantiation into a [`PluginError`]: out-of-memory
    /// when the instance's initial memories passed the cap, else
    /// [`PluginError::Instantiate`].
    pub(crate) fn instantiate_failed(
        &self,
        store: &wasmtime::Store<CallState>,
        label: &str,
        err: wasmtime::Error,
    ) -> PluginError {
        if store.data().limiter.exceeded {
            return self.classify(store, label, err);
        }
        PluginError::Instantiate {
            plugin: label.to_string(),
            message: format!("{err:#}"),
        }
    }

    /// Turns a wasmtime error of a call into a [`PluginError`].
    pub(crate) fn classify(
        &self,
        store: &wasmtime::Store<CallState>,
        label: &str,
        err: wasmtime::Error,
    ) -> PluginError {
        if store.data().limiter.exceeded {
            return PluginError::OutOfMemory {
                plugin: label.to_string(),
                mib: self.config.memory_limit >> 20,
            };
        }
        if let Some(wasmtime::Trap::Interrupt) = err.downcast_ref::<wasmtime::Trap>() {
            return PluginError::Timeout {
                plugin: label.to_string(),
                millis: self.config.call_timeout.as_millis() as u64,
            };
        }
        let message = match err.downcast_ref::<wasmtime::Trap>() {
            Some(trap) => format!("trap: {trap}"),
            None => err.to_string(),
        };
        PluginError::Trap {
            plugin: label.to_string(),
            message,
        }
    }
}

/// Maps a wasmtime error while loading `label` to [`PluginError::Load`].
pub(crate) fn load_error(label: &str) -> impl Fn(wasmtime::Error) -> PluginError + '_ {
    move |e| PluginError::Load {
        plugin: label.to_string(),
        message: format!("{e:#}"),
    }
}

/// Compiles `bytes` once and pre-links it: `add_world` links the world's
/// own imports; every other import (WASI included) is linked to a trap.
pub(crate) fn prelink(
    runtime: &PluginRuntime,
    label: &str,
    bytes: &[u8],
    add_world: impl FnOnce(&mut wasmtime::component::Linker<CallState>) -> wasmtime::Result<()>,
) -> Result<wasmtime::component::InstancePre<CallState>, PluginError> {
    let fail = load_error(label);
    let component = wasmtime::component::Component::new(runtime.engine(), bytes).map_err(&fail)?;
    let mut linker = wasmtime::component::Linker::new(runtime.engine());
    add_world(&mut linker).map_err(&fail)?;
    linker
        .define_unknown_imports_as_traps(&component)
        .map_err(&fail)?;
    linker.instantiate_pre(&component).map_err(&fail)
}

/// Writes a guest's `host-log` line, tagged with its label and bounded in
/// length (guests are untrusted).
pub(crate) fn guest_log(plugin: &str, level: tracing::Level, message: &str) {
    let message: String = message.chars().take(2_000).collect();
    match level {
        tracing::Level::ERROR => tracing::error!(plugin, "{message}"),
        tracing::Level::WARN => tracing::warn!(plugin, "{message}"),
        tracing::Level::INFO => tracing::info!(plugin, "{message}"),
        _ => tracing::debug!(plugin, "{message}"),
    }
}

/// Hex SHA-256 of component bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The components of `components/manifest.txt` built by `make components`
/// and embedded in the binary (see `build.rs`).
pub mod builtin {
    use forecast_domain::PluginKind;

    /// Why a component is embedded.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Role {
        /// Registered in the registry at first start and served.
        Builtin,
        /// Embedded for tests only (misbehaving plugins, altered engines).
        Fixture,
    }

    /// One embedded component.
    #[derive(Debug, Clone, Copy)]
    pub struct Component {
        /// File stem in the manifest (`segmentation`, `topn`, …).
        pub stem: &'static str,
        /// The world it implements.
        pub kind: PluginKind,
        /// Why it is embedded.
        pub role: Role,
        /// The component; empty when the binary was built before
        /// `make components` (then loading it fails with that fix).
        pub bytes: &'static [u8],
    }

    include!(concat!(env!("OUT_DIR"), "/builtin.rs"));

    /// The components registered at first start, in manifest order.
    pub fn builtins() -> impl Iterator<Item = &'static Component> {
        ALL.iter().filter(|c| c.role == Role::Builtin)
    }

    /// An embedded component by file stem.
    pub fn by_stem(stem: &str) -> Option<&'static Component> {
        ALL.iter().find(|c| c.stem == stem)
    }
}

#[cfg(test)]
mod tests;
