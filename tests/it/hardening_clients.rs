//! Issue 25, items 3 and 4, black-box against the real `forecast serve`:
//! one client address cannot take every connection (its share,
//! `FORECAST_MAX_CONNECTIONS_PER_CLIENT`), `X-Forwarded-For` names the
//! client only behind a trusted proxy (`FORECAST_TRUSTED_PROXIES`), and a
//! request without any admin token counts nothing toward the admin lockout.
//! Client addresses are told apart by binding the test's sockets to
//! different loopback addresses (127.0.0.x).

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};

use crate::common::raw_http::read_response;
use crate::common::{self, Server, ADMIN_TOKEN, TEST_EMAIL, TEST_PASSWORD};

/// A client whose connections come from `addr`.
fn from(addr: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::from(addr))
        .build()
        .unwrap()
}

/// A raw connection to `target` from `addr`.
async fn connect_from(addr: [u8; 4], target: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((addr, 0))).unwrap();
    socket.connect(target).await.unwrap()
}

fn target(s: &Server) -> SocketAddr {
    s.base.trim_start_matches("http://").parse().unwrap()
}

/// Reads every connection at once for `wait` (longer than a refusal takes,
/// far shorter than the header timeout): the ones still open without an
/// answer (held), and every answer or close of the others.
async fn sort_out(
    conns: Vec<TcpStream>,
    wait: Duration,
) -> (Vec<TcpStream>, Vec<Option<(u16, String, String)>>) {
    let reads: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            tokio::spawn(async move {
                let answer = tokio::time::timeout(wait, read_response(&mut conn)).await;
                (conn, answer)
            })
        })
        .collect();
    let (mut held, mut refused) = (Vec::new(), Vec::new());
    for read in reads {
        let (conn, answer) = read.await.unwrap();
        match answer {
            Err(_) => held.push(conn),
            Ok(answer) => refused.push(answer),
        }
    }
    (held, refused)
}

