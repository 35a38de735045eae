//! `POST /api/match-tickers` (session cookie only; a per-user rate limit).

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;

use super::error::ApiError;
use super::extract::Json as JsonBody;
use super::session::SessionUser;
use crate::AppState;
use forecast_services::matcher::{self, MatchError, MatchResponse};
use forecast_store::Window;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/match-tickers", post(match_tickers))
}

#[derive(Debug, Deserialize)]
struct MatchBody {
    text: String,
}

impl From<MatchError> for ApiError {
    fn from(e: MatchError) -> Self {
        match e {
            MatchError::Invalid(m) => ApiError::BadRequest(m),
            MatchError::Plugin(p) => ApiError::Plugin(p),
            MatchError::Store(s) => ApiError::Store(s),
            MatchError::Internal(m) => ApiError::Internal(m),
        }
    }
}

async fn match_tickers(
    State(state): State<AppState>,
    SessionUser(user): SessionUser,
    JsonBody(body): JsonBody<MatchBody>,
) -> Result<Json<MatchResponse>, ApiError> {
    matcher::validate(&body.text)?;
    let now = chrono::Utc::now().timestamp();
    let window = Window {
        kind: "match",
        seconds: 60,
        limit: state.config.match_per_minute,
    };
    let used = state
        .db
        .consume(&format!("match:{}", user.id), &[window], 1, now)
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "matcher limiter unavailable");
            ApiError::Unavailable("the matcher is temporarily unavailable".into())
        })?;
    if !used.admitted {
        return Err(ApiError::TooManyRequests {
            detail: format!(
                "at most {} matcher requests per minute; try again shortly",
                window.limit
            ),
            retry_after: (used.windows[0].reset - now).max(1) as u64,
        });
    }
    Ok(Json(state.matcher.match_text(&body.text).await?))
}
