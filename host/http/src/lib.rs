//! The HTTP layer, the only place that knows status codes and routes.
//! Handlers call services; this crate does not depend on the store.
//!
//! Each resource module exposes `router()`; this module merges them, adds
//! the cross-cutting layers (request metrics, request id, tracing, response
//! compression, the request and body deadlines, body limit, panic catching)
//! and guarantees that every error response is `{detail}` JSON,
//! including unknown routes, 405s, 413s and extractor rejections.
//! Bearer authentication and quotas are a route layer on the Bearer routes
//! (`bearer_routes`, cost per group); health and the OpenAPI document are
//! open; `/auth/*`, `/api/keys`, `/api/match-tickers` and `/web/*` use the
//! web session. The web application's pages and files are served by the
//! fallback (`web_app`).

mod admin;
mod alerts;
mod analysis;
mod assets;
mod backtest;
pub mod clients;
pub mod docs;
pub mod error;
mod export;
pub mod extract;
pub mod guard;
mod health;
mod keys;
pub mod limits;
mod matcher;
pub mod metrics;
mod progress;
mod ranking;
pub mod recall;
mod research;
pub mod session;
mod state;
mod strategies;
mod usage;
mod watchlist;
mod web_app;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json, Router};
use serde_json::json;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::{CompressionLayer, CompressionLevel};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa::OpenApi as _;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use error::HiddenInternalError;
pub use state::{AppState, HttpConfig, Shared};

/// Largest request body accepted (DESIGN §9).
pub const MAX_BODY_BYTES: usize = 1 << 20;
const REQUEST_ID: &str = "x-request-id";

/// The data routes, by what they cost against the quota: the unread
/// count a page polls and the usage 0 (authenticated and tier-checked,
/// never refused for an exhausted quota), everything else 1,
/// the backtest 5, its Monte Carlo 10, the sweep and walk-forward 1 per
/// combination and at least 5 (priced by their body before the guard:
/// [`research::price`]); the last three under one of the user's
/// concurrent-backtest slots. The API serves them behind a Bearer key
/// ([`bearer_routes`]), the web application behind its session
/// ([`web_data_routes`]).
fn data_groups() -> [DataGroup; 5] {
    [
        DataGroup {
            routes: alerts::free_router()
                .merge(usage::router())
                .merge(progress::router()),
            cost: 0,
            concurrency: guard::Concurrency::Unbounded,
            priced: false,
            kept: false,
        },
        DataGroup {
            routes: OpenApiRouter::new()
                .merge(assets::router())
                .merge(analysis::router())
                .merge(ranking::router())
                .merge(backtest::listing_router())
                .merge(strategies::manage_router())
                .merge(alerts::router()),
            cost: 1,
            concurrency: guard::Concurrency::Unbounded,
            priced: false,
            kept: false,
        },
        DataGroup {
            routes: backtest::router(),
            cost: 5,
            concurrency: guard::Concurrency::Backtest,
            priced: false,
            kept: true,
        },
        DataGroup {
            routes: backtest::monte_carlo_router(),
            cost: 10,
            concurrency: guard::Concurrency::Backtest,
            priced: false,
            kept: true,
        },
        DataGroup {
            routes: research::router(),
            cost: forecast_api::research::MIN_COST,
            concurrency: guard::Concurrency::Backtest,
            priced: true,
            kept: true,
        },
    ]
}

/// Routes that share a cost and a concurrency rule.
struct DataGroup {
    routes: OpenApiRouter<AppState>,
    /// Quota units per call (the least, when `priced`).
    cost: u32,
    concurrency: guard::Concurrency,
    /// Whether the body prices each call ([`research::price`]).
    priced: bool,
    /// Whether its answers are kept for free downloads ([`recall`]).
    kept: bool,
}

impl DataGroup {
    /// The group behind its guard (the session's for the web app, else the
    /// Bearer key's), priced by its body first when it is, all documented.
    fn guarded(self, state: &AppState, web: bool) -> OpenApiRouter<AppState> {
        let guard_state = (state.clone(), guard::Cost(self.cost), self.concurrency);
        let mut routes = match web {
            false => self
                .routes
                .route_layer(middleware::from_fn_with_state(guard_state, guard::bearer)),
            true => self
                .routes
                .route_layer(middleware::from_fn_with_state(guard_state, guard::session)),
        };
        // Run before the guard, the price first: a recalled download's
        // price of 0 replaces the body's.
        if self.kept {
            routes = routes.route_layer(middleware::from_fn_with_state(
                state.results.clone(),
                recall::recall,
            ));
        }
        if self.priced {
            routes = routes.route_layer(middleware::from_fn(research::price));
        }
        let doc = routes.get_openapi_mut();
        match web {
            false => docs::metered(doc, self.cost),
            true => docs::web_metered(doc, self.cost),
        }
        if self.priced {
            docs::priced(doc, research::COST_RULE);
        }
        if self.concurrency == guard::Concurrency::Backtest {
            docs::backtest_bounds(doc);
        }
        if self.kept {
            docs::recalled(doc);
        }
        routes
    }
}

