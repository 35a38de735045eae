//! The one error type of the services layer. Its variants are the kinds of
//! failure a caller acts on (the HTTP layer maps each to a status code in
//! one place, `forecast-http`'s `error.rs`; the CLI prints the message);
//! the message names what went wrong for the person who sent the request.
//! Store and plugin failures keep their own types as sources.

use forecast_plugins::PluginError;
use forecast_store::StoreError;

/// Why a service could not answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request is invalid as it is (a parameter, a name, a version…).
    #[error("{0}")]
    Invalid(String),
    /// Unknown or inactive asset, unregistered plugin, someone else's key.
    #[error("{0}")]
    NotFound(String),
    /// Too few price rows to analyse.
    #[error("{0}")]
    InsufficientData(String),
    /// A plugin candidate failed its type check or self-tests; nothing changed.
    #[error("{0}")]
    Refused(String),
    /// Refused as [`Error::Refused`] for what an upload is or would compile
    /// into (its shape, its compiled size): not charged.
    #[error("{0}")]
    RefusedUncharged(String),
    /// The request conflicts with the current state (a sixth key, other
    /// bytes under a registered version, nothing to roll back to).
    #[error("{0}")]
    Conflict(String),
    /// The user's tier does not include this.
    #[error("{0}")]
    NotPremium(String),
    /// Unknown e-mail or wrong password (indistinguishable on purpose).
    #[error("{0}")]
    InvalidCredentials(String),
    /// A rate limit: retry after `retry_after` seconds.
    #[error("{detail}")]
    TooManyAttempts {
        /// Message.
        detail: String,
        /// Seconds until the window ends.
        retry_after: u64,
    },
    /// The server is at a capacity limit right now (e.g. concurrent password
    /// hashes): retry after `retry_after` seconds.
    #[error("{detail}")]
    Busy {
        /// Message.
        detail: String,
        /// Seconds to wait.
        retry_after: u64,
    },
    /// Something the answer needs is not there yet or is down (no grading
    /// snapshot, the attempt limiter): refused rather than guessed.
    #[error("{0}")]
    Unavailable(String),
    /// The work passed its time limit; the message says how to shrink it.
    #[error("{0}")]
    TimedOut(String),
    /// A batch (sweep, walk-forward) passed its time limit after `finished`
    /// of its runs had ended: charged by what ran.
    #[error("{detail}")]
    TimedOutAfter {
        /// Message, as [`Error::TimedOut`]'s.
        detail: String,
        /// Runs of the batch that had ended.
        finished: u32,
    },
    /// A plugin answered outside its contract or ended the work; the
    /// message names it.
    #[error("{0}")]
    PluginContract(String),
    /// A plugin trapped, ran out of time or memory.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Anything else (a lost worker thread, a cached body that won't parse).
    #[error("{0}")]
    Internal(String),
}

/// Result of a service call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<forecast_api::Invalid> for Error {
    fn from(e: forecast_api::Invalid) -> Self {
        Error::Invalid(e.0)
    }
}
