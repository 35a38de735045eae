//! The web application's server side (issue 13), in process: its pages and
//! built files served by the binary, the session-authenticated twins of the
//! data routes under `/web` (same handlers, Premium rule and quota as
//! `/api`), the watchlist, and the OpenAPI snapshot the UI's types are
//! generated from. The pages themselves are tested in a real browser by
//! `web/tests` (`make test` runs both).

use crate::common;

use common::{assert_error, test_key, Browser, Server, TEST_EMAIL, TEST_PASSWORD};
use forecast_api::accounts::{Me, Watchlist};
use forecast_api::analysis::VerdictResponse;
use forecast_api::backtest::BacktestResponse;
use forecast_domain::{Category, DataSource, Tier};
use forecast_testkit::{Api, Refusal};
use reqwest::header::{CACHE_CONTROL, CONTENT_TYPE, COOKIE, ETAG, IF_NONE_MATCH, ORIGIN};
use reqwest::Method;
use serde_json::{json, Value};

const PAGES: [&str; 8] = [
    "/",
    "/login",
    "/onboarding",
    "/keys",
    "/explore",
    "/ranking",
    "/backtest",
    "/assets/%5EGSPC",
];

#[tokio::test]
async fn pages_and_built_files_are_served_from_the_binary() {
    let s = Server::app().await;
    let mut shell = String::new();
    for page in PAGES {
        let r = s.get_raw(page).await;
        assert_eq!(r.status(), 200, "{page}");
        let h = r.headers().clone();
        assert!(
            h[CONTENT_TYPE].to_str().unwrap().starts_with("text/html"),
            "{page}"
        );
        assert_eq!(
            h[CACHE_CONTROL], "no-cache",
            "{page}: the shell names the build's files"
        );
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"));
        let body = r.text().await.unwrap();
        if shell.is_empty() {
            shell = body;
        } else {
            assert_eq!(body, shell, "every page is the same shell");
        }
    }
    // The shell loads the build's script from /static/, which is cached for
    // ever and revalidates by ETag.
    let script = shell
        .split("src=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .find(|src| src.starts_with("/static/") && src.ends_with(".js"))
        .unwrap_or_else(|| panic!("no /static/*.js script in the shell: {shell:.400}"))
        .to_string();
    let r = s.get_raw(&script).await;
    assert_eq!(r.status(), 200);
    let h = r.headers().clone();
    assert!(h[CONTENT_TYPE].to_str().unwrap().contains("javascript"));
    assert!(h[CACHE_CONTROL].to_str().unwrap().contains("immutable"));
    let etag = h[ETAG].to_str().unwrap().to_string();
    assert!(!r.text().await.unwrap().is_empty());
    let again = s.get_with_header(&script, IF_NONE_MATCH, &etag).await;
    assert_eq!(again.status(), 304);

    // Everything else stays the API's: JSON 404s, and pages take no POST.
    for path in ["/nope", "/static/nope.js", "/assets", "/assets/a/b", "/web"] {
        assert_error(&s.get_as(path, None).await, 404, &["no route"]);
    }
    let r = s.client().post(s.url("/login")).send().await.unwrap();
    assert_eq!(r.status(), 404);

    // A browser navigating to a page that does not exist gets the app's
    // own not-found page (the shell, answered 404), not raw JSON; the API's
    // paths keep their JSON 404 even for a browser.
    for path in ["/nope", "/settings/profile"] {
        let r = s
            .get_with_header(path, "accept", "text/html,application/xhtml+xml")
            .await;
        assert_eq!(r.status(), 404, "{path}");
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"));
        assert!(
            r.text().await.unwrap().contains("<div id=\"app\""),
            "{path}: the shell"
        );
    }
    for path in [
        "/api/nope",
        "/web/api/nope",
        "/static/nope.js",
        "/auth/nope",
    ] {
        let r = s.get_with_header(path, "accept", "text/html").await;
        assert_eq!(r.status(), 404, "{path}");
        let body: Value = r.json().await.unwrap();
        assert!(
            body["detail"].as_str().unwrap().starts_with("no route"),
            "{path}"
        );
    }
}

/// GET `path` with the browser's cookie: status, headers, JSON body.
async fn web_get(b: &Browser<'_>, path: &str) -> (u16, reqwest::header::HeaderMap, Value) {
    let r = b
        .server
        .client()
        .get(b.server.url(path))
        .header(COOKIE, &b.cookie)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.json().await.unwrap())
}

