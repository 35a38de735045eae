//! The plugin registry: hot swap and rollback of the engine under
//! continuous load without a failed request (end to end: a real server
//! under concurrent HTTP load), refused candidates, the admin API and its
//! token, and a shadow run of a deliberately altered engine (in process).

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{cli, cli_ok, component, Server};
use serde_json::{json, Value};

const ALTERED: &str = "1.1.0-altered";
const TOKEN: &str = "admin-token-for-tests-0123456789";

fn fast_poll() -> [(&'static str, &'static str); 2] {
    [
        ("FORECAST_PLUGIN_POLL_MS", "200"),
        ("FORECAST_ADMIN_TOKEN", TOKEN),
    ]
}

/// `forecast plugin list --json` against the server's database.
fn listed(s: &Server) -> Vec<Value> {
    let out = cli_ok(&s.db, &["plugin", "list", "--json"], "");
    serde_json::from_str::<Vec<Value>>(&out).expect("plugin list --json")
}

fn active_engine(s: &Server) -> String {
    listed(s)
        .into_iter()
        .find(|p| p["kind"] == "segmentation" && p["active"] == true)
        .map(|p| {
            format!(
                "{}@{}",
                p["name"].as_str().unwrap(),
                p["version"].as_str().unwrap()
            )
        })
        .expect("an active engine")
}

