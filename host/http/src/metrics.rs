//! `GET /metrics` (issue 14): the process's metrics in the Prometheus text
//! format. Every layer records through the `metrics` facade; the recorder
//! is metrics-exporter-prometheus's, installed once per process
//! ([`install`]) and rendered from its handle at each scrape (the
//! exporter's own listener is not used).
//!
//! On the main address `/metrics` is behind the admin token, exactly as
//! `/api/admin/*` (same guard: 403 when `FORECAST_ADMIN_TOKEN` is unset,
//! 401 for a wrong token, wrong tokens throttled per address). With
//! `FORECAST_METRICS_ADDR` it moves to a listener of its own
//! ([`private_router`]), without a token, and the main address no longer
//! has the route.
//!
//! Every label is bounded: routes are the router's templates
//! (`MatchedPath`, never the raw path; `unmatched` for the fallback), the
//! method is one of the standard ones or `other`, plugins are what the
//! registry holds. The series are listed in [`describe`] and
//! docs/OPERATIONS.md ("Metrics").

use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use serde_json::json;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;

/// Histogram buckets of every `*_seconds` series: from a cached verdict
/// (milliseconds) to a grading run (many minutes).
const BUCKETS: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 600.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process's recorder (once; later calls return the same
/// handle) and describes the series.
pub fn install() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let builder = || {
            PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &BUCKETS)
                .expect("non-empty buckets")
        };
        let handle = match builder().install_recorder() {
            Ok(handle) => handle,
            Err(e) => {
                // Another recorder owns the process (an embedding program):
                // serve an empty exposition rather than fail.
                tracing::warn!(error = %e, "a metrics recorder is already installed");
                builder().build_recorder().handle()
            }
        };
        describe();
        handle
    })
}

/// Drains the histograms' recent samples (run periodically so memory does
/// not grow between scrapes).
pub fn upkeep() {
    install().run_upkeep();
}

/// Every series, with its help text and unit.
fn describe() {
    describe_counter!(
        "forecast_http_requests_total",
        "HTTP requests answered, by method, route template and status"
    );
    describe_histogram!(
        "forecast_http_request_duration_seconds",
        Unit::Seconds,
        "Time to the response head, by method, route template and status"
    );
    describe_counter!(
        "forecast_quota_rejections_total",
        "Requests refused with 429, by reason: key_quota, client_limit, login_limit, admin_token, match_limit"
    );
    describe_counter!(
        "forecast_plugin_calls_total",
        "Plugin calls by plugin (kind/name), version and outcome: ok, trap, timeout, out_of_memory, error"
    );
    describe_histogram!(
        "forecast_plugin_call_duration_seconds",
        Unit::Seconds,
        "Duration of plugin calls, by plugin and version"
    );
    describe_gauge!(
        "forecast_grading_assets_done",
        "Assets graded by this process in the current (or last) grading run"
    );
    describe_gauge!(
        "forecast_grading_assets_total",
        "Assets of the current (or last) grading run"
    );
    describe_histogram!(
        "forecast_grading_run_duration_seconds",
        Unit::Seconds,
        "Time this process worked on a grading run"
    );
    describe_counter!(
        "forecast_cache_lookups_total",
        "Lookups of the result caches by cache (analysis, verdict, track_record) and result (hit, miss)"
    );
    describe_gauge!(
        "forecast_signal_cache_bytes",
        Unit::Bytes,
        "Memory held by the backtests' walk-forward signal cache"
    );
    describe_gauge!(
        "forecast_heavy_work_running",
        "Heavy jobs (live analyses and verdicts, backtests, compilations) holding a ticket of the work budget"
    );
    describe_gauge!(
        "forecast_heavy_work_bytes",
        Unit::Bytes,
        "Memory the running heavy jobs hold by their estimates"
    );
    describe_gauge!(
        "forecast_heavy_work_waiting",
        "Heavy jobs waiting for their turn"
    );
    describe_counter!(
        "forecast_heavy_work_refused_total",
        "Heavy jobs refused with 503 before any work, by work (analysis, verdict, backtest, compile, track_record)"
    );
    describe_gauge!("forecast_open_connections", "Open HTTP connections");
    describe_gauge!(
        "forecast_http_requests_in_flight",
        "Requests whose head was read and whose answer is not yet sent (a scrape counts itself)"
    );
    describe_counter!(
        "forecast_connections_refused_total",
        "Connections answered 503 (or closed) by reason: cap (the connection cap was reached), client_share (the client address held its share)"
    );
    describe_counter!(
        "forecast_connections_closed_total",
        "Connections closed by the server, by reason: header_timeout, idle_timeout, request_timeout, stalled_response, shutdown"
    );
    describe_counter!(
        "forecast_accept_errors_total",
        "Failed accepts (e.g. out of file descriptors)"
    );
    describe_gauge!(
        "forecast_process_resident_memory_bytes",
        Unit::Bytes,
        "Resident memory of the process (/proc/self/statm at scrape time)"
    );
}

