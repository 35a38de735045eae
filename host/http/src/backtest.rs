//! `POST /api/backtest` (cost 5) and `GET /api/strategies`: the strategies
//! a backtest may name.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use forecast_api::backtest::{
    BacktestRequest, BacktestResponse, MonteCarloRequest, MonteCarloResponse, StrategyItem,
    StrategyList,
};
use forecast_api::ErrorBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::export::{self, ExportQuery, Want};
use super::extract::{Json as JsonBody, Query};
use super::guard::{ApiUser, BacktestSlot, Fresh};
use super::progress;
use super::recall::{self, Recalled, RequestKey};
use crate::AppState;
use forecast_research::backtest::UserSlot;

/// The backtest route (metered at cost 5 by the caller's route layer).
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(run))
}

/// The Monte Carlo of a backtest (cost 10: a backtest's 5 and 5 for the
/// simulation).
pub fn monte_carlo_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(monte_carlo))
}

/// The Monte Carlo of a backtest.
#[utoipa::path(
    post,
    path = "/api/backtest/monte-carlo",
    operation_id = "backtestMonteCarlo",
    summary = "A backtest's daily returns reordered many times: how its CAGR, drawdown and final equity spread over other orderings of the same returns",
    description = "Runs the backtest exactly as POST /api/backtest (every field of its request, the same bounds, time limit, budget, per-account cap and errors), then draws `runs` paths (1 to 5,000, default 1,000) as long as the run by a seeded stationary block bootstrap of its daily returns: each path starts at a random day and walks forward, jumping to a new random day before each next one with probability 1/`block_days` (1 to 250, default 20), so blocks keep the returns' short-range dependence. Answers the 5th, 50th and 95th percentiles of CAGR, maximum drawdown and final equity, the probability of a loss and of a drawdown beyond -50 %, the fan chart of equity percentiles (at most 500 dates) and the run's own metrics. The same request and `seed` (default 1) give the same figures. Costs 10 quota units.",
    request_body = MonteCarloRequest,
    responses(
        (status = 200, description = "OK", body = MonteCarloResponse),
        (status = 400, description = "A field is invalid (any of POST /api/backtest's, or runs, block_days, seed out of bounds, or an unknown field); detail names it", body = ErrorBody),
        (status = 422, description = "An uploaded strategy (@handle/name) failed, as for POST /api/backtest", body = ErrorBody),
        (status = 500, description = "A built-in strategy plugin failed; detail names the plugin and version", body = ErrorBody),
        (status = 504, description = "The backtest passed its time limit; reduce its scope", body = ErrorBody),
    )
)]
async fn monte_carlo(
    State(state): State<AppState>,
    (slot, key, recalled): Kept,
    headers: HeaderMap,
    Query(export): Query<ExportQuery>,
    JsonBody(body): JsonBody<MonteCarloRequest>,
) -> Result<Response, ApiError> {
    let want = Want::of::<MonteCarloResponse>(&headers, &export)?;
    let (req, mc) = body.validate()?;
    let pid = progress::id_of(&headers)?;
    let answer = recall::answer(&state.results, key, recalled, async {
        let slot = take(slot)?;
        let user = slot.user().to_string();
        let work = state.backtests.monte_carlo(req, mc, slot);
        Ok(state.progress.watch(&user, pid, work).await?)
    });
    want.respond(answer.await?)
}

/// What a kept route's handler takes besides its request: the backtest
/// slot the guard took (none for a recalled download), the request's key
/// and the recalled answer (`crate::recall`).
pub(crate) type Kept = (
    Option<Extension<BacktestSlot>>,
    Option<Extension<RequestKey>>,
    Option<Extension<Recalled>>,
);

/// The slot the guard took for this request.
pub(crate) fn take(slot: Option<Extension<BacktestSlot>>) -> Result<UserSlot, ApiError> {
    slot.and_then(|Extension(s)| s.take())
        .ok_or_else(|| ApiError::Internal("the backtest slot was taken twice".into()))
}

/// The strategy listing (cost 1).
pub fn listing_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}

