//! Strategies uploaded by their authors (issue 26): each author's
//! strategies under the author's handle (`@handle/name`), their immutable
//! versions ((owner, name, version) → sha256, forever, even after a
//! delete), which version runs, and whether every Premium user may see
//! and run it (shared) or only its owner (private, the default).
//!
//! Nothing here decides who may see what beyond "owner or shared": the
//! service answers a private strategy of another owner exactly as a name
//! that does not exist.

use async_trait::async_trait;

use crate::StoreResult;

/// One stored version of an author's strategy (its bytes are fetched
/// separately with [`StrategyStore::upload_wasm`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadRecord {
    /// Owner's user id.
    pub owner_id: String,
    /// The strategy's bare name (what its component reports; without the
    /// `@handle/` prefix).
    pub name: String,
    /// Semantic version (what its component reports).
    pub version: String,
    /// Hex SHA-256 of the component bytes.
    pub sha256: String,
    /// Size of the component in bytes.
    pub size: i64,
    /// Key id of the bundle's signer, when it came signed.
    pub signer: Option<String>,
    /// The bundle's manifest as JSON, or for a bare component what it
    /// reports about itself (name, version, world, description, sha256).
    pub manifest: Option<String>,
    /// When, Unix seconds.
    pub uploaded_at: i64,
    /// What the component imports, by name.
    pub imports: Vec<String>,
}

/// An author's strategy as its listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthoredStrategy {
    /// Owner's user id.
    pub owner_id: String,
    /// Owner's handle (without `@`).
    pub handle: String,
    /// Bare name.
    pub name: String,
    /// The version that runs when a request names no version.
    pub current_version: String,
    /// Listed and runnable by every Premium user (else by its owner only).
    pub shared: bool,
    /// Every stored version, newest upload first.
    pub versions: Vec<UploadRecord>,
}

/// Per-owner bounds [`StrategyStore::add_upload`] enforces in the same
/// transaction as the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadLimits {
    /// Strategies (not deleted) one owner may have.
    pub strategies_per_owner: u32,
    /// Versions one strategy may have.
    pub versions_per_strategy: u32,
}

/// What [`StrategyStore::add_upload`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadOutcome {
    /// Stored; the first version of a strategy (or the first after a
    /// delete) becomes its current version, private.
    Added,
    /// The same (owner, name, version) with the same sha256 was there.
    AlreadyPresent,
    /// The (owner, name, version) is taken by other bytes (their sha256),
    /// also when the strategy was deleted since.
    Conflict(String),
    /// The owner already has `strategies_per_owner` strategies.
    TooManyStrategies,
    /// The strategy already has `versions_per_strategy` versions.
    TooManyVersions,
}

/// What a change of [`StrategyStore::update_strategy`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateOutcome {
    /// Applied.
    Updated,
    /// The owner has no such strategy (or it was deleted).
    NoStrategy,
    /// The strategy has no such version.
    NoVersion,
}

/// What one backtest used of one strategy component.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginRun {
    /// Hex SHA-256 of the component (built-in or uploaded).
    pub sha256: String,
    /// When, Unix seconds.
    pub ran_at: i64,
    /// Calls made (`start` and one per rebalance).
    pub calls: u64,
    /// Fuel used; `None` for a component that is not metered.
    pub fuel: Option<u64>,
    /// Time spent in the guest, milliseconds.
    pub guest_ms: f64,
    /// The most linear memory its instance held, bytes.
    pub peak_memory_bytes: u64,
    /// The account whose backtest it was.
    pub user_id: String,
}

/// The authors' strategies.
#[async_trait]
pub trait StrategyStore: Send + Sync {
    /// Stores a version and its bytes for `record.owner_id` under `handle`
    /// (one handle per owner; the same on every call), atomically with the
    /// checks of `limits` and of immutability. Re-adding a deleted
    /// strategy's name revives it with this version as current, private,
    /// its earlier versions' records kept (their bytes may be gone).
    async fn add_upload(
        &self,
        handle: &str,
        record: &UploadRecord,
        wasm: &[u8],
        limits: UploadLimits,
    ) -> StoreResult<UploadOutcome>;

    /// The strategy `@handle/name` unless deleted, whoever may see it.
    async fn authored_strategy(
        &self,
        handle: &str,
        name: &str,
    ) -> StoreResult<Option<AuthoredStrategy>>;

    /// The bytes of a version of a strategy that is not deleted.
    async fn upload_wasm(
        &self,
        owner_id: &str,
        name: &str,
        version: &str,
    ) -> StoreResult<Option<Vec<u8>>>;

    /// Every strategy (not deleted) that `viewer_id` owns or that is
    /// shared, by handle then name.
    async fn visible_strategies(&self, viewer_id: &str) -> StoreResult<Vec<AuthoredStrategy>>;

    /// Sets whether an owner's strategy is shared and/or which version
    /// runs (`None`: unchanged).
    async fn update_strategy(
        &self,
        owner_id: &str,
        name: &str,
        shared: Option<bool>,
        current_version: Option<&str>,
    ) -> StoreResult<UpdateOutcome>;

    /// Deletes an owner's strategy: no longer listed or runnable, its
    /// bytes dropped, its versions' (name, version, sha256) kept so they
    /// are never reused for other bytes. False when there was none.
    async fn delete_strategy(&self, owner_id: &str, name: &str) -> StoreResult<bool>;

    /// Records what a backtest used of a component, keeping only the
    /// newest `keep` runs of it by the same account.
    async fn record_plugin_run(&self, run: &PluginRun, keep: u32) -> StoreResult<()>;

    /// `user_id`'s kept runs of every component, newest first, at most
    /// `limit`.
    async fn plugin_runs(&self, user_id: &str, limit: u32) -> StoreResult<Vec<PluginRun>>;
}
