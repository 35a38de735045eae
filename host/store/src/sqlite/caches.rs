//! SQLite [`CacheStore`] and [`SettingsStore`]: the shared statements.

use async_trait::async_trait;

use super::SqliteStore;
use crate::rows::Cols;
use crate::{sql, unix_now, CacheStore, SettingsStore, StoreResult};

#[async_trait]
impl CacheStore for SqliteStore {
    async fn cached_analysis(&self, key: &str) -> StoreResult<Option<String>> {
        let row = sqlx::query(sql::CACHED_ANALYSIS)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| r.text("body")).transpose()
    }

    async fn put_analysis(&self, key: &str, asset_id: i64, body: &str) -> StoreResult<()> {
        sqlx::query(sql::PUT_ANALYSIS)
            .bind(key)
            .bind(asset_id)
            .bind(body)
            .bind(unix_now())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

#[async_trait]
impl SettingsStore for SqliteStore {
    async fn setting(&self, key: &str) -> StoreResult<Option<String>> {
        let row = sqlx::query(sql::SETTING)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| r.text("value")).transpose()
    }

    async fn set_setting(&self, key: &str, value: &str) -> StoreResult<()> {
        sqlx::query(sql::SET_SETTING)
            .bind(key)
            .bind(value)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
