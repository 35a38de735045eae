//! Bearer authentication and quotas for the API routes (DESIGN §7, §8),
//! and the web application's session-authenticated twin of the same
//! routes under `/web` (same tier rule, same per-user quota).
//!
//! The key and its owner come from the key cache
//! ([`forecast_services::auth::KeyCache`]), valid only while the store's
//! `auth` generation, read after the request arrived, has not moved: a
//! revocation or a tier change takes effect on the very next request on
//! every replica. Admission is one atomic `consume` in the store over the
//! user's minute and day windows; the cost of a request is a property of
//! its route. Rejections before admission (401, 402) count nothing.
//!
//! A backtest route ([`Concurrency::Backtest`]) also takes one of the
//! user's concurrent-backtest slots after the tier check and before the
//! quota is charged: past `FORECAST_BACKTESTS_PER_USER` running (Bearer and
//! session routes alike) the answer is 429 with `Retry-After` and the
//! user's unchanged quota in the rate headers, and nothing is charged. The
//! slot travels to the handler in the request's extensions
//! ([`BacktestSlot`]), which hands it to the service.

use std::sync::{Arc, Mutex};

use axum::extract::{FromRequestParts, Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::session::SessionUser;
use crate::AppState;
use forecast_domain::{ApiKeyRecord, Tier, User};
use forecast_research::backtest::UserSlot;
use forecast_services::auth;
use forecast_services::quota::{Generations, WindowUsage};

/// What a route costs against the quota (a backtest costs 5).
#[derive(Debug, Clone, Copy)]
pub struct Cost(pub u32);

/// A request's own price, set by a layer before the guard (a sweep's
/// combinations: `crate::research::price`); it replaces the route's
/// [`Cost`].
#[derive(Debug, Clone, Copy)]
pub struct Priced(pub u32);

/// The cost of `req`: its own price when a layer set one, else the route's.
fn cost_of(extensions: &axum::http::Extensions, route: Cost) -> Cost {
    extensions.get::<Priced>().map_or(route, |p| Cost(p.0))
}

/// The route's concurrency rule, except for a download answered from a
/// kept answer (`crate::recall`), which runs nothing and takes no slot.
fn concurrency_of(extensions: &axum::http::Extensions, route: Concurrency) -> Concurrency {
    match extensions.get::<crate::recall::Recalled>() {
        Some(_) => Concurrency::Unbounded,
        None => route,
    }
}

/// The authenticated user, for handlers that need it.
#[derive(Debug, Clone)]
pub struct ApiUser(pub User);

/// The store's generation counters read for this request (after it
/// arrived), for handlers that answer from memory.
#[derive(Debug, Clone, Copy)]
pub struct Fresh(pub Generations);

impl Fresh {
    /// The counters the Bearer guard read for this request, else (a web
    /// session's request) counters read now; `None` when the store could
    /// not be read in time.
    pub async fn or_read(
        fresh: Option<axum::Extension<Fresh>>,
        state: &AppState,
    ) -> Option<Generations> {
        match fresh {
            Some(axum::Extension(Fresh(g))) => Some(g),
            None => state.keycache.freshness().current().await,
        }
    }
}

/// Whether a route runs under one of the user's concurrent-backtest slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concurrency {
    /// No per-user bound beyond the quota.
    Unbounded,
    /// One of the user's `FORECAST_BACKTESTS_PER_USER` backtest slots.
    Backtest,
}

/// The backtest slot the guard took for this request; the handler takes
/// it out and moves it into the service, which holds it until the work has
/// stopped. Left in (the handler never ran), it is freed with the request.
#[derive(Clone, Debug)]
pub struct BacktestSlot(Arc<Mutex<Option<UserSlot>>>);

impl BacktestSlot {
    /// The slot, once.
    pub fn take(&self) -> Option<UserSlot> {
        self.0.lock().expect("slot poisoned").take()
    }
}

const INVALID_KEY: &str = "missing or invalid API key: send Authorization: Bearer svc_…";

/// The window the headers describe: a violated one on rejection (the one
/// that frees up last), else the one with the least remaining.
fn binding(windows: &[WindowUsage], admitted: bool, cost: u32) -> WindowUsage {
    if !admitted {
        if let Some(w) = windows
            .iter()
            .filter(|w| u64::from(w.used) + u64::from(cost) > u64::from(w.limit))
            .max_by_key(|w| w.reset)
        {
            return *w;
        }
    }
    *windows
        .iter()
        .min_by_key(|w| (w.remaining(), w.reset))
        .expect("at least one window")
}

fn rate_headers(headers: &mut HeaderMap, w: &WindowUsage) {
    headers.insert("x-ratelimit-limit", HeaderValue::from(w.limit));
    headers.insert("x-ratelimit-remaining", HeaderValue::from(w.remaining()));
    headers.insert("x-ratelimit-reset", HeaderValue::from(w.reset));
}

