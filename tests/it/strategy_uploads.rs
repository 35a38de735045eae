//! Strategies uploaded by their authors (issue 26): an author uploads a
//! component (`POST /api/strategies`), runs it by `@handle/name`, shares
//! it, picks its version and deletes it; another account cannot tell a
//! private strategy from a name that does not exist; versions are
//! immutable; bad bodies are refused with the reason and store nothing.

use crate::common;

use axum::http::Method;
use common::{component, create_key, test_key, Browser, Server, TEST_EMAIL, TEST_PASSWORD};
use forecast_api::authored::{StrategyChange, UploadedStrategy};
use forecast_api::backtest::{BacktestResponse, PluginUsage};
use forecast_testkit::{units_left, Api, Auth, Refusal, WASM};
use serde_json::json;

/// The typed client holding `key`.
fn with_key(s: &Server, key: &str) -> Api {
    s.api_as(Auth::Bearer(key.to_string()))
}

/// `POST /api/strategies` of `bytes` as a component with `key`: the
/// status (201 stored, 200 already stored) and what is stored, or the
/// refusal.
async fn upload(s: &Server, key: &str, bytes: Vec<u8>) -> Result<(u16, UploadedStrategy), Refusal> {
    with_key(s, key).upload_strategy(WASM, bytes).await
}

/// A backtest of `strategy` over the indices with `key`.
async fn backtest(s: &Server, key: &str, strategy: &str) -> Result<BacktestResponse, Refusal> {
    let body = json!({ "strategy": strategy, "category": "Indices" });
    with_key(s, key).post("/backtest", &body).await
}

/// The status of `DELETE /api/strategies/{name}` with `key`.
async fn delete(s: &Server, key: &str, name: &str) -> u16 {
    let path = format!("/strategies/{name}");
    let response = with_key(s, key)
        .send::<()>(Method::DELETE, &path, None)
        .await;
    response.status().as_u16()
}

/// The names `GET /api/strategies` lists for `key`, with their visibility.
async fn listed(s: &Server, key: &str) -> Vec<(String, String)> {
    let list = with_key(s, key).strategies().await.unwrap();
    list.strategies
        .into_iter()
        .map(|s| (s.name, s.visibility))
        .collect()
}

fn dip_buyer() -> Vec<u8> {
    std::fs::read(component("dip_buyer")).expect("make components builds dip_buyer")
}

/// The same component with a custom section appended: the same strategy,
/// name and version, other bytes.
fn dip_buyer_other_bytes() -> Vec<u8> {
    let mut bytes = dip_buyer();
    bytes.extend_from_slice(&[0x00, 0x03, 0x01, b'x', b'y']);
    bytes
}

fn second_account(db: &std::path::Path) -> String {
    common::add_user(db, "other@example.com", "premium", None);
    create_key(db, "other@example.com", "other")
}

#[tokio::test]
async fn an_author_uploads_runs_shares_picks_and_deletes_a_strategy() {
    let s = Server::app().await;
    let author = test_key().to_string();
    let other = second_account(&s.db);

    let name = the_same_bytes_uploaded_twice_are_stored_once(&s, &author).await;
    a_private_strategy_is_answered_to_others_as_a_missing_one(&s, &author, &other, &name).await;
    only_the_owner_shares_it_and_picks_its_version(&s, &author, &other, &name).await;

    // Deleted: gone for everyone; its version is never reused for other bytes.
    assert_eq!(delete(&s, &other, &name).await, 404);
    assert_eq!(delete(&s, &author, &name).await, 204);
    assert_eq!(backtest(&s, &author, &name).await.unwrap_err().status, 400);
    assert!(!listed(&s, &author).await.iter().any(|(n, _)| n == &name));
    let reused = upload(&s, &author, dip_buyer_other_bytes()).await;
    reused
        .unwrap_err()
        .assert(409, &["already stored with other bytes"]);
    let (status, revived) = upload(&s, &author, dip_buyer()).await.unwrap();
    assert_eq!(status, 201, "{revived:?}");
    assert!(!revived.shared, "revived private");
}

/// The author uploads dip-buyer: stored private under their handle; the
/// same bytes again are not stored twice. The strategy's name.
async fn the_same_bytes_uploaded_twice_are_stored_once(s: &Server, author: &str) -> String {
    let (status, first) = upload(s, author, dip_buyer()).await.unwrap();
    assert_eq!(status, 201, "{first:?}");
    let name = first.strategy.clone();
    assert!(
        name.starts_with("@u") && name.ends_with("/dip-buyer"),
        "{name}"
    );
    assert_eq!(first.version, "0.1.0");
    assert!(!first.shared);
    assert_eq!(first.current_version, "0.1.0");
    let imports = &first.imports;
    assert!(
        imports
            .iter()
            .any(|i| i.contains("forecast:plugins/host-log")),
        "{imports:?}"
    );
    let (status, again) = upload(s, author, dip_buyer()).await.unwrap();
    assert_eq!(status, 200, "the same bytes again: {again:?}");
    assert!(!again.created);
    assert_eq!(again.sha256, first.sha256);
    name
}

