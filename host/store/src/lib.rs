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

use forecast_domain::series::PriceSeries;
use forecast_domain::{ApiKeyRecord, Asset, Category, DataSource, Tier, User};

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

impl CatalogEntry {
    /// A row with only what identifies it (the name is `"{ticker} Inc"`,
    /// NYSE, USD; everything else empty): for tests and tools.
    pub fn minimal(id: i64, ticker: &str, category: Category, active: bool) -> CatalogEntry {
        CatalogEntry {
            id,
            ticker: ticker.into(),
            name: format!("{ticker} Inc"),
            category,
            exchange: "NYSE".into(),
            currency: "USD".into(),
            country: String::new(),
            sector: String::new(),
            industry: String::new(),
            website: String::new(),
            summary: String::new(),
            isin: String::new(),
            is_active: active,
            is_premium: false,
        }
    }
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

/// One grading run (a day's grading by one engine and scorer version).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GradingRun {
    /// UUID.
    pub id: String,
    /// UTC day graded, `YYYY-MM-DD`.
    pub day: String,
    /// Segmentation plugin label.
    pub engine: String,
    /// Scorer plugin label.
    pub scorer: String,
    /// `running` or `done`.
    pub status: String,
    /// Unix seconds.
    pub started_at: i64,
    /// Unix seconds, once done.
    pub finished_at: Option<i64>,
    /// Assets to grade.
    pub total: i64,
    /// Assets graded.
    pub graded: i64,
    /// Assets that failed.
    pub failures: i64,
}

/// The graded state of one (asset, return period, metric).
#[derive(Debug, Clone, PartialEq)]
pub struct GradeRow {
    /// Asset.
    pub asset_id: i64,
    /// Horizon in days.
    pub return_period: u32,
    /// `return`, `sharpe` or `sortino`.
    pub metric: String,
    /// The asset's data version that was graded.
    pub data_version: i64,
    /// Grade letter.
    pub letter: String,
    /// Score.
    pub score: f64,
    /// EMA prediction.
    pub expected_return: f64,
    /// EMA error.
    pub prediction_error: f64,
    /// Median prediction.
    pub median_return: f64,
    /// Median error.
    pub median_error: f64,
    /// Drawdown at the last row.
    pub current_drawdown: f64,
    /// Last close.
    pub current_price: f64,
    /// Active segment's win rate (0 when it has none).
    pub win_rate: f64,
    /// The cached verdict, JSON.
    pub body: String,
}

/// A grade with the asset fields a ranking shows.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedRow {
    /// The grade.
    pub grade: GradeRow,
    /// Ticker.
    pub ticker: String,
    /// Name.
    pub name: String,
    /// Category.
    pub category: Category,
    /// Provenance of the prices graded.
    pub data_source: DataSource,
}

/// Counting helpers shared by the backends.
pub(crate) fn window_start(now: i64, seconds: i64) -> i64 {
    now - now.rem_euclid(seconds)
}

/// Everything the host stores. Implementations must make each method
/// atomic: a failed call leaves nothing half-written.
#[async_trait]
pub trait Database: PluginRegistry + Send + Sync + 'static {
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

    /// Active assets with at least `min_rows` price rows, by id.
    async fn gradable_assets(&self, min_rows: i64) -> StoreResult<Vec<i64>>;

    /// The run of (`day`, `engine`, `scorer`): created with one pending task
    /// per asset if it does not exist (atomically; concurrent callers get
    /// the same run), else returned as it is.
    async fn start_or_join_run(
        &self,
        day: &str,
        engine: &str,
        scorer: &str,
        asset_ids: &[i64],
        now: i64,
    ) -> StoreResult<GradingRun>;

    /// Claims up to `limit` tasks of a run for `worker`: pending ones, or
    /// claimed ones whose lease (`lease_seconds`) expired. Concurrent
    /// claimers never get the same task (SKIP LOCKED on PostgreSQL).
    async fn claim_grading_tasks(
        &self,
        run_id: &str,
        worker: &str,
        limit: u32,
        now: i64,
        lease_seconds: i64,
    ) -> StoreResult<Vec<i64>>;

    /// Stores grades and closes `worker`'s tasks (`done` graded, `failed`
    /// not) in one transaction. Tasks no longer claimed by `worker` (their
    /// lease expired and another replica took them) count nothing.
    async fn record_grades(
        &self,
        run_id: &str,
        worker: &str,
        grades: &[GradeRow],
        done: &[i64],
        failed: &[i64],
    ) -> StoreResult<()>;

    /// When no task of the run is pending or claimed: marks it done, makes
    /// it the active run and drops older runs' grades and tasks — one
    /// transaction. True only for the call that completed it.
    async fn finish_run_if_complete(&self, run_id: &str, now: i64) -> StoreResult<bool>;

    /// The run readers use (the last completed one).
    async fn active_grading_run(&self) -> StoreResult<Option<GradingRun>>;

    /// The most recently started run, complete or not.
    async fn latest_grading_run(&self) -> StoreResult<Option<GradingRun>>;

    /// A grade of a run.
    async fn grade(
        &self,
        run_id: &str,
        asset_id: i64,
        return_period: u32,
        metric: &str,
    ) -> StoreResult<Option<GradeRow>>;

    /// Every grade of a run for (period, metric) of an active asset.
    async fn ranking_rows(
        &self,
        run_id: &str,
        return_period: u32,
        metric: &str,
    ) -> StoreResult<Vec<RankedRow>>;
}

