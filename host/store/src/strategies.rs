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

// Every method's SQL is the same on both backends; only how a write begins
// differs. `$owner_tx(owner_id)` is `$store`'s method beginning a
// transaction that no other write of that owner's strategies runs beside
// (with its guard); `write_tx()` begins a write transaction (with its guard).
macro_rules! impl_strategy_store {
    ($store:ty, $db:ty, owner_tx: $owner_tx:ident) => {
        const _: () = {
            use $crate::rows::Cols;

            impl $store {
                /// Stores `wasm` again for `record`'s version if its bytes were dropped.
                async fn restore_wasm(
                    tx: &mut sqlx::Transaction<'_, $db>,
                    record: &$crate::UploadRecord,
                    wasm: &[u8],
                ) -> $crate::StoreResult<()> {
                    sqlx::query($crate::sql::RESTORE_WASM)
                        .bind(&record.owner_id)
                        .bind(&record.name)
                        .bind(&record.version)
                        .bind(wasm)
                        .execute(&mut **tx)
                        .await?;
                    Ok(())
                }

                /// Whether the owner's strategy `name` is deleted (`None`:
                /// there never was one), read in `tx`.
                async fn strategy_deleted(
                    tx: &mut sqlx::Transaction<'_, $db>,
                    owner_id: &str,
                    name: &str,
                ) -> $crate::StoreResult<Option<bool>> {
                    sqlx::query($crate::sql::STRATEGY_DELETED)
                        .bind(owner_id)
                        .bind(name)
                        .fetch_optional(&mut **tx)
                        .await?
                        .map(|r| r.flag("deleted"))
                        .transpose()
                }
            }

            #[async_trait::async_trait]
            impl $crate::StrategyStore for $store {
                async fn add_upload(
                    &self,
                    handle: &str,
                    record: &$crate::UploadRecord,
                    wasm: &[u8],
                    limits: $crate::UploadLimits,
                ) -> $crate::StoreResult<$crate::UploadOutcome> {
                    let (owner, name, version) = (&record.owner_id, &record.name, &record.version);
                    let (_guard, mut tx) = self.$owner_tx(owner).await?;
                    let deleted = Self::strategy_deleted(&mut tx, owner, name).await?;
                    // Live: listed, counted against the owner's strategies.
                    let live = deleted == Some(false);
                    let existing = sqlx::query($crate::sql::UPLOAD_SHA256)
                        .bind(owner)
                        .bind(name)
                        .bind(version)
                        .fetch_optional(&mut *tx)
                        .await?
                        .map(|r| r.text("sha256"))
                        .transpose()?;
                    match existing {
                        Some(sha) if sha != record.sha256 => {
                            tx.rollback().await?;
                            return Ok($crate::UploadOutcome::Conflict(sha));
                        }
                        Some(_) if live => {
                            // The same bytes again: nothing to store (but bytes dropped
                            // by an earlier delete come back).
                            Self::restore_wasm(&mut tx, record, wasm).await?;
                            tx.commit().await?;
                            return Ok($crate::UploadOutcome::AlreadyPresent);
                        }
                        _ => {}
                    }
                    if !live {
                        let n = sqlx::query($crate::sql::COUNT_LIVE_STRATEGIES)
                            .bind(owner)
                            .fetch_one(&mut *tx)
                            .await?
                            .int("n")?;
                        if n >= i64::from(limits.strategies_per_owner) {
                            tx.rollback().await?;
                            return Ok($crate::UploadOutcome::TooManyStrategies);
                        }
                    }
                    if existing.is_some() {
                        // A deleted strategy's version uploaded again with its bytes:
                        // revived with it current, no new version counted.
                        Self::restore_wasm(&mut tx, record, wasm).await?;
                    } else {
                        let n = sqlx::query($crate::sql::COUNT_VERSIONS)
                            .bind(owner)
                            .bind(name)
                            .fetch_one(&mut *tx)
                            .await?
                            .int("n")?;
                        if n >= i64::from(limits.versions_per_strategy) {
                            tx.rollback().await?;
                            return Ok($crate::UploadOutcome::TooManyVersions);
                        }
                        sqlx::query($crate::sql::INSERT_UPLOAD)
                            .bind(owner)
                            .bind(name)
                            .bind(version)
                            .bind(n + 1)
                            .bind(&record.sha256)
                            .bind(record.size)
                            .bind(record.signer.as_deref())
                            .bind(record.manifest.as_deref())
                            .bind(wasm)
                            .bind(record.uploaded_at)
                            .bind(serde_json::to_string(&record.imports).unwrap_or_default())
                            .execute(&mut *tx)
                            .await?;
                    }
                    if !live {
                        sqlx::query($crate::sql::CREATE_OR_REVIVE)
                            .bind(owner)
                            .bind(handle)
                            .bind(name)
                            .bind(version)
                            .bind(record.uploaded_at)
                            .execute(&mut *tx)
                            .await?;
                    }
                    tx.commit().await?;
                    Ok($crate::UploadOutcome::Added)
                }

                async fn authored_strategy(
                    &self,
                    handle: &str,
                    name: &str,
                ) -> $crate::StoreResult<Option<$crate::AuthoredStrategy>> {
                    let rows = sqlx::query($crate::sql::AUTHORED)
                        .bind(handle)
                        .bind(name)
                        .fetch_all(&self.pool)
                        .await?;
                    Ok($crate::rows::strategies(&rows)?.into_iter().next())
                }

                async fn upload_wasm(
                    &self,
                    owner_id: &str,
                    name: &str,
                    version: &str,
                ) -> $crate::StoreResult<Option<Vec<u8>>> {
                    let row = sqlx::query($crate::sql::UPLOAD_WASM)
                        .bind(owner_id)
                        .bind(name)
                        .bind(version)
                        .fetch_optional(&self.pool)
                        .await?;
                    row.map(|r| r.bytes("wasm")).transpose()
                }

                async fn visible_strategies(
                    &self,
                    viewer_id: &str,
                ) -> $crate::StoreResult<Vec<$crate::AuthoredStrategy>> {
                    let rows = sqlx::query($crate::sql::VISIBLE)
                        .bind(viewer_id)
                        .fetch_all(&self.pool)
                        .await?;
                    $crate::rows::strategies(&rows)
                }

                async fn update_strategy(
                    &self,
                    owner_id: &str,
                    name: &str,
                    shared: Option<bool>,
                    current_version: Option<&str>,
                ) -> $crate::StoreResult<$crate::UpdateOutcome> {
                    let (_guard, mut tx) = self.$owner_tx(owner_id).await?;
                    let deleted = Self::strategy_deleted(&mut tx, owner_id, name).await?;
                    if deleted != Some(false) {
                        tx.rollback().await?;
                        return Ok($crate::UpdateOutcome::NoStrategy);
                    }
                    if let Some(version) = current_version {
                        // A version whose bytes went with an earlier delete cannot run.
                        let found = sqlx::query($crate::sql::VERSION_HAS_BYTES)
                            .bind(owner_id)
                            .bind(name)
                            .bind(version)
                            .fetch_optional(&mut *tx)
                            .await?;
                        if found.is_none() {
                            tx.rollback().await?;
                            return Ok($crate::UpdateOutcome::NoVersion);
                        }
                    }
                    sqlx::query($crate::sql::UPDATE_STRATEGY)
                        .bind(owner_id)
                        .bind(name)
                        .bind(shared)
                        .bind(current_version)
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    Ok($crate::UpdateOutcome::Updated)
                }

                async fn delete_strategy(
                    &self,
                    owner_id: &str,
                    name: &str,
                ) -> $crate::StoreResult<bool> {
                    let (_guard, mut tx) = self.$owner_tx(owner_id).await?;
                    let marked = sqlx::query($crate::sql::MARK_DELETED)
                        .bind(owner_id)
                        .bind(name)
                        .execute(&mut *tx)
                        .await?;
                    if marked.rows_affected() == 0 {
                        tx.rollback().await?;
                        return Ok(false);
                    }
                    sqlx::query($crate::sql::DROP_WASM)
                        .bind(owner_id)
                        .bind(name)
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    Ok(true)
                }

                async fn record_plugin_run(
                    &self,
                    run: &$crate::PluginRun,
                    keep: u32,
                ) -> $crate::StoreResult<()> {
                    let (_guard, mut tx) = self.write_tx().await?;
                    $crate::sql::record_plugin_run!(tx, run, keep);
                    tx.commit().await?;
                    Ok(())
                }

                async fn plugin_runs(
                    &self,
                    user_id: &str,
                    limit: u32,
                ) -> $crate::StoreResult<Vec<$crate::PluginRun>> {
                    let rows = sqlx::query($crate::sql::PLUGIN_RUNS)
                        .bind(i64::from(limit))
                        .bind(user_id)
                        .fetch_all(&self.pool)
                        .await?;
                    rows.iter().map($crate::rows::plugin_run).collect()
                }
            }
        };
    };
}
pub(crate) use impl_strategy_store;