#[tokio::test]
async fn web_data_routes_answer_what_the_api_answers_under_the_same_quota() {
    // The app's clock stands at the start of a minute (and day): one window.
    let (s, _clock) = Server::app_with_clock(common::fresh_db(), &[]).await;
    common::set_limits(&s.db, TEST_EMAIL, 6, None);
    // The burst below must land in one quota minute.
    let b = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;

    // The same handlers: the same body as with a key.
    let (status, h, web) = web_get(&b, "/web/api/analysis/%5EGSPC/verdict").await;
    assert_eq!(status, 200, "{web}");
    assert_eq!(h["x-ratelimit-limit"], "6");
    assert_eq!(h["x-ratelimit-remaining"], "5");
    let api = s.api().verdict("^GSPC", "").await.unwrap();
    let web: VerdictResponse = serde_json::from_value(web).unwrap();
    assert_eq!(web.ticker, api.ticker);
    assert_eq!(web.grade, api.grade);
    assert_eq!(web.current_state, api.current_state);

    // One quota per user, whichever the credential: 2 used, 4 left.
    for path in [
        "/web/api/assets?category=Indices",
        "/web/api/asset-info/AAPL",
        "/web/api/strategies",
    ] {
        assert_eq!(web_get(&b, path).await.0, 200, "{path}");
    }
    assert_eq!(s.get("/api/strategies").await.0, 200);
    let (status, h, body) = web_get(&b, "/web/api/strategies").await;
    assert_eq!(status, 429, "{body}");
    assert!(h.contains_key("retry-after"));
    assert_eq!(h["x-ratelimit-remaining"], "0");
    assert_eq!(s.get("/api/strategies").await.0, 429);
}

#[tokio::test]
async fn web_data_routes_need_a_premium_session_and_the_origin_on_posts() {
    let s = Server::app().await;
    // No session; a Bearer key is not a session.
    assert_error(
        &s.get_as("/web/api/strategies", None).await,
        401,
        &["sign in"],
    );
    assert_error(
        &s.get_as("/web/api/strategies", Some(test_key())).await,
        401,
        &["API keys are not accepted here"],
    );
    // A signed-in user on another tier: the Premium rule, in words.
    common::add_user(&s.db, "free@example.com", "free", Some("free password"));
    let free = Browser::login(&s, "free@example.com", "free password").await;
    assert_error(
        &free.send(Method::GET, "/web/api/ranking", None).await,
        402,
        &["Premium", "free"],
    );

    // A backtest is a POST: it must come from the web origin.
    let b = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    let body = json!({ "tickers": ["^GSPC", "^IXIC"], "top_n": 1, "start_date": "2015-01-01" });
    let r = s
        .client()
        .post(s.url("/web/api/backtest"))
        .header(COOKIE, &b.cookie)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403, "no Origin");
    let r = s
        .client()
        .post(s.url("/web/api/backtest"))
        .header(COOKIE, &b.cookie)
        .header(ORIGIN, "https://evil.example")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403, "foreign Origin");
    let result: BacktestResponse = b.api().post("/web/api/backtest", &body).await.unwrap();
    assert!(!result.equity_curve.is_empty());
    // A bad parameter is the API's 400, naming the field.
    assert_error(
        &b.send(
            Method::GET,
            "/web/api/analysis/%5EGSPC?num_segments=1",
            None,
        )
        .await,
        400,
        &["num_segments"],
    );
}

