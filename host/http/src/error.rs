//! The one error type of the HTTP layer, and the one place where the
//! errors of the layers below become status codes (the `From` impls at the
//! end). Every non-2xx response the service produces is
//! `{"detail": "..."}`; 5xx causes are logged with the request id and never
//! shown (no SQL, no traces).

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use forecast_api::Invalid;
use forecast_plugins::PluginError;
use forecast_services::error::Error as ServiceError;

/// Marks an answer whose work was refused before it started (503 Busy):
/// the quota guard gives the request's charge back.
#[derive(Debug, Clone, Copy)]
pub struct Uncharged;

/// Marks an answer whose work stopped part way (a batch at its time
/// limit): the quota guard gives back what its charge exceeds these units.
#[derive(Debug, Clone, Copy)]
pub struct ChargeAtMost(pub u32);

/// An error answered to a client.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: a parameter or body is invalid; the message names it.
    #[error("{0}")]
    BadRequest(String),
    /// 401: no valid credential (the same message whatever was wrong).
    #[error("{0}")]
    Unauthorized(String),
    /// 402: a valid credential of a user whose tier has no API access.
    #[error("{0}")]
    PaymentRequired(String),
    /// 403: a cookie-authenticated state change from a foreign origin.
    #[error("{0}")]
    Forbidden(String),
    /// 404: unknown or inactive asset, unknown route.
    #[error("{0}")]
    NotFound(String),
    /// 409: the request conflicts with the current state (a 6th key).
    #[error("{0}")]
    Conflict(String),
    /// 429: a rate limit; `Retry-After` carries the seconds to wait.
    #[error("{detail}")]
    TooManyRequests {
        /// Message.
        detail: String,
        /// Seconds until a retry can succeed.
        retry_after: u64,
    },
    /// 503: a dependency the request cannot go without is down (the quota
    /// store): fail closed.
    #[error("{0}")]
    Unavailable(String),
    /// 503 at a capacity limit (concurrent password hashes); `Retry-After`
    /// says when to try again.
    #[error("{detail}")]
    Busy {
        /// Message.
        detail: String,
        /// Seconds to wait.
        retry_after: u64,
    },
    /// 415: a body of a type the route does not take.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 422: the asset's history is too short to analyse.
    #[error("{0}")]
    Unprocessable(String),
    /// 422 for a request refused before any work was done: the quota
    /// guard gives its charge back.
    #[error("{0}")]
    UnprocessableUncharged(String),
    /// 500/504 from a plugin: the detail names the plugin and version.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// 500: a plugin answered outside its contract or ended the work; the
    /// detail names it.
    #[error("{0}")]
    PluginContract(String),
    /// 504: the work passed its time limit; the detail says how to shrink it.
    #[error("{0}")]
    GatewayTimeout(String),
    /// 504 for a batch that ended at its time limit: charged at most
    /// `charge` units (what ran); the quota guard gives the rest back.
    #[error("{detail}")]
    GatewayTimeoutCharged {
        /// Message.
        detail: String,
        /// Units the work that ran is worth.
        charge: u32,
    },
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
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::PaymentRequired(_) => StatusCode::PAYMENT_REQUIRED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable(_) | ApiError::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Unprocessable(_) | ApiError::UnprocessableUncharged(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::Plugin(PluginError::Timeout { .. })
            | ApiError::GatewayTimeout(_)
            | ApiError::GatewayTimeoutCharged { .. } => StatusCode::GATEWAY_TIMEOUT,
            ApiError::Plugin(_) | ApiError::PluginContract(_) | ApiError::Internal(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        match &self {
            ApiError::Internal(_) => {
                tracing::error!(error = %self, "internal error");
                let mut response =
                    (status, Json(json!({ "detail": "internal server error" }))).into_response();
                response.extensions_mut().insert(HiddenInternalError);
                response
            }
            ApiError::Plugin(_) | ApiError::PluginContract(_) => {
                tracing::error!(error = %self, "plugin failure");
                (status, Json(json!({ "detail": self.to_string() }))).into_response()
            }
            ApiError::GatewayTimeout(_) => {
                tracing::warn!(error = %self, "timed out");
                (status, Json(json!({ "detail": self.to_string() }))).into_response()
            }
            ApiError::GatewayTimeoutCharged { charge, .. } => {
                tracing::warn!(error = %self, "timed out");
                let mut response =
                    (status, Json(json!({ "detail": self.to_string() }))).into_response();
                response.extensions_mut().insert(ChargeAtMost(*charge));
                response
            }
            ApiError::Unauthorized(_) => {
                let mut response =
                    (status, Json(json!({ "detail": self.to_string() }))).into_response();
                response.headers_mut().insert(
                    axum::http::header::WWW_AUTHENTICATE,
                    axum::http::HeaderValue::from_static("Bearer"),
                );
                response
            }
            ApiError::TooManyRequests { retry_after, .. } => {
                let mut response =
                    (status, Json(json!({ "detail": self.to_string() }))).into_response();
                response.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    axum::http::HeaderValue::from(*retry_after),
                );
                response
            }
            ApiError::Busy { retry_after, .. } => {
                let mut response =
                    (status, Json(json!({ "detail": self.to_string() }))).into_response();
                // Refused before the work: the quota guard gives the charge back.
                response.extensions_mut().insert(Uncharged);
                response.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    axum::http::HeaderValue::from(*retry_after),
                );
                response
            }
            ApiError::UnprocessableUncharged(_) => {
                let mut response =
                    (status, Json(json!({ "detail": self.to_string() }))).into_response();
                response.extensions_mut().insert(Uncharged);
                response
            }
            ApiError::Unavailable(_) => {
                tracing::warn!(error = %self, "unavailable");
                (status, Json(json!({ "detail": self.to_string() }))).into_response()
            }
            _ => (status, Json(json!({ "detail": self.to_string() }))).into_response(),
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

impl From<Invalid> for ApiError {
    fn from(e: Invalid) -> Self {
        ApiError::BadRequest(e.0)
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Invalid(m) => ApiError::BadRequest(m),
            ServiceError::NotFound(m) => ApiError::NotFound(m),
            ServiceError::InsufficientData(m) | ServiceError::Refused(m) => {
                ApiError::Unprocessable(m)
            }
            ServiceError::RefusedUncharged(m) => ApiError::UnprocessableUncharged(m),
            ServiceError::Conflict(m) => ApiError::Conflict(m),
            ServiceError::NotPremium(m) => ApiError::PaymentRequired(m),
            ServiceError::InvalidCredentials(m) => ApiError::Unauthorized(m),
            ServiceError::TooManyAttempts {
                detail,
                retry_after,
            } => ApiError::TooManyRequests {
                detail,
                retry_after,
            },
            ServiceError::Unavailable(m) => ApiError::Unavailable(m),
            ServiceError::Busy {
                detail,
                retry_after,
            } => ApiError::Busy {
                detail,
                retry_after,
            },
            ServiceError::TimedOut(m) => ApiError::GatewayTimeout(m),
            ServiceError::TimedOutAfter { detail, finished } => ApiError::GatewayTimeoutCharged {
                detail,
                charge: forecast_api::research::cost(finished as usize),
            },
            ServiceError::PluginContract(m) => ApiError::PluginContract(m),
            ServiceError::Plugin(p) => ApiError::Plugin(p),
            ServiceError::Store(s) => ApiError::Internal(s.to_string()),
            ServiceError::Internal(m) => ApiError::Internal(m),
        }
    }
}
