//! Accounts, keys and sessions: users with their tier and quota overrides,
//! login sessions, and API keys.

use async_trait::async_trait;

use forecast_domain::{ApiKeyRecord, Tier, User};

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
}
