//! The plugin registry: hot swap and rollback of the engine under
//! continuous load without a failed request (end to end: a real server
//! under concurrent HTTP load), refused candidates, the admin API and its
//! token, and a shadow run of a deliberately altered engine (in process).

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::Method;
use common::{cli, cli_ok, component, Server};
use forecast_api::admin::{ActiveResponse, Listed, PluginList, ShadowReport};
use forecast_api::backtest::BacktestResponse;
use forecast_domain::PluginKind;
use forecast_testkit::{Api, Auth, Refusal};
use serde::de::DeserializeOwned;
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
fn listed(s: &Server) -> Vec<Listed> {
    let out = cli_ok(&s.db, &["plugin", "list", "--json"], "");
    serde_json::from_str(&out).expect("plugin list --json")
}

fn active_engine(s: &Server) -> String {
    listed(s)
        .into_iter()
        .find(|p| p.kind == PluginKind::Segmentation && p.active)
        .map(|p| format!("{}@{}", p.name, p.version))
        .expect("an active engine")
}

/// The engine version of ^GSPC's analysis with `query`; its refusal.
async fn engine_of_gspc(s: &Server, query: &str) -> Result<String, Refusal> {
    let analysis = s.api().analysis("^GSPC", query).await?;
    Ok(analysis.metadata.engine_version)
}

