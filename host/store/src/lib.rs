//! The store: one trait per aggregate, one implementation per backend.
//!
//! Each aggregate of the host's state has its own trait — [`AccountStore`]
//! (users, sessions, API keys), [`AlertStore`] (alerts, their events;
//! webhook endpoints and the outbox in its supertrait [`WebhookStore`]), [`QuotaStore`] (counting windows),
//! [`AssetStore`] (catalog, price series, metadata), [`CacheStore`]
//! (cached analyses), [`SettingsStore`], [`GradingStore`] (runs, tasks,
//! grades), [`JobStore`] (work of the day split across replicas),
//! [`EmbeddingStore`] (the matcher's catalog vectors), [`GenerationStore`]
//! (the change counters in-memory copies check) and [`PluginRegistry`] —
//! so a service holds only the handles it
//! uses. [`Database`] is all of them plus [`StoreAdmin`], implemented for
//! every type that implements the parts; `Arc<dyn Database>` upcasts to any
//! part.
//!
//! The backend is chosen once at start-up from the `DATABASE_URL` scheme
//! (`sqlite:` or `postgres://`/`postgresql://`), each with its own
//! migrations behind the same traits. The backends live in `sqlite/` and
//! `postgres/`, one file per aggregate. What the dialects agree on is
//! written once: the statements in `sql`, the row decoding in `rows`, and
//! the trait methods whose code is the same for both next to their trait
//! (an `impl_…!` macro each backend instantiates, passing in only the
//! methods it does its own way: locking, batching, the quota counters).

mod accounts;
mod alerts;
mod assets;
mod caches;
mod embeddings;
mod generations;
mod grading;
mod jobs;
mod quotas;
mod registry;
mod rows;
mod sql;
mod strategies;
mod work_list;

mod postgres;
mod sqlite;

use std::sync::Arc;

use async_trait::async_trait;

pub use accounts::AccountStore;
pub use alerts::{
    AlertRecord, AlertState, AlertStore, Attempt, Claim, DeliveryRecord, DueDelivery, EventPage,
    EventRecord, NewEvent, Recorded, StateWrite, UserEvaluation, WebhookRecord, WebhookStore,
};
pub use assets::{AssetStore, CachedMetadata, CatalogEntry};
pub use caches::{CacheStore, SettingsStore};
pub use embeddings::{EmbeddingStore, StoredEmbedding};
pub use generations::{GenerationStore, Generations};
pub use grading::{
    AssetHistory, GradeCarry, GradeRow, GradingRun, GradingStore, RankedRow, TrackPoints,
    TrackedAsset,
};
pub use jobs::{JobRun, JobStore};
pub use postgres::PgStore;
pub use quotas::{Consumption, QuotaStore, Window, WindowUsage};
pub use registry::{
    ActivationRecord, AddOutcome, PluginRecord, PluginRegistry, ShadowConfig, ShadowSample,
};
pub use sqlite::SqliteStore;
pub use strategies::{
    AuthoredStrategy, PluginRun, StrategyStore, UpdateOutcome, UploadLimits, UploadOutcome,
    UploadRecord,
};

/// Every store trait, for call sites: `use forecast_store::prelude::*;`.
pub mod prelude {
    pub use crate::{
        AccountStore, AlertStore, AssetStore, CacheStore, Database, EmbeddingStore,
        GenerationStore, GradingStore, JobStore, PluginRegistry, QuotaStore, SettingsStore,
        StoreAdmin, StrategyStore, WebhookStore,
    };
}

/// Failure of the store. The message is for logs, never for clients.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database driver failed (connection, SQL, constraint).
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
    /// Applying migrations failed.
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A stored value does not decode.
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
    /// The URL names a backend this build does not support.
    #[error("unsupported DATABASE_URL '{0}': expected sqlite: or postgres://")]
    UnsupportedUrl(String),
    /// A write referred to an asset that does not exist.
    #[error("unknown asset id {0}")]
    UnknownAsset(i64),
    /// A unique value is taken (e.g. an e-mail address).
    #[error("{0} already exists")]
    Conflict(String),
}

/// Result alias for store operations.
pub type StoreResult<T> = Result<T, StoreError>;

/// Counts for `/api/health?debug=1` and the CLI.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct StoreCounts {
    /// Catalog rows.
    pub assets: i64,
    /// Active catalog rows.
    pub active_assets: i64,
    /// Assets with a stored price series.
    pub assets_with_prices: i64,
    /// Price rows over all series.
    pub price_rows: i64,
    /// Cached analyses.
    pub cached_analyses: i64,
    /// Cached metadata entries.
    pub cached_metadata: i64,
}

/// The connection itself: identity, liveness, shutdown and diagnostics
/// that span every aggregate.
#[async_trait]
pub trait StoreAdmin: Send + Sync {
    /// Name of the backend (`sqlite`, `postgres`) for diagnostics.
    fn backend(&self) -> &'static str;

    /// Round-trips a trivial query.
    async fn ping(&self) -> StoreResult<()>;

    /// Closes the connections (checkpointing SQLite's WAL), for CLI
    /// commands that exit right after writing.
    async fn close(&self);

