//! The HTTP server (issue 14): the accept loop, a deadline on every
//! connection, the connection cap and the graceful shutdown. It replaces
//! `axum::serve`, which has no timeouts and no cap.
//!
//! Every connection is in one phase at a time, each with a deadline that a
//! watchdog (one select loop per connection) enforces by closing it:
//!
//! | phase | deadline |
//! |---|---|
//! | new connection, before its first request head is complete | accept + header timeout |
//! | kept alive between requests, no byte received | last response + idle timeout |
//! | a request head has started to arrive | first byte + header timeout |
//! | the request is being handled | the per-request deadline (504) and the body deadline (408) in the HTTP layer; here a backstop of the request timeout + 5 s |
//! | the response is being written | no write progress for the idle timeout |
//!
//! hyper's own `header_read_timeout` is set too, as a backstop: in hyper
//! 1.x its timer also runs while a kept-alive connection waits for its next
//! request, so on its own it would make the idle timeout the header
//! timeout; it is set to the larger of the two plus a second, and the
//! watchdog above decides.
//!
//! Past the connection cap a connection is still accepted (leaving it in
//! the kernel's backlog would let the backlog decide, and a full backlog
//! looks like a dead server): it gets a short `503 {detail}` with
//! `Retry-After: 1` and `Connection: close` (after its request head, if it
//! sends one promptly) and is closed, at most [`REFUSE_SLOTS`] at a time
//! and for at most [`REFUSE_LINGER`] each;
//! beyond that it is closed at once. The cap is clamped below the open-file
//! limit (raised to its hard limit at start) with [`FD_HEADROOM`] left for
//! the database, the components and the refusals, so slow or idle sockets
//! can never take the descriptors the process needs.
//!
//! Below the cap, one client address holds at most its share
//! (`FORECAST_MAX_CONNECTIONS_PER_CLIENT`, 256; an IPv6 client's whole /64
//! counts as one address), so one client cannot starve the others (issue
//! 25). The share is counted at accept, before any request exists, so it is
//! keyed by the TCP peer; a trusted proxy (`FORECAST_TRUSTED_PROXIES`)
//! speaks for many clients and is counted against the cap only. A
//! connection past its share gets the same kind of answer as one past the
//! cap (a `503 {detail}` naming the share, `Retry-After: 1`), at most
//! [`SHARE_REFUSE_SLOTS`] at a time, else it is closed at once: so a
//! client that reconnects in a loop costs a descriptor for a moment, never
//! a slot of the cap nor one of the cap's refusals.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
use axum::Router;
use forecast_http::clients::TrustedProxies;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tower::ServiceExt;

/// File descriptors kept out of the connection cap: the database (SQLite
/// file, WAL and shared memory, or the PostgreSQL pool), the components,
/// the listeners, standard streams, the [`REFUSE_SLOTS`] and the
/// [`SHARE_REFUSE_SLOTS`].
pub const FD_HEADROOM: u64 = 256;
/// Connections past the cap answered with a 503 at the same time; more are
/// closed without an answer.
pub const REFUSE_SLOTS: usize = 64;
/// Connections past their client's share answered with a 503 at the same
/// time (apart from the cap's [`REFUSE_SLOTS`]); more are closed without an
/// answer.
pub const SHARE_REFUSE_SLOTS: usize = 16;
/// How long a refused connection is kept, all told.
pub const REFUSE_LINGER: Duration = Duration::from_secs(2);
/// How long a refused connection's request head is waited for before the
/// 503 is written anyway.
pub const REFUSE_HEAD_WAIT: Duration = Duration::from_millis(500);
/// How long past the per-request deadline a connection still handling a
/// request is closed (the HTTP layer answers 504 at the deadline itself).
const HANDLING_MARGIN: Duration = Duration::from_secs(5);

/// The server's deadlines and connection cap.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// `FORECAST_HEADER_TIMEOUT_MS` (10 s): a new connection's first
    /// request head, and any head from its first byte, must be complete
    /// within this.
    pub header_timeout: Duration,
    /// `FORECAST_IDLE_TIMEOUT_MS` (60 s): a kept-alive connection with no
    /// new request for this long is closed; so is one whose response has
    /// not progressed for this long.
    pub idle_timeout: Duration,
    /// `FORECAST_BODY_TIMEOUT_MS` (30 s): the whole request body must
    /// arrive within this from its head (408 otherwise).
    pub body_timeout: Duration,
    /// `FORECAST_REQUEST_TIMEOUT_MS` (60 s): a request still unanswered
    /// after this gets 504. Must exceed the backtest limit.
    pub request_timeout: Duration,
    /// `FORECAST_MAX_CONNECTIONS` (4,096): open connections at most,
    /// clamped below the open-file limit minus [`FD_HEADROOM`].
    pub max_connections: usize,
    /// `FORECAST_MAX_CONNECTIONS_PER_CLIENT` (256): open connections at most
    /// from one client address (an IPv6 /64); trusted proxies are exempt.
    pub max_connections_per_client: usize,
    /// `FORECAST_SHUTDOWN_GRACE_MS` (10 s): how long in-flight requests
    /// may finish after SIGTERM or SIGINT before the rest are closed.
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(60),
            max_connections: 4_096,
            max_connections_per_client: 256,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// Raises the soft open-file limit to the hard one and returns the limit