/// Private: listed and runnable by its owner only; another account gets
/// exactly what a name that does not exist gets.
async fn a_private_strategy_is_answered_to_others_as_a_missing_one(
    s: &Server,
    author: &str,
    other: &str,
    name: &str,
) {
    assert!(listed(s, author)
        .await
        .contains(&(name.to_string(), "private".into())));
    assert!(!listed(s, other).await.iter().any(|(n, _)| n == name));
    let ran = backtest(s, author, name).await.unwrap();
    assert!(ran.metrics.total_return.is_some(), "{:?}", ran.metrics);
    let hidden = backtest(s, other, name).await.unwrap_err();
    let (handle, _) = name.split_once('/').unwrap();
    let missing_name = format!("{handle}/no-such-strategy");
    let missing = backtest(s, other, &missing_name).await.unwrap_err();
    assert_eq!((hidden.status, missing.status), (400, 400));
    let detail = |r: &Refusal, named: &str| r.detail.as_deref().unwrap().replace(named, "N");
    assert_eq!(
        detail(&hidden, name),
        detail(&missing, &missing_name),
        "a private strategy is answered as a missing one"
    );
}

/// Only the owner changes it; another account gets the 404 of a name
/// that does not exist. Shared, others list and run it, pinned too; an
/// unknown version is refused and an empty change changes nothing.
async fn only_the_owner_shares_it_and_picks_its_version(
    s: &Server,
    author: &str,
    other: &str,
    name: &str,
) {
    let patch = |key, change: StrategyChange| async move {
        with_key(s, key).change_strategy(name, &change).await
    };
    let share = StrategyChange {
        shared: Some(true),
        ..Default::default()
    };
    let by_other = patch(other, share.clone()).await.unwrap_err();
    assert_eq!(by_other.status, 404, "{by_other}");
    let shared = patch(author, share).await.unwrap();
    assert!(shared.shared);
    assert!(listed(s, other)
        .await
        .contains(&(name.to_string(), "shared".into())));
    backtest(s, other, name).await.unwrap();
    let pinned = backtest(s, other, &format!("{name}@0.1.0")).await;
    pinned.expect("a pinned version");
    let no_version = StrategyChange {
        current_version: Some("9.9.9".into()),
        ..Default::default()
    };
    let refused = patch(author, no_version).await.unwrap_err();
    assert_eq!(refused.status, 400, "{refused}");
    let nothing = patch(author, StrategyChange::default()).await;
    assert!(nothing.expect("an empty change").shared, "unchanged");
}

#[tokio::test]
async fn a_stored_version_never_changes_its_bytes() {
    let s = Server::app().await;
    let key = test_key();
    assert_eq!(upload(&s, key, dip_buyer()).await.unwrap().0, 201);
    let other = upload(&s, key, dip_buyer_other_bytes()).await;
    other
        .unwrap_err()
        .assert(409, &["version 0.1.0", "raise the version"]);
}

/// An upload that outlasts its compile deadline (the wait for a plugin
/// slot and the compilation together; here 1 ms, which no compile meets
/// with the module cache off) is refused with its own answer, never the
/// server's 504, and nothing is stored (decision 0096).
#[tokio::test]
async fn an_upload_past_its_compile_deadline_gets_its_own_refusal() {
    let s = Server::start_with(
        common::fresh_db(),
        &[("FORECAST_UPLOAD_COMPILE_TIMEOUT_MS", "1")],
    );
    let refused = s.api().upload_strategy(WASM, dip_buyer()).await;
    let refused = refused.expect_err("past its compile deadline");
    refused.assert(422, &["took longer than 0.001 s", "nothing was stored"]);
    let uploads: Vec<_> = listed(&s, test_key())
        .await
        .into_iter()
        .filter(|(name, visibility)| name.starts_with('@') || visibility == "private")
        .collect();
    assert!(uploads.is_empty(), "{uploads:?}");
}

