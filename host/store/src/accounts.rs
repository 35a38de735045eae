//! Accounts, keys and sessions: users with their tier and quota overrides,
//! login sessions, and API keys.

use async_trait::async_trait;

use forecast_domain::{ApiKeyRecord, Asset, Tier, User};

use crate::StoreResult;

/// Users, sessions and API keys.
#[async_trait]
pub trait AccountStore: Send + Sync {
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

    /// Replaces a user's password hash and ends every session of theirs,
    /// atomically; false when there is no such user.
    async fn set_user_password(&self, email: &str, password_hash: &str) -> StoreResult<bool>;

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

    /// Slides an unexpired session's expiry to `now + idle`, capped at its
    /// creation + `absolute`; a session slid less than `granularity`
    /// seconds ago is left alone (one write per `granularity` at most).
    async fn slide_session(
        &self,
        token_hash: &str,
        now: i64,
        idle: i64,
        absolute: i64,
        granularity: i64,
    ) -> StoreResult<()>;

    /// Deletes every session expired at `now`; how many.
    async fn purge_sessions(&self, now: i64) -> StoreResult<u64>;

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

    /// The user's watchlist: its active assets in the order chosen.
    async fn watchlist(&self, user_id: &str) -> StoreResult<Vec<Asset>>;

    /// Replaces the user's watchlist with `asset_ids` (in that order,
    /// without duplicates), atomically.
    async fn set_watchlist(&self, user_id: &str, asset_ids: &[i64], now: i64) -> StoreResult<()>;
}