/// The Bearer middleware: authenticate the key, check the tier, admit,
/// run, add headers.
pub async fn bearer(
    State((state, cost, concurrency)): State<(AppState, Cost, Concurrency)>,
    req: Request,
    next: Next,
) -> Response {
    let cost = cost_of(req.extensions(), cost);
    let concurrency = concurrency_of(req.extensions(), concurrency);
    // Owned, so the future holds no borrow of the (non-Sync) request.
    let authorization = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let now = state.clock.timestamp();
    // A remembered key is charged first and confirmed after: with the
    // generation counters the commit of its charge read (one wait on the
    // store instead of two), or read now. A key found stale gets its charge
    // back and goes the strict way below.
    if concurrency == Concurrency::Unbounded {
        let remembered = authorization
            .as_deref()
            .and_then(auth::parse_bearer)
            .map(auth::sha256_hex)
            .and_then(|hash| Some((state.keycache.remembered(&hash)?, hash)));
        if let Some(((found, generation), hash)) = remembered {
            let user = &found.1;
            let metered = meter(&state, cost, concurrency, user, now).await;
            let read = match &metered {
                Ok((_, _, Some(g))) => Some(*g),
                _ => state.keycache.freshness().current().await,
            };
            if read.is_some_and(|g| g.auth == generation) {
                let (window, _, generations) = match metered {
                    Ok(admitted) => admitted,
                    Err(e) if e.headers().contains_key("x-ratelimit-limit") => return e,
                    Err(e) => return per_client(&state, &req, e),
                };
                let generations = generations.or(read);
                return admitted(
                    state,
                    req,
                    next,
                    &found,
                    &hash,
                    (window, cost),
                    None,
                    generations,
                    now,
                )
                .await;
            }
            if metered.is_ok() {
                if let Err(e) = state.quota.refund(user, cost.0, now).await {
                    tracing::warn!(error = %e, "could not refund a stale key's charge");
                }
            }
        }
    }
    let (found, hash, generations) = match key_user(&state, authorization.as_deref()).await {
        Ok(found) => found,
        Err(e) => return per_client(&state, &req, e),
    };
    let (window, slot, _) = match meter(&state, cost, concurrency, &found.1, now).await {
        Ok(admitted) => admitted,
        Err(e) if e.headers().contains_key("x-ratelimit-limit") => return e,
        Err(e) => return per_client(&state, &req, e),
    };
    admitted(
        state,
        req,
        next,
        &found,
        &hash,
        (window, cost),
        slot,
        generations,
        now,
    )
    .await
}

/// An authenticated, admitted Bearer request: its slot, `last_used_at`,
/// the user and counters for the handler, the rate headers.
#[allow(clippy::too_many_arguments)]
async fn admitted(
    state: AppState,
    mut req: Request,
    next: Next,
    found: &(ApiKeyRecord, User),
    hash: &str,
    (window, cost): (WindowUsage, Cost),
    slot: Option<UserSlot>,
    generations: Option<Generations>,
    now: i64,
) -> Response {
    let (record, user) = found;
    if let Some(slot) = slot {
        req.extensions_mut()
            .insert(BacktestSlot(Arc::new(Mutex::new(Some(slot)))));
    }
    // At most once a minute (the record says when it was last written), and
    // best effort: a failed bookkeeping write must not fail the request.
    if record.last_used_at.is_none_or(|t| now - t >= 60) {
        match state.keys.touch(&record.id, now).await {
            Ok(()) => state.keycache.touched(hash, now),
            Err(e) => tracing::warn!(error = %e, "could not update last_used_at"),
        }
    }
    if let Some(g) = generations {
        req.extensions_mut().insert(Fresh(g));
    }
    crate::record_user(user);
    req.extensions_mut().insert(ApiUser(user.clone()));
    let route = route_of(&req);
    let response = next.run(req).await;
    answered(&state, user, (&route, cost), window, now, response).await
}

/// The method and route template of a request (`GET /api/ranking`), as
/// `GET /api/usage` lists what each route cost.
fn route_of(req: &Request) -> String {
    let path = req
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map_or_else(|| req.uri().path(), |p| p.as_str());
    format!("{} {path}", req.method())
}

