//! The one configuration of `forecast`. Every setting is declared once, in
//! [`Settings`] (clap derive): its environment variable, its flag of
//! `forecast serve` (the flag wins over the variable), its default, its
//! rule (a value parser) and its help. Everything that reads a setting goes
//! through that declaration:
//!
//! - `forecast serve` flattens [`Settings`] into its arguments (so
//!   `forecast serve --help` lists them) and resolves it into a [`Config`];
//! - the other commands that need the server's settings call
//!   [`Config::from_env`], the same parser over the environment alone;
//! - the test harness calls [`Config::from_pairs`]: the same parser over
//!   `FORECAST_*` pairs instead of the process environment, so tests running
//!   in parallel threads share nothing and an unknown name fails;
//! - `forecast config` and docs/CONFIG.md are rendered from it ([`docs`]).
//!
//! Rules that involve two settings (the request deadline against the
//! backtest limits, an LLM model with an LLM URL) are checked by
//! [`Settings::resolve`]. Every error names the variable.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args, FromArgMatches};

use forecast_http::clients::TrustedProxies;
use forecast_ingest::providers::{self, stooq, yahoo, ProviderKind};
use forecast_plugins::RuntimeConfig;
use forecast_services::auth::QuotaConfig;

pub mod docs;
#[cfg(test)]
mod tests;

/// Default listen address.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";
/// Default database: a SQLite file under `./data/`.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/forecast.db";
/// How long fetched asset metadata is served without refetching.
pub const METADATA_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
/// Default of `FORECAST_BACKTESTS_PER_USER`.
pub const DEFAULT_BACKTESTS_PER_USER: usize = 1;
/// Default of `FORECAST_BACKTEST_QUEUE_MS`.
pub const DEFAULT_BACKTEST_QUEUE_WAIT: Duration = Duration::from_secs(10);
/// Default time limit of one backtest (`FORECAST_BACKTEST_TIMEOUT_MS`).
pub const DEFAULT_BACKTEST_TIMEOUT: Duration = Duration::from_secs(30);

/// An optional setting whose empty value means unset, as if the variable
/// were not there. It is an `Option` under another name so that clap hands
/// the empty value to the setting's parser (default `""`) instead of
/// treating the argument as optional.
pub type Unset<T> = Option<T>;

/// Every setting of `forecast serve`, each an environment variable and a
/// flag. The help texts are what `forecast serve --help`, `forecast
/// config` and docs/CONFIG.md show.
#[derive(Debug, Clone, Args)]
pub struct Settings {
    #[command(flatten)]
    pub serving: Serving,
    #[command(flatten)]
    pub http: HttpLimits,
    #[command(flatten)]
    pub accounts: Accounts,
    #[command(flatten)]
    pub plugins: PluginSettings,
    #[command(flatten)]
    pub backtests: Backtests,
    #[command(flatten)]
    pub heavy: HeavyWork,
    #[command(flatten)]
    pub grading: Grading,
    #[command(flatten)]
    pub prices: Prices,
    #[command(flatten)]
    pub matcher: Matcher,
    #[command(flatten)]
    pub alerts: Alerts,
    #[command(flatten)]
    pub testing: Testing,
}

/// Where the server listens and what it trusts.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Serving")]
pub struct Serving {
    /// Where to listen, host:port; port 0 picks a free port.
    #[arg(long, env = "FORECAST_ADDR", value_name = "HOST:PORT", default_value = DEFAULT_ADDR)]
    pub addr: String,
    /// The database: `sqlite://<file>` (created if missing) or `postgres://…`; every command uses it.
    #[arg(long, env = "DATABASE_URL", value_name = "URL", default_value = DEFAULT_DATABASE_URL)]
    pub database_url: String,
    /// The web app's origin, e.g. `https://forecast.example.com`: signed-in browsers' state-changing requests must carry it in `Origin`. Unset: the server's own `http://<bound address>`.
    #[arg(long, env = "FORECAST_ORIGIN", value_name = "URL", default_value = "", hide_default_value = true, value_parser = origin)]
    pub origin: Unset<String>,
    /// Whether the session cookie is Secure (on/off). Unset: on, except for a plain-HTTP localhost origin.
    #[arg(long, env = "FORECAST_COOKIE_SECURE", value_name = "ON|OFF", default_value = "", hide_default_value = true, action = ArgAction::Set, value_parser = maybe_on_off)]
    pub cookie_secure: Unset<bool>,
    /// The bearer token of the admin API (`/api/admin/*`) and of `/metrics`, at least 16 characters. Unset: the admin API is disabled.
    #[arg(long, env = "FORECAST_ADMIN_TOKEN", value_name = "TOKEN", default_value = "", hide_default_value = true, hide_env_values = true, value_parser = admin_token)]
    pub admin_token: Unset<String>,
    /// Serve `/metrics` without a token on a listener of its own at this address (bind it to a private interface); the main address then no longer serves it. Unset: `/metrics` is on the main address behind the admin token.
    #[arg(long, env = "FORECAST_METRICS_ADDR", value_name = "HOST:PORT", default_value = "", hide_default_value = true, value_parser = trimmed)]
    pub metrics_addr: Unset<String>,
    /// Reverse proxies whose `X-Forwarded-For` names the client: comma-separated CIDR blocks or addresses, e.g. `10.0.0.0/8,::1`. From such a peer the client is the right-most forwarded address not itself trusted, for the per-address limits, the sign-in throttle, the admin-token lockout and the logs; their connections are not counted against FORECAST_MAX_CONNECTIONS_PER_CLIENT. Unset: no proxy is trusted; the client is the TCP peer.
    #[arg(long, env = "FORECAST_TRUSTED_PROXIES", value_name = "CIDRS", default_value = "", hide_default_value = true, value_parser = trusted_proxies)]
    pub trusted_proxies: TrustedProxies,
}

