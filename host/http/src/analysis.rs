//! `GET /api/analysis/{ticker}`, `GET /api/analysis/{ticker}/verdict` and
//! `GET /api/track-record/{ticker}`.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::export::{ExportQuery, Want};
use super::extract::{Path, Query};
use super::guard::{ApiUser, Fresh};
use crate::AppState;
use forecast_api::analysis::{
    AnalysisResponse, RawAnalysisQuery, RawDrawingQuery, VerdictResponse,
};
use forecast_api::track_record::{
    RawTrackRecordQuery, RawUniverseTrackRecordQuery, TrackRecordResponse,
    UniverseTrackRecordResponse,
};
use forecast_api::ErrorBody;
use forecast_services::verdict::VerdictBody;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(full))
        .routes(routes!(verdict))
        .routes(routes!(track_record))
        .routes(routes!(universe_track_record))
        .routes(routes!(models))
}

/// Full drawdown-segmented analysis.
#[utoipa::path(
    get,
    path = "/api/analysis/{ticker}",
    operation_id = "analysis",
    summary = "Full drawdown-segmented analysis",
    description = "Default segments and decay over the whole history for return_period 7, 30, 90, 180 or 365 are served from the analysis cache (metadata.from_cache); other parameters are computed live by the segmentation component. Besides the bounds of each parameter: start_date must be on or before end_date (else 400), and the asset must have at least 300 price rows between them (else 422). max_points thins the time_series arrays for drawing after everything is computed (and cached) on all rows; without it every row is sent.",
    params(("ticker" = String, Path, description = "An active ticker, URL-encoded", example = "^GSPC"), RawAnalysisQuery, RawDrawingQuery),
    responses(
        (status = 200, description = "OK", body = AnalysisResponse),
        (status = 400, description = "A parameter is out of bounds; detail names it", body = ErrorBody),
        (status = 404, description = "Unknown or inactive ticker", body = ErrorBody),
        (status = 422, description = "Fewer than 300 price rows in the window", body = ErrorBody),
        (status = 500, description = "The segmentation plugin failed; detail names plugin and version", body = ErrorBody),
        (status = 503, description = "Computing it live needs a turn of the server's heavy-work budget and none came in time (FORECAST_HEAVY_SLOTS, FORECAST_HEAVY_MEMORY_MB, FORECAST_HEAVY_WAIT_MS); nothing was computed or charged; Retry-After says when to retry", body = ErrorBody),
        (status = 504, description = "The segmentation plugin ran past its time limit", body = ErrorBody),
    )
)]
async fn full(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path(ticker): Path<String>,
    Query(raw): Query<RawAnalysisQuery>,
    Query(drawing): Query<RawDrawingQuery>,
    headers: HeaderMap,
    Query(export): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    let want = Want::of::<AnalysisResponse>(&headers, &export)?;
    let q = raw.validate()?;
    let drawing = drawing.validate()?;
    let mut answer = state.analysis.analyse(&ticker, &q, &user.id).await?;
    state.analysis.maybe_shadow(&ticker, &q);
    // The verdict's forecast (from the graded snapshot for the defaults):
    // the analysis answers without it rather than fail on it.
    answer.forecast = match state.verdicts.verdict(&ticker, &q, &user.id).await {
        Ok(v) => v.forecast,
        Err(e) => {
            tracing::debug!(error = %e, "analysis without a forecast");
            None
        }
    };
    forecast_services::analysis::thin_for_drawing(&mut answer, drawing);
    want.respond(answer)
}

