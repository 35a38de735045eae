//! The OpenAPI 3.1 document, generated: every route is registered with
//! utoipa-axum's `routes!`, which takes its path, parameters, bodies and
//! responses from the handler's `#[utoipa::path]` and the wire types of
//! `forecast-api` (bounds, enums, formats included). What a route *group*
//! adds — the Bearer guard and its quota, the session cookie, the admin
//! token — is documented by the same function that applies it
//! ([`metered`], [`session`], [`admin`]), so the document cannot claim a
//! guard a route does not have, nor miss one it has.
//!
//! `GET /api/openapi.json` serves the document built together with the
//! router (see `crate::router`).

use axum::response::IntoResponse;
use axum::Extension;
use forecast_api::ErrorBody;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{Content, OpenApi, RefOr};
use utoipa::{Modify, ToSchema};

/// Security scheme of the Premium API keys.
pub const BEARER: &str = "bearerKey";
/// Security scheme of the web session.
pub const SESSION: &str = "sessionCookie";
/// Security scheme of the admin API.
pub const ADMIN: &str = "adminToken";

/// The document's fixed parts; the paths come from the router.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Forecast Engine API",
        version = "1.0.0",
        description = "Drawdown-segmented forecasts of listed assets. All return-like fields are fractions (0.05 = +5 %). Every error is JSON {detail}. API routes need `Authorization: Bearer svc_…` of a Premium user and are metered per user: by default 60 units a UTC minute and 1,000 a UTC day (a call costs `x-quota-cost` units); every metered response carries X-RateLimit-* headers. Key management and the ticker matcher use the web session cookie from POST /auth/login. Output is informational only and is not financial advice. Demo assets whose data_source is `synthetic` carry generated prices, not market data."
    ),
    servers((url = "/")),
    components(schemas(ErrorBody)),
    modifiers(&SecuritySchemes)
)]
pub struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, doc: &mut OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        let mut bearer = HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build();
        bearer.description = Some("svc_ + 64 hex digits, of a Premium user".into());
        components.add_security_scheme(BEARER, SecurityScheme::Http(bearer));
        components.add_security_scheme(
            SESSION,
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(
                forecast_services::auth::SESSION_COOKIE,
            ))),
        );
        let mut admin = HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build();
        admin.description = Some(
            "FORECAST_ADMIN_TOKEN of the server (never a user's key); the admin API answers 403 when it is unset"
                .into(),
        );
        components.add_security_scheme(ADMIN, SecurityScheme::Http(admin));
    }
}

/// An error response: `{detail}` with what it means here.
pub fn error(description: &str) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            Content::new(Some(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
                ErrorBody::name(),
            )))),
        )
        .build()
}

fn integer_header(description: &str) -> utoipa::openapi::header::Header {
    HeaderBuilder::new()
        .schema(ObjectBuilder::new().schema_type(Type::Integer))
        .description(Some(description))
        .build()
}

fn rate_headers(mut response: Response) -> Response {
    for (name, description) in [
        ("X-RateLimit-Limit", "Units allowed in the binding window (the one with the least remaining; the violated one on 429)."),
        ("X-RateLimit-Remaining", "Units left in that window."),
        ("X-RateLimit-Reset", "Unix epoch seconds (UTC) when that window ends."),
    ] {
        response
            .headers
            .insert(name.to_string(), integer_header(description));
    }
    response
}

/// Every operation of `doc`.
fn operations(doc: &mut OpenApi) -> impl Iterator<Item = &mut Operation> {
    doc.paths.paths.values_mut().flat_map(|item| {
        [
            item.get.as_mut(),
            item.put.as_mut(),
            item.post.as_mut(),
            item.delete.as_mut(),
            item.patch.as_mut(),
        ]
        .into_iter()
        .flatten()
    })
}

fn respond(op: &mut Operation, status: &str, response: Response) {
    op.responses
        .responses
        .insert(status.to_string(), RefOr::T(response));
}