#[tokio::test]
async fn the_watchlist_is_the_users_own_and_names_active_assets_only() {
    let s = Server::app().await;
    let b = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    assert_eq!(
        b.send(Method::GET, "/web/watchlist", None).await,
        (200, json!({ "tickers": [] }))
    );
    let saved = set_watchlist(
        &b,
        json!({ "tickers": ["AAPL", " BTC-USD ", "AAPL", "^GSPC"] }),
    )
    .await
    .unwrap();
    assert_eq!(
        watched(&saved),
        ["AAPL", "BTC-USD", "^GSPC"],
        "order kept, repeat dropped"
    );
    assert_eq!(saved.tickers[1].category, Category::Crypto);
    assert_eq!(saved.tickers[2].data_source, DataSource::Real);
    assert_eq!(saved.tickers[0].currency, "USD", "from the catalog");
    assert_eq!(watchlist(&b).await, saved);

    a_bad_watchlist_is_refused_whole(&b).await;
    assert_eq!(watched(&watchlist(&b).await), ["AAPL", "BTC-USD", "^GSPC"]);

    // Another user has their own; no session, no watchlist; a PUT needs the Origin.
    common::add_user(&s.db, "eve@example.com", "free", Some("eve's password"));
    let eve = Browser::login(&s, "eve@example.com", "eve's password").await;
    assert_eq!(
        eve.send(Method::GET, "/web/watchlist", None).await.1,
        json!({ "tickers": [] })
    );
    let toyota = set_watchlist(&eve, json!({ "tickers": ["7203.T"] }))
        .await
        .unwrap();
    assert_eq!(toyota.tickers[0].currency, "JPY");
    assert_eq!(s.get_as("/web/watchlist", None).await.0, 401);
    let r = s
        .client()
        .request(Method::PUT, s.url("/web/watchlist"))
        .header(COOKIE, &b.cookie)
        .json(&json!({ "tickers": [] }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
}

/// The tickers of a watchlist, in order.
fn watched(w: &Watchlist) -> Vec<String> {
    w.tickers.iter().map(|t| t.ticker.clone()).collect()
}

/// `GET /web/watchlist` of the browser's user.
async fn watchlist(b: &Browser<'_>) -> Watchlist {
    b.api().get("/web/watchlist").await.unwrap()
}

/// `PUT /web/watchlist` of `body` by the browser's user.
async fn set_watchlist(b: &Browser<'_>, body: Value) -> Result<Watchlist, Refusal> {
    Api::typed(
        b.api()
            .send(Method::PUT, "/web/watchlist", Some(&body))
            .await,
    )
    .await
}

/// Refused whole: an unknown ticker (quoted short), an inactive one, too
/// many, unknown fields.
async fn a_bad_watchlist_is_refused_whole(b: &Browser<'_>) {
    let put = |body: Value| b.send(Method::PUT, "/web/watchlist", Some(body));
    let long = "X".repeat(500);
    let (status, body) = put(json!({ "tickers": ["MSFT", long] })).await;
    assert_error(
        &(status, body.clone()),
        400,
        &["tickers", "not an active asset"],
    );
    assert!(body["detail"].as_str().unwrap().len() < 120, "{body}");
    assert_error(&put(json!({ "tickers": ["FISV"] })).await, 400, &["FISV"]);
    let many: Vec<String> = (0..51).map(|i| format!("T{i}")).collect();
    assert_error(&put(json!({ "tickers": many })).await, 400, &["at most 50"]);
    assert_eq!(put(json!({ "tickers": [], "extra": 1 })).await.0, 400);
}

/// Issue 24: `GET /auth/me` (and the sign-in's answer) says where a Free
/// user upgrades, as the operator set it; null when unset. A malformed
/// setting stops the server at start, naming it.
#[tokio::test]
async fn me_says_where_to_upgrade() {
    let plain = Server::app().await;
    let b = Browser::login(&plain, TEST_EMAIL, TEST_PASSWORD).await;
    let me: Value = b.api().get("/auth/me").await.unwrap();
    assert_eq!(
        me,
        json!({ "email": TEST_EMAIL, "tier": "premium", "upgrade_url": null })
    );
    drop(b);

    let url = "https://shop.example.com/forecast/upgrade?plan=premium";
    let s = Server::app_with(common::fresh_db(), &[("FORECAST_UPGRADE_URL", url)]).await;
    common::add_user(&s.db, "free@example.com", "free", Some("free password"));
    let r = s.post_login("free@example.com", "free password").await;
    assert_eq!(r.status(), 200);
    let login: Me = r.json().await.unwrap();
    assert_eq!(login.upgrade_url.as_deref(), Some(url));
    let free = Browser::login(&s, "free@example.com", "free password").await;
    let me: Me = free.api().get("/auth/me").await.unwrap();
    assert_eq!(me.tier, Tier::Free);
    assert_eq!(me.upgrade_url.as_deref(), Some(url));

    let out = std::process::Command::new(common::BIN)
        .arg("serve")
        .env("DATABASE_URL", common::sqlite_url(&s.db))
        .env("FORECAST_ADDR", "127.0.0.1:0")
        .env("FORECAST_UPGRADE_URL", "shop.example.com/upgrade")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "FORECAST_UPGRADE_URL (--upgrade-url): expected an absolute http:// or https:// URL"
        ),
        "{stderr}"
    );
}