    /// Row counts for diagnostics.
    async fn counts(&self) -> StoreResult<StoreCounts>;
}

/// [`StoreAdmin`] for a backend's store type (`$store`, with a `pool`
/// field) named `$backend`: the ping and the counts are the shared
/// statements; the backend passes in `close` (`$own`), which has its own
/// state to put away.
macro_rules! impl_store_admin {
    ($store:ty, $backend:literal { $($own:tt)* }) => {
        #[async_trait::async_trait]
        impl $crate::StoreAdmin for $store {
            fn backend(&self) -> &'static str {
                $backend
            }

            async fn ping(&self) -> $crate::StoreResult<()> {
                sqlx::query($crate::sql::PING).execute(&self.pool).await?;
                Ok(())
            }

            async fn counts(&self) -> $crate::StoreResult<$crate::StoreCounts> {
                let row = sqlx::query($crate::sql::COUNTS)
                    .fetch_one(&self.pool)
                    .await?;
                $crate::rows::counts(&row)
            }

            $($own)*
        }
    };
}
pub(crate) use impl_store_admin;

/// Declares [`Database`] as the sum of the `$part` traits and implements it
/// for every type implementing them all, so the list of parts is written
/// once.
macro_rules! database_of {
    ($(#[$doc:meta])* $($part:ident),+ $(,)?) => {
        $(#[$doc])*
        pub trait Database: $($part +)+ Send + Sync + 'static {}

        impl<T> Database for T where T: $($part +)+ Send + Sync + 'static {}
    };
}

database_of!(
    /// Everything the host stores: every aggregate's trait. Implementations
    /// must make each method atomic: a failed call leaves nothing half-written.
    ///
    /// Implemented for every type implementing all the parts, so a backend
    /// only implements those; `Arc<dyn Database>` upcasts to
    /// `Arc<dyn AssetStore>` and the like for narrow handles.
    StoreAdmin,
    AccountStore,
    AlertStore,
    QuotaStore,
    AssetStore,
    CacheStore,
    SettingsStore,
    EmbeddingStore,
    GenerationStore,
    GradingStore,
    JobStore,
    PluginRegistry,
    StrategyStore,
);

/// Whether `e` is a unique-constraint violation (e.g. a taken e-mail).
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

/// Opens (creating if needed) and migrates the database at `url`; rows
/// whose time the callers do not pass (`created_at`-style columns) are
/// dated by the system clock.
pub async fn connect(url: &str) -> StoreResult<Arc<dyn Database>> {
    connect_with_clock(url, forecast_domain::SystemClock::shared()).await
}

/// [`connect`], dating those rows by `clock`.
pub async fn connect_with_clock(
    url: &str,
    clock: forecast_domain::SharedClock,
) -> StoreResult<Arc<dyn Database>> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::open_with_clock(url, clock).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PgStore::open_with_clock(url, clock).await?))
    } else {
        Err(StoreError::UnsupportedUrl(redact(url)))
    }
}

/// The lock a serving process holds on a SQLite database: SQLite is the
/// one-process deployment (its quota counters live in the serving
/// process), so a second `forecast serve` on the same file is refused
/// instead of counting on its own. CLI commands (ingest, keys, plugins)
/// do not take it. Released when dropped or when the process dies.
#[derive(Debug)]
pub struct ServeLock {
    _file: std::fs::File,
}

/// Error of [`ServeLock::acquire`].
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process serves the file.
    #[error(
        "another `forecast serve` ({holder}) is already serving {path}; a SQLite database \
         is served by one process (its quota counters live in that process): stop it, \
         or serve several replicas from PostgreSQL"
    )]
    Held {
        /// The database file.
        path: String,
        /// What the lock file says about its holder.
        holder: String,
    },
    /// The lock file cannot be opened.
    #[error("cannot open the lock file {path}: {source}")]
    Io {
        /// The lock file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

impl ServeLock {
    /// Takes the serving lock of `url` when it names a SQLite file
    /// (`<file>.serve-lock` beside it); `None` for PostgreSQL and
    /// in-memory databases, which need none.
    pub fn acquire(url: &str) -> Result<Option<ServeLock>, LockError> {
        use std::io::{Read, Seek, Write};
        let Some(path) = sqlite_file(url) else {
            return Ok(None);
        };
        let lock_path = format!("{}.serve-lock", path.display());
        let io = |source| LockError::Io {
            path: lock_path.clone(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(LockError::Held {
                    path: path.display().to_string(),
                    holder: if holder.is_empty() {
                        "another process".into()
                    } else {
                        holder.to_string()
                    },
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        write!(file, "pid {}", std::process::id()).map_err(io)?;
        Ok(Some(ServeLock { _file: file }))
    }
}

/// The file of a `sqlite:` URL (`None` for other backends and `:memory:`).
fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    use std::str::FromStr;
    if !url.starts_with("sqlite:") || url.contains(":memory:") || url.contains("mode=memory") {
        return None;
    }
    let options = sqlx::sqlite::SqliteConnectOptions::from_str(url).ok()?;
    Some(options.get_filename().to_path_buf())
}

/// The URL without credentials, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://***@{}", &url[..s], &url[at + 1..]),
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests;
