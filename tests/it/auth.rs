//! Accounts, sessions, API keys and quotas, in process (`Server::app`):
//! Bearer authentication (401/402), quotas and their headers (429), the
//! web session and key management, and the security promises (OWASP API
//! Top 10 where they apply). The secrets test stays end to end: it reads
//! the server's own log output.

use crate::common;

use common::{
    assert_error, cli_ok, create_key, test_key, Browser, Server, TEST_EMAIL, TEST_PASSWORD,
};
use reqwest::header::{HeaderMap, COOKIE, ORIGIN};
use serde_json::{json, Value};

fn header_u64(h: &HeaderMap, name: &str) -> u64 {
    h.get(name)
        .unwrap_or_else(|| panic!("missing header {name}"))
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn bearer_keys_gate_every_api_route() {
    let s = Server::app().await;
    // Missing, malformed, unknown: 401 with the same body.
    let missing = s.get_as("/api/assets", None).await;
    assert_error(&missing, 401, &["API key"]);
    let malformed = s.get_as("/api/assets", Some("not-a-key")).await;
    let unknown = s
        .get_as("/api/assets", Some(&format!("svc_{}", "ab".repeat(32))))
        .await;
    assert_eq!(malformed, missing);
    assert_eq!(unknown, missing);
    let r = s
        .get_with_header("/api/assets", "authorization", test_key())
        .await;
    assert_eq!(r.status(), 401, "no Bearer prefix");
    // A key in the query string does not authenticate.
    assert_error(
        &s.get_as(
            &format!("/api/assets?api_key={0}&key={0}", test_key()),
            None,
        )
        .await,
        401,
        &[],
    );
    // Every Bearer route is closed.
    for path in [
        "/api/assets",
        "/api/asset-info/AAPL",
        "/api/analysis/%5EGSPC",
    ] {
        assert_eq!(s.get_as(path, None).await.0, 401, "{path}");
    }
    // Open routes stay open.
    assert_eq!(s.get_as("/api/health", None).await.0, 200);
    assert_eq!(s.get_as("/api/openapi.json", None).await.0, 200);

    // A downgraded user gets 402 on the very next request; an upgrade restores access.
    let ok = s.get("/api/assets?category=Indices").await;
    assert_eq!(ok.0, 200);
    cli_ok(
        &s.db,
        &["user", "set-tier", "--email", TEST_EMAIL, "--tier", "pro"],
        "",
    );
    assert_error(
        &s.get("/api/assets?category=Indices").await,
        402,
        &["Premium"],
    );
    cli_ok(
        &s.db,
        &[
            "user", "set-tier", "--email", TEST_EMAIL, "--tier", "premium",
        ],
        "",
    );
    assert_eq!(s.get("/api/assets?category=Indices").await.0, 200);
}

#[tokio::test]
async fn quotas_admit_sixty_a_minute_with_headers_and_retry_after() {
    // The app's clock stands at the start of a minute (and day): one window.
    let (s, _clock) = Server::app_with_clock(common::fresh_db(), &[]).await;
    common::add_user(&s.db, "quota@example.com", "premium", None);
    let key = create_key(&s.db, "quota@example.com", "q");
    let mut last = None;
    for i in 0..60 {
        let r = s.get_bearer("/api/assets?category=Indices", &key).await;
        assert_eq!(r.status(), 200, "request {}", i + 1);
        let h = r.headers();
        assert_eq!(header_u64(h, "x-ratelimit-limit"), 60);
        assert_eq!(header_u64(h, "x-ratelimit-remaining"), 59 - i);
        let reset = header_u64(h, "x-ratelimit-reset");
        assert_eq!(reset % 60, 0, "the minute window ends on a UTC minute");
        last = Some(reset);
    }
    let r = s.get_bearer("/api/assets?category=Indices", &key).await;
    assert_eq!(r.status(), 429);
    let h = r.headers().clone();
    assert_eq!(header_u64(&h, "x-ratelimit-remaining"), 0);
    assert_eq!(Some(header_u64(&h, "x-ratelimit-reset")), last);
    let retry = header_u64(&h, "retry-after");
    assert!((1..=60).contains(&retry), "{retry}");
    let body: Value = r.json().await.unwrap();
    assert!(body["detail"].as_str().unwrap().contains("quota"));
    // Errors of admitted requests still carry the headers; 401s count nothing.
    let (status, _) = s.get_as("/api/assets", None).await;
    assert_eq!(status, 401);
    // The test account (own quota) is unaffected by this user's exhaustion.
    let r = s.get_bearer("/api/asset-info/NOPE", test_key()).await;
    assert_eq!(r.status(), 404);
    assert!(
        r.headers().get("x-ratelimit-limit").is_some(),
        "headers on every Bearer response"
    );
}

#[tokio::test]
async fn a_per_user_override_and_the_day_window_bind() {
    // The app's clock stands at the start of a minute (and day): one window.
    let (s, _clock) = Server::app_with_clock(common::fresh_db(), &[]).await;
    common::add_user(&s.db, "small@example.com", "premium", None);
    common::set_limits(&s.db, "small@example.com", 50, Some(3));
    let key = create_key(&s.db, "small@example.com", "s");
    for remaining in [2, 1, 0] {
        let r = s.get_bearer("/api/assets?category=Forex", &key).await;
        assert_eq!(r.status(), 200);
        assert_eq!(
            header_u64(r.headers(), "x-ratelimit-limit"),
            3,
            "the day window binds"
        );
        assert_eq!(header_u64(r.headers(), "x-ratelimit-remaining"), remaining);
    }
    let r = s.get_bearer("/api/assets?category=Forex", &key).await;
    assert_eq!(r.status(), 429);
    let reset = header_u64(r.headers(), "x-ratelimit-reset");
    assert_eq!(reset % 86_400, 0, "the day window ends at UTC midnight");
    assert!(header_u64(r.headers(), "retry-after") > 0);
}

#[tokio::test]
async fn sessions_and_key_management() {
    let s = Server::app().await;
    wrong_password_and_unknown_email_look_alike(&s).await;

    let b = Browser::login(&s, "  Tester@Example.com ", TEST_PASSWORD).await;
    let (status, me) = b.send(reqwest::Method::GET, "/auth/me", None).await;
    assert_eq!(
        (status, me["email"].as_str(), me["tier"].as_str()),
        (200, Some(TEST_EMAIL), Some("premium"))
    );

    let created = keys_are_created_up_to_five(&b).await;
    a_used_key_is_revoked_and_bad_key_requests_are_refused(&s, &b, &created[0]).await;
    another_users_key_is_not_found(&s, &created[1].0).await;
    a_free_user_may_not_create_keys(&s).await;

    // Bearer keys are refused on the session endpoints.
    let r = s.get_bearer("/api/keys", test_key()).await;
    assert_eq!(r.status(), 401);
    // No session: 401.
    assert_eq!(s.get_raw("/api/keys").await.status(), 401);

    // Logout ends the session.
    let (status, _) = b.send(reqwest::Method::POST, "/auth/logout", None).await;
    assert_eq!(status, 200);
    assert_eq!(b.send(reqwest::Method::GET, "/auth/me", None).await.0, 401);
}

/// Wrong password and unknown e-mail are indistinguishable.
async fn wrong_password_and_unknown_email_look_alike(s: &Server) {
    let login = |email: &'static str, password: &'static str| async move {
        let r = s.post_login(email, password).await;
        (r.status().as_u16(), r.text().await.unwrap())
    };
    let wrong_password = login(TEST_EMAIL, "wrong password!").await;
    let wrong_email = login("nobody@example.com", TEST_PASSWORD).await;
    assert_eq!(wrong_password.0, 401);
    assert_eq!(wrong_password, wrong_email);
}

/// The template account already has one key ("tests"): four more are
/// created, a sixth is refused, and the list never shows a key or its
/// hash. The four created `(id, key)`.
async fn keys_are_created_up_to_five(b: &Browser<'_>) -> Vec<(String, String)> {
    let (status, keys) = b.send(reqwest::Method::GET, "/api/keys", None).await;
    assert_eq!(status, 200);
    assert_eq!(keys.as_array().unwrap().len(), 1);
    let mut created = Vec::new();
    for i in 0..4 {
        let (status, k) = b
            .send(
                reqwest::Method::POST,
                "/api/keys",
                Some(json!({ "name": format!("k{i}") })),
            )
            .await;
        assert_eq!(status, 200, "{k}");
        let key = k["key"].as_str().unwrap().to_string();
        assert!(key.starts_with("svc_") && key.len() == 68);
        assert_eq!(k["key_prefix"].as_str().unwrap(), &key[..8]);
        assert_eq!(k["name"], format!("k{i}"));
        created.push((k["id"].as_str().unwrap().to_string(), key));
    }
    // A sixth active key: 409.
    let sixth = b
        .send(
            reqwest::Method::POST,
            "/api/keys",
            Some(json!({ "name": "six" })),
        )
        .await;
    assert_error(&sixth, 409, &["5"]);
    let (_, keys) = b.send(reqwest::Method::GET, "/api/keys", None).await;
    let keys = keys.as_array().unwrap();
    assert_eq!(keys.len(), 5);
    for k in keys {
        for f in ["id", "key_prefix", "name", "created_at"] {
            assert!(k[f].is_string(), "{f} in {k}");
        }
        assert!(
            k.get("key").is_none() && k.get("key_hash").is_none(),
            "never the key or its hash: {k}"
        );
    }
    created
}

/// A created key works, then is revoked and refused on the next request;
/// a second revocation, a malformed id and malformed key bodies are
/// refused.
async fn a_used_key_is_revoked_and_bad_key_requests_are_refused(
    s: &Server,
    b: &Browser<'_>,
    (id, key): &(String, String),
) {
    assert_eq!(
        s.get_as("/api/assets?category=Indices", Some(key)).await.0,
        200
    );
    let listed = b.send(reqwest::Method::GET, "/api/keys", None).await.1;
    let used = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == id.as_str())
        .unwrap()
        .clone();
    assert!(
        used["last_used_at"].is_string(),
        "last_used_at set by use: {used}"
    );
    let (status, ok) = b
        .send(
            reqwest::Method::DELETE,
            "/api/keys",
            Some(json!({ "id": id })),
        )
        .await;
    assert_eq!((status, ok["ok"].as_bool()), (200, Some(true)));
    assert_eq!(
        s.get_as("/api/assets?category=Indices", Some(key)).await.0,
        401
    );
    let refused: [(reqwest::Method, Value, u16, &[&str]); 4] = [
        (reqwest::Method::DELETE, json!({ "id": id }), 404, &[]),
        (
            reqwest::Method::DELETE,
            json!({ "id": "nope" }),
            400,
            &["UUID"],
        ),
        (reqwest::Method::POST, json!({ "name": "" }), 400, &["name"]),
        (reqwest::Method::POST, json!({ "nom": "x" }), 400, &[]),
    ];
    for (method, body, status, needles) in refused {
        assert_error(
            &b.send(method, "/api/keys", Some(body)).await,
            status,
            needles,
        );
    }
}

