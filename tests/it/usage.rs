//! Quota people can see and that polling does not spend: `GET /api/usage`
//! (and its `/web/api` twin) answers this minute's and today's units, in
//! all and by route; status polls cost nothing; a download of a backtest
//! the same key or session just ran is not charged again. Abuse: a burst
//! of usage polls against a real server, with its statuses, resident memory
//! and database size.

use crate::common;

use common::{test_key, Browser, Server, TEST_EMAIL, TEST_PASSWORD};
use forecast_api::usage::UsageResponse;
use serde_json::{json, Value};

/// `GET path` with `key`: status, `X-RateLimit-Remaining`, body.
async fn get(s: &Server, path: &str, key: &str) -> (u16, u64, String) {
    let r = s.get_bearer(path, key).await;
    let left = remaining(r.headers());
    (r.status().as_u16(), left, r.text().await.unwrap())
}

fn remaining(h: &reqwest::header::HeaderMap) -> u64 {
    h.get("x-ratelimit-remaining")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("x-ratelimit-remaining")
}

async fn usage(s: &Server, key: &str) -> UsageResponse {
    let (status, _, body) = get(s, "/api/usage", key).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("a UsageResponse")
}

/// `POST path` with `key` and `body`: status, remaining, body text.
async fn post(s: &Server, path: &str, key: &str, body: &Value) -> (u16, u64, String) {
    let r = s
        .client()
        .post(s.url(path))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .expect("request");
    let left = remaining(r.headers());
    (r.status().as_u16(), left, r.text().await.unwrap())
}

/// A Premium account with quotas small enough to read (60 a minute, 1,000
/// a day), and its key.
fn small_account(s: &Server, email: &str) -> String {
    common::add_user(&s.db, email, "premium", Some(TEST_PASSWORD));
    common::create_key(&s.db, email, "usage")
}

#[tokio::test]
async fn usage_counts_by_route_and_status_polls_are_free() {
    // The app's clock stands at the start of a minute: one quota window.
    let (s, _clock) = Server::app_with_clock(common::fresh_db(), &[]).await;
    let key = small_account(&s, "meter@example.com");
    let before = usage(&s, &key).await;
    assert_eq!((before.day.used, before.minute.used), (0, 0));
    assert_eq!(before.day.limit, 1_000);
    assert!(before.routes.is_empty(), "{:?}", before.routes);
    // Two paid reads, polls that are free.
    for _ in 0..2 {
        assert_eq!(get(&s, "/api/strategies", &key).await.0, 200);
    }
    assert_eq!(get(&s, "/api/assets?category=Indices", &key).await.0, 200);
    for _ in 0..5 {
        assert_eq!(get(&s, "/api/alerts/unread", &key).await.0, 200);
        usage(&s, &key).await;
    }
    let (_, left, body) = get(&s, "/api/usage", &key).await;
    let after: UsageResponse = serde_json::from_str(&body).unwrap();
    assert_eq!((after.day.used, after.minute.used), (3, 3));
    assert_eq!(after.day.remaining, 997);
    assert_eq!(
        left,
        u64::from(after.minute.remaining),
        "the headers' window"
    );
    let routes: Vec<(&str, u32, u32)> = after
        .routes
        .iter()
        .map(|r| (r.route.as_str(), r.minute, r.day))
        .collect();
    assert_eq!(
        routes,
        [("GET /api/strategies", 2, 2), ("GET /api/assets", 1, 1)],
        "most expensive first; free routes never listed"
    );
    // Another account's usage is its own.
    let other = usage(&s, test_key()).await;
    assert!(other
        .routes
        .iter()
        .all(|r| r.route != "GET /api/strategies" || r.day != 2));
}

