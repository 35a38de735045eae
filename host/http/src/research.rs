//! `POST /api/backtest/sweep` and `POST /api/backtest/walk-forward`: many
//! backtests of one request under one of the user's backtest slots, priced
//! by their combinations ([`price`], 1 unit each, at least 5).

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use forecast_api::research::{
    self, SweepRequest, SweepResponse, WalkForwardRequest, WalkForwardResponse, MAX_COMBINATIONS,
};
use forecast_api::ErrorBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::backtest::{take, Kept};
use super::error::ApiError;
use super::export::{ExportQuery, Want};
use super::extract::{Json as JsonBody, Query};
use super::guard::Priced;
use super::progress;
use super::recall;
use crate::AppState;

/// The sweep and walk-forward routes (priced by [`price`], metered by the
/// caller's route layer).
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sweep))
        .routes(routes!(walk_forward))
}

/// What a route's quota rule says in the OpenAPI document.
pub const COST_RULE: &str = "1 unit per combination (the product of the lengths of `sweep`'s lists), at least 5; x-quota-cost is the least";

/// Reads the body before the guard and prices the request by its
/// combinations: [`research::cost`] of the product of `sweep`'s list
/// lengths, or the least cost when the body is unreadable or asks for more
/// than [`MAX_COMBINATIONS`] (both are refused with a 400 by the handler).
/// The body is bounded by the server's body limit (`crate::MAX_BODY_BYTES`)
/// and put back unchanged.
pub async fn price(req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    let bytes = match super::extract::buffered_body(body).await {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    let combinations = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| {
            let axes = v.get("sweep")?.as_object()?.clone();
            Some(
                axes.values()
                    .map(|v| v.as_array().map_or(1, |a| a.len().max(1)))
                    .try_fold(1usize, |acc, n| acc.checked_mul(n))
                    .unwrap_or(usize::MAX),
            )
        })
        .unwrap_or(1);
    let combinations = if combinations > MAX_COMBINATIONS {
        1
    } else {
        combinations
    };
    parts
        .extensions
        .insert(Priced(research::cost(combinations)));
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// A parameter sweep.
#[utoipa::path(
    post,
    path = "/api/backtest/sweep",
    operation_id = "backtestSweep",
    summary = "One backtest per combination of up to three parameters' values: a row of metrics each, ranked, with its place on the grid for a heatmap",
    description = "Takes every field of POST /api/backtest as the base run, plus `sweep`, an object of 1 to 3 parameters (top_n, rebalance, return_period, metric, decay_factor, num_segments, zscore_lookback, zscore_entry, zscore_exit, include_costs) to lists of distinct values, at most 48 combinations (the product of the lists' lengths), and `rank_by` (total_return, cagr, sharpe_ratio (default), sortino_ratio, calmar_ratio or max_drawdown; higher is better for each). A swept parameter may not also be a base field. Each combination is validated as a backtest (a bad value answers the backtest's message, prefixed with the combination). Combinations with the same engine parameters (return_period, num_segments, decay_factor, metric) share one pass of the engine over the universe; the runs use every plugin slot the request holds. Rows come in row-major order of the axes, the order `sweep` was written in (the last varies fastest); `cell` is each value's index on its axis, `rank` 1 the best `score`. Costs 1 quota unit per combination, at least 5; one stopped at its time limit (504) is charged 1 unit per combination whose run had ended, at least 5, and the rest is given back. Bounded as a backtest (the same budget, per-account cap and waits), with its own time limit FORECAST_RESEARCH_TIMEOUT_MS (default 35 s) for all combinations together.",
    request_body = SweepRequest,
    responses(
        (status = 200, description = "OK", body = SweepResponse),
        (status = 400, description = "A field is invalid: any of POST /api/backtest's, or sweep (missing, more than 3 parameters, an unsweepable or repeated parameter, an empty or repeating list, more than 48 combinations, a value out of its field's bounds), rank_by, or an unknown field; detail names it", body = ErrorBody),
        (status = 422, description = "An uploaded strategy (@handle/name) failed, as for POST /api/backtest", body = ErrorBody),
        (status = 500, description = "A built-in strategy plugin failed; detail names the plugin and version", body = ErrorBody),
        (status = 504, description = "The combinations passed FORECAST_RESEARCH_TIMEOUT_MS; reduce the scope", body = ErrorBody),
    )
)]
async fn sweep(
    State(state): State<AppState>,
    (slot, key, recalled): Kept,
    headers: HeaderMap,
    Query(export): Query<ExportQuery>,
    JsonBody(body): JsonBody<SweepRequest>,
) -> Result<Response, ApiError> {
    let want = Want::of::<SweepResponse>(&headers, &export)?;
    let sweep = body.validate()?;
    let pid = progress::id_of(&headers)?;
    let answer = recall::answer(&state.results, key, recalled, async {
        let slot = take(slot)?;
        let user = slot.user().to_string();
        let work = state.backtests.sweep(sweep, slot);
        Ok(state.progress.watch(&user, pid, work).await?)
    });
    want.respond(answer.await?)
}