/// The request bodies that extend `BacktestRequest` (`SweepRequest`,
/// `WalkForwardRequest`, `MonteCarloRequest`) as one object each: the
/// backtest's properties and their own, unknown properties refused. As
/// generated they are an `allOf` of `BacktestRequest` (which refuses every
/// property it does not name) and an object of their own fields, which no
/// body can satisfy once an own field is required (the sweep's `sweep`).
pub fn flatten_extended_bodies(doc: &mut OpenApi) {
    use utoipa::openapi::schema::Schema;
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    let schemas = &mut components.schemas;
    let Some(RefOr::T(Schema::Object(base))) = schemas.get("BacktestRequest").cloned() else {
        return;
    };
    // Each body's own object, and the body it extends besides the backtest.
    let own = |schemas: &std::collections::BTreeMap<String, RefOr<Schema>>, name: &str| {
        let mut found = (None, None);
        if let Some(RefOr::T(Schema::AllOf(all))) = schemas.get(name) {
            for item in &all.items {
                match item {
                    RefOr::T(Schema::Object(o)) => found.0 = Some(o.clone()),
                    RefOr::Ref(r) if !r.ref_location.ends_with("/BacktestRequest") => {
                        found.1 = r.ref_location.rsplit('/').next().map(str::to_string)
                    }
                    _ => {}
                }
            }
        }
        found
    };
    // Read from the document as generated (a flattened body is no longer
    // an `allOf` for the bodies extending it).
    let generated = schemas.clone();
    for name in ["MonteCarloRequest", "SweepRequest", "WalkForwardRequest"] {
        let mut chain = vec![name.to_string()];
        while let (_, Some(parent)) = own(&generated, chain.last().expect("one at least")) {
            chain.push(parent);
        }
        let mut flat = base.clone();
        for link in chain.iter().rev() {
            let (Some(o), _) = own(&generated, link) else {
                continue;
            };
            flat.properties.extend(o.properties);
            flat.required.extend(o.required);
        }
        if let Some(RefOr::T(Schema::AllOf(all))) = generated.get(name) {
            flat.description = all.description.clone();
        }
        schemas.insert(name.to_string(), RefOr::T(Schema::Object(flat)));
    }
}

/// Documents the CSV exports (`crate::export`): on each exportable route
/// and its `/web` twin, the `format` and `table` parameters (the route's
/// tables as an enum) and a `text/csv` body beside the JSON of its 200.
pub fn exports(doc: &mut OpenApi, exports: &[(&str, &[&str], bool)]) {
    use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
    for (path, item) in doc.paths.paths.iter_mut() {
        let bare = path.strip_prefix("/web").unwrap_or(path);
        let Some((_, tables, html)) = exports.iter().find(|(p, _, _)| *p == bare) else {
            continue;
        };
        let formats: &[&str] = match html {
            true => &["json", "csv", "html"],
            false => &["json", "csv"],
        };
        for op in [item.get.as_mut(), item.post.as_mut()]
            .into_iter()
            .flatten()
        {
            let params = op.parameters.get_or_insert_with(Vec::new);
            params.push(
                ParameterBuilder::new()
                    .name("format")
                    .parameter_in(ParameterIn::Query)
                    .description(Some(match html {
                        true => {
                            "`json` (default); `csv` (as `Accept: text/csv`): the table named \
                             by `table` as CSV with a header row; `html`: the run's tear sheet, \
                             one self-contained HTML file (equity against the benchmarks on a \
                             log scale, drawdown, monthly returns, rolling volatility and beta, \
                             metrics) that opens offline"
                        }
                        false => {
                            "`json` (default) or `csv` (as `Accept: text/csv`): the table named \
                             by `table` as CSV with a header row"
                        }
                    }))
                    .schema(Some(
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .enum_values(Some(formats.iter().copied())),
                    ))
                    .build(),
            );
            params.push(
                ParameterBuilder::new()
                    .name("table")
                    .parameter_in(ParameterIn::Query)
                    .description(Some(format!(
                        "With CSV, which table (default `{}`)",
                        tables[0]
                    )))
                    .schema(Some(
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .enum_values(Some(tables.iter().copied())),
                    ))
                    .build(),
            );
            if let Some(RefOr::T(ok)) = op.responses.responses.get_mut("200") {
                ok.content.insert(
                    "text/csv".into(),
                    Content::new(Some(ObjectBuilder::new().schema_type(Type::String))),
                );
                if *html {
                    ok.content.insert(
                        "text/html".into(),
                        Content::new(Some(ObjectBuilder::new().schema_type(Type::String))),
                    );
                }
            }
            respond_if_missing(
                op,
                "400",
                error("A parameter is invalid (including format or table); detail names it"),
            );
        }
    }
}