/// The middleware counting every request by route template, method and
/// status. Applied with `Router::layer`, so it runs after routing and sees
/// `MatchedPath`.
pub async fn track(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let _in_flight = Held::new("forecast_http_requests_in_flight");
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = method_label(req.method());
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    metrics::counter!(
        "forecast_http_requests_total",
        "method" => method,
        "route" => route.clone(),
        "status" => status.clone()
    )
    .increment(1);
    metrics::histogram!(
        "forecast_http_request_duration_seconds",
        "method" => method,
        "route" => route,
        "status" => status
    )
    .record(started.elapsed().as_secs_f64());
    response
}

/// One unit of the gauge `name` while alive, given back when dropped (also
/// when a future holding it is dropped part way, as on a closed
/// connection): requests in flight here, open connections in the server.
pub struct Held(&'static str);

impl Held {
    /// Adds one to the gauge `name`.
    pub fn new(name: &'static str) -> Self {
        metrics::gauge!(name).increment(1.0);
        Held(name)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        metrics::gauge!(self.0).decrement(1.0);
    }
}

/// A method as a label: the standard ones, else `other` (extension
/// methods are unbounded).
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// Resident memory in bytes: pages from `/proc/self/statm` (its second
/// field) times the page size. `None` off Linux.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value; it has no
    // preconditions and touches no memory of ours.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok().filter(|p| *p > 0)?)
}

/// The exposition: gauges read at scrape time are set first.
fn render(state: &AppState) -> Response {
    metrics::gauge!("forecast_signal_cache_bytes").set(state.backtests.signal_cache_bytes() as f64);
    if let Some(rss) = resident_bytes() {
        metrics::gauge!("forecast_process_resident_memory_bytes").set(rss as f64);
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        install().render(),
    )
        .into_response()
}

/// The process's metrics.
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    summary = "The process's metrics (Prometheus text format), for operators",
    description = "Request counts and latencies by route template, 429s by reason, plugin calls by plugin, version and outcome, grading progress, cache hits and misses, the signal cache's size, open connections and resident memory. Needs the admin token. When the server runs with FORECAST_METRICS_ADDR, this route is served there instead (without a token) and not on this address.",
    responses((status = 200, description = "Prometheus text exposition format 0.0.4", content_type = "text/plain", body = String))
)]
pub async fn metrics(State(state): State<AppState>) -> Response {
    render(&state)
}

/// `/metrics` on the main address, behind the admin token.
pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    let mut routes =
        OpenApiRouter::new()
            .routes(routes!(metrics))
            .route_layer(middleware::from_fn_with_state(
                state.clone(),
                crate::admin::guard,
            ));
    crate::docs::metrics(routes.get_openapi_mut());
    routes
}

/// The listener of its own at `FORECAST_METRICS_ADDR`: `/metrics` without
/// a token, and a JSON 404 for anything else. Bind it to a private
/// interface.
pub fn private_router(state: AppState) -> Router {
    let (routes, _) = OpenApiRouter::new()
        .routes(routes!(metrics))
        .split_for_parts();
    routes
        .fallback(|req: Request| async move {
            (
                StatusCode::NOT_FOUND,
                Json(json!({ "detail": format!("no route for {} {}", req.method(), req.uri().path()) })),
            )
        })
        .method_not_allowed_fallback(crate::method_not_allowed)
        .with_state(state)
        .layer(middleware::from_fn(track))
}
