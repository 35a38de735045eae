//! `GET /api/health`.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Query of `GET /api/health`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HealthQuery {
    /// `1` adds environment, database, plugin and grading diagnostics when
    /// the request carries the admin token (`Authorization: Bearer
    /// <FORECAST_ADMIN_TOKEN>`); without it the answer is the plain one.
    #[param(schema_with = debug_flag)]
    pub debug: Option<String>,
}

/// `0` (the default) or `1`.
fn debug_flag() -> utoipa::openapi::Object {
    crate::integer_enum(&[0, 1], 0)
}

/// The health body.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HealthResponse {
    /// `ok`, or `degraded` when the database is unreachable.
    #[schema(example = "ok")]
    pub status: String,
    /// Always `svc-api`.
    #[schema(example = "svc-api")]
    pub service: String,
    /// With `debug=1` and the admin token: version, uptime, environment,
    /// database counts, active plugins, the last grading run and the
    /// plugin limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub debug: Option<serde_json::Value>,
}