/// Waits until live analyses report `version` (at most `within`).
async fn wait_for_engine(s: &Server, version: &str, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let (status, body) = s.get("/api/analysis/%5EGSPC?num_segments=21").await;
        assert_eq!(status, 200, "{body}");
        if body["metadata"]["engine_version"] == version {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "engine {version} not serving after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

// End to end: the swap must hold under real concurrent HTTP load.
#[tokio::test]
async fn the_engine_swaps_and_rolls_back_under_load_without_a_failed_request() {
    let s = Arc::new(Server::start_with(common::fresh_db(), &fast_poll()));
    assert_eq!(
        active_engine(&s),
        "default@1.1.0",
        "built-ins are registered and active"
    );

    // A cached answer of the old engine is never served as the new one's.
    let (_, first) = s.get("/api/analysis/%5EGSPC").await;
    let (_, cached) = s.get("/api/analysis/%5EGSPC").await;
    assert_eq!(cached["metadata"]["from_cache"], true);
    assert_eq!(first["metadata"]["engine_version"], "1.1.0");

    // Continuous load: live analyses (non-default segments are never cached).
    let stop = Arc::new(AtomicBool::new(false));
    let seen: Arc<Mutex<Vec<(u16, String)>>> = Arc::default();
    let mut load = Vec::new();
    for i in 0..4 {
        let (s, stop, seen) = (s.clone(), stop.clone(), seen.clone());
        load.push(tokio::spawn(async move {
            let path = format!("/api/analysis/%5EGSPC?num_segments={}", 21 + i);
            while !stop.load(Ordering::Relaxed) {
                let (status, body) = s.get(&path).await;
                let version = body["metadata"]["engine_version"]
                    .as_str()
                    .unwrap_or("-")
                    .to_string();
                seen.lock().unwrap().push((status, version));
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    let altered = component("segmentation_altered");
    let add = common::add_plugin(&s.db, &altered, "segmentation", "default", ALTERED);
    assert!(
        add.contains("registered segmentation/default@1.1.0-altered"),
        "{add}"
    );
    common::activate_plugin(&s.db, "segmentation", "default", ALTERED);
    let took = wait_for_engine(&s, ALTERED, Duration::from_secs(5)).await;
    assert!(took < Duration::from_secs(5));
    assert_eq!(active_engine(&s), format!("default@{ALTERED}"));
    let (_, after) = s.get("/api/analysis/%5EGSPC").await;
    assert_eq!(after["metadata"]["engine_version"], ALTERED);
    assert_eq!(
        after["metadata"]["from_cache"], false,
        "the old engine's cache is not reused"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;

    let out = cli_ok(
        &s.db,
        &["plugin", "rollback", "segmentation", "default"],
        "",
    );
    assert!(
        out.contains("segmentation/default@1.1.0 is active again"),
        "{out}"
    );
    wait_for_engine(&s, "1.1.0", Duration::from_secs(5)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    for t in load {
        t.await.unwrap();
    }

    let seen = seen.lock().unwrap();
    assert!(seen.len() > 20, "the load ran ({} requests)", seen.len());
    let failed: Vec<_> = seen.iter().filter(|(status, _)| *status != 200).collect();
    assert!(
        failed.is_empty(),
        "failed requests during the swap: {failed:?}"
    );
    let versions: Vec<&str> = seen.iter().map(|(_, v)| v.as_str()).collect();
    let first_altered = versions
        .iter()
        .position(|v| *v == ALTERED)
        .expect("new answers");
    assert!(versions[..first_altered].iter().all(|v| *v == "1.1.0"));
    assert_eq!(*versions.last().unwrap(), "1.1.0", "rolled back");
    // A rolled-back activation is never active again: rolling back further
    // returns nothing to roll back to.
    let (ok, _, err) = cli(&s.db, &["plugin", "rollback", "segmentation", "default"]);
    assert!(!ok);
    assert!(err.contains("no earlier version"), "{err}");
}

#[tokio::test]
async fn failing_candidates_are_refused_and_change_nothing() {
    let s = Server::app_with(common::fresh_db(), &fast_poll()).await;
    let misbehave = component("misbehave");
    // It type-checks, so it can be registered...
    common::add_plugin(
        &s.db,
        &misbehave,
        "segmentation",
        "misbehave",
        "0.0.1-misbehave",
    );
    // ...but it fails the engine's self-tests, so it cannot be activated.
    let (ok, _, err) = cli(
        &s.db,
        &[
            "plugin",
            "activate",
            "segmentation",
            "misbehave",
            "0.0.1-misbehave",
        ],
    );
    assert!(!ok);
    assert!(err.contains("self-test failed"), "{err}");
    assert_eq!(active_engine(&s), "default@1.1.0");
    let (_, body) = s.get("/api/analysis/%5EGSPC?num_segments=21").await;
    assert_eq!(body["metadata"]["engine_version"], "1.1.0");

    // Not a component of the kind, or not the version it claims: refused.
    let scorer = component("scorer");
    for (args, needle) in [
        (
            vec![
                "--kind",
                "segmentation",
                "--name",
                "x",
                "--version",
                "1.0.0",
            ],
            "not a loadable segmentation plugin",
        ),
        (
            vec!["--kind", "scorer", "--name", "x", "--version", "9.9.9"],
            "reports version",
        ),
        (
            vec!["--kind", "engine", "--name", "x", "--version", "1.0.0"],
            "unknown plugin kind",
        ),
        (
            vec!["--kind", "scorer", "--name", "x", "--version", "one"],
            "semantic version",
        ),
    ] {
        let mut all = vec!["plugin", "add", scorer.to_str().unwrap()];
        all.extend(args);
        let (ok, _, err) = cli(&s.db, &all);
        assert!(!ok, "{all:?}");
        assert!(err.contains(needle), "{all:?}: {err}");
    }
    // The same version with other bytes is a conflict.
    let altered = component("segmentation_altered");
    let (ok, _, err) = cli(
        &s.db,
        &[
            "plugin",
            "add",
            altered.to_str().unwrap(),
            "--kind",
            "segmentation",
            "--name",
            "misbehave",
            "--version",
            "0.0.1-misbehave",
        ],
    );
    assert!(!ok);
    assert!(
        err.contains("reports version") || err.contains("other bytes"),
        "{err}"
    );
}

async fn admin(
    s: &Server,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = s.client().request(method.parse().unwrap(), s.url(path));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// [`admin`] with the admin token.
async fn as_admin(s: &Server, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    admin(s, method, path, Some(TOKEN), body).await
}

#[tokio::test]
async fn the_admin_api_needs_its_token_and_shadows_an_altered_engine() {
    let plain = Server::app_with(common::fresh_db(), &[("FORECAST_ADMIN_TOKEN", "")]).await;
    let (status, body) = as_admin(&plain, "GET", "/api/admin/plugins", None).await;
    assert_eq!(status, 403, "disabled without FORECAST_ADMIN_TOKEN: {body}");
    drop(plain);

    let s = Server::app_with(common::fresh_db(), &fast_poll()).await;
    only_the_admin_token_lists_the_plugins(&s).await;

    // Upload the altered engine as raw bytes.
    let bytes = std::fs::read(component("segmentation_altered")).unwrap();
    let r = s
        .client()
        .post(s.url(&format!(
            "/api/admin/plugins?kind=segmentation&name=default&version={ALTERED}"
        )))
        .bearer_auth(TOKEN)
        .header("content-type", "application/wasm")
        .body(bytes)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());

    a_shadowed_candidate_is_compared_and_never_answers(&s).await;

    // Promote it through the API, then roll back.
    let (status, body) = as_admin(
        &s,
        "POST",
        "/api/admin/plugins/activate",
        Some(json!({"kind": "segmentation", "name": "default", "version": ALTERED})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, body) = s.get("/api/analysis/%5EGSPC?num_segments=22").await;
    assert_eq!(
        body["metadata"]["engine_version"], ALTERED,
        "this replica switched at once"
    );
    let (status, body) = as_admin(
        &s,
        "POST",
        "/api/admin/plugins/rollback",
        Some(json!({"kind": "segmentation", "name": "default"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["active"]["version"], "1.1.0");
    let report_status = || as_admin(&s, "GET", "/api/admin/shadow/segmentation", None);
    assert_eq!(
        report_status().await.0,
        404,
        "promoting the candidate ended its shadow run"
    );
    // A shadow run can also be stopped.
    let shadow =
        json!({"kind": "segmentation", "name": "default", "version": ALTERED, "sample": 0.5});
    let (status, _) = as_admin(&s, "POST", "/api/admin/shadow", Some(shadow)).await;
    assert_eq!(status, 200);
    let stop = as_admin(&s, "DELETE", "/api/admin/shadow/segmentation", None).await;
    assert_eq!(stop.0, 200);
    assert_eq!(report_status().await.0, 404);
}

/// No token, a wrong one and a user's API key are 401; the admin token
/// lists the built-in plugins.
async fn only_the_admin_token_lists_the_plugins(s: &Server) {
    for token in [
        None,
        Some("wrong-token-wrong-token"),
        Some(common::test_key()),
    ] {
        assert_eq!(
            admin(s, "GET", "/api/admin/plugins", token, None).await.0,
            401,
            "{token:?} is not the admin token (a user's API key is not one either)"
        );
    }
    let (status, list) = as_admin(s, "GET", "/api/admin/plugins", None).await;
    assert_eq!(status, 200);
    let names: Vec<String> = list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p["kind"].as_str().unwrap(),
                p["name"].as_str().unwrap()
            )
        })
        .collect();
    for n in [
        "segmentation/default",
        "scorer/default",
        "strategy/topn",
        "strategy/zscore",
        "strategy/longshort",
    ] {
        assert!(names.contains(&n.to_string()), "{n} in {names:?}");
    }
}

/// The uploaded altered engine shadowed on every request: the answers
/// are still the active engine's, and the shadow report compares the two
/// on each of them.
async fn a_shadowed_candidate_is_compared_and_never_answers(s: &Server) {
    let (status, body) = as_admin(
        s,
        "POST",
        "/api/admin/shadow",
        Some(json!({"kind": "segmentation", "name": "default", "version": ALTERED, "sample": 1.0})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = as_admin(
        s,
        "POST",
        "/api/admin/shadow",
        Some(json!({"kind": "segmentation", "name": "default", "version": ALTERED, "sample": 1.5})),
    )
    .await;
    assert_eq!(status, 400, "sample outside (0, 1]");

    for ticker in ["%5EGSPC", "%5EIXIC", "BTC-USD", "AAPL", "%5EGSPC"] {
        let (status, body) = s
            .get(&format!("/api/analysis/{ticker}?return_period=30"))
            .await;
        assert_eq!(status, 200);
        assert_eq!(
            body["metadata"]["engine_version"], "1.1.0",
            "the candidate's answer is never returned"
        );
    }
    let mut report = Value::Null;
    for _ in 0..100 {
        let (status, r) = as_admin(s, "GET", "/api/admin/shadow/segmentation", None).await;
        assert_eq!(status, 200, "{r}");
        report = r;
        if report["samples"].as_u64().unwrap() >= 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(report["samples"], 5, "{report}");
    assert_eq!(
        report["candidate"],
        format!("segmentation/default@{ALTERED}")
    );
    assert_eq!(report["errors"], 0);
    assert!(
        report["identical_share"].as_f64().unwrap() < 1.0,
        "{report}"
    );
    let diffs = report["max_differences"].as_object().unwrap();
    assert!(
        diffs["time_series.expected_returns[]"].as_f64().unwrap() > 0.0,
        "the EMA of a lower decay differs: {report}"
    );
    assert!(
        !diffs.contains_key("time_series.prices[]"),
        "prices are the same input: {report}"
    );
    assert!(report["active_latency_ms"]["p50"].as_f64().unwrap() > 0.0);
    assert!(report["candidate_latency_ms"]["p50"].as_f64().unwrap() > 0.0);
}

#[tokio::test]
async fn a_registered_strategy_serves_backtests_once_activated() {
    let s = Server::app_with(common::fresh_db(), &fast_poll()).await;
    let backtest = |strategy: &'static str| {
        let s = &s;
        async move {
            let r = s
                .client()
                .post(s.url("/api/backtest"))
                .bearer_auth(common::test_key())
                .json(
                    &json!({"strategy": strategy, "tickers": ["^GSPC", "^IXIC", "^DJI"], "top_n": 2,
                              "start_date": "2008-01-01", "end_date": "2012-12-31"}),
                )
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let dip = component("dip_buyer");
    common::add_plugin(&s.db, &dip, "strategy", "dip-buyer", "0.1.0");
    let (status, body) = backtest("dip-buyer").await;
    assert_eq!(status, 400, "registered is not active: {body}");
    common::activate_plugin(&s.db, "strategy", "dip-buyer", "0.1.0");
    let started = Instant::now();
    loop {
        let (status, body) = backtest("dip-buyer").await;
        if status == 200 {
            assert_eq!(body["metadata"]["strategy"], "dip-buyer");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "{body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The built-ins stay, and the strategy's name is its own.
    assert_eq!(backtest("topn").await.0, 200);
    let (ok, _, err) = cli(
        &s.db,
        &[
            "plugin",
            "add",
            dip.to_str().unwrap(),
            "--kind",
            "strategy",
            "--name",
            "other",
            "--version",
            "0.1.0",
        ],
    );
    assert!(!ok);
    assert!(err.contains("calls itself 'dip-buyer'"), "{err}");
}
