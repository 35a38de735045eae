//! `GET /api/health`: liveness, and with `debug=1` the diagnostics an
//! operator needs (database reachable, counts, active plugin versions).

use axum::extract::State;
use axum::Json;
use forecast_api::health::{HealthQuery, HealthResponse};
use forecast_api::ErrorBody;
use serde_json::{json, Value};

use super::error::ApiError;
use super::extract::Query;
use crate::AppState;

/// Health probe.
#[utoipa::path(
    get,
    path = "/api/health",
    operation_id = "health",
    summary = "Health probe",
    params(HealthQuery),
    responses(
        (status = 200, description = "Up (status `degraded` when the database is unreachable)", body = HealthResponse),
        (status = 400, description = "debug is not 0 or 1", body = ErrorBody),
    )
)]
pub async fn health(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
    Query(q): Query<HealthQuery>,
) -> Result<Json<Value>, ApiError> {
    let debug = match q.debug.as_deref() {
        None | Some("0") => false,
        Some("1") => true,
        Some(other) => {
            return Err(ApiError::BadRequest(format!(
                "debug must be 0 or 1 (got '{}')",
                forecast_api::quote(other)
            )))
        }
    };
    let mut body = json!({ "status": "ok", "service": "svc-api" });
    // The details (database, counts, versions, limits) are an operator's:
    // anyone else gets the plain answer.
    if debug && super::admin::is_admin(&state, &headers) {
        let store = state.health.store().await;
        if !store.reachable {
            body["status"] = json!("degraded");
        }
        let runtime = state.plugins.runtime().config();
        body["debug"] = json!({
            "version": env!("CARGO_PKG_VERSION"),
            "uptime_seconds": state.started.elapsed().as_secs(),
            "environment": {
                "os": std::env::consts::OS,
                "arch": std::env::consts::ARCH,
                "database_url": state.health.database_url(),
            },
            "database": store.database,
            "plugins": state.plugins.active(),
            "grading": store.grading,
            "plugin_limits": {
                "call_timeout_ms": runtime.call_timeout.as_millis() as u64,
                "memory_limit_mb": runtime.memory_limit >> 20,
                "max_concurrency": runtime.max_concurrency,
            },
        });
    }
    Ok(Json(body))
}
