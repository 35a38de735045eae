//! PostgreSQL [`AccountStore`]: the shared statements, and key creation
//! under a lock on the user's row.

use async_trait::async_trait;

use forecast_domain::{ApiKeyRecord, Tier, User};

use super::PgStore;
use crate::rows::{self, Cols};
use crate::{is_unique_violation, sql, AccountStore, StoreError, StoreResult};

const LOCK_USER: &str = "SELECT id FROM users WHERE id = $1 FOR UPDATE";

#[async_trait]
impl AccountStore for PgStore {
    async fn create_user(
        &self,
        email: &str,
        password_hash: &str,
        tier: Tier,
        now: i64,
    ) -> StoreResult<User> {
        let id = uuid::Uuid::new_v4().to_string();
        let result = sqlx::query(sql::CREATE_USER)
            .bind(&id)
            .bind(email)
            .bind(password_hash)
            .bind(tier.as_str())
            .bind(now)
            .execute(&self.pool)
            .await;
        match result {
            Err(e) if is_unique_violation(&e) => Err(StoreError::Conflict(format!("user {email}"))),
            Err(e) => Err(e.into()),
            Ok(_) => Ok(rows::new_user(id, email, tier, now)),
        }
    }

    async fn user_by_email(&self, email: &str) -> StoreResult<Option<(User, String)>> {
        let row = sqlx::query(sql::USER_BY_EMAIL)
            .bind(email)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| Ok((rows::user(&r)?, r.text("password_hash")?)))
            .transpose()
    }

    async fn set_user_tier(&self, email: &str, tier: Tier) -> StoreResult<Option<User>> {
        sqlx::query(sql::SET_USER_TIER)
            .bind(tier.as_str())
            .bind(email)
            .execute(&self.pool)
            .await?;
        Ok(self.user_by_email(email).await?.map(|(u, _)| u))
    }

    async fn set_user_limits(
        &self,
        email: &str,
        per_minute: Option<u32>,
        per_day: Option<u32>,
    ) -> StoreResult<Option<User>> {
        sqlx::query(sql::SET_USER_LIMITS)
            .bind(per_minute.map(i64::from))
            .bind(per_day.map(i64::from))
            .bind(email)
            .execute(&self.pool)
            .await?;
        Ok(self.user_by_email(email).await?.map(|(u, _)| u))
    }

    async fn list_users(&self) -> StoreResult<Vec<User>> {
        let rows = sqlx::query(sql::LIST_USERS).fetch_all(&self.pool).await?;
        rows.iter().map(rows::user).collect()
    }

    async fn create_session(
        &self,
        token_hash: &str,
        user_id: &str,
        now: i64,
        expires_at: i64,
    ) -> StoreResult<()> {
        sqlx::query(sql::CREATE_SESSION)
            .bind(token_hash)
            .bind(user_id)
            .bind(now)
            .bind(expires_at)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn session_user(&self, token_hash: &str, now: i64) -> StoreResult<Option<User>> {
        let row = sqlx::query(sql::SESSION_USER)
            .bind(token_hash)
            .bind(now)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(rows::user).transpose()
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        sqlx::query(sql::DELETE_SESSION)
            .bind(token_hash)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

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

    async fn list_api_keys(&self, user_id: &str) -> StoreResult<Vec<ApiKeyRecord>> {
        let rows = sqlx::query(sql::LIST_API_KEYS)
            .bind(user_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(rows::key).collect()
    }

    async fn revoke_api_key(&self, user_id: &str, key_id: &str, now: i64) -> StoreResult<bool> {
        let done = sqlx::query(sql::REVOKE_API_KEY)
            .bind(now)
            .bind(key_id)
            .bind(user_id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn api_key_user(&self, key_hash: &str) -> StoreResult<Option<(ApiKeyRecord, User)>> {
        let row = sqlx::query(sql::API_KEY_USER)
            .bind(key_hash)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(rows::key_and_user).transpose()
    }

    async fn touch_api_key(&self, key_id: &str, now: i64) -> StoreResult<()> {
        sqlx::query(sql::TOUCH_API_KEY)
            .bind(now)
            .bind(key_id)
            .bind(now - 60)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