fn detail(body: &str) -> String {
    let json: Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body:.200}"));
    json["detail"].as_str().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_holds_only_its_share_of_connections_while_others_are_served() {
    // 1,500 sockets here and as many in the server: more than a default
    // soft limit of 1,024 open files.
    rlimit::increase_nofile_limit(u64::MAX).unwrap();
    let s = Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_MAX_CONNECTIONS", "2000"),
            ("FORECAST_MAX_CONNECTIONS_PER_CLIENT", "100"),
            ("FORECAST_TRUSTED_PROXIES", "127.0.0.3"),
            // Held sockets must outlive the test's reads.
            ("FORECAST_HEADER_TIMEOUT_MS", "120000"),
            ("FORECAST_IDLE_TIMEOUT_MS", "120000"),
        ],
    );
    let target = target(&s);
    let mut flood = Vec::new();
    for _ in 0..1_500 {
        flood.push(connect_from([127, 0, 0, 1], target).await);
    }
    // Another address is served while the flood is there.
    let r = from([127, 0, 0, 2])
        .get(s.url("/api/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // So is a trusted proxy, past the share: it speaks for many clients.
    let mut proxied = Vec::new();
    for _ in 0..150 {
        proxied.push(connect_from([127, 0, 0, 3], target).await);
    }
    let (held, refused) = sort_out(flood, Duration::from_millis(1_500)).await;
    assert_eq!(held.len(), 100, "the share is held open");
    assert_eq!(refused.len(), 1_400);
    let mut answered = 0;
    for (status, head, body) in refused.into_iter().flatten() {
        assert_eq!(status, 503, "{head}{body}");
        assert!(head.contains("retry-after: 1"), "{head}");
        assert!(detail(&body).contains("at most 100"), "{body}");
        answered += 1;
    }
    assert!(answered >= 1, "refusals are answered while they are few");
    let (proxy_held, proxy_refused) = sort_out(proxied, Duration::from_millis(500)).await;
    assert_eq!(proxy_held.len(), 150, "{proxy_refused:?}");
    // A new request from the flooding address is refused at once, with the
    // reason (or closed while earlier refusals are still being answered).
    let started = Instant::now();
    loop {
        let mut conn = connect_from([127, 0, 0, 1], target).await;
        conn.write_all(b"GET /api/health HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        match read_response(&mut conn).await {
            Some((status, _, body)) => {
                assert_eq!(status, 503, "{body}");
                assert!(detail(&body).contains("too many open connections from this address"));
                break;
            }
            None => {
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "never answered"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    assert_eq!(
        from([127, 0, 0, 2])
            .get(s.url("/api/health"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // Once its connections close, the address is served again.
    drop(held);
    let started = Instant::now();
    loop {
        let r = from([127, 0, 0, 1]).get(s.url("/api/health")).send().await;
        if r.as_ref().is_ok_and(|r| r.status() == 200) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "still refused: {r:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn login(c: &reqwest::Client, s: &Server, forwarded: Option<&str>, password: &str) -> u16 {
    let mut req = c
        .post(s.url("/auth/login"))
        .json(&json!({ "email": TEST_EMAIL, "password": password }));
    if let Some(f) = forwarded {
        req = req.header("x-forwarded-for", f);
    }
    req.send().await.unwrap().status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_for_names_the_client_only_behind_a_trusted_proxy() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let s = Server::start_logging_with(
        common::fresh_db(),
        &[
            ("FORECAST_TRUSTED_PROXIES", "127.0.0.1/32, 10.0.0.0/8"),
            // The request span's line of every answer, uncoloured.
            ("RUST_LOG", "info,tower_http=debug"),
            ("NO_COLOR", "1"),
            // A clock that stands still: every guess lands in one sign-in
            // window whatever the wall clock does.
            ("FORECAST_TEST_CLOCK", Server::WINDOW_START),
        ],
        log.path(),
    );
    // An untrusted peer's X-Forwarded-For is ignored: a new forged address
    // on every guess does not escape the throttle of its own address.
    let stranger = from([127, 0, 0, 2]);
    for i in 0..10 {
        let forged = format!("198.51.100.{i}");
        assert_eq!(
            login(&stranger, &s, Some(&forged), "guess guess").await,
            401
        );
    }
    assert_eq!(
        login(&stranger, &s, Some("198.51.100.99"), TEST_PASSWORD).await,
        429,
        "counted against 127.0.0.2, whatever it forwards"
    );
    // Behind the trusted proxy (127.0.0.1) the throttle is keyed by the
    // forwarded client: one client's failures lock only that client out…
    let proxy = from([127, 0, 0, 1]);
    let client = Some("203.0.113.7, 10.1.2.3");
    for _ in 0..10 {
        assert_eq!(login(&proxy, &s, client, "guess guess").await, 401);
    }
    assert_eq!(login(&proxy, &s, client, TEST_PASSWORD).await, 429);
    // …not the proxy's other clients, nor what sits behind a trusted hop.
    assert_eq!(
        login(&proxy, &s, Some("203.0.113.8"), TEST_PASSWORD).await,
        200
    );
    assert_eq!(login(&proxy, &s, None, TEST_PASSWORD).await, 200);
    // A forged left-most entry does not move the client off the address
    // the proxy saw.
    assert_eq!(
        login(&proxy, &s, Some("203.0.113.8, 203.0.113.7"), TEST_PASSWORD).await,
        429
    );
    // The logs name the same client.
    drop(s);
    let logs = std::fs::read_to_string(log.path()).unwrap();
    for client in [
        "client=127.0.0.2",
        "client=203.0.113.7",
        "client=203.0.113.8",
    ] {
        assert!(logs.contains(client), "{client} not logged:\n{logs:.3000}");
    }
    assert!(
        !logs.contains("client=198.51.100."),
        "a forged address was logged"
    );
}

#[tokio::test]
async fn requests_without_an_admin_token_do_not_lock_the_token_out() {
    let s = Server::app().await;
    let get = |path: &'static str, token: Option<&'static str>| {
        let mut req = s.client().get(s.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send()
    };
    for _ in 0..30 {
        let r = get("/metrics", None).await.unwrap();
        assert_eq!(r.status(), 401);
        let r = get("/api/admin/plugins", None).await.unwrap();
        assert_eq!(r.status(), 401);
    }
    assert_eq!(
        get("/metrics", Some(ADMIN_TOKEN)).await.unwrap().status(),
        200
    );
    assert_eq!(
        get("/api/admin/plugins", Some(ADMIN_TOKEN))
            .await
            .unwrap()
            .status(),
        200
    );
    // Wrong tokens still count: the tenth locks the address out.
    for i in 0..10 {
        let r = get("/metrics", Some("wrong-guess-000000")).await.unwrap();
        assert_eq!(r.status(), 401, "guess {i}");
    }
    assert_eq!(
        get("/metrics", Some(ADMIN_TOKEN)).await.unwrap().status(),
        429
    );
}