/// `forecast user add` of a user with a password, signed in.
async fn add_and_log_in<'a>(s: &'a Server, email: &str, tier: &str, password: &str) -> Browser<'a> {
    common::add_user(&s.db, email, tier, Some(password));
    Browser::login(s, email, password).await
}

/// Another user's key id is 404, like a missing one.
async fn another_users_key_is_not_found(s: &Server, other: &str) {
    let eve = add_and_log_in(s, "eve@example.com", "premium", "eve's password").await;
    assert_error(
        &eve.send(
            reqwest::Method::DELETE,
            "/api/keys",
            Some(json!({ "id": other })),
        )
        .await,
        404,
        &[],
    );
    assert_eq!(
        eve.send(reqwest::Method::GET, "/api/keys", None).await.1,
        json!([])
    );
}

/// A non-Premium user may not create keys.
async fn a_free_user_may_not_create_keys(s: &Server) {
    let free = add_and_log_in(s, "free@example.com", "free", "free password").await;
    assert_error(
        &free
            .send(
                reqwest::Method::POST,
                "/api/keys",
                Some(json!({ "name": "x" })),
            )
            .await,
        402,
        &[],
    );
}

#[tokio::test]
async fn cross_origin_state_changes_are_refused() {
    let s = Server::app().await;
    let b = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    for origin in [Some("http://evil.example"), None] {
        let mut req = s
            .client()
            .post(s.url("/api/keys"))
            .header(COOKIE, &b.cookie)
            .json(&json!({ "name": "csrf" }));
        if let Some(o) = origin {
            req = req.header(ORIGIN, o);
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 403, "origin {origin:?}");
        let body: Value = r.json().await.unwrap();
        assert!(body["detail"].as_str().unwrap().contains("Origin"));
    }
    // Reads need no Origin.
    let r = s.get_with_header("/api/keys", COOKIE, &b.cookie).await;
    assert_eq!(r.status(), 200);
    // A foreign page cannot sign a browser in either.
    let r = s
        .client()
        .post(s.url("/auth/login"))
        .header(ORIGIN, "http://evil.example")
        .json(&json!({ "email": TEST_EMAIL, "password": TEST_PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // A login body with a field the API does not define is refused, naming it.
    let r = s
        .client()
        .post(s.url("/auth/login"))
        .json(&json!({ "email": TEST_EMAIL, "password": TEST_PASSWORD, "tier": "premium" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: serde_json::Value = r.json().await.unwrap();
    assert!(body["detail"].as_str().unwrap().contains("tier"), "{body}");
    assert_eq!(
        b.send(reqwest::Method::GET, "/api/keys", None)
            .await
            .1
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn login_attempts_are_rate_limited() {
    // The clock stands at the start of a 300-second window of the limiter
    // and moves only when the test moves it.
    let (s, clock) = Server::app_with_clock(common::fresh_db(), &[]).await;
    let login = |password: &'static str| {
        let req = s
            .client()
            .post(s.url("/auth/login"))
            .json(&json!({ "email": TEST_EMAIL, "password": password }));
        async move { req.send().await.unwrap() }
    };
    let mut statuses = Vec::new();
    for _ in 0..12 {
        let r = login("guess guess").await;
        statuses.push(r.status().as_u16());
        if r.status() == 429 {
            assert!(r.headers().get("retry-after").is_some());
        }
    }
    assert_eq!(&statuses[..10], &[401; 10]);
    assert_eq!(&statuses[10..], &[429, 429]);
    // Still blocked at the window's last second, even the right password.
    clock.advance_secs(298);
    assert_eq!(login(TEST_PASSWORD).await.status(), 429);
    // The next window: the failures are forgotten.
    clock.advance_secs(1);
    assert_eq!(login(TEST_PASSWORD).await.status(), 200);
}

// End to end: the server's logs are read from its stderr.
#[tokio::test]
async fn secrets_never_leak_and_store_failures_fail_closed() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let s = Server::start_logging(log.path());
    let b = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    let (_, created) = b
        .send(
            reqwest::Method::POST,
            "/api/keys",
            Some(json!({ "name": "secret" })),
        )
        .await;
    let key = created["key"].as_str().unwrap().to_string();
    let hash = forecast::auth::sha256_hex(&key);
    let mut bodies = Vec::new();
    bodies.push(
        s.get_as("/api/assets?category=Indices", Some(&key))
            .await
            .1
            .to_string(),
    );
    bodies.push(
        b.send(reqwest::Method::GET, "/api/keys", None)
            .await
            .1
            .to_string(),
    );
    bodies.push(s.debug_health().await.1.to_string());
    bodies.push(s.get_as("/api/nothing", Some(&key)).await.1.to_string());
    let users = cli_ok(&s.db, &["user", "list"], "");
    for text in bodies.iter().chain([&users]) {
        assert!(
            !text.contains(&key[4..]) && !text.contains(&hash),
            "a secret leaked: {text:.200}"
        );
    }

    // Break the store under the running server: quota admission fails
    // closed with 503, other failures are 500s naming only a request id.
    let pool = sqlx::SqlitePool::connect(&common::sqlite_url(&s.db))
        .await
        .unwrap();
    sqlx::query("DROP TABLE counters")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("DROP TABLE analysis_cache")
        .execute(&pool)
        .await
        .unwrap();
    // A user the server has not counted yet, so admission must read the
    // (now missing) table.
    common::add_user(&s.db, "late@example.com", "premium", None);
    let late = create_key(&s.db, "late@example.com", "late");
    let unavailable = s.get_as("/api/assets", Some(&late)).await;
    assert_error(&unavailable, 503, &["quota"]);
    sqlx::query("CREATE TABLE counters (subject TEXT NOT NULL, kind TEXT NOT NULL, window_start INTEGER NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (subject, kind))")
        .execute(&pool)
        .await
        .unwrap();
    let internal = s.get_as("/api/analysis/%5EGSPC", Some(&key)).await;
    assert_error(&internal, 500, &["request id"]);
    for (_, body) in [&unavailable, &internal] {
        let text = body.to_string().to_lowercase();
        for leak in [
            "sql",
            "table",
            "analysis_cache",
            "counters",
            "select",
            "no such",
        ] {
            assert!(!text.contains(leak), "{leak} leaked: {text}");
        }
    }
    drop(s);
    let logs = std::fs::read_to_string(log.path()).unwrap();
    assert!(
        logs.contains("analysis_cache"),
        "the cause is logged for operators"
    );
    assert!(
        !logs.contains(&key[4..]) && !logs.contains(&hash),
        "a secret reached the logs"
    );
}

/// `forecast user set-password`: the way back in for a newcomer whose
/// demo password scrolled away. The old password stops working and every
/// session of the account ends.
#[tokio::test]
async fn a_new_password_signs_the_account_out_everywhere() {
    let s = Server::app().await;
    let before = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    assert_eq!(
        before.send(reqwest::Method::GET, "/auth/me", None).await.0,
        200
    );
    let out = cli_ok(
        &s.db,
        &[
            "user",
            "set-password",
            "--email",
            TEST_EMAIL,
            "--password-stdin",
        ],
        "a brand new password\n",
    );
    assert!(out.contains("signed out"), "{out}");
    assert_eq!(
        before.send(reqwest::Method::GET, "/auth/me", None).await.0,
        401
    );
    let old = s.post_login(TEST_EMAIL, TEST_PASSWORD).await;
    assert_eq!(old.status(), 401);
    Browser::login(&s, TEST_EMAIL, "a brand new password").await;
    // Without --password-stdin a password is generated and printed once.
    let out = cli_ok(&s.db, &["user", "set-password", "--email", TEST_EMAIL], "");
    let generated = out
        .lines()
        .find_map(|l| l.strip_prefix("password (shown once): "))
        .unwrap_or_else(|| panic!("no generated password in {out}"));
    Browser::login(&s, TEST_EMAIL, generated).await;
    let (ok, _, err) = common::cli(
        &s.db,
        &["user", "set-password", "--email", "nobody@example.com"],
    );
    assert!(!ok && err.contains("no user"), "{err}");
}
