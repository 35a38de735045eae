//! `GET/PUT /web/watchlist`: the signed-in user's watchlist, chosen at the
//! web application's onboarding (session cookie, any tier, not metered).

use axum::extract::State;
use axum::Json;
use forecast_api::accounts::{SetWatchlistRequest, Watchlist};
use forecast_api::ErrorBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::extract::Json as JsonBody;
use super::session::SessionUser;
use crate::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get, put))
}

/// The user's watchlist.
#[utoipa::path(
    get,
    path = "/web/watchlist",
    operation_id = "getWatchlist",
    tag = "web",
    summary = "The signed-in user's watchlist (active assets, in the order chosen)",
    responses((status = 200, description = "OK", body = Watchlist))
)]
async fn get(
    State(state): State<AppState>,
    SessionUser(user): SessionUser,
) -> Result<Json<Watchlist>, ApiError> {
    Ok(Json(state.watchlists.get(&user).await?))
}

/// Replaces the user's watchlist.
#[utoipa::path(
    put,
    path = "/web/watchlist",
    operation_id = "setWatchlist",
    tag = "web",
    summary = "Replace the signed-in user's watchlist",
    description = "The whole list at once, at most 50 tickers; a repeated ticker is kept once. Refused whole (nothing changes) when a ticker is not an active asset.",
    request_body = SetWatchlistRequest,
    responses(
        (status = 200, description = "Saved; the watchlist as stored", body = Watchlist),
        (status = 400, description = "More than 50 tickers, an empty one, or one that is not an active asset; detail names it", body = ErrorBody),
    )
)]
async fn put(
    State(state): State<AppState>,
    SessionUser(user): SessionUser,
    JsonBody(body): JsonBody<SetWatchlistRequest>,
) -> Result<Json<Watchlist>, ApiError> {
    Ok(Json(state.watchlists.set(&user, &body).await?))
}
