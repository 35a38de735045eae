//! Strategies uploaded by their authors (issue 26): `POST /api/strategies`
//! (a component, at most 32 MiB, checked and stored immutable),
//! `PATCH` and `DELETE /api/strategies/{handle}/{name}` (the owner's), each
//! with its `/web/api` twin under the session.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::{Extension, Json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::extract::{Json as JsonBody, Path};
use super::guard::ApiUser;
use crate::AppState;
use forecast_api::authored::{StrategyChange, StrategyState, UploadedStrategy};
use forecast_api::ErrorBody;
use forecast_research::authored::{Upload, MAX_UPLOAD_BYTES};

/// The upload route (its own body limit: [`MAX_UPLOAD_BYTES`], also for
/// the body extractor, whose default would stop at 2 MiB).
pub fn upload_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(upload))
        .layer(axum::middleware::map_response(uncharged_refusals))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_UPLOAD_BYTES))
}

/// An upload refused for its body before any work (400 empty, 413 over
/// the limit, 415 not a component or bundle) is not charged: the quota
/// guard gives its units back (issue 40, finding 7).
async fn uncharged_refusals(mut response: axum::response::Response) -> axum::response::Response {
    if matches!(
        response.status(),
        StatusCode::BAD_REQUEST
            | StatusCode::PAYLOAD_TOO_LARGE
            | StatusCode::UNSUPPORTED_MEDIA_TYPE
    ) {
        response.extensions_mut().insert(super::error::Uncharged);
    }
    response
}

/// The owner's changes.
pub fn manage_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(change, remove))
}

/// True for the paths [`upload_router`] serves (their 413 names its limit).
pub fn is_upload_path(path: &str) -> bool {
    path == "/api/strategies" || path == "/web/api/strategies"
}

/// Uploads a strategy component.
#[utoipa::path(
    post,
    path = "/api/strategies",
    operation_id = "uploadStrategy",
    summary = "Upload a strategy component: type-checked against the strategy world, self-tested, stored immutable, private to you",
    description = "The body is a WebAssembly component of the strategy world (Content-Type: application/wasm) or a signed bundle holding one (Content-Type: application/vnd.forecast.bundle: a manifest, the component and an ed25519 signature over both, made by `forecast plugin sign`; its manifest must name the component's name and version, and its signer is shown wherever the strategy is listed), at most 32 MiB. It is compiled and checked as heavy work of the server's budget (503 with Retry-After when there is no turn; not charged) within 60 s (else 422): every import must be the strategy world's or one of the WASI interfaces a Rust standard library imports (wasi:cli, wasi:io, wasi:clocks, wasi:random; linked as traps), the name it reports 1–64 lower-case letters, digits, '-' or '_', its version semantic, and it must pass the strategy self-tests. A body refused before any work (400, 413, 415, or a 422 for what it would compile into: more than 64 core modules, 2 memories, 16 tables, 4,096 data segments or 16 MiB of initial memory spanned by its data segments) is not charged; a component that was compiled and then refused is. It is stored as @handle/name (your handle: @u and 10 hex digits), version → sha256 forever: the same bytes again answer 200, other bytes under a stored version 409. The first version of a strategy is its current one and private (only you can list and run it); PATCH shares it or picks the version that runs. An account holds at most 20 strategies of at most 50 versions each (409 past either). Run it with POST /api/backtest {\"strategy\": \"@handle/name\"} or \"@handle/name@version\" (another account's strategy, also a pinned version, only when the server's trust policy admits that version's signer: 422 otherwise).",
    request_body(content = Vec<u8>, content_type = "application/wasm", description = "The component's bytes (at most 32 MiB)"),
    responses(
        (status = 201, description = "Stored", body = UploadedStrategy),
        (status = 200, description = "This exact version was already stored", body = UploadedStrategy),
        (status = 400, description = "Empty body", body = ErrorBody),
        (status = 409, description = "The version is stored with other bytes, or a per-account limit is reached", body = ErrorBody),
        (status = 413, description = "Body over 32 MiB", body = ErrorBody),
        (status = 415, description = "Neither application/wasm nor application/vnd.forecast.bundle", body = ErrorBody),
        (status = 422, description = "Not a loadable strategy component, or a bundle whose signature or manifest does not hold: the detail names the import, name, version, self-test, signature or deadline that refused it; nothing was stored", body = ErrorBody),
        (status = 503, description = "No turn of the server's heavy-work budget came in time; nothing was stored or charged; Retry-After says when to retry", body = ErrorBody),
    )
)]
async fn upload(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(StatusCode, Json<UploadedStrategy>), ApiError> {
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let upload = match media.as_str() {
        "application/wasm" => Upload::Component(body.to_vec()),
        forecast_bundle::BUNDLE_CONTENT_TYPE => Upload::Bundle(body.to_vec()),
        _ => {
            return Err(ApiError::UnsupportedMediaType(format!(
                "the body must be a strategy component (Content-Type: application/wasm) or a \
                 signed bundle (Content-Type: application/vnd.forecast.bundle); got '{}'",
                forecast_api::quote(content_type)
            )))
        }
    };
    debug_assert!(body.len() <= MAX_UPLOAD_BYTES);
    let uploaded = state.authored.upload(&user.id, upload).await?;
    let status = if uploaded.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(uploaded)))
}

/// Shares one of your strategies or picks the version that runs.
#[utoipa::path(
    patch,
    path = "/api/strategies/{handle}/{name}",
    operation_id = "changeStrategy",
    summary = "Share one of your uploaded strategies with every Premium user (or stop), or pick the version that runs",
    params(
        ("handle" = String, Path, description = "Your handle with its @", example = "@u3f2a91c0d4"),
        ("name" = String, Path, description = "The strategy's name", example = "dip-buyer"),
    ),
    request_body = StrategyChange,
    responses(
        (status = 200, description = "Changed", body = StrategyState),
        (status = 400, description = "An unknown field, or a version the strategy does not have (an empty change answers the strategy as it is)", body = ErrorBody),
        (status = 422, description = "Refused by the server's trust policy (FORECAST_PLUGIN_TRUST, FORECAST_PLUGIN_UNSIGNED): sharing, or picking the version that runs of a shared strategy, when that version's signer is not trusted or it is unsigned; the detail names the signer or that the version is unsigned", body = ErrorBody),
        (status = 404, description = "You have no such strategy (another account's is answered the same)", body = ErrorBody),
    )
)]
async fn change(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path((handle, name)): Path<(String, String)>,
    JsonBody(change): JsonBody<StrategyChange>,
) -> Result<Json<StrategyState>, ApiError> {
    let handle = handle.strip_prefix('@').unwrap_or(&handle);
    Ok(Json(
        state
            .authored
            .change(&user.id, handle, &name, &change)
            .await?,
    ))
}

/// Deletes one of your strategies.
#[utoipa::path(
    delete,
    path = "/api/strategies/{handle}/{name}",
    operation_id = "deleteStrategy",
    summary = "Delete one of your uploaded strategies: no longer listed or runnable; its versions are never reused for other bytes",
    params(
        ("handle" = String, Path, description = "Your handle with its @", example = "@u3f2a91c0d4"),
        ("name" = String, Path, description = "The strategy's name", example = "dip-buyer"),
    ),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "You have no such strategy (another account's is answered the same)", body = ErrorBody),
    )
)]
async fn remove(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path((handle, name)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let handle = handle.strip_prefix('@').unwrap_or(&handle);
    state.authored.delete(&user.id, handle, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}
