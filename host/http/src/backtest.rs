//! `POST /api/backtest` (cost 5) and `GET /api/strategies`: the strategies
//! a backtest may name.

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;

use super::error::ApiError;
use super::extract::Json as JsonBody;
use crate::AppState;
use forecast_services::backtest::{BacktestError, BacktestRequest, BacktestResponse};

/// The backtest route (metered at cost 5 by the caller's route layer).
pub fn router() -> Router<AppState> {
    Router::new().route("/api/backtest", post(run))
}

/// The strategy listing (cost 1).
pub fn listing_router() -> Router<AppState> {
    Router::new().route("/api/strategies", get(list))
}

async fn run(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<BacktestRequest>,
) -> Result<Json<BacktestResponse>, ApiError> {
    let req = body.validate().map_err(ApiError::BadRequest)?;
    Ok(Json(state.backtests.run(req).await?))
}

impl From<BacktestError> for ApiError {
    fn from(e: BacktestError) -> Self {
        match e {
            BacktestError::Invalid(m) => ApiError::BadRequest(m),
            BacktestError::TimedOut(m) => ApiError::GatewayTimeout(m),
            BacktestError::Plugin(p) => ApiError::Plugin(p),
            BacktestError::Strategy(m) => ApiError::PluginContract(m),
            BacktestError::Store(s) => ApiError::Store(s),
            BacktestError::Internal(m) => ApiError::Internal(m),
        }
    }
}

/// One loaded strategy.
#[derive(Debug, Serialize)]
struct StrategyItem {
    name: String,
    version: String,
    description: String,
    sha256: String,
}

/// `{strategies}`.
#[derive(Debug, Serialize)]
struct StrategyList {
    strategies: Vec<StrategyItem>,
}

async fn list(State(state): State<AppState>) -> Json<StrategyList> {
    Json(StrategyList {
        strategies: state
            .plugins
            .strategies()
            .iter()
            .map(|s| StrategyItem {
                name: s.info().name.clone(),
                version: s.info().version.clone(),
                description: s.description().to_string(),
                sha256: s.info().sha256.clone(),
            })
            .collect(),
    })
}