/// The HTTP server's deadlines and limits.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "HTTP limits")]
pub struct HttpLimits {
    /// A new connection's first request head, and any head from its first byte, must be complete within this many milliseconds.
    #[arg(long, env = "FORECAST_HEADER_TIMEOUT_MS", value_name = "MS", default_value = "10000", value_parser = millis::<1>)]
    pub header_timeout_ms: Duration,
    /// A kept-alive connection with no new request for this many milliseconds is closed; so is one whose response has not progressed for as long.
    #[arg(long, env = "FORECAST_IDLE_TIMEOUT_MS", value_name = "MS", default_value = "60000", value_parser = millis::<1>)]
    pub idle_timeout_ms: Duration,
    /// A request's whole body must arrive within this many milliseconds of its head (408 otherwise).
    #[arg(long, env = "FORECAST_BODY_TIMEOUT_MS", value_name = "MS", default_value = "30000", value_parser = millis::<1>)]
    pub body_timeout_ms: Duration,
    /// A request still unanswered after this many milliseconds gets 504. It must exceed FORECAST_HEAVY_WAIT_MS + FORECAST_BACKTEST_QUEUE_MS + the larger of FORECAST_BACKTEST_TIMEOUT_MS and FORECAST_RESEARCH_TIMEOUT_MS (a backtest's longest), and FORECAST_HEAVY_WAIT_MS + FORECAST_UPLOAD_COMPILE_TIMEOUT_MS (a strategy upload's longest). Unset: the larger of 60000 and the longer of the two plus 5000 (75000 with the defaults).
    #[arg(long, env = "FORECAST_REQUEST_TIMEOUT_MS", value_name = "MS", value_parser = millis::<1>)]
    pub request_timeout_ms: Option<Duration>,
    /// Open connections at most (lowered below the open-file limit if needed).
    #[arg(long, env = "FORECAST_MAX_CONNECTIONS", value_name = "N", default_value = "4096", value_parser = at_least::<1>)]
    pub max_connections: u64,
    /// Open connections at most from one client address (IPv6: one /64), so one client cannot take them all; more from it are refused at once (503 with Retry-After while few refusals are pending, else closed).
    #[arg(long, env = "FORECAST_MAX_CONNECTIONS_PER_CLIENT", value_name = "N", default_value = "256", value_parser = at_least::<1>)]
    pub max_connections_per_client: u64,
    /// After SIGTERM or SIGINT, how many milliseconds requests in flight may take to finish before the rest are closed.
    #[arg(long, env = "FORECAST_SHUTDOWN_GRACE_MS", value_name = "MS", default_value = "10000", value_parser = millis::<0>)]
    pub shutdown_grace_ms: Duration,
    /// Requests per client address per minute that no account's quota meters (anonymous requests, wrong keys, health checks, sign-in); more get 429.
    #[arg(long, env = "FORECAST_CLIENT_PER_MINUTE", value_name = "N", default_value = "600", value_parser = count::<1>)]
    pub client_per_minute: u32,
}

/// Accounts: default quotas and sign-in.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Accounts")]
pub struct Accounts {
    /// Default quota of an account, in cost units per UTC minute (`forecast user set-limits` overrides it per account).
    #[arg(long, env = "FORECAST_QUOTA_PER_MINUTE", value_name = "UNITS", default_value = "60", value_parser = count::<1>)]
    pub quota_per_minute: u32,
    /// Default quota of an account, in cost units per UTC day.
    #[arg(long, env = "FORECAST_QUOTA_PER_DAY", value_name = "UNITS", default_value = "1000", value_parser = count::<1>)]
    pub quota_per_day: u32,
    /// Password checks run at once; more concurrent sign-ins get 503 at once. Unset: the number of CPU cores.
    #[arg(long, env = "FORECAST_LOGIN_CONCURRENCY", value_name = "N", value_parser = at_least::<1>)]
    pub login_concurrency: Option<u64>,
    /// Where a Free user upgrades to Premium: an absolute http:// or https:// URL that the web app links to from what Premium unlocks (`GET /auth/me` answers it as `upgrade_url`). Unset: no link (`upgrade_url` is null).
    #[arg(long, env = "FORECAST_UPGRADE_URL", value_name = "URL", default_value = "", hide_default_value = true, value_parser = upgrade_url)]
    pub upgrade_url: Unset<String>,
}

/// The plugins (WebAssembly components).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Plugins")]
pub struct PluginSettings {
    /// Time limit of one plugin call, in milliseconds.
    #[arg(long, env = "FORECAST_PLUGIN_TIMEOUT_MS", value_name = "MS", default_value = "10000", value_parser = millis::<1>)]
    pub plugin_timeout_ms: Duration,
    /// Memory of one plugin instance, in MiB (at least 16).
    #[arg(long, env = "FORECAST_PLUGIN_MEMORY_MB", value_name = "MIB", default_value = "256", value_parser = at_least::<16>)]
    pub plugin_memory_mb: u64,
    /// Plugin calls running at once.
    #[arg(long, env = "FORECAST_PLUGIN_CONCURRENCY", value_name = "N", default_value = "16", value_parser = at_least::<1>)]
    pub plugin_concurrency: u64,
    /// Serve this component (`.wasm`) as the segmentation engine instead of the built-in one. Unset: the built-in engine.
    #[arg(long, env = "FORECAST_SEGMENTATION_WASM", value_name = "PATH", default_value = "", hide_default_value = true, value_parser = path)]
    pub segmentation_wasm: Unset<PathBuf>,
    /// A folder whose `*.wasm` strategy components are loaded at start beside the built-in ones. Unset: none.
    #[arg(long, env = "FORECAST_PLUGIN_DIR", value_name = "PATH", default_value = "", hide_default_value = true, value_parser = path)]
    pub plugin_dir: Unset<PathBuf>,
    /// How often, in milliseconds, a server checks the plugin registry for activations, rollbacks and shadow runs (at least 50); every server sharing the database follows a change within this plus the load time.
    #[arg(long, env = "FORECAST_PLUGIN_POLL_MS", value_name = "MS", default_value = "1000", value_parser = millis::<50>)]
    pub plugin_poll_ms: Duration,
    /// Public keys trusted to sign plugin bundles, comma-separated, each `ed25519:<base64 of the 32-byte key>` as `forecast plugin keygen` prints it. A signed component from another key is refused by `forecast plugin add`, `FORECAST_PLUGIN_DIR` and the sharing of an uploaded strategy. Unset: any valid signature is accepted (and its signer shown).
    #[arg(
        long,
        env = "FORECAST_PLUGIN_TRUST",
        value_name = "KEYS",
        default_value = "",
        hide_default_value = true
    )]
    pub plugin_trust: String,
    /// Whether unsigned components are `allow`ed or `refuse`d by `forecast plugin add`, `FORECAST_PLUGIN_DIR` and the sharing of an uploaded strategy (an author's private uploads may always be unsigned).
    #[arg(long, env = "FORECAST_PLUGIN_UNSIGNED", value_name = "allow|refuse", default_value = "allow", value_parser = allow_refuse)]
    pub plugin_unsigned: bool,
    /// A folder where authors' uploaded strategies are kept compiled (by SHA-256 and engine configuration, created `0700`), so a restart loads them instead of compiling each again; `off` to compile on every start. Unset: `forecast-engine/modules` under `$XDG_CACHE_HOME`, else under `$HOME/.cache`.
    #[arg(long, env = "FORECAST_MODULE_CACHE", value_name = "PATH|off", default_value = "", hide_default_value = true, value_parser = module_cache)]
    pub module_cache: ModuleCacheSetting,
    /// The loudest level at which authors' uploaded strategies' `host-log` lines are written: `debug` (seen only with `RUST_LOG=debug`), `info` or `warn` (a louder line is written at this level). Built-in and registered plugins log as they ask.
    #[arg(long, env = "FORECAST_UPLOAD_LOG_LEVEL", value_name = "debug|info|warn", default_value = "debug", value_parser = upload_log_level)]
    pub upload_log_level: tracing::Level,
    /// How long, in milliseconds, checking an uploaded strategy may take once its heavy-work turn has come: the wait for a plugin slot, compilation, type check and self-test together; past it the upload is refused (422) and nothing is stored. A Python strategy takes 14-26 s on 2 busy cores.
    #[arg(long, env = "FORECAST_UPLOAD_COMPILE_TIMEOUT_MS", value_name = "MS", default_value = "60000", value_parser = millis::<1>)]
    pub upload_compile_timeout_ms: Duration,
    /// Profiling: write `/tmp/perf-<pid>.map` so that `perf report` names the plugins' functions (on/off).
    #[arg(long, env = "FORECAST_WASM_PERFMAP", value_name = "ON|OFF", default_value = "off", action = ArgAction::Set, value_parser = on_off)]
    pub wasm_perfmap: bool,
}