/// A stored plugin version (its bytes are fetched separately).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRecord {
    /// Kind (the WIT world): `segmentation`, `scorer`, `strategy`, `matcher`.
    pub kind: String,
    /// Name within the kind.
    pub name: String,
    /// Semantic version.
    pub version: String,
    /// Hex SHA-256 of the component bytes.
    pub sha256: String,
    /// Size of the component in bytes.
    pub size: i64,
    /// Registered from the binary's built-in components.
    pub builtin: bool,
    /// Who added it (`builtin`, `cli:<user>`, `admin-api`).
    pub added_by: String,
    /// When, Unix seconds.
    pub added_at: i64,
}

/// What [`Database::add_plugin`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddOutcome {
    /// Stored.
    Added,
    /// The same (kind, name, version) with the same sha256 was already there.
    AlreadyPresent,
    /// The (kind, name, version) is taken by other bytes (their sha256).
    Conflict(String),
}

/// One activation of a plugin version in a slot. A slot is what one
/// activation replaces: the kind for `segmentation`, `scorer` and `matcher`
/// (one active version per kind), `strategy/<name>` for strategies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivationRecord {
    /// Increasing id (the history's order).
    pub id: i64,
    /// The slot.
    pub slot: String,
    /// Kind of the activated version.
    pub kind: String,
    /// Name of the activated version.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Who activated it.
    pub activated_by: String,
    /// When, Unix seconds.
    pub activated_at: i64,
    /// Undone by a rollback (then it is never active again).
    pub rolled_back: bool,
}

/// A candidate version running beside the active one of its kind on a
/// sampled share of live requests.
#[derive(Debug, Clone, PartialEq)]
pub struct ShadowConfig {
    /// Kind (one shadow per kind).
    pub kind: String,
    /// Candidate name.
    pub name: String,
    /// Candidate version.
    pub version: String,
    /// Share of requests sampled, in (0, 1].
    pub sample: f64,
    /// Who started it.
    pub started_by: String,
    /// When, Unix seconds.
    pub started_at: i64,
}

/// One comparison of a shadow run.
#[derive(Debug, Clone, PartialEq)]
pub struct ShadowSample {
    /// Kind.
    pub kind: String,
    /// Label of the active version that answered.
    pub active: String,
    /// Label of the candidate.
    pub candidate: String,
    /// Whether both answers were identical.
    pub identical: bool,
    /// Active version's time, milliseconds.
    pub active_ms: f64,
    /// Candidate's time, milliseconds.
    pub candidate_ms: f64,
    /// The candidate's error, when it failed.
    pub error: Option<String>,
    /// JSON object: field → largest absolute difference.
    pub diffs: String,
    /// When, Unix seconds.
    pub at: i64,
}

/// The plugin registry (issue 6), part of [`Database`].
#[async_trait]
pub trait PluginRegistry: Send + Sync {
    /// Stores a version's record and bytes unless (kind, name, version) exists.
    async fn add_plugin(&self, record: &PluginRecord, wasm: &[u8]) -> StoreResult<AddOutcome>;

    /// Every stored version, by kind, name, then `added_at`.
    async fn list_plugins(&self) -> StoreResult<Vec<PluginRecord>>;

    /// One version's record.
    async fn plugin(
        &self,
        kind: &str,
        name: &str,
        version: &str,
    ) -> StoreResult<Option<PluginRecord>>;

    /// One version's bytes.
    async fn plugin_wasm(
        &self,
        kind: &str,
        name: &str,
        version: &str,
    ) -> StoreResult<Option<Vec<u8>>>;

    /// Appends an activation of (kind, name, version) to `slot`'s history
    /// and bumps the plugins generation, in one transaction.
    async fn activate_plugin(
        &self,
        slot: &str,
        kind: &str,
        name: &str,
        version: &str,
        by: &str,
        now: i64,
    ) -> StoreResult<ActivationRecord>;

    /// Marks `slot`'s current activation rolled back, so the one before it
    /// is active again, and bumps the generation, in one transaction
    /// (concurrent rollbacks each undo one activation). `None`, changing
    /// nothing, when the slot has fewer than two live activations.
    async fn rollback_plugin(&self, slot: &str, now: i64) -> StoreResult<Option<ActivationRecord>>;

    /// The current activation of every slot (its latest live one).
    async fn active_plugins(&self) -> StoreResult<Vec<ActivationRecord>>;

    /// A number that changes with every activation, rollback and shadow
    /// change (replicas poll it).
    async fn plugins_generation(&self) -> StoreResult<i64>;

    /// Starts (or replaces) the shadow run of `config.kind`; bumps the
    /// generation.
    async fn set_shadow(&self, config: &ShadowConfig) -> StoreResult<()>;

    /// Stops the shadow run of `kind` (true when there was one); bumps the
    /// generation.
    async fn clear_shadow(&self, kind: &str) -> StoreResult<bool>;

    /// Every running shadow.
    async fn shadows(&self) -> StoreResult<Vec<ShadowConfig>>;

    /// Records one comparison.
    async fn record_shadow_sample(&self, sample: &ShadowSample) -> StoreResult<()>;

    /// Comparisons of `kind` against `candidate` (a label), oldest first.
    async fn shadow_samples(&self, kind: &str, candidate: &str) -> StoreResult<Vec<ShadowSample>>;
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
