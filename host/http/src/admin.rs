//! `/api/admin/*`: the plugin registry over HTTP, for operators. Guarded by
//! `FORECAST_ADMIN_TOKEN` (`Authorization: Bearer <token>`), never by a
//! user's API key; disabled (403) when the variable is unset.

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Json;
use forecast_api::accounts::OkResponse;
use forecast_api::admin::{
    ActiveResponse, AddedPlugin, PluginList, PluginSlot, PluginVersion, ShadowReport,
    ShadowRequest, ShadowStarted,
};
use forecast_api::models::{ActivateRequest, CompareRequest, ModelComparison};
use forecast_api::ErrorBody;
use sha2::{Digest, Sha256};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::extract::{Json as JsonBody, Path, Query};
use crate::AppState;
use forecast_domain::PluginKind;
use forecast_services::registry::{self, MAX_COMPONENT_BYTES};

/// The largest body the admin routes accept (a component upload).
pub(crate) const MAX_UPLOAD_BYTES: usize = MAX_COMPONENT_BYTES;

/// The admin routes with their guard and their own body limit (components
/// are larger than API bodies).
pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    let mut routes = OpenApiRouter::new()
        .routes(routes!(list, add))
        .routes(routes!(activate))
        .routes(routes!(compare))
        .routes(routes!(rollback))
        .routes(routes!(start_shadow))
        .routes(routes!(report, stop_shadow))
        .layer(DefaultBodyLimit::max(MAX_COMPONENT_BYTES))
        .route_layer(middleware::from_fn_with_state(state.clone(), guard));
    crate::docs::admin(routes.get_openapi_mut());
    routes
}

/// The admin token check, shared by `/api/admin/*` and `/metrics`.
pub(crate) async fn guard(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let Some(token) = state.config.admin_token.as_deref() else {
        return Err(ApiError::Forbidden(
            "the admin API is disabled: set FORECAST_ADMIN_TOKEN on the server".into(),
        ));
    };
    // A request with no token at all (an anonymous visitor, a scraper not
    // yet configured) guesses nothing: 401 at once, counted nowhere, so
    // it cannot lock the token out of a shared address.
    if bearer(req.headers()).is_empty() {
        return Err(ApiError::Unauthorized(WRONG_TOKEN.into()));
    }
    // Wrong tokens are throttled per client address (10 a minute, in the
    // store like failed sign-ins); once over, even the right token waits,
    // so guessing learns nothing.
    let address = crate::clients::client_ip(req.extensions()).to_string();
    let now = state.clock.timestamp();
    if let Some(retry_after) = state.quota.admin_lockout(&address, now).await? {
        forecast_services::rejected("admin_token");
        return Err(ApiError::TooManyRequests {
            detail: "too many wrong admin tokens from this address; retry later".into(),
            retry_after,
        });
    }
    if !token_matches(token, req.headers()) {
        state.quota.admin_failure(&address, now).await?;
        return Err(ApiError::Unauthorized(WRONG_TOKEN.into()));
    }
    Ok(next.run(req).await)
}

const WRONG_TOKEN: &str =
    "missing or invalid admin token (Authorization: Bearer <FORECAST_ADMIN_TOKEN>)";

/// The token of `Authorization: Bearer <token>`, blanks around it ignored;
/// empty when there is none.
fn bearer(headers: &axum::http::HeaderMap) -> &str {
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map_or("", str::trim)
}

/// Whether `headers` carry `Authorization: Bearer <token>`. Digests are
/// compared, so the comparison takes the same time whatever matches.
fn token_matches(token: &str, headers: &axum::http::HeaderMap) -> bool {
    let given = bearer(headers);
    Sha256::digest(given.as_bytes()) == Sha256::digest(token.as_bytes())
}

/// Whether the request carries the server's admin token (false when the
/// server has none): what `/api/health?debug=1` needs to show details.
pub(crate) fn is_admin(state: &AppState, headers: &axum::http::HeaderMap) -> bool {
    state
        .config
        .admin_token
        .as_deref()
        .is_some_and(|token| token_matches(token, headers))
}

