//! The shared wasmtime engine: the pooling allocator, the epoch ticker that
//! enforces deadlines, the per-call `Store` (deadline and memory cap), the
//! classification of a failed call, and the concurrency permits every call
//! must show.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, ResourceLimiter,
};

use crate::{PluginError, RuntimeConfig};

/// Linear memory kept resident per pool slot between instances.
const KEEP_RESIDENT_BYTES: usize = 16 << 20;

/// Instances kept warm between calls (the matcher's, with its catalog
/// loaded); the pool has this many slots beyond the concurrent calls.
pub(crate) const WARM_SLOTS: usize = 4;

/// Fuel for a metered store's instantiation and identity call.
const SETUP_FUEL: u64 = 1_000_000_000;

/// How often the epoch advances; deadlines are whole ticks
/// ([`PluginRuntime::set_deadline`]).
const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Per-call store data: the memory cap and the plugin's label for its logs.
pub struct CallState {
    limiter: MemoryCap,
    /// The fuel the current call was given (metered runtimes).
    pub(crate) fuel_budget: u64,
    pub(crate) plugin: Arc<str>,
    /// The language model, lent to matcher instances only.
    pub(crate) llm: Option<Arc<crate::llm::LlmClient>>,
    /// Meaning-based search over the catalog loaded in a matcher instance
    /// (set before each matcher call; matcher instances only).
    pub(crate) semantic: Option<Arc<dyn crate::matcher::Semantic>>,
    /// What the instance may still write through `host-log`.
    pub(crate) log: crate::LogBudget,
}

impl CallState {
    /// Bytes of linear memory the instance holds now.
    pub(crate) fn memory_in_use(&self) -> usize {
        self.limiter.total
    }
}

/// Caps the sum of an instance's linear memories and remembers whether the
/// cap was hit, so the resulting trap can be reported as out-of-memory.
struct MemoryCap {
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
    /// Compiled components on disk by sha256 (none: always compile).
    modules: Option<crate::cache::ModuleCache>,
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
            .consume_fuel(config.fuel)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        if config.perf_map {
            wasm.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&wasm).map_err(|e| PluginError::Load {
            plugin: "runtime".into(),
            message: e.to_string(),
        })?;
        Ok(PluginRuntime {
            _ticker: EpochTicker::start(engine.clone()),
            engine,
            permits: Arc::new(Semaphore::new(config.max_concurrency)),
            config,
            modules: None,
        })
    }

    /// Keeps the components this runtime compiles in `dir`, by sha256, and
    /// loads them from there instead of compiling them again
    /// ([`crate::cache`]). A folder that cannot be created is an error.
    pub fn set_module_cache(&mut self, dir: &std::path::Path) -> std::io::Result<()> {
        self.modules = Some(crate::cache::ModuleCache::open(dir, &self.engine)?);
        Ok(())
    }

    /// The on-disk cache of compiled components, when there is one.
    pub fn module_cache(&self) -> Option<&crate::cache::ModuleCache> {
        self.modules.as_ref()
    }

    /// Compiles `bytes` (hex SHA-256 `sha256`) for this engine, or loads
    /// them from the module cache (which a compilation does not write:
    /// [`Self::keep_compiled`] does, for what is kept).
    pub(crate) fn compile(
        &self,
        bytes: &[u8],
        sha256: &str,
    ) -> wasmtime::Result<wasmtime::component::Component> {
        match &self.modules {
            Some(cache) => cache.component(&self.engine, bytes, sha256),
            None => wasmtime::component::Component::new(&self.engine, bytes),
        }
    }

    /// Writes `component` (of bytes whose hex SHA-256 is `sha256`) to the
    /// module cache, if there is one.
    pub(crate) fn keep_compiled(&self, sha256: &str, component: &wasmtime::component::Component) {
        if let Some(cache) = &self.modules {
            cache.keep(sha256, component);
        }
    }

    /// The limits in force.
    pub fn config(&self) -> RuntimeConfig {
        self.config
    }

    /// Waits for a free call slot (bounds concurrent guest calls). Every
    /// plugin call takes the returned [`Permit`], so a call cannot be made
    /// without one.
    pub async fn acquire(&self) -> Permit {
        Permit::new(
            self.permits
                .clone()
                .acquire_owned()
                .await
                .expect("the semaphore is never closed"),
        )
    }

    /// A call slot if one is free now, without waiting (tests, benchmarks
    /// and other callers outside an async runtime).
    pub fn try_acquire(&self) -> Option<Permit> {
        self.permits
            .clone()
            .try_acquire_owned()
            .ok()
            .map(Permit::new)
    }

    /// Waits for `n` call slots at once (a job that runs `n` plugin
    /// instances in parallel); `n` is capped at the concurrency bound.
    /// Taken in one step, so two such jobs never each hold half of what
    /// they need.
    pub async fn acquire_many(&self, n: u32) -> Permits {
        let n = n.clamp(1, self.config.max_concurrency as u32);
        let all = self
            .permits
            .clone()
            .acquire_many_owned(n)
            .await
            .expect("the semaphore is never closed");
        Permits::split(all)
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
                fuel_budget: SETUP_FUEL,
                llm: None,
                semantic: None,
                log: crate::LogBudget {
                    ceiling: self.config.guest_log_ceiling,
                    ..crate::LogBudget::default()
                },
            },
        );
        store.limiter(|s| &mut s.limiter);
        self.reset_deadline(&mut store);
        if self.config.fuel {
            // Instantiation and the identity call; each metered call then
            // gets its own budget.
            store
                .set_fuel(SETUP_FUEL)
                .expect("fuel is enabled on this engine");
        }
        store
    }

    /// Gives a store a full call budget from now (before each call of a
    /// reused instance).
    pub(crate) fn reset_deadline(&self, store: &mut wasmtime::Store<CallState>) {
        self.set_deadline(store, self.config.call_timeout);
    }

    /// Gives a store `budget` from now, at most the call timeout (a call
    /// inside a longer job gets what is left of the job's time). The call
    /// never traps before `budget` has passed, so a job's caller can tell
    /// its own deadline by the clock: the first tick comes anywhere within
    /// one period, hence one tick more than the budget's (at most one
    /// period late).
    pub(crate) fn set_deadline(&self, store: &mut wasmtime::Store<CallState>, budget: Duration) {
        let budget = budget.min(self.config.call_timeout);
        let ticks = budget.as_micros().div_ceil(EPOCH_TICK.as_micros()) as u64;
        store.set_epoch_deadline(ticks + 1);
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
        if let Some(wasmtime::Trap::OutOfFuel) = err.downcast_ref::<wasmtime::Trap>() {
            return PluginError::OutOfFuel {
                plugin: label.to_string(),
                budget: store.data().fuel_budget,
            };
        }
        if let Some(wasmtime::Trap::Interrupt) = err.downcast_ref::<wasmtime::Trap>() {
            return PluginError::Timeout {
                plugin: label.to_string(),
                millis: self.config.call_timeout.as_millis() as u64,
            };
        }
        // What a client may read in a 500: the trap's one line, never the
        // wasm backtrace or an error chain (those go to the log).
        tracing::debug!(plugin = label, error = ?err, "plugin call failed");
        // The trap may sit under a backtrace context: look down the chain.
        let message = match err.chain().find_map(|e| e.downcast_ref::<wasmtime::Trap>()) {
            Some(trap) => format!("trap: {trap}"),
            None => err.root_cause().to_string(),
        };
        let message: String = message
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(MAX_TRAP_MESSAGE)
            .collect();
        PluginError::Trap {
            plugin: label.to_string(),
            message,
        }
    }
}

