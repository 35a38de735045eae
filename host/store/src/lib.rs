//! The store: one trait per aggregate, one implementation per backend.
//!
//! Each aggregate of the host's state has its own trait — [`AccountStore`]
//! (users, sessions, API keys), [`QuotaStore`] (counting windows),
//! [`AssetStore`] (catalog, price series, metadata), [`CacheStore`]
//! (cached analyses), [`SettingsStore`], [`GradingStore`] (runs, tasks,
//! grades) and [`PluginRegistry`] — so a service holds only the handles it
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
mod assets;
mod caches;
mod grading;
mod quotas;
mod registry;
mod rows;
mod sql;

mod postgres;
mod sqlite;

use std::sync::Arc;

use async_trait::async_trait;

pub use accounts::AccountStore;
pub use assets::{AssetStore, CachedMetadata, CatalogEntry};
pub use caches::{CacheStore, SettingsStore};
pub use grading::{GradeRow, GradingRun, GradingStore, RankedRow};
pub use postgres::PgStore;
pub use quotas::{Consumption, QuotaStore, Window, WindowUsage};
pub use registry::{
    ActivationRecord, AddOutcome, PluginRecord, PluginRegistry, ShadowConfig, ShadowSample,
};
pub use sqlite::SqliteStore;

/// Every store trait, for call sites: `use forecast_store::prelude::*;`.
pub mod prelude {
    pub use crate::{
        AccountStore, AssetStore, CacheStore, Database, GradingStore, PluginRegistry, QuotaStore,
        SettingsStore, StoreAdmin,
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

/// Everything the host stores: every aggregate's trait. Implementations
/// must make each method atomic: a failed call leaves nothing half-written.
///
/// Implemented for every type implementing all the parts, so a backend
/// only implements those; `Arc<dyn Database>` upcasts to
/// `Arc<dyn AssetStore>` and the like for narrow handles.
pub trait Database:
    StoreAdmin
    + AccountStore
    + QuotaStore
    + AssetStore
    + CacheStore
    + SettingsStore
    + GradingStore
    + PluginRegistry
    + Send
    + Sync
    + 'static
{
}

impl<T> Database for T where
    T: StoreAdmin
        + AccountStore
        + QuotaStore
        + AssetStore
        + CacheStore
        + SettingsStore
        + GradingStore
        + PluginRegistry
        + Send
        + Sync
        + 'static
{
}

/// Whether `e` is a unique-constraint violation (e.g. a taken e-mail).
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

/// The wall clock, Unix seconds (for `created_at`-style columns the
/// callers do not pass).
pub(crate) fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Opens (creating if needed) and migrates the database at `url`.
pub async fn connect(url: &str) -> StoreResult<Arc<dyn Database>> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::open(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PgStore::open(url).await?))
    } else {
        Err(StoreError::UnsupportedUrl(redact(url)))
    }
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