/// now in force (`None` where it cannot be read).
pub fn raise_open_file_limit() -> Option<u64> {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => Some(limit),
        Err(e) => {
            tracing::warn!(error = %e, "could not raise the open-file limit");
            rlimit::getrlimit(rlimit::Resource::NOFILE)
                .ok()
                .map(|(soft, _)| soft)
        }
    }
}

/// The connection cap in force: `requested`, at most the open-file limit
/// minus [`FD_HEADROOM`] (and at least 1).
pub fn connection_cap(requested: usize, open_files: Option<u64>) -> usize {
    let ceiling = open_files.map_or(usize::MAX, |n| {
        usize::try_from(n.saturating_sub(FD_HEADROOM)).unwrap_or(usize::MAX)
    });
    requested.min(ceiling).max(1)
}

/// The open connections of each client address (an IPv6 /64), for the
/// per-client share; an address leaves the map with its last connection.
#[derive(Default)]
struct Shares(Mutex<HashMap<IpAddr, usize>>);

impl Shares {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, usize>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a client's connections are counted under: its address, IPv4-mapped
/// IPv6 as IPv4, other IPv6 addresses by their /64 (what one subscriber
/// usually holds, so rotating addresses within it gains nothing).
pub fn share_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u128::MAX >> 64))),
        v4 => v4,
    }
}

/// One connection counted in its client's share while alive.
struct Share {
    shares: Arc<Shares>,
    key: IpAddr,
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut map = self.shares.lock();
        if let Some(n) = map.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.key);
            }
        }
    }
}

/// Serves `app` on `listener` until `shutdown` resolves: then stops
/// accepting (the listener is closed, so new connections are refused),
/// closes connections that are between requests, lets in-flight requests
/// finish for up to `limits.shutdown_grace` and closes whatever is left.
/// `limits.max_connections` is used as given (see [`connection_cap`]);
/// connections from `trusted` proxies are not counted in a client's share.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    trusted: TrustedProxies,
    shutdown: impl Future<Output = ()>,
) {
    let cap = limits.max_connections.max(1);
    let per_client = limits.max_connections_per_client.max(1);
    let slots = Arc::new(Semaphore::new(cap));
    let refusals = Arc::new(Semaphore::new(REFUSE_SLOTS));
    let share_refusals = Arc::new(Semaphore::new(SHARE_REFUSE_SLOTS));
    let shares = Arc::new(Shares::default());
    let busy: Arc<[u8]> = busy_response(cap).into();
    let over_share: Arc<[u8]> = over_share_response(per_client).into();
    let (stop, stopping) = watch::channel(false);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(
        limits.header_timeout.max(limits.idle_timeout) + Duration::from_secs(1),
    );
    let mut open = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        while open.try_join_next().is_some() {}
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
        };
        let key = (!trusted.contains(peer.ip())).then(|| share_key(peer.ip()));
        if key.is_some_and(|key| shares.lock().get(&key).copied().unwrap_or(0) >= per_client) {
            metrics::counter!("forecast_connections_refused_total", "reason" => "client_share")
                .increment(1);
            match share_refusals.clone().try_acquire_owned() {
                Ok(refusal) => {
                    tokio::spawn(refuse(stream, over_share.clone(), refusal));
                }
                Err(_) => drop(stream),
            }
            continue;
        }
        match slots.clone().try_acquire_owned() {
            Ok(slot) => {
                let _ = stream.set_nodelay(true);
                // Counted only once admitted: the accept loop alone adds,
                // so the check above still holds.
                let share = key.map(|key| {
                    *shares.lock().entry(key).or_insert(0) += 1;
                    Share {
                        shares: shares.clone(),
                        key,
                    }
                });
                open.spawn(connection(
                    stream,
                    peer,
                    app.clone(),
                    http.clone(),
                    limits,
                    stopping.clone(),
                    (slot, share),
                ));
            }
            Err(_) => {
                metrics::counter!("forecast_connections_refused_total", "reason" => "cap")
                    .increment(1);
                match refusals.clone().try_acquire_owned() {
                    Ok(refusal) => {
                        tokio::spawn(refuse(stream, busy.clone(), refusal));
                    }
                    Err(_) => drop(stream),
                }
            }
        }
    }
    drop(listener);
    let _ = stop.send(true);
    let drained = tokio::time::timeout(limits.shutdown_grace, async {
        while open.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            connections = open.len(),
            "shutdown grace elapsed: closing the remaining connections"
        );
        open.shutdown().await;
    }
}