fn respond_if_missing(op: &mut Operation, status: &str, response: Response) {
    op.responses
        .responses
        .entry(status.to_string())
        .or_insert(RefOr::T(response));
}

/// Documents the Bearer guard at `cost` units on every operation of `doc`:
/// the security requirement, `x-quota-cost`, the rate headers on every
/// response, and the guard's 401, 402, 429 and 503.
pub fn metered(doc: &mut OpenApi, cost: u32) {
    for op in operations(doc) {
        quota(op, cost, BEARER);
        respond(
            op,
            "401",
            error("Missing, malformed, unknown or revoked API key (not counted)"),
        );
    }
}

/// Documents a metered group whose body prices each call: `rule` says how
/// (`x-quota-cost` stays the least a call costs).
pub fn priced(doc: &mut OpenApi, rule: &str) {
    for op in operations(doc) {
        let ext = op.extensions.get_or_insert_with(Default::default);
        ext.merge(
            ExtensionsBuilder::new()
                .add("x-quota-cost-rule", rule)
                .build(),
        );
    }
}

/// Documents the web application's twin of a metered group (the same
/// routes under `/web`, see `crate::web_data_routes`): the session cookie
/// instead of a key, the same quota, the Origin check of state changes,
/// and operation ids prefixed `web` (they must be unique in the document).
pub fn web_metered(doc: &mut OpenApi, cost: u32) {
    for item in doc.paths.paths.values_mut() {
        for (post, op) in [
            (false, item.get.as_mut()),
            (true, item.post.as_mut()),
            (true, item.patch.as_mut()),
            (true, item.delete.as_mut()),
        ] {
            let Some(op) = op else { continue };
            quota(op, cost, SESSION);
            if let Some(id) = op.operation_id.as_mut() {
                let mut chars = id.chars();
                let first = chars.next().map(|c| c.to_ascii_uppercase());
                *id = format!("web{}{}", first.unwrap_or_default(), chars.as_str());
            }
            op.tags = Some(vec!["web".into()]);
            respond(
                op,
                "401",
                error("No valid session, or a Bearer key was sent"),
            );
            if post {
                respond(
                    op,
                    "403",
                    error("Origin missing or not the configured web origin (CSRF)"),
                );
            }
        }
    }
}

/// What every metered operation has, whichever the credential: the
/// security requirement, `x-quota-cost`, the rate headers on every
/// response, 402, 429 and 503.
fn quota(op: &mut Operation, cost: u32, scheme: &str) {
    op.security = Some(vec![SecurityRequirement::new(scheme, Vec::<String>::new())]);
    let ext = op.extensions.get_or_insert_with(Default::default);
    ext.merge(ExtensionsBuilder::new().add("x-quota-cost", cost).build());
    for response in op.responses.responses.values_mut() {
        if let RefOr::T(r) = response {
            *r = rate_headers(std::mem::take(r));
        }
    }
    respond(
        op,
        "402",
        error("The user is not on the Premium tier (not counted)"),
    );
    // A free route (the unread count) is never refused for the quota.
    if cost > 0 {
        let mut limited = rate_headers(error("Quota exhausted"));
        limited
            .headers
            .insert("Retry-After".into(), integer_header("Seconds to wait."));
        respond(op, "429", limited);
    }
    // A route's own 503 (the heavy-work budget) keeps its words after the
    // guard's, and its Retry-After.
    let own = match op.responses.responses.get("503") {
        Some(RefOr::T(r)) => Some(r.description.clone()),
        _ => None,
    };
    let mut busy = rate_headers(error(&match own {
        Some(own) => format!("The quota store is unavailable (the request is refused), or: {own}"),
        None => "The quota store is unavailable: the request is refused".to_string(),
    }));
    busy.headers.insert(
        "Retry-After".into(),
        integer_header("Seconds to wait (when the server was busy)."),
    );
    respond(op, "503", busy);
}