/// Verdict-only projection.
#[utoipa::path(
    get,
    path = "/api/analysis/{ticker}/verdict",
    operation_id = "verdict",
    summary = "Verdict-only projection: state, signals, active segment, grade",
    description = "The graded defaults (20 segments, decay 0.95, no dates, return_period 7/30/90/180/365, any metric) come from the daily grading snapshot (metadata.from_cache) as long as it describes the asset's current data and the active engine and scorer; anything else is computed live. Besides the bounds of each parameter: start_date must be on or before end_date (else 400), and the asset must have at least 300 price rows between them (else 422). The engine is given at most the last 60,000 rows of that window (metadata.start_date is the first row used), so a longer stored history is analysed over its latest 60,000 rows.",
    params(("ticker" = String, Path, description = "An active ticker, URL-encoded", example = "^GSPC"), RawAnalysisQuery),
    responses(
        (status = 200, description = "OK", body = VerdictResponse),
        (status = 400, description = "A parameter is out of bounds; detail names it", body = ErrorBody),
        (status = 404, description = "Unknown or inactive ticker", body = ErrorBody),
        (status = 422, description = "Fewer than 300 price rows in the window", body = ErrorBody),
        (status = 500, description = "A plugin failed; detail names plugin and version", body = ErrorBody),
        (status = 503, description = "Computing it live needs a turn of the server's heavy-work budget and none came in time (FORECAST_HEAVY_SLOTS, FORECAST_HEAVY_MEMORY_MB, FORECAST_HEAVY_WAIT_MS); nothing was computed or charged; Retry-After says when to retry", body = ErrorBody),
        (status = 504, description = "A plugin ran past its time limit", body = ErrorBody),
    )
)]
async fn verdict(
    State(state): State<AppState>,
    fresh: Option<Extension<Fresh>>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path(ticker): Path<String>,
    Query(raw): Query<RawAnalysisQuery>,
) -> Result<Response, ApiError> {
    let q = raw.validate()?;
    let generations = fresh.map(|Extension(Fresh(g))| g);
    Ok(
        match state
            .verdicts
            .verdict_body(&ticker, &q, generations, &user.id)
            .await?
        {
            // The snapshot's body, serialised once when it was first served.
            VerdictBody::Cached(bytes) => (
                [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                bytes,
            )
                .into_response(),
            VerdictBody::Live(v) => Json::<VerdictResponse>(*v).into_response(),
        },
    )
}

/// An asset's grade history and what followed each grade.
#[utoipa::path(
    get,
    path = "/api/track-record/{ticker}",
    operation_id = "track_record_asset",
    summary = "Grade history: the grade at each past month-end and the return realised after it",
    description = "For each month-end of the asset's history with at least 300 rows up to it, the grade and score the active engine and scorer give from the rows up to that date only (equal to the verdict with end_date set to that date and the same return_period and metric), the median prediction, and the simple return realised over the next return_period calendar days (null until that day has come). by_grade sums the realised returns per letter. Consecutive month-ends' windows overlap when return_period is over a month, so the rows are not independent. For a synthetic history the outcomes say nothing about any market: the prices are generated, not observed. Computed once per asset, price data, engine, scorer, return_period and metric, then served from memory; at most the first 60,000 rows of a longer history are graded (where the verdict's window agrees).",
    params(("ticker" = String, Path, description = "An active ticker, URL-encoded", example = "^GSPC"), RawTrackRecordQuery),
    responses(
        (status = 200, description = "OK", body = TrackRecordResponse),
        (status = 400, description = "A parameter is out of bounds; detail names it", body = ErrorBody),
        (status = 404, description = "Unknown or inactive ticker", body = ErrorBody),
        (status = 500, description = "A plugin failed; detail names plugin and version", body = ErrorBody),
        (status = 503, description = "The heavy-work budget had no turn in time (Retry-After says when to retry), or the active engine was built before WIT 1.7.0 and cannot compute past states; nothing was charged for the former", body = ErrorBody),
        (status = 504, description = "A plugin ran past its time limit", body = ErrorBody),
    )
)]
async fn track_record(
    State(state): State<AppState>,
    fresh: Option<Extension<Fresh>>,
    headers: HeaderMap,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path(ticker): Path<String>,
    Query(export): Query<ExportQuery>,
    Query(raw): Query<RawTrackRecordQuery>,
) -> Result<Response, ApiError> {
    let want = Want::of::<TrackRecordResponse>(&headers, &export)?;
    let q = raw.validate()?;
    let generations = Fresh::or_read(fresh, &state).await;
    let answer = state
        .verdicts
        .track_record(&ticker, &q, generations, &user.id)
        .await?;
    if want.is_csv() {
        return want.respond(answer.value().clone());
    }
    Ok(crate::kept_json(&headers, answer.body()?))
}