/// Backtests.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Backtests")]
pub struct Backtests {
    /// Time limit of one backtest (loading, signals and the run), in milliseconds, counted from when its plugin slots are held; past it: 504.
    #[arg(long, env = "FORECAST_BACKTEST_TIMEOUT_MS", value_name = "MS", default_value = "30000", value_parser = millis::<1>)]
    pub backtest_timeout_ms: Duration,
    /// Time limit of one parameter sweep or walk-forward (every combination's run), in milliseconds, counted from when its plugin slots are held; past it: 504.
    #[arg(long, env = "FORECAST_RESEARCH_TIMEOUT_MS", value_name = "MS", default_value = "35000", value_parser = millis::<1>)]
    pub research_timeout_ms: Duration,
    /// How long, in milliseconds, a backtest waits for its plugin slots (0: only if free now); past it: 503 with Retry-After.
    #[arg(long, env = "FORECAST_BACKTEST_QUEUE_MS", value_name = "MS", default_value = "10000", value_parser = millis::<0>)]
    pub backtest_queue_ms: Duration,
    /// Backtests one account may run at once on this server, API and web app together; more get 429 with Retry-After.
    #[arg(long, env = "FORECAST_BACKTESTS_PER_USER", value_name = "N", default_value = "1", value_parser = at_least::<1>)]
    pub backtests_per_user: u64,
    /// Memory, in MiB, for what backtests keep resident: the price histories they read and the engine's signals (0 disables the cache).
    #[arg(long, env = "FORECAST_SIGNAL_CACHE_MB", value_name = "MIB", default_value = "1024", value_parser = at_least::<0>)]
    pub signal_cache_mb: u64,
}

/// The server-wide budget for heavy work: live analyses and verdicts,
/// backtests and plugin compilation (decision 0072).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Heavy work")]
pub struct HeavyWork {
    /// Heavy jobs (live analyses and verdicts, backtests, plugin compilation) running at once on this server, all accounts together; the default suits 2 cores.
    #[arg(long, env = "FORECAST_HEAVY_SLOTS", value_name = "N", default_value = "2", value_parser = at_least::<1>)]
    pub heavy_slots: u64,
    /// Memory, in MiB, the running heavy jobs may hold together by their estimates (a job estimated above it runs alone); the default, with the signal cache and the server's own ~250 MiB, keeps a server under 2 GB resident.
    #[arg(long, env = "FORECAST_HEAVY_MEMORY_MB", value_name = "MIB", default_value = "1024", value_parser = at_least::<16>)]
    pub heavy_memory_mb: u64,
    /// Heavy jobs waiting for their turn at once; more get 503 with Retry-After at once, uncharged.
    #[arg(long, env = "FORECAST_HEAVY_QUEUE", value_name = "N", default_value = "32", value_parser = at_least::<0>)]
    pub heavy_queue: u64,
    /// Heavy jobs one account may have waiting at once; more get 503 with Retry-After at once, uncharged.
    #[arg(long, env = "FORECAST_HEAVY_QUEUE_PER_ACCOUNT", value_name = "N", default_value = "4", value_parser = at_least::<1>)]
    pub heavy_queue_per_account: u64,
    /// How long, in milliseconds, a heavy job waits for its turn; past it: 503 with Retry-After, uncharged.
    #[arg(long, env = "FORECAST_HEAVY_WAIT_MS", value_name = "MS", default_value = "10000", value_parser = millis::<0>)]
    pub heavy_wait_ms: Duration,
}

/// The daily grading.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Grading")]
pub struct Grading {
    /// Whether the server grades every asset at start when the graded snapshot is missing or stale, and then daily (on/off).
    #[arg(long, env = "FORECAST_GRADING", value_name = "ON|OFF", default_value = "on", action = ArgAction::Set, value_parser = on_off)]
    pub grading: bool,
    /// When the daily grading runs, HH:MM UTC.
    #[arg(long, env = "FORECAST_GRADE_AT", value_name = "HH:MM", default_value = "02:00", value_parser = hh_mm)]
    pub grade_at: chrono::NaiveTime,
    /// After how many seconds without a report a grading worker's claimed assets are graded by another.
    #[arg(long, env = "FORECAST_GRADING_LEASE_SECONDS", value_name = "SECONDS", default_value = "120", value_parser = at_least::<1>)]
    pub grading_lease_seconds: u64,
}

/// Alerts: their evaluation and delivery (webhooks, e-mail).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Alerts")]
pub struct Alerts {
    /// Whether the server evaluates alerts after every change of grades, prices or alerts and sends their webhook calls and e-mails (on/off). Off: `forecast alerts check` does both on demand.
    #[arg(long = "alerts", env = "FORECAST_ALERTS", value_name = "ON|OFF", default_value = "on", action = ArgAction::Set, value_parser = on_off)]
    pub alerts: bool,
    /// How often, in milliseconds, the server looks for a change to evaluate and for deliveries due.
    #[arg(long, env = "FORECAST_ALERTS_INTERVAL_MS", value_name = "MS", default_value = "5000", value_parser = millis::<50>)]
    pub alerts_interval_ms: Duration,
    /// The SMTP server of the alerts' e-mail digest (at most one e-mail per user per evaluation), e.g. `smtp://mail.example.com:587?tls=required`, `smtps://user:pass@host` or `smtp://127.0.0.1:2525` (plain, for a local relay). Unset: no e-mail.
    #[arg(long, env = "FORECAST_SMTP_URL", value_name = "URL", default_value = "", hide_default_value = true, value_parser = trimmed)]
    pub smtp_url: Unset<String>,
    /// The digest's From address.
    #[arg(
        long,
        env = "FORECAST_SMTP_FROM",
        value_name = "ADDRESS",
        default_value = "Forecast Engine <alerts@forecast.local>"
    )]
    pub smtp_from: String,
    /// Whether webhook URLs may point at private, loopback or link-local addresses (on/off). Off protects the server's own network from its users.
    #[arg(long, env = "FORECAST_WEBHOOK_ALLOW_PRIVATE", value_name = "ON|OFF", default_value = "off", action = ArgAction::Set, value_parser = on_off)]
    pub webhook_allow_private: bool,
    /// Seconds before a failed webhook call or e-mail is tried again; each next retry waits twice as long.
    #[arg(long, env = "FORECAST_WEBHOOK_RETRY_BASE_SECONDS", value_name = "SECONDS", default_value = "30", value_parser = at_least::<1>)]
    pub webhook_retry_base_seconds: u64,
    /// Attempts per webhook call or e-mail before it is given up.
    #[arg(long, env = "FORECAST_WEBHOOK_MAX_ATTEMPTS", value_name = "N", default_value = "6", value_parser = count::<1>)]
    pub webhook_max_attempts: u32,
    /// Consecutive failed attempts after which a webhook endpoint is disabled (its owner enables it again).
    #[arg(long, env = "FORECAST_WEBHOOK_MAX_FAILURES", value_name = "N", default_value = "10", value_parser = count::<1>)]
    pub webhook_max_failures: u32,
}

