//! The plugin registry (issue 6): stored versions and their bytes, the
//! activation history per slot, the generation replicas poll, shadow runs
//! and their samples.

use async_trait::async_trait;

use forecast_domain::PluginKind;

use crate::StoreResult;

/// A stored plugin version (its bytes are fetched separately).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRecord {
    /// Kind (the WIT world).
    pub kind: PluginKind,
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

/// What [`PluginRegistry::add_plugin`] did.
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
    pub kind: PluginKind,
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
    pub kind: PluginKind,
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
    pub kind: PluginKind,
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

/// The plugin registry.
#[async_trait]
pub trait PluginRegistry: Send + Sync {
    /// Stores a version's record and bytes unless (kind, name, version) exists.
    async fn add_plugin(&self, record: &PluginRecord, wasm: &[u8]) -> StoreResult<AddOutcome>;

    /// Every stored version, by kind, name, then `added_at`.
    async fn list_plugins(&self) -> StoreResult<Vec<PluginRecord>>;

    /// One version's record.
    async fn plugin(
        &self,
        kind: PluginKind,
        name: &str,
        version: &str,
    ) -> StoreResult<Option<PluginRecord>>;

    /// One version's bytes.
    async fn plugin_wasm(
        &self,
        kind: PluginKind,
        name: &str,
        version: &str,
    ) -> StoreResult<Option<Vec<u8>>>;

