//! The per-client limit (issue 14): requests that no user's quota meters —
//! anonymous ones, wrong keys (401), other tiers (402), health, the OpenAPI
//! document, the session routes — are counted per client address, so every
//! API response carries `X-RateLimit-*` and a single address cannot flood
//! the open routes. A GCRA limiter (governor) kept in memory: per replica,
//! which is what a flood limit needs; forgotten addresses are dropped by
//! [`ClientLimiter::upkeep`].

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{AUTHORIZATION, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use super::error::ApiError;
use crate::AppState;
use forecast_services::auth;

type Limiter =
    RateLimiter<IpAddr, DefaultKeyedStateStore<IpAddr>, DefaultClock, StateInformationMiddleware>;

/// Requests per client address per minute, in memory.
pub struct ClientLimiter {
    limiter: Limiter,
    per_minute: u32,
}

/// What counting one request said.
#[derive(Debug, Clone, Copy)]
pub struct Counted {
    /// Whether it was admitted.
    pub admitted: bool,
    /// Requests allowed per minute.
    pub limit: u32,
    /// Requests left now.
    pub remaining: u32,
    /// Unix seconds when the allowance is whole again.
    pub reset: i64,
    /// Seconds to wait when refused.
    pub retry_after: u64,
}

impl ClientLimiter {
    /// `per_minute` requests per address per minute (bursts up to the
    /// whole minute's allowance).
    pub fn new(per_minute: u32) -> Self {
        let per_minute = per_minute.max(1);
        let quota = Quota::per_minute(NonZeroU32::new(per_minute).expect("at least 1"));
        ClientLimiter {
            limiter: RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
            per_minute,
        }
    }

    /// Counts one request from `client`.
    pub fn count(&self, client: IpAddr) -> Counted {
        let now = chrono::Utc::now().timestamp();
        let per_cell = 60.0 / f64::from(self.per_minute);
        match self.limiter.check_key(&client) {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                let refill = f64::from(self.per_minute - remaining.min(self.per_minute)) * per_cell;
                Counted {
                    admitted: true,
                    limit: self.per_minute,
                    remaining,
                    reset: now + refill.ceil() as i64,
                    retry_after: 0,
                }
            }
            Err(not_until) => {
                let wait = not_until
                    .wait_time_from(DefaultClock::default().now())
                    .as_secs()
                    .max(1);
                Counted {
                    admitted: false,
                    limit: self.per_minute,
                    remaining: 0,
                    reset: now + wait as i64,
                    retry_after: wait,
                }
            }
        }
    }

    /// Drops addresses whose allowance is whole again (run periodically:
    /// the map then holds only recently active clients).
    pub fn upkeep(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }

    /// Addresses tracked now.
    pub fn tracked(&self) -> usize {
        self.limiter.len()
    }
}

/// The client's address: the connection's peer (`ConnectInfo`, set by the
/// server), or the loopback address for a request without one (in-process
/// tests). Forwarded headers are not trusted: behind a proxy every client
/// shares the proxy's address, which only makes the limits stricter.
pub fn client_ip(extensions: &axum::http::Extensions) -> IpAddr {
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::from([127, 0, 0, 1]), |c| c.0.ip())
}

/// Writes the `X-RateLimit-*` headers of `counted`.
pub fn headers(h: &mut HeaderMap, counted: &Counted) {
    h.insert("x-ratelimit-limit", HeaderValue::from(counted.limit));
    h.insert(
        "x-ratelimit-remaining",
        HeaderValue::from(counted.remaining),
    );
    h.insert("x-ratelimit-reset", HeaderValue::from(counted.reset));
}

/// The 429 of an exhausted client allowance.
pub fn refused(counted: &Counted) -> Response {
    forecast_services::rejected("client_limit");
    let mut response = ApiError::TooManyRequests {
        detail: format!(
            "too many requests from this address ({} a minute); retry after {} s",
            counted.limit, counted.retry_after
        ),
        retry_after: counted.retry_after,
    }
    .into_response();
    headers(response.headers_mut(), counted);
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(counted.retry_after));
    response
}

/// The middleware over the API's paths (`/api`, `/auth`, `/web`): a
/// request that carries an API key is left to the key's guard (its quota
/// meters it; a wrong key is counted there); every other request is
/// counted against its address, refused with 429 when the allowance is
/// used up, and answered with the address's `X-RateLimit-*` unless a
/// user's quota already set them.
pub async fn limit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let api = ["/api/", "/auth/", "/web/"]
        .iter()
        .any(|p| path.starts_with(p));
    let keyed = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(auth::parse_bearer)
        .is_some();
    if !api || keyed {
        return next.run(req).await;
    }
    let counted = state.clients.count(client_ip(req.extensions()));
    if !counted.admitted {
        return refused(&counted);
    }
    let mut response = next.run(req).await;
    if !response.headers().contains_key("x-ratelimit-limit") {
        headers(response.headers_mut(), &counted);
    }
    response
}