/// Settings for tests, never for a served deployment.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Testing")]
pub struct Testing {
    /// For tests only: the process's clock stands still at this instant (RFC 3339, e.g. `2026-01-05T00:00:10Z`) for everything that decides by the date or the time (sessions, sign-in and matcher windows, leases, alert retries, the daily schedules); metrics and deadlines still measure real time. Unset: the system clock.
    #[arg(long, env = "FORECAST_TEST_CLOCK", value_name = "RFC3339", default_value = "", hide_default_value = true, value_parser = instant)]
    pub test_clock: Unset<chrono::DateTime<chrono::Utc>>,
}

/// Live prices: the scheduled refresh and the providers.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Prices")]
pub struct Prices {
    /// When the active assets' prices are fetched every day from FORECAST_REFRESH_PROVIDER, HH:MM or HH:MM:SS UTC, split across the servers sharing the database; the daily grading waits for a refresh still running. Unset: no scheduled refresh.
    #[arg(long, env = "FORECAST_REFRESH_AT", value_name = "HH:MM", default_value = "", hide_default_value = true, value_parser = refresh_at)]
    pub refresh_at: Unset<chrono::NaiveTime>,
    /// Where the scheduled refresh fetches prices: `yahoo` or `stooq`.
    #[arg(long, env = "FORECAST_REFRESH_PROVIDER", value_name = "PROVIDER", default_value = "yahoo", value_parser = provider)]
    pub refresh_provider: ProviderKind,
    /// Base URL of Yahoo Finance's chart API (tests point it at a local fake).
    #[arg(long, env = "FORECAST_YAHOO_URL", value_name = "URL", default_value = yahoo::DEFAULT_BASE_URL, value_parser = blank_means(yahoo::DEFAULT_BASE_URL))]
    pub yahoo_url: String,
    /// Base URL of Stooq's daily CSV download (tests point it at a local fake).
    #[arg(long, env = "FORECAST_STOOQ_URL", value_name = "URL", default_value = stooq::DEFAULT_BASE_URL, value_parser = blank_means(stooq::DEFAULT_BASE_URL))]
    pub stooq_url: String,
}

/// The asset matcher.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Matcher")]
pub struct Matcher {
    /// The matcher's sentence-embedding model: a folder (a missing or broken model stops the server with the reason), or `off` for lexical matching only. Unset: `data/models/all-minilm-l6-v2` under the working directory if it is there (`make model` puts it there), else lexical matching only.
    #[arg(long, env = "FORECAST_MODEL_DIR", value_name = "PATH|off", default_value = "", hide_default_value = true, value_parser = model_setting)]
    pub model_dir: ModelSetting,
    /// The matcher's reference data (major index membership, which tells it how well-known each asset is): a folder holding `index-membership.csv` (a missing or unreadable table stops the server with the reason), or `off`. Unset: `data/reference` under the working directory if the table is there (`make reference` puts it there), else every asset counts as equally well-known.
    #[arg(long, env = "FORECAST_REFERENCE_DIR", value_name = "PATH|off", default_value = "", hide_default_value = true, value_parser = reference_setting)]
    pub reference_dir: ModelSetting,
    /// Matcher requests per account per minute.
    #[arg(long, env = "FORECAST_MATCH_PER_MINUTE", value_name = "N", default_value = "30", value_parser = count::<1>)]
    pub match_per_minute: u32,
    /// Base URL of an OpenAI-compatible API the matcher may consult (`/chat/completions` is appended), e.g. `https://api.openai.com/v1`. Unset: no language model.
    #[arg(long, env = "FORECAST_LLM_URL", value_name = "URL", default_value = "", hide_default_value = true, value_parser = trimmed)]
    pub llm_url: Unset<String>,
    /// The language model's name; required with FORECAST_LLM_URL.
    #[arg(long, env = "FORECAST_LLM_MODEL", value_name = "NAME")]
    pub llm_model: Option<String>,
    /// The bearer key of FORECAST_LLM_URL, if it needs one.
    #[arg(long, env = "FORECAST_LLM_API_KEY", value_name = "KEY", default_value = "", hide_default_value = true, hide_env_values = true, value_parser = non_empty)]
    pub llm_api_key: Unset<String>,
    /// Time limit of one language-model completion, in milliseconds.
    #[arg(long, env = "FORECAST_LLM_TIMEOUT_MS", value_name = "MS", default_value = "2000", value_parser = millis::<1>)]
    pub llm_timeout_ms: Duration,
}

// The value parsers: one rule per kind of value. An error says what is
// expected; [`ConfigError::from_clap`] adds the variable and the value.

/// An integer of at least `MIN` (surrounding blanks ignored).
fn upload_log_level(raw: &str) -> Result<tracing::Level, String> {
    match raw.trim() {
        "debug" => Ok(tracing::Level::DEBUG),
        "info" => Ok(tracing::Level::INFO),
        "warn" => Ok(tracing::Level::WARN),
        _ => Err("expected debug, info or warn".into()),
    }
}

fn allow_refuse(raw: &str) -> Result<bool, String> {
    match raw.trim() {
        "allow" => Ok(true),
        "refuse" => Ok(false),
        _ => Err("expected allow or refuse".into()),
    }
}

fn at_least<const MIN: u64>(raw: &str) -> Result<u64, String> {
    match raw.trim().parse::<u64>() {
        Ok(v) if v >= MIN => Ok(v),
        _ => Err(format!("expected an integer >= {MIN}")),
    }
}

/// A count of at least `MIN` that fits 32 bits.
fn count<const MIN: u64>(raw: &str) -> Result<u32, String> {
    match raw.trim().parse::<u32>() {
        Ok(v) if u64::from(v) >= MIN => Ok(v),
        _ => Err(format!("expected an integer from {MIN} to {}", u32::MAX)),
    }
}

/// Milliseconds, at least `MIN`.
fn millis<const MIN: u64>(raw: &str) -> Result<Duration, String> {
    at_least::<MIN>(raw).map(Duration::from_millis)
}

