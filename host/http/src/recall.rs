//! Downloads of a result the same session or key just computed are not
//! charged again. A backtest, Monte Carlo, sweep or walk-forward answer is
//! kept for [`KEEP_FOR`] under its request (credential, route and the
//! body's canonical JSON, hashed); an export of the same request
//! (`format=csv|html`, `Accept: text/csv`) within that time is answered from
//! it at cost 0 and without a backtest slot. Anything else runs and is
//! charged as before.
//!
//! Bounded: at most [`MAX_BYTES`] of answers for the whole server (the
//! least recently used go first), none over [`MAX_ENTRY_BYTES`]. A key is
//! a SHA-256 that includes the credential's hash, so a request can only
//! recall what its own session or key computed, and the guard still
//! authenticates it (a revoked key or a signed-out session recalls nothing).

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{ACCEPT, AUTHORIZATION};
use axum::middleware::Next;
use axum::response::Response;
use axum::Extension;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::error::ApiError;
use super::guard::Priced;

/// How long an answer is kept.
pub const KEEP_FOR: Duration = Duration::from_secs(15 * 60);
/// Answers kept at most, in bytes of JSON, for the whole server.
pub const MAX_BYTES: u64 = 64 << 20;
/// An answer larger than this is not kept (its downloads are charged).
pub const MAX_ENTRY_BYTES: usize = 16 << 20;

/// A kept answer, with its size as JSON.
#[derive(Clone)]
struct Kept {
    bytes: u32,
    value: Arc<dyn Any + Send + Sync>,
}

/// Answers by request key.
pub struct Results(moka::sync::Cache<[u8; 32], Kept>);

impl Default for Results {
    fn default() -> Self {
        Results(
            moka::sync::Cache::builder()
                .max_capacity(MAX_BYTES)
                .weigher(|_, v: &Kept| v.bytes)
                .time_to_live(KEEP_FOR)
                .build(),
        )
    }
}

impl Results {
    /// Keeps `value`, the answer to the request of `key`, unless its JSON
    /// is over [`MAX_ENTRY_BYTES`].
    fn keep<T: Serialize + Send + Sync + 'static>(&self, key: RequestKey, value: T) {
        let mut counter = Counter(0);
        if serde_json::to_writer(&mut counter, &value).is_err() || counter.0 > MAX_ENTRY_BYTES {
            return;
        }
        let bytes = u32::try_from(counter.0).unwrap_or(u32::MAX);
        self.0.insert(
            key.0,
            Kept {
                bytes,
                value: Arc::new(value),
            },
        );
    }
}

/// A writer that only counts bytes.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The answer to a kept route's request: recalled when the request was
/// recalled (nothing runs), else `run`'s, kept for a later download.
pub(crate) async fn answer<T, F>(
    results: &Results,
    key: Option<Extension<RequestKey>>,
    recalled: Option<Extension<Recalled>>,
    run: F,
) -> Result<T, ApiError>
where
    T: Clone + Serialize + Send + Sync + 'static,
    F: std::future::Future<Output = Result<T, ApiError>>,
{
    if let Some(Extension(Recalled(value))) = recalled {
        if let Some(value) = value.downcast_ref::<T>() {
            return Ok(value.clone());
        }
    }
    let value = run.await?;
    if let Some(Extension(key)) = key {
        results.keep(key, value.clone());
    }
    Ok(value)
}

/// The key of a request to a kept route: set by [`recall`] on every such
/// request, so the handler can keep its answer.
#[derive(Debug, Clone, Copy)]
pub struct RequestKey(pub [u8; 32]);

/// The kept answer an export request is answered from (cost 0, no slot).
#[derive(Clone)]
pub struct Recalled(Arc<dyn Any + Send + Sync>);

