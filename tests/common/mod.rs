//! Test harness over copies of a demo database that is built once per
//! test binary with `forecast demo load`. A [`Server`] is either the real
//! `forecast` binary on port 0 ([`Server::start`] and its variants) or the
//! real router inside the test process ([`Server::app`], module `inproc`);
//! both answer through the same [`client::Client`].

#![allow(dead_code)]

pub use forecast_testkit::client;
mod inproc;
pub mod postgres;
pub mod raw_http;
pub mod smtp;
pub mod webhook;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

pub const BIN: &str = env!("CARGO_BIN_EXE_forecast");

/// A folder that lives as long as the test binary: `<pid>` under cargo's
/// temporary folder for tests (`target/tmp/it`). A static is never
/// dropped, so a `TempDir` here was never removed: every run left its
/// template and database copies (some GB) behind. Instead, each run
/// removes the folders of runs whose process is gone.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("it");
        std::fs::create_dir_all(&root).expect("create the scratch root");
        for entry in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let alive = name
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
            if !alive {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let dir = root.join(std::process::id().to_string());
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the scratch folder");
        dir
    })
}

/// The Premium test account every copy of the template database has.
pub const TEST_EMAIL: &str = "tester@example.com";
/// Its password.
pub const TEST_PASSWORD: &str = "correct horse battery";
/// The admin token every server under test has unless a test sets its own
/// (`FORECAST_ADMIN_TOKEN`, empty for none).
pub const ADMIN_TOKEN: &str = "test-admin-token";

/// The settings of every server under test, in process or not, before a
/// test's own (which win).
pub const SERVER_ENV: &[(&str, &str)] = &[
    // Tests grade explicitly (`forecast grade`); a background run over the
    // whole universe would only slow them down.
    ("FORECAST_GRADING", "off"),
    // Likewise alerts: the tests of alerts turn the follower on or run
    // `forecast alerts check`.
    ("FORECAST_ALERTS", "off"),
    ("FORECAST_ADMIN_TOKEN", ADMIN_TOKEN),
    // Tests send far more than a browser would; those about the per-client
    // limit set their own.
    ("FORECAST_CLIENT_PER_MINUTE", "1000000"),
    // Compiled uploads are not kept in the home folder; tests of the
    // module cache name a folder of their own.
    ("FORECAST_MODULE_CACHE", "off"),
    // No embedding model unless a test names one: loading it and embedding
    // the catalog would slow every test, and whether the default folder
    // exists depends on where the tests run from (the repository's root
    // has `data/models`, `host/` does not).
    ("FORECAST_MODEL_DIR", "off"),
];

struct Template {
    path: PathBuf,
    key: String,
}

/// Runs the CLI against `db`, feeding `stdin`, asserting success; stdout.
pub fn cli_ok(db: &Path, args: &[&str], stdin: &str) -> String {
    cli_ok_url(&sqlite_url(db), args, stdin)
}