/// GET `path` with `Accept-Encoding: encoding` (none when `None`) and the
/// extra `headers`: status, headers and the body as received.
async fn get_encoded(
    s: &Server,
    path: &str,
    encoding: Option<&str>,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let mut req = s.client().get(s.url(path));
    if let Some(e) = encoding {
        req = req.header("accept-encoding", e);
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.unwrap();
    (r.status().as_u16(), r.headers().clone(), r.bytes().to_vec())
}

/// `body` decoded from `encoding` (`br` or `gzip`).
fn decode(encoding: &str, body: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    match encoding {
        "br" => brotli_decompressor::Decompressor::new(body, 4096)
            .read_to_end(&mut out)
            .unwrap(),
        "gzip" => flate2::read::GzDecoder::new(body)
            .read_to_end(&mut out)
            .unwrap(),
        other => panic!("{other}"),
    };
    out
}

/// Issue 24: answers are compressed with br or gzip as the client accepts
/// them, and decode to the same bytes: JSON (the analysis, a snapshot
/// verdict served as stored bytes, an error), the app's shell and built
/// files (ETag and 304 unchanged) and `/metrics`; without
/// `Accept-Encoding`, nothing changes (`Content-Length` included).
#[tokio::test]
async fn answers_are_compressed_as_the_client_accepts() {
    let s = Server::app().await;
    let key = format!("Bearer {}", test_key());
    let auth = [("authorization", key.as_str())];
    let script = {
        let (_, _, shell) = get_encoded(&s, "/", None, &[]).await;
        let shell = String::from_utf8(shell).unwrap();
        shell
            .split("src=\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .find(|src| src.starts_with("/static/") && src.ends_with(".js"))
            .unwrap()
            .to_string()
    };
    let admin = format!("Bearer {}", common::ADMIN_TOKEN);
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("/api/analysis/%5EGSPC?max_points=1500", auth.to_vec()),
        ("/api/analysis/%5EGSPC/verdict", auth.to_vec()),
        ("/api/ranking?limit=5", auth.to_vec()),
        ("/api/assets", auth.to_vec()),
        ("/api/track-record/%5EGSPC", auth.to_vec()),
        ("/api/track-record", auth.to_vec()),
        ("/api/nope", vec![]),
        ("/", vec![]),
        (&script, vec![]),
        ("/metrics", vec![("authorization", admin.as_str())]),
    ];
    for (path, headers) in &cases {
        compressed_as_accepted_to_the_same_content(&s, path, headers).await;
    }
    // Clients that prefer one get it; a tiny body may go either way.
    let (_, h, _) = get_encoded(&s, &script, Some("gzip;q=1, br;q=0.1"), &[]).await;
    assert_eq!(h["content-encoding"], "gzip");
    let (_, h, _) = get_encoded(&s, &script, Some("br, gzip"), &[]).await;
    assert_eq!(h["content-encoding"], "br");
    let (status, _, body) = get_encoded(&s, "/api/health", Some("br"), &[]).await;
    assert_eq!(status, 200);
    let health: Value = serde_json::from_slice(&body)
        .or_else(|_| serde_json::from_slice(&decode("br", &body)))
        .unwrap();
    assert_eq!(health["status"], "ok");

    // A built file revalidates by ETag whatever the encoding.
    let (_, h, _) = get_encoded(&s, &script, Some("br"), &[]).await;
    let etag = h[ETAG].to_str().unwrap().to_string();
    let (_, plain_h, _) = get_encoded(&s, &script, None, &[]).await;
    assert_eq!(plain_h[ETAG].to_str().unwrap(), etag);
    for encoding in [None, Some("br"), Some("gzip")] {
        let (status, h, body) =
            get_encoded(&s, &script, encoding, &[("if-none-match", etag.as_str())]).await;
        assert_eq!(status, 304, "{encoding:?}");
        assert!(body.is_empty() && !h.contains_key("content-encoding"));
    }
}

/// `path` (with `headers`): without `Accept-Encoding` as it is, its
/// length included; with br or with gzip offered, encoded so (smaller
/// when not tiny, `Vary` said) and decoding to the same JSON, bytes or
/// metrics.
async fn compressed_as_accepted_to_the_same_content(
    s: &Server,
    path: &str,
    headers: &[(&str, &str)],
) {
    // Once first, so that what is cached is served from then on.
    get_encoded(s, path, None, headers).await;
    let (status, plain_h, plain) = get_encoded(s, path, None, headers).await;
    assert!(
        status == 200 || status == 404 || status == 503,
        "{path}: {status}"
    );
    assert!(
        !plain_h.contains_key("content-encoding"),
        "{path}: identity"
    );
    if status == 200 {
        assert_eq!(
            plain_h["content-length"].to_str().unwrap(),
            plain.len().to_string(),
            "{path}: an identity answer keeps its length"
        );
    }
    for encoding in ["br", "gzip"] {
        let offer = format!("{encoding}, identity;q=0.5");
        let (got, h, body) = get_encoded(s, path, Some(&offer), headers).await;
        assert_eq!(got, status, "{path} {encoding}");
        assert_eq!(
            h.get("content-encoding").map(|v| v.to_str().unwrap()),
            Some(encoding),
            "{path}"
        );
        assert!(h.get("vary").is_some_and(|v| v
            .to_str()
            .unwrap()
            .to_ascii_lowercase()
            .contains("accept-encoding")));
        if plain.len() > 1000 {
            assert!(body.len() < plain.len(), "{path} {encoding}: smaller");
        }
        let decoded = decode(encoding, &body);
        if plain_h[CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("application/json")
        {
            let (a, b): (Value, Value) = (
                serde_json::from_slice(&decoded).unwrap(),
                serde_json::from_slice(&plain).unwrap(),
            );
            // Answers computed twice differ in when they were computed.
            let strip = |mut v: Value| {
                v.get_mut("metadata")
                    .and_then(Value::as_object_mut)
                    .map(|m| m.remove("calculated_at"));
                v
            };
            assert_eq!(strip(a), strip(b), "{path} {encoding}: the same JSON");
        } else if path != "/metrics" {
            assert_eq!(decoded, plain, "{path} {encoding}: the same bytes");
        } else {
            let text = String::from_utf8(decoded).unwrap();
            assert!(text.contains("forecast_http_requests_total"), "{text:.300}");
        }
    }
}

/// The web application's API types are generated (openapi-typescript) from
/// `web/openapi.json`, a snapshot of this document. A change of the API
/// without a new snapshot fails here; `make web-types` writes it (by
/// running this test with `FORECAST_WRITE_OPENAPI=1`) and regenerates the
/// types.
#[tokio::test]
async fn the_web_apps_openapi_snapshot_is_current() {
    let s = Server::app().await;
    let r = s.get_raw("/api/openapi.json").await;
    assert_eq!(r.status(), 200);
    let served = r.text().await.unwrap();
    let doc: Value = serde_json::from_str(&served).unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/openapi.json");
    if std::env::var_os("FORECAST_WRITE_OPENAPI").is_some() {
        // As served (the document's own key order); `make web-types`
        // indents it.
        std::fs::write(&path, served).unwrap();
        return;
    }
    let snapshot: Value = serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap();
    // `make web-types` indents the snapshot with JavaScript, which writes
    // 2.0 as 2: numbers compare by value.
    assert!(
        numbers_as_f64(snapshot) == numbers_as_f64(doc),
        "web/openapi.json is not the served document: run `make web-types` and commit web/openapi.json and web/src/api/schema.d.ts"
    );
}

/// `v` with every number as an f64, so 2 and 2.0 compare equal.
fn numbers_as_f64(v: Value) -> Value {
    match v {
        Value::Number(n) => serde_json::json!(n.as_f64().expect("finite")),
        Value::Array(items) => Value::Array(items.into_iter().map(numbers_as_f64).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, numbers_as_f64(v)))
                .collect(),
        ),
        other => other,
    }
}