/// A walk-forward.
#[utoipa::path(
    post,
    path = "/api/backtest/walk-forward",
    operation_id = "backtestWalkForward",
    summary = "Walk-forward: on each train split the sweep's best combination by rank_by, applied to the next test split; the stitched out-of-sample curve and in-sample against out-of-sample figures",
    description = "Takes everything POST /api/backtest/sweep takes, plus `train_years` (1 to 20, default 3), `test_years` (1 to 10, default 1) and `mode` (`rolling`, default: each train split is the train_years before its test split; `expanding`: every train split starts at the window's start). Test splits follow each other from train_years after the window's start to its end (the last may be shorter, but at least 21 rows; the window needs room for one). Every combination runs once over the whole window; a split's figures are those of the rows inside it (the move into its first row included), so a test split's first day holds the positions the chosen combination held then, decided from earlier data only. The answer's `equity_curve` chains the chosen combinations' daily returns over the test splits from the initial capital; `in_sample` is the mean over splits of the chosen combinations' train figures, `out_of_sample` the figures of the stitched curve, and `efficiency` their ratio for rank_by (out / in; for max_drawdown in / out), null when the in-sample figure is not positive. Costs 1 quota unit per combination, at least 5; one stopped at its time limit (504) is charged 1 unit per combination whose run had ended, at least 5, and the rest is given back. Bounded as the sweep.",
    request_body = WalkForwardRequest,
    responses(
        (status = 200, description = "OK", body = WalkForwardResponse),
        (status = 400, description = "A field is invalid: any of POST /api/backtest/sweep's, or train_years, test_years, mode, or a window too short for one split; detail names it", body = ErrorBody),
        (status = 422, description = "An uploaded strategy (@handle/name) failed, as for POST /api/backtest", body = ErrorBody),
        (status = 500, description = "A built-in strategy plugin failed; detail names the plugin and version", body = ErrorBody),
        (status = 504, description = "The combinations passed FORECAST_RESEARCH_TIMEOUT_MS; reduce the scope", body = ErrorBody),
    )
)]
async fn walk_forward(
    State(state): State<AppState>,
    (slot, key, recalled): Kept,
    headers: HeaderMap,
    Query(export): Query<ExportQuery>,
    JsonBody(body): JsonBody<WalkForwardRequest>,
) -> Result<Response, ApiError> {
    let want = Want::of::<WalkForwardResponse>(&headers, &export)?;
    let (sweep, split) = body.validate()?;
    let pid = progress::id_of(&headers)?;
    let answer = recall::answer(&state.results, key, recalled, async {
        let slot = take(slot)?;
        let user = slot.user().to_string();
        let work = state.backtests.walk_forward(sweep, split, slot);
        Ok(state.progress.watch(&user, pid, work).await?)
    });
    want.respond(answer.await?)
}