/// Registered versions.
#[utoipa::path(
    get,
    path = "/api/admin/plugins",
    operation_id = "adminListPlugins",
    summary = "Every registered plugin version and whether it is active or shadowed",
    responses((status = 200, description = "OK", body = PluginList))
)]
async fn list(State(state): State<AppState>) -> Result<Json<PluginList>, ApiError> {
    let plugins = state.registry.list().await?;
    Ok(Json(PluginList { plugins }))
}

/// Registers a component.
#[utoipa::path(
    post,
    path = "/api/admin/plugins",
    operation_id = "adminAddPlugin",
    summary = "Register a component (type-checked against its kind's world; the version it reports must match)",
    description = "The body is a bare component, or a signed strategy bundle (docs/PLUGIN_BUNDLES.md) whose manifest names the same name and version. The server's trust policy applies as to `forecast plugin add`: a bundle must be signed by a key of FORECAST_PLUGIN_TRUST (when set), and a bare component is refused under FORECAST_PLUGIN_UNSIGNED=refuse; either refusal is a 422 saying why.",
    params(PluginVersion),
    request_body(content = Vec<u8>, content_type = "application/wasm", description = "The component's or the bundle's bytes (at most 64 MiB)"),
    responses(
        (status = 200, description = "Stored", body = AddedPlugin),
        (status = 400, description = "Bad kind, name, version or empty body, or a bundle whose manifest names another strategy", body = ErrorBody),
        (status = 409, description = "The version is registered with other bytes", body = ErrorBody),
        (status = 413, description = "Component over 64 MiB", body = ErrorBody),
        (status = 422, description = "Not a component of that kind, it reports another version, or the trust policy refuses it", body = ErrorBody),
    )
)]
async fn add(
    State(state): State<AppState>,
    Query(v): Query<PluginVersion>,
    body: Bytes,
) -> Result<Json<AddedPlugin>, ApiError> {
    Ok(Json(
        state
            .registry
            .add(&v.kind, &v.name, &v.version, body.to_vec())
            .await?,
    ))
}

/// Activates a version.
#[utoipa::path(
    post,
    path = "/api/admin/plugins/activate",
    operation_id = "adminActivatePlugin",
    summary = "Activate a registered version after its self-tests pass; every replica follows within FORECAST_PLUGIN_POLL_MS",
    description = "A scorer or engine version is first compared with the active one on the same walk-forward rows of real prices at 90 days (as POST /api/admin/plugins/compare does): a candidate whose forecasts are significantly worse (Diebold-Mariano on CRPS at 5 %) is refused with the figures (422) unless force is true with a reason, which the activation history records beside who activated it.",
    request_body = ActivateRequest,
    responses(
        (status = 200, description = "Active", body = ActiveResponse),
        (status = 400, description = "Bad kind, or force without a reason", body = ErrorBody),
        (status = 404, description = "Not registered", body = ErrorBody),
        (status = 422, description = "The candidate failed its checks, or forecast significantly worse than the active version; nothing changed", body = ErrorBody),
    )
)]
async fn activate(
    State(state): State<AppState>,
    JsonBody(v): JsonBody<ActivateRequest>,
) -> Result<Json<ActiveResponse>, ApiError> {
    let force = match (v.force, v.reason.as_deref().map(str::trim)) {
        (false, _) => None,
        (true, Some(r)) if !r.is_empty() && r.chars().count() <= 500 => Some(r),
        (true, _) => {
            return Err(ApiError::BadRequest(
                "force needs a reason: 1 to 500 characters saying why".into(),
            ))
        }
    };
    Ok(Json(
        state
            .registry
            .activate(&v.kind, &v.name, &v.version, force)
            .await?,
    ))
}