/// An accept error: the peer's own (reset before accepted) is ignored; a
/// resource error (out of file descriptors) waits a moment so the loop
/// does not spin while connections close.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::*;
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused | Interrupted
    ) {
        return;
    }
    tracing::warn!(error = %e, "accept failed");
    metrics::counter!("forecast_accept_errors_total").increment(1);
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// The answer of a connection past the cap.
fn busy_response(cap: usize) -> Vec<u8> {
    let body = serde_json::json!({
        "detail": format!(
            "the server is at its limit of {cap} open connections; retry in a second"
        )
    })
    .to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The answer of a connection past its client's share.
fn over_share_response(per_client: usize) -> Vec<u8> {
    let body = serde_json::json!({
        "detail": format!(
            "too many open connections from this address (at most {per_client}); \
             close some or retry in a second"
        )
    })
    .to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads the request head (for at most [`REFUSE_HEAD_WAIT`]: an HTTP
/// client that sees an answer before it has sent its request calls it an
/// unexpected message), writes the 503, closes the sending side and reads
/// whatever the client sends until it closes (so the answer is not lost to
/// a reset), for at most [`REFUSE_LINGER`] in all.
async fn refuse(mut stream: TcpStream, answer: Arc<[u8]>, _slot: OwnedSemaphorePermit) {
    let _ = tokio::time::timeout(REFUSE_LINGER, async {
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        let _ = tokio::time::timeout(REFUSE_HEAD_WAIT, async {
            while head.len() < 16 << 10 && !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf).await? {
                    0 => break,
                    n => head.extend_from_slice(&buf[..n]),
                }
            }
            Ok::<_, std::io::Error>(())
        })
        .await;
        stream.write_all(&answer).await?;
        stream.shutdown().await?;
        while stream.read(&mut buf).await? > 0 {}
        Ok::<_, std::io::Error>(())
    })
    .await;
}

/// Where a connection is in its life (see the module's table).
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for a request head: since when, whether it is the
    /// connection's first, and when its first byte arrived.
    Head {
        since: Instant,
        first: bool,
        started: Option<Instant>,
    },
    /// The service is handling a request.
    Handling { since: Instant },
    /// The response is being written.
    Responding,
}

/// Why the watchdog closed a connection (the metric's label).
#[derive(Debug, Clone, Copy)]
enum Expired {
    Header,
    Idle,
    Handling,
    Stalled,
}

impl Expired {
    fn label(self) -> &'static str {
        match self {
            Expired::Header => "header_timeout",
            Expired::Idle => "idle_timeout",
            Expired::Handling => "request_timeout",
            Expired::Stalled => "stalled_response",
        }
    }
}

#[derive(Debug)]
struct State {
    phase: Phase,
    last_write: Instant,
}

/// What the socket, the service and the watchdog of one connection share.
#[derive(Debug)]
struct Watch {
    state: Mutex<State>,
    /// Wakes the watchdog when the deadline may have moved earlier.
    changed: Notify,
}

