//! Cached analyses (verdict bodies by cache key) and the small settings
//! table (markers such as the demo version).

use async_trait::async_trait;

use crate::StoreResult;

/// Cached analysis bodies. New prices of an asset drop its entries (see
/// [`crate::AssetStore::store_series`]).
#[async_trait]
pub trait CacheStore: Send + Sync {
    /// A cached analysis body by key.
    async fn cached_analysis(&self, key: &str) -> StoreResult<Option<String>>;

    /// Stores a cached analysis body (replacing one with the same key).
    async fn put_analysis(&self, key: &str, asset_id: i64, body: &str) -> StoreResult<()>;
}

/// Key-value settings.
#[async_trait]
pub trait SettingsStore: Send + Sync {
    /// A setting by key.
    async fn setting(&self, key: &str) -> StoreResult<Option<String>>;

    /// Stores a setting.
    async fn set_setting(&self, key: &str, value: &str) -> StoreResult<()>;
}