/// [`AccountStore`] for a backend's store type (`$store`, with a `pool`
/// field): written once here, over the shared statements; `create_api_key`
/// counts and inserts in `$store`'s `user_tx(user_id)`, the transaction
/// holding the backend's lock of the user.
macro_rules! impl_account_store {
    ($store:ty) => {
        #[async_trait::async_trait]
        impl $crate::AccountStore for $store {
            async fn create_api_key(
                &self,
                user_id: &str,
                name: &str,
                key_hash: &str,
                key_prefix: &str,
                max_active: u32,
                now: i64,
            ) -> $crate::StoreResult<Option<::forecast_domain::ApiKeyRecord>> {
                use $crate::rows::Cols;
                // The user's lock before the count (SQLite's writer lock,
                // PostgreSQL's row lock), so two creations can never both
                // see "4 active".
                let (_guard, mut tx) = self.user_tx(user_id).await?;
                let active = sqlx::query($crate::sql::COUNT_ACTIVE_KEYS)
                    .bind(user_id)
                    .fetch_one(&mut *tx)
                    .await?
                    .int("n")?;
                if active >= i64::from(max_active) {
                    tx.rollback().await?;
                    return Ok(None);
                }
                let id = uuid::Uuid::new_v4().to_string();
                sqlx::query($crate::sql::INSERT_API_KEY)
                    .bind(&id)
                    .bind(user_id)
                    .bind(name)
                    .bind(key_hash)
                    .bind(key_prefix)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(Some($crate::rows::new_key(
                    id, user_id, name, key_prefix, now,
                )))
            }

            async fn create_user(
                &self,
                email: &str,
                password_hash: &str,
                tier: ::forecast_domain::Tier,
                now: i64,
            ) -> $crate::StoreResult<::forecast_domain::User> {
                let id = uuid::Uuid::new_v4().to_string();
                let result = sqlx::query($crate::sql::CREATE_USER)
                    .bind(&id)
                    .bind(email)
                    .bind(password_hash)
                    .bind(tier.as_str())
                    .bind(now)
                    .execute(&self.pool)
                    .await;
                match result {
                    Err(e) if $crate::is_unique_violation(&e) => {
                        Err($crate::StoreError::Conflict(format!("user {email}")))
                    }
                    Err(e) => Err(e.into()),
                    Ok(_) => Ok($crate::rows::new_user(id, email, tier, now)),
                }
            }

            async fn user_by_email(
                &self,
                email: &str,
            ) -> $crate::StoreResult<Option<(::forecast_domain::User, String)>> {
                let row = sqlx::query($crate::sql::USER_BY_EMAIL)
                    .bind(email)
                    .fetch_optional(&self.pool)
                    .await?;
                row.map(|r| {
                    Ok((
                        $crate::rows::user(&r)?,
                        $crate::rows::Cols::text(&r, "password_hash")?,
                    ))
                })
                .transpose()
            }

            async fn set_user_tier(
                &self,
                email: &str,
                tier: ::forecast_domain::Tier,
            ) -> $crate::StoreResult<Option<::forecast_domain::User>> {
                sqlx::query($crate::sql::SET_USER_TIER)
                    .bind(tier.as_str())
                    .bind(email)
                    .execute(&self.pool)
                    .await?;
                Ok(self.user_by_email(email).await?.map(|(u, _)| u))
            }

            async fn set_user_password(
                &self,
                email: &str,
                password_hash: &str,
            ) -> $crate::StoreResult<bool> {
                let mut tx = self.pool.begin().await?;
                let done = sqlx::query($crate::sql::SET_USER_PASSWORD)
                    .bind(password_hash)
                    .bind(email)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query($crate::sql::DELETE_USER_SESSIONS)
                    .bind(email)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(done.rows_affected() == 1)
            }

            async fn set_user_limits(
                &self,
                email: &str,
                per_minute: Option<u32>,
                per_day: Option<u32>,
            ) -> $crate::StoreResult<Option<::forecast_domain::User>> {
                sqlx::query($crate::sql::SET_USER_LIMITS)
                    .bind(per_minute.map(i64::from))
                    .bind(per_day.map(i64::from))
                    .bind(email)
                    .execute(&self.pool)
                    .await?;
                Ok(self.user_by_email(email).await?.map(|(u, _)| u))
            }

            async fn list_users(&self) -> $crate::StoreResult<Vec<::forecast_domain::User>> {
                let rows = sqlx::query($crate::sql::LIST_USERS)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map($crate::rows::user).collect()
            }

            async fn create_session(
                &self,
                token_hash: &str,
                user_id: &str,
                now: i64,
                expires_at: i64,
            ) -> $crate::StoreResult<()> {
                sqlx::query($crate::sql::CREATE_SESSION)
                    .bind(token_hash)
                    .bind(user_id)
                    .bind(now)
                    .bind(expires_at)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn session_user(
                &self,
                token_hash: &str,
                now: i64,
            ) -> $crate::StoreResult<Option<::forecast_domain::User>> {
                let row = sqlx::query($crate::sql::SESSION_USER)
                    .bind(token_hash)
                    .bind(now)
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref().map($crate::rows::user).transpose()
            }

            async fn slide_session(
                &self,
                token_hash: &str,
                now: i64,
                idle: i64,
                absolute: i64,
                granularity: i64,
            ) -> $crate::StoreResult<()> {
                sqlx::query($crate::sql::SLIDE_SESSION)
                    .bind(token_hash)
                    .bind(now + idle)
                    .bind(absolute)
                    .bind(granularity)
                    .bind(now)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn purge_sessions(&self, now: i64) -> $crate::StoreResult<u64> {
                let done = sqlx::query($crate::sql::PURGE_SESSIONS)
                    .bind(now)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected())
            }

            async fn delete_session(&self, token_hash: &str) -> $crate::StoreResult<()> {
                sqlx::query($crate::sql::DELETE_SESSION)
                    .bind(token_hash)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn list_api_keys(
                &self,
                user_id: &str,
            ) -> $crate::StoreResult<Vec<::forecast_domain::ApiKeyRecord>> {
                let rows = sqlx::query($crate::sql::LIST_API_KEYS)
                    .bind(user_id)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map($crate::rows::key).collect()
            }

            async fn revoke_api_key(
                &self,
                user_id: &str,
                key_id: &str,
                now: i64,
            ) -> $crate::StoreResult<bool> {
                let done = sqlx::query($crate::sql::REVOKE_API_KEY)
                    .bind(now)
                    .bind(key_id)
                    .bind(user_id)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn api_key_user(
                &self,
                key_hash: &str,
            ) -> $crate::StoreResult<
                Option<(::forecast_domain::ApiKeyRecord, ::forecast_domain::User)>,
            > {
                let row = sqlx::query($crate::sql::API_KEY_USER)
                    .bind(key_hash)
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref().map($crate::rows::key_and_user).transpose()
            }

            async fn touch_api_key(&self, key_id: &str, now: i64) -> $crate::StoreResult<()> {
                sqlx::query($crate::sql::TOUCH_API_KEY)
                    .bind(now)
                    .bind(key_id)
                    .bind(now - 60)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn watchlist(
                &self,
                user_id: &str,
            ) -> $crate::StoreResult<Vec<::forecast_domain::Asset>> {
                let rows = sqlx::query($crate::sql::WATCHLIST)
                    .bind(user_id)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map($crate::rows::asset).collect()
            }

            async fn set_watchlist(
                &self,
                user_id: &str,
                asset_ids: &[i64],
                now: i64,
            ) -> $crate::StoreResult<()> {
                // The first statement writes, so SQLite takes its write
                // lock at once (no read-then-upgrade deadlock).
                let mut tx = self.pool.begin().await?;
                sqlx::query($crate::sql::CLEAR_WATCHLIST)
                    .bind(user_id)
                    .execute(&mut *tx)
                    .await?;
                for (position, asset_id) in asset_ids.iter().enumerate() {
                    sqlx::query($crate::sql::ADD_TO_WATCHLIST)
                        .bind(user_id)
                        .bind(position as i64)
                        .bind(asset_id)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(())
            }
        }
    };
}
pub(crate) use impl_account_store;
