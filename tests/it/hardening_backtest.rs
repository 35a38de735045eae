//! Bounded backtests (issue 14), end to end against the real `forecast`
//! binary over the full demo universe: one account's concurrent backtests
//! are capped (429 with `Retry-After` and the rate headers, nothing
//! charged), the Bearer route and the web app's session twin share the
//! cap, the wait for plugin slots ends in 503, a response carries at most
//! 10,000 trades and says so, the server's peak memory under the abusive
//! pattern of the issue stays under 1.5 GB, and a backtest whose client
//! went away stops and frees its slot.

use crate::common;

use common::{create_key, peak_rss, test_key, Browser, Server, TEST_EMAIL, TEST_PASSWORD};
use serde_json::{json, Value};

/// The memory bound of the issue.
const MAX_PEAK_BYTES: u64 = 1_500 * 1024 * 1024;

struct Answer {
    status: u16,
    body: Value,
    headers: reqwest::header::HeaderMap,
}

impl Answer {
    fn header(&self, name: &str) -> Option<u64> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
    }

    fn detail(&self) -> &str {
        self.body["detail"]
            .as_str()
            .unwrap_or_else(|| panic!("{} without detail: {}", self.status, self.body))
    }

    /// Asserts a refusal to try again later: `status`, a `Retry-After` of
    /// at least a second, and the rate headers.
    fn assert_try_again(&self, status: u16) {
        assert_eq!(self.status, status, "{}", self.body);
        assert!(
            self.header("retry-after").is_some_and(|s| s >= 1),
            "{:?}",
            self.headers
        );
        self.has_rate_headers();
    }

    /// Asserts the rate headers every API response carries.
    fn has_rate_headers(&self) {
        for h in [
            "x-ratelimit-limit",
            "x-ratelimit-remaining",
            "x-ratelimit-reset",
        ] {
            assert!(
                self.header(h).is_some(),
                "{} without {h}: {:?}",
                self.status,
                self.headers
            );
        }
    }
}

async fn answer(r: common::client::Response) -> Answer {
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let body = common::json_body(status, &r.text().await.expect("body"));
    Answer {
        status,
        body,
        headers,
    }
}

async fn backtest(s: &Server, key: &str, body: Value) -> Answer {
    answer(s.post_json("/api/backtest", key, &body).await).await
}

/// `GET /api/strategies` (cost 1): what is left of the binding window.
async fn remaining(s: &Server, key: &str) -> u64 {
    let a = answer(s.get_bearer("/api/strategies", key).await).await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.header("x-ratelimit-remaining").expect("remaining")
}

fn assert_busy_429(a: &Answer, at_most: &str) {
    a.assert_try_again(429);
    assert!(
        a.detail().contains(at_most) && a.detail().contains("backtest"),
        "{}",
        a.detail()
    );
}