/// A switch: on, true, yes or 1; off, false, no or 0 (any case, blanks
/// ignored).
fn on_off(raw: &str) -> Result<bool, String> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err("expected on or off (or true/false, yes/no, 1/0)".into()),
    }
}

fn maybe_on_off(raw: &str) -> Result<Option<bool>, String> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    on_off(raw).map(Some)
}

/// An instant, RFC 3339; empty: unset.
fn instant(raw: &str) -> Result<Option<chrono::DateTime<chrono::Utc>>, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    chrono::DateTime::parse_from_rfc3339(raw)
        .map(|t| Some(t.to_utc()))
        .map_err(|_| "expected an RFC 3339 instant, e.g. 2026-01-05T00:00:10Z".to_string())
}

/// A time of day, `HH:MM`.
fn hh_mm(raw: &str) -> Result<chrono::NaiveTime, String> {
    chrono::NaiveTime::parse_from_str(raw.trim(), "%H:%M")
        .map_err(|_| "expected HH:MM (UTC)".to_string())
}

/// A time of day, `HH:MM` or `HH:MM:SS`; empty: unset.
fn refresh_at(raw: &str) -> Result<Option<chrono::NaiveTime>, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    chrono::NaiveTime::parse_from_str(raw, "%H:%M")
        .or_else(|_| chrono::NaiveTime::parse_from_str(raw, "%H:%M:%S"))
        .map(Some)
        .map_err(|_| "expected HH:MM or HH:MM:SS (UTC)".to_string())
}

fn provider(raw: &str) -> Result<ProviderKind, String> {
    raw.trim().parse()
}

/// Text with surrounding blanks removed; empty: unset.
fn trimmed(raw: &str) -> Result<Option<String>, String> {
    Ok(Some(raw.trim().to_string()).filter(|v| !v.is_empty()))
}

/// Text as given; empty: unset.
fn non_empty(raw: &str) -> Result<Option<String>, String> {
    Ok(Some(raw.to_string()).filter(|v| !v.is_empty()))
}

/// An origin, without trailing slashes; empty: unset.
fn origin(raw: &str) -> Result<Option<String>, String> {
    non_empty(raw).map(|o| o.map(|o| o.trim_end_matches('/').to_string()))
}

/// An absolute `http://` or `https://` URL with a host, blanks around it
/// ignored; empty: unset.
fn upgrade_url(raw: &str) -> Result<Option<String>, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    let expected = "expected an absolute http:// or https:// URL, e.g. https://example.com/upgrade";
    let url = url::Url::parse(raw).map_err(|e| format!("{expected} ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(expected.into());
    }
    Ok(Some(url.into()))
}

/// A path; empty: unset.
fn path(raw: &str) -> Result<Option<PathBuf>, String> {
    Ok(Some(raw).filter(|p| !p.is_empty()).map(PathBuf::from))
}

/// The admin token: at least 16 characters, blanks around it ignored;
/// empty: unset.
fn admin_token(raw: &str) -> Result<Option<String>, String> {
    match raw.trim() {
        "" => Ok(None),
        t if t.len() >= 16 => Ok(Some(t.to_string())),
        _ => Err("must be at least 16 characters".into()),
    }
}

/// `FORECAST_TRUSTED_PROXIES`: CIDR blocks; empty: none.
fn trusted_proxies(raw: &str) -> Result<TrustedProxies, String> {
    TrustedProxies::parse(raw)
}

/// A URL; blank: `default`.
fn blank_means(
    default: &'static str,
) -> impl Fn(&str) -> Result<String, String> + Clone + Send + Sync + 'static {
    move |raw: &str| {
        Ok(if raw.trim().is_empty() {
            default.to_string()
        } else {
            raw.to_string()
        })
    }
}

fn model_setting(raw: &str) -> Result<ModelSetting, String> {
    Ok(match raw {
        "" => ModelSetting::Default(PathBuf::from(forecast_embed::DEFAULT_DIR)),
        "off" => ModelSetting::Off,
        dir => ModelSetting::Required(PathBuf::from(dir)),
    })
}

fn reference_setting(raw: &str) -> Result<ModelSetting, String> {
    Ok(match raw {
        "" => ModelSetting::Default(PathBuf::from(
            forecast_embed::prominence::DEFAULT_REFERENCE_DIR,
        )),
        "off" => ModelSetting::Off,
        dir => ModelSetting::Required(PathBuf::from(dir)),
    })
}

/// Where compiled uploads are kept (`FORECAST_MODULE_CACHE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleCacheSetting {
    /// Unset: the user's cache folder, when there is a home to find it in.
    Default,
    /// `off`.
    Off,
    /// A folder.
    Dir(PathBuf),
}

impl ModuleCacheSetting {
    /// The folder to use, if any.
    pub fn dir(&self) -> Option<PathBuf> {
        match self {
            ModuleCacheSetting::Off => None,
            ModuleCacheSetting::Dir(d) => Some(d.clone()),
            ModuleCacheSetting::Default => std::env::var_os("XDG_CACHE_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME")
                        .filter(|v| !v.is_empty())
                        .map(|h| PathBuf::from(h).join(".cache"))
                })
                .map(|c| c.join("forecast-engine/modules")),
        }
    }
}

fn module_cache(raw: &str) -> Result<ModuleCacheSetting, String> {
    Ok(match raw {
        "" => ModuleCacheSetting::Default,
        "off" => ModuleCacheSetting::Off,
        dir => ModuleCacheSetting::Dir(PathBuf::from(dir)),
    })
}

/// The scheduled price refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshConfig {
    /// When, UTC.
    pub at: chrono::NaiveTime,
    /// From where.
    pub provider: ProviderKind,
}

