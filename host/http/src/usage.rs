//! `GET /api/usage`: the caller's quota spent this minute and today, in
//! all and by route. Free, like the other status a page polls.

use axum::extract::State;
use axum::{Extension, Json};
use forecast_api::usage::UsageResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::guard::ApiUser;
use crate::AppState;

/// The usage route (cost 0: it is in the free group).
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(usage))
}

/// The caller's usage.
#[utoipa::path(
    get,
    path = "/api/usage",
    operation_id = "usage",
    summary = "Your quota: what you have spent this minute and today (UTC), in all and by route",
    description = "`minute` and `day` are the windows the X-RateLimit-* headers describe (limit, used, remaining, reset in Unix seconds). `routes` lists what each route cost today and this minute, most expensive first; the web app's calls appear as their `/web/api` twins. Units given back (a run refused before it started, or charged less because it stopped part way) are not counted; free routes (this one, the unread count) never appear. Costs nothing.",
    responses((status = 200, description = "OK", body = UsageResponse))
)]
async fn usage(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
) -> Result<Json<UsageResponse>, ApiError> {
    let now = state.clock.timestamp();
    Ok(Json(state.quota.usage(&user, now).await?))
}
