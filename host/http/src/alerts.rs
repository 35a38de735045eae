//! `/api/alerts`: alerts, their events (the inbox) and webhook endpoints
//! (issue 30). The policy is the alert service's; these handlers only
//! extract, call and answer.

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use forecast_api::alerts::{
    Alert, CreateAlertRequest, CreateWebhookRequest, CreatedWebhook, DeliveryLog, EventPage,
    MarkReadRequest, MarkedRead, RawEventsQuery, TestDelivery, UnreadCount, UpdateAlertRequest,
    UpdateWebhookRequest, Webhook,
};
use forecast_api::ErrorBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::extract::{Json as JsonBody, Path, Query};
use super::guard::ApiUser;
use crate::AppState;

/// The status a page polls (the unread count): free, so an open tab does
/// not spend the day's quota (issue 41).
pub fn free_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(unread))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, remove))
        .routes(routes!(events))
        .routes(routes!(mark_read))
        .routes(routes!(webhooks, create_webhook))
        .routes(routes!(update_webhook, delete_webhook))
        .routes(routes!(deliveries))
        .routes(routes!(test_webhook))
}

/// The user's alerts.
#[utoipa::path(
    get,
    path = "/api/alerts",
    operation_id = "listAlerts",
    summary = "Your alerts, oldest first, each with what its last evaluation saw per asset",
    responses((status = 200, description = "OK", body = Vec<Alert>))
)]
async fn list(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
) -> Result<Json<Vec<Alert>>, ApiError> {
    Ok(Json(state.alerts.list(&user).await?))
}

/// Creates an alert.
#[utoipa::path(
    post,
    path = "/api/alerts",
    operation_id = "createAlert",
    summary = "Create an alert on a ticker or on your whole watchlist",
    description = "Each condition takes exactly its own parameter: `level` for drawdown_below/drawdown_above (-1 to 0) and median_return_above/median_return_below (-1 to 10), `bucket` (0 to 19) for bucket_entered/bucket_left, `top_n` (1 to 100, and optionally `category`) for top_n_entered/top_n_left; grade_changed and bucket_changed take none. The target is `ticker` or `watchlist: true`, exactly one. Conditions are edge-triggered: an event fires when the condition becomes true, and again only after it was false. The first evaluation of a new (or changed) alert whose condition already holds fires once; `grade_changed` and `bucket_changed` fire on a change from the value last seen, so never on a first evaluation. Evaluation runs after every grading run and every price change (a server looks every FORECAST_ALERTS_INTERVAL_MS), or now with `forecast alerts check`. At most 50 alerts per user.",
    request_body = CreateAlertRequest,
    responses(
        (status = 201, description = "Created", body = Alert),
        (status = 400, description = "A field is missing, unknown or out of bounds; detail names it", body = ErrorBody),
        (status = 404, description = "The ticker is not an active asset", body = ErrorBody),
        (status = 409, description = "You already have 50 alerts", body = ErrorBody),
    )
)]
async fn create(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    JsonBody(body): JsonBody<CreateAlertRequest>,
) -> Result<(StatusCode, Json<Alert>), ApiError> {
    Ok((
        StatusCode::CREATED,
        Json(state.alerts.create(&user, &body).await?),
    ))
}

/// One alert.
#[utoipa::path(
    get,
    path = "/api/alerts/{id}",
    operation_id = "getAlert",
    summary = "One of your alerts",
    params(("id" = uuid::Uuid, Path, description = "The alert's id")),
    responses(
        (status = 200, description = "OK", body = Alert),
        (status = 400, description = "The id is not a UUID", body = ErrorBody),
        (status = 404, description = "You have no such alert", body = ErrorBody),
    )
)]
async fn get(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path(id): Path<String>,
) -> Result<Json<Alert>, ApiError> {
    Ok(Json(state.alerts.get(&user, &id).await?))
}