/// The rate headers on an answer, after giving the charge back when the
/// work was refused before it started (a 503 from the heavy-work budget
/// or the wait for plugin slots: [`super::error::Uncharged`]); what the
/// route finally cost is tallied for `GET /api/usage`.
async fn answered(
    state: &AppState,
    user: &User,
    (route, cost): (&str, Cost),
    mut window: WindowUsage,
    now: i64,
    mut response: Response,
) -> Response {
    // Refused before the work: all of it back; stopped part way: what
    // the charge exceeds the work that ran.
    let back = if response
        .extensions()
        .get::<super::error::Uncharged>()
        .is_some()
    {
        cost.0
    } else {
        response
            .extensions()
            .get::<super::error::ChargeAtMost>()
            .map_or(0, |c| cost.0.saturating_sub(c.0))
    };
    if back > 0 {
        match state.quota.refund(user, back, now).await {
            Ok(()) => window.used = window.used.saturating_sub(back),
            Err(e) => tracing::warn!(error = %e, "could not give back a refused request's charge"),
        }
    }
    // Bookkeeping: a failure to count it must not fail the request.
    if let Err(e) = state
        .quota
        .tally(user, route, cost.0.saturating_sub(back), now)
        .await
    {
        tracing::warn!(error = %e, "could not tally a route's usage");
    }
    rate_headers(response.headers_mut(), &window);
    response
}

/// A refusal before any user's quota (401, 402, 503) is counted against
/// the client's address (`crate::clients`) and carries its headers; once
/// that allowance is used up the answer is 429, which slows key guessing.
fn per_client(state: &AppState, req: &Request, refusal: Response) -> Response {
    let counted = state
        .clients
        .count(crate::clients::client_ip(req.extensions()));
    if !counted.admitted {
        return crate::clients::refused(&counted);
    }
    let mut refusal = refusal;
    crate::clients::headers(refusal.headers_mut(), &counted);
    refusal
}

/// The web application's middleware for the same data routes under
/// `/web`: the session cookie (with its Origin check on state changes)
/// instead of a key, then the same tier rule and the same per-user quota.
pub async fn session(
    State((state, cost, concurrency)): State<(AppState, Cost, Concurrency)>,
    req: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = req.into_parts();
    let cost = cost_of(&parts.extensions, cost);
    let concurrency = concurrency_of(&parts.extensions, concurrency);
    let now = state.clock.timestamp();
    // A remembered session is charged first and confirmed after, with the
    // counters its charge's commit read (one wait on the store, as for a
    // remembered key); one found stale gets its charge back and goes the
    // strict way.
    let (user, metered) = match remembered_session(&state, &parts, cost, concurrency, now).await {
        Some(remembered) => remembered,
        None => {
            let user = match SessionUser::from_request_parts(&mut parts, &state).await {
                Ok(SessionUser(user)) => user,
                Err(e) => return e.into_response(),
            };
            let metered = meter(&state, cost, concurrency, &user, now).await;
            (user, metered)
        }
    };
    let (window, slot, generations) = match metered {
        Ok(admitted) => admitted,
        Err(e) => return e,
    };
    let req = Request::from_parts(parts, body);
    session_admitted(
        state,
        req,
        next,
        user,
        (window, cost),
        slot,
        generations,
        now,
    )
    .await
}

/// The user of a remembered session and its charge, when the counters
/// read after the request arrived confirm the session; `None` sends the
/// request the strict way (nothing charged).
async fn remembered_session(
    state: &AppState,
    parts: &axum::http::request::Parts,
    cost: Cost,
    concurrency: Concurrency,
    now: i64,
) -> Option<(User, MeterResult)> {
    if concurrency != Concurrency::Unbounded || parts.headers.contains_key(AUTHORIZATION) {
        return None;
    }
    crate::session::check_origin(parts, state).ok()?;
    let token = crate::session::session_token(&parts.headers)?;
    let (user, generation) = state.sessions.remembered(&token, now)?;
    let metered = meter(state, cost, concurrency, &user, now).await;
    let read = match &metered {
        Ok((_, _, Some(g))) => Some(*g),
        _ => state.keycache.freshness().current().await,
    };
    if read.is_some_and(|g| g.auth == generation) {
        crate::record_user(&user);
        return Some((user, metered));
    }
    if metered.is_ok() {
        if let Err(e) = state.quota.refund(&user, cost.0, now).await {
            tracing::warn!(error = %e, "could not refund a stale session's charge");
        }
    }
    None
}

/// What [`meter`] answers.
type MeterResult = Result<(WindowUsage, Option<UserSlot>, Option<Generations>), Response>;

/// Runs a session's admitted request: its slot, user and counters in the
/// request's extensions, then the rate headers on the answer.
#[allow(clippy::too_many_arguments)]
async fn session_admitted(
    state: AppState,
    mut req: Request,
    next: Next,
    user: User,
    (window, cost): (WindowUsage, Cost),
    slot: Option<UserSlot>,
    generations: Option<Generations>,
    now: i64,
) -> Response {
    // The counters the charge's commit read: later than the request's
    // arrival, so the handler answers from memory without a read of its own.
    if let Some(g) = generations {
        req.extensions_mut().insert(Fresh(g));
    }
    if let Some(slot) = slot {
        req.extensions_mut()
            .insert(BacktestSlot(Arc::new(Mutex::new(Some(slot)))));
    }
    req.extensions_mut().insert(ApiUser(user.clone()));
    let route = route_of(&req);
    let response = next.run(req).await;
    answered(&state, &user, (&route, cost), window, now, response).await
}

