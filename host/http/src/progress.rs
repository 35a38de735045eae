//! `GET /api/progress/{id}`: how far the caller's run started with the
//! header `Progress-Id: {id}` has come (POST /api/backtest, its Monte
//! Carlo, sweep and walk-forward, and their `/web/api` twins). Free, like
//! the other status a page polls; a run is cancelled by closing its
//! request (the run stops and frees its slots at once).

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::{Extension, Json};
use forecast_api::research::ProgressBody;
use forecast_api::ErrorBody;
use forecast_research::progress::{valid_id, MAX_ID};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::guard::ApiUser;
use crate::AppState;

/// The request header that names a run's progress.
pub const HEADER: &str = "progress-id";

/// The progress route (cost 0: it is in the free group).
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(progress))
}

/// The `Progress-Id` a run's request names, if any, or a 400 naming it.
pub fn id_of(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(raw) = headers.get(HEADER) else {
        return Ok(None);
    };
    match raw.to_str() {
        Ok(id) if valid_id(id) => Ok(Some(id.to_string())),
        _ => Err(ApiError::BadRequest(format!(
            "Progress-Id must be 1 to {MAX_ID} ASCII letters, digits, '-' or '_'"
        ))),
    }
}

/// A run's progress.
#[utoipa::path(
    get,
    path = "/api/progress/{id}",
    operation_id = "progress",
    summary = "How far your run started with the header Progress-Id has come (backtest, Monte Carlo, sweep, walk-forward)",
    description = "A run's request may carry the header `Progress-Id` (1 to 64 ASCII letters, digits, '-' or '_'; another value is a 400 before any work). While that run lasts, this route answers its phase and how many of the phase's steps are done: `waiting` for the heavy-work budget or plugin slots, `loading` the histories (signals are computed beside them; steps are assets), `running` the strategy over the calendar (steps are rows), `combinations` of a sweep or walk-forward (steps are combinations), `simulating` a Monte Carlo's paths (not counted). Once the run has answered, or stopped, the id is unknown again (404). Only the account that started a run can read it; an account has at most 8 runs tracked at once (more run untracked). To cancel a run, close its request: the server stops the work and frees its slots. Costs nothing.",
    params(("id" = String, Path, description = "The Progress-Id of the run", example = "bt-1")),
    responses(
        (status = 200, description = "The run is under way", body = ProgressBody),
        (status = 404, description = "No run of yours under this id is under way (never started, finished or stopped)", body = ErrorBody),
    )
)]
async fn progress(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path(id): Path<String>,
) -> Result<Json<ProgressBody>, ApiError> {
    state.progress.get(&user.id, &id).map(Json).ok_or_else(|| {
        ApiError::NotFound(format!(
            "no run of yours with Progress-Id '{}' is under way",
            forecast_api::quote(&id)
        ))
    })
}
