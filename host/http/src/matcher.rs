//! `POST /api/match-tickers` (session cookie only; a per-user rate limit).

use axum::extract::State;
use axum::Json;
use forecast_api::ErrorBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::extract::Json as JsonBody;
use super::session::SessionUser;
use crate::AppState;
use forecast_api::matcher::{MatchRequest, MatchResponse};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(match_tickers))
}

/// Free text to tickers.
#[utoipa::path(
    post,
    path = "/api/match-tickers",
    operation_id = "matchTickers",
    summary = "Free text (a ticker, a name, a misspelling, a brand or product) to at most 3 active assets",
    description = "The matcher component searches the active catalog (tickers with and without exchange suffixes, ISINs, names, fuzzy spelling, websites, products in summaries, asset classes such as gold or oil, and with the sentence-embedding model descriptions); among near-equal candidates the better-known asset (major index membership) comes first, and a vehicle word (ETF, index, futures, coin) prefers that kind of asset. A text naming several assets (\"I own apple, tesla and some bitcoin\", \"bitcoin ethereum solana\", a pasted column of tickers) is answered per asset in `mentions`; `matches` keeps at most 3. Confidences are calibrated on held-out data: of answers reported at 0.9 or more, at least 90 % were right, and such a first match is `sure`. When a language model is configured (FORECAST_LLM_URL) it may ask it to choose among its top candidates, and keeps its own answer when the model is unavailable. Gibberish gives an empty list. At most FORECAST_MATCH_PER_MINUTE (30) requests per user per minute.",
    request_body = MatchRequest,
    responses(
        (status = 200, description = "OK", body = MatchResponse),
        (status = 400, description = "text missing, blank or longer than 500 characters", body = ErrorBody),
        (status = 429, description = "Too many matcher requests; Retry-After says when to retry", body = ErrorBody),
        (status = 500, description = "The matcher plugin failed (the detail names it)", body = ErrorBody),
    )
)]
async fn match_tickers(
    State(state): State<AppState>,
    SessionUser(user): SessionUser,
    JsonBody(body): JsonBody<MatchRequest>,
) -> Result<Json<MatchResponse>, ApiError> {
    Ok(Json(state.matcher.match_text(&user, &body.text).await?))
}