/// Compares two versions.
#[utoipa::path(
    post,
    path = "/api/admin/plugins/compare",
    operation_id = "adminComparePlugins",
    summary = "Compare two registered scorer or engine versions on the same walk-forward rows of real prices",
    description = "Both versions (with the active version of the other part) forecast every month-end of every asset with real or ingested prices at return_period (default 90), each point from the data before it only; both are scored with proper rules against climatology on the rows both forecast, and a Diebold-Mariano test (Newey-West variance over the horizon's overlap) compares their per-month mean CRPS. A scorer without forecasts is scored on the raw bucket median it grades by. Heavy work: it runs within the compile budget.",
    request_body = CompareRequest,
    responses(
        (status = 200, description = "The comparison", body = ModelComparison),
        (status = 400, description = "Bad kind or horizon", body = ErrorBody),
        (status = 404, description = "A version is not registered", body = ErrorBody),
        (status = 503, description = "No active version of the other part, or an engine that cannot compute past states", body = ErrorBody),
    )
)]
async fn compare(
    State(state): State<AppState>,
    JsonBody(req): JsonBody<CompareRequest>,
) -> Result<Json<ModelComparison>, ApiError> {
    Ok(Json(state.registry.compare(&req).await?))
}

/// Rolls a slot back.
#[utoipa::path(
    post,
    path = "/api/admin/plugins/rollback",
    operation_id = "adminRollbackPlugin",
    summary = "Return a slot to the version active before the current one",
    request_body = PluginSlot,
    responses(
        (status = 200, description = "Active again", body = ActiveResponse),
        (status = 400, description = "Bad kind, or name is not the active version's", body = ErrorBody),
        (status = 409, description = "Nothing to roll back to", body = ErrorBody),
    )
)]
async fn rollback(
    State(state): State<AppState>,
    JsonBody(s): JsonBody<PluginSlot>,
) -> Result<Json<ActiveResponse>, ApiError> {
    Ok(Json(state.registry.rollback(&s.kind, &s.name).await?))
}

/// Starts a shadow run.
#[utoipa::path(
    post,
    path = "/api/admin/shadow",
    operation_id = "adminStartShadow",
    summary = "Run a candidate beside the active version on a sampled share of live requests (its answers are compared, never returned)",
    request_body = ShadowRequest,
    responses(
        (status = 200, description = "Started", body = ShadowStarted),
        (status = 400, description = "Unsupported kind or sample outside (0, 1]", body = ErrorBody),
        (status = 404, description = "Not registered", body = ErrorBody),
        (status = 409, description = "The candidate is the active version", body = ErrorBody),
        (status = 422, description = "The candidate failed its checks", body = ErrorBody),
    )
)]
async fn start_shadow(
    State(state): State<AppState>,
    JsonBody(s): JsonBody<ShadowRequest>,
) -> Result<Json<ShadowStarted>, ApiError> {
    Ok(Json(state.registry.start_shadow(&s).await?))
}

/// A shadow run's report.
#[utoipa::path(
    get,
    path = "/api/admin/shadow/{kind}",
    operation_id = "adminShadowReport",
    summary = "Agreement report of a kind's shadow run: identical share, largest difference per field, latency of both, errors",
    params(("kind" = PluginKind, Path, description = "The shadowed kind")),
    responses(
        (status = 200, description = "OK; `max_differences` maps a field path (array positions as []) to the largest absolute difference, 1.7976931348623157e308 marking a structural change", body = ShadowReport),
        (status = 404, description = "No shadow run for the kind", body = ErrorBody),
    )
)]
async fn report(
    State(state): State<AppState>,
    Path(kind): Path<String>,
) -> Result<Json<registry::ShadowReport>, ApiError> {
    Ok(Json(state.registry.shadow_report(&kind).await?))
}

/// Stops a shadow run.
#[utoipa::path(
    delete,
    path = "/api/admin/shadow/{kind}",
    operation_id = "adminStopShadow",
    summary = "Stop a kind's shadow run",
    params(("kind" = PluginKind, Path, description = "The shadowed kind")),
    responses(
        (status = 200, description = "Stopped", body = OkResponse),
        (status = 404, description = "No shadow run for the kind", body = ErrorBody),
    )
)]
async fn stop_shadow(
    State(state): State<AppState>,
    Path(kind): Path<String>,
) -> Result<Json<OkResponse>, ApiError> {
    state.registry.stop_shadow(&kind).await?;
    Ok(Json(OkResponse::OK))
}