/// Runs the CLI against the database at `url`, feeding `stdin`, asserting
/// success; stdout.
pub fn cli_ok_url(url: &str, args: &[&str], stdin: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(args)
        .env("DATABASE_URL", url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run forecast");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "forecast {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The key printed on the last line of `forecast key create`.
pub fn create_key(db: &Path, email: &str, name: &str) -> String {
    create_key_url(&sqlite_url(db), email, name)
}

/// The key printed on the last line of `forecast key create` against the
/// database at `url`.
pub fn create_key_url(url: &str, email: &str, name: &str) -> String {
    let out = cli_ok_url(
        url,
        &["key", "create", "--email", email, "--name", name],
        "",
    );
    out.lines().last().expect("a key line").trim().to_string()
}

/// Adds the account `email` on `tier` with `forecast user add`, its
/// password read from stdin when one is given.
pub fn add_user(db: &Path, email: &str, tier: &str, password: Option<&str>) {
    add_user_url(&sqlite_url(db), email, tier, password);
}

/// [`add_user`] against the database at `url`.
pub fn add_user_url(url: &str, email: &str, tier: &str, password: Option<&str>) {
    let mut args = vec!["user", "add", "--email", email, "--tier", tier];
    let stdin = match password {
        Some(password) => {
            args.push("--password-stdin");
            format!("{password}\n")
        }
        None => String::new(),
    };
    cli_ok_url(url, &args, &stdin);
}

/// Sets `email`'s quota with `forecast user set-limits`: per minute, and
/// per day when given.
pub fn set_limits(db: &Path, email: &str, per_minute: u64, per_day: Option<u64>) {
    let (minute, day) = (per_minute.to_string(), per_day.map(|d| d.to_string()));
    let mut args = vec![
        "user",
        "set-limits",
        "--email",
        email,
        "--per-minute",
        &minute,
    ];
    if let Some(day) = &day {
        args.extend(["--per-day", day]);
    }
    cli_ok(db, &args, "");
}

/// Registers the component at `path` as `kind`/`name`@`version` with
/// `forecast plugin add`; its stdout.
pub fn add_plugin(db: &Path, path: &Path, kind: &str, name: &str, version: &str) -> String {
    let path = path.to_str().expect("a UTF-8 path");
    let args = [
        "plugin",
        "add",
        path,
        "--kind",
        kind,
        "--name",
        name,
        "--version",
        version,
    ];
    cli_ok(db, &args, "")
}

/// Activates `kind`/`name`@`version` with `forecast plugin activate`; its
/// stdout.
pub fn activate_plugin(db: &Path, kind: &str, name: &str, version: &str) -> String {
    cli_ok(db, &["plugin", "activate", kind, name, version], "")
}

/// Runs `forecast grade` against the database at `url` (logs at warn,
/// `env` added); (success, stdout, stderr).
pub fn grade(url: &str, env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = Command::new(BIN);
    cmd.arg("grade")
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run forecast grade");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// [`grade`] with no extra settings, asserting success (naming stderr).
pub fn grade_ok(url: &str) {
    let (ok, _, stderr) = grade(url, &[]);
    assert!(ok, "{stderr}");
}

/// `text` without its ANSI colour codes (`ESC [ … m`): a server log as
/// it reads.
pub fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The demo universe and a Premium test account with a key and quotas high
/// enough never to bind, built once through the CLI.
fn template() -> &'static Template {
    static TEMPLATE: OnceLock<Template> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let path = scratch().join("template.db");
        cli_ok(&path, &["demo", "load"], "");
        add_user(&path, TEST_EMAIL, "premium", Some(TEST_PASSWORD));
        set_limits(&path, TEST_EMAIL, 1_000_000, Some(1_000_000));
        let key = create_key(&path, TEST_EMAIL, "tests");
        Template { path, key }
    })
}

/// The test account's API key (valid in every copy of the template).
pub fn test_key() -> &'static str {
    &template().key
}

pub fn sqlite_url(path: &Path) -> String {
    format!("sqlite://{}", path.display())
}

/// The database files a test made, removed when its thread ends (libtest
/// runs each test on a thread of its own, and unwinding after a failure
/// ends it too). Kept until the binary exited, the copies of one `make
/// test` added up to gigabytes, and a CI machine ran out of disk.
struct Made(std::cell::RefCell<Vec<PathBuf>>);

impl Drop for Made {
    fn drop(&mut self) {
        for path in self.0.borrow().iter() {
            for suffix in ["", "-wal", "-shm", "-journal", ".serve-lock"] {
                let mut name = path.clone().into_os_string();
                name.push(suffix);
                let _ = std::fs::remove_file(name);
            }
        }
    }
}

thread_local! {
    static MADE: Made = const { Made(std::cell::RefCell::new(Vec::new())) };
}

/// Records `path` as this test's own, to remove when the test ends.
fn owned_by_this_test(path: PathBuf) -> PathBuf {
    MADE.with(|made| made.0.borrow_mut().push(path.clone()));
    path
}

/// A private copy of the demo database, removed when the test ends.
pub fn fresh_db() -> PathBuf {
    owned_by_this_test(fresh_db_kept())
}

/// A copy of the demo database that lives as long as the test binary: for
/// one that several tests share through a static (a test's own copy is
/// removed when the test that made it ends).
pub fn fresh_db_kept() -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let path = scratch().join(format!("kept-{n}.db"));
    let from = &template().path;
    std::fs::copy(from, &path).expect("copy template database");
    // Belt and braces: a WAL left beside the template belongs to the copy.
    let wal = from.with_extension("db-wal");
    if wal.exists() {
        std::fs::copy(&wal, path.with_extension("db-wal")).expect("copy the WAL");
    }
    path
}

