//! The one error type of the HTTP layer. Every non-2xx response the service
//! produces is `{"detail": "..."}`; 5xx causes are logged with the request
//! id and never shown (no SQL, no traces).

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::analysis::AnalysisError;
use crate::plugins::PluginError;
use crate::store::StoreError;

/// An error answered to a client.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: a parameter or body is invalid; the message names it.
    #[error("{0}")]
    BadRequest(String),
    /// 404: unknown or inactive asset, unknown route.
    #[error("{0}")]
    NotFound(String),
    /// 422: the asset's history is too short to analyse.
    #[error("{0}")]
    Unprocessable(String),
    /// 500/504 from a plugin: the detail names the plugin and version.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// 500: the store failed; logged, not shown.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// 500: anything else; logged, not shown.
    #[error("{0}")]
    Internal(String),
}

/// Marks a 500 whose body must be replaced by a generic message carrying
/// the request id (done by the `json_errors` middleware, which knows it).
#[derive(Debug, Clone, Copy)]
pub struct HiddenInternalError;

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Plugin(PluginError::Timeout { .. }) => StatusCode::GATEWAY_TIMEOUT,
            ApiError::Plugin(_) | ApiError::Store(_) | ApiError::Internal(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        match &self {
            ApiError::Store(_) | ApiError::Internal(_) => {
                tracing::error!(error = %self, "internal error");
                let mut response =
                    (status, Json(json!({ "detail": "internal server error" }))).into_response();
                response.extensions_mut().insert(HiddenInternalError);
                response
            }
            ApiError::Plugin(e) => {
                tracing::error!(error = %e, "plugin failure");
                (status, Json(json!({ "detail": e.to_string() }))).into_response()
            }
            _ => (status, Json(json!({ "detail": self.to_string() }))).into_response(),
        }
    }
}

impl From<AnalysisError> for ApiError {
    fn from(e: AnalysisError) -> Self {
        match e {
            AnalysisError::NotFound(m) => ApiError::NotFound(m),
            AnalysisError::InsufficientData(m) => ApiError::Unprocessable(m),
            AnalysisError::Invalid(m) => ApiError::BadRequest(m),
            AnalysisError::Plugin(p) => ApiError::Plugin(p),
            AnalysisError::Store(s) => ApiError::Store(s),
            AnalysisError::Internal(m) => ApiError::Internal(m),
        }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::BadRequest(format!("invalid query string: {}", r.body_text()))
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        match r {
            JsonRejection::BytesRejection(b) if b.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                ApiError::BadRequest("request body too large".into())
            }
            other => ApiError::BadRequest(format!("invalid JSON body: {}", other.body_text())),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        ApiError::BadRequest(format!("invalid path: {}", r.body_text()))
    }
}