/// The routes that require a Premium Bearer key. The guard and its
/// documentation are applied together.
fn bearer_routes(state: &AppState) -> OpenApiRouter<AppState> {
    let mut all = OpenApiRouter::new();
    for group in data_groups() {
        all = all.merge(group.guarded(state, false));
    }
    all
}

/// The web application's reads of the same data: each data route again
/// under `/web` (`/web/api/analysis/{ticker}`, …), authenticated by the
/// session cookie instead of a key, with the same handlers, the same
/// Premium rule and the same per-user quota. `/api/*` itself keeps the
/// spec's contract: Bearer keys only.
fn web_data_routes(state: &AppState) -> OpenApiRouter<AppState> {
    let mut all = OpenApiRouter::new();
    for group in data_groups() {
        all = all.merge(group.guarded(state, true));
    }
    OpenApiRouter::new().nest("/web", all)
}

/// `POST /api/strategies` behind a Premium Bearer key and its `/web/api`
/// twin behind the session, each at a cost of 5 like a backtest, with their
/// own body limit (components are larger than API bodies).
fn upload_routes(state: &AppState) -> OpenApiRouter<AppState> {
    let cost = guard::Cost(5);
    let mut bearer = strategies::upload_router().route_layer(middleware::from_fn_with_state(
        (state.clone(), cost, guard::Concurrency::Unbounded),
        guard::bearer,
    ));
    docs::metered(bearer.get_openapi_mut(), cost.0);
    let mut web = strategies::upload_router().route_layer(middleware::from_fn_with_state(
        (state.clone(), cost, guard::Concurrency::Unbounded),
        guard::session,
    ));
    docs::web_metered(web.get_openapi_mut(), cost.0);
    bearer
        .merge(OpenApiRouter::new().nest("/web", web))
        .layer(RequestBodyLimitLayer::new(
            forecast_research::authored::MAX_UPLOAD_BYTES,
        ))
}

/// The routes authenticated by the web session cookie (and `/auth/login`,
/// which starts one).
fn session_routes() -> OpenApiRouter<AppState> {
    let mut routes = OpenApiRouter::new()
        .merge(session::router())
        .merge(keys::router())
        .merge(matcher::router())
        .merge(watchlist::router());
    docs::session(routes.get_openapi_mut());
    routes
}

/// Every route of the service with its OpenAPI description. Routes are
/// only ever added through utoipa-axum's `routes!`, so none can exist
/// undocumented (a test walks the router against the document).
pub fn api(state: &AppState) -> OpenApiRouter<AppState> {
    // Every body is limited to 1 MiB except the admin API's component
    // uploads (64 MiB, behind the admin token).
    let limited = OpenApiRouter::with_openapi(docs::ApiDoc::openapi())
        .routes(routes!(health::health))
        .routes(routes!(docs::openapi))
        .merge(session_routes())
        .merge(bearer_routes(state))
        .merge(web_data_routes(state))
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES));
    let all = limited
        .merge(admin::router(state))
        .merge(upload_routes(state));
    // With FORECAST_METRICS_ADDR, /metrics is served on that listener
    // only (`metrics::private_router`).
    if state.config.metrics_on_main {
        all.merge(metrics::router(state))
    } else {
        all
    }
}

/// The whole service.
pub fn router(state: AppState) -> Router {
    let (routes, mut doc) = api(&state).split_for_parts();
    docs::exports(&mut doc, &export::EXPORTS);
    docs::flatten_extended_bodies(&mut doc);
    let doc = docs::Document(axum::body::Bytes::from(
        doc.to_json().expect("the OpenAPI document serialises"),
    ));
    let request_id = axum::http::HeaderName::from_static(REQUEST_ID);
    let deadlines = limits::Deadlines {
        request: state.config.request_timeout,
        body: state.config.body_timeout,
    };
    let trusted = state.config.trusted_proxies.clone();
    routes
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            clients::limit,
        ))
        .with_state(state)
        .layer(Extension(doc))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(middleware::from_fn_with_state(deadlines, limits::deadlines))
        .layer(middleware::from_fn(json_errors))
        // Outside `json_errors`, which may replace a body: br or gzip as the
        // client accepts (br first), for bodies over 32 bytes that are not
        // images or event streams; identity otherwise.
        .layer(compression())
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request| {
            let id = req
                .headers()
                .get(REQUEST_ID)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-");
            let client = clients::client_ip(req.extensions());
            tracing::info_span!(
                "request",
                method = %req.method(),
                uri = %req.uri().path(),
                request_id = %id,
                client = %client,
                user_id = tracing::field::Empty,
            )
        }))
        // Outside the span, which names the client it decides.
        .layer(middleware::from_fn_with_state(trusted, clients::resolve))
        .layer(PropagateRequestIdLayer::new(request_id.clone()))
        .layer(SetRequestIdLayer::new(request_id, MakeRequestUuid))
        // Every answer (JSON, errors, the web app's pages and files):
        // browsers take its Content-Type as given, never a sniffed one.
        .layer(middleware::from_fn(nosniff))
        // Outermost, so it counts every answer as sent; `Router::layer`
        // wraps each route, after routing, so `MatchedPath` is known.
        .layer(middleware::from_fn(metrics::track))
}

