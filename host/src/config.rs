//! Configuration from the environment (and CLI flags that override it).

use std::path::PathBuf;
use std::time::Duration;

use forecast_plugins::RuntimeConfig;
use forecast_services::auth::QuotaConfig;

/// Default listen address.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";
/// Default database: a SQLite file under `./data/`.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/forecast.db";
/// How long fetched asset metadata is served without refetching.
pub const METADATA_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// The scheduled price refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshConfig {
    /// When, UTC.
    pub at: chrono::NaiveTime,
    /// From where.
    pub provider: forecast_services::providers::ProviderKind,
}

/// Everything `forecast serve` needs.
#[derive(Debug, Clone)]
pub struct Config {
    /// `FORECAST_ADDR`: where to listen (port 0 picks a free port).
    pub addr: String,
    /// `DATABASE_URL`: the store.
    pub database_url: String,
    /// `FORECAST_PLUGIN_TIMEOUT_MS`, `FORECAST_PLUGIN_MEMORY_MB`,
    /// `FORECAST_PLUGIN_CONCURRENCY`: limits of every plugin call.
    pub runtime: RuntimeConfig,
    /// `FORECAST_SEGMENTATION_WASM`: serve this component as the
    /// segmentation engine instead of the built-in one.
    pub segmentation_wasm: Option<PathBuf>,
    /// How long asset metadata is fresh.
    pub metadata_ttl: Duration,
    /// `FORECAST_ORIGIN`: the web app's origin. Cookie-authenticated
    /// state-changing requests must carry it in `Origin`. Unset: the
    /// server's own `http://{bound address}`.
    pub origin: Option<String>,
    /// `FORECAST_COOKIE_SECURE` (true/false): the session cookie's `Secure`
    /// flag. Unset: on, except for a plain-HTTP localhost origin.
    pub cookie_secure: Option<bool>,
    /// `FORECAST_QUOTA_PER_MINUTE`, `FORECAST_QUOTA_PER_DAY`: default quotas.
    pub quota: QuotaConfig,
    /// `FORECAST_GRADING` (on/off): whether `serve` grades at start when the
    /// snapshot is missing or stale, and daily.
    pub grading: bool,
    /// `FORECAST_GRADE_AT` (`HH:MM`, UTC): when the daily grading runs.
    pub grade_at: chrono::NaiveTime,
    /// `FORECAST_REFRESH_AT` (`HH:MM`, UTC; unset: off): when the active
    /// universe's prices are fetched from `FORECAST_REFRESH_PROVIDER`
    /// (`yahoo` or `stooq`, default `yahoo`), split across replicas; the
    /// daily grade waits for a refresh still running.
    pub refresh: Option<RefreshConfig>,
    /// `FORECAST_BACKTEST_TIMEOUT_MS`: the time limit of one backtest
    /// (loading, signals and the run; default 30 s). Past it: 504.
    pub backtest_timeout: Duration,
    /// `FORECAST_SIGNAL_CACHE_MB`: memory for what backtests keep resident:
    /// the histories they read and the engine's walk-forward signals
    /// (default 1024 MiB, one whole-universe parameter set with its
    /// histories; 0 disables the cache).
    pub signal_cache_bytes: usize,
    /// `FORECAST_PLUGIN_DIR`: a folder whose `*.wasm` strategy components
    /// are loaded at start beside the built-in ones.
    pub plugin_dir: Option<PathBuf>,
    /// `FORECAST_PLUGIN_POLL_MS`: how often a server checks the registry for
    /// activations, rollbacks and shadow runs (default 1 s; every replica
    /// follows a change within this plus the load time).
    pub plugin_poll: Duration,
    /// `FORECAST_ADMIN_TOKEN`: the token of `/api/admin/*` (unset: the
    /// admin API is disabled).
    pub admin_token: Option<String>,
    /// `FORECAST_LLM_URL`, `FORECAST_LLM_MODEL`, `FORECAST_LLM_API_KEY`,
    /// `FORECAST_LLM_TIMEOUT_MS` (default 2 s): an OpenAI-compatible model
    /// the matcher may consult (unset: lexical matching only).
    pub llm: Option<forecast_plugins::llm::LlmConfig>,
    /// `FORECAST_MODEL_DIR`: the matcher's sentence-embedding model (see
    /// [`ModelSetting`]).
    pub model: ModelSetting,
    /// `FORECAST_MATCH_PER_MINUTE`: matcher requests per user per minute
    /// (default 30).
    pub match_per_minute: u32,
    /// `serve --demo` (no variable): create the demo Premium account on a
    /// PostgreSQL database that has no user yet. SQLite, the local
    /// default, gets it without asking; a shared database never does
    /// unless an operator says so.
    pub demo_account: bool,
    /// `FORECAST_CLIENT_PER_MINUTE`: requests per client address per
    /// minute that no user's quota meters (anonymous, wrong keys, health,
    /// the session routes; default 600).
    pub client_per_minute: u32,
    /// `FORECAST_LOGIN_CONCURRENCY`: password hashes run at once (default:
    /// the number of cores); more concurrent sign-ins get 503 at once.
    pub login_concurrency: usize,
    // Bounded backtests (issue 14).
    /// `FORECAST_BACKTESTS_PER_USER`: backtests one account may run at once
    /// on this server, `/api/backtest` and `/web/api/backtest` together
    /// (default 1, at least 1); more get 429 with `Retry-After`, before
    /// anything is loaded or charged.
    pub backtests_per_user: usize,
    /// `FORECAST_BACKTEST_QUEUE_MS`: how long a backtest waits for its
    /// plugin slots (default 10 s; 0: only if free now); past it 503 with
    /// `Retry-After`. `FORECAST_BACKTEST_TIMEOUT_MS` counts from when the
    /// slots are held.
    pub backtest_queue_wait: Duration,
    /// The deadlines and the connection cap of the HTTP server
    /// (`FORECAST_HEADER_TIMEOUT_MS`, `FORECAST_IDLE_TIMEOUT_MS`,
    /// `FORECAST_BODY_TIMEOUT_MS`, `FORECAST_REQUEST_TIMEOUT_MS`,
    /// `FORECAST_MAX_CONNECTIONS`, `FORECAST_SHUTDOWN_GRACE_MS`).
    pub limits: crate::server::Limits,
    /// `FORECAST_METRICS_ADDR`: serve `/metrics` on a listener of its own
    /// at this address, without a token (bind it to a private interface);
    /// the main address then no longer serves it. Unset: `/metrics` is on
    /// the main address behind the admin token.
    pub metrics_addr: Option<String>,
}