/// Waits until live analyses report `version` (at most `within`).
async fn wait_for_engine(s: &Server, version: &str, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        if engine_of_gspc(s, "num_segments=21").await.unwrap() == version {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "engine {version} not serving after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One answer of the load: which of the loaders, status, engine version.
type Answer = (usize, u16, String);

/// Waits (polling, at most 60 s) until each of the 4 loaders has had
/// `answers` answers among those after the first `mark`: the second of
/// them was asked after the mark.
async fn each_loader_answers(seen: &Mutex<Vec<Answer>>, mark: usize, answers: usize) {
    let started = Instant::now();
    loop {
        let counts = seen.lock().unwrap()[mark..]
            .iter()
            .fold([0; 4], |mut counts, (i, ..)| {
                counts[*i] += 1;
                counts
            });
        if counts.iter().all(|&n| n >= answers) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the loaders were answered {counts:?} times since answer {mark}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
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
    let first = s.api().analysis("^GSPC", "").await.unwrap().metadata;
    let cached = s.api().analysis("^GSPC", "").await.unwrap().metadata;
    assert!(cached.from_cache);
    assert_eq!(first.engine_version, "1.1.0");

    // Continuous load: live analyses (non-default segments are never cached).
    let stop = Arc::new(AtomicBool::new(false));
    let seen: Arc<Mutex<Vec<Answer>>> = Arc::default();
    let mut load = Vec::new();
    for i in 0..4 {
        let (s, stop, seen) = (s.clone(), stop.clone(), seen.clone());
        load.push(tokio::spawn(async move {
            let query = format!("num_segments={}", 21 + i);
            while !stop.load(Ordering::Relaxed) {
                let answer = match engine_of_gspc(&s, &query).await {
                    Ok(version) => (200, version),
                    Err(refused) => (refused.status, "-".to_string()),
                };
                seen.lock().unwrap().push((i, answer.0, answer.1));
            }
        }));
    }
    each_loader_answers(&seen, 0, 2).await;

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
    let after = s.api().analysis("^GSPC", "").await.unwrap().metadata;
    assert_eq!(after.engine_version, ALTERED);
    assert!(!after.from_cache, "the old engine's cache is not reused");
    let mark = seen.lock().unwrap().len();
    each_loader_answers(&seen, mark, 2).await;

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
    // Every loader's request from now on started after the rollback.
    let mark = seen.lock().unwrap().len();
    each_loader_answers(&seen, mark, 2).await;
    stop.store(true, Ordering::Relaxed);
    for t in load {
        t.await.unwrap();
    }

    let seen = seen.lock().unwrap();
    assert!(seen.len() > 20, "the load ran ({} requests)", seen.len());
    let failed: Vec<_> = seen
        .iter()
        .filter(|(_, status, _)| *status != 200)
        .collect();
    assert!(
        failed.is_empty(),
        "failed requests during the swap: {failed:?}"
    );
    let versions: Vec<&str> = seen.iter().map(|(_, _, v)| v.as_str()).collect();
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
    assert_eq!(
        engine_of_gspc(&s, "num_segments=21").await.unwrap(),
        "1.1.0"
    );

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

/// The typed client holding `token` (none: anonymous).
fn admin(s: &Server, token: Option<&str>) -> Api {
    s.api_as(token.map_or(Auth::Anonymous, |t| Auth::Bearer(t.into())))
}

/// `method /api/admin/{path}` with the admin token: the answer as `T`, or
/// the refusal.
async fn as_admin<T: DeserializeOwned>(
    s: &Server,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Result<T, Refusal> {
    let answer = admin(s, Some(TOKEN))
        .send(method, &format!("/admin/{path}"), body.as_ref())
        .await;
    Api::typed(answer).await
}

#[tokio::test]
async fn the_admin_api_needs_its_token_and_shadows_an_altered_engine() {
    let plain = Server::app_with(common::fresh_db(), &[("FORECAST_ADMIN_TOKEN", "")]).await;
    let refused = as_admin::<PluginList>(&plain, Method::GET, "plugins", None).await;
    let refused = refused.unwrap_err();
    assert_eq!(
        refused.status, 403,
        "disabled without FORECAST_ADMIN_TOKEN: {refused}"
    );
    drop(plain);

    let s = Server::app_with(common::fresh_db(), &fast_poll()).await;
    only_the_admin_token_lists_the_plugins(&s).await;

    // Upload the altered engine as raw bytes.
    let bytes = std::fs::read(component("segmentation_altered")).unwrap();
    let query = format!("kind=segmentation&name=default&version={ALTERED}");
    admin(&s, Some(TOKEN))
        .add_plugin(&query, bytes)
        .await
        .expect("the altered engine is added");

    a_shadowed_candidate_is_compared_and_never_answers(&s).await;

    // Promote it through the API, then roll back.
    let activate = json!({"kind": "segmentation", "name": "default", "version": ALTERED});
    as_admin::<ActiveResponse>(&s, Method::POST, "plugins/activate", Some(activate))
        .await
        .unwrap();
    assert_eq!(
        engine_of_gspc(&s, "num_segments=22").await.unwrap(),
        ALTERED,
        "this replica switched at once"
    );
    let rollback = json!({"kind": "segmentation", "name": "default"});
    let rolled = as_admin::<ActiveResponse>(&s, Method::POST, "plugins/rollback", Some(rollback))
        .await
        .unwrap();
    assert_eq!(rolled.active.version, "1.1.0");
    let report_status = || async {
        match shadow_report(&s).await {
            Ok(_) => 200,
            Err(refused) => refused.status,
        }
    };
    assert_eq!(
        report_status().await,
        404,
        "promoting the candidate ended its shadow run"
    );
    // A shadow run can also be stopped.
    let shadow =
        json!({"kind": "segmentation", "name": "default", "version": ALTERED, "sample": 0.5});
    as_admin::<Value>(&s, Method::POST, "shadow", Some(shadow))
        .await
        .unwrap();
    as_admin::<Value>(&s, Method::DELETE, "shadow/segmentation", None)
        .await
        .unwrap();
    assert_eq!(report_status().await, 404);
}

/// The engine's shadow report, or its refusal.
async fn shadow_report(s: &Server) -> Result<ShadowReport, Refusal> {
    as_admin(s, Method::GET, "shadow/segmentation", None).await
}

/// No token, a wrong one and a user's API key are 401; the admin token
/// lists the built-in plugins.
async fn only_the_admin_token_lists_the_plugins(s: &Server) {
    for token in [
        None,
        Some("wrong-token-wrong-token"),
        Some(common::test_key()),
    ] {
        let refused = admin(s, token).get::<PluginList>("/admin/plugins").await;
        assert_eq!(
            refused.unwrap_err().status,
            401,
            "{token:?} is not the admin token (a user's API key is not one either)"
        );
    }
    let list: PluginList = as_admin(s, Method::GET, "plugins", None).await.unwrap();
    let names: Vec<String> = list
        .plugins
        .iter()
        .map(|p| format!("{}/{}", p.kind.as_str(), p.name))
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
    let shadow = |sample: f64| json!({"kind": "segmentation", "name": "default", "version": ALTERED, "sample": sample});
    as_admin::<Value>(s, Method::POST, "shadow", Some(shadow(1.0)))
        .await
        .unwrap();
    let refused = as_admin::<Value>(s, Method::POST, "shadow", Some(shadow(1.5))).await;
    assert_eq!(refused.unwrap_err().status, 400, "sample outside (0, 1]");

    for ticker in ["^GSPC", "^IXIC", "BTC-USD", "AAPL", "^GSPC"] {
        let answer = s.api().analysis(ticker, "return_period=30").await.unwrap();
        assert_eq!(
            answer.metadata.engine_version, "1.1.0",
            "the candidate's answer is never returned"
        );
    }
    let mut report = shadow_report(s).await.unwrap();
    for _ in 0..100 {
        if report.samples >= 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        report = shadow_report(s).await.unwrap();
    }
    assert_eq!(report.samples, 5, "{report:?}");
    assert_eq!(report.candidate, format!("segmentation/default@{ALTERED}"));
    assert_eq!(report.errors, 0);
    assert!(report.identical_share.unwrap() < 1.0, "{report:?}");
    let diffs = &report.max_differences;
    assert!(
        diffs["time_series.expected_returns[]"] > 0.0,
        "the EMA of a lower decay differs: {report:?}"
    );
    assert!(
        !diffs.contains_key("time_series.prices[]"),
        "prices are the same input: {report:?}"
    );
    assert!(report.active_latency_ms.unwrap().p50 > 0.0);
    assert!(report.candidate_latency_ms.unwrap().p50 > 0.0);
}

#[tokio::test]
async fn a_registered_strategy_serves_backtests_once_activated() {
    let s = Server::app_with(common::fresh_db(), &fast_poll()).await;
    let backtest = |strategy: &'static str| {
        let s = &s;
        async move {
            let body = json!({"strategy": strategy, "tickers": ["^GSPC", "^IXIC", "^DJI"],
                              "top_n": 2, "start_date": "2008-01-01", "end_date": "2012-12-31"});
            s.api()
                .post::<_, BacktestResponse>("/backtest", &body)
                .await
        }
    };
    let dip = component("dip_buyer");
    common::add_plugin(&s.db, &dip, "strategy", "dip-buyer", "0.1.0");
    let refused = backtest("dip-buyer").await.unwrap_err();
    assert_eq!(refused.status, 400, "registered is not active: {refused}");
    common::activate_plugin(&s.db, "strategy", "dip-buyer", "0.1.0");
    let started = Instant::now();
    loop {
        match backtest("dip-buyer").await {
            Ok(answer) => {
                assert_eq!(answer.metadata.strategy, "dip-buyer");
                break;
            }
            Err(refused) => assert!(started.elapsed() < Duration::from_secs(5), "{refused}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The built-ins stay, and the strategy's name is its own.
    backtest("topn").await.expect("a built-in still backtests");
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
