//! Issue 14, end to end against the real `forecast serve`: the deadlines
//! of every connection (request head, idle keep-alive, request body, the
//! whole request), the connection cap, the graceful shutdown and
//! `/metrics`. Raw TCP where a client library would hide what is tested.
//! Timeouts are shortened to a second or two; every bound asserted is a
//! timeout's own (the timeout plus a margin), never a speed.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::raw_http::read_response;
use crate::common::{self, Server, ADMIN_TOKEN};

/// Slack on top of a timeout before a test calls it missed.
const MARGIN: Duration = Duration::from_secs(3);

fn addr(s: &Server) -> String {
    s.base.trim_start_matches("http://").to_string()
}

/// Waits until the server closes `conn` (end of stream or reset), at most
/// `limit`; how long that took, or `None` if it stayed open.
async fn closed_within(conn: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    tokio::time::timeout(limit, async {
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .ok()
    .map(|()| started.elapsed())
}

fn detail(body: &str) -> String {
    let json: Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body:.200}"));
    json["detail"]
        .as_str()
        .unwrap_or_else(|| panic!("no detail in {json}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_request_heads_are_closed_after_the_header_timeout() {
    let header = Duration::from_millis(1_500);
    let s = Server::start_with(
        common::fresh_db(),
        &[("FORECAST_HEADER_TIMEOUT_MS", "1500")],
    );
    let target = addr(&s);
    // 200 clients sending their request head one byte a second.
    let mut slow = Vec::new();
    for _ in 0..200 {
        let target = target.clone();
        slow.push(tokio::spawn(async move {
            let conn = TcpStream::connect(&target).await.expect("connect");
            let started = Instant::now();
            let (mut rx, mut tx) = conn.into_split();
            let writer = tokio::spawn(async move {
                let head = b"GET /api/health HTTP/1.1\r\nHost: slow\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
                for b in head {
                    if tx.write_all(&[*b]).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            });
            let mut buf = [0u8; 256];
            let closed = tokio::time::timeout(Duration::from_millis(1_500) + MARGIN, async {
                loop {
                    match rx.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                }
            })
            .await;
            writer.abort();
            closed.ok().map(|()| started.elapsed())
        }));
    }
    // Meanwhile (once the server holds or has refused all 200; the
    // metrics' own connection is open too) an ordinary client is served.
    let started = Instant::now();
    loop {
        let metrics = s.admin_text("/metrics").await;
        let held: f64 = metrics
            .lines()
            .filter(|l| {
                l.starts_with("forecast_open_connections ")
                    || l.starts_with("forecast_connections_refused_total")
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        if held >= 201.0 {
            break;
        }
        assert!(
            started.elapsed() < MARGIN,
            "the slow clients were not all taken: {metrics}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let r = reqwest::get(s.url("/api/health")).await.unwrap();
    assert_eq!(r.status(), 200, "a normal request among slow ones");
    let mut open = 0;
    for task in slow {
        match task.await.unwrap() {
            None => open += 1,
            Some(after) => assert!(
                after >= header - Duration::from_millis(200),
                "closed after {after:?}, before the header timeout"
            ),
        }
    }
    assert_eq!(
        open,
        0,
        "slow-head connections still open after {:?}",
        header + MARGIN
    );
    // The server is still fine.
    let r = reqwest::get(s.url("/api/health")).await.unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_never_finishes_gets_408_and_a_slow_request_504() {
    let s = Server::start_with(common::fresh_db(), &[("FORECAST_BODY_TIMEOUT_MS", "1000")]);
    let head = |target: &str| {
        format!(
            "POST /api/backtest HTTP/1.1\r\nHost: {target}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{{\"strategy\":",
            common::test_key()
        )
    };
    let target = addr(&s);
    let mut conn = TcpStream::connect(&target).await.unwrap();
    let started = Instant::now();
    conn.write_all(head(&target).as_bytes()).await.unwrap();
    let (status, headers, body) =
        tokio::time::timeout(Duration::from_secs(1) + MARGIN, read_response(&mut conn))
            .await
            .expect("no answer within the body timeout")
            .expect("closed without an answer");
    assert_eq!(status, 408, "{headers}{body}");
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert!(
        headers.contains("content-type: application/json"),
        "{headers}"
    );
    assert!(headers.contains("connection: close"), "{headers}");
    assert!(detail(&body).contains("FORECAST_BODY_TIMEOUT_MS"), "{body}");
    assert!(closed_within(&mut conn, MARGIN).await.is_some());

    // A request still unanswered at its deadline gets 504: a body allowed
    // 20 s but a request deadline of 2 s (above the heavy-work wait of
    // 0.2 s, the backtest's 0.5 s wait for slots and its 1 s limit, and an
    // upload's 1 s to compile).
    let s = Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_BODY_TIMEOUT_MS", "20000"),
            ("FORECAST_HEAVY_WAIT_MS", "200"),
            ("FORECAST_BACKTEST_QUEUE_MS", "500"),
            ("FORECAST_BACKTEST_TIMEOUT_MS", "1000"),
            ("FORECAST_RESEARCH_TIMEOUT_MS", "1000"),
            ("FORECAST_UPLOAD_COMPILE_TIMEOUT_MS", "1000"),
            ("FORECAST_REQUEST_TIMEOUT_MS", "2000"),
        ],
    );
    let target = addr(&s);
    let mut conn = TcpStream::connect(&target).await.unwrap();
    conn.write_all(head(&target).as_bytes()).await.unwrap();
    let (status, _, body) =
        tokio::time::timeout(Duration::from_secs(2) + MARGIN, read_response(&mut conn))
            .await
            .expect("no answer within the request timeout")
            .expect("closed without an answer");
    assert_eq!(status, 504, "{body}");
    assert!(detail(&body).contains("deadline"), "{body}");
}

#[tokio::test]
async fn a_request_deadline_not_above_the_backtest_limit_is_refused_at_start() {
    let out = Command::new(common::BIN)
        .arg("serve")
        .env("FORECAST_ADDR", "127.0.0.1:0")
        .env("DATABASE_URL", common::sqlite_url(&common::empty_db()))
        .env("FORECAST_REQUEST_TIMEOUT_MS", "30000")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("FORECAST_REQUEST_TIMEOUT_MS")
            && err.contains("FORECAST_HEAVY_WAIT_MS + FORECAST_BACKTEST_QUEUE_MS"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_connection_cap_clients_get_503_until_idle_ones_are_closed() {
    let timeout = Duration::from_millis(3_000);
    let s = Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_MAX_CONNECTIONS", "20"),
            ("FORECAST_HEADER_TIMEOUT_MS", "3000"),
            ("FORECAST_IDLE_TIMEOUT_MS", "3000"),
        ],
    );
    let target = addr(&s);
    // 40 connections that send nothing.
    let mut idle = Vec::new();
    for _ in 0..40 {
        idle.push(TcpStream::connect(&target).await.unwrap());
    }
    // Each is read at the same time, for longer than a refused
    // connection waits for a request head but less than the header
    // timeout.
    let answers: Vec<_> = idle
        .into_iter()
        .map(|mut conn| {
            tokio::spawn(async move {
                let answer =
                    tokio::time::timeout(Duration::from_millis(1_500), read_response(&mut conn))
                        .await;
                (conn, answer)
            })
        })
        .collect();
    let mut refused = 0;
    let mut held = Vec::new();
    for answer in answers {
        let (conn, answer) = answer.await.unwrap();
        match answer {
            Ok(Some((status, head, body))) => {
                assert_eq!(status, 503, "{head}{body}");
                assert!(head.contains("retry-after: 1"), "{head}");
                assert!(head.contains("connection: close"), "{head}");
                assert!(detail(&body).contains("20 open connections"), "{body}");
                refused += 1;
            }
            Ok(None) => panic!("closed without the documented answer"),
            Err(_) => held.push(conn),
        }
    }
    assert_eq!(refused, 20, "the excess get 503");
    assert_eq!(held.len(), 20, "the cap's worth is held open");
    // A fresh client now: refused while the cap is full…
    let r = reqwest::get(s.url("/api/health")).await.unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "1");
    // …and served once the idle ones are closed by their timeout.
    let started = Instant::now();
    loop {
        let r = reqwest::Client::new()
            .get(s.url("/api/health"))
            .send()
            .await
            .unwrap();
        if r.status() == 200 {
            break;
        }
        assert_eq!(r.status(), 503);
        assert!(
            started.elapsed() < timeout + MARGIN,
            "still refused {:?} after the cap was reached",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for mut conn in held {
        assert!(
            closed_within(&mut conn, MARGIN).await.is_some(),
            "an idle connection was never closed"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_keep_alive_connections_are_closed_after_the_idle_timeout() {
    let idle = Duration::from_millis(1_500);
    // The header timeout is longer, so it is the idle timeout that closes.
    let s = Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_IDLE_TIMEOUT_MS", "1500"),
            ("FORECAST_HEADER_TIMEOUT_MS", "10000"),
        ],
    );
    let target = addr(&s);
    let mut conn = TcpStream::connect(&target).await.unwrap();
    let request = format!("GET /api/health HTTP/1.1\r\nHost: {target}\r\n\r\n");
    conn.write_all(request.as_bytes()).await.unwrap();
    let (status, ..) = read_response(&mut conn).await.expect("first answer");
    assert_eq!(status, 200);
    // Kept alive: a second request on the same connection is answered (and
    // the close measured from its answer below shows the connection stayed
    // open while idle for all but the margin of the timeout).
    conn.write_all(request.as_bytes()).await.unwrap();
    let (status, ..) = read_response(&mut conn).await.expect("second answer");
    assert_eq!(status, 200);
    let after = closed_within(&mut conn, idle + MARGIN)
        .await
        .expect("the idle connection was not closed");
    assert!(
        after >= idle - Duration::from_millis(200),
        "closed after {after:?}, before the idle timeout"
    );
}

/// Sends SIGTERM to the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_the_request_in_flight_refuses_new_ones_and_exits_0() {
    let mut s = Server::start_with(
        common::fresh_db(),
        &[("FORECAST_SHUTDOWN_GRACE_MS", "20000")],
    );
    let target = addr(&s);
    // An idle keep-alive connection, closed at once by the shutdown.
    let mut kept = TcpStream::connect(&target).await.unwrap();
    kept.write_all(format!("GET /api/health HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    assert_eq!(read_response(&mut kept).await.unwrap().0, 200);
    // A request in flight: its head and half its body are sent; the rest
    // comes after the signal.
    let body = r#"{"strategy":"topn","category":"Crypto","top_n":3}"#;
    let (first, rest) = body.split_at(20);
    let mut conn = TcpStream::connect(&target).await.unwrap();
    conn.write_all(
        format!(
            "POST /api/backtest HTTP/1.1\r\nHost: {target}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{first}",
            common::test_key(),
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    // In flight once the server has read its head (this scrape counts
    // itself, and the idle connection holds no request).
    let started = Instant::now();
    loop {
        let text = s.admin_text("/metrics").await;
        if sample(&text, "forecast_http_requests_in_flight", &[]).is_some_and(|n| n >= 2.0) {
            break;
        }
        assert!(
            started.elapsed() < MARGIN,
            "the request never reached the server: {text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    common::sigterm(s.process());
    // The idle connection is closed and new connections are refused.
    assert!(
        closed_within(&mut kept, MARGIN).await.is_some(),
        "an idle connection outlived the shutdown"
    );
    let started = Instant::now();
    loop {
        if TcpStream::connect(&target).await.is_err() {
            break;
        }
        assert!(started.elapsed() < MARGIN, "still accepting after SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The request in flight completes.
    conn.write_all(rest.as_bytes()).await.unwrap();
    let (status, _, body) = tokio::time::timeout(Duration::from_secs(60), read_response(&mut conn))
        .await
        .expect("no answer")
        .expect("the request in flight was dropped");
    assert_eq!(status, 200, "{body:.300}");
    let json: Value = serde_json::from_str(&body).unwrap();
    assert!(json["metrics"].is_object(), "{body:.300}");
    // Then the process exits 0.
    let status = common::exit_within(s.process(), Duration::from_secs(20), || {
        "no exit after SIGTERM".to_string()
    })
    .await;
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// `GET url` with an optional Bearer token: status and body text.
async fn get(url: &str, token: Option<&str>) -> (u16, String) {
    let mut req = reqwest::Client::new().get(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r = req.send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// The value of the first sample line of `name` whose labels contain
/// every one of `labels`.
fn sample(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .find(|l| labels.iter().all(|want| l.contains(want)))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_behind_the_admin_token_and_count_routes_and_plugin_calls() {
    let s = Server::start();
    // A route that calls the segmentation plugin (a full analysis with
    // non-default parameters, so never from a cache).
    let (status, _) = s.get("/api/analysis/%5EGSPC?return_period=91").await;
    assert_eq!(status, 200);
    let url = s.url("/metrics");
    let (status, body) = get(&url, None).await;
    assert_eq!(status, 401, "{body}");
    assert!(!detail(&body).is_empty());
    let (status, body) = get(&url, Some("not-the-admin-token")).await;
    assert_eq!(status, 401, "{body}");
    let (status, text) = get(&url, Some(ADMIN_TOKEN)).await;
    assert_eq!(status, 200, "{text:.300}");
    let requests = sample(
        &text,
        "forecast_http_requests_total",
        &[
            r#"route="/api/analysis/{ticker}""#,
            r#"method="GET""#,
            r#"status="200""#,
        ],
    );
    assert_eq!(requests, Some(1.0), "{text}");
    assert!(
        !text.contains("%5EGSPC") && !text.contains("^GSPC"),
        "a raw path became a label"
    );
    assert!(
        sample(
            &text,
            "forecast_http_request_duration_seconds_count",
            &[r#"route="/api/analysis/{ticker}""#]
        ) == Some(1.0),
        "{text}"
    );
    let calls = sample(
        &text,
        "forecast_plugin_calls_total",
        &[r#"plugin="segmentation/"#, r#"outcome="ok""#, "version=\""],
    );
    assert!(calls.is_some_and(|n| n >= 1.0), "{text}");
    let rss = sample(&text, "forecast_process_resident_memory_bytes", &[]);
    assert!(rss.is_some_and(|b| b > 1e6), "{text}");
    assert!(sample(&text, "forecast_open_connections", &[]).is_some_and(|n| n >= 1.0));
    assert!(text.contains("# TYPE forecast_http_request_duration_seconds histogram"));
}

#[tokio::test]
async fn without_an_admin_token_metrics_are_disabled_like_the_admin_api() {
    let s = Server::start_with(common::fresh_db(), &[("FORECAST_ADMIN_TOKEN", "")]);
    let (status, body) = get(&s.url("/metrics"), None).await;
    let (admin, _) = get(&s.url("/api/admin/plugins"), None).await;
    assert_eq!(status, admin, "the same answer as the admin API");
    assert_eq!(status, 403, "{body}");
    assert!(detail(&body).contains("FORECAST_ADMIN_TOKEN"), "{body}");
}

#[tokio::test]
async fn with_a_metrics_address_metrics_move_there() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let private = format!("127.0.0.1:{port}");
    let s = Server::start_with(
        common::fresh_db(),
        &[("FORECAST_METRICS_ADDR", private.as_str())],
    );
    assert_eq!(s.get("/api/assets?category=Indices").await.0, 200);
    let (status, text) = get(&format!("http://{private}/metrics"), None).await;
    assert_eq!(status, 200, "{text:.300}");
    assert!(
        sample(
            &text,
            "forecast_http_requests_total",
            &[r#"route="/api/assets""#, r#"status="200""#]
        )
        .is_some(),
        "{text}"
    );
    let (status, body) = get(&s.url("/metrics"), Some(ADMIN_TOKEN)).await;
    assert_eq!(status, 404, "{body}");
    assert!(!detail(&body).is_empty());
    let (status, _) = get(&format!("http://{private}/api/health"), None).await;
    assert_eq!(status, 404, "only /metrics on the private listener");
}