/// Default of `FORECAST_BACKTESTS_PER_USER`.
pub const DEFAULT_BACKTESTS_PER_USER: usize = 1;
/// Default of `FORECAST_BACKTEST_QUEUE_MS`.
pub const DEFAULT_BACKTEST_QUEUE_WAIT: Duration = Duration::from_secs(10);

/// Default time limit of one backtest.
pub const DEFAULT_BACKTEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A variable is set but unusable.
#[derive(Debug, thiserror::Error)]
#[error("environment variable {name}: {message}")]
pub struct ConfigError {
    name: &'static str,
    message: String,
}

fn number(name: &'static str, default: u64, min: u64) -> Result<u64, ConfigError> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(raw) => match raw.trim().parse::<u64>() {
            Ok(v) if v >= min => Ok(v),
            _ => Err(ConfigError {
                name,
                message: format!("expected an integer >= {min}, got '{raw}'"),
            }),
        },
    }
}

impl Config {
    /// Reads the environment; unset variables take their defaults.
    pub fn from_env() -> Result<Self, ConfigError> {
        let defaults = RuntimeConfig::default();
        let backtest_timeout = Duration::from_millis(number(
            "FORECAST_BACKTEST_TIMEOUT_MS",
            DEFAULT_BACKTEST_TIMEOUT.as_millis() as u64,
            1,
        )?);
        let backtest_queue_wait = Duration::from_millis(number(
            "FORECAST_BACKTEST_QUEUE_MS",
            DEFAULT_BACKTEST_QUEUE_WAIT.as_millis() as u64,
            0,
        )?);
        let limits = limits_from_env(backtest_timeout + backtest_queue_wait)?;
        Ok(Config {
            addr: std::env::var("FORECAST_ADDR").unwrap_or_else(|_| DEFAULT_ADDR.into()),
            database_url: database_url_from_env(),
            runtime: RuntimeConfig {
                call_timeout: Duration::from_millis(number(
                    "FORECAST_PLUGIN_TIMEOUT_MS",
                    defaults.call_timeout.as_millis() as u64,
                    1,
                )?),
                memory_limit: (number(
                    "FORECAST_PLUGIN_MEMORY_MB",
                    (defaults.memory_limit >> 20) as u64,
                    16,
                )? as usize)
                    << 20,
                max_concurrency: number(
                    "FORECAST_PLUGIN_CONCURRENCY",
                    defaults.max_concurrency as u64,
                    1,
                )? as usize,
            },
            segmentation_wasm: std::env::var_os("FORECAST_SEGMENTATION_WASM").map(PathBuf::from),
            metadata_ttl: METADATA_TTL,
            origin: std::env::var("FORECAST_ORIGIN")
                .ok()
                .map(|o| o.trim_end_matches('/').to_string()),
            cookie_secure: match std::env::var("FORECAST_COOKIE_SECURE") {
                Err(_) => None,
                Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
                    "1" | "true" | "yes" | "on" => Some(true),
                    "0" | "false" | "no" | "off" => Some(false),
                    _ => {
                        return Err(ConfigError {
                            name: "FORECAST_COOKIE_SECURE",
                            message: format!("expected true or false, got '{v}'"),
                        })
                    }
                },
            },
            grading: match std::env::var("FORECAST_GRADING").as_deref() {
                Err(_) | Ok("on") | Ok("1") | Ok("true") => true,
                Ok("off") | Ok("0") | Ok("false") => false,
                Ok(other) => {
                    return Err(ConfigError {
                        name: "FORECAST_GRADING",
                        message: format!("expected on or off, got '{other}'"),
                    })
                }
            },
            grade_at: match std::env::var("FORECAST_GRADE_AT") {
                Err(_) => chrono::NaiveTime::from_hms_opt(2, 0, 0).expect("valid time"),
                Ok(raw) => {
                    chrono::NaiveTime::parse_from_str(raw.trim(), "%H:%M").map_err(|_| {
                        ConfigError {
                            name: "FORECAST_GRADE_AT",
                            message: format!("expected HH:MM (UTC), got '{raw}'"),
                        }
                    })?
                }
            },
            refresh: match std::env::var("FORECAST_REFRESH_AT") {
                Err(_) => None,
                Ok(raw) if raw.trim().is_empty() => None,
                Ok(raw) => Some(RefreshConfig {
                    at: chrono::NaiveTime::parse_from_str(raw.trim(), "%H:%M")
                        .or_else(|_| chrono::NaiveTime::parse_from_str(raw.trim(), "%H:%M:%S"))
                        .map_err(|_| ConfigError {
                            name: "FORECAST_REFRESH_AT",
                            message: format!("expected HH:MM or HH:MM:SS (UTC), got '{raw}'"),
                        })?,
                    provider: match std::env::var("FORECAST_REFRESH_PROVIDER") {
                        Err(_) => forecast_services::providers::ProviderKind::Yahoo,
                        Ok(p) => p.trim().parse().map_err(|message| ConfigError {
                            name: "FORECAST_REFRESH_PROVIDER",
                            message,
                        })?,
                    },
                }),
            },
            backtest_timeout,
            limits,
            metrics_addr: std::env::var("FORECAST_METRICS_ADDR")
                .ok()
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty()),
            signal_cache_bytes: (number("FORECAST_SIGNAL_CACHE_MB", 1024, 0)? as usize) << 20,
            plugin_dir: std::env::var_os("FORECAST_PLUGIN_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            plugin_poll: Duration::from_millis(number("FORECAST_PLUGIN_POLL_MS", 1_000, 50)?),
            admin_token: match std::env::var("FORECAST_ADMIN_TOKEN") {
                Err(_) => None,
                Ok(t) if t.trim().is_empty() => None,
                Ok(t) if t.trim().len() >= 16 => Some(t.trim().to_string()),
                Ok(_) => {
                    return Err(ConfigError {
                        name: "FORECAST_ADMIN_TOKEN",
                        message: "must be at least 16 characters".into(),
                    })
                }
            },
            llm: match std::env::var("FORECAST_LLM_URL")
                .ok()
                .filter(|u| !u.trim().is_empty())
            {
                None => None,
                Some(url) => Some(forecast_plugins::llm::LlmConfig {
                    url: url.trim().to_string(),
                    model: std::env::var("FORECAST_LLM_MODEL").map_err(|_| ConfigError {
                        name: "FORECAST_LLM_MODEL",
                        message: "must be set when FORECAST_LLM_URL is".into(),
                    })?,
                    api_key: std::env::var("FORECAST_LLM_API_KEY")
                        .ok()
                        .filter(|k| !k.is_empty()),
                    timeout: Duration::from_millis(number("FORECAST_LLM_TIMEOUT_MS", 2_000, 1)?),
                }),
            },
            model: ModelSetting::from_env(),
            match_per_minute: number("FORECAST_MATCH_PER_MINUTE", 30, 1)? as u32,
            demo_account: false,
            client_per_minute: number("FORECAST_CLIENT_PER_MINUTE", 600, 1)? as u32,
            login_concurrency: number(
                "FORECAST_LOGIN_CONCURRENCY",
                std::thread::available_parallelism().map_or(2, |n| n.get() as u64),
                1,
            )? as usize,
            quota: QuotaConfig {
                per_minute: number("FORECAST_QUOTA_PER_MINUTE", 60, 1)? as u32,
                per_day: number("FORECAST_QUOTA_PER_DAY", 1_000, 1)? as u32,
            },
            // Bounded backtests (issue 14).
            backtests_per_user: number(
                "FORECAST_BACKTESTS_PER_USER",
                DEFAULT_BACKTESTS_PER_USER as u64,
                1,
            )? as usize,
            backtest_queue_wait,
        })
    }
}