/// Documents the bounds of a backtest route on every operation of `doc`
/// (after [`metered`] or [`web_metered`]): the 429 of the per-user
/// concurrent-backtest limit and the 503 of the server-wide wait for
/// plugin slots, both with `Retry-After`.
pub fn backtest_bounds(doc: &mut OpenApi) {
    for op in operations(doc) {
        let mut limited = rate_headers(error(
            "Quota exhausted, or FORECAST_BACKTESTS_PER_USER (default 1) backtests of this \
             account are already running on this server (then nothing is counted)",
        ));
        limited
            .headers
            .insert("Retry-After".into(), integer_header("Seconds to wait."));
        respond(op, "429", limited);
        let mut busy = rate_headers(error(
            "The quota store is unavailable, or the server's heavy-work budget had no turn \
             for the run within FORECAST_HEAVY_WAIT_MS, or its plugin slots stayed busy for \
             FORECAST_BACKTEST_QUEUE_MS (then Retry-After is set; nothing was computed or \
             charged)",
        ));
        busy.headers.insert(
            "Retry-After".into(),
            integer_header("Seconds to wait (when the server was busy)."),
        );
        respond(op, "503", busy);
    }
}

/// Says on every operation of `doc` that a download of an answer the same
/// key or session just received costs nothing (`crate::recall`).
pub fn recalled(doc: &mut OpenApi) {
    let minutes = crate::recall::KEEP_FOR.as_secs() / 60;
    for op in operations(doc) {
        let text = op.description.get_or_insert_with(String::new);
        text.push_str(&format!(
            " Downloads are free: an export of the same request (format=csv or html, or \
             Accept: text/csv; the same route, body and key or session) within {minutes} \
             minutes of its answer is answered from that answer, costs 0 quota units and \
             needs no backtest slot."
        ));
    }
}

/// Documents the session cookie on every operation of `doc`: its security
/// requirement, its 401, and the Origin check (403) of state changes.
pub fn session(doc: &mut OpenApi) {
    for (path, item) in doc.paths.paths.iter_mut() {
        for (method, op) in [
            ("GET", item.get.as_mut()),
            ("POST", item.post.as_mut()),
            ("PUT", item.put.as_mut()),
            ("DELETE", item.delete.as_mut()),
        ] {
            let Some(op) = op else { continue };
            // Signing in is how a session starts: no cookie needed.
            if path != "/auth/login" {
                op.security = Some(vec![SecurityRequirement::new(
                    SESSION,
                    Vec::<String>::new(),
                )]);
                respond(
                    op,
                    "401",
                    error("No valid session, or a Bearer key was sent"),
                );
            }
            if method != "GET" {
                respond(
                    op,
                    "403",
                    error("Origin missing or not the configured web origin (CSRF)"),
                );
            }
        }
    }
}

/// Documents the admin token on every operation of `doc`.
pub fn admin(doc: &mut OpenApi) {
    for op in operations(doc) {
        op.security = Some(vec![SecurityRequirement::new(ADMIN, Vec::<String>::new())]);
        op.tags = Some(vec!["admin".into()]);
        respond(op, "401", error("Missing or invalid admin token"));
        respond(
            op,
            "403",
            error("The admin API is disabled (FORECAST_ADMIN_TOKEN unset)"),
        );
    }
}

/// Documents `/metrics` on the main address: the admin token, as the
/// admin API (the same guard, throttle included).
pub fn metrics(doc: &mut OpenApi) {
    for op in operations(doc) {
        op.security = Some(vec![SecurityRequirement::new(ADMIN, Vec::<String>::new())]);
        op.tags = Some(vec!["metrics".into()]);
        respond(op, "401", error("Missing or invalid admin token"));
        respond(
            op,
            "403",
            error("Disabled: FORECAST_ADMIN_TOKEN is unset on the server"),
        );
        let mut throttled = error("Too many wrong admin tokens from this address");
        throttled
            .headers
            .insert("Retry-After".into(), integer_header("Seconds to wait."));
        respond(op, "429", throttled);
    }
}

/// The document, serialised once when the router is built (cloning it per
/// request only bumps a reference count).
#[derive(Clone)]
pub struct Document(pub axum::body::Bytes);

/// This document.
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    operation_id = "openapi",
    summary = "This document",
    responses((status = 200, description = "OpenAPI 3.1 document", content_type = "application/json", body = Object))
)]
pub async fn openapi(Extension(doc): Extension<Document>) -> impl IntoResponse {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        doc.0,
    )
}
