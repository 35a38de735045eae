//! `GET /api/ranking`: the active grading snapshot, filtered, sorted and
//! cut, per spec and DESIGN §5 (the policy is the ranking service's).

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::IntoResponse;
use axum::response::Response;
use axum::Extension;
use forecast_api::ranking::{RankingQuery, RankingResponse, RawRankingQuery, RawScreen};
use forecast_api::ErrorBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::export::{ExportQuery, Want};
use super::extract::Query;
use super::guard::Fresh;
use crate::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(ranking))
}

/// Ranked assets.
#[utoipa::path(
    get,
    path = "/api/ranking",
    operation_id = "ranking",
    summary = "Assets ranked from the daily grading snapshot",
    description = "The whole snapshot is filtered (category or categories, the text q on ticker or name, max_age_days, and the screener: source, grades, the min_/max_ ranges of score, current_drawdown, median_return, expected_return and win_rate, min_episodes, currency; every filter given must hold, and a min_ above its max_ is a 400), sorted by sort_by (ties by ticker, ascending) and cut to one page: offset rows skipped, then at most limit. rank is the position in the whole filtered, sorted list, and metadata.filtered_assets its length, so pages of limit rows from offset 0, limit, 2·limit, … cover it.",
    params(RawRankingQuery, RawScreen),
    responses(
        (status = 200, description = "OK", body = RankingResponse),
        (status = 400, description = "A parameter is invalid; detail names it", body = ErrorBody),
        (status = 503, description = "No grading run has completed yet", body = ErrorBody),
    )
)]
async fn ranking(
    State(state): State<AppState>,
    fresh: Option<Extension<Fresh>>,
    headers: HeaderMap,
    Query(export): Query<ExportQuery>,
    Query(raw): Query<RawRankingQuery>,
    Query(screen): Query<RawScreen>,
) -> Result<Response, ApiError> {
    let want = Want::of::<RankingResponse>(&headers, &export)?;
    let q = RankingQuery {
        screen: screen.validate()?,
        ..raw.validate()?
    };
    let generations = Fresh::or_read(fresh, &state).await;
    if want.is_csv() {
        return want.respond(state.ranking.rank(&q, generations).await?);
    }
    // The JSON page, serialised once per query while the snapshot lasts.
    let body = state.ranking.rank_json(&q, generations).await?;
    Ok((
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response())
}
