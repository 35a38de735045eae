//! `GET /api/analysis/{ticker}` and `GET /api/analysis/{ticker}/verdict`.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

use super::error::ApiError;
use super::extract::{Path, Query};
use crate::AppState;
use forecast_services::analysis::{AnalysisResponse, RawAnalysisQuery};
use forecast_services::verdict::VerdictResponse;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/analysis/{ticker}", get(full))
        .route("/api/analysis/{ticker}/verdict", get(verdict))
}

async fn full(
    State(state): State<AppState>,
    Path(ticker): Path<String>,
    Query(raw): Query<RawAnalysisQuery>,
) -> Result<Json<AnalysisResponse>, ApiError> {
    let q = raw.validate().map_err(ApiError::BadRequest)?;
    let answer = state.analysis.analyse(&ticker, &q).await?;
    state.analysis.maybe_shadow(&ticker, &q);
    Ok(Json(answer))
}

async fn verdict(
    State(state): State<AppState>,
    Path(ticker): Path<String>,
    Query(raw): Query<RawAnalysisQuery>,
) -> Result<Json<VerdictResponse>, ApiError> {
    let q = raw.validate().map_err(ApiError::BadRequest)?;
    Ok(Json(state.verdicts.verdict(&ticker, &q).await?))
}
