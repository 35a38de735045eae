//! The per-client limit (issue 14): requests that no user's quota meters —
//! anonymous ones, wrong keys (401), other tiers (402), health, the OpenAPI
//! document, the session routes — are counted per client address, so every
//! API response carries `X-RateLimit-*` and a single address cannot flood
//! the open routes. A GCRA limiter (governor) kept in memory: per replica,
//! which is what a flood limit needs; forgotten addresses are dropped by
//! [`ClientLimiter::upkeep`].
//!
//! And the client address itself (issue 25): the TCP peer, unless that peer
//! is one of `FORECAST_TRUSTED_PROXIES` ([`TrustedProxies`]); then the
//! right-most `X-Forwarded-For` address that is not itself trusted.
//! [`resolve`] decides it once per request, before the request's span is
//! opened, and [`client_ip`] hands it to everything keyed by address: this
//! limit, the sign-in throttle, the admin-token lockout and the `client`
//! field of the request's log lines. The per-address connection share
//! (`host/src/server.rs`) is counted before any request exists, so it is
//! keyed by the TCP peer, and a trusted proxy's connections are exempt.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;

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
    /// What the reported reset times are counted from (the limiting
    /// itself runs on the monotonic clock).
    clock: forecast_domain::SharedClock,
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
    /// whole minute's allowance); resets are reported in `clock`'s time.
    pub fn new(per_minute: u32, clock: forecast_domain::SharedClock) -> Self {
        let per_minute = per_minute.max(1);
        let quota = Quota::per_minute(NonZeroU32::new(per_minute).expect("at least 1"));
        ClientLimiter {
            limiter: RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
            per_minute,
            clock,
        }
    }

    /// Counts one request from `client`.
    pub fn count(&self, client: IpAddr) -> Counted {
        let now = self.clock.timestamp();
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

/// The client's address: what [`resolve`] decided for the request, else
/// the connection's peer (`ConnectInfo`, set by the server), else the
/// loopback address (a request without either: in-process tests).
pub fn client_ip(extensions: &axum::http::Extensions) -> IpAddr {
    if let Some(ClientIp(ip)) = extensions.get::<ClientIp>() {
        return *ip;
    }
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(LOOPBACK, |c| c.0.ip().to_canonical())
}

const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

/// The client address of a request, as [`resolve`] decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

/// The outermost middleware but the request id's and the metrics': puts
/// the request's [`ClientIp`] in its extensions (from the TCP peer, or
/// `X-Forwarded-For` when the peer is a trusted proxy).
pub async fn resolve(
    State(trusted): State<TrustedProxies>,
    mut req: Request,
    next: Next,
) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(LOOPBACK, |c| c.0.ip());
    let client = trusted.client(peer, req.headers());
    req.extensions_mut().insert(ClientIp(client));
    next.run(req).await
}

/// One CIDR block: an address and how many leading bits of it count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    net: IpAddr,
    bits: u8,
}

impl Cidr {
    /// Whether `ip` (IPv4-mapped IPv6 addresses as IPv4) is in the block.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.net, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.bits)).unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.bits))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl std::str::FromStr for Cidr {
    type Err = String;

    /// `10.0.0.0/8`, `fd00::/8`, or one address (`192.0.2.7`: a /32, `::1`:
    /// a /128). Bits past the prefix length are ignored.
    fn from_str(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        let (addr, bits) = match raw.split_once('/') {
            Some((addr, bits)) => (addr, Some(bits)),
            None => (raw, None),
        };
        let net = addr
            .trim()
            .parse::<IpAddr>()
            .map_err(|_| format!("'{raw}' is not an IP address or CIDR block"))?
            .to_canonical();
        let max = if net.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            None => max,
            Some(b) => match b.trim().parse::<u8>() {
                Ok(b) if b <= max => b,
                _ => return Err(format!("'{raw}': the prefix length must be 0 to {max}")),
            },
        };
        Ok(Cidr { net, bits })
    }
}

/// `FORECAST_TRUSTED_PROXIES`: the reverse proxies whose `X-Forwarded-For`
/// names the client. Empty (the default): nobody's; the client is always
/// the TCP peer.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Arc<[Cidr]>);

impl TrustedProxies {
    /// No trusted proxy.
    pub fn none() -> Self {
        Self::default()
    }

