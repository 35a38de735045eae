//! PostgreSQL [`crate::AccountStore`]: key creation under a lock on the
//! user's row; every other method is the shared implementation
//! (`crate::accounts`).

use forecast_domain::ApiKeyRecord;

use super::PgStore;
use crate::rows::{self, Cols};
use crate::{sql, StoreResult};

const LOCK_USER: &str = "SELECT id FROM users WHERE id = $1 FOR UPDATE";

crate::accounts::impl_account_store!(PgStore {
    async fn create_api_key(
        &self,
        user_id: &str,
        name: &str,
        key_hash: &str,
        key_prefix: &str,
        max_active: u32,
        now: i64,
    ) -> StoreResult<Option<ApiKeyRecord>> {
        // Locking the user row serialises key creation per user across all
        // processes; under READ COMMITTED the count below then sees every
        // key committed by the previous lock holder.
        let mut tx = self.pool.begin().await?;
        sqlx::query(LOCK_USER)
            .bind(user_id)
            .fetch_optional(&mut *tx)
            .await?;
        let active = sqlx::query(sql::COUNT_ACTIVE_KEYS)
            .bind(user_id)
            .fetch_one(&mut *tx)
            .await?
            .int("n")?;
        if active >= i64::from(max_active) {
            tx.rollback().await?;
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
