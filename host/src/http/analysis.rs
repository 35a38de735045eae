//! `GET /api/analysis/{ticker}` and `GET /api/analysis/{ticker}/verdict`.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

use super::error::ApiError;
use super::extract::{Path, Query};
use crate::analysis::{self, AnalysisResponse, RawAnalysisQuery};
use crate::app::AppState;
use crate::verdict::{self as verdicts, VerdictResponse};

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
    let answer = analysis::analyse(&state, &ticker, &q).await?;
    analysis::maybe_shadow(&state, &ticker, &q);
    Ok(Json(answer))
}

async fn verdict(
    State(state): State<AppState>,
    Path(ticker): Path<String>,
    Query(raw): Query<RawAnalysisQuery>,
) -> Result<Json<VerdictResponse>, ApiError> {
    let q = raw.validate().map_err(ApiError::BadRequest)?;
    Ok(Json(verdicts::verdict(&state, &ticker, &q).await?))
}