/// The active key of a Bearer header and its owner (401 otherwise), from
/// the key cache, with the key's hash and the generation counters read for
/// this request.
async fn key_user(
    state: &AppState,
    authorization: Option<&str>,
) -> Result<(Arc<(ApiKeyRecord, User)>, String, Option<Generations>), Response> {
    let key = authorization
        .and_then(auth::parse_bearer)
        .ok_or_else(|| ApiError::Unauthorized(INVALID_KEY.into()).into_response())?;
    let hash = auth::sha256_hex(key);
    let (found, generations) = state
        .keycache
        .lookup(&hash)
        .await
        .map_err(|e| ApiError::from(e).into_response())?;
    let found = found.ok_or_else(|| ApiError::Unauthorized(INVALID_KEY.into()).into_response())?;
    Ok((found, hash, generations))
}

/// The tier rule (402, counting nothing), a backtest slot for a backtest
/// route (429 counting nothing) and admission of `cost` units against the
/// user's windows at `now` (429 with the binding window's headers; the
/// slot is freed again); with the generation counters the store read after
/// committing the charge, when it did.
async fn meter(
    state: &AppState,
    cost: Cost,
    concurrency: Concurrency,
    user: &User,
    now: i64,
) -> Result<(WindowUsage, Option<UserSlot>, Option<Generations>), Response> {
    if user.tier != Tier::Premium {
        return Err(ApiError::PaymentRequired(format!(
            "API access needs the Premium tier (this account is on {})",
            user.tier.as_str()
        ))
        .into_response());
    }
    let quota_down = |e: forecast_services::error::Error| {
        tracing::error!(error = %e, "quota store unavailable");
        ApiError::Unavailable("quota store unavailable; request refused".into()).into_response()
    };
    let slot = match concurrency {
        Concurrency::Unbounded => None,
        Concurrency::Backtest => match state.backtests.admit(&user.id) {
            Ok(slot) => Some(slot),
            Err(refused) => {
                // A look (cost 0) at the windows for the headers: every
                // response carries them, and they show nothing was charged.
                let look = state.quota.look(user, now).await.map_err(quota_down)?;
                let mut response = ApiError::from(refused).into_response();
                rate_headers(response.headers_mut(), &binding(&look, true, 0));
                return Err(response);
            }
        },
    };
    if cost.0 == 0 {
        // A free route: the windows for the headers, nothing charged and
        // never a 429.
        let look = state.quota.look(user, now).await.map_err(quota_down)?;
        return Ok((binding(&look, true, 0), slot, None));
    }
    let consumed = state
        .quota
        .charge(user, cost.0, now)
        .await
        .map_err(quota_down)?;
    let generations = consumed.generations;
    let window = binding(&consumed.windows, consumed.admitted, cost.0);
    if !consumed.admitted {
        forecast_services::rejected("key_quota");
        let mut response = ApiError::TooManyRequests {
            detail: format!(
                "{} quota of {} exhausted; retry after the window resets",
                window.kind, window.limit
            ),
            retry_after: (window.reset - now).max(1) as u64,
        }
        .into_response();
        rate_headers(response.headers_mut(), &window);
        return Err(response);
    }
    Ok((window, slot, generations))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(kind: &'static str, limit: u32, used: u32, reset: i64) -> WindowUsage {
        WindowUsage {
            kind,
            limit,
            used,
            reset,
        }
    }

    #[test]
    fn headers_describe_the_binding_window() {
        let minute = w("minute", 60, 10, 100);
        let day = w("day", 1000, 995, 5000);
        assert_eq!(
            binding(&[minute, day], true, 1).kind,
            "day",
            "least remaining"
        );
        let minute_full = w("minute", 60, 60, 100);
        assert_eq!(
            binding(&[minute_full, w("day", 1000, 100, 5000)], false, 1).kind,
            "minute"
        );
        // Both violated: the one that frees up last.
        assert_eq!(
            binding(&[minute_full, w("day", 1000, 1000, 5000)], false, 1).kind,
            "day"
        );
        // A cost-5 request rejected by the minute window with 3 left.
        assert_eq!(
            binding(
                &[w("minute", 60, 57, 100), w("day", 1000, 10, 5000)],
                false,
                5
            )
            .kind,
            "minute"
        );
    }
}