/// Longest trap message a client is shown (characters).
const MAX_TRAP_MESSAGE: usize = 200;

/// One call slot of the runtime. Every plugin call borrows one, so a guest
/// cannot run without it; the slot is free again when the permit drops.
/// `Send`, so it moves into `spawn_blocking` with the work it allows.
#[derive(Debug)]
pub struct Permit {
    slot: OwnedSemaphorePermit,
}

impl Permit {
    fn new(slot: OwnedSemaphorePermit) -> Self {
        Permit { slot }
    }

    /// Whether this permit is one of `runtime`'s slots (a permit of another
    /// runtime would not bound this one's pool).
    pub(crate) fn is_of(&self, runtime: &PluginRuntime) -> bool {
        Arc::ptr_eq(self.slot.semaphore(), &runtime.permits)
    }
}

/// Several call slots taken at once ([`PluginRuntime::acquire_many`]), one
/// [`Permit`] per parallel worker: each worker thread borrows its own.
#[derive(Debug)]
pub struct Permits {
    each: Vec<Permit>,
}

impl Permits {
    fn split(mut all: OwnedSemaphorePermit) -> Self {
        let mut each = Vec::with_capacity(all.num_permits());
        while all.num_permits() > 1 {
            let one = all.split(1).expect("more than one permit left");
            each.push(Permit::new(one));
        }
        each.push(Permit::new(all));
        Permits { each }
    }
}

impl std::ops::Deref for Permits {
    type Target = [Permit];

    fn deref(&self) -> &[Permit] {
        &self.each
    }
}

impl IntoIterator for Permits {
    type Item = Permit;
    type IntoIter = std::vec::IntoIter<Permit>;

    fn into_iter(self) -> Self::IntoIter {
        self.each.into_iter()
    }
}
