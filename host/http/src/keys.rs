//! `GET/POST/DELETE /api/keys`: a signed-in user's API keys (session cookie
//! only; the policy is the key service's). Keys are shown once at creation;
//! the store keeps their SHA-256.

use axum::extract::State;
use axum::Json;
use forecast_api::accounts::{
    CreateKeyRequest, CreatedKey, KeyRecord, OkResponse, RevokeKeyRequest,
};
use forecast_api::ErrorBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::extract::Json as JsonBody;
use super::session::SessionUser;
use crate::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create, revoke))
}

/// The user's keys.
#[utoipa::path(
    get,
    path = "/api/keys",
    operation_id = "listKeys",
    summary = "The signed-in user's active API keys (never the keys themselves)",
    responses((status = 200, description = "OK, newest first", body = Vec<KeyRecord>))
)]
async fn list(
    State(state): State<AppState>,
    SessionUser(user): SessionUser,
) -> Result<Json<Vec<KeyRecord>>, ApiError> {
    Ok(Json(state.keys.list(&user).await?))
}

/// Creates a key.
#[utoipa::path(
    post,
    path = "/api/keys",
    operation_id = "createKey",
    summary = "Create an API key; the full key is returned once",
    request_body = CreateKeyRequest,
    responses(
        (status = 200, description = "Created", body = CreatedKey),
        (status = 400, description = "Missing or invalid name", body = ErrorBody),
        (status = 402, description = "The user is not on the Premium tier", body = ErrorBody),
        (status = 409, description = "The user already has 5 active keys", body = ErrorBody),
    )
)]
async fn create(
    State(state): State<AppState>,
    SessionUser(user): SessionUser,
    JsonBody(body): JsonBody<CreateKeyRequest>,
) -> Result<Json<CreatedKey>, ApiError> {
    Ok(Json(state.keys.create(&user, &body).await?))
}

/// Revokes a key.
#[utoipa::path(
    delete,
    path = "/api/keys",
    operation_id = "revokeKey",
    summary = "Revoke an API key (soft); effective on the next request",
    request_body = RevokeKeyRequest,
    responses(
        (status = 200, description = "Revoked", body = OkResponse),
        (status = 400, description = "id is not a UUID", body = ErrorBody),
        (status = 404, description = "No active key with that id belongs to the user", body = ErrorBody),
    )
)]
async fn revoke(
    State(state): State<AppState>,
    SessionUser(user): SessionUser,
    JsonBody(body): JsonBody<RevokeKeyRequest>,
) -> Result<Json<OkResponse>, ApiError> {
    let id = uuid::Uuid::parse_str(body.id.trim()).map_err(|_| {
        ApiError::BadRequest(format!(
            "id '{}' is not a UUID",
            forecast_api::quote(&body.id)
        ))
    })?;
    state.keys.revoke(&user, id).await?;
    Ok(Json(OkResponse::OK))
}
