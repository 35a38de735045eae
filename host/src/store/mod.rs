//! The store: one [`Database`] trait, one implementation per backend.
//!
//! The backend is chosen once at start-up from the `DATABASE_URL` scheme
//! (`sqlite:` or `postgres://`/`postgresql://`), each with its own migrations
//! behind the same trait. Everything above this module talks to
//! `Arc<dyn Database>` only.

mod postgres;
mod sqlite;

use std::sync::Arc;

use async_trait::async_trait;

use crate::domain::{ApiKeyRecord, Asset, Category, DataSource, Tier, User};
use crate::series::PriceSeries;

pub use postgres::PgStore;
pub use sqlite::SqliteStore;

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

/// A catalog row to insert or update (everything but the id-derived and
/// price-derived columns).
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    /// Stable id (catalog row number).
    pub id: i64,
    /// Ticker symbol.
    pub ticker: String,
    /// Display name.
    pub name: String,
    /// Category.
    pub category: Category,
    /// Exchange.
    pub exchange: String,
    /// Currency.
    pub currency: String,
    /// Country.
    pub country: String,
    /// Sector.
    pub sector: String,
    /// Industry.
    pub industry: String,
    /// Web site.
    pub website: String,
    /// Summary.
    pub summary: String,
    /// ISIN.
    pub isin: String,
    /// Active flag.
    pub is_active: bool,
    /// Premium flag.
    pub is_premium: bool,
}

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

/// A cached metadata document and when it was fetched (Unix seconds).
#[derive(Debug, Clone, PartialEq)]
pub struct CachedMetadata {
    /// JSON of the provider's answer.
    pub body: String,
    /// Unix seconds of the fetch.
    pub fetched_at: i64,
}

/// One fixed, UTC-aligned counting window (e.g. a quota minute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Name of the window (`minute`, `day`, `login`), part of the row key.
    pub kind: &'static str,
    /// Length in seconds; windows start at multiples of it since the epoch.
    pub seconds: i64,
    /// Units allowed per window.
    pub limit: u32,
}

/// A window's state after a [`Database::consume`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowUsage {
    /// Which window.
    pub kind: &'static str,
    /// Units allowed.
    pub limit: u32,
    /// Units used, including this request when admitted.
    pub used: u32,
    /// Unix seconds when the window ends.
    pub reset: i64,
}

impl WindowUsage {
    /// Units left in the window.
    pub fn remaining(&self) -> u32 {
        self.limit.saturating_sub(self.used)
    }
}

/// The answer of [`Database::consume`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consumption {
    /// True when `cost` fit in every window and was counted.
    pub admitted: bool,
    /// One entry per requested window, in order.
    pub windows: Vec<WindowUsage>,
}

/// Counting helpers shared by the backends.
pub(crate) fn window_start(now: i64, seconds: i64) -> i64 {
    now - now.rem_euclid(seconds)
}

