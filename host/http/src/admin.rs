//! `/api/admin/*`: the plugin registry over HTTP, for operators. Guarded by
//! `FORECAST_ADMIN_TOKEN` (`Authorization: Bearer <token>`), never by a
//! user's API key; disabled (403) when the variable is unset.

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::error::ApiError;
use super::extract::{Json as JsonBody, Path, Query};
use crate::AppState;
use forecast_services::registry::{self, RegistryError, MAX_COMPONENT_BYTES};

/// Who the admin API acts as, in the activation history.
const ADMIN: &str = "admin-api";

/// The admin routes with their guard and their own body limit (components
/// are larger than API bodies).
pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/api/admin/plugins", get(list).post(add))
        .route("/api/admin/plugins/activate", post(activate))
        .route("/api/admin/plugins/rollback", post(rollback))
        .route("/api/admin/shadow", post(start_shadow))
        .route("/api/admin/shadow/{kind}", get(report).delete(stop_shadow))
        .layer(DefaultBodyLimit::max(MAX_COMPONENT_BYTES))
        .route_layer(middleware::from_fn_with_state(state.clone(), guard))
}

async fn guard(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let Some(token) = state.config.admin_token.as_deref() else {
        return Err(ApiError::Forbidden(
            "the admin API is disabled: set FORECAST_ADMIN_TOKEN on the server".into(),
        ));
    };
    let given = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    // Compare digests so the comparison takes the same time whatever matches.
    if Sha256::digest(given.as_bytes()) != Sha256::digest(token.as_bytes()) {
        return Err(ApiError::Unauthorized(
            "missing or invalid admin token (Authorization: Bearer <FORECAST_ADMIN_TOKEN>)".into(),
        ));
    }
    Ok(next.run(req).await)
}

impl From<RegistryError> for ApiError {
    fn from(e: RegistryError) -> Self {
        match e {
            RegistryError::Invalid(m) => ApiError::BadRequest(m),
            RegistryError::NotFound(m) => ApiError::NotFound(m),
            RegistryError::Conflict(m) => ApiError::Conflict(m),
            RegistryError::Refused(m) => ApiError::Unprocessable(m),
            RegistryError::Store(s) => ApiError::Store(s),
        }
    }
}

/// Applies a change on this replica at once (others follow by polling).
async fn apply(state: &AppState) {
    if let Err(e) = state.plugins.sync(state.db.as_ref()).await {
        tracing::error!(error = %e, "applying the registry change failed; the poller retries");
    }
}

async fn list(State(state): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    let plugins = registry::list(state.db.as_ref()).await?;
    Ok(Json(serde_json::json!({ "plugins": plugins })))
}

// Kinds arrive as text and are parsed by `registry::parse_kind`, not by
// serde: an unknown kind is then the registry's 400 naming the allowed
// kinds, not a deserialisation error.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Version {
    kind: String,
    name: String,
    version: String,
}

async fn add(
    State(state): State<AppState>,
    Query(v): Query<Version>,
    body: Bytes,
) -> Result<Json<serde_json::Value>, ApiError> {
    if body.is_empty() {
        return Err(ApiError::BadRequest(
            "the body must be the component's bytes (Content-Type: application/wasm)".into(),
        ));
    }
    let r = registry::add(
        state.db.as_ref(),
        state.plugins.runtime_handle(),
        registry::parse_kind(&v.kind)?,
        &v.name,
        &v.version,
        body.to_vec(),
        ADMIN,
    )
    .await?;
    Ok(Json(serde_json::json!({
        "kind": r.kind, "name": r.name, "version": r.version,
        "sha256": r.sha256, "size": r.size
    })))
}

async fn activate(
    State(state): State<AppState>,
    JsonBody(v): JsonBody<Version>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let a = registry::activate(
        state.db.as_ref(),
        state.plugins.runtime_handle(),
        registry::parse_kind(&v.kind)?,
        &v.name,
        &v.version,
        ADMIN,
    )
    .await?;
    apply(&state).await;
    Ok(Json(serde_json::json!({
        "active": { "kind": a.kind, "name": a.name, "version": a.version }
    })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Slot {
    kind: String,
    name: String,
}

async fn rollback(
    State(state): State<AppState>,
    JsonBody(s): JsonBody<Slot>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let a = registry::rollback(state.db.as_ref(), registry::parse_kind(&s.kind)?, &s.name).await?;
    apply(&state).await;
    Ok(Json(serde_json::json!({
        "active": { "kind": a.kind, "name": a.name, "version": a.version }
    })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Shadow {
    kind: String,
    name: String,
    version: String,
    sample: f64,
}

async fn start_shadow(
    State(state): State<AppState>,
    JsonBody(s): JsonBody<Shadow>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let c = registry::start_shadow(
        state.db.as_ref(),
        state.plugins.runtime_handle(),
        registry::parse_kind(&s.kind)?,
        &s.name,
        &s.version,
        s.sample,
        ADMIN,
    )
    .await?;
    apply(&state).await;
    Ok(Json(serde_json::json!({
        "shadow": { "kind": c.kind, "name": c.name, "version": c.version, "sample": c.sample }
    })))
}

async fn report(
    State(state): State<AppState>,
    Path(kind): Path<String>,
) -> Result<Json<registry::ShadowReport>, ApiError> {
    Ok(Json(
        registry::shadow_report(state.db.as_ref(), registry::parse_kind(&kind)?).await?,
    ))
}

async fn stop_shadow(
    State(state): State<AppState>,
    Path(kind): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    registry::stop_shadow(state.db.as_ref(), registry::parse_kind(&kind)?).await?;
    apply(&state).await;
    Ok(Json(serde_json::json!({ "ok": true })))
}