/// The issue's abusive pattern on one server: eight concurrent backtests
/// of the whole universe from one key with distinct decays, then a daily
/// long-short of 2 × 500 positions since 1900. The server's peak memory
/// stays under 1.5 GB; the excess of the eight is refused with 429 and
/// not charged; the long-short answers the first 10,000 of its trades
/// and says how many there were.
#[tokio::test]
async fn the_abusive_pattern_of_the_issue_is_bounded_in_slots_charge_and_memory() {
    // A long time limit, so the heavy runs finish rather than stopping
    // early: the stricter case for memory.
    let mut s = Server::start_with(
        common::fresh_db(),
        &[("FORECAST_BACKTEST_TIMEOUT_MS", "600000")],
    );
    let pid = s.process().id();
    let key = test_key().to_string();
    let before = remaining(&s, &key).await;

    let runs: Vec<_> = (0..8)
        .map(|i| {
            let (client, s_url, key) = (s.client().clone(), s.url("/api/backtest"), key.clone());
            // Distinct after quantisation: 0.900, 0.911, … 0.977.
            let decay = 0.9 + 0.011 * f64::from(i);
            tokio::spawn(async move {
                let r = client
                    .post(s_url)
                    .bearer_auth(key)
                    .json(&json!({ "decay_factor": decay }))
                    .send()
                    .await
                    .expect("request");
                answer(r).await
            })
        })
        .collect();
    let mut admitted = 0u64;
    let mut refused = 0u64;
    for run in runs {
        let a = run.await.unwrap();
        if a.status == 429 {
            assert_busy_429(&a, "at most 1");
            refused += 1;
        } else {
            assert_eq!(a.status, 200, "{}", a.body);
            a.has_rate_headers();
            admitted += 1;
        }
    }
    assert!(admitted >= 1, "one runs");
    assert!(
        refused >= 1,
        "the excess of eight concurrent backtests is refused"
    );

    let long_short = backtest(
        &s,
        &key,
        json!({
            "strategy": "longshort", "top_n": 500, "rebalance": "daily",
            "start_date": "1900-01-01"
        }),
    )
    .await;
    assert_eq!(long_short.status, 200, "{}", long_short.body);
    let b = &long_short.body;
    let trades = b["trades"].as_array().unwrap();
    let total = b["metadata"]["trades_total"]
        .as_u64()
        .expect("trades_total");
    assert_eq!(total, b["metrics"]["total_trades"].as_u64().unwrap());
    assert!(
        total > 10_000,
        "a daily long-short of 1,000 positions: {total}"
    );
    assert_eq!(trades.len(), 10_000, "the body's cap");
    assert_eq!(b["metadata"]["trades_truncated"], json!(true));
    let dates: Vec<&str> = trades.iter().map(|t| t["date"].as_str().unwrap()).collect();
    assert!(
        dates.windows(2).all(|w| w[0] <= w[1]),
        "the first, in date order"
    );
    assert_eq!(b["metadata"]["decay_factor"], json!(0.95));

    // Only what ran was charged: 5 per admitted backtest, 1 per look.
    let after = remaining(&s, &key).await;
    assert_eq!(
        before - after,
        1 + 5 * (admitted + 1),
        "{refused} refused backtests charged nothing"
    );

    let peak = peak_rss(pid);
    eprintln!(
        "peak RSS of the server: {} MiB ({admitted} admitted, {refused} refused, {total} trades)",
        peak >> 20
    );
    assert!(
        peak < MAX_PEAK_BYTES,
        "peak RSS {} MiB is over {} MiB",
        peak >> 20,
        MAX_PEAK_BYTES >> 20
    );
}

