//! The server-wide budget for heavy work (issue 25), black-box against the
//! real `forecast serve` with its default budget: eight accounts starting
//! one whole-universe backtest each with its own decay at once keep the
//! server's peak resident memory under 2 GB, and each is answered 200 or
//! refused with 503 before any work, with `Retry-After`, a reason and no
//! charge; one account's flood of live analyses neither starves another
//! account's analysis nor the health check. How fast health answers
//! meanwhile is measured by `make bench-heavy` (docs/BENCHMARKS.md), not
//! asserted here.

use crate::common;

use common::{create_key, peak_rss, Server};
use serde_json::Value;

/// The bound on the server's peak resident memory.
const MAX_PEAK_BYTES: u64 = 2_000_000_000;

struct Answer {
    status: u16,
    body: Value,
    retry_after: Option<u64>,
}

async fn send(r: reqwest::RequestBuilder) -> Answer {
    let r = r.send().await.expect("request");
    let status = r.status().as_u16();
    let retry_after = r
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let body = common::json_body(status, &r.text().await.expect("body"));
    Answer {
        status,
        body,
        retry_after,
    }
}

/// Asserts a refusal of the budget: 503, `Retry-After`, and a detail that
/// says why and that nothing was charged.
fn assert_refused_early(a: &Answer) {
    assert_eq!(a.status, 503, "{}", a.body);
    let retry = a.retry_after.expect("Retry-After");
    assert!((1..=120).contains(&retry), "Retry-After {retry}");
    let detail = a.body["detail"].as_str().expect("detail");
    assert!(
        detail.contains("heavy work") && detail.contains("nothing was charged"),
        "{detail}"
    );
    assert!(
        detail.ends_with(&format!("retry in {retry} s")),
        "the header and the detail agree: {detail}"
    );
}

/// `n` Premium accounts, and a key each. Their day window binds (100,000
/// a day, unbounded a minute), so what a test charges is read off one
/// window that does not roll over during it (the server's clock stands
/// still: [`common::clock_standing_now`]).
fn accounts(db: &std::path::Path, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let email = format!("heavy{i}@example.com");
            common::add_user(db, &email, "premium", None);
            common::set_limits(db, &email, 1_000_000, Some(100_000));
            create_key(db, &email, "heavy")
        })
        .collect()
}

/// The test: eight accounts, one whole-universe backtest each with
/// a distinct decay, all at once, on the default budget. Every answer is
/// 200 or an uncharged 503 before any work; the server's peak resident
/// memory stays under 2 GB.
#[tokio::test]
async fn eight_accounts_backtesting_the_universe_at_once_stay_under_two_gigabytes() {
    let db = common::fresh_db();
    let keys = accounts(&db, 8);
    // A long time limit, so the admitted runs finish rather than stopping
    // early: the stricter case for memory. The clock stands still, so the
    // units counted land in one day.
    let (name, now) = common::clock_standing_now();
    let mut s = Server::start_with(
        db,
        &[("FORECAST_BACKTEST_TIMEOUT_MS", "600000"), (name, &now)],
    );
    let pid = s.process().id();
    let mut before = Vec::new();
    for key in &keys {
        before.push(common::units_left(&s, key).await);
    }

    let runs: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let (url, key) = (s.url("/api/backtest"), key.clone());
            // Distinct after quantisation: 0.900, 0.911, … 0.977.
            let decay = 0.9 + 0.011 * i as f64;
            tokio::spawn(async move {
                send(
                    reqwest::Client::new()
                        .post(url)
                        .bearer_auth(key)
                        .json(&serde_json::json!({ "decay_factor": decay })),
                )
                .await
            })
        })
        .collect();
    let mut served = 0;
    let mut refused = 0;
    for (i, run) in runs.into_iter().enumerate() {
        let a = run.await.unwrap();
        let charged = before[i] - common::units_left(&s, &keys[i]).await;
        if a.status == 503 {
            assert_refused_early(&a);
            assert_eq!(
                charged, 1,
                "a refused backtest is not charged (1: the look)"
            );
            refused += 1;
        } else {
            assert_eq!(a.status, 200, "{}", a.body);
            assert!(a.body["metrics"]["total_return"].is_number(), "{}", a.body);
            assert_eq!(charged, 1 + 5, "a backtest costs 5 (1: the look)");
            served += 1;
        }
    }
    let peak = peak_rss(pid);
    eprintln!(
        "8 accounts × universe backtest: {served} served, {refused} refused, peak RSS {} MiB",
        peak >> 20
    );
    // A universe backtest is estimated at 872 MiB (64 MiB + 3,232 × 256
    // KiB) against the default 1,024 MiB, so they run one at a time: how
    // many of the others finish within their 10 s wait depends on the
    // machine, but the first admitted always does.
    assert!(served >= 1, "the first backtest admitted is served");
    assert!(
        peak <= MAX_PEAK_BYTES,
        "peak RSS {} MiB is over 2 GB",
        peak >> 20
    );
}

