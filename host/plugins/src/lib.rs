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
//! * Concurrency is bounded by a semaphore sized below the instance pool,
//!   and every call takes a [`Permit`] of it: a call without one does not
//!   compile.
//!
//! [`runtime`] holds the engine and the permits, [`plugin`] the one loader
//! ([`Plugin`]`<W: World>`), and one module per WIT world its typed calls.

/// The span of one call into a guest, named after the WIT export
/// (`walk-forward`, `score`, …) and carrying the plugin's label
/// (`kind/name@version`); [`Plugin::call`] and [`Plugin::call_on`] record
/// the call's outcome on it. Entered on the thread that runs the guest, so
/// the guest's own `host-log` lines are logged inside it (and inside the
/// request's span, when the caller carried that onto the thread). INFO
/// unless a level is given (`rebalance`, once per rebalance date, is DEBUG).
macro_rules! guest_span {
    ($export:literal, $label:expr) => {
        guest_span!(tracing::Level::INFO, $export, $label)
    };
    ($level:expr, $export:literal, $label:expr) => {
        tracing::span!(
            $level,
            $export,
            plugin = &**$label,
            outcome = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        )
    };
}

pub mod cache;
pub mod llm;
pub mod matcher;
pub mod plugin;
pub mod runtime;
pub mod scorer;
pub mod segmentation;
pub mod shape;
pub mod strategy;

use std::time::Duration;

use forecast_domain::PluginKind;
use sha2::{Digest, Sha256};

pub use matcher::MatcherPlugin;
pub use plugin::{Plugin, World};
pub use runtime::{Permit, Permits, PluginRuntime};
pub use scorer::ScorerPlugin;
pub use segmentation::{SegmentationPlugin, SegmentationSession};
pub use strategy::{StrategyPlugin, StrategyRun};

/// Limits applied to every plugin call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// Wall-clock budget of one call.
    pub call_timeout: Duration,
    /// Cap over the linear memories of one instance, in bytes.
    pub memory_limit: usize,
    /// Calls running at once (and the size of the instance pool / 2).
    pub max_concurrency: usize,
    /// Write `/tmp/perf-<pid>.map` so `perf report` names the guests'
    /// functions (a profiling aid, `FORECAST_WASM_PERFMAP`).
    pub perf_map: bool,
    /// Meter every call in fuel (wasmtime's instruction count): the
    /// runtime of authors' uploaded strategies, whose calls get a budget
    /// that scales with their input and stop at the same point on every
    /// run ([`strategy::fuel_budget`]).
    pub fuel: bool,
    /// The loudest level a guest's `host-log` line is written at: a line
    /// the guest sends louder is written at this level (`ERROR`: as sent;
    /// authors' uploads get `FORECAST_UPLOAD_LOG_LEVEL`, `DEBUG` unless
    /// the operator raises it).
    pub guest_log_ceiling: tracing::Level,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            call_timeout: Duration::from_secs(10),
            memory_limit: 256 << 20,
            max_concurrency: 16,
            perf_map: false,
            fuel: false,
            guest_log_ceiling: tracing::Level::ERROR,
        }
    }
}

/// Identity of a loaded plugin version.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PluginInfo {
    /// Plugin kind (the WIT world), e.g. `segmentation`.
    pub kind: PluginKind,
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
    /// A metered call used up its fuel budget.
    #[error("plugin {plugin} used up its fuel budget of {budget} units for one call")]
    OutOfFuel {
        /// Label of the plugin.
        plugin: String,
        /// The call's budget.
        budget: u64,
    },
    /// The guest trapped (panic, unreachable, a denied import, …).
    #[error("plugin {plugin} failed: {message}")]
    Trap {
        /// Label of the plugin.
        plugin: String,
        /// The trap, without a backtrace.
        message: String,
    },
    /// The runtime has no capacity (should not happen: every call holds a
    /// permit of the semaphore, which is sized below the pool).
    #[error("plugin {plugin} could not be instantiated: {message}")]
    Instantiate {
        /// Label of the plugin.
        plugin: String,
        /// Why.
        message: String,
    },
}

