//! In-process harness: the real router (`forecast::app::build`, then
//! `forecast::http::router`) over a private copy of the demo database,
//! called through [`super::client::Client::Local`] instead of a socket,
//! with the background tasks `serve` starts beside it
//! (`forecast::app::start_background`).
//!
//! The app runs on a runtime of its own (two workers, as the server on two
//! cores), not the test's: tests block their thread on CLI runs, and a
//! handler or the quota write-behind frozen mid-transaction would hold the
//! SQLite write lock the CLI is waiting for.
//!
//! The configuration is built as a value from the same `FORECAST_*` pairs
//! the end-to-end harness passes to the child process: tests run in
//! parallel threads of one process, so mutating the environment would leak
//! between them.

use std::path::PathBuf;
use std::time::Duration;

use forecast::config::Config;

use super::client::Client;
use super::{fresh_db, sqlite_url, Running, Server};

/// The address the app believes it is bound to, hence its default web
/// origin `http://127.0.0.1:9`: a plain-HTTP localhost origin, so the
/// session cookie is not `Secure`, as for the served binary. Nothing
/// listens there.
const BOUND: ([u8; 4], u16) = ([127, 0, 0, 1], 9);

impl Server {
    /// The router in process over a fresh copy of the demo database.
    pub async fn app() -> Server {
        Server::app_with(fresh_db(), &[]).await
    }

    /// The router in process over `db`, configured by `FORECAST_*` pairs
    /// as [`Server::start_with`] is by environment variables.
    pub async fn app_with(db: PathBuf, env: &[(&str, &str)]) -> Server {
        let config = config(sqlite_url(&db), env);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("the app's runtime");
        let bound = std::net::SocketAddr::from(BOUND);
        // Built on a thread of its own: `app::build` is not `Send` (the
        // demo loader's progress callback), so it cannot be spawned, and
        // blocking the test's thread on it would stall the test's runtime.
        let (tx, rx) = tokio::sync::oneshot::channel();
        let handle = rt.handle().clone();
        std::thread::spawn(move || {
            let router = handle.block_on(async {
                let (state, _demo) = forecast::app::build(&config, bound)
                    .await
                    .expect("build the app");
                // Detached: they stop with the runtime.
                drop(forecast::app::start_background(&state, &config));
                forecast::http::router(state)
            });
            let _ = tx.send(router);
        });
        let router = rx.await.expect("build the app");
        let base = format!("http://{bound}");
        Server {
            client: Client::Local {
                router,
                base: base.clone(),
                rt: rt.handle().clone(),
            },
            base,
            db,
            running: Running::InProcess(Some(rt)),
        }
    }
}

/// Defaults of `forecast serve` (as `Config::from_env` with nothing set)
/// for the database at `url`, with grading off as in the end-to-end
/// harness, then each `FORECAST_*` pair applied. An unknown name fails
/// loudly rather than being ignored.
fn config(url: String, env: &[(&str, &str)]) -> Config {
    let mut c = Config {
        addr: "127.0.0.1:0".into(),
        database_url: url,
        runtime: forecast::plugins::RuntimeConfig::default(),
        segmentation_wasm: None,
        metadata_ttl: forecast::config::METADATA_TTL,
        origin: None,
        cookie_secure: None,
        quota: forecast::auth::QuotaConfig::default(),
        // Tests grade explicitly; a background run over the whole universe
        // would only slow them down.
        grading: false,
        grade_at: chrono::NaiveTime::from_hms_opt(2, 0, 0).expect("valid time"),
        refresh: None,
        backtest_timeout: forecast::config::DEFAULT_BACKTEST_TIMEOUT,
        signal_cache_bytes: 512 << 20,
        plugin_dir: None,
        plugin_poll: Duration::from_secs(1),
        admin_token: Some(super::ADMIN_TOKEN.into()),
        llm: None,
        // No model unless a test asks (FORECAST_MODEL_DIR): loading it and
        // embedding the catalog would slow every test.
        model: forecast::config::ModelSetting::Off,
        match_per_minute: 30,
        login_concurrency: 2,
        demo_account: false,
        // Tests send far more than a browser would; those about the
        // per-client limit set their own.
        client_per_minute: 1_000_000,
        backtests_per_user: forecast::config::DEFAULT_BACKTESTS_PER_USER,
        backtest_queue_wait: forecast::config::DEFAULT_BACKTEST_QUEUE_WAIT,
        limits: forecast::server::Limits::default(),
        metrics_addr: None,
    };
    let ms = |v: &str| Duration::from_millis(v.parse().expect("milliseconds"));
    let mut llm = forecast::plugins::llm::LlmConfig {
        url: String::new(),
        model: String::new(),
        api_key: None,
        timeout: Duration::from_secs(2),
    };
    for &(name, value) in env {
        match name {
            "FORECAST_SEGMENTATION_WASM" => c.segmentation_wasm = Some(value.into()),
            "FORECAST_PLUGIN_DIR" => c.plugin_dir = Some(value.into()),
            "FORECAST_MODEL_DIR" => {
                c.model = forecast::config::ModelSetting::Required(value.into())
            }
            "FORECAST_PLUGIN_TIMEOUT_MS" => c.runtime.call_timeout = ms(value),
            "FORECAST_PLUGIN_MEMORY_MB" => {
                c.runtime.memory_limit = value.parse::<usize>().expect("MiB") << 20
            }
            "FORECAST_PLUGIN_CONCURRENCY" => {
                c.runtime.max_concurrency = value.parse().expect("a count")
            }
            "FORECAST_PLUGIN_POLL_MS" => c.plugin_poll = ms(value),
            "FORECAST_BACKTEST_TIMEOUT_MS" => c.backtest_timeout = ms(value),
            "FORECAST_ADMIN_TOKEN" => {
                c.admin_token = Some(value.to_string()).filter(|t| !t.is_empty())
            }
            "FORECAST_MATCH_PER_MINUTE" => c.match_per_minute = value.parse().expect("a count"),
            "FORECAST_CLIENT_PER_MINUTE" => c.client_per_minute = value.parse().expect("a count"),
            "FORECAST_LOGIN_CONCURRENCY" => c.login_concurrency = value.parse().expect("a count"),
            "FORECAST_QUOTA_PER_MINUTE" => c.quota.per_minute = value.parse().expect("a count"),
            "FORECAST_QUOTA_PER_DAY" => c.quota.per_day = value.parse().expect("a count"),
            "FORECAST_GRADING" => c.grading = value == "on",
            "FORECAST_BACKTESTS_PER_USER" => c.backtests_per_user = value.parse().expect("a count"),
            "FORECAST_BACKTEST_QUEUE_MS" => c.backtest_queue_wait = ms(value),
            "FORECAST_REQUEST_TIMEOUT_MS" => c.limits.request_timeout = ms(value),
            "FORECAST_BODY_TIMEOUT_MS" => c.limits.body_timeout = ms(value),
            "FORECAST_LLM_URL" => llm.url = value.into(),
            "FORECAST_LLM_MODEL" => llm.model = value.into(),
            "FORECAST_LLM_API_KEY" => llm.api_key = Some(value.into()),
            "FORECAST_LLM_TIMEOUT_MS" => llm.timeout = ms(value),
            other => panic!("the in-process harness does not read {other}"),
        }
    }
    if !llm.url.is_empty() {
        c.llm = Some(llm);
    }
    c
}
