//! End-to-end smoke tests of the real `forecast serve`: the other modules
//! mostly call the router in process, so these make sure the binary wires
//! the same router to a socket — each main route once over real HTTP, the
//! banner with the demo account it creates, and the graceful shutdown on
//! SIGTERM.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{self, Server, TEST_EMAIL, TEST_PASSWORD};
use serde_json::{json, Value};

#[tokio::test]
async fn every_main_route_answers_over_http() {
    let s = Server::start();
    for path in [
        "/api/health",
        "/api/openapi.json",
        "/api/assets?category=Indices",
        "/api/asset-info/AAPL",
        "/api/analysis/%5EGSPC",
        "/api/strategies",
    ] {
        let (status, body) = s.get(path).await;
        assert_eq!(status, 200, "{path}: {body:.300}");
    }
    let (status, _) = s.get("/api/ranking").await;
    assert_ne!(status, 404, "/api/ranking is routed");

    let r = s
        .client()
        .post(s.url("/api/backtest"))
        .bearer_auth(common::test_key())
        .json(&json!({"strategy": "topn", "tickers": ["^GSPC", "^IXIC", "^DJI"], "top_n": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().contains_key("x-ratelimit-remaining"));
    let body: Value = r.json().await.unwrap();
    assert!(body["metrics"].is_object(), "{body:.300}");

    // A web session: login, who am I, keys, the matcher.
    let r = s.post_login(TEST_EMAIL, TEST_PASSWORD).await;
    assert_eq!(r.status(), 200);
    let cookie = r.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    for path in ["/auth/me", "/api/keys"] {
        let r = s.get_with_header(path, "cookie", &cookie).await;
        assert_eq!(r.status(), 200, "{path}");
    }
    let r = s
        .client()
        .post(s.url("/api/match-tickers"))
        .header("cookie", &cookie)
        .header("origin", &s.base)
        .json(&json!({ "text": "bitcoin" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

/// Starts `forecast serve` on `db` and reads its banner up to the example
/// requests; the child is returned still running.
fn serve_and_read_banner(db: &std::path::Path) -> (std::process::Child, String) {
    let mut child = Command::new(common::BIN)
        .arg("serve")
        .env("FORECAST_ADDR", "127.0.0.1:0")
        .env("DATABASE_URL", common::sqlite_url(db))
        .env("RUST_LOG", "warn")
        .env("FORECAST_GRADING", "off")
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn forecast serve");
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut banner = String::new();
    while !banner.contains("openapi.json") {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        banner.push_str(&line);
    }
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    (child, banner)
}

/// Sends SIGTERM and waits (at most 30 s) for the exit status.
async fn terminate(child: &mut std::process::Child) -> std::process::ExitStatus {
    common::sigterm(child);
    common::exit_within(child, Duration::from_secs(30), || {
        "no exit after SIGTERM".to_string()
    })
    .await
}

#[tokio::test]
async fn the_banner_shows_the_demo_key_once_and_sigterm_stops_cleanly() {
    // A newcomer's first start: an empty database.
    let db = common::empty_db();
    let (mut child, banner) = serve_and_read_banner(&db);
    let base = banner
        .lines()
        .next()
        .and_then(|l| l.rsplit(' ').next())
        .filter(|u| u.starts_with("http://"))
        .unwrap_or_else(|| panic!("no listen line in {banner:?}"))
        .to_string();
    // Stdout is a pipe here, not a terminal: the banner names a file
    // (mode 0600, beside the database) and prints neither secret.
    assert!(banner.contains("Demo account"), "{banner}");
    let file = PathBuf::from(format!("{}.demo-login.txt", db.display()));
    assert!(banner.contains(&file.display().to_string()), "{banner}");
    let written = std::fs::read_to_string(&file).expect("the demo login file");
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let key = written
        .lines()
        .find_map(|l| l.trim().strip_prefix("API key: "))
        .unwrap_or_else(|| panic!("no demo key in {written}"))
        .trim()
        .to_string();
    let (email, password) = written
        .lines()
        .find_map(|l| l.trim().strip_prefix("login: "))
        .and_then(|l| l.trim().split_once(" / "))
        .unwrap_or_else(|| panic!("no demo login in {written}"));
    assert!(!banner.contains(password), "{banner}");
    assert!(!banner.contains(&key), "{banner}");
    // The written login signs in.
    let r = reqwest::Client::new()
        .post(format!("{base}/auth/login"))
        .json(&json!({ "email": email, "password": password }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(key.starts_with("svc_"), "{key}");
    assert!(banner.contains(&format!(
        "curl http://{}",
        base.trim_start_matches("http://")
    )));
    // The demo key is a working Premium key.
    let r = reqwest::Client::new()
        .get(format!("{base}/api/assets?category=Indices"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        terminate(&mut child).await.success(),
        "graceful exit status"
    );

    // Served again, the key is not shown twice.
    let (mut again, banner) = serve_and_read_banner(&db);
    assert!(!banner.contains("Demo account"), "{banner}");
    assert!(banner.contains("API keys are shown once"), "{banner}");
    assert!(banner.contains("Web app: open http://"), "{banner}");
    // Served (hence past installing its signal handler) before the signal:
    // the banner is printed a moment before the handler exists.
    let base = banner
        .lines()
        .next()
        .and_then(|l| l.rsplit(' ').next())
        .unwrap()
        .to_string();
    let r = reqwest::get(format!("{base}/api/health")).await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(terminate(&mut again).await.success());

    // A database that already has accounts is someone's: no demo account,
    // and no line about a demo login shown before.
    let (mut theirs, banner) = serve_and_read_banner(&common::fresh_db());
    assert!(!banner.contains("Demo account"), "{banner}");
    assert!(!banner.to_lowercase().contains("demo login"), "{banner}");
    assert!(terminate(&mut theirs).await.success());
}