/// How the grades did across the universe.
#[utoipa::path(
    get,
    path = "/api/track-record",
    operation_id = "track_record",
    summary = "The grades' own track record across the universe",
    description = "Every graded asset's grade at each past month-end (from its rows up to that date only, as GET /api/track-record/{ticker} computes it), next to the return realised over the next return_period days, aggregated over the covered assets: per grade letter the count, mean and median realised return with a 90 % interval of the mean, hit rate and mean excess over the same month-ends' equal-weight average; the information coefficient (Spearman rank correlation of score with realised return) per month-end with at least 5 assets, its mean and interval; the top-minus-bottom score quintile spread; predicted median against realised in ten equal-count bins. Intervals resample blocks of block_months consecutive month-ends (a moving-block bootstrap, 1,000 resamples, fixed seed), because month-ends closer than the horizon share part of it. source=real (default) covers market prices (shipped and ingested); synthetic histories are generated, not observed (the demo's generator has regimes of decline and recovery), so whatever the grades find there is a property of the generator, not of any market. The daily grading run computes and stores the histories; the aggregate is computed once per run and query and then served from memory.",
    params(RawUniverseTrackRecordQuery),
    responses(
        (status = 200, description = "OK", body = UniverseTrackRecordResponse),
        (status = 400, description = "A parameter is out of bounds; detail names it", body = ErrorBody),
        (status = 503, description = "No completed grading run has stored grade histories yet (detail says so), or aggregating them needs a turn of the server's heavy-work budget and none came in time (FORECAST_HEAVY_SLOTS, FORECAST_HEAVY_MEMORY_MB, FORECAST_HEAVY_WAIT_MS; nothing was computed or charged; Retry-After says when to retry)", body = ErrorBody),
    )
)]
async fn universe_track_record(
    State(state): State<AppState>,
    fresh: Option<Extension<Fresh>>,
    headers: HeaderMap,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Query(export): Query<ExportQuery>,
    Query(raw): Query<RawUniverseTrackRecordQuery>,
) -> Result<Response, ApiError> {
    let want = Want::of::<UniverseTrackRecordResponse>(&headers, &export)?;
    let q = raw.validate()?;
    let generations = Fresh::or_read(fresh, &state).await;
    let answer = state
        .verdicts
        .universe_track_record(&q, generations, &user.id)
        .await?;
    if want.is_csv() {
        return want.respond(answer.value().clone());
    }
    Ok(crate::kept_json(&headers, answer.body()?))
}

/// The active model's cards.
#[utoipa::path(
    get,
    path = "/api/models",
    operation_id = "models",
    summary = "The active engine and scorer, and how their forecasts did on real prices",
    description = "One card per graded horizon (metric return, real and ingested prices) from the active grading run's stored grade histories: every row's calibrated forecast scored with proper rules against climatology (the asset's own forward-return distribution up to each date): CRPS, quantile loss and squared error with their skill, 90 % intervals and Diebold-Mariano tests (HAC variance over the horizon's overlap), calibration intercept and slope with Driscoll-Kraay intervals, coverage of the 80 % interval, the PIT histogram and the reliability per decile, and the dates covered. A card's evaluation is null where the run stored no forecasts (a scorer without them). Computed once per grading run, then served from memory.",
    responses(
        (status = 200, description = "OK", body = forecast_api::models::ModelsResponse),
        (status = 503, description = "No completed grading run has stored grade histories yet, or aggregating them needs a turn of the server's heavy-work budget and none came in time; Retry-After says when to retry", body = ErrorBody),
    )
)]
async fn models(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
) -> Result<Json<forecast_api::models::ModelsResponse>, ApiError> {
    Ok(Json((*state.verdicts.models(&user.id).await?).clone()))
}