/// The server's limits from the environment. The per-request deadline must
/// exceed the longest a backtest may take (its wait for plugin slots plus
/// its time limit), so a slow backtest is answered by the backtest (504
/// naming the reduce-scope case) rather than cut off. Unset, it is the
/// larger of its default and that plus 5 s.
fn limits_from_env(backtest_longest: Duration) -> Result<crate::server::Limits, ConfigError> {
    let d = crate::server::Limits::default();
    let ms = |name, default: Duration, min| -> Result<Duration, ConfigError> {
        Ok(Duration::from_millis(number(
            name,
            default.as_millis() as u64,
            min,
        )?))
    };
    let limits = crate::server::Limits {
        header_timeout: ms("FORECAST_HEADER_TIMEOUT_MS", d.header_timeout, 1)?,
        idle_timeout: ms("FORECAST_IDLE_TIMEOUT_MS", d.idle_timeout, 1)?,
        body_timeout: ms("FORECAST_BODY_TIMEOUT_MS", d.body_timeout, 1)?,
        request_timeout: ms(
            "FORECAST_REQUEST_TIMEOUT_MS",
            d.request_timeout
                .max(backtest_longest + Duration::from_secs(5)),
            1,
        )?,
        max_connections: number("FORECAST_MAX_CONNECTIONS", d.max_connections as u64, 1)? as usize,
        shutdown_grace: ms("FORECAST_SHUTDOWN_GRACE_MS", d.shutdown_grace, 0)?,
    };
    if limits.request_timeout <= backtest_longest {
        return Err(ConfigError {
            name: "FORECAST_REQUEST_TIMEOUT_MS",
            message: format!(
                "must exceed FORECAST_BACKTEST_QUEUE_MS + FORECAST_BACKTEST_TIMEOUT_MS ({} ms), \
                 got {} ms",
                backtest_longest.as_millis(),
                limits.request_timeout.as_millis()
            ),
        });
    }
    Ok(limits)
}

