//! Quota counts on the embedded SQLite store (issue 14), end to end: a
//! request is answered only once its count is committed, so `kill -9`
//! right after a burst forgives nothing; and a second `forecast serve` on
//! the same file is refused with a message saying why, instead of counting
//! on its own.

use std::process::{Command, Stdio};

use crate::common;

use common::{create_key, sqlite_url, Server};

/// A Premium user whose binding window is the day (1,000 a day, a minute
/// limit far above it), and a key of theirs.
fn metered_user(db: &std::path::Path) -> String {
    common::add_user(
        db,
        "metered@example.com",
        "premium",
        Some("metered password"),
    );
    common::set_limits(db, "metered@example.com", 100_000, Some(1000));
    create_key(db, "metered@example.com", "burst")
}

fn header(r: &reqwest::Response, name: &str) -> u64 {
    r.headers()
        .get(name)
        .unwrap_or_else(|| panic!("missing {name}"))
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_burst_answered_before_kill_9_stays_counted_after_a_restart() {
    let db = common::fresh_db();
    let key = metered_user(&db);
    let mut first = Server::start_with(db.clone(), &[]);
    let client = reqwest::Client::new();
    let burst: Vec<_> = (0..50)
        .map(|_| {
            client
                .get(first.url("/api/assets?category=Indices"))
                .bearer_auth(&key)
                .send()
        })
        .collect();
    let answered = futures_join(burst).await;
    assert!(
        answered.iter().all(|s| *s == 200),
        "every request of the burst is admitted: {answered:?}"
    );
    // No pause: the process dies the moment the last answer is read.
    let child = first.process();
    child.kill().expect("kill -9");
    child.wait().expect("reap");
    drop(first);

    let second = Server::start_with(db, &[]);
    let r = client
        .get(second.url("/api/assets?category=Indices"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "x-ratelimit-limit"), 1_000, "the day is binding");
    assert_eq!(
        header(&r, "x-ratelimit-remaining"),
        1_000 - 51,
        "all 50 answered requests were still counted after kill -9, and this one"
    );
}

/// Joins the requests concurrently, returning their statuses.
async fn futures_join<F>(requests: Vec<F>) -> Vec<u16>
where
    F: std::future::Future<Output = reqwest::Result<reqwest::Response>> + Send + 'static,
{
    let handles: Vec<_> = requests.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap().expect("request").status().as_u16());
    }
    out
}

#[tokio::test]
async fn a_second_server_on_the_same_sqlite_file_is_refused_with_the_reason() {
    let db = common::fresh_db();
    let first = Server::start_with(db.clone(), &[]);
    let out = Command::new(env!("CARGO_BIN_EXE_forecast"))
        .arg("serve")
        .env("FORECAST_ADDR", "127.0.0.1:0")
        .env("DATABASE_URL", sqlite_url(&db))
        .env("FORECAST_GRADING", "off")
        .stdin(Stdio::null())
        .output()
        .expect("run a second forecast serve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the second server must not start");
    assert!(
        stderr.contains("already serving") && stderr.contains("PostgreSQL"),
        "the refusal says why and what to do instead: {stderr}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).is_empty(),
        "nothing was announced"
    );
    // The first one still serves, and once it is gone the file can be
    // served again.
    assert_eq!(first.get("/api/health").await.0, 200);
    drop(first);
    let again = Server::start_with(db, &[]);
    assert_eq!(again.get("/api/health").await.0, 200);
}
