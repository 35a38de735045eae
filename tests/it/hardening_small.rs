//! Issue 25, the smaller items, end to end against the real `forecast
//! serve`: `X-Content-Type-Options: nosniff` on every answer, an `Origin`
//! compared exactly as a browser sends it, and a 413 that names the limit
//! of the route that refused. (The demo login kept off a piped stdout is
//! tested with the banner, in `smoke`.)

use reqwest::header::{CONTENT_TYPE, COOKIE, ORIGIN, X_CONTENT_TYPE_OPTIONS};
use serde_json::{json, Value};

use crate::common::{self, Browser, Server, ADMIN_TOKEN, TEST_EMAIL, TEST_PASSWORD};

#[tokio::test]
async fn every_answer_says_nosniff() {
    let s = Server::start();
    let client = reqwest::Client::new();
    // A JSON answer, a JSON error and the web app's page.
    let answers = [
        client
            .get(s.url("/api/assets?category=Indices"))
            .bearer_auth(common::test_key()),
        client.get(s.url("/api/assets")),
        client.get(s.url("/no/such/route.json")),
        client.get(s.url("/")),
    ];
    let expected = [200, 401, 404, 200];
    for (request, status) in answers.into_iter().zip(expected) {
        let r = request.send().await.unwrap();
        let url = r.url().to_string();
        assert_eq!(r.status(), status, "{url}");
        assert_eq!(
            r.headers()
                .get(X_CONTENT_TYPE_OPTIONS)
                .map(|v| v.to_str().unwrap()),
            Some("nosniff"),
            "{url}: {:?}",
            r.headers()
        );
    }
}

#[tokio::test]
async fn an_origin_with_a_trailing_slash_is_foreign() {
    let s = Server::start();
    let b = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    let slashed = format!("{}/", s.base);
    // A state change with the session cookie.
    let r = reqwest::Client::new()
        .post(s.url("/api/keys"))
        .header(COOKIE, &b.cookie)
        .header(ORIGIN, &slashed)
        .json(&json!({ "name": "slash" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["detail"].as_str().unwrap().contains("Origin"),
        "{body}"
    );
    // Signing in from it.
    let r = reqwest::Client::new()
        .post(s.url("/auth/login"))
        .header(ORIGIN, &slashed)
        .json(&json!({ "email": TEST_EMAIL, "password": TEST_PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // The exact origin still works, and nothing was created above.
    let (status, _) = b
        .send(
            reqwest::Method::POST,
            "/api/keys",
            Some(json!({ "name": "exact" })),
        )
        .await;
    assert_eq!(status, 200);
    let (_, keys) = b.send(reqwest::Method::GET, "/api/keys", None).await;
    let names: Vec<&str> = keys
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["name"].as_str())
        .collect();
    assert!(!names.contains(&"slash"), "{names:?}");
}

#[tokio::test]
async fn a_413_names_the_limit_of_its_route() {
    let s = Server::start();
    let client = reqwest::Client::new();
    // An API body over 1 MiB, refused from its Content-Length before it is
    // read: raw HTTP, so the client never races the early answer.
    use tokio::io::AsyncWriteExt;
    let addr = s.base.trim_start_matches("http://").to_string();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /api/backtest HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        common::test_key(),
        (1 << 20) + 1
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    let text =
        common::raw_http::read_until_closed(&mut conn, std::time::Duration::from_secs(10)).await;
    assert!(text.starts_with("HTTP/1.1 413"), "{text:.200}");
    let body: Value = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains("1 MiB (1,048,576 bytes)"), "{detail}");
    // A component upload over 64 MiB.
    let r = client
        .post(s.url("/api/admin/plugins?kind=segmentation&name=default&version=9.9.9-big"))
        .bearer_auth(ADMIN_TOKEN)
        .header(CONTENT_TYPE, "application/wasm")
        .body(vec![0u8; (64 << 20) + 1])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    let body: Value = r.json().await.unwrap();
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains("64 MiB (67,108,864 bytes)"), "{detail}");
    assert!(!detail.contains("1,048,576"), "{detail}");
}