/// Everything `forecast serve` needs: [`Settings`] resolved (durations,
/// byte sizes and the settings grouped as the layers take them). Each field
/// names its variables; their rules and defaults are in [`Settings`].
#[derive(Debug, Clone)]
pub struct Config {
    /// `FORECAST_ADDR`.
    pub addr: String,
    /// `DATABASE_URL`.
    pub database_url: String,
    /// `FORECAST_PLUGIN_TIMEOUT_MS`, `FORECAST_PLUGIN_MEMORY_MB`,
    /// `FORECAST_PLUGIN_CONCURRENCY`.
    pub runtime: RuntimeConfig,
    /// `FORECAST_SEGMENTATION_WASM`.
    pub segmentation_wasm: Option<PathBuf>,
    /// How long asset metadata is fresh (not a setting: [`METADATA_TTL`]).
    pub metadata_ttl: Duration,
    /// `FORECAST_ORIGIN`, without trailing slashes.
    pub origin: Option<String>,
    /// `FORECAST_COOKIE_SECURE`.
    pub cookie_secure: Option<bool>,
    /// `FORECAST_QUOTA_PER_MINUTE`, `FORECAST_QUOTA_PER_DAY`.
    pub quota: QuotaConfig,
    /// `FORECAST_ALERTS`.
    pub alerts_follow: bool,
    /// `FORECAST_ALERTS_INTERVAL_MS`, `FORECAST_SMTP_URL`, `FORECAST_SMTP_FROM`
    /// and the webhook settings (the web origin is filled in by the server).
    pub alerts: forecast_jobs::alerts::AlertSettings,
    /// `FORECAST_GRADING`.
    pub grading: bool,
    /// `FORECAST_GRADE_AT`.
    pub grade_at: chrono::NaiveTime,
    /// `FORECAST_GRADING_LEASE_SECONDS`.
    pub grading_lease: Duration,
    /// `FORECAST_REFRESH_AT` with `FORECAST_REFRESH_PROVIDER` (`None`: no
    /// scheduled refresh).
    pub refresh: Option<RefreshConfig>,
    /// `FORECAST_YAHOO_URL`.
    pub yahoo_url: String,
    /// `FORECAST_STOOQ_URL`.
    pub stooq_url: String,
    /// `FORECAST_BACKTEST_TIMEOUT_MS`.
    pub backtest_timeout: Duration,
    /// `FORECAST_RESEARCH_TIMEOUT_MS`.
    pub research_timeout: Duration,
    /// `FORECAST_SIGNAL_CACHE_MB`, in bytes.
    pub signal_cache_bytes: usize,
    /// `FORECAST_PLUGIN_DIR`.
    pub plugin_dir: Option<PathBuf>,
    /// `FORECAST_PLUGIN_POLL_MS`.
    pub plugin_poll: Duration,
    /// `FORECAST_PLUGIN_TRUST` (raw; parsed by the bundle crate's trust
    /// policy) and `FORECAST_PLUGIN_UNSIGNED`.
    pub plugin_trust: (String, bool),
    /// `FORECAST_MODULE_CACHE` (`None`: compile uploads on every start).
    pub module_cache: Option<PathBuf>,
    /// `FORECAST_UPLOAD_LOG_LEVEL`.
    pub upload_log_level: tracing::Level,
    /// `FORECAST_UPLOAD_COMPILE_TIMEOUT_MS`.
    pub upload_compile_timeout: Duration,
    /// `FORECAST_ADMIN_TOKEN` (`None`: the admin API is disabled).
    pub admin_token: Option<String>,
    /// `FORECAST_LLM_URL`, `FORECAST_LLM_MODEL`, `FORECAST_LLM_API_KEY`,
    /// `FORECAST_LLM_TIMEOUT_MS` (`None`: lexical matching only).
    pub llm: Option<forecast_plugins::llm::LlmConfig>,
    /// `FORECAST_MODEL_DIR`.
    pub model: ModelSetting,
    /// `FORECAST_REFERENCE_DIR` (the same three cases as the model).
    pub reference: ModelSetting,
    /// `FORECAST_MATCH_PER_MINUTE`.
    pub match_per_minute: u32,
    /// `serve --demo` (no variable): create the demo Premium account on a
    /// PostgreSQL database that has no user yet. SQLite, the local
    /// default, gets it without asking; a shared database never does
    /// unless an operator says so.
    pub demo_account: bool,
    /// `FORECAST_CLIENT_PER_MINUTE`.
    pub client_per_minute: u32,
    /// `FORECAST_LOGIN_CONCURRENCY` (unset: the number of cores).
    pub login_concurrency: usize,
    /// `FORECAST_UPGRADE_URL` (`None`: no upgrade link).
    pub upgrade_url: Option<String>,
    /// `FORECAST_BACKTESTS_PER_USER`.
    pub backtests_per_user: usize,
    /// `FORECAST_BACKTEST_QUEUE_MS`.
    pub backtest_queue_wait: Duration,
    /// `FORECAST_HEAVY_SLOTS`, `FORECAST_HEAVY_MEMORY_MB`,
    /// `FORECAST_HEAVY_QUEUE`, `FORECAST_HEAVY_QUEUE_PER_ACCOUNT`,
    /// `FORECAST_HEAVY_WAIT_MS`.
    pub heavy: forecast_services::budget::BudgetLimits,
    /// `FORECAST_HEADER_TIMEOUT_MS`, `FORECAST_IDLE_TIMEOUT_MS`,
    /// `FORECAST_BODY_TIMEOUT_MS`, `FORECAST_REQUEST_TIMEOUT_MS`,
    /// `FORECAST_MAX_CONNECTIONS`, `FORECAST_MAX_CONNECTIONS_PER_CLIENT`,
    /// `FORECAST_SHUTDOWN_GRACE_MS`.
    pub limits: crate::server::Limits,
    /// `FORECAST_METRICS_ADDR`.
    pub metrics_addr: Option<String>,
    /// `FORECAST_TRUSTED_PROXIES`.
    pub trusted_proxies: TrustedProxies,
    /// `FORECAST_TEST_CLOCK` (`None`: the system clock).
    pub test_clock: Option<chrono::DateTime<chrono::Utc>>,
}

/// A setting is unusable; the message names its variable and flag.
#[derive(Debug)]
pub struct ConfigError {
    name: String,
    /// The setting's flag, when `name` is a setting.
    flag: Option<String>,
    message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (name, message) = (&self.name, &self.message);
        match &self.flag {
            Some(flag) => write!(f, "{name} (--{flag}): {message}"),
            None => write!(f, "{name}: {message}"),
        }
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    fn new(name: &str, message: impl Into<String>) -> Self {
        ConfigError {
            name: name.to_string(),
            flag: arg_of(&command(), name)
                .and_then(|a| a.get_long())
                .map(str::to_string),
            message: message.into(),
        }
    }

    /// The variable at fault.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A clap error about a setting's value, in the terms of its variable
    /// (`None` for other errors: unknown flags, `--help`, …). The value is
    /// left out for secrets.
    pub fn from_clap(e: &clap::Error) -> Option<Self> {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        if !matches!(
            e.kind(),
            ErrorKind::ValueValidation | ErrorKind::InvalidValue
        ) {
            return None;
        }
        let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
            return None;
        };
        // "--plugin-timeout-ms <MS>"
        let long = arg.strip_prefix("--")?.split([' ', '=']).next()?;
        let cmd = command();
        let arg = cmd.get_arguments().find(|a| a.get_long() == Some(long))?;
        let name = arg.get_env()?.to_str()?;
        let reason = std::error::Error::source(e)
            .map_or_else(|| "invalid value".to_string(), |source| source.to_string());
        let message = match e.get(ContextKind::InvalidValue) {
            Some(ContextValue::String(value)) if !arg.is_hide_env_values_set() => {
                format!("{reason}, got '{value}'")
            }
            _ => reason,
        };
        Some(ConfigError::new(name, message))
    }
}

/// The settings alone, as a command: what [`Config::from_env`],
/// [`Config::from_pairs`] and the documentation read.
pub fn command() -> clap::Command {
    Settings::augment_args(clap::Command::new("forecast serve").no_binary_name(true))
}