/// Lines one plugin instance may write through `host-log` over its life
/// (one call, or one backtest run of a strategy); later lines are dropped
/// and counted.
pub const GUEST_LOG_LINES: u32 = 200;
/// Bytes (after escaping) one instance may write; the same rule.
pub const GUEST_LOG_BYTES: usize = 64 * 1024;
/// Characters kept of one line (after escaping).
const GUEST_LOG_LINE_CHARS: usize = 2_000;

/// What an instance has left to write, and what it had dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogBudget {
    /// Lines left.
    pub lines: u32,
    /// Bytes left.
    pub bytes: usize,
    /// Lines dropped so far.
    pub dropped: u64,
    /// The loudest level a line is written at
    /// ([`RuntimeConfig::guest_log_ceiling`]).
    pub ceiling: tracing::Level,
}

impl Default for LogBudget {
    fn default() -> Self {
        LogBudget {
            lines: GUEST_LOG_LINES,
            bytes: GUEST_LOG_BYTES,
            dropped: 0,
            ceiling: tracing::Level::ERROR,
        }
    }
}

impl LogBudget {
    /// Takes one line of `len` bytes from the budget: false (and counted as
    /// dropped) when the lines or bytes left cannot hold it.
    pub fn take(&mut self, len: usize) -> bool {
        if self.lines == 0 || len > self.bytes {
            self.dropped += 1;
            return false;
        }
        self.lines -= 1;
        self.bytes -= len;
        true
    }
}

/// A guest's message as one log line: control characters (newlines,
/// carriage returns, ESC, …) escaped as `\n`, `\u{1b}`, so no guest forges
/// a line or a terminal sequence, cut to [`GUEST_LOG_LINE_CHARS`].
pub fn escape_guest_line(message: &str) -> String {
    let mut out = String::new();
    let mut kept = 0;
    for c in message.chars() {
        if kept >= GUEST_LOG_LINE_CHARS {
            break;
        }
        if c.is_control() {
            for e in c.escape_default().take(GUEST_LOG_LINE_CHARS - kept) {
                out.push(e);
                kept += 1;
            }
        } else {
            out.push(c);
            kept += 1;
        }
    }
    out
}

/// Writes a guest's `host-log` line, tagged with its label, escaped and
/// bounded ([`escape_guest_line`]), within the instance's [`LogBudget`]:
/// the first line over it is replaced by one warning that further lines
/// are dropped; every dropped line counts in
/// `forecast_guest_log_dropped_total`.
pub(crate) fn guest_log(
    plugin: &str,
    budget: &mut LogBudget,
    level: tracing::Level,
    message: &str,
) {
    // Quieter is greater in `tracing`'s order (TRACE > DEBUG > … > ERROR).
    let level = level.max(budget.ceiling);
    let message = escape_guest_line(message);
    if !budget.take(message.len()) {
        metrics::counter!("forecast_guest_log_dropped_total").increment(1);
        if budget.dropped == 1 {
            tracing::warn!(
                plugin,
                "log budget spent ({GUEST_LOG_LINES} lines, {GUEST_LOG_BYTES} bytes per call or run): further lines dropped"
            );
        }
        return;
    }
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
        /// Registered in the registry at first start like a built-in, but
        /// never activated by that registration (an earlier version kept
        /// for comparison; an operator may activate it).
        Kept,
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

    /// The components registered and activated at first start, in
    /// manifest order.
    pub fn builtins() -> impl Iterator<Item = &'static Component> {
        ALL.iter().filter(|c| c.role == Role::Builtin)
    }

    /// The components registered at first start but never activated by
    /// it ([`Role::Kept`]), in manifest order.
    pub fn kept() -> impl Iterator<Item = &'static Component> {
        ALL.iter().filter(|c| c.role == Role::Kept)
    }
}

#[cfg(test)]
mod tests;
