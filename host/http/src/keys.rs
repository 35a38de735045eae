//! `GET/POST/DELETE /api/keys`: a signed-in user's API keys (session cookie
//! only). Keys are shown once at creation; the store keeps their SHA-256.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::error::ApiError;
use super::extract::Json as JsonBody;
use super::session::SessionUser;
use crate::AppState;
use forecast_domain::{ApiKeyRecord, Tier};
use forecast_services::auth::{self, MAX_ACTIVE_KEYS};

/// Longest key name accepted.
const MAX_NAME_LEN: usize = 100;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/keys", get(list).post(create).delete(revoke))
}

fn timestamp(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(secs, 0).unwrap_or_default()
}

#[derive(Debug, Serialize)]
struct KeyRecord {
    id: String,
    key_prefix: String,
    name: String,
    last_used_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
}

impl From<ApiKeyRecord> for KeyRecord {
    fn from(k: ApiKeyRecord) -> Self {
        KeyRecord {
            id: k.id,
            key_prefix: k.key_prefix,
            name: k.name,
            last_used_at: k.last_used_at.map(timestamp),
            created_at: timestamp(k.created_at),
        }
    }
}

async fn list(
    State(state): State<AppState>,
    SessionUser(user): SessionUser,
) -> Result<Json<Vec<KeyRecord>>, ApiError> {
    let keys = state.db.list_api_keys(&user.id).await?;
    Ok(Json(keys.into_iter().map(KeyRecord::from).collect()))
}

#[derive(Debug, Deserialize)]
struct CreateBody {
    name: String,
}

#[derive(Debug, Serialize)]
struct Created {
    key: String,
    key_prefix: String,
    name: String,
    id: String,
    created_at: DateTime<Utc>,
}

async fn create(
    State(state): State<AppState>,
    SessionUser(user): SessionUser,
    JsonBody(body): JsonBody<CreateBody>,
) -> Result<Json<Created>, ApiError> {
    if user.tier != Tier::Premium {
        return Err(ApiError::PaymentRequired(
            "API keys are available on the Premium tier only".into(),
        ));
    }
    let name = body.name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_LEN {
        return Err(ApiError::BadRequest(format!(
            "name must be 1 to {MAX_NAME_LEN} characters"
        )));
    }
    let new = auth::new_api_key();
    let now = Utc::now().timestamp();
    let record = state
        .db
        .create_api_key(&user.id, name, &new.hash, &new.prefix, MAX_ACTIVE_KEYS, now)
        .await?
        .ok_or_else(|| {
            ApiError::Conflict(format!(
                "you already have {MAX_ACTIVE_KEYS} active keys; revoke one first"
            ))
        })?;
    Ok(Json(Created {
        key: new.key,
        key_prefix: record.key_prefix,
        name: record.name,
        id: record.id,
        created_at: timestamp(record.created_at),
    }))
}

#[derive(Debug, Deserialize)]
struct RevokeBody {
    id: String,
}

async fn revoke(
    State(state): State<AppState>,
    SessionUser(user): SessionUser,
    JsonBody(body): JsonBody<RevokeBody>,
) -> Result<Json<Value>, ApiError> {
    let id = uuid::Uuid::parse_str(body.id.trim())
        .map_err(|_| ApiError::BadRequest(format!("id '{}' is not a UUID", body.id)))?;
    // Someone else's key is "not found", exactly like a missing one.
    if !state
        .db
        .revoke_api_key(&user.id, &id.to_string(), Utc::now().timestamp())
        .await?
    {
        return Err(ApiError::NotFound(format!("no active key with id {id}")));
    }
    Ok(Json(json!({ "ok": true })))
}