/// `X-Content-Type-Options: nosniff` on every answer.
async fn nosniff(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    response
        .headers_mut()
        .entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    response
}

/// Brotli quality and gzip level of answers, compressed as they are sent.
/// Brotli's default (11) takes seconds over a long analysis; measured on the
/// 3.99 MB analysis of ^GSPC (issue 24), quality 3 gives 1.39 MB in 65 ms
/// where 4 gives 1.28 MB in 250 ms, and both about 360 kB of its 0.88 MB
/// drawing form (`max_points=1500`).
pub const COMPRESSION_QUALITY: i32 = 3;

/// Response compression: br and gzip, negotiated by `Accept-Encoding`.
fn compression() -> CompressionLayer {
    CompressionLayer::new()
        .br(true)
        .gzip(true)
        .no_deflate()
        .no_zstd()
        .quality(CompressionLevel::Precise(COMPRESSION_QUALITY))
}

/// A JSON answer kept in memory: compressed once with brotli for a client
/// that offers `br` (sent as is, so the compression layer leaves it),
/// else plain (which the layer may still gzip).
pub(crate) fn kept_json(
    headers: &axum::http::HeaderMap,
    body: &forecast_services::served::Body,
) -> Response {
    use axum::http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE, VARY};
    let json = (CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let vary = (VARY, HeaderValue::from_static("accept-encoding"));
    let brotli = headers
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|offer| {
            let mut parts = offer.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let weight = parts
                .find_map(|p| p.strip_prefix("q="))
                .and_then(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            name.eq_ignore_ascii_case("br") && weight > 0.0
        });
    if brotli {
        let br = (CONTENT_ENCODING, HeaderValue::from_static("br"));
        return ([json, br, vary], body.brotli()).into_response();
    }
    ([json, vary], body.plain()).into_response()
}

/// Records the authenticated user on the request's span (`user_id`, empty
/// until a guard knows it), so that every line logged below it, down to
/// the guests' own, says whose request it was.
pub(crate) fn record_user(user: &forecast_domain::User) {
    tracing::Span::current().record("user_id", tracing::field::display(&user.id));
}

/// Paths no route claims: the web application's pages and files, else a
/// JSON 404.
async fn not_found(req: Request) -> Response {
    if let Some(response) = web_app::serve(req.method(), req.uri().path(), req.headers()) {
        return response;
    }
    (
        StatusCode::NOT_FOUND,
        Json(json!({ "detail": format!("no route for {} {}", req.method(), req.uri().path()) })),
    )
        .into_response()
}

pub(crate) async fn method_not_allowed(req: Request) -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        Json(json!({ "detail": format!("method {} is not allowed on {}", req.method(), req.uri().path()) })),
    )
        .into_response()
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("handler panicked");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        Json(json!({ "detail": "internal server error" })),
    )
        .into_response()
}

/// Makes every error response `{detail}` JSON: rewrites bodies produced by
/// layers outside our control (413 from the body limit, …) and adds the
/// request id to hidden 500s so operators can find the logged cause.
async fn json_errors(req: Request, next: Next) -> Response {
    // The admin API's and the strategy uploads have their own, larger,
    // body limits.
    let admin_path = req.uri().path().starts_with("/api/admin/");
    let upload_path = strategies::is_upload_path(req.uri().path());
    let request_id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_string();
    let response = next.run(req).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    if response.extensions().get::<web_app::AppShell>().is_some() {
        return response;
    }
    if response.extensions().get::<HiddenInternalError>().is_some() {
        let detail = format!("internal server error (request id {request_id})");
        return (status, Json(json!({ "detail": detail }))).into_response();
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json {
        return response;
    }
    let detail = match status {
        StatusCode::PAYLOAD_TOO_LARGE => {
            let limit = if admin_path {
                admin::MAX_UPLOAD_BYTES
            } else if upload_path {
                forecast_research::authored::MAX_UPLOAD_BYTES
            } else {
                MAX_BODY_BYTES
            };
            format!(
                "request body larger than {} (the limit of this route)",
                size(limit)
            )
        }
        other => other.canonical_reason().unwrap_or("error").to_string(),
    };
    let (mut parts, _) = response.into_parts();
    let body = serde_json::to_vec(&json!({ "detail": detail })).expect("json");
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// A byte count as people read it: `64 MiB (67,108,864 bytes)`.
fn size(bytes: usize) -> String {
    let mut grouped = String::new();
    let digits = bytes.to_string();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB ({grouped} bytes)", bytes >> 20)
    } else {
        format!("{grouped} bytes")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(super::size(1 << 20), "1 MiB (1,048,576 bytes)");
        assert_eq!(super::size(64 << 20), "64 MiB (67,108,864 bytes)");
        assert_eq!(super::size(999), "999 bytes");
    }
}
