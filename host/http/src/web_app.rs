//! The web application's files (issue 13), served by the router's
//! fallback: `GET`/`HEAD` of a page path answers the page shell
//! (`index.html`, never cached: it names the current build's files), of a
//! `/static/…` path the hashed file (cached for ever, with an ETag). An
//! unknown path a browser navigates to (it accepts HTML) gets the shell with
//! 404, whose router draws "Page not found"; any other path is left to the
//! API's JSON 404.

use axum::body::Body;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG, IF_NONE_MATCH, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use forecast_web::WebFile;

/// Everything the application loads is its own: scripts, styles, data.
/// Inline style attributes stay allowed for the chart library's layout.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
    img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; \
    form-action 'self'; frame-ancestors 'none'";

/// The response for `path` if it is one of the application's, else `None`.
pub fn serve(method: &Method, path: &str, headers: &HeaderMap) -> Option<Response> {
    if method != Method::GET && method != Method::HEAD {
        return None;
    }
    let file = if let Some(file) = forecast_web::static_file(path) {
        file
    } else if let Some(file) = forecast_web::root_file(path) {
        file
    } else if forecast_web::is_page(path) {
        match forecast_web::index() {
            Some(file) => file,
            None => {
                return Some(
                    ApiError::Unavailable(
                        "the web application is not built into this binary: run `make build`"
                            .into(),
                    )
                    .into_response(),
                )
            }
        }
    } else if wants_page(path, headers) {
        // A browser asking for a page that does not exist: the shell, whose
        // router draws "Page not found" with links back, answered 404.
        let file = forecast_web::index()?;
        let mut response = respond(file, &HeaderMap::new(), method == Method::HEAD);
        *response.status_mut() = StatusCode::NOT_FOUND;
        response.extensions_mut().insert(AppShell);
        return Some(response);
    } else {
        return None;
    };
    Some(respond(file, headers, method == Method::HEAD))
}

/// Marks the app's own not-found page, an HTML 404 that the JSON error
/// layer lets through.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AppShell;

/// Whether an unknown `path` is a browser navigation (it accepts HTML)
/// outside the API's, the session routes' and the built files' prefixes,
/// which keep their JSON 404s.
fn wants_page(path: &str, headers: &HeaderMap) -> bool {
    const NOT_PAGES: [&str; 6] = ["/api", "/web", "/auth", "/metrics", "/static", "/favicon"];
    let html = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"));
    html && !NOT_PAGES.iter().any(|p| {
        path == *p || path.starts_with(&format!("{p}/")) || path.starts_with(&format!("{p}."))
    })
}

fn respond(file: WebFile, headers: &HeaderMap, head: bool) -> Response {
    let cache = if file.immutable {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let fresh = headers
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == file.etag));
    let (status, body) = if fresh {
        (StatusCode::NOT_MODIFIED, Body::empty())
    } else if head {
        (StatusCode::OK, Body::empty())
    } else {
        (StatusCode::OK, Body::from(file.bytes))
    };
    let mut response = (status, body).into_response();
    let h = response.headers_mut();
    if let Ok(mime) = HeaderValue::from_str(&file.mime) {
        h.insert(CONTENT_TYPE, mime);
    }
    if let Ok(etag) = HeaderValue::from_str(&file.etag) {
        h.insert(ETAG, etag);
    }
    h.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    h.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    response
}