/// One account's backtest slot is shared by `/api/backtest` and the web
/// app's `/web/api/backtest`; another account waits for the server's only
/// plugin slot for `FORECAST_BACKTEST_QUEUE_MS`, then gets 503. The slot
/// holder is a strategy that loops until its call's time limit, so it
/// holds the slot however fast the machine is.
#[tokio::test]
async fn a_users_backtests_share_one_cap_and_the_wait_for_plugin_slots_ends_in_503() {
    let dir = common::plugin_dir_with("misbehave_strategy");
    let s = Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_PLUGIN_DIR", dir.path().to_str().unwrap()),
            ("FORECAST_PLUGIN_TIMEOUT_MS", "15000"),
            ("FORECAST_BACKTEST_TIMEOUT_MS", "60000"),
            ("FORECAST_PLUGIN_CONCURRENCY", "1"),
            ("FORECAST_BACKTESTS_PER_USER", "1"),
            ("FORECAST_BACKTEST_QUEUE_MS", "200"),
        ],
    );
    common::add_user(
        &s.db,
        "other@example.com",
        "premium",
        Some("other password 1"),
    );
    let other = create_key(&s.db, "other@example.com", "o");
    let small = json!({
        "tickers": ["^GSPC", "^IXIC", "^DJI"], "top_n": 2,
        "start_date": "2015-01-01", "end_date": "2015-12-31"
    });
    let looping = {
        let (client, url, key) = (
            s.client().clone(),
            s.url("/api/backtest"),
            test_key().to_string(),
        );
        let body = json!({
            "strategy": "misbehave", "top_n": 7,
            "tickers": ["^GSPC", "^IXIC", "^DJI", "^NDX", "^RUT", "^FTSE", "^GDAXI", "^FCHI"],
            "start_date": "2015-01-01", "end_date": "2015-12-31"
        });
        tokio::spawn(async move {
            let r = client
                .post(url)
                .bearer_auth(key)
                .json(&body)
                .send()
                .await
                .expect("request");
            answer(r).await
        })
    };
    // The looping run holds its heavy-work ticket, and with it its plugin
    // slots: it takes them right after, without a wait (it is the only
    // request).
    let mut waited = 0;
    while common::metric(
        &s.admin_text("/metrics").await,
        "forecast_heavy_work_running",
    ) != Some(1.0)
    {
        assert!(!looping.is_finished(), "the looping run was answered");
        waited += 1;
        assert!(waited < 600, "the looping run never took its ticket");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let browser = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    let web = answer(
        s.client()
            .post(s.url("/web/api/backtest"))
            .header(reqwest::header::COOKIE, &browser.cookie)
            .header(reqwest::header::ORIGIN, &s.base)
            .json(&small)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_busy_429(&web, "at most 1");
    let bearer = backtest(&s, test_key(), small.clone()).await;
    assert_busy_429(&bearer, "at most 1");

    let busy = backtest(&s, &other, small.clone()).await;
    busy.assert_try_again(503);
    assert!(busy.detail().contains("retry"), "{}", busy.detail());

    let stopped = looping.await.unwrap();
    assert!(
        stopped.status >= 500,
        "the loop is stopped: {}",
        stopped.body
    );
    // Both free again.
    assert_eq!(backtest(&s, &other, small.clone()).await.status, 200);
    assert_eq!(backtest(&s, test_key(), small).await.status, 200);
}

/// A client that goes away stops its backtest: the server logs that the
/// work stopped because the request was dropped, and the account's only
/// slot is free again for its next request. Uncancelled, the run (the
/// signals of the whole universe since 1900 with a fresh decay, then a
/// daily run) would go on for far longer than the wait below.
#[tokio::test]
async fn a_backtest_whose_client_went_away_stops_and_frees_its_slot() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let s = Server::start_logging_with(
        common::fresh_db(),
        &[
            ("FORECAST_BACKTESTS_PER_USER", "1"),
            ("FORECAST_BACKTEST_TIMEOUT_MS", "600000"),
        ],
        &log,
    );
    // The client sends a run that would take minutes (again if a probe
    // below held the one slot at that moment) …
    let gone = tokio::spawn({
        let (url, key) = (s.url("/api/backtest"), test_key().to_string());
        async move {
            loop {
                let r = reqwest::Client::new()
                    .post(&url)
                    .bearer_auth(&key)
                    .json(&json!({
                        "decay_factor": 0.833, "rebalance": "daily", "start_date": "1900-01-01"
                    }))
                    .send()
                    .await;
                if !matches!(&r, Ok(r) if r.status() == 429) {
                    return r;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    });
    // … and goes away once the server holds its slot: a probe whose body is
    // invalid gets 429 while the slot is held (400 when it is free, without
    // running anything), whatever the machine's load.
    let probe = json!({ "top_n": 0 });
    let mut waited = 0;
    while backtest(&s, test_key(), probe.clone()).await.status != 429 {
        assert!(
            !gone.is_finished(),
            "the long run was answered: {:?}",
            gone.await
        );
        waited += 1;
        assert!(waited < 240, "the long run never took its slot");
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    // The slot is taken in the HTTP guard, before the service starts: wait
    // until the run has started (from then on every drop is logged), so the
    // client does not leave while its request is still being admitted.
    let mut waited = 0;
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("backtest started")
    {
        assert!(!gone.is_finished(), "the long run was answered");
        waited += 1;
        assert!(waited < 240, "the long run never started");
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    gone.abort();
    assert!(gone.await.is_err(), "the client gave up before the answer");

    let small = json!({
        "tickers": ["^GSPC", "^IXIC", "^DJI"], "top_n": 2,
        "start_date": "2015-01-01", "end_date": "2015-12-31"
    });
    let mut refusals = 0;
    let admitted = loop {
        let a = backtest(&s, test_key(), small.clone()).await;
        if a.status != 429 {
            break a;
        }
        refusals += 1;
        assert!(
            refusals < 240,
            "the slot was not freed within a minute of the client leaving"
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    assert_eq!(admitted.status, 200, "{}", admitted.body);
    // The slot goes back when the request is dropped; the run's own thread
    // notices the cancellation at its next check and logs it then, which
    // on a busy machine can come after the small run's answer.
    let mut text = std::fs::read_to_string(&log).unwrap();
    for _ in 0..120 {
        if text.contains("backtest stopped: the request was dropped") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        text = std::fs::read_to_string(&log).unwrap();
    }
    // The log's end: the start-up lines come first and say nothing here.
    let mut from = text.len().saturating_sub(3_000);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let tail = &text[from..];
    let tail = &tail[tail.find('\n').map_or(0, |i| i + 1)..];
    assert!(
        text.contains("backtest stopped: the request was dropped"),
        "the dropped run stopped (not finished): …{tail}"
    );
    assert!(
        text.matches("backtest finished").count() == 1,
        "only the small run finished: …{tail}"
    );
}
