//! Per-request deadlines (issue 14). The connection-level deadlines (the
//! request head, idle keep-alive, the connection cap) belong to the server
//! (`forecast::server`); these two are about one request and answer it:
//!
//! - the **body deadline**: the whole request body must have arrived within
//!   `body` of the request head, else 408 `{detail}` and the connection is
//!   closed. A total, not a gap between reads: tower-http's
//!   `RequestBodyTimeoutLayer` restarts its timer on every frame, so a body
//!   trickled a byte at a time would never end;
//! - the **request deadline**: a request not answered within `request`
//!   gets 504 `{detail}` (the handler is dropped). It exceeds the
//!   backtest's own limit, so a slow backtest is still answered by the
//!   backtest's own 504.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http_body::{Frame, SizeHint};
use serde_json::json;
use tokio::time::{Instant, Sleep};

/// The two deadlines of a request.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// The whole request, head to response (504 past it).
    pub request: Duration,
    /// The request body, from the head (408 past it).
    pub body: Duration,
}

/// The middleware applying [`Deadlines`].
pub async fn deadlines(State(d): State<Deadlines>, req: Request, next: Next) -> Response {
    let expired = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + d.body;
    let req = req.map(|body| {
        Body::new(BodyDeadline {
            body,
            deadline,
            sleep: None,
            expired: expired.clone(),
        })
    });
    let response = match tokio::time::timeout(d.request, next.run(req)).await {
        Ok(response) => response,
        Err(_) => {
            return (
                StatusCode::GATEWAY_TIMEOUT,
                Json(json!({ "detail": format!(
                    "the request was not answered within its deadline of {} ms (FORECAST_REQUEST_TIMEOUT_MS)",
                    d.request.as_millis()
                ) })),
            )
                .into_response();
        }
    };
    if expired.load(Ordering::Acquire) {
        let mut response = (
            StatusCode::REQUEST_TIMEOUT,
            Json(json!({ "detail": format!(
                "the request body did not arrive within {} ms (FORECAST_BODY_TIMEOUT_MS)",
                d.body.as_millis()
            ) })),
        )
            .into_response();
        // The rest of the body may still come: the connection cannot be
        // reused.
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    response
}

/// The body did not arrive in time.
#[derive(Debug, thiserror::Error)]
#[error("request body deadline elapsed")]
struct BodyTimedOut;

/// A request body that fails once its deadline has passed (and says so in
/// `expired`, which the middleware turns into the 408).
struct BodyDeadline {
    body: Body,
    deadline: Instant,
    /// Armed the first time the body is not ready.
    sleep: Option<Pin<Box<Sleep>>>,
    expired: Arc<AtomicBool>,
}

impl http_body::Body for BodyDeadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.body).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        let deadline = self.deadline;
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.expired.store(true, Ordering::Release);
                Poll::Ready(Some(Err(axum::Error::new(BodyTimedOut))))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
