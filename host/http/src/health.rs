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
        let db = state.db.as_ref();
        let database = match db.ping().await {
            Ok(()) => match db.counts().await {
                Ok(counts) => {
                    json!({ "backend": db.backend(), "reachable": true, "counts": counts })
                }
                Err(e) => {
                    tracing::warn!(error = %e, "health: counts failed");
                    json!({ "backend": db.backend(), "reachable": true, "counts": null })
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "health: database unreachable");
                body["status"] = json!("degraded");
                json!({ "backend": db.backend(), "reachable": false })
            }
        };
        let grading = match (db.latest_grading_run().await, db.active_grading_run().await) {
            (Ok(latest), Ok(active)) => json!({
                "last_run": latest.map(|r| json!({
                    "id": r.id,
                    "day": r.day,
                    "status": r.status,
                    "started_at": chrono::DateTime::from_timestamp(r.started_at, 0),
                    "duration_seconds": r.finished_at.map(|f| f - r.started_at),
                    "total": r.total,
                    "assets_graded": r.graded,
                    "failures": r.failures,
                    "engine": r.engine,
                    "scorer": r.scorer,
                })),
                "active_run": active.map(|r| r.id),
            }),
            _ => json!(null),
        };
        let runtime = state.plugins.runtime().config();
        body["debug"] = json!({
            "version": env!("CARGO_PKG_VERSION"),
            "uptime_seconds": state.started.elapsed().as_secs(),
            "environment": {
                "os": std::env::consts::OS,
                "arch": std::env::consts::ARCH,
                "database_url": forecast_store::redact(&state.config.database_url),
            },
            "database": database,
            "plugins": state.plugins.active(),
            "grading": grading,
            "plugin_limits": {
                "call_timeout_ms": runtime.call_timeout.as_millis() as u64,
                "memory_limit_mb": runtime.memory_limit >> 20,
                "max_concurrency": runtime.max_concurrency,
            },
        });
    }
    Ok(Json(body))
}