impl Watch {
    fn new() -> Self {
        let now = Instant::now();
        Watch {
            state: Mutex::new(State {
                phase: Phase::Head {
                    since: now,
                    first: true,
                    started: None,
                },
                last_write: now,
            }),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn read(&self) {
        let mut s = self.lock();
        if let Phase::Head { started, .. } = &mut s.phase {
            if started.is_none() {
                *started = Some(Instant::now());
                drop(s);
                self.changed.notify_one();
            }
        }
    }

    fn wrote(&self) {
        self.lock().last_write = Instant::now();
    }

    fn set(&self, phase: Phase) {
        self.lock().phase = phase;
        self.changed.notify_one();
    }

    /// Whether no request is in flight (the connection can be closed
    /// without losing an answer).
    fn between_requests(&self) -> bool {
        matches!(self.lock().phase, Phase::Head { .. })
    }

    /// The current deadline and what passing it means.
    fn deadline(&self, limits: &Limits) -> (Instant, Expired) {
        let s = self.lock();
        match s.phase {
            Phase::Head {
                started: Some(t), ..
            } => (t + limits.header_timeout, Expired::Header),
            Phase::Head {
                since, first: true, ..
            } => (since + limits.header_timeout, Expired::Header),
            Phase::Head { since, .. } => (since + limits.idle_timeout, Expired::Idle),
            Phase::Handling { since } => (
                since + limits.request_timeout + HANDLING_MARGIN,
                Expired::Handling,
            ),
            Phase::Responding => (s.last_write + limits.idle_timeout, Expired::Stalled),
        }
    }
}

/// One connection: hyper's HTTP/1 over a socket that reports its reads and
/// writes, the router with the peer's address in every request, and the
/// watchdog.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    http: hyper::server::conn::http1::Builder,
    limits: Limits,
    mut stopping: watch::Receiver<bool>,
    _held: (OwnedSemaphorePermit, Option<Share>),
) {
    let _open = forecast_http::metrics::Held::new("forecast_open_connections");
    let watch = Arc::new(Watch::new());
    let io = TokioIo::new(Tracked {
        stream,
        watch: watch.clone(),
    });
    let seen = watch.clone();
    let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
        // `client_ip` (per-address limits) reads it.
        req.extensions_mut().insert(ConnectInfo(peer));
        seen.set(Phase::Handling {
            since: Instant::now(),
        });
        let (app, seen) = (app.clone(), seen.clone());
        async move {
            let response = match app.oneshot(req).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            seen.set(Phase::Responding);
            Ok::<_, Infallible>(response.map(|body| Finished {
                body,
                watch: seen.clone(),
            }))
        }
    });
    let conn = http.serve_connection(io, service);
    tokio::pin!(conn);
    let mut draining = *stopping.borrow();
    if draining {
        return;
    }
    loop {
        let (deadline, _) = watch.deadline(&limits);
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, %peer, "connection ended with an error");
                }
                return;
            }
            () = watch.changed.notified() => {
                if draining && watch.between_requests() {
                    metrics::counter!("forecast_connections_closed_total", "reason" => "shutdown").increment(1);
                    return;
                }
            }
            () = tokio::time::sleep_until(deadline) => {
                // Re-read: the phase may have moved since the deadline was taken.
                let (deadline, expired) = watch.deadline(&limits);
                if deadline <= Instant::now() {
                    metrics::counter!("forecast_connections_closed_total", "reason" => expired.label()).increment(1);
                    tracing::debug!(%peer, reason = expired.label(), "closing connection");
                    return;
                }
            }
            _ = stopping.changed(), if !draining => {
                draining = true;
                if watch.between_requests() {
                    metrics::counter!("forecast_connections_closed_total", "reason" => "shutdown").increment(1);
                    return;
                }
                // Finish the request in flight, then close.
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// The socket, reporting the first byte of each request head and every
/// write to the connection's [`Watch`].
struct Tracked {
    stream: TcpStream,
    watch: Arc<Watch>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.watch.read();
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.watch.wrote();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.watch.wrote();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// A response body that moves its connection back to waiting for the next
/// request once hyper is done with it (written or dropped).
struct Finished {
    body: Body,
    watch: Arc<Watch>,
}

impl Drop for Finished {
    fn drop(&mut self) {
        self.watch.set(Phase::Head {
            since: Instant::now(),
            first: false,
            started: None,
        });
    }
}

impl hyper::body::Body for Finished {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_headroom_below_the_open_file_limit() {
        assert_eq!(connection_cap(4_096, Some(1_024)), 1_024 - 256);
        assert_eq!(connection_cap(20, Some(1_024)), 20);
        assert_eq!(connection_cap(4_096, None), 4_096);
        assert_eq!(connection_cap(4_096, Some(100)), 1);
    }

    #[test]
    fn a_client_is_counted_by_its_address_or_its_ipv6_64() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(share_key(ip("127.0.0.2")), ip("127.0.0.2"));
        assert_eq!(share_key(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(share_key(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(
            share_key(ip("2001:db8:1:2:ffff::9")),
            share_key(ip("2001:db8:1:2::1"))
        );
        assert_ne!(
            share_key(ip("2001:db8:1:3::1")),
            share_key(ip("2001:db8:1:2::1"))
        );
        let answer = String::from_utf8(over_share_response(100)).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 ") && head.contains("retry-after: 1"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(json["detail"].as_str().unwrap().contains("at most 100"));
    }

    #[test]
    fn the_busy_answer_is_complete_http() {
        let answer = String::from_utf8(busy_response(20)).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 "));
        assert!(head.contains("retry-after: 1") && head.contains("connection: close"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(json["detail"].as_str().unwrap().contains("20"));
    }
}
