//! SQLite [`crate::AccountStore`]: key creation under the writer lock;
//! every other method is the shared implementation (`crate::accounts`).

use forecast_domain::ApiKeyRecord;

use super::SqliteStore;
use crate::rows::{self, Cols};
use crate::{sql, StoreResult};

crate::accounts::impl_account_store!(SqliteStore {
    async fn create_api_key(
        &self,
        user_id: &str,
        name: &str,
        key_hash: &str,
        key_prefix: &str,
        max_active: u32,
        now: i64,
    ) -> StoreResult<Option<ApiKeyRecord>> {
        // BEGIN IMMEDIATE takes the write lock before the count, so two
        // creations can never both see "4 active".
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let active = sqlx::query(sql::COUNT_ACTIVE_KEYS)
            .bind(user_id)
            .fetch_one(&mut *tx)
            .await?
            .int("n")?;
        if active >= i64::from(max_active) {
            return Ok(None);
        }
        let id = uuid::Uuid::new_v4().to_string();
        sqlx::query(sql::INSERT_API_KEY)
            .bind(&id)
            .bind(user_id)
            .bind(name)
            .bind(key_hash)
            .bind(key_prefix)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(rows::new_key(id, user_id, name, key_prefix, now)))
    }
});
