//! `GET/PUT /web/watchlist`: the signed-in user's watchlist, chosen at the
//! web application's onboarding (session cookie, any tier, not metered).

use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use forecast_api::accounts::{SetWatchlistRequest, Watchlist};
use forecast_api::ranking::RawRankingQuery;
use forecast_api::ErrorBody;
use forecast_domain::Tier;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::export::{ExportQuery, Want, WatchlistTable};
use super::extract::Json as JsonBody;
use super::guard::Fresh;
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
    description = "As CSV (format=csv or Accept: text/csv), one row per asset with, for a Premium account, its latest graded figures at the default horizon and metric (90 days, return; the ranking's row, from the same snapshot); cells are empty for an asset the last run did not grade, and the graded columns for a Free account. Not metered.",
    responses(
        (status = 200, description = "OK", body = Watchlist),
        (status = 400, description = "format or table is not one the route knows; detail names it", body = ErrorBody),
    )
)]
async fn get(
    State(state): State<AppState>,
    fresh: Option<Extension<Fresh>>,
    headers: HeaderMap,
    Query(export): Query<ExportQuery>,
    SessionUser(user): SessionUser,
) -> Result<Response, ApiError> {
    let want = Want::of::<WatchlistTable>(&headers, &export)?;
    let list = state.watchlists.get(&user).await?;
    if !want.is_csv() {
        return Ok(Json(list).into_response());
    }
    let tickers: Vec<String> = list.tickers.iter().map(|i| i.ticker.clone()).collect();
    let graded = match user.tier {
        Tier::Premium => {
            let q = RawRankingQuery::default()
                .validate()
                .map_err(|e| ApiError::Internal(format!("the default ranking query: {}", e.0)))?;
            let generations = Fresh::or_read(fresh, &state).await;
            state.ranking.rows_for(&tickers, &q, generations).await?
        }
        _ => vec![None; tickers.len()],
    };
    want.respond(WatchlistTable {
        items: list.tickers,
        graded,
    })
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