/// The argument whose variable is `name`.
fn arg_of<'a>(cmd: &'a clap::Command, name: &str) -> Option<&'a clap::Arg> {
    cmd.get_arguments()
        .find(|a| a.get_env() == Some(OsStr::new(name)))
}

/// Parses `args` (flags) with the settings' parser and resolves them.
fn parse(cmd: clap::Command, args: Vec<String>) -> Result<Config, ConfigError> {
    let matches = cmd.try_get_matches_from(args).map_err(|e| {
        ConfigError::from_clap(&e)
            .unwrap_or_else(|| ConfigError::new("configuration", e.to_string()))
    })?;
    Settings::from_arg_matches(&matches)
        .map_err(|e| ConfigError::new("configuration", e.to_string()))?
        .resolve()
}

/// One setting from the environment through its declaration (default and
/// rule), without reading the others: for commands that need only it.
fn one_from_env<T: Clone + Send + Sync + 'static>(name: &str) -> Result<T, ConfigError> {
    let cmd = command();
    let arg = arg_of(&cmd, name)
        .unwrap_or_else(|| panic!("{name} is not a setting"))
        .clone();
    let id = arg.get_id().clone();
    let matches = clap::Command::new("forecast")
        .no_binary_name(true)
        .arg(arg)
        .try_get_matches_from(Vec::<String>::new())
        .map_err(|e| {
            ConfigError::from_clap(&e).unwrap_or_else(|| ConfigError::new(name, e.to_string()))
        })?;
    match matches.try_get_one::<T>(id.as_str()) {
        Ok(Some(value)) => Ok(value.clone()),
        _ => Err(ConfigError::new(name, "unset")),
    }
}

impl Config {
    /// The settings from the environment (unset variables take their
    /// defaults), for the commands other than `serve`, which parses its
    /// flags too.
    pub fn from_env() -> Result<Self, ConfigError> {
        parse(command(), Vec::new())
    }

    /// The settings from `FORECAST_*` (and `DATABASE_URL`) pairs instead of
    /// the environment, which is not read: the test harness's way to build
    /// a server's configuration, with the rules, defaults and errors of
    /// `forecast serve`. A name given twice takes its last value; a name
    /// that is not a setting is an error.
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Result<Self, ConfigError> {
        let cmd = command();
        let mut flags: Vec<(String, &str)> = Vec::new();
        for &(name, value) in pairs {
            let long = arg_of(&cmd, name)
                .and_then(|a| a.get_long())
                .ok_or_else(|| {
                    ConfigError::new(
                        name,
                        "not a setting of forecast (`forecast config` lists them)",
                    )
                })?
                .to_string();
            flags.retain(|(l, _)| *l != long);
            flags.push((long, value));
        }
        let args = flags
            .into_iter()
            .map(|(long, value)| format!("--{long}={value}"))
            .collect();
        parse(cmd.mut_args(|a| a.env(None)), args)
    }

    /// The clock every service reads: the system's, or with
    /// `FORECAST_TEST_CLOCK` a manual one standing at that instant.
    pub fn clock(&self) -> forecast_domain::SharedClock {
        match self.test_clock {
            Some(at) => forecast_domain::ManualClock::at(at),
            None => forecast_domain::SystemClock::shared(),
        }
    }

    /// Whether `name` is a setting's variable.
    pub fn is_setting(name: &str) -> bool {
        arg_of(&command(), name).is_some()
    }
}

impl Settings {
    /// The settings as the server takes them, after the rules between
    /// settings: the request deadline exceeds the longest a backtest may
    /// take (its wait for plugin slots plus its time limit), so a slow
    /// backtest is answered by the backtest (504 naming the reduce-scope
    /// case) rather than cut off; an LLM URL comes with its model.
    pub fn resolve(self) -> Result<Config, ConfigError> {
        let Settings {
            serving,
            http,
            accounts,
            plugins,
            backtests,
            heavy,
            grading,
            prices,
            matcher,
            alerts,
            testing,
        } = self;
        let request_timeout = request_timeout(&http, &heavy, &backtests, &plugins)?;
        if let Err(e) =
            forecast_bundle::TrustPolicy::parse(&plugins.plugin_trust, plugins.plugin_unsigned)
        {
            return Err(ConfigError::new(
                "FORECAST_PLUGIN_TRUST",
                e.trim_start_matches("FORECAST_PLUGIN_TRUST: "),
            ));
        }
        let llm = llm(&matcher)?;
        Ok(Config {
            addr: serving.addr,
            database_url: serving.database_url,
            runtime: RuntimeConfig {
                call_timeout: plugins.plugin_timeout_ms,
                memory_limit: (plugins.plugin_memory_mb as usize) << 20,
                max_concurrency: plugins.plugin_concurrency as usize,
                perf_map: plugins.wasm_perfmap,
                fuel: false,
                guest_log_ceiling: tracing::Level::ERROR,
            },
            segmentation_wasm: plugins.segmentation_wasm,
            metadata_ttl: METADATA_TTL,
            origin: serving.origin,
            cookie_secure: serving.cookie_secure,
            quota: QuotaConfig {
                per_minute: accounts.quota_per_minute,
                per_day: accounts.quota_per_day,
            },
            alerts_follow: alerts.alerts,
            alerts: alert_settings(alerts),
            grading: grading.grading,
            grade_at: grading.grade_at,
            grading_lease: Duration::from_secs(grading.grading_lease_seconds),
            refresh: prices.refresh_at.map(|at| RefreshConfig {
                at,
                provider: prices.refresh_provider,
            }),
            yahoo_url: prices.yahoo_url,
            stooq_url: prices.stooq_url,
            backtest_timeout: backtests.backtest_timeout_ms,
            research_timeout: backtests.research_timeout_ms,
            signal_cache_bytes: (backtests.signal_cache_mb as usize) << 20,
            plugin_dir: plugins.plugin_dir,
            plugin_poll: plugins.plugin_poll_ms,
            plugin_trust: (plugins.plugin_trust, plugins.plugin_unsigned),
            module_cache: plugins.module_cache.dir(),
            upload_log_level: plugins.upload_log_level,
            upload_compile_timeout: plugins.upload_compile_timeout_ms,
            admin_token: serving.admin_token,
            llm,
            model: matcher.model_dir,
            reference: matcher.reference_dir,
            match_per_minute: matcher.match_per_minute,
            demo_account: false,
            client_per_minute: http.client_per_minute,
            login_concurrency: accounts.login_concurrency.map_or_else(
                || std::thread::available_parallelism().map_or(2, |n| n.get()),
                |n| n as usize,
            ),
            upgrade_url: accounts.upgrade_url,
            backtests_per_user: backtests.backtests_per_user as usize,
            backtest_queue_wait: backtests.backtest_queue_ms,
            heavy: forecast_services::budget::BudgetLimits {
                slots: heavy.heavy_slots as usize,
                bytes: heavy.heavy_memory_mb << 20,
                queue: heavy.heavy_queue as usize,
                per_client_queue: heavy.heavy_queue_per_account as usize,
                wait: heavy.heavy_wait_ms,
            },
            limits: limits(&http, request_timeout),
            metrics_addr: serving.metrics_addr,
            trusted_proxies: serving.trusted_proxies,
            test_clock: testing.test_clock,
        })
    }
}

