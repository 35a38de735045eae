//! Extractors whose rejections are `{detail}` 400s instead of axum's
//! plain-text 400/422 (422 is reserved for short histories).

use axum::extract::{FromRequest, FromRequestParts};

use super::error::ApiError;

/// `axum::extract::Query` with a `{detail}` rejection.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct Query<T>(pub T);

/// `axum::extract::Path` with a `{detail}` rejection.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct Path<T>(pub T);

/// `axum::Json` with a `{detail}` rejection.
#[derive(Debug, FromRequest)]
#[from_request(via(axum::Json), rejection(ApiError))]
pub struct Json<T>(pub T);

/// A middleware's read of the whole request body, bounded by the server's
/// body limit (which has wrapped the body: past it, reading fails), to be
/// put back unchanged with `Body::from`. Past the limit: 413 (the error
/// layer rewrites it to `{detail}` naming the limit); otherwise unreadable:
/// 400 (a body past its deadline is answered 408 by the deadline layer).
pub async fn buffered_body(
    body: axum::body::Body,
) -> Result<axum::body::Bytes, axum::response::Response> {
    use axum::response::IntoResponse;
    axum::body::to_bytes(body, usize::MAX).await.map_err(|e| {
        match e.to_string().contains("length limit") {
            true => axum::http::StatusCode::PAYLOAD_TOO_LARGE.into_response(),
            false => ApiError::BadRequest(format!("the request body could not be read: {e}"))
                .into_response(),
        }
    })
}