/// Where the matcher's sentence-embedding model is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSetting {
    /// `FORECAST_MODEL_DIR=off`: lexical matching only, nothing loaded.
    Off,
    /// `FORECAST_MODEL_DIR` unset: `data/models/all-minilm-l6-v2` under the
    /// working directory if it is there (`make model` puts it there), else
    /// lexical matching only, with a warning.
    Default(PathBuf),
    /// `FORECAST_MODEL_DIR=<folder>`: that folder; a missing or broken
    /// model stops the server with the reason.
    Required(PathBuf),
}

impl ModelSetting {
    /// From `FORECAST_MODEL_DIR`.
    pub fn from_env() -> Self {
        match std::env::var_os("FORECAST_MODEL_DIR") {
            None => ModelSetting::Default(PathBuf::from(forecast_embed::DEFAULT_DIR)),
            Some(v) if v.is_empty() => {
                ModelSetting::Default(PathBuf::from(forecast_embed::DEFAULT_DIR))
            }
            Some(v) if v == "off" => ModelSetting::Off,
            Some(v) => ModelSetting::Required(PathBuf::from(v)),
        }
    }
}

/// `DATABASE_URL` or the default SQLite file.
pub fn database_url_from_env() -> String {
    std::env::var("DATABASE_URL").unwrap_or_else(|_| DEFAULT_DATABASE_URL.into())
}

impl Config {
    /// The origin state-changing cookie requests must come from.
    /// What the plugin set is loaded with.
    pub fn plugins_config(&self) -> forecast_services::active::PluginsConfig {
        forecast_services::active::PluginsConfig {
            runtime: self.runtime,
            llm: self.llm.clone(),
            segmentation_wasm: self.segmentation_wasm.clone(),
            plugin_dir: self.plugin_dir.clone(),
        }
    }

    pub fn resolved_origin(&self, bound: std::net::SocketAddr) -> String {
        self.origin
            .clone()
            .unwrap_or_else(|| format!("http://{bound}"))
    }

    /// Whether the session cookie carries `Secure`.
    pub fn resolved_cookie_secure(&self, origin: &str) -> bool {
        self.cookie_secure.unwrap_or_else(|| {
            let local = ["http://localhost", "http://127.0.0.1", "http://[::1]"];
            !local
                .iter()
                .any(|l| origin == *l || origin.starts_with(&format!("{l}:")))
        })
    }
}