/// The request deadline: `FORECAST_REQUEST_TIMEOUT_MS`, or by default the
/// server's or the longest a backtest or a strategy upload may take plus
/// 5 s; an error unless it exceeds both. A backtest's longest is its wait
/// for a heavy-work turn and for plugin slots plus its time limit; an
/// upload's, its wait for a heavy-work turn plus its compile deadline
/// (slot and compilation), so each gets its own answer, never a 504.
fn request_timeout(
    http: &HttpLimits,
    heavy: &HeavyWork,
    backtests: &Backtests,
    plugins: &PluginSettings,
) -> Result<Duration, ConfigError> {
    let backtest_longest = heavy.heavy_wait_ms
        + backtests
            .backtest_timeout_ms
            .max(backtests.research_timeout_ms)
        + backtests.backtest_queue_ms;
    let upload_longest = heavy.heavy_wait_ms + plugins.upload_compile_timeout_ms;
    let longest = backtest_longest.max(upload_longest);
    let request_timeout = http.request_timeout_ms.unwrap_or_else(|| {
        crate::server::Limits::default()
            .request_timeout
            .max(longest + Duration::from_secs(5))
    });
    if request_timeout <= longest {
        return Err(ConfigError::new(
            "FORECAST_REQUEST_TIMEOUT_MS",
            format!(
                "must exceed FORECAST_HEAVY_WAIT_MS + FORECAST_BACKTEST_QUEUE_MS + the \
                 larger of FORECAST_BACKTEST_TIMEOUT_MS and FORECAST_RESEARCH_TIMEOUT_MS \
                 ({} ms) and FORECAST_HEAVY_WAIT_MS + FORECAST_UPLOAD_COMPILE_TIMEOUT_MS \
                 ({} ms), got {} ms",
                backtest_longest.as_millis(),
                upload_longest.as_millis(),
                request_timeout.as_millis()
            ),
        ));
    }
    Ok(request_timeout)
}

/// The alerts' delivery settings.
fn alert_settings(alerts: Alerts) -> forecast_jobs::alerts::AlertSettings {
    forecast_jobs::alerts::AlertSettings {
        smtp: alerts
            .smtp_url
            .map(|url| forecast_jobs::alerts::SmtpSettings {
                url,
                from: alerts.smtp_from,
            }),
        allow_private: alerts.webhook_allow_private,
        retry_base: Duration::from_secs(alerts.webhook_retry_base_seconds),
        max_attempts: alerts.webhook_max_attempts,
        max_failures: alerts.webhook_max_failures,
        interval: alerts.alerts_interval_ms,
        ..Default::default()
    }
}

/// The HTTP server's limits, with the request deadline already checked.
fn limits(http: &HttpLimits, request_timeout: Duration) -> crate::server::Limits {
    crate::server::Limits {
        header_timeout: http.header_timeout_ms,
        idle_timeout: http.idle_timeout_ms,
        body_timeout: http.body_timeout_ms,
        request_timeout,
        max_connections: http.max_connections as usize,
        max_connections_per_client: http.max_connections_per_client as usize,
        shutdown_grace: http.shutdown_grace_ms,
    }
}

/// The matcher's LLM: none without `FORECAST_LLM_URL`; with it, an error
/// unless `FORECAST_LLM_MODEL` is set too.
fn llm(matcher: &Matcher) -> Result<Option<forecast_plugins::llm::LlmConfig>, ConfigError> {
    let Some(url) = matcher.llm_url.clone() else {
        return Ok(None);
    };
    Ok(Some(forecast_plugins::llm::LlmConfig {
        url,
        model: matcher.llm_model.clone().ok_or_else(|| {
            ConfigError::new("FORECAST_LLM_MODEL", "must be set when FORECAST_LLM_URL is")
        })?,
        api_key: matcher.llm_api_key.clone(),
        timeout: matcher.llm_timeout_ms,
    }))
}

/// Where an optional data folder of the matcher is read from: the
/// sentence-embedding model (`FORECAST_MODEL_DIR`) or the reference data
/// (`FORECAST_REFERENCE_DIR`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSetting {
    /// `off`: lexical matching only, nothing loaded.
    Off,
    /// Unset: `data/models/all-minilm-l6-v2` under the working directory if
    /// it is there (`make model` puts it there), else lexical matching
    /// only, with a warning.
    Default(PathBuf),
    /// A folder: that folder; a missing or broken model stops the server
    /// with the reason.
    Required(PathBuf),
}

impl ModelSetting {
    /// From `FORECAST_MODEL_DIR` alone (for `forecast matcher`).
    pub fn from_env() -> Self {
        one_from_env("FORECAST_MODEL_DIR")
            .unwrap_or_else(|_| ModelSetting::Default(PathBuf::from(forecast_embed::DEFAULT_DIR)))
    }
}

/// `DATABASE_URL` alone, or its default (for the commands that need only
/// the database).
pub fn database_url_from_env() -> String {
    one_from_env("DATABASE_URL").unwrap_or_else(|_| DEFAULT_DATABASE_URL.into())
}

impl Config {
    /// What the plugin set is loaded with.
    /// `FORECAST_PLUGIN_TRUST` and `FORECAST_PLUGIN_UNSIGNED`, parsed (the
    /// keys were checked when the settings were resolved).
    pub fn trust_policy(&self) -> forecast_bundle::TrustPolicy {
        forecast_bundle::TrustPolicy::parse(&self.plugin_trust.0, self.plugin_trust.1)
            .expect("FORECAST_PLUGIN_TRUST was checked when the settings were resolved")
    }

    pub fn plugins_config(&self) -> forecast_services::active::PluginsConfig {
        forecast_services::active::PluginsConfig {
            runtime: self.runtime,
            llm: self.llm.clone(),
            segmentation_wasm: self.segmentation_wasm.clone(),
            plugin_dir: self.plugin_dir.clone(),
            trust: self.trust_policy(),
        }
    }

    /// The price provider `kind` at its configured base URL
    /// (`FORECAST_YAHOO_URL`, `FORECAST_STOOQ_URL`).
    pub fn price_provider(&self, kind: ProviderKind) -> Box<dyn providers::PriceProvider> {
        match kind {
            ProviderKind::Yahoo => Box::new(yahoo::Yahoo::new(&self.yahoo_url)),
            ProviderKind::Stooq => Box::new(stooq::Stooq::new(&self.stooq_url)),
        }
    }

    /// The origin state-changing cookie requests must come from.
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
