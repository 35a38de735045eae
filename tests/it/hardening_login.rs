//! Signing in on the open internet (issue 14), black-box against a real
//! `forecast serve`: bounded input, failures counted per account and
//! client address (the owner is never locked out by a stranger), a cap on
//! concurrent password hashes with memory given back, and session
//! rotation. Client addresses are told apart by binding the test's
//! sockets to different loopback addresses (127.0.0.x).

use std::net::IpAddr;

use crate::common;

use common::{Server, TEST_EMAIL, TEST_PASSWORD};
use serde_json::{json, Value};

/// A client whose connections come from `addr`.
fn from(addr: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::from(addr))
        .build()
        .unwrap()
}

async fn login(c: &reqwest::Client, s: &Server, email: &str, password: &str) -> (u16, Value) {
    let r = c
        .post(s.url("/auth/login"))
        .json(&json!({ "email": email, "password": password }))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Resident memory of a process, in MiB.
fn rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb / 1024
}

#[tokio::test]
async fn oversized_or_malformed_credentials_are_refused_before_any_work() {
    let mut s = Server::start();
    let c = from([127, 0, 0, 1]);
    let size_before = stored_bytes(&s.db);
    let huge = format!("{}@example.com", "a".repeat(900_000));
    for _ in 0..20 {
        let (status, body) = login(&c, &s, &huge, "whatever1").await;
        assert_eq!(status, 400, "{body:.200}");
        let detail = body["detail"].as_str().unwrap();
        assert!(
            detail.contains("254") && detail.len() < 200,
            "{detail:.300}"
        );
    }
    let (status, body) = login(&c, &s, TEST_EMAIL, &"p".repeat(2_000)).await;
    assert_eq!(status, 400);
    assert!(body["detail"].as_str().unwrap().contains("1024"), "{body}");
    for bad in [
        "no-at-sign",
        "two@@example.com",
        "a b@example.com",
        "x@nodot",
    ] {
        let (status, body) = login(&c, &s, bad, "whatever1").await;
        assert_eq!(status, 400, "{bad}: {body}");
    }
    // Nothing of them was stored: the server, still up, is stopped (so it
    // has written all it will) and its database, log included, has not
    // grown by anything like one of those names.
    assert!(s.process().try_wait().unwrap().is_none());
    common::sigterm(s.process());
    let status = common::exit_within(s.process(), std::time::Duration::from_secs(30), || {
        "the server did not stop within 30 s of SIGTERM".to_string()
    })
    .await;
    assert!(status.success(), "{status}");
    let grown = stored_bytes(&s.db) as i64 - size_before as i64;
    assert!(grown < 1 << 20, "the database grew by {grown} bytes");
}

/// The bytes of the SQLite database at `db` and its write-ahead log.
fn stored_bytes(db: &std::path::Path) -> u64 {
    let wal = db.with_extension("db-wal");
    let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
    size(db) + size(&wal)
}

#[tokio::test]
async fn a_stranger_cannot_lock_the_owner_out() {
    // Failed sign-ins count in fixed 300-second windows: the server's clock
    // stands at the start of one, so the whole test counts in it.
    let s = Server::start_with(
        common::fresh_db(),
        &[("FORECAST_TEST_CLOCK", Server::WINDOW_START)],
    );
    let stranger = from([127, 0, 0, 2]);
    let owner = from([127, 0, 0, 3]);
    let mut statuses = Vec::new();
    for _ in 0..12 {
        statuses.push(login(&stranger, &s, TEST_EMAIL, "wrong password").await.0);
    }
    assert_eq!(&statuses[..10], &[401; 10], "{statuses:?}");
    assert_eq!(&statuses[10..], &[429, 429], "{statuses:?}");
    let (status, body) = login(&stranger, &s, TEST_EMAIL, TEST_PASSWORD).await;
    assert_eq!(
        status, 429,
        "the guessing address stays slowed down: {body}"
    );
    // The owner, from their own address, signs in at once.
    assert_eq!(login(&owner, &s, TEST_EMAIL, TEST_PASSWORD).await.0, 200);

    // Successes do not count, and a success resets the failures.
    for _ in 0..15 {
        assert_eq!(login(&owner, &s, TEST_EMAIL, TEST_PASSWORD).await.0, 200);
    }
    for round in 0..3 {
        for _ in 0..9 {
            assert_eq!(
                login(&owner, &s, TEST_EMAIL, "a typo!!").await.0,
                401,
                "round {round}"
            );
        }
        assert_eq!(login(&owner, &s, TEST_EMAIL, TEST_PASSWORD).await.0, 200);
    }

    // One address spraying many accounts is slowed down too (30 failures).
    let sprayer = from([127, 0, 0, 4]);
    let mut last = 0;
    for i in 0..31 {
        last = login(&sprayer, &s, &format!("user{i}@example.com"), "Summer2026!")
            .await
            .0;
    }
    assert_eq!(last, 429);
}

#[tokio::test]
async fn concurrent_sign_ins_are_capped_and_memory_is_given_back() {
    let mut s = Server::start_with(common::fresh_db(), &[("FORECAST_LOGIN_CONCURRENCY", "2")]);
    let pid = s.process().id();
    let c = from([127, 0, 0, 5]);
    // Warm up (first hash, thread pool).
    assert_eq!(login(&c, &s, TEST_EMAIL, TEST_PASSWORD).await.0, 200);
    let before = rss_mib(pid);
    let mut peak = before;
    for _ in 0..3 {
        let burst: Vec<_> = (0..64)
            .map(|i| {
                let (c, url) = (from([127, 0, 1, i as u8 + 1]), s.url("/auth/login"));
                tokio::spawn(async move {
                    let r = c
                        .post(url)
                        .json(&json!({ "email": TEST_EMAIL, "password": TEST_PASSWORD }))
                        .send()
                        .await
                        .unwrap();
                    (r.status().as_u16(), r.headers().contains_key("retry-after"))
                })
            })
            .collect();
        let mut busy = 0;
        for t in burst {
            match t.await.unwrap() {
                (200, _) => {}
                (503, true) => busy += 1,
                other => panic!("unexpected answer {other:?}"),
            }
        }
        assert!(
            busy > 0,
            "64 concurrent sign-ins on 2 hash slots: some are turned away"
        );
        peak = peak.max(rss_mib(pid));
    }
    // The memory is given back: polled, for at most 10 s.
    let started = std::time::Instant::now();
    let mut after = rss_mib(pid);
    while after >= before + 100 && started.elapsed() < std::time::Duration::from_secs(10) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        after = rss_mib(pid);
    }
    eprintln!("resident memory around 3 × 64 concurrent sign-ins: before {before} MiB, peak {peak} MiB, after {after} MiB");
    assert!(
        peak < before + 200,
        "peak {peak} MiB vs {before} MiB before: hashing memory is bounded"
    );
    assert!(
        after < before + 100,
        "after {after} MiB vs {before} MiB before"
    );
}

#[tokio::test]
async fn a_new_sign_in_replaces_the_browsers_session() {
    let s = Server::app().await;
    let first = common::Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    let r = s
        .client()
        .post(s.url("/auth/login"))
        .header(reqwest::header::COOKIE, &first.cookie)
        .json(&json!({ "email": TEST_EMAIL, "password": TEST_PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        first.send(reqwest::Method::GET, "/auth/me", None).await.0,
        401
    );
}
