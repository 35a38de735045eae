//! Set-up shared by the benches that drive the real server: the CLI, an
//! unmetered Premium key, and `forecast serve` on a free port.

// Each bench compiles this module on its own and uses part of it.
#![allow(dead_code)]

pub mod abuse;
pub mod live;
pub mod load;
pub mod summary;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Runs `forecast args…` against `db` and returns its standard output.
pub fn forecast(db: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_forecast"))
        .args(args)
        .env("DATABASE_URL", db)
        .stderr(Stdio::null())
        .output()
        .expect("run forecast");
    assert!(out.status.success(), "forecast {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A Premium user with quotas high enough never to bind, and its key.
pub fn unmetered_key(db: &str) -> String {
    unmetered_key_for(db, "bench@example.com")
}

/// [`unmetered_key`] for the account `email` (created here).
#[allow(dead_code)] // not every bench has several accounts
pub fn unmetered_key_for(db: &str, email: &str) -> String {
    forecast(db, &["user", "add", "--email", email, "--tier", "premium"]);
    unmetered_key_of(db, email)
}

/// Lifts the quotas of the existing account `email` out of reach and
/// creates a key for it.
pub fn unmetered_key_of(db: &str, email: &str) -> String {
    forecast(
        db,
        &[
            "user",
            "set-limits",
            "--email",
            email,
            "--per-minute",
            "100000000",
            "--per-day",
            "100000000",
        ],
    );
    forecast(db, &["key", "create", "--email", email, "--name", "bench"])
        .lines()
        .last()
        .expect("the key line")
        .trim()
        .to_string()
}

/// `forecast serve` on a free port with `env` (grading off, errors only in
/// the log); returns the process and its base URL.
pub fn serve(db: &str, env: &[(&str, &str)]) -> (Child, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_forecast"));
    cmd.arg("serve")
        .env("DATABASE_URL", db)
        .env("FORECAST_ADDR", "127.0.0.1:0")
        .env("FORECAST_GRADING", "off")
        // One load generator on loopback is one client address: the
        // per-address limit (600 a minute by default) would answer 429s.
        .env("FORECAST_CLIENT_PER_MINUTE", "1000000000")
        .env("RUST_LOG", "error")
        // No sentence-embedding model: on a fresh database the server
        // would spend its first minutes embedding the catalog, competing
        // with what a bench measures (the matcher's bench turns it back on).
        .env("FORECAST_MODEL_DIR", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut server = cmd.spawn().expect("spawn forecast serve");
    let mut reader = BufReader::new(server.stdout.take().expect("piped"));
    let mut first = String::new();
    reader.read_line(&mut first).expect("the listen line");
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    let base = first.trim().rsplit(' ').next().unwrap_or_default();
    if !base.starts_with("http://") {
        let status = server.wait().expect("forecast serve's exit status");
        panic!(
            "forecast serve did not start on {db} ({status}; its first line: {first:?}); \
             a server left running by an earlier bench holds a SQLite file alone \
             (`pgrep -af 'forecast serve'`)"
        );
    }
    (server, base.to_string())
}

/// A user of `tier` with `password`, created with `forecast user add`.
pub fn password_user(db: &str, email: &str, tier: &str, password: &str) {
    use std::io::Write;
    let mut add = Command::new(env!("CARGO_BIN_EXE_forecast"))
        .args([
            "user",
            "add",
            "--email",
            email,
            "--tier",
            tier,
            "--password-stdin",
        ])
        .env("DATABASE_URL", db)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("run forecast user add");
    add.stdin
        .take()
        .expect("piped")
        .write_all(password.as_bytes())
        .expect("write the password");
    assert!(add.wait().expect("user add").success());
}

/// Signs `email` in at `base`; the session cookie (`name=value`).
pub async fn session_cookie(base: &str, email: &str, password: &str) -> String {
    let login = reqwest::Client::new()
        .post(format!("{base}/auth/login"))
        .json(&serde_json::json!({ "email": email, "password": password }))
        .send()
        .await
        .expect("login");
    assert_eq!(login.status(), 200, "login of {email}");
    login.headers()["set-cookie"]
        .to_str()
        .expect("a cookie")
        .split(';')
        .next()
        .expect("name=value")
        .to_string()
}
