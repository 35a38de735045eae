//! Two `forecast serve` replicas on one PostgreSQL database: quotas, key
//! limits, revocations and tier changes hold across them.
//!
//! Needs a PostgreSQL server whose user may create databases
//! ([`ScratchPg`]: `TEST_DATABASE_URL`, which `.ci/run` sets).

use crate::common;

use common::postgres::ScratchPg;
use common::{cli_ok_url, Server};
use reqwest::header::{COOKIE, ORIGIN, SET_COOKIE};
use serde_json::json;

const ORIGIN_URL: &str = "http://app.example";

async fn login(s: &Server, email: &str, password: &str) -> String {
    let r = s.post_login(email, password).await;
    assert_eq!(r.status(), 200);
    let set = r.headers().get(SET_COOKIE).unwrap().to_str().unwrap();
    set.split(';').next().unwrap().to_string()
}

#[tokio::test]
async fn two_replicas_share_quotas_keys_and_revocations() {
    let db = ScratchPg::create("replicas").await;
    cli_ok_url(&db.url, &["demo", "load"], "");
    common::add_user_url(
        &db.url,
        "rep@example.com",
        "premium",
        Some("replica password"),
    );
    // Both clocks stand at one instant, so the 75 requests below share
    // one quota minute whatever the wall clock does.
    let env = [
        ("FORECAST_ORIGIN", ORIGIN_URL),
        ("FORECAST_TEST_CLOCK", Server::WINDOW_START),
    ];
    let a = Server::start_url(&db.url, &env);
    let b = Server::start_url(&db.url, &env);
    let replicas = [&a, &b];

    let cookie = login(&a, "rep@example.com", "replica password").await;
    let keys = concurrent_key_creations_leave_five(replicas, &cookie).await;
    let key = keys[0].0.clone();
    concurrent_requests_of_one_user_admit_sixty(replicas, &key).await;
    a_key_revoked_on_one_is_refused_by_the_other(replicas, &cookie, &keys[1]).await;

    // A tier change through the CLI reaches both replicas on the next request.
    cli_ok_url(
        &db.url,
        &[
            "user",
            "set-tier",
            "--email",
            "rep@example.com",
            "--tier",
            "lite",
        ],
        "",
    );
    assert_eq!(a.get_as("/api/assets", Some(&key)).await.0, 402);
    assert_eq!(b.get_as("/api/assets", Some(&key)).await.0, 402);

    a_sign_out_on_one_ends_the_session_on_the_other(replicas, &cookie).await;

    let (_, health) = a.debug_health().await;
    assert_eq!(health["debug"]["database"]["backend"], "postgres");
    drop((a, b));
    drop(db);
}