    /// Comma-separated CIDR blocks or addresses, blanks ignored; empty:
    /// none. An error names the entry at fault.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let blocks = raw
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(str::parse)
            .collect::<Result<Vec<Cidr>, _>>()?;
        Ok(TrustedProxies(blocks.into()))
    }

    /// Whether no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `ip` is a trusted proxy.
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|c| c.contains(ip))
    }

    /// The client address of a request from `peer` with `headers`: the
    /// peer itself unless it is trusted; from a trusted peer, the right-most
    /// `X-Forwarded-For` address (every such header, in order) that is not
    /// itself trusted, each trusted hop vouching for the one to its left.
    /// Where every hop is trusted, the left-most; where an entry is not an
    /// address, the last hop trusted before it (what a trusted proxy put
    /// there is kept, what it only passed on is not believed).
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let mut client = peer.to_canonical();
        if !self.contains(client) {
            return client;
        }
        let hops: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .collect();
        for hop in hops.into_iter().rev() {
            let Some(ip) = forwarded_ip(hop) else {
                break;
            };
            client = ip;
            if !self.contains(ip) {
                break;
            }
        }
        client
    }
}

/// An `X-Forwarded-For` entry's address: `192.0.2.7`, `2001:db8::1`, or
/// either with a port (`192.0.2.7:4711`, `[2001:db8::1]:4711`).
fn forwarded_ip(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    hop.parse::<IpAddr>()
        .or_else(|_| hop.parse::<SocketAddr>().map(|s| s.ip()))
        .ok()
        .map(|ip| ip.to_canonical())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn xff(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append("x-forwarded-for", HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn cidr_blocks_parse_and_match() {
        let t = TrustedProxies::parse(" 10.0.0.0/8, 192.0.2.7 ,fd00::/8,").unwrap();
        assert!(t.contains(ip("10.200.1.1")));
        assert!(!t.contains(ip("11.0.0.1")));
        assert!(t.contains(ip("192.0.2.7")) && !t.contains(ip("192.0.2.8")));
        assert!(t.contains(ip("fd12::1")) && !t.contains(ip("fe80::1")));
        assert!(t.contains(ip("::ffff:10.1.2.3")), "IPv4-mapped is IPv4");
        assert!(TrustedProxies::parse("0.0.0.0/0")
            .unwrap()
            .contains(ip("8.8.8.8")));
        assert!(TrustedProxies::parse("").unwrap().is_empty());
        for bad in [
            "10.0.0.0/33",
            "::/129",
            "example.com",
            "10.0.0.0/x",
            "10.0.0/8",
        ] {
            let e = TrustedProxies::parse(bad).unwrap_err();
            assert!(e.contains(bad.split('/').next().unwrap()), "{bad}: {e}");
        }
    }

    #[test]
    fn forwarded_for_is_believed_from_trusted_peers_only() {
        let t = TrustedProxies::parse("10.0.0.0/8").unwrap();
        let h = xff(&["198.51.100.9, 10.0.0.2"]);
        // An untrusted peer: its own address, whatever it claims.
        assert_eq!(t.client(ip("203.0.113.5"), &h), ip("203.0.113.5"));
        assert_eq!(
            TrustedProxies::none().client(ip("10.0.0.1"), &h),
            ip("10.0.0.1")
        );
        // A trusted one: the right-most untrusted hop.
        assert_eq!(t.client(ip("10.0.0.1"), &h), ip("198.51.100.9"));
        // What the client itself wrote further left is not believed.
        let spoofed = xff(&["1.1.1.1", "198.51.100.9"]);
        assert_eq!(t.client(ip("10.0.0.1"), &spoofed), ip("198.51.100.9"));
        // No header: the proxy; all hops trusted: the left-most.
        assert_eq!(t.client(ip("10.0.0.1"), &HeaderMap::new()), ip("10.0.0.1"));
        assert_eq!(
            t.client(ip("10.0.0.1"), &xff(&["10.9.9.9, 10.0.0.2"])),
            ip("10.9.9.9")
        );
        // Ports and IPv6; garbage stops the walk at the last trusted hop.
        assert_eq!(
            t.client(ip("10.0.0.1"), &xff(&["[2001:db8::1]:4711"])),
            ip("2001:db8::1")
        );
        assert_eq!(
            t.client(ip("10.0.0.1"), &xff(&["198.51.100.9:80"])),
            ip("198.51.100.9")
        );
        assert_eq!(
            t.client(ip("10.0.0.1"), &xff(&["1.1.1.1, unknown, 10.0.0.3"])),
            ip("10.0.0.3")
        );
        assert_eq!(
            t.client(ip("::ffff:10.0.0.1"), &h),
            ip("198.51.100.9"),
            "an IPv4-mapped peer"
        );
    }
}