/// Changes an alert.
#[utoipa::path(
    patch,
    path = "/api/alerts/{id}",
    operation_id = "updateAlert",
    summary = "Change an alert's condition, parameters, e-mail or switch",
    description = "Absent fields stay as they are. A changed condition, level, bucket, top_n, horizon, metric or category starts the alert over: its next evaluation is a first one.",
    params(("id" = uuid::Uuid, Path, description = "The alert's id")),
    request_body = UpdateAlertRequest,
    responses(
        (status = 200, description = "Changed", body = Alert),
        (status = 400, description = "A field is unknown, out of bounds or does not apply to the condition; detail names it", body = ErrorBody),
        (status = 404, description = "You have no such alert", body = ErrorBody),
    )
)]
async fn update(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<UpdateAlertRequest>,
) -> Result<Json<Alert>, ApiError> {
    Ok(Json(state.alerts.update(&user, &id, &body).await?))
}

/// Deletes an alert.
#[utoipa::path(
    delete,
    path = "/api/alerts/{id}",
    operation_id = "deleteAlert",
    summary = "Delete an alert (the events it fired stay in your inbox)",
    params(("id" = uuid::Uuid, Path, description = "The alert's id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "The id is not a UUID", body = ErrorBody),
        (status = 404, description = "You have no such alert", body = ErrorBody),
    )
)]
async fn remove(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.alerts.delete(&user, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The inbox.
#[utoipa::path(
    get,
    path = "/api/alerts/events",
    operation_id = "listAlertEvents",
    summary = "Your alerts' events, newest first, a page at a time",
    description = "Each event says what changed, the values before and after, the evidence behind them (past days in the bucket, episodes, whether it is thin), the grading run, the evaluation, and the engine and scorer versions.",
    params(RawEventsQuery),
    responses(
        (status = 200, description = "OK", body = EventPage),
        (status = 400, description = "A parameter is invalid; detail names it", body = ErrorBody),
    )
)]
async fn events(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Query(raw): Query<RawEventsQuery>,
) -> Result<Json<EventPage>, ApiError> {
    let q = raw.validate()?;
    Ok(Json(state.alerts.events(&user, q).await?))
}

/// Marks events read.
#[utoipa::path(
    post,
    path = "/api/alerts/events/read",
    operation_id = "markAlertEventsRead",
    summary = "Mark some of your events (ids) or all of them read",
    description = "Exactly one of `ids` (at most 100) and `all: true`.",
    request_body = MarkReadRequest,
    responses(
        (status = 200, description = "Marked", body = MarkedRead),
        (status = 400, description = "Neither or both of ids and all, or more than 100 ids", body = ErrorBody),
    )
)]
async fn mark_read(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    JsonBody(body): JsonBody<MarkReadRequest>,
) -> Result<Json<MarkedRead>, ApiError> {
    Ok(Json(state.alerts.mark_read(&user, &body).await?))
}

/// The unread count.
#[utoipa::path(
    get,
    path = "/api/alerts/unread",
    operation_id = "unreadAlertEvents",
    summary = "How many of your events are unread",
    responses((status = 200, description = "OK", body = UnreadCount))
)]
async fn unread(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
) -> Result<Json<UnreadCount>, ApiError> {
    Ok(Json(state.alerts.unread(&user).await?))
}

/// The user's endpoints.
#[utoipa::path(
    get,
    path = "/api/alerts/webhooks",
    operation_id = "listWebhooks",
    summary = "Your webhook endpoints (never their secrets)",
    responses((status = 200, description = "OK", body = Vec<Webhook>))
)]
async fn webhooks(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
) -> Result<Json<Vec<Webhook>>, ApiError> {
    Ok(Json(state.alerts.webhooks(&user).await?))
}