/// Before the guard, on the kept routes: the request's key, and for an
/// export whose request was answered within [`KEEP_FOR`], the answer and
/// a price of 0. The body is bounded by the server's body limit and put
/// back unchanged.
pub async fn recall(
    axum::extract::State(results): axum::extract::State<Arc<Results>>,
    req: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = req.into_parts();
    let bytes = match super::extract::buffered_body(body).await {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    if let Some(key) = request_key(&parts, &bytes) {
        if is_export(&parts) {
            if let Some(kept) = results.0.get(&key.0) {
                parts.extensions.insert(Priced(0));
                parts.extensions.insert(Recalled(kept.value));
            }
        }
        parts.extensions.insert(key);
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Whether the request asks for a CSV table or the tear sheet.
fn is_export(parts: &axum::http::request::Parts) -> bool {
    let query = parts.uri.query().unwrap_or("");
    let format = url_format(query);
    match format.as_deref() {
        Some("csv" | "html") => true,
        Some(_) => false,
        None => parts
            .headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.split(',').any(|m| m.trim().starts_with("text/csv"))),
    }
}

/// The query's `format`, if any.
fn url_format(query: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "format")
        .map(|(_, v)| v.to_ascii_lowercase())
}

/// SHA-256 of the credential's hash, the path and the body's canonical
/// JSON; `None` without a credential or a JSON body (the handler refuses
/// those).
fn request_key(parts: &axum::http::request::Parts, body: &[u8]) -> Option<RequestKey> {
    let credential: [u8; 32] = match parts.headers.get(AUTHORIZATION) {
        Some(v) => Sha256::digest(v.as_bytes()).into(),
        None => Sha256::digest(super::session::session_token(&parts.headers)?.as_bytes()).into(),
    };
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let mut canonical = Vec::with_capacity(body.len());
    write_canonical(&value, &mut canonical);
    let mut h = Sha256::new();
    h.update(credential);
    h.update(parts.uri.path().as_bytes());
    h.update([0]);
    h.update(&canonical);
    Some(RequestKey(h.finalize().into()))
}

/// `v` as JSON with every object's keys sorted, so two spellings of one
/// request share a key.
fn write_canonical(v: &serde_json::Value, out: &mut Vec<u8>) {
    match v {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend(serde_json::to_vec(k).unwrap_or_default());
                out.push(b':');
                write_canonical(&map[k], out);
            }
            out.push(b'}');
        }
        serde_json::Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        other => out.extend(serde_json::to_vec(other).unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request as HttpRequest;

    fn parts(path: &str, auth: &str) -> axum::http::request::Parts {
        HttpRequest::post(path)
            .header(AUTHORIZATION, auth)
            .body(())
            .unwrap()
            .into_parts()
            .0
    }

    #[test]
    fn a_request_key_is_its_credential_route_and_canonical_body() {
        let key =
            |path, auth, body: &str| request_key(&parts(path, auth), body.as_bytes()).unwrap().0;
        let a = key(
            "/api/backtest",
            "Bearer k1",
            r#"{"a": 1, "b": [1, {"y": 2, "x": 1}]}"#,
        );
        let same = key(
            "/api/backtest",
            "Bearer k1",
            r#"{"b":[1,{"x":1,"y":2}],"a":1}"#,
        );
        assert_eq!(a, same, "key order and spacing do not matter");
        assert_ne!(
            a,
            key(
                "/api/backtest",
                "Bearer k2",
                r#"{"a":1,"b":[1,{"x":1,"y":2}]}"#
            )
        );
        assert_ne!(
            a,
            key(
                "/api/backtest/sweep",
                "Bearer k1",
                r#"{"a":1,"b":[1,{"x":1,"y":2}]}"#
            )
        );
        assert_ne!(
            a,
            key(
                "/api/backtest",
                "Bearer k1",
                r#"{"a":1,"b":[{"x":1,"y":2},1]}"#
            )
        );
        assert!(request_key(&parts("/api/backtest", "Bearer k1"), b"not json").is_none());
    }

    #[test]
    fn exports_are_csv_or_html() {
        let export = |uri: &str, accept: Option<&str>| {
            let mut b = HttpRequest::post(uri);
            if let Some(a) = accept {
                b = b.header(ACCEPT, a);
            }
            is_export(&b.body(()).unwrap().into_parts().0)
        };
        assert!(export("/api/backtest?format=csv&table=trades", None));
        assert!(export("/api/backtest?format=html", None));
        assert!(export("/api/backtest", Some("text/csv")));
        assert!(!export("/api/backtest?format=json", Some("text/csv")));
        assert!(!export("/api/backtest", Some("application/json")));
    }

    #[test]
    fn kept_answers_stay_within_their_bounds() {
        let results = Results::default();
        // Over the entry bound: not kept (its JSON is ~2 bytes per element).
        results.keep(RequestKey([1; 32]), vec![0u8; MAX_ENTRY_BYTES / 2 + 1]);
        results.0.run_pending_tasks();
        assert_eq!(results.0.entry_count(), 0);
        // Many entries: the total stays under the server-wide bound.
        for i in 0..12u8 {
            results.keep(RequestKey([i; 32]), vec![0u8; 4 << 20]);
            results.0.run_pending_tasks();
        }
        assert!(
            results.0.weighted_size() <= MAX_BYTES,
            "{}",
            results.0.weighted_size()
        );
        assert!(results.0.entry_count() < 12);
    }
}
