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

/// [`CacheStore`] and [`SettingsStore`] for a backend's store type
/// (`$store`, with a `pool` field): both dialects share every statement,
/// so the whole implementation is written once here.
macro_rules! impl_cache_stores {
    ($store:ty) => {
        impl $store {
            /// The text `column` of the row `statement` finds by `key`, if
            /// any: how both stores read.
            async fn text_by_key(
                &self,
                statement: &str,
                key: &str,
                column: &str,
            ) -> $crate::StoreResult<Option<String>> {
                let row = sqlx::query(statement)
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await?;
                row.map(|r| $crate::rows::Cols::text(&r, column))
                    .transpose()
            }
        }

        #[async_trait::async_trait]
        impl $crate::CacheStore for $store {
            async fn cached_analysis(&self, key: &str) -> $crate::StoreResult<Option<String>> {
                self.text_by_key($crate::sql::CACHED_ANALYSIS, key, "body")
                    .await
            }

            async fn put_analysis(
                &self,
                key: &str,
                asset_id: i64,
                body: &str,
            ) -> $crate::StoreResult<()> {
                sqlx::query($crate::sql::PUT_ANALYSIS)
                    .bind(key)
                    .bind(asset_id)
                    .bind(body)
                    .bind(forecast_domain::Clock::timestamp(self.clock.as_ref()))
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }
        }

        #[async_trait::async_trait]
        impl $crate::SettingsStore for $store {
            async fn setting(&self, key: &str) -> $crate::StoreResult<Option<String>> {
                self.text_by_key($crate::sql::SETTING, key, "value").await
            }

            async fn set_setting(&self, key: &str, value: &str) -> $crate::StoreResult<()> {
                sqlx::query($crate::sql::SET_SETTING)
                    .bind(key)
                    .bind(value)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }
        }
    };
}
pub(crate) use impl_cache_stores;