/// Adds an endpoint.
#[utoipa::path(
    post,
    path = "/api/alerts/webhooks",
    operation_id = "createWebhook",
    summary = "Add a webhook endpoint; its signing secret is shown this once",
    description = "Every event of your alerts is POSTed to each enabled endpoint as JSON (`{type, event}`), signed: `X-Forecast-Signature: t=<unix seconds>,v1=<hex of HMAC-SHA256(secret, \"<t>.<body>\")>`. A failed call (no 2xx within 10 s; redirects are not followed) is retried with exponential backoff; an endpoint is disabled after FORECAST_WEBHOOK_MAX_FAILURES consecutive failed attempts (10 by default) until you enable it again. Private, loopback and link-local targets are refused unless the operator allows them. At most 5 endpoints per user.",
    request_body = CreateWebhookRequest,
    responses(
        (status = 201, description = "Created, with its secret", body = CreatedWebhook),
        (status = 400, description = "Not an http(s) URL, over 2048 bytes, unresolvable, or a private address; detail says which", body = ErrorBody),
        (status = 409, description = "You already have 5 endpoints", body = ErrorBody),
    )
)]
async fn create_webhook(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    JsonBody(body): JsonBody<CreateWebhookRequest>,
) -> Result<(StatusCode, Json<CreatedWebhook>), ApiError> {
    Ok((
        StatusCode::CREATED,
        Json(state.alerts.create_webhook(&user, &body).await?),
    ))
}

/// Enables or disables an endpoint.
#[utoipa::path(
    patch,
    path = "/api/alerts/webhooks/{id}",
    operation_id = "updateWebhook",
    summary = "Enable an endpoint again (failures counted from zero) or disable it",
    params(("id" = uuid::Uuid, Path, description = "The endpoint's id")),
    request_body = UpdateWebhookRequest,
    responses(
        (status = 200, description = "Changed", body = Webhook),
        (status = 400, description = "The id is not a UUID, or the body is not {enabled}", body = ErrorBody),
        (status = 404, description = "You have no such endpoint", body = ErrorBody),
    )
)]
async fn update_webhook(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<UpdateWebhookRequest>,
) -> Result<Json<Webhook>, ApiError> {
    Ok(Json(state.alerts.update_webhook(&user, &id, &body).await?))
}

/// Deletes an endpoint.
#[utoipa::path(
    delete,
    path = "/api/alerts/webhooks/{id}",
    operation_id = "deleteWebhook",
    summary = "Delete an endpoint and its delivery log",
    params(("id" = uuid::Uuid, Path, description = "The endpoint's id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "The id is not a UUID", body = ErrorBody),
        (status = 404, description = "You have no such endpoint", body = ErrorBody),
    )
)]
async fn delete_webhook(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.alerts.delete_webhook(&user, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// An endpoint's delivery log.
#[utoipa::path(
    get,
    path = "/api/alerts/webhooks/{id}/deliveries",
    operation_id = "webhookDeliveries",
    summary = "An endpoint's newest 50 calls: status, attempts, last answer or error, next attempt",
    params(("id" = uuid::Uuid, Path, description = "The endpoint's id")),
    responses(
        (status = 200, description = "OK", body = DeliveryLog),
        (status = 400, description = "The id is not a UUID", body = ErrorBody),
        (status = 404, description = "You have no such endpoint", body = ErrorBody),
    )
)]
async fn deliveries(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path(id): Path<String>,
) -> Result<Json<DeliveryLog>, ApiError> {
    Ok(Json(state.alerts.deliveries(&user, &id).await?))
}

/// Sends a test call.
#[utoipa::path(
    post,
    path = "/api/alerts/webhooks/{id}/test",
    operation_id = "testWebhook",
    summary = "Send a signed sample event (type alert.test) to an endpoint now, once",
    description = "The call is made before the answer and logged like any other; it is not retried, and a failure counts towards disabling the endpoint. A disabled endpoint is not called (409: enable it first with PATCH), and an account makes one test call at a time (409 while one waits for its endpoint's answer).",
    params(("id" = uuid::Uuid, Path, description = "The endpoint's id")),
    responses(
        (status = 200, description = "Attempted: the call as logged (status delivered or failed)", body = TestDelivery),
        (status = 400, description = "The id is not a UUID", body = ErrorBody),
        (status = 404, description = "You have no such endpoint", body = ErrorBody),
        (status = 409, description = "The endpoint is disabled, or another test call of this account is still waiting for its answer", body = ErrorBody),
    )
)]
async fn test_webhook(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    Path(id): Path<String>,
) -> Result<Json<TestDelivery>, ApiError> {
    Ok(Json(state.alerts.test_webhook(&user, &id).await?))
}