    /// Appends an activation of (kind, name, version) to `slot`'s history
    /// and bumps the plugins generation, in one transaction.
    async fn activate_plugin(
        &self,
        slot: &str,
        kind: PluginKind,
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
    async fn clear_shadow(&self, kind: PluginKind) -> StoreResult<bool>;

    /// Every running shadow.
    async fn shadows(&self) -> StoreResult<Vec<ShadowConfig>>;

    /// Records one comparison.
    async fn record_shadow_sample(&self, sample: &ShadowSample) -> StoreResult<()>;

    /// Comparisons of `kind` against `candidate` (a label), oldest first.
    async fn shadow_samples(
        &self,
        kind: PluginKind,
        candidate: &str,
    ) -> StoreResult<Vec<ShadowSample>>;
}

/// The error when `add_plugin` neither inserted a version nor found the
/// row holding its key (only a concurrent adder rolling back does that).
pub(crate) fn vanished(record: &PluginRecord) -> crate::StoreError {
    crate::StoreError::Corrupt(format!(
        "plugin {}/{}@{} neither inserted nor found",
        record.kind, record.name, record.version
    ))
}

/// What `add_plugin` did when the key was taken by a version with
/// `existing` as its sha256.
pub(crate) fn outcome(record: &PluginRecord, existing: String) -> AddOutcome {
    if existing == record.sha256 {
        AddOutcome::AlreadyPresent
    } else {
        AddOutcome::Conflict(existing)
    }
}

/// [`PluginRegistry`] for a backend's store type (`$store`, with a `pool`
/// field, over database `$db`), written once here over the shared
/// statements. Every change that bumps the generation bumps it first, in
/// `$store`'s `write_tx()` (see `registry_tx`); a change that turns out to change nothing rolls
/// back, bump included. What the backends do their own way comes in as
/// arguments: how often `add_plugin` tries (`$add_attempts`), and the
/// statement reading a slot's newest live activations in id order, at
/// least two when there are (`$last_live`, locking them where the backend
/// locks rows).
macro_rules! impl_plugin_registry {
    ($store:ty, $db:ty, add_attempts: $add_attempts:expr, last_live: $last_live:expr) => {
        impl $store {
            /// `write_tx()` having bumped the generation (creating it at
            /// 1): how every registry change begins.
            async fn registry_tx(
                &self,
            ) -> $crate::StoreResult<(impl Sized + '_, sqlx::Transaction<'static, $db>)> {
                let (guard, mut tx) = self.write_tx().await?;
                sqlx::query($crate::sql::BUMP_GENERATION)
                    .bind($crate::sql::GENERATION_KEY)
                    .execute(&mut *tx)
                    .await?;
                Ok((guard, tx))
            }

            /// Every row `statement` (of no parameters) reads, decoded.
            async fn all<T>(
                &self,
                statement: &str,
                decode: fn(&<$db as sqlx::Database>::Row) -> $crate::StoreResult<T>,
            ) -> $crate::StoreResult<Vec<T>> {
                let rows = sqlx::query(statement).fetch_all(&self.pool).await?;
                rows.iter().map(decode).collect()
            }

            /// The row `statement` reads of the version (`kind`, `name`,
            /// `version`), if stored.
            async fn version_row(
                &self,
                statement: &str,
                kind: ::forecast_domain::PluginKind,
                name: &str,
                version: &str,
            ) -> $crate::StoreResult<Option<<$db as sqlx::Database>::Row>> {
                Ok(sqlx::query(statement)
                    .bind(kind.as_str())
                    .bind(name)
                    .bind(version)
                    .fetch_optional(&self.pool)
                    .await?)
            }
        }

        #[async_trait::async_trait]
        impl $crate::PluginRegistry for $store {
            async fn add_plugin(
                &self,
                record: &$crate::PluginRecord,
                wasm: &[u8],
            ) -> $crate::StoreResult<$crate::AddOutcome> {
                // Insert-if-absent, then read back what holds the key: a
                // concurrent adder of the same key is either the row we read
                // or waits for us. Rows are never deleted; another attempt
                // only guards against a first adder that rolled back.
                for _ in 0..$add_attempts {
                    let inserted = sqlx::query($crate::sql::ADD_PLUGIN)
                        .bind(record.kind.as_str())
                        .bind(&record.name)
                        .bind(&record.version)
                        .bind(&record.sha256)
                        .bind(record.size)
                        .bind(wasm)
                        .bind(record.builtin)
                        .bind(&record.added_by)
                        .bind(record.added_at)
                        .execute(&self.pool)
                        .await?;
                    if inserted.rows_affected() == 1 {
                        return Ok($crate::AddOutcome::Added);
                    }
                    let existing = self
                        .version_row(
                            $crate::sql::PLUGIN_SHA256,
                            record.kind,
                            &record.name,
                            &record.version,
                        )
                        .await?;
                    if let Some(row) = existing {
                        let sha256 = $crate::rows::Cols::text(&row, "sha256")?;
                        return Ok($crate::registry::outcome(record, sha256));
                    }
                }
                Err($crate::registry::vanished(record))
            }

            async fn activate_plugin(
                &self,
                slot: &str,
                kind: ::forecast_domain::PluginKind,
                name: &str,
                version: &str,
                by: &str,
                now: i64,
            ) -> $crate::StoreResult<$crate::ActivationRecord> {
                let (_guard, mut tx) = self.registry_tx().await?;
                let row = sqlx::query($crate::sql::INSERT_ACTIVATION)
                    .bind(slot)
                    .bind(kind.as_str())
                    .bind(name)
                    .bind(version)
                    .bind(by)
                    .bind(now)
                    .fetch_one(&mut *tx)
                    .await?;
                let id = $crate::rows::Cols::int(&row, "id")?;
                tx.commit().await?;
                Ok($crate::ActivationRecord {
                    id,
                    slot: slot.to_string(),
                    kind,
                    name: name.to_string(),
                    version: version.to_string(),
                    activated_by: by.to_string(),
                    activated_at: now,
                    rolled_back: false,
                })
            }

            async fn rollback_plugin(
                &self,
                slot: &str,
                _now: i64,
            ) -> $crate::StoreResult<Option<$crate::ActivationRecord>> {
                // The generation's bump first, then the slot's live rows: a
                // concurrent rollback waits on either (the writer lock, the
                // row locks) and, when it resumes, sees this one's result
                // and undoes the activation before.
                let (_guard, mut tx) = self.registry_tx().await?;
                let rows = sqlx::query($last_live)
                    .bind(slot)
                    .fetch_all(&mut *tx)
                    .await?;
                let [.., previous, newest] = rows.as_slice() else {
                    // Fewer than two live activations: nothing changes.
                    tx.rollback().await?;
                    return Ok(None);
                };
                sqlx::query($crate::sql::MARK_ROLLED_BACK)
                    .bind($crate::rows::Cols::int(newest, "id")?)
                    .execute(&mut *tx)
                    .await?;
                let current = $crate::rows::activation(previous)?;
                tx.commit().await?;
                Ok(Some(current))
            }

            async fn set_shadow(&self, config: &$crate::ShadowConfig) -> $crate::StoreResult<()> {
                let (_guard, mut tx) = self.registry_tx().await?;
                sqlx::query($crate::sql::SET_SHADOW)
                    .bind(config.kind.as_str())
                    .bind(&config.name)
                    .bind(&config.version)
                    .bind(config.sample)
                    .bind(&config.started_by)
                    .bind(config.started_at)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn clear_shadow(
                &self,
                kind: ::forecast_domain::PluginKind,
            ) -> $crate::StoreResult<bool> {
                let (_guard, mut tx) = self.registry_tx().await?;
                let deleted = sqlx::query($crate::sql::CLEAR_SHADOW)
                    .bind(kind.as_str())
                    .execute(&mut *tx)
                    .await?;
                if deleted.rows_affected() == 0 {
                    // Nothing changed: the generation stays.
                    tx.rollback().await?;
                    return Ok(false);
                }
                tx.commit().await?;
                Ok(true)
            }

            async fn list_plugins(&self) -> $crate::StoreResult<Vec<$crate::PluginRecord>> {
                self.all($crate::sql::LIST_PLUGINS, $crate::rows::plugin)
                    .await
            }

            async fn plugin(
                &self,
                kind: ::forecast_domain::PluginKind,
                name: &str,
                version: &str,
            ) -> $crate::StoreResult<Option<$crate::PluginRecord>> {
                let row = self
                    .version_row($crate::sql::PLUGIN, kind, name, version)
                    .await?;
                row.as_ref().map($crate::rows::plugin).transpose()
            }

            async fn plugin_wasm(
                &self,
                kind: ::forecast_domain::PluginKind,
                name: &str,
                version: &str,
            ) -> $crate::StoreResult<Option<Vec<u8>>> {
                let row = self
                    .version_row($crate::sql::PLUGIN_WASM, kind, name, version)
                    .await?;
                row.map(|r| $crate::rows::Cols::bytes(&r, "wasm"))
                    .transpose()
            }

            async fn active_plugins(&self) -> $crate::StoreResult<Vec<$crate::ActivationRecord>> {
                self.all($crate::sql::ACTIVE_PLUGINS, $crate::rows::activation)
                    .await
            }

            async fn plugins_generation(&self) -> $crate::StoreResult<i64> {
                let row = sqlx::query($crate::sql::SETTING)
                    .bind($crate::sql::GENERATION_KEY)
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref()
                    .map($crate::rows::generation)
                    .transpose()
                    .map(Option::unwrap_or_default)
            }

            async fn shadows(&self) -> $crate::StoreResult<Vec<$crate::ShadowConfig>> {
                self.all($crate::sql::SHADOWS, $crate::rows::shadow).await
            }

            async fn record_shadow_sample(
                &self,
                sample: &$crate::ShadowSample,
            ) -> $crate::StoreResult<()> {
                sqlx::query($crate::sql::RECORD_SHADOW_SAMPLE)
                    .bind(sample.kind.as_str())
                    .bind(&sample.active)
                    .bind(&sample.candidate)
                    .bind(sample.identical)
                    .bind(sample.active_ms)
                    .bind(sample.candidate_ms)
                    .bind(sample.error.as_deref())
                    .bind(&sample.diffs)
                    .bind(sample.at)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn shadow_samples(
                &self,
                kind: ::forecast_domain::PluginKind,
                candidate: &str,
            ) -> $crate::StoreResult<Vec<$crate::ShadowSample>> {
                let rows = sqlx::query($crate::sql::SHADOW_SAMPLES)
                    .bind(kind.as_str())
                    .bind(candidate)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map($crate::rows::sample).collect()
            }
        }
    };
}
pub(crate) use impl_plugin_registry;