/// Runs a backtest.
#[utoipa::path(
    post,
    path = "/api/backtest",
    operation_id = "backtest",
    summary = "Portfolio backtest of a strategy plugin over a universe",
    description = "Signals at a rebalance date come from data up to that date only (the engine's walk-forward series); decisions fill at the next calendar row's close. The strategy decides target weights; the host does all accounting. The work is bounded by FORECAST_BACKTEST_TIMEOUT_MS (default 30 s) once the run holds its plugin slots. Before any work it waits for a turn of the server's heavy-work budget (FORECAST_HEAVY_SLOTS jobs and FORECAST_HEAVY_MEMORY_MB at once, all accounts together) at most FORECAST_HEAVY_WAIT_MS, then for its plugin slots at most FORECAST_BACKTEST_QUEUE_MS (default 10 s each); past either, or with the budget's queue full, the answer is 503 with Retry-After and nothing is charged. An account runs at most FORECAST_BACKTESTS_PER_USER (default 1) backtests at once per server, /api and /web/api together; more get 429 with Retry-After and are not counted. A run stops when its client goes away. decay_factor is rounded to a multiple of 0.001 (metadata.decay_factor). The body carries at most the first 10,000 trades (metadata.trades_total, metadata.trades_truncated); metrics.total_trades counts them all. Besides the bounds of each field: start_date must be on or before end_date, tickers must be known active assets, strategy one of GET /api/strategies, at least one asset of the universe tradeable (300 rows of history by end_date and a price between start_date and end_date), and top_n at most the number of tradeable assets (longshort holds top_n long and top_n short, so 2·top_n).",
    request_body = BacktestRequest,
    responses(
        (status = 200, description = "OK", body = BacktestResponse),
        (status = 400, description = "A field is invalid (unknown strategy or ticker, bad dates, non-positive capital, top_n beyond the universe, unknown rebalance, out-of-bounds engine or z-score parameters); detail names it", body = ErrorBody),
        (status = 422, description = "An uploaded strategy (@handle/name) failed: its fuel budget (50,000,000 units per call plus 1,000,000 per asset of the call's input, and 20,000,000,000 for all the calls of one run), its memory cap, a trap, a contract violation or its own refusal; or another account's version the server's trust policy does not admit (also when pinned); detail names the plugin, its version and the limit or reason", body = ErrorBody),
        (status = 500, description = "A built-in strategy plugin failed (trap, memory cap, contract violation); detail names the plugin and version", body = ErrorBody),
        (status = 504, description = "The backtest passed its time limit; reduce its scope", body = ErrorBody),
    )
)]
async fn run(
    State(state): State<AppState>,
    (slot, key, recalled): Kept,
    headers: HeaderMap,
    Query(export): Query<ExportQuery>,
    JsonBody(body): JsonBody<BacktestRequest>,
) -> Result<Response, ApiError> {
    let html = export::wants_html(&export);
    let want = match html {
        true => None,
        false => Some(Want::of::<BacktestResponse>(&headers, &export)?),
    };
    let req = body.validate()?;
    let pid = progress::id_of(&headers)?;
    let answer = recall::answer(&state.results, key, recalled, async {
        let slot = take(slot)?;
        let user = slot.user().to_string();
        let work = state.backtests.run(req, slot);
        Ok(state.progress.watch(&user, pid, work).await?)
    })
    .await?;
    match want {
        Some(want) => want.respond(answer),
        None => Ok(export::tear_sheet(&answer)),
    }
}

/// The loaded strategies.
#[utoipa::path(
    get,
    path = "/api/strategies",
    operation_id = "strategies",
    summary = "The strategies POST /api/backtest can name: built-in (the server's, registered and FORECAST_PLUGIN_DIR plugins), then the uploaded ones you may run (yours and shared ones, as @handle/name)",
    responses((status = 200, description = "OK", body = StrategyList))
)]
async fn list(
    State(state): State<AppState>,
    fresh: Option<Extension<Fresh>>,
    Extension(ApiUser(user)): Extension<ApiUser>,
) -> Result<Response, ApiError> {
    let strategies = state.plugins.strategies();
    let mut list = {
        let mut listing = state.strategy_listing.lock().expect("listing poisoned");
        let same = listing.as_ref().is_some_and(|(held, _)| {
            held.len() == strategies.len()
                && held.iter().zip(&strategies).all(|(a, b)| Arc::ptr_eq(a, b))
        });
        if !same {
            let list = StrategyList {
                strategies: strategies
                    .iter()
                    .map(|s| StrategyItem {
                        name: s.info().name.clone(),
                        version: s.info().version.clone(),
                        description: s.description().to_string(),
                        sha256: s.info().sha256.clone(),
                        visibility: "builtin".into(),
                        owner: None,
                        signer: None,
                        versions: Vec::new(),
                        owned: false,
                        resources: None,
                        imports: s.imports().to_vec(),
                        wit_version: forecast_api::backtest::wit_version(s.imports()),
                        manifest: None,
                    })
                    .collect(),
            };
            *listing = Some((strategies, list));
        }
        listing.as_ref().expect("just filled").1.clone()
    };
    // The built-ins, built once per set of loaded strategies (the same
    // plugins, by identity), with their recent figures; then the authors'
    // uploads this user may run.
    let figures = state.authored.figures(&user.id).await?;
    for s in &mut list.strategies {
        s.resources = figures.get(&s.sha256).cloned();
    }
    let generation = Fresh::or_read(fresh, &state).await.map(|g| g.strategies);
    list.strategies
        .extend(state.authored.listed(&user.id, generation).await?);
    Ok(Json(list).into_response())
}