/// A path for a database that does not exist yet (an empty store once
/// opened: what a newcomer's first `make run` sees), removed when the test
/// ends.
pub fn empty_db() -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    owned_by_this_test(scratch().join(format!("empty-{n}.db")))
}

/// Runs the CLI against `db` and returns (success, stdout, stderr).
pub fn cli(db: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env("DATABASE_URL", sqlite_url(db))
        .output()
        .expect("run forecast");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A server under test: a `forecast serve` process (killed on drop) or the
/// router in process (its runtime, background tasks included, shut down
/// on drop).
pub struct Server {
    pub base: String,
    pub db: PathBuf,
    client: client::Client,
    running: Running,
}

/// What a [`Server`] stops when dropped.
enum Running {
    Process(Child),
    InProcess(Option<tokio::runtime::Runtime>),
}

impl Server {
    /// Serves a fresh copy of the demo database.
    pub fn start() -> Server {
        Server::start_with(fresh_db(), &[])
    }

    /// Serves a fresh database, writing the server's logs (level info) to
    /// `log`.
    pub fn start_logging(log: &Path) -> Server {
        let file = std::fs::File::create(log).expect("log file");
        Server::spawn(fresh_db(), &[("RUST_LOG", "info")], Stdio::from(file))
    }

    /// Serves `db` with extra environment variables, writing the server's
    /// logs (level info) to `log`.
    pub fn start_logging_with(db: PathBuf, env: &[(&str, &str)], log: &Path) -> Server {
        let file = std::fs::File::create(log).expect("log file");
        let mut all = vec![("RUST_LOG", "info")];
        all.extend_from_slice(env);
        Server::spawn(db, &all, Stdio::from(file))
    }

    /// Serves `db` with extra environment variables.
    pub fn start_with(db: PathBuf, env: &[(&str, &str)]) -> Server {
        Server::spawn(db, env, Stdio::inherit())
    }

    /// Serves the database at `url` (e.g. PostgreSQL); `db` is left empty.
    pub fn start_url(url: &str, env: &[(&str, &str)]) -> Server {
        let mut all = vec![("DATABASE_URL", url)];
        all.extend_from_slice(env);
        Server::spawn(PathBuf::new(), &all, Stdio::inherit())
    }

    fn spawn(db: PathBuf, env: &[(&str, &str)], stderr: Stdio) -> Server {
        // A misspelt setting would be ignored by the child: refuse it here.
        for (name, _) in env {
            assert!(
                !name.starts_with("FORECAST_") || forecast::config::Config::is_setting(name),
                "{name} is not a setting of forecast serve (`forecast config` lists them)"
            );
        }
        let mut cmd = Command::new(BIN);
        cmd.arg("serve")
            .env("FORECAST_ADDR", "127.0.0.1:0")
            .env("DATABASE_URL", sqlite_url(&db))
            .env("RUST_LOG", "warn")
            .envs(SERVER_ENV.iter().copied())
            .stdout(Stdio::piped())
            .stderr(stderr);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn forecast serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut reader = BufReader::new(stdout);
        let mut first = String::new();
        reader.read_line(&mut first).expect("read the listen line");
        // Keep draining stdout so the server never writes into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let base = first
            .trim()
            .rsplit(' ')
            .next()
            .filter(|u| u.starts_with("http://"))
            .unwrap_or_else(|| panic!("unexpected first line from forecast serve: {first:?}"))
            .to_string();
        Server {
            base,
            db,
            client: client::Client::Remote(reqwest::Client::new()),
            running: Running::Process(child),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// GET with the test account's API key, returning status and JSON body.
    pub async fn get(&self, path: &str) -> (u16, serde_json::Value) {
        self.get_as(path, Some(test_key())).await
    }

    /// GET with `key` (or no Authorization header), returning status and
    /// JSON body.
    pub async fn get_as(&self, path: &str, key: Option<&str>) -> (u16, serde_json::Value) {
        let mut req = self.client.get(self.url(path));
        if let Some(key) = key {
            req = req.bearer_auth(key);
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        let ct = r
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let text = r.text().await.expect("body");
        let body = serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!("GET {path} → {status} with non-JSON body ({ct}): {e}: {text:.200}")
        });
        (status, body)
    }

    /// POST `body` as JSON with `key` as the Bearer token: the whole
    /// response.
    pub async fn post_json(
        &self,
        path: &str,
        key: &str,
        body: &serde_json::Value,
    ) -> client::Response {
        self.client
            .post(self.url(path))
            .bearer_auth(key)
            .json(body)
            .send()
            .await
            .expect("request")
    }

    /// POST `bytes` as `content_type` with `key` as the Bearer token: the
    /// whole response.
    pub async fn post_bytes(
        &self,
        path: &str,
        key: &str,
        content_type: &str,
        bytes: Vec<u8>,
    ) -> client::Response {
        self.client
            .post(self.url(path))
            .bearer_auth(key)
            .header("content-type", content_type)
            .body(bytes)
            .send()
            .await
            .expect("request")
    }

    /// `POST /auth/login` with `email` and `password`: the whole response
    /// (its status, and the session cookie it sets).
    pub async fn post_login(&self, email: &str, password: &str) -> client::Response {
        self.client
            .post(self.url("/auth/login"))
            .json(&serde_json::json!({ "email": email, "password": password }))
            .send()
            .await
            .expect("request")
    }

    /// GET with no credentials: the whole response.
    pub async fn get_raw(&self, path: &str) -> client::Response {
        self.client
            .get(self.url(path))
            .send()
            .await
            .expect("request")
    }

    /// GET with one header (a cookie, an `Accept`) and no other
    /// credentials: the whole response.
    pub async fn get_with_header(
        &self,
        path: &str,
        name: impl AsRef<str>,
        value: &str,
    ) -> client::Response {
        self.client
            .get(self.url(path))
            .header(name.as_ref(), value)
            .send()
            .await
            .expect("request")
    }

    /// POST `body` as JSON with no credentials: the whole response.
    pub async fn post_json_anonymous(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> client::Response {
        self.client
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .expect("request")
    }

    /// GET with `key` as the Bearer token: the whole response, for its
    /// status and headers.
    pub async fn get_bearer(&self, path: &str, key: &str) -> client::Response {
        self.client
            .get(self.url(path))
            .bearer_auth(key)
            .send()
            .await
            .expect("request")
    }

    /// GET with the test key, its 200 body read as the API's own type `T`
    /// (panics on another status, naming the body).
    pub async fn get_typed<T: serde::de::DeserializeOwned>(&self, path: &str) -> T {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_value(body).unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }

    /// `GET /api/health?debug=1` with the admin token: the diagnostics.
    pub async fn debug_health(&self) -> (u16, serde_json::Value) {
        let r = self
            .client
            .get(self.url("/api/health?debug=1"))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .expect("request");
        let status = r.status().as_u16();
        (status, r.json().await.expect("JSON health"))
    }

    /// The body of `GET path` with the admin token (`/metrics`, the
    /// admin API), asserting 200.
    pub async fn admin_text(&self, path: &str) -> String {
        let r = self
            .client
            .get(self.url(path))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .expect("request");
        assert_eq!(r.status(), 200, "GET {path} with the admin token");
        r.text().await.expect("text body")
    }

    /// The typed client with the test account's API key.
    pub fn api(&self) -> forecast_testkit::Api {
        self.api_as(forecast_testkit::Auth::Bearer(test_key().to_string()))
    }

    /// The typed client of the test account's web session (signed in now),
    /// on the `/web/api` routes.
    pub async fn session(&self) -> forecast_testkit::Api {
        let cookie = forecast_testkit::login(&self.client, &self.base, TEST_EMAIL, TEST_PASSWORD)
            .await
            .unwrap_or_else(|r| panic!("the test account signs in: {r}"));
        self.api_as(forecast_testkit::Auth::Cookie(cookie))
    }

    /// The typed client with `auth`.
    pub fn api_as(&self, auth: forecast_testkit::Auth) -> forecast_testkit::Api {
        forecast_testkit::Api::new(self.client.clone(), self.base.clone(), auth)
    }

    pub fn client(&self) -> &client::Client {
        &self.client
    }

    /// The `forecast serve` process, for end-to-end tests that signal it.
    pub fn process(&mut self) -> &mut Child {
        match &mut self.running {
            Running::Process(child) => child,
            Running::InProcess(_) => panic!("an in-process server has no process"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        match &mut self.running {
            Running::Process(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            // Not a plain drop: that blocks, which a test's async context
            // forbids.
            Running::InProcess(rt) => {
                if let Some(rt) = rt.take() {
                    rt.shutdown_background();
                }
            }
        }
    }
}

/// A signed-in browser: the session cookie and the server's origin.
pub struct Browser<'a> {
    pub server: &'a Server,
    pub cookie: String,
}

impl<'a> Browser<'a> {
    pub async fn login(server: &'a Server, email: &str, password: &str) -> Browser<'a> {
        let r = server.post_login(email, password).await;
        assert_eq!(r.status(), 200, "login of {email}");
        let set = r
            .headers()
            .get(reqwest::header::SET_COOKIE)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Lax"),
            "{set}"
        );
        let cookie = set.split(';').next().unwrap().to_string();
        Browser { server, cookie }
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let mut req = self
            .server
            .client()
            .request(method, self.server.url(path))
            .header(reqwest::header::COOKIE, &self.cookie)
            .header(reqwest::header::ORIGIN, &self.server.base);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        (
            r.status().as_u16(),
            r.json().await.unwrap_or(serde_json::Value::Null),
        )
    }
}

/// The analysis metadata of `ticker` at the defaults, with the test key.
pub async fn metadata(s: &Server, ticker: &str) -> forecast_api::analysis::AnalysisMetadata {
    let analysis = s.api().analysis(ticker, "").await;
    analysis
        .unwrap_or_else(|r| panic!("{ticker}'s analysis: {r}"))
        .metadata
}

impl Browser<'_> {
    /// The typed client of this browser's session on the routes under
    /// `/web` (`/web/watchlist`, `/web/api/…`) and `/auth`: prefix the path.
    pub fn api(&self) -> forecast_testkit::Api {
        let cookie = forecast_testkit::Auth::Cookie(self.cookie.clone());
        forecast_testkit::Api::new(self.server.client.clone(), self.server.base.clone(), cookie)
            .at("")
    }

    /// A GET's status, `content-disposition` and body as text (a download).
    pub async fn download(&self, path: &str) -> (u16, String, String) {
        let r = self
            .server
            .client()
            .get(self.server.url(path))
            .header(reqwest::header::COOKIE, &self.cookie)
            .send()
            .await
            .unwrap();
        let cd = r
            .headers()
            .get(reqwest::header::CONTENT_DISPOSITION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        (r.status().as_u16(), cd, r.text().await.unwrap())
    }
}

/// The JSON number `v` as an `f64`, panicking with `v` otherwise (short:
/// assertions on figures read it many times).
pub fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// POSTs `body`, JSON text as written (a `Value` would sort an object's
/// keys), with the test account's key: status, JSON answer and
/// `X-RateLimit-Remaining`.
pub async fn post_json_text(
    s: &Server,
    path: &str,
    body: &str,
) -> (u16, serde_json::Value, Option<u64>) {
    let r = s
        .client()
        .post(s.url(path))
        .bearer_auth(test_key())
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    let remaining = r
        .headers()
        .get("x-ratelimit-remaining")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    (status, r.json().await.expect("JSON"), remaining)
}

/// The JSON body `text` of a `status` answer, panicking with both when
/// it is not JSON.
pub fn json_body(status: u16, text: &str) -> serde_json::Value {
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("non-JSON answer {status}: {e}: {text:.300}"))
}

/// Asserts an error response: the status and a `{detail}` string that
/// contains every needle.
pub fn assert_error(got: &(u16, serde_json::Value), status: u16, needles: &[&str]) {
    assert_eq!(got.0, status, "body: {}", got.1);
    let detail = got.1["detail"]
        .as_str()
        .unwrap_or_else(|| panic!("no detail string in {}", got.1));
    for n in needles {
        assert!(detail.contains(n), "detail {detail:?} lacks {n:?}");
    }
}

/// Sends SIGTERM to `child` (with `kill`), asserting it was sent.
pub fn sigterm(child: &Child) {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success(), "kill -TERM {}", child.id());
}

/// The exit status of `child`, polled every 50 ms; panics with `why()`
/// once `limit` has passed without an exit.
pub async fn exit_within(
    child: &mut Child,
    limit: std::time::Duration,
    why: impl Fn() -> String,
) -> std::process::ExitStatus {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(started.elapsed() < limit, "{}", why());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A field of `/proc/<pid>/status` given in kB (`VmHWM`, `VmRSS`), in bytes.
fn proc_status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{field} in kB in /proc/{pid}/status"));
    kb * 1024
}

/// `VmHWM` (peak resident set) of a process, in bytes.
pub fn peak_rss(pid: u32) -> u64 {
    proc_status_bytes(pid, "VmHWM")
}

/// `VmRSS` (resident set now) of a process, in bytes.
pub fn rss(pid: u32) -> u64 {
    proc_status_bytes(pid, "VmRSS")
}

/// Path to a guest component built by `make components`.
pub fn component(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../components/target/wasm32-wasip2/release")
        .join(format!("{name}.wasm"))
}

/// A temporary folder holding a copy of the guest component `name`, as
/// `FORECAST_PLUGIN_DIR` for a server to load it at start.
pub fn plugin_dir_with(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::copy(component(name), dir.path().join(format!("{name}.wasm")))
        .unwrap_or_else(|e| panic!("copy {name}.wasm: {e}"));
    dir
}

/// `FORECAST_TEST_CLOCK` standing at this moment: a server started with
/// it counts every request of a test in one quota minute and day while
/// its dates stay today's (for tests whose data is dated, unlike
/// [`Server::WINDOW_START`]).
pub fn clock_standing_now() -> (&'static str, String) {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    ("FORECAST_TEST_CLOCK", now)
}

/// The value of the series `name` (with its labels, e.g.
/// `forecast_module_cache_total{result="hit"}`) in a Prometheus text
/// exposition; `None` when it is not there.
pub fn metric(exposition: &str, name: &str) -> Option<f64> {
    exposition
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

/// How fast `/api/health` answered while an attack ran.
#[derive(Debug, Clone, Copy)]
pub struct HealthDuring {
    /// Answers (each a 200).
    pub count: usize,
    /// Their median latency.
    pub median: std::time::Duration,
    /// The slowest.
    pub max: std::time::Duration,
}

impl std::fmt::Display for HealthDuring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "health {} × 200, median {:.1} ms, max {:.1} ms",
            self.count,
            self.median.as_secs_f64() * 1e3,
            self.max.as_secs_f64() * 1e3
        )
    }
}

/// Units left in `key`'s binding window (the day's, for an account whose
/// minute is unbounded), read with `GET /api/strategies` (which costs 1).
pub async fn units_left(s: &Server, key: &str) -> u64 {
    let r = s.get_bearer("/api/strategies", key).await;
    assert_eq!(r.status(), 200);
    r.headers()["x-ratelimit-remaining"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// Runs `work` while asking `s`'s `/api/health` every 50 ms (each answer
/// must be 200); its output and the latencies, to report (measured, not
/// asserted: docs/SECURITY.md keeps the figures).
pub async fn with_health<T>(
    s: &Server,
    work: impl std::future::Future<Output = T>,
) -> (T, HealthDuring) {
    let mut times = Vec::new();
    tokio::pin!(work);
    // The first probe at once, so even a short attack is measured.
    let mut every = tokio::time::interval(std::time::Duration::from_millis(50));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let out = loop {
        tokio::select! {
            biased;
            out = &mut work => break out,
            _ = every.tick() => {
                let t = std::time::Instant::now();
                let (status, body) = s.get_as("/api/health", None).await;
                assert_eq!(status, 200, "health during the attack: {body}");
                times.push(t.elapsed());
            }
        }
    };
    times.sort();
    let during = HealthDuring {
        count: times.len(),
        median: times.get(times.len() / 2).copied().unwrap_or_default(),
        max: times.last().copied().unwrap_or_default(),
    };
    (out, during)
}
