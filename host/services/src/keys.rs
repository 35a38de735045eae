//! API key management policy: only Premium users hold keys, at most
//! [`MAX_ACTIVE_KEYS`] active at once (checked atomically by the store), a
//! key is shown once and stored as its SHA-256, and someone else's key is
//! "not found" exactly like a missing one.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use forecast_api::accounts::{CreateKeyRequest, CreatedKey, KeyRecord};
use forecast_domain::{ApiKeyRecord, SharedClock, Tier, User};
use forecast_store::AccountStore;

use crate::auth::{self, MAX_ACTIVE_KEYS};
use crate::error::Error;

fn timestamp(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(secs, 0).unwrap_or_default()
}

fn record(k: ApiKeyRecord) -> KeyRecord {
    KeyRecord {
        id: k.id,
        key_prefix: k.key_prefix,
        name: k.name,
        last_used_at: k.last_used_at.map(timestamp),
        created_at: timestamp(k.created_at),
    }
}

/// A user's API keys.
#[derive(Clone)]
pub struct KeyService {
    db: Arc<dyn AccountStore>,
    /// When keys are created and revoked.
    clock: SharedClock,
}

impl KeyService {
    /// A service over `db`'s keys, dating them by `clock`.
    pub fn new(db: Arc<dyn AccountStore>, clock: SharedClock) -> Self {
        KeyService { db, clock }
    }

    /// The user's active keys, newest first.
    pub async fn list(&self, user: &User) -> Result<Vec<KeyRecord>, Error> {
        let keys = self.db.list_api_keys(&user.id).await?;
        Ok(keys.into_iter().map(record).collect())
    }

    /// Creates the key `request` asks for. The tier is checked before the
    /// name, so a Free user learns about the tier first.
    pub async fn create(
        &self,
        user: &User,
        request: &CreateKeyRequest,
    ) -> Result<CreatedKey, Error> {
        if user.tier != Tier::Premium {
            return Err(Error::NotPremium(
                "API keys are available on the Premium tier only".into(),
            ));
        }
        let name = request.validate()?;
        let new = auth::new_api_key();
        let now = self.clock.timestamp();
        let created = self
            .db
            .create_api_key(&user.id, name, &new.hash, &new.prefix, MAX_ACTIVE_KEYS, now)
            .await?
            .ok_or_else(|| {
                Error::Conflict(format!(
                    "you already have {MAX_ACTIVE_KEYS} active keys; revoke one first"
                ))
            })?;
        Ok(CreatedKey {
            key: new.key,
            key_prefix: created.key_prefix,
            name: created.name,
            id: created.id,
            created_at: timestamp(created.created_at),
        })
    }

    /// Records that key `key_id` was used at `now` (its `last_used_at`).
    pub async fn touch(&self, key_id: &str, now: i64) -> Result<(), Error> {
        Ok(self.db.touch_api_key(key_id, now).await?)
    }

    /// Revokes the user's active key `id`, effective on the next request.
    pub async fn revoke(&self, user: &User, id: uuid::Uuid) -> Result<(), Error> {
        let now = self.clock.timestamp();
        match self
            .db
            .revoke_api_key(&user.id, &id.to_string(), now)
            .await?
        {
            true => Ok(()),
            false => Err(Error::NotFound(format!("no active key with id {id}"))),
        }
    }
}