/// Waits (polling `/metrics`, at most 60 s) until the `flood` fills the
/// heavy-work budget: a job waits for its turn or one was refused (or the
/// flood is already over).
async fn budget_filled_by<T>(s: &Server, flood: &[tokio::task::JoinHandle<T>]) {
    let started = std::time::Instant::now();
    loop {
        let metrics = s.admin_text("/metrics").await;
        let value = |name: &str| common::metric(&metrics, name).unwrap_or(0.0);
        if value("forecast_heavy_work_waiting") >= 1.0
            || value("forecast_heavy_work_refused_total{work=\"analysis\"}") >= 1.0
            || flood.iter().all(|run| run.is_finished())
        {
            return;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the flood never filled the budget: {metrics}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// One account floods the server with live analyses (distinct decays, so
/// no cache helps) while ten other accounts each ask for one: the flood is
/// served two at a time with a few waiting and the rest refused at once
/// (503, uncharged), the others' analyses are all served (the budget hands
/// each freed turn to the account running the fewest jobs), and the
/// health check answers 200 throughout.
#[tokio::test]
async fn one_accounts_flood_of_analyses_starves_neither_another_account_nor_health() {
    let db = common::fresh_db();
    let mut others = accounts(&db, 11);
    let flooder = others.pop().expect("eleven");
    // The clock stands still, so the units counted land in one day.
    let (name, now) = common::clock_standing_now();
    let mut s = Server::start_with(db, &[(name, &now)]);
    let pid = s.process().id();
    let before = common::units_left(&s, &flooder).await;
    let mut others_before = Vec::new();
    for key in &others {
        others_before.push(common::units_left(&s, key).await);
    }

    let analysis = |key: String, i: usize| {
        let url = s.url(&format!(
            "/api/analysis/%5EGSPC?decay_factor={:.4}&return_period=30",
            0.85 + 0.0011 * i as f64
        ));
        tokio::spawn(async move { send(reqwest::Client::new().get(url).bearer_auth(key)).await })
    };
    let flood: Vec<_> = (0..90).map(|i| analysis(flooder.clone(), i)).collect();
    // The others ask once the flood fills the budget.
    budget_filled_by(&s, &flood).await;
    let single: Vec<_> = others
        .iter()
        .enumerate()
        .map(|(i, key)| analysis(key.clone(), 100 + i))
        .collect();

    let health_url = s.url("/api/health");
    let health = tokio::spawn(async move {
        let client = reqwest::Client::new();
        let mut answered = 0;
        for _ in 0..100 {
            let r = client.get(&health_url).send().await.expect("health");
            assert_eq!(r.status(), 200, "health during the flood");
            answered += 1;
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        answered
    });

    let (mut served, mut refused) = (0u64, 0u64);
    for run in flood {
        let a = run.await.unwrap();
        if a.status == 503 {
            assert_refused_early(&a);
            refused += 1;
        } else {
            assert_eq!(a.status, 200, "{}", a.body);
            served += 1;
        }
    }
    for (i, run) in single.into_iter().enumerate() {
        let a = run.await.unwrap();
        assert_eq!(
            a.status, 200,
            "another account's analysis during the flood: {}",
            a.body
        );
        assert_eq!(a.body["metadata"]["from_cache"], Value::Bool(false));
        let charged = others_before[i] - common::units_left(&s, &others[i]).await;
        assert_eq!(charged, 2, "an analysis costs 1 (1: the look)");
    }
    assert_eq!(health.await.unwrap(), 100);
    let charged = before - common::units_left(&s, &flooder).await;
    assert_eq!(
        charged,
        served + 1,
        "only the {served} served analyses were charged, not the {refused} refused"
    );
    assert!(
        served >= 2 && refused >= 1,
        "{served} served, {refused} refused"
    );
    // The operator sees the same on /metrics: every refusal counted by
    // kind of work, and the budget idle again.
    let metrics = s.admin_text("/metrics").await;
    let value = |name: &str| common::metric(&metrics, name);
    assert_eq!(
        value("forecast_heavy_work_refused_total{work=\"analysis\"}"),
        Some(refused as f64),
        "{metrics}"
    );
    assert_eq!(value("forecast_heavy_work_running"), Some(0.0));
    assert_eq!(value("forecast_heavy_work_waiting"), Some(0.0));
    assert_eq!(value("forecast_heavy_work_bytes"), Some(0.0));
    let peak = peak_rss(pid);
    eprintln!(
        "flood of 90 analyses + 10 others: {served} served, {refused} refused, peak RSS {} MiB",
        peak >> 20
    );
    assert!(peak <= MAX_PEAK_BYTES, "peak RSS {} MiB", peak >> 20);
}
