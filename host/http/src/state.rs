//! What every handler receives: the services and the HTTP-level settings.
//! Handlers never reach the store: every read and write is a service call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use forecast_jobs::alerts::AlertService;
use forecast_research::backtest::BacktestService;
use forecast_services::active::Plugins;
use forecast_services::analysis::AnalysisService;
use forecast_services::assets::AssetService;
use forecast_services::health::HealthService;
use forecast_services::keys::KeyService;
use forecast_services::matcher::MatcherService;
use forecast_services::quota::QuotaService;
use forecast_services::ranking::RankingService;
use forecast_services::registry::RegistryService;
use forecast_services::sessions::SessionService;
use forecast_services::verdict::VerdictService;
use forecast_services::watchlist::WatchlistService;

/// Settings of the HTTP layer, decided by the composition root.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The admin API's token (`None`: the admin API is disabled).
    pub admin_token: Option<String>,
    /// Matcher requests per user per minute.
    pub match_per_minute: u32,
    /// A request not answered within this gets 504.
    pub request_timeout: Duration,
    /// A request body not received within this (from the head) gets 408.
    pub body_timeout: Duration,
    /// Whether `/metrics` is served on the main address (behind the admin
    /// token); false when it has a listener of its own.
    pub metrics_on_main: bool,
    /// Where a Free user upgrades (`GET /auth/me`'s `upgrade_url`).
    pub upgrade_url: Option<String>,
    /// `FORECAST_TRUSTED_PROXIES`: whose `X-Forwarded-For` names the client.
    pub trusted_proxies: crate::clients::TrustedProxies,
}

/// Shared state handed to every handler: one pointer, so the copies axum
/// makes per request (every `State` extractor and middleware clones it)
/// are one reference count each, not one per service handle (issue 17:
/// those clones and drops were a seventh of the server's time on a cheap
/// route).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    /// The state of `shared`.
    pub fn new(shared: Shared) -> Self {
        AppState(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// What [`AppState`] points to.
pub struct Shared {
    /// Active API keys and their owners in memory, checked against the
    /// store's generation counters on every request.
    pub keycache: Arc<forecast_services::auth::KeyCache>,
    /// Active plugins.
    pub plugins: Arc<Plugins>,
    /// `GET /api/analysis/{ticker}`.
    pub analysis: AnalysisService,
    /// `GET /api/verdict/{ticker}`.
    pub verdicts: VerdictService,
    /// `POST /api/backtest`.
    pub backtests: BacktestService,
    /// `/api/strategies`: the authors' uploads.
    pub authored: forecast_research::authored::AuthoredService,
    /// `POST /api/match-tickers`.
    pub matcher: MatcherService,
    /// `GET /api/ranking`.
    pub ranking: RankingService,
    /// `/api/keys`.
    pub keys: KeyService,
    /// `/web/watchlist`.
    pub watchlists: WatchlistService,
    /// `/api/alerts`: alerts, events, webhook endpoints.
    pub alerts: AlertService,
    /// `/auth/*` and the session cookie.
    pub sessions: SessionService,
    /// `/api/assets` and an asset's metadata.
    pub assets: AssetService,
    /// Quota admission and the admin-token throttle.
    pub quota: QuotaService,
    /// `/api/admin/*`: the plugin registry.
    pub registry: RegistryService,
    /// `/api/health?debug=1`'s view of the store.
    pub health: HealthService,
    /// HTTP-level settings.
    pub config: Arc<HttpConfig>,
    /// The per-client limit of requests no user's quota meters.
    pub clients: Arc<crate::clients::ClientLimiter>,
    /// Start time, for uptime.
    pub started: Instant,
    /// The origin cookie-authenticated state changes must come from.
    pub origin: Arc<str>,
    /// Whether the session cookie is `Secure`.
    pub cookie_secure: bool,
    /// `GET /api/strategies`' built-in part and the strategies it lists.
    pub strategy_listing: StrategyListing,
    /// Backtest answers kept for their free downloads (`crate::recall`).
    pub results: Arc<crate::recall::Results>,
    /// Long runs' progress, by account and `Progress-Id` (`crate::progress`).
    pub progress: Arc<forecast_research::progress::Board>,
    /// The time every service of this state reads (the system's, or a
    /// test's manual clock).
    pub clock: forecast_domain::SharedClock,
}

/// The built-in strategies' listing and the loaded strategies it was made
/// from (compared by identity).
pub type StrategyListing = std::sync::Mutex<
    Option<(
        Vec<Arc<forecast_plugins::strategy::StrategyPlugin>>,
        forecast_api::backtest::StrategyList,
    )>,
>;
