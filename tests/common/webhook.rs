//! A local receiver for the webhook tests: an HTTP/1.1 server (axum) on
//! 127.0.0.1:0 that answers every request, any method on any path, from a
//! script of statuses ([`Receiver::start`]) or with a redirect
//! ([`Receiver::redirecting`]), and records each request it gets
//! ([`Received`]). [`verify_signature`] checks the `X-Forecast-Signature`
//! header the service signs each delivery with.
//!
//! The server runs on a runtime of its own, in a thread of its own, not on
//! the test's: a test that blocks its thread (a CLI run, a blocking wait)
//! would otherwise leave the service's deliveries unanswered meanwhile.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How often [`Receiver::wait_for`] looks again.
const WAIT_POLL: Duration = Duration::from_millis(50);
/// How long a drop waits for the server to stop.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// A request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    /// `POST` for a delivery (a redirect followed by the client would come
    /// back as a `GET`).
    pub method: String,
    /// Path and query as sent.
    pub path: String,
    /// Every header in order, names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// When its body had arrived.
    pub at: Instant,
}

impl Received {
    /// The value of the first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// How the receiver answers.
enum Answer {
    /// The i-th request gets the i-th status, every one after the list 200.
    Script(Vec<StatusCode>),
    /// Every request gets 302 to this location.
    Redirect(HeaderValue),
}

struct Shared {
    answer: Answer,
    received: Mutex<Vec<Received>>,
}

/// The receiver; stopped on drop, which returns once its port is closed
/// (or after [`STOP_TIMEOUT`] should a request hang).
pub struct Receiver {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// Ends the server (graceful shutdown) when sent or dropped.
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// Disconnected when the server's thread has ended.
    stopped: std::sync::mpsc::Receiver<()>,
}

impl Receiver {
    /// A receiver whose i-th request (counting from 0, whatever its path)
    /// gets `responses[i]`, and every request past the list 200; all with
    /// an empty body.
    pub async fn start(responses: Vec<u16>) -> Receiver {
        let statuses = responses
            .into_iter()
            .map(|s| {
                StatusCode::from_u16(s).unwrap_or_else(|_| panic!("{s} is not an HTTP status"))
            })
            .collect();
        Receiver::serve(Answer::Script(statuses))
    }

    /// A receiver answering every request `302 Found` with
    /// `Location: <to>`.
    pub async fn redirecting(to: String) -> Receiver {
        let location = HeaderValue::from_str(&to)
            .unwrap_or_else(|e| panic!("{to:?} cannot be a Location header: {e}"));
        Receiver::serve(Answer::Redirect(location))
    }

    fn serve(answer: Answer) -> Receiver {
        // Bound here, so the address is known (and taken) before this returns.
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").expect("bind the webhook receiver");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let addr = listener.local_addr().expect("the receiver's address");
        let shared = Arc::new(Shared {
            answer,
            received: Mutex::new(Vec::new()),
        });
        let app = axum::Router::new()
            .fallback(record)
            .with_state(shared.clone());
        let (stop, stop_signal) = tokio::sync::oneshot::channel::<()>();
        let (ended, stopped) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("webhook-receiver".into())
            .spawn(move || {
                // Dropped last, once the runtime is gone.
                let _ended = ended;
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("the receiver's runtime");
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener)
                        .expect("the receiver's listener");
                    // A sent or dropped `stop` ends it: no new connections,
                    // idle ones closed, requests under way answered.
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(async move {
                            let _ = stop_signal.await;
                        })
                        .await;
                });
            })
            .expect("spawn the webhook receiver's thread");
        Receiver {
            addr,
            shared,
            stop: Some(stop),
            stopped,
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Every request so far, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    /// The requests once there are at least `n`, or whatever there is
    /// after `timeout`.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        let deadline = Instant::now() + timeout;
        loop {
            let received = self.received();
            if received.len() >= n || Instant::now() >= deadline {
                return received;
            }
            tokio::time::sleep(WAIT_POLL).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // Blocks at most this long: the server runs on its own thread, so
        // this never waits on the caller's runtime.
        let _ = self.stopped.recv_timeout(STOP_TIMEOUT);
    }
}

/// Every request: recorded, then answered as the receiver was told.
async fn record(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let at = Instant::now();
    let index = {
        let mut received = shared.received.lock().unwrap();
        received.push(Received {
            method: method.to_string(),
            path: uri
                .path_and_query()
                .map_or_else(|| uri.path().to_string(), |p| p.as_str().to_string()),
            headers: headers
                .iter()
                .map(|(name, value)| {
                    let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                    (name.as_str().to_string(), value)
                })
                .collect(),
            body: body.to_vec(),
            at,
        });
        received.len() - 1
    };
    match &shared.answer {
        Answer::Script(statuses) => statuses
            .get(index)
            .copied()
            .unwrap_or(StatusCode::OK)
            .into_response(),
        Answer::Redirect(location) => {
            (StatusCode::FOUND, [(header::LOCATION, location.clone())]).into_response()
        }
    }
}

/// Checks an `X-Forecast-Signature` header,
/// `t=<unix seconds>,v1=<hex>` (fields in any order, separated by commas):
/// `v1` must be the lower-case hex of HMAC-SHA256 keyed with `secret` (its
/// UTF-8 bytes) over `<t>.` followed by `body`, compared in constant time.
/// Fields other than `t` and `v1` are ignored; either given twice is an
/// error. The timestamp on success, else what is wrong.
pub fn verify_signature(secret: &str, header: &str, body: &[u8]) -> Result<i64, String> {
    let mut t = None;
    let mut v1 = None;
    for field in header.split(',') {
        let (name, value) = field
            .trim()
            .split_once('=')
            .ok_or_else(|| format!("{field:?} in {header:?} is not name=value"))?;
        let slot = match name.trim() {
            "t" => &mut t,
            "v1" => &mut v1,
            _ => continue,
        };
        if slot.replace(value.trim()).is_some() {
            return Err(format!("{} is given twice in {header:?}", name.trim()));
        }
    }
    let t = t.ok_or_else(|| format!("no t= in {header:?}"))?;
    let v1 = v1.ok_or_else(|| format!("no v1= in {header:?}"))?;
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("t={t:?} is not a number of unix seconds"));
    }
    let timestamp: i64 = t
        .parse()
        .map_err(|e| format!("t={t:?} is not a number of unix seconds: {e}"))?;
    if v1.len() != 64 || !v1.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(format!(
            "v1={v1:?} is not 64 lower-case hex digits (an HMAC-SHA256)"
        ));
    }
    let expected = hex::decode(v1).map_err(|e| format!("v1={v1:?}: {e}"))?;
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&expected).map_err(|_| {
        format!(
            "v1 is not the HMAC-SHA256 of \"{t}.\" and the {} bytes of the body under this secret",
            body.len()
        )
    })?;
    Ok(timestamp)
}
