//! `GET /api/health`, typed. The diagnostics (`debug=1` with the admin
//! token) are a `serde_json::Value` in the contract (`HealthResponse.debug`,
//! built by the HTTP layer and the health service), so their shape is
//! mirrored here from `host/http/src/health.rs` and
//! `host/services/src/health.rs`: a renamed or retyped field fails the
//! tests that read it when the answer is decoded.

use serde::Deserialize;

use crate::api::with_query;
use crate::{Api, Refusal};

/// `{status, service, debug?}`: `forecast_api::health::HealthResponse`,
/// which the server only serializes, with its diagnostics decoded.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Health {
    /// `ok`, or `degraded` when the store does not answer.
    pub status: String,
    /// `svc-api`.
    pub service: String,
    /// The operator's diagnostics (`debug=1` with the admin token).
    pub debug: Option<Diagnostics>,
}

/// What `debug=1` adds.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Diagnostics {
    /// The server's version.
    pub version: String,
    pub uptime_seconds: u64,
    pub environment: Environment,
    pub database: DatabaseHealth,
    /// The active plugins.
    pub plugins: Vec<ActivePlugin>,
    /// The grading runs; null when they could not be read.
    pub grading: Option<GradingHealth>,
    pub plugin_limits: PluginLimits,
}

/// Where the server runs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Environment {
    pub os: String,
    pub arch: String,
    /// Redacted.
    pub database_url: String,
}

/// The store.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct DatabaseHealth {
    /// `sqlite` or `postgres`.
    pub backend: String,
    pub reachable: bool,
    /// Absent when unreachable, null when they could not be read.
    #[serde(default)]
    pub counts: Option<StoreCounts>,
}

/// The store's row counts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StoreCounts {
    pub assets: i64,
    pub active_assets: i64,
    pub assets_with_prices: i64,
    pub price_rows: i64,
    pub cached_analyses: i64,
    pub cached_metadata: i64,
}

/// An active plugin.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ActivePlugin {
    pub kind: String,
    pub name: String,
    pub version: String,
    pub sha256: String,
}

/// The latest grading run and the id of the active one.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct GradingHealth {
    pub last_run: Option<GradingRun>,
    pub active_run: Option<String>,
}

/// A grading run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct GradingRun {
    pub id: String,
    pub day: String,
    /// `running` or `done`.
    pub status: String,
    pub started_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Null while running.
    pub duration_seconds: Option<i64>,
    pub total: i64,
    pub assets_graded: i64,
    pub failures: i64,
    pub engine: String,
    pub scorer: String,
}

/// The plugin runtime's limits.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PluginLimits {
    pub call_timeout_ms: u64,
    pub memory_limit_mb: u64,
    pub max_concurrency: u64,
}

impl Api {
    /// `GET /api/health?query`.
    pub async fn health(&self, query: &str) -> Result<Health, Refusal> {
        self.get(&with_query("/health".into(), query)).await
    }

    /// The diagnostics of `GET /api/health?debug=1` (this client must hold
    /// the admin token); panics when they are missing.
    pub async fn diagnostics(&self) -> Diagnostics {
        let health = self
            .health("debug=1")
            .await
            .unwrap_or_else(|r| panic!("the health check: {r}"));
        health.debug.expect("diagnostics for the admin token")
    }
}
