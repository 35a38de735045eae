//! What `/api/health?debug=1` tells an operator about the store: whether
//! it answers, its row counts, and the grading runs.

use std::sync::Arc;

use serde_json::{json, Value};

use forecast_store::Database;

/// The store as seen by the health check.
#[derive(Debug, Clone)]
pub struct StoreHealth {
    /// False when the store did not answer a ping: the service is degraded.
    pub reachable: bool,
    /// `backend`, `reachable` and (when they could be read) `counts`.
    pub database: Value,
    /// The latest grading run and the running one (`null` when they could
    /// not be read).
    pub grading: Value,
}

/// Diagnostics of the store.
pub struct HealthService {
    db: Arc<dyn Database>,
    database_url: String,
}

impl HealthService {
    /// Diagnoses `db`, opened from `database_url` (shown redacted).
    pub fn new(db: Arc<dyn Database>, database_url: String) -> Self {
        HealthService { db, database_url }
    }

    /// The store's URL with any password replaced by `***`.
    pub fn database_url(&self) -> String {
        forecast_store::redact(&self.database_url)
    }

    /// Pings the store, counts its rows and reads the grading runs.
    pub async fn store(&self) -> StoreHealth {
        let db = self.db.as_ref();
        let (reachable, database) = match db.ping().await {
            Ok(()) => match db.counts().await {
                Ok(counts) => (
                    true,
                    json!({ "backend": db.backend(), "reachable": true, "counts": counts }),
                ),
                Err(e) => {
                    tracing::warn!(error = %e, "health: counts failed");
                    (
                        true,
                        json!({ "backend": db.backend(), "reachable": true, "counts": null }),
                    )
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "health: database unreachable");
                (
                    false,
                    json!({ "backend": db.backend(), "reachable": false }),
                )
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
        StoreHealth {
            reachable,
            database,
            grading,
        }
    }
}