/// 20 concurrent key creations over both replicas leave exactly 5
/// active; the session works on the other replica. The five `(key, id)`.
async fn concurrent_key_creations_leave_five(
    replicas: [&Server; 2],
    cookie: &str,
) -> Vec<(String, String)> {
    let mut tasks = Vec::new();
    for i in 0..20 {
        let s = replicas[i % 2];
        let req = s
            .client()
            .post(s.url("/api/keys"))
            .header(COOKIE, cookie)
            .header(ORIGIN, ORIGIN_URL)
            .json(&json!({ "name": format!("k{i}") }));
        tasks.push(tokio::spawn(async move {
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            let body: serde_json::Value = r.json().await.unwrap();
            (
                status,
                body["key"].as_str().map(str::to_string),
                body["id"].as_str().map(str::to_string),
            )
        }));
    }
    let mut keys = Vec::new();
    let mut conflicts = 0;
    for t in tasks {
        match t.await.unwrap() {
            (200, Some(key), Some(id)) => keys.push((key, id)),
            (409, _, _) => conflicts += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((keys.len(), conflicts), (5, 15));
    let b = replicas[1];
    let listed = b
        .get_with_header("/api/keys", COOKIE, cookie)
        .await
        .json::<serde_json::Value>()
        .await
        .unwrap();
    assert_eq!(
        listed.as_array().unwrap().len(),
        5,
        "the session works on the other replica"
    );
    keys
}

/// 75 concurrent requests of one user spread over both admit exactly 60.
async fn concurrent_requests_of_one_user_admit_sixty(replicas: [&Server; 2], key: &str) {
    let mut tasks = Vec::new();
    for i in 0..75 {
        let s = replicas[i % 2];
        let req = s
            .client()
            .get(s.url("/api/assets?category=Indices"))
            .bearer_auth(key);
        tasks.push(tokio::spawn(async move {
            req.send().await.unwrap().status().as_u16()
        }));
    }
    let mut ok = 0;
    let mut limited = 0;
    for t in tasks {
        match t.await.unwrap() {
            200 => ok += 1,
            429 => limited += 1,
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!((ok, limited), (60, 15));
}

/// A key revoked through one replica is refused by the other on the
/// next request (a second key of the same user, so the quota doesn't
/// interfere: both 401s are decided before admission).
async fn a_key_revoked_on_one_is_refused_by_the_other(
    [a, b]: [&Server; 2],
    cookie: &str,
    (other_key, other_id): &(String, String),
) {
    // B has seen the key (and keeps it in memory) before it is revoked:
    // 429, the user's minute being used up (decided after authentication;
    // the clocks stand still, so the minute does not turn).
    assert_eq!(b.get_as("/api/assets", Some(other_key)).await.0, 429);
    let r = a
        .client()
        .delete(a.url("/api/keys"))
        .header(COOKIE, cookie)
        .header(ORIGIN, ORIGIN_URL)
        .json(&json!({ "id": other_id }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(b.get_as("/api/assets", Some(other_key)).await.0, 401);
}

/// A session B keeps in memory (issue 41) is refused by B on the next
/// request after a sign-out through A.
async fn a_sign_out_on_one_ends_the_session_on_the_other([a, b]: [&Server; 2], cookie: &str) {
    let me = |s: &Server| {
        s.client()
            .get(s.url("/auth/me"))
            .header(COOKIE, cookie)
            .send()
    };
    let data = |s: &Server| {
        s.client()
            .get(s.url("/web/api/assets?category=Indices"))
            .header(COOKIE, cookie)
            .send()
    };
    assert_eq!(me(b).await.unwrap().status(), 200);
    assert_eq!(me(b).await.unwrap().status(), 200, "from memory");
    assert_eq!(
        data(b).await.unwrap().status(),
        402,
        "a remembered session, on the lite tier now"
    );
    let out = a
        .client()
        .post(a.url("/auth/logout"))
        .header(COOKIE, cookie)
        .header(ORIGIN, ORIGIN_URL)
        .send()
        .await
        .unwrap();
    assert!(out.status().is_success(), "{}", out.status());
    assert_eq!(me(b).await.unwrap().status(), 401, "signed out everywhere");
    assert_eq!(
        data(b).await.unwrap().status(),
        401,
        "and on the data routes"
    );
}

/// An engine activated on one replica's database is served by both
/// replicas within 5 seconds, and so is its rollback.
#[tokio::test]
async fn two_replicas_follow_an_engine_activation_and_its_rollback() {
    let db = ScratchPg::create("replicas").await;
    cli_ok_url(&db.url, &["demo", "load"], "");
    common::add_user_url(&db.url, "ops@example.com", "premium", None);
    let key = common::create_key_url(&db.url, "ops@example.com", "ops");
    let token = "replica-admin-token-0123456789";
    let env = [
        ("FORECAST_ORIGIN", ORIGIN_URL),
        ("FORECAST_ADMIN_TOKEN", token),
    ];
    let a = Server::start_url(&db.url, &env);
    let b = Server::start_url(&db.url, &env);
    assert_eq!(engine_of(&a, &key).await, "1.1.0");
    assert_eq!(engine_of(&b, &key).await, "1.1.0");

    // Register and activate through replica A's admin API.
    let altered = common::component("segmentation_altered");
    let client = reqwest::Client::new();
    let r = client
        .post(a.url("/api/admin/plugins?kind=segmentation&name=default&version=1.1.0-altered"))
        .bearer_auth(token)
        .body(std::fs::read(altered).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = client
        .post(a.url("/api/admin/plugins/activate"))
        .bearer_auth(token)
        .json(&json!({"kind": "segmentation", "name": "default", "version": "1.1.0-altered"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    for replica in [&b, &a] {
        follows_within_5_s(replica, &key, "1.1.0-altered", "the activation").await;
    }
    // Roll back from the CLI: both follow again.
    cli_ok_url(
        &db.url,
        &["plugin", "rollback", "segmentation", "default"],
        "",
    );
    for replica in [&a, &b] {
        follows_within_5_s(replica, &key, "1.1.0", "the rollback").await;
    }
}

/// The engine version of a live analysis from replica `s`.
async fn engine_of(s: &Server, key: &str) -> String {
    let r = reqwest::Client::new()
        .get(s.url("/api/analysis/%5EGSPC?num_segments=21"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: serde_json::Value = r.json().await.unwrap();
    body["metadata"]["engine_version"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Replica `s` serves engine `want` within 5 s (after `what`).
async fn follows_within_5_s(s: &Server, key: &str, want: &str, what: &str) {
    let started = std::time::Instant::now();
    while engine_of(s, key).await != want {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "a replica did not follow {what} within 5 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The first start of an empty PostgreSQL database prints no demo
/// password unless the operator asks for it (`serve --demo`): a shared
/// database is not a demo.
#[tokio::test]
async fn postgres_gets_the_demo_account_only_when_asked() {
    let db = ScratchPg::create("replicas").await;
    cli_ok_url(&db.url, &["demo", "load", "--small"], "");
    // Stdout is a pipe: a demo login goes to `demo-login.txt` in the
    // working directory (there is no database file to put it beside).
    let cwd = tempfile::tempdir().unwrap();
    let banner = |extra: &[&str]| -> String {
        use std::io::BufRead;
        let mut child = std::process::Command::new(common::BIN)
            .current_dir(cwd.path())
            .arg("serve")
            .args(extra)
            .env("FORECAST_ADDR", "127.0.0.1:0")
            .env("DATABASE_URL", &db.url)
            .env("RUST_LOG", "warn")
            .env("FORECAST_GRADING", "off")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut banner = String::new();
        while !banner.contains("openapi.json") {
            if reader.read_line(&mut banner).unwrap() == 0 {
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        banner
    };
    let plain = banner(&[]);
    assert!(!plain.contains("Demo account"), "{plain}");
    assert!(plain.contains("No account yet"), "{plain}");
    let asked = banner(&["--demo"]);
    assert!(asked.contains("Demo account"), "{asked}");
    assert!(asked.contains("demo-login.txt"), "{asked}");
    assert!(!asked.contains("API key: svc_"), "{asked}");
    let written = std::fs::read_to_string(cwd.path().join("demo-login.txt")).unwrap();
    assert!(written.contains("API key: svc_"), "{written}");
}

use crate::fake_provider;

/// Issue 16: the scheduled refresh (`FORECAST_REFRESH_AT`) fetches the
/// active universe once a day, split across replicas through the store:
/// every asset is asked for once in all, both replicas take part, and a
/// fetched history replaces the stored one.
#[tokio::test]
async fn the_scheduled_refresh_is_split_across_replicas() {
    let db = ScratchPg::create("replicas").await;
    cli_ok_url(&db.url, &["demo", "load", "--small"], "");
    let fake = fake_provider::FakeProvider::start();
    fake.script(
        "AAPL",
        vec![fake_provider::Reply::fixture("yahoo/AAPL.json")],
    );
    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    let active: Vec<(String, String)> =
        sqlx::query_as("SELECT ticker, category FROM assets WHERE is_active ORDER BY ticker")
            .fetch_all(&pool)
            .await
            .unwrap();
    // Half a minute from now, so both replicas are up when it fires even
    // on a loaded machine (each start compiles the components).
    let at = (chrono::Utc::now() + chrono::Duration::seconds(30))
        .format("%H:%M:%S")
        .to_string();
    let env = [
        ("FORECAST_REFRESH_AT", at.as_str()),
        ("FORECAST_YAHOO_URL", fake.base.as_str()),
    ];
    let _a = Server::start_url(&db.url, &env);
    let _b = Server::start_url(&db.url, &env);

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    let run = loop {
        let run: Option<(String, String, i64, i64, i64)> = sqlx::query_as(
            "SELECT id, status, total, done, failures FROM job_runs WHERE kind = 'refresh:yahoo'",
        )
        .fetch_optional(&pool)
        .await
        .unwrap();
        if let Some(r) = run.filter(|r| r.1 == "done") {
            break r;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the refresh did not finish in 3 minutes"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    };
    let (run_id, _, total, done, failures) = run;
    assert_eq!(total as usize, active.len());
    // AAPL loads; every other symbol is unknown to the fake provider (404)
    // and CS2 cases have no Yahoo symbol: failed, their prices kept.
    assert_eq!(done, 1, "only AAPL was answered");
    assert_eq!(done + failures, total);
    let workers: i64 =
        sqlx::query_scalar("SELECT COUNT(DISTINCT claimed_by) FROM job_items WHERE run_id = $1")
            .bind(&run_id)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(workers, 2, "both replicas took part");
    let asked = fake.requests();
    let mut symbols: Vec<&str> = asked.iter().map(|r| r.symbol.as_str()).collect();
    symbols.sort_unstable();
    let n = symbols.len();
    symbols.dedup();
    assert_eq!(symbols.len(), n, "no asset was asked for twice");
    let expected = active.iter().filter(|(_, c)| c != "CS2 Cases").count();
    assert_eq!(
        n, expected,
        "every asset with a Yahoo symbol was asked for once"
    );
    let source: String = sqlx::query_scalar("SELECT data_source FROM assets WHERE ticker = 'AAPL'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(source, "ingested");
    pool.close().await;
}

/// An author's upload on one replica is listed and runnable on the other,
/// a share made on the other is seen on the first, and each replica's
/// runs count in the resource figures both list (one database).
#[tokio::test]
async fn two_replicas_share_uploads_their_sharing_and_their_run_figures() {
    let db = ScratchPg::create("replicas").await;
    cli_ok_url(&db.url, &["demo", "load"], "");
    common::add_user_url(&db.url, "author@example.com", "premium", None);
    let key = common::create_key_url(&db.url, "author@example.com", "a");
    let a = Server::start_url(&db.url, &[]);
    let b = Server::start_url(&db.url, &[]);
    let call =
        |s: &Server, method: reqwest::Method, path: &str, body: Option<serde_json::Value>| {
            let mut req = s.client().request(method, s.url(path)).bearer_auth(&key);
            if let Some(b) = body {
                req = req.json(&b);
            }
            async move {
                let r = req.send().await.unwrap();
                let status = r.status().as_u16();
                (
                    status,
                    r.json::<serde_json::Value>().await.unwrap_or_default(),
                )
            }
        };
    let up = a
        .client()
        .post(a.url("/api/strategies"))
        .bearer_auth(&key)
        .header("content-type", "application/wasm")
        .body(std::fs::read(common::component("dip_buyer")).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(up.status().as_u16(), 201);
    let up: serde_json::Value = up.json().await.unwrap();
    let name = up["strategy"].as_str().unwrap().to_string();
    let item = |list: &serde_json::Value| {
        list["strategies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name.as_str())
            .cloned()
    };

    // Listed and run on B; shared on B, seen shared on A.
    let (status, list) = call(&b, reqwest::Method::GET, "/api/strategies", None).await;
    assert_eq!(status, 200);
    assert_eq!(item(&list).expect("listed on B")["visibility"], "private");
    let run = json!({"strategy": name, "category": "Indices"});
    let (status, body) = call(
        &b,
        reqwest::Method::POST,
        "/api/backtest",
        Some(run.clone()),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let path = format!("/api/strategies/{name}");
    let (status, body) = call(
        &b,
        reqwest::Method::PATCH,
        &path,
        Some(json!({"shared": true})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = call(&a, reqwest::Method::POST, "/api/backtest", Some(run)).await;
    assert_eq!(status, 200, "{body}");
    let (_, list) = call(&a, reqwest::Method::GET, "/api/strategies", None).await;
    let seen = item(&list).expect("listed on A");
    assert_eq!(seen["visibility"], "shared");
    // The account ran it once through A and once through B: its figures
    // on A count both (every replica's runs of that account).
    assert_eq!(seen["resources"]["runs"], 2, "{seen}");
}

/// Issue 41: two replicas answer the ranking and the catalog from memory,
/// and both see an ingest made through the CLI (it drops the asset's
/// grades and moves its last price) on their next request.
#[tokio::test]
async fn two_replicas_see_an_ingest_in_their_ranking_and_catalog_at_once() {
    let db = ScratchPg::create("replicas").await;
    cli_ok_url(&db.url, &["demo", "load"], "");
    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    sqlx::query("UPDATE assets SET is_active = ticker IN ('^GSPC', '^IXIC', 'AAPL')")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    cli_ok_url(&db.url, &["grade"], "");
    common::add_user_url(&db.url, "r@example.com", "premium", None);
    let key = common::create_key_url(&db.url, "r@example.com", "r");
    let a = Server::start_url(&db.url, &[]);
    let b = Server::start_url(&db.url, &[]);
    let look = |s: &Server| {
        let key = key.clone();
        let (ranking, assets) = (s.url("/api/ranking"), s.url("/api/assets"));
        async move {
            let get = |url: String| {
                let key = key.clone();
                async move {
                    let r = reqwest::Client::new()
                        .get(url)
                        .bearer_auth(key)
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(r.status(), 200);
                    r.json::<serde_json::Value>().await.unwrap()
                }
            };
            let ranked = get(ranking).await;
            let catalog = get(assets).await;
            let aapl = catalog["assets"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["ticker"] == "AAPL")
                .map(|a| a["last_price_date"].as_str().unwrap().to_string());
            (ranked["metadata"]["total_assets"].as_u64().unwrap(), aapl)
        }
    };
    for s in [&a, &b] {
        let first = look(s).await;
        assert_eq!(first, (3, Some("2013-03-01".to_string())));
        assert_eq!(look(s).await, first, "the same from memory");
    }
    let file = std::env::temp_dir().join(format!("aapl-{}.csv", uuid::Uuid::new_v4().simple()));
    std::fs::write(&file, "date,close\n2013-03-04,56.5\n").unwrap();
    cli_ok_url(
        &db.url,
        &["ingest", "csv", "--ticker", "AAPL", file.to_str().unwrap()],
        "",
    );
    std::fs::remove_file(&file).ok();
    for s in [&a, &b] {
        assert_eq!(
            look(s).await,
            (2, Some("2013-03-04".to_string())),
            "the ingest is seen on the next request"
        );
    }
    drop((a, b));
    drop(db);
}
