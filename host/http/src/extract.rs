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
