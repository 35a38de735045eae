//! Logging from a strategy. In a plugin, each line goes to the host's log
//! through the `host-log` import, tagged with the plugin's name and
//! version; natively (unit tests, the harness) it is printed to stderr.
//!
//! ```
//! use forecast_sdk::log;
//! log::info("entering 3 positions");
//! log::warn(&format!("{} assets without a z-score", 2));
//! ```

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Detailed diagnostics.
    Debug,
    /// Normal operation.
    Info,
    /// Something unexpected that the strategy recovered from.
    Warn,
    /// Something failed.
    Error,
}

impl Level {
    /// Lower-case name, as printed natively.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// Writes one line at `level`.
pub fn log(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    {
        use crate::bindings::forecast::plugins::host_log;
        let level = match level {
            Level::Debug => host_log::Level::Debug,
            Level::Info => host_log::Level::Info,
            Level::Warn => host_log::Level::Warn,
            Level::Error => host_log::Level::Error,
        };
        host_log::log(level, message);
    }
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[{}] {message}", level.as_str());
}

/// Writes a debug line.
pub fn debug(message: &str) {
    log(Level::Debug, message);
}

/// Writes an info line.
pub fn info(message: &str) {
    log(Level::Info, message);
}

/// Writes a warning.
pub fn warn(message: &str) {
    log(Level::Warn, message);
}

/// Writes an error line.
pub fn error(message: &str) {
    log(Level::Error, message);
}