/// Everything the host stores. Implementations must make each method
/// atomic: a failed call leaves nothing half-written.
#[async_trait]
pub trait Database: Send + Sync + 'static {
    /// Name of the backend (`sqlite`, `postgres`) for diagnostics.
    fn backend(&self) -> &'static str;

    /// Round-trips a trivial query.
    async fn ping(&self) -> StoreResult<()>;

    /// Closes the connections (checkpointing SQLite's WAL), for CLI
    /// commands that exit right after writing.
    async fn close(&self);

    /// Row counts for diagnostics.
    async fn counts(&self) -> StoreResult<StoreCounts>;

    /// Inserts or updates catalog rows by id in one transaction. Existing
    /// rows keep their prices, data source and data version.
    async fn upsert_catalog(&self, entries: &[CatalogEntry]) -> StoreResult<()>;

    /// Active assets ordered by id, optionally of one category.
    async fn list_active_assets(&self, category: Option<Category>) -> StoreResult<Vec<Asset>>;

    /// The asset with this ticker (exact match), active or not.
    async fn asset_by_ticker(&self, ticker: &str) -> StoreResult<Option<Asset>>;

    /// The asset's whole stored series, if any.
    async fn load_series(&self, asset_id: i64) -> StoreResult<Option<PriceSeries>>;

    /// Replaces the stored series of each asset, sets its data source, bumps
    /// its data version and drops its cached analyses: all in one
    /// transaction, so a failure writes nothing.
    async fn store_series(&self, items: &[(i64, &PriceSeries, DataSource)]) -> StoreResult<()>;

    /// Cached metadata of an asset.
    async fn cached_metadata(&self, asset_id: i64) -> StoreResult<Option<CachedMetadata>>;

    /// Stores (replaces) an asset's metadata.
    async fn put_metadata(&self, asset_id: i64, body: &str, fetched_at: i64) -> StoreResult<()>;

    /// A cached analysis body by key.
    async fn cached_analysis(&self, key: &str) -> StoreResult<Option<String>>;

    /// Stores a cached analysis body (replacing one with the same key).
    async fn put_analysis(&self, key: &str, asset_id: i64, body: &str) -> StoreResult<()>;

    /// A setting by key.
    async fn setting(&self, key: &str) -> StoreResult<Option<String>>;

    /// Stores a setting.
    async fn set_setting(&self, key: &str, value: &str) -> StoreResult<()>;

    /// Creates a user (`email` already lower-cased); `Conflict` if taken.
    async fn create_user(
        &self,
        email: &str,
        password_hash: &str,
        tier: Tier,
        now: i64,
    ) -> StoreResult<User>;

    /// A user and their password hash by (lower-cased) e-mail.
    async fn user_by_email(&self, email: &str) -> StoreResult<Option<(User, String)>>;

    /// Changes a user's tier; `None` if there is no such user.
    async fn set_user_tier(&self, email: &str, tier: Tier) -> StoreResult<Option<User>>;

    /// Sets (or clears, with `None`) a user's quota overrides.
    async fn set_user_limits(
        &self,
        email: &str,
        per_minute: Option<u32>,
        per_day: Option<u32>,
    ) -> StoreResult<Option<User>>;

    /// Every user, by e-mail.
    async fn list_users(&self) -> StoreResult<Vec<User>>;

    /// Stores a session by the SHA-256 of its token.
    async fn create_session(
        &self,
        token_hash: &str,
        user_id: &str,
        now: i64,
        expires_at: i64,
    ) -> StoreResult<()>;

    /// The user of an unexpired session.
    async fn session_user(&self, token_hash: &str, now: i64) -> StoreResult<Option<User>>;

    /// Ends a session (no-op if unknown).
    async fn delete_session(&self, token_hash: &str) -> StoreResult<()>;

    /// Creates a key unless the user already has `max_active` active keys
    /// (then `None`). Atomic: concurrent creations never exceed the limit.
    async fn create_api_key(
        &self,
        user_id: &str,
        name: &str,
        key_hash: &str,
        key_prefix: &str,
        max_active: u32,
        now: i64,
    ) -> StoreResult<Option<ApiKeyRecord>>;

    /// The user's active keys, newest first.
    async fn list_api_keys(&self, user_id: &str) -> StoreResult<Vec<ApiKeyRecord>>;

    /// Soft-revokes the user's active key `key_id`; false when there is no
    /// such active key of that user.
    async fn revoke_api_key(&self, user_id: &str, key_id: &str, now: i64) -> StoreResult<bool>;

    /// The active key with this hash and its owner.
    async fn api_key_user(&self, key_hash: &str) -> StoreResult<Option<(ApiKeyRecord, User)>>;

    /// Sets `last_used_at = now` unless it was set less than a minute ago.
    async fn touch_api_key(&self, key_id: &str, now: i64) -> StoreResult<()>;

    /// Counts `cost` units for `subject` in every window, only if it fits in
    /// all of them — one atomic step, across processes sharing the store.
    /// Rejected attempts count nothing.
    async fn consume(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<Consumption>;
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
pub(crate) mod tests;