#[tokio::test]
async fn the_web_twin_reports_the_same_account() {
    let s = Server::app().await;
    let web = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    let (status, _) = web
        .send(reqwest::Method::GET, "/web/api/strategies", None)
        .await;
    assert_eq!(status, 200);
    let (status, body) = web.send(reqwest::Method::GET, "/web/api/usage", None).await;
    assert_eq!(status, 200, "{body}");
    let seen: UsageResponse = serde_json::from_value(body).unwrap();
    assert!(
        seen.routes
            .iter()
            .any(|r| r.route == "GET /web/api/strategies" && r.day >= 1),
        "{:?}",
        seen.routes
    );
    // The key's view of the same account agrees on today's total.
    let by_key = usage(&s, test_key()).await;
    assert_eq!(by_key.day.used, seen.day.used);
    // Without a session: 401, as every /web/api route.
    let r = s.get_raw("/web/api/usage").await;
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn downloads_of_a_result_just_computed_are_free() {
    // The app's clock stands at the start of a minute: one quota window.
    let (s, _clock) = Server::app_with_clock(common::fresh_db(), &[]).await;
    let key = small_account(&s, "downloads@example.com");
    let body = json!({"tickers": ["^GSPC", "^IXIC", "^DJI"], "top_n": 2,
                      "start_date": "2012-01-01", "end_date": "2014-12-31"});
    let (status, after_run, json) = post(&s, "/api/backtest", &key, &body).await;
    assert_eq!(status, 200, "{json}");
    // Its tables and tear sheet: the same numbers, nothing charged.
    let (status, left, csv) = post(&s, "/api/backtest?format=csv&table=trades", &key, &body).await;
    assert_eq!((status, left), (200, after_run), "{csv}");
    let trades = serde_json::from_str::<Value>(&json).unwrap()["trades"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(csv.lines().count() - 1, trades);
    let (status, left, html) = post(&s, "/api/backtest?format=html", &key, &body).await;
    assert_eq!((status, left), (200, after_run));
    assert!(html.contains("<html"), "a tear sheet");
    // The same body written another way is the same request.
    let reordered = json!({"end_date": "2014-12-31", "start_date": "2012-01-01",
                           "top_n": 2, "tickers": ["^GSPC", "^IXIC", "^DJI"]});
    let (_, left, _) = post(&s, "/api/backtest?format=csv", &key, &reordered).await;
    assert_eq!(left, after_run);
    // Another request, or another key's download of this one, runs and pays.
    let other = json!({"tickers": ["^GSPC", "^IXIC"], "top_n": 1,
                       "start_date": "2012-01-01", "end_date": "2014-12-31"});
    let (status, left, _) = post(&s, "/api/backtest?format=csv", &key, &other).await;
    assert_eq!((status, left), (200, after_run - 5));
    let second = common::create_key(&s.db, "downloads@example.com", "second");
    let (status, left, _) = post(&s, "/api/backtest?format=csv", &second, &body).await;
    assert_eq!(
        (status, left),
        (200, after_run - 10),
        "keyed by the credential"
    );
    // The usage shows what was paid: two runs and one paid download.
    let seen = usage(&s, &key).await;
    assert_eq!(seen.routes[0].route, "POST /api/backtest");
    assert_eq!(seen.routes[0].day, 15);
}

#[tokio::test]
async fn a_sweeps_download_is_free_too() {
    // The app's clock stands at the start of a minute: one quota window.
    let (s, _clock) = Server::app_with_clock(common::fresh_db(), &[]).await;
    let key = small_account(&s, "sweeps@example.com");
    let body = json!({"tickers": ["^GSPC", "^IXIC", "^DJI"],
                      "start_date": "2012-01-01", "end_date": "2014-12-31",
                      "sweep": {"top_n": [1, 2]}});
    let (status, after_run, text) = post(&s, "/api/backtest/sweep", &key, &body).await;
    assert_eq!(status, 200, "{text}");
    let (status, left, csv) = post(&s, "/api/backtest/sweep?format=csv", &key, &body).await;
    assert_eq!((status, left), (200, after_run), "{csv}");
    assert_eq!(csv.lines().count(), 3, "a header and two combinations");
}

/// Abuse: 2,000 usage polls, 32 at a time, against a real server. Every
/// answer is 200 (free routes are never refused for an exhausted quota),
/// resident memory grows by less than 32 MB, and the database by less
/// than 1 MB (a poll writes nothing).
#[tokio::test]
async fn a_burst_of_usage_polls_costs_no_memory_or_disk() {
    let mut s = Server::start();
    let pid = s.process().id();
    let key = test_key().to_string();
    // Warm: the routes' counters exist.
    assert_eq!(get(&s, "/api/strategies", &key).await.0, 200);
    usage(&s, &key).await;
    let (rss0, disk0) = (common::rss(pid), db_bytes(&s));
    let mut polls = tokio::task::JoinSet::new();
    for _ in 0..32 {
        let (url, key) = (s.url("/api/usage"), key.clone());
        polls.spawn(async move {
            let client = reqwest::Client::new();
            let mut codes = Vec::new();
            for _ in 0..63 {
                let r = client.get(&url).bearer_auth(&key).send().await;
                codes.push(r.map_or(0, |r| r.status().as_u16()));
            }
            codes
        });
    }
    let statuses = polls.join_all().await;
    let all: Vec<u16> = statuses.into_iter().flatten().collect();
    assert_eq!(all.len(), 2_016);
    assert!(all.iter().all(|&c| c == 200), "{:?}", {
        let mut odd: Vec<u16> = all.iter().copied().filter(|&c| c != 200).collect();
        odd.dedup();
        odd
    });
    let (rss1, disk1) = (common::rss(pid), db_bytes(&s));
    eprintln!(
        "usage burst: 2,016 polls, RSS {} → {} kB, database {} → {} bytes",
        rss0 / 1024,
        rss1 / 1024,
        disk0,
        disk1
    );
    assert!(rss1 < rss0 + (32 << 20), "RSS {rss0} → {rss1}");
    assert!(disk1 < disk0 + (1 << 20), "database {disk0} → {disk1}");
}

/// The database file and its write-ahead log, in bytes.
fn db_bytes(s: &Server) -> u64 {
    let size = |p: std::path::PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
    let wal = s.db.with_extension("db-wal");
    size(s.db.clone()) + size(wal)
}