#[tokio::test]
async fn bad_uploads_are_refused_with_the_reason_and_store_nothing() {
    let s = Server::app().await;
    let key = test_key();
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        ("text/plain", dip_buyer(), 415, "application/wasm"),
        ("application/wasm", Vec::new(), 400, "body must be"),
        (
            "application/wasm",
            b"not a component".to_vec(),
            422,
            "not a loadable strategy",
        ),
        // A component of another world (the scorer) is not a strategy.
        (
            "application/wasm",
            std::fs::read(component("scorer")).unwrap(),
            422,
            "not a loadable strategy",
        ),
        ("application/wasm", vec![0u8; 33 << 20], 413, "32 MiB"),
        // Under the 32 MiB limit (and over axum's default 2 MiB): checked,
        // not refused for its size.
        (
            "application/wasm",
            vec![0u8; 3 << 20],
            422,
            "not a loadable strategy",
        ),
    ];
    // What is left of the minute's quota after each answer that says it.
    let mut seen: Vec<u64> = Vec::new();
    for (content_type, bytes, status, needle) in cases {
        let r = with_key(&s, key)
            .send_bytes(Method::POST, "/strategies", content_type, bytes)
            .await;
        if r.headers().contains_key("x-ratelimit-remaining") {
            seen.push(units_left(r.headers()));
        }
        let refused = Api::typed::<UploadedStrategy>(r).await.unwrap_err();
        refused.assert(status, &[needle]);
    }
    // Of six refusals only the scorer's was compiled, so only it is
    // charged (5 units); the others were refused for their body or shape
    // before any work (a new minute could only raise what is left).
    let (first, last) = (seen[0], *seen.last().unwrap());
    assert!(
        first.saturating_sub(last) <= 5,
        "{first} units left after the first refusal, {last} after the last: {seen:?}"
    );
    let names = listed(&s, key).await;
    assert!(
        names.iter().all(|(_, v)| v == "builtin"),
        "nothing stored: {names:?}"
    );
}

#[tokio::test]
async fn the_web_app_uploads_with_its_session() {
    let s = Server::app().await;
    let browser = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    let upload = |origin: Option<&str>| {
        let mut req = s
            .client()
            .post(s.url("/web/api/strategies"))
            .header(reqwest::header::COOKIE, &browser.cookie)
            .header("content-type", "application/wasm")
            .body(dip_buyer());
        if let Some(origin) = origin {
            req = req.header(reqwest::header::ORIGIN, origin);
        }
        async move { req.send().await.unwrap().status() }
    };
    assert_eq!(upload(Some(&s.base)).await, 201);
    // Without the Origin check's header: refused (CSRF).
    assert_eq!(upload(None).await, 403);
    let (status, v) = browser
        .send(reqwest::Method::GET, "/web/api/strategies", None)
        .await;
    assert_eq!(status, 200);
    assert!(v.to_string().contains("/dip-buyer"), "{v}");
}

/// An upload's runs are metered: the response reports its calls, fuel,
/// guest time and peak memory, the same request uses the same fuel every
/// time, built-ins report no fuel, and a strategy that loops forever stops
/// at its fuel budget with a 422 naming the plugin, its version and the
/// budget (long before the call's deadline).
#[tokio::test]
async fn uploaded_strategies_run_metered_and_stop_at_their_fuel_budget() {
    let s = Server::start(); // the real binary: black-box (issue 40)
    let api = s.api();
    let (status, up) = api.upload_strategy(WASM, dip_buyer()).await.unwrap();
    assert_eq!(status, 201, "{up:?}");
    let name = up.strategy;
    let run = |strategy: String| {
        let api = api.clone();
        async move {
            let body = json!({ "strategy": strategy, "category": "Indices" });
            let r: BacktestResponse = api.post("/backtest", &body).await.unwrap();
            r.metadata
        }
    };
    let (first, again) = (run(name.clone()).await, run(name.clone()).await);
    let (u1, u2) = (&first.plugin_usage[0], &again.plugin_usage[0]);
    assert_eq!(u1.plugin, "strategy/dip-buyer@0.1.0", "{u1:?}");
    assert!(u1.calls > 1, "{u1:?}");
    assert!(u1.fuel.is_some_and(|f| f > 0), "{u1:?}");
    assert_eq!(u1.fuel, u2.fuel, "the same request, the same fuel");
    assert!(u1.peak_memory_bytes > 0, "{u1:?}");
    assert_eq!(first.strategy, name);

    let builtin = run("topn".into()).await;
    assert_eq!(
        builtin.plugin_usage[0].fuel, None,
        "built-ins are not metered"
    );

    the_listing_gives_manifests_and_each_accounts_resources(&s, &name, u1).await;

    let misbehave = std::fs::read(component("misbehave_strategy")).unwrap();
    let (status, up) = api.upload_strategy(WASM, misbehave).await.unwrap();
    assert_eq!(status, 201, "{up:?}");
    let body = json!({ "strategy": up.strategy, "category": "Indices", "top_n": 7 });
    let looping = api.post::<_, BacktestResponse>("/backtest", &body).await;
    looping
        .expect_err("an endless loop is refused")
        .assert(422, &["strategy/misbehave@0.0.1", "fuel budget"]);
}

