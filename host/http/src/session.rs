//! Web sessions (DESIGN §7): `POST /auth/login`, `POST /auth/logout`,
//! `GET /auth/me`, and the [`SessionUser`] extractor used by the
//! cookie-authenticated endpoints (`/api/keys`, later `/api/match-tickers`).
//!
//! The cookie holds a random token; the store keeps only its SHA-256. A
//! Bearer key is never accepted where a session is required, and a
//! state-changing request authenticated by the cookie must carry an `Origin`
//! equal to the configured origin (CSRF), else 403.

use std::net::IpAddr;

use axum::extract::{FromRequestParts, State};
use axum::http::header::{AUTHORIZATION, COOKIE, ORIGIN, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method};
use axum::response::{IntoResponse, Response};
use axum::Json;
use forecast_api::accounts::{LoginRequest, Me, OkResponse};
use forecast_api::ErrorBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::extract::Json as JsonBody;
use crate::AppState;
use forecast_domain::User;
use forecast_services::auth::{SESSION_COOKIE, SESSION_SECONDS};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(login))
        .routes(routes!(logout))
        .routes(routes!(me))
}

pub(crate) fn session_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value.to_string())
        .filter(|v| !v.is_empty())
}

/// Refuses a state-changing request whose `Origin` is missing or foreign.
pub(crate) fn check_origin(parts: &Parts, state: &AppState) -> Result<(), ApiError> {
    if matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    match parts.headers.get(ORIGIN).and_then(|v| v.to_str().ok()) {
        // Exactly as a browser sends it (scheme://host[:port], no path):
        // anything else, a trailing slash included, is not this origin.
        Some(origin) if origin == &*state.origin => Ok(()),
        Some(other) => Err(ApiError::Forbidden(format!(
            "cross-origin request refused: Origin {other} is not {}",
            state.origin
        ))),
        None => Err(ApiError::Forbidden(format!(
            "state-changing requests with a session cookie must send Origin: {}",
            state.origin
        ))),
    }
}

/// The client's address ([`crate::clients::client_ip`]).
pub struct ClientAddr(pub IpAddr);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientAddr(crate::clients::client_ip(&parts.extensions)))
    }
}

/// The user of a valid session cookie. Rejects Bearer keys (401), missing
/// or expired sessions (401) and foreign-origin state changes (403).
pub struct SessionUser(pub User);

impl FromRequestParts<AppState> for SessionUser {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        if parts.headers.contains_key(AUTHORIZATION) {
            return Err(ApiError::Unauthorized(
                "API keys are not accepted here; sign in through POST /auth/login".into(),
            ));
        }
        let token = session_token(&parts.headers)
            .ok_or_else(|| ApiError::Unauthorized("sign in first: no session cookie".into()))?;
        let user = state.sessions.user(&token).await?.ok_or_else(|| {
            ApiError::Unauthorized("session expired or signed out; sign in again".into())
        })?;
        check_origin(parts, state)?;
        crate::record_user(&user);
        Ok(SessionUser(user))
    }
}

fn cookie(state: &AppState, value: &str, max_age: i64) -> HeaderValue {
    let secure = if state.cookie_secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}"
    ))
    .expect("cookie is ASCII")
}

/// Signs in.
#[utoipa::path(
    post,
    path = "/auth/login",
    operation_id = "login",
    summary = "Sign in: sets the HttpOnly session cookie `fe_session`",
    description = "A wrong e-mail and a wrong password give the same 401. The e-mail must be well-formed and at most 254 characters, the password at most 1,024 bytes (else 400, before anything is checked). Only failures count: at most 10 per account from one client address and 30 per client address per 5 minutes (then 429); a success resets the account's count. At most a few passwords are checked at once (then 503 with Retry-After). A new session replaces the one the browser had. A request carrying a foreign Origin is refused (403).",
    request_body = LoginRequest,
    responses(
        (status = 200, description = "Signed in", body = Me,
         headers(("Set-Cookie" = String, description = "fe_session=…; HttpOnly; SameSite=Lax; Path=/"))),
        (status = 400, description = "Malformed body, e-mail or password length; detail names it", body = ErrorBody),
        (status = 401, description = "Invalid email or password", body = ErrorBody),
        (status = 429, description = "Too many failed attempts; Retry-After says when to retry", body = ErrorBody,
         headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 503, description = "Too many sign-ins being checked at once, or the attempt limiter is unavailable; Retry-After when it is the former", body = ErrorBody),
    )
)]
async fn login(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    JsonBody(body): JsonBody<LoginRequest>,
) -> Result<Response, ApiError> {
    // Login CSRF: a foreign page may not sign a browser in either.
    if let Some(origin) = headers.get(ORIGIN).and_then(|v| v.to_str().ok()) {
        if origin != &*state.origin {
            return Err(ApiError::Forbidden(format!(
                "cross-origin login refused: Origin {origin}"
            )));
        }
    }
    let opened = state.sessions.login(body, client).await?;
    // Rotation: a session this browser already had ends with a new sign-in.
    if let Some(old) = session_token(&headers) {
        state.sessions.logout(&old).await?;
    }
    let mut response = Json(Me {
        email: opened.user.email,
        tier: opened.user.tier,
        upgrade_url: state.config.upgrade_url.clone(),
    })
    .into_response();
    response
        .headers_mut()
        .insert(SET_COOKIE, cookie(&state, &opened.token, SESSION_SECONDS));
    Ok(response)
}

/// Signs out.
#[utoipa::path(
    post,
    path = "/auth/logout",
    operation_id = "logout",
    summary = "Sign out: ends the session and clears the cookie",
    responses((status = 200, description = "Signed out", body = OkResponse))
)]
async fn logout(
    State(state): State<AppState>,
    headers: HeaderMap,
    session: SessionUser,
) -> Result<Response, ApiError> {
    let _ = session;
    if let Some(token) = session_token(&headers) {
        state.sessions.logout(&token).await?;
    }
    let mut response = Json(OkResponse::OK).into_response();
    response
        .headers_mut()
        .insert(SET_COOKIE, cookie(&state, "", 0));
    Ok(response)
}

/// The signed-in user.
#[utoipa::path(
    get,
    path = "/auth/me",
    operation_id = "me",
    summary = "The signed-in user",
    responses((status = 200, description = "OK", body = Me))
)]
async fn me(State(state): State<AppState>, SessionUser(user): SessionUser) -> Json<Me> {
    Json(Me {
        email: user.email,
        tier: user.tier,
        upgrade_url: state.config.upgrade_url.clone(),
    })
}
