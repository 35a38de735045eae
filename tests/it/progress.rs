//! Progress of long runs (`Progress-Id` on the run's request, `GET
//! /api/progress/{id}` while it lasts) against the real binary: phases and
//! steps while a long backtest runs, the same run seen from the web
//! session of the same account, nothing once it has answered, a bad id
//! refused before any work, and a run whose client closes its request
//! gone from the board with its slot free again (the release time is
//! printed: docs/BENCHMARKS.md).

use std::time::{Duration, Instant};

use crate::common;

use common::{assert_error, test_key, Browser, Server, TEST_EMAIL, TEST_PASSWORD};
use forecast_api::research::ProgressBody;
use serde_json::{json, Value};

async fn post(s: &Server, id: Option<&str>, body: &Value) -> (u16, Value) {
    let mut r = reqwest::Client::new()
        .post(s.url("/api/backtest"))
        .bearer_auth(test_key())
        .json(body);
    if let Some(id) = id {
        r = r.header("progress-id", id);
    }
    let r = r.send().await.expect("request");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn progress(s: &Server, id: &str) -> (u16, Value) {
    s.get_as(&format!("/api/progress/{id}"), Some(test_key()))
        .await
}

#[tokio::test]
async fn a_long_runs_progress_is_readable_while_it_lasts_and_closing_it_frees_the_slot() {
    let s = Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_BACKTESTS_PER_USER", "1"),
            ("FORECAST_BACKTEST_TIMEOUT_MS", "600000"),
        ],
    );
    // A bad id is refused before any work; an unknown one is a 404.
    let short = json!({"tickers": ["^GSPC", "^DJI"], "top_n": 1,
                       "start_date": "2010-01-01", "end_date": "2012-12-31"});
    assert_error(
        &post(&s, Some("a b"), &short).await,
        400,
        &["Progress-Id must be 1 to 64"],
    );
    assert_error(
        &progress(&s, "nothing-here").await,
        404,
        &["no run of yours", "nothing-here"],
    );
    // A run that has answered is gone from the board.
    assert_eq!(post(&s, Some("short-1"), &short).await.0, 200);
    assert_eq!(progress(&s, "short-1").await.0, 404);

    // A run of minutes: every asset, daily, from 1900.
    let long = json!({"decay_factor": 0.833, "rebalance": "daily", "start_date": "1900-01-01"});
    let run = tokio::spawn({
        let (url, key, long) = (s.url("/api/backtest"), test_key().to_string(), long.clone());
        async move {
            reqwest::Client::new()
                .post(&url)
                .bearer_auth(&key)
                .header("progress-id", "long-1")
                .json(&long)
                .send()
                .await
        }
    });
    let mut seen: Vec<ProgressBody> = Vec::new();
    for _ in 0..600 {
        assert!(!run.is_finished(), "the long run answered: {:?}", run.await);
        let (status, body) = progress(&s, "long-1").await;
        if status == 200 {
            let p: ProgressBody = serde_json::from_value(body).unwrap();
            let moving = p.done > 0 && matches!(p.phase.as_str(), "loading" | "running");
            seen.push(p);
            if moving {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let last = seen.last().expect("the run was tracked");
    assert!(last.done > 0 && last.done <= last.total, "{seen:?}");
    assert_eq!(last.fraction, Some(last.done as f64 / last.total as f64));
    assert!(seen
        .iter()
        .all(|p| ["waiting", "loading", "running"].contains(&p.phase.as_str())));
    // The web session of the same account reads the same run.
    let b = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    let (status, web) = b
        .send(reqwest::Method::GET, "/web/api/progress/long-1", None)
        .await;
    assert_eq!(status, 200, "{web}");
    assert!(web["elapsed_ms"].as_u64().unwrap() >= last.elapsed_ms);

    // Closing the request: the run leaves the board and its slot is free.
    run.abort();
    let closed = Instant::now();
    let mut gone = None;
    let mut free = None;
    while gone.is_none() || free.is_none() {
        assert!(
            closed.elapsed() < Duration::from_secs(60),
            "gone {gone:?}, free {free:?}"
        );
        if gone.is_none() && progress(&s, "long-1").await.0 == 404 {
            gone = Some(closed.elapsed());
        }
        // An invalid body: 400 once the slot is free, 429 while it is held.
        if free.is_none() && post(&s, None, &json!({"top_n": 0})).await.0 == 400 {
            free = Some(closed.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "cancel: progress gone after {} ms, slot free after {} ms",
        gone.unwrap().as_millis(),
        free.unwrap().as_millis()
    );
}

/// A sweep over every asset cancelled by closing its request: the server's
/// heavy-work budget reads idle again on `/metrics` (nothing running,
/// waiting or reserved), the progress is gone and the account's slot free.
/// How long each took is printed (docs/BENCHMARKS.md), not asserted.
#[tokio::test]
async fn a_cancelled_universe_sweep_gives_back_its_heavy_work_ticket() {
    let s = Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_BACKTESTS_PER_USER", "1"),
            ("FORECAST_RESEARCH_TIMEOUT_MS", "600000"),
        ],
    );
    let heavy = |metrics: &str, name: &str| common::metric(metrics, name).unwrap_or(-1.0);
    // Every asset, daily, from 1900, four combinations: minutes of work.
    let sweep = json!({"rebalance": "daily", "start_date": "1900-01-01",
                       "sweep": {"top_n": [2, 4, 8, 16]}});
    let run = tokio::spawn({
        let (url, key) = (s.url("/api/backtest/sweep"), test_key().to_string());
        async move {
            reqwest::Client::new()
                .post(&url)
                .bearer_auth(&key)
                .header("progress-id", "sweep-1")
                .json(&sweep)
                .send()
                .await
        }
    });
    let started = Instant::now();
    loop {
        assert!(!run.is_finished(), "the sweep answered: {:?}", run.await);
        assert!(started.elapsed() < Duration::from_secs(120), "never ran");
        let (status, body) = progress(&s, "sweep-1").await;
        let metrics = s.admin_text("/metrics").await;
        if status == 200
            && body["phase"] != "waiting"
            && heavy(&metrics, "forecast_heavy_work_running") >= 1.0
            && heavy(&metrics, "forecast_heavy_work_bytes") > 0.0
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    run.abort();
    let closed = Instant::now();
    let (mut idle, mut gone, mut free) = (None, None, None);
    while idle.is_none() || gone.is_none() || free.is_none() {
        assert!(
            closed.elapsed() < Duration::from_secs(60),
            "idle {idle:?}, gone {gone:?}, free {free:?}"
        );
        let metrics = s.admin_text("/metrics").await;
        let at_rest = ["running", "waiting", "bytes"]
            .iter()
            .all(|m| heavy(&metrics, &format!("forecast_heavy_work_{m}")) == 0.0);
        if idle.is_none() && at_rest {
            idle = Some(closed.elapsed());
        }
        if gone.is_none() && progress(&s, "sweep-1").await.0 == 404 {
            gone = Some(closed.elapsed());
        }
        if free.is_none() && post(&s, None, &json!({"top_n": 0})).await.0 == 400 {
            free = Some(closed.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "sweep cancel: heavy-work budget idle after {} ms, progress gone after {} ms, \
         slot free after {} ms",
        idle.unwrap().as_millis(),
        gone.unwrap().as_millis(),
        free.unwrap().as_millis()
    );
}