/// The test account's listing after two runs of the upload `name` (the
/// first one's usage `u1`) and one of topn: each strategy's manifest,
/// imports and WIT version, and the min / mean / max of its runs; another
/// account sees nothing of these runs.
async fn the_listing_gives_manifests_and_each_accounts_resources(
    s: &Server,
    name: &str,
    u1: &PluginUsage,
) {
    let list = s.api().strategies().await.unwrap().strategies;
    let item = |n: &str| {
        list.iter()
            .find(|s| s.name == n)
            .unwrap_or_else(|| panic!("{n} listed: {list:?}"))
    };
    // A bare component's manifest is what it reports; no licence, no author.
    let m = item(name).manifest.as_ref().expect("a manifest");
    assert_eq!(m.world, "strategy", "{m:?}");
    assert_eq!((&m.licence, &m.author), (&None, &None));
    assert!(!item(name).imports.is_empty());
    assert!(!item("topn").imports.is_empty(), "built-ins list theirs");
    assert!(item("topn").manifest.is_none());
    // The WIT package each was built against, read off its imports.
    for n in [name, "topn"] {
        let (v, imported) = (&item(n).wit_version, &item(n).imports);
        assert!(
            v.as_ref().is_some_and(|v| imported
                .iter()
                .any(|i| i.contains(&format!("forecast:plugins/types@{v}")))),
            "{n}: {v:?} in {imported:?}"
        );
    }
    let mine = item(name).resources.as_ref().expect("figures of my runs");
    assert_eq!(mine.runs, 2, "{mine:?}");
    let fuel = u1.fuel.expect("metered") as f64;
    let spread = mine.fuel.as_ref().expect("fuel figures");
    assert_eq!((spread.min, spread.mean, spread.max), (fuel, fuel, fuel));
    assert_eq!(mine.calls.max, u1.calls as f64, "{mine:?}");
    let g = &mine.guest_ms;
    assert!(
        g.min <= g.mean && g.mean <= g.max && g.min > 0.0,
        "{mine:?}"
    );
    let topn = item("topn")
        .resources
        .as_ref()
        .expect("figures of topn's run");
    assert_eq!(topn.runs, 1, "{topn:?}");
    assert!(topn.fuel.is_none(), "built-ins are not metered");
    assert!(item("zscore").resources.is_none(), "never run");
    // Another account sees nothing of these runs (its own figures only).
    let other = second_account(&s.db);
    let theirs = s.api_as(Auth::Bearer(other)).strategies().await.unwrap();
    let topn_theirs = theirs.strategies.iter().find(|s| s.name == "topn").unwrap();
    assert!(topn_theirs.resources.is_none(), "{topn_theirs:?}");
}

/// Compiled uploads are kept on disk (`FORECAST_MODULE_CACHE`): a stored
/// upload writes its compiled code once, a refused one nothing, and a
/// restarted server runs the strategy from that file instead of compiling
/// it again.
#[tokio::test]
async fn a_restarted_server_runs_uploads_from_its_module_cache() {
    let db = common::fresh_db();
    let cache = tempfile::tempdir().unwrap();
    let env = [("FORECAST_MODULE_CACHE", cache.path().to_str().unwrap())];
    let key = test_key();
    let (name, sha256) = {
        let s = Server::start_with(db.clone(), &env);
        let (status, up) = upload(&s, key, dip_buyer()).await.unwrap();
        assert_eq!(status, 201, "{up:?}");
        // Refused bytes (compiled, then found to clash with the stored
        // version) leave nothing on disk.
        let clash = upload(&s, key, dip_buyer_other_bytes()).await.unwrap_err();
        assert_eq!(clash.status, 409, "{clash}");
        (up.strategy, up.sha256)
    };
    let files: Vec<String> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        files[0].starts_with(&sha256) && files[0].ends_with(".cwasm"),
        "{files:?}"
    );

    let s = Server::start_with(db, &env);
    backtest(&s, key, &name)
        .await
        .expect("a backtest of the upload");
    let metrics = s.admin_text("/metrics").await;
    let count = |result: &str| {
        common::metric(
            &metrics,
            &format!("forecast_module_cache_total{{result=\"{result}\"}}"),
        )
    };
    assert_eq!(count("hit"), Some(1.0));
    assert_eq!(count("miss"), None, "nothing compiled after the restart");
}
