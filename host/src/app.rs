//! The composition root: opens the store, loads the plugins, builds every
//! service from the narrow handles it needs and hands them to the HTTP
//! layer; and the server's life cycle. The only module that sees every
//! layer.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use tokio::net::TcpListener;

use crate::config::{Config, ModelSetting};
use forecast_domain::{Clock, SharedClock, Tier};
use forecast_embed::prominence::IndexMembership;
use forecast_embed::Embedder;
use forecast_http::{AppState, HttpConfig, Shared};
use forecast_ingest::demo;
use forecast_ingest::metadata::CatalogProvider;
use forecast_jobs::alerts::AlertService;
use forecast_research::authored::AuthoredService;
use forecast_research::backtest::{BacktestLimits, BacktestService};
use forecast_services::active::Plugins;
use forecast_services::analysis::AnalysisService;
use forecast_services::assets::AssetService;
use forecast_services::auth;
use forecast_services::auth::KeyCache;
use forecast_services::budget::WorkBudget;
use forecast_services::embeddings::CatalogEmbeddings;
use forecast_services::freshness::Freshness;
use forecast_services::health::HealthService;
use forecast_services::keys::KeyService;
use forecast_services::matcher::MatcherService;
use forecast_services::quota::QuotaService;
use forecast_services::ranking::RankingService;
use forecast_services::registry::RegistryService;
use forecast_services::sessions::SessionService;
use forecast_services::verdict::VerdictService;
use forecast_services::watchlist::WatchlistService;
use forecast_store::{self as store, Database};

/// The demo account created on a fresh database, printed once by `serve`.
#[derive(Debug, Clone)]
pub struct DemoAccount {
    /// Login e-mail.
    pub email: String,
    /// Login password.
    pub password: String,
    /// A Premium API key.
    pub key: String,
}

/// E-mail of the demo account.
pub const DEMO_EMAIL: &str = "demo@forecast.local";

/// A built application: the handlers' state, the store it was built over
/// (for the background work and shutdown, never for handlers) and the demo
/// account when one was created.
pub struct App {
    /// What the router serves.
    pub state: AppState,
    /// The store.
    pub db: Arc<dyn Database>,
    /// The demo account created on a fresh database.
    pub demo: Option<DemoAccount>,
}

/// Opens the store (loading the demo universe and creating the demo
/// account in an empty one), loads the plugins and builds the services on
/// the configuration's clock (the system's unless `FORECAST_TEST_CLOCK`
/// sets one). `bound` is the listening address, the default web origin.
pub async fn build(config: &Config, bound: std::net::SocketAddr) -> anyhow::Result<App> {
    if let Some(at) = config.test_clock {
        tracing::warn!(%at, "FORECAST_TEST_CLOCK: the clock stands still (tests only)");
    }
    build_with_clock(config, bound, config.clock()).await
}

/// [`build`] with every service reading the time from `clock` (a test's
/// [`forecast_domain::ManualClock`]).
pub async fn build_with_clock(
    config: &Config,
    bound: std::net::SocketAddr,
    clock: SharedClock,
) -> anyhow::Result<App> {
    let (db, demo) = open_store(config, &clock).await?;
    let plugins =
        Arc::new(Plugins::load(&config.plugins_config(), db.as_ref(), clock.as_ref()).await?);
    let matcher = matcher_service(config, &db, &plugins, &clock).await?;
    let origin = config.resolved_origin(bound);
    let cookie_secure = config.resolved_cookie_secure(&origin);
    // One reader of the generation counters for every in-memory copy.
    let freshness = Freshness::new(db.clone());
    // One budget for every heavy job of this server (issue 25).
    let budget = WorkBudget::new(config.heavy);
    let authored = AuthoredService::new(
        db.clone(),
        plugins.clone(),
        budget.clone(),
        config.trust_policy(),
        config.module_cache.as_deref(),
        config.upload_log_level,
        clock.clone(),
    )?
    .with_compile_deadline(config.upload_compile_timeout);
    let verdicts = VerdictService::new(
        db.clone(),
        db.clone(),
        plugins.clone(),
        freshness.clone(),
        budget.clone(),
        clock.clone(),
    );
    let state = AppState::new(Shared {
        // Each service gets only the store traits it uses: the handles are
        // upcasts of the one connection.
        keycache: Arc::new(KeyCache::new(db.clone(), freshness.clone())),
        analysis: AnalysisService::new(
            db.clone(),
            db.clone(),
            db.clone(),
            plugins.clone(),
            budget.clone(),
            clock.clone(),
        ),
        alerts: alert_service(config, &db, &verdicts, &origin, &clock),
        verdicts,
        backtests: BacktestService::new(
            db.clone(),
            plugins.clone(),
            backtest_limits(config),
            budget.clone(),
            authored.clone(),
            clock.clone(),
        ),
        authored,
        matcher,
        ranking: RankingService::new(db.clone(), freshness.clone(), clock.clone()),
        keys: KeyService::new(db.clone(), clock.clone()),
        watchlists: WatchlistService::new(db.clone(), db.clone(), clock.clone()),
        sessions: SessionService::new(
            db.clone(),
            db.clone(),
            config.login_concurrency,
            freshness.clone(),
            clock.clone(),
        ),
        assets: AssetService::new(
            db.clone(),
            Arc::new(CatalogProvider),
            config.metadata_ttl,
            freshness.clone(),
            clock.clone(),
        ),
        quota: QuotaService::new(db.clone(), config.quota),
        registry: RegistryService::new(
            db.clone(),
            plugins.clone(),
            "admin-api",
            budget,
            config.trust_policy(),
            clock.clone(),
        ),
        health: HealthService::new(db.clone(), config.database_url.clone()),
        config: Arc::new(http_config(config)),
        clients: Arc::new(forecast_http::clients::ClientLimiter::new(
            config.client_per_minute,
            clock.clone(),
        )),
        started: Instant::now(),
        origin: Arc::from(origin.as_str()),
        cookie_secure,
        strategy_listing: Default::default(),
        results: Default::default(),
        progress: Default::default(),
        plugins,
        clock,
    });
    Ok(App { state, db, demo })
}

/// Opens the store the configuration names on `clock`, loading the demo
/// universe when needed, and the demo account created on a fresh database.
async fn open_store(
    config: &Config,
    clock: &SharedClock,
) -> anyhow::Result<(Arc<dyn Database>, Option<DemoAccount>)> {
    // Before anything records: series recorded earlier would be lost.
    forecast_http::metrics::install();
    let db = store::connect_with_clock(&config.database_url, clock.clone())
        .await
        .with_context(|| format!("open database {}", store::redact(&config.database_url)))?;
    load_demo_if_needed(db.as_ref()).await?;
    let demo = if config.demo_account || db.backend() == "sqlite" {
        ensure_demo_account(db.as_ref(), clock.as_ref()).await?
    } else {
        None
    };
    Ok((db, demo))
}

/// An empty database gets the demo universe; one holding an older build's
/// demo load is updated in place (new assets and real histories; users,
/// keys and ingested prices kept: `demo::load`). One log line before and
/// one after, none per batch.
async fn load_demo_if_needed(db: &dyn Database) -> anyhow::Result<()> {
    let universe = if db.counts().await?.assets == 0 {
        tracing::info!("empty database: loading the demo universe");
        Some(demo::Universe::Full)
    } else {
        let update = demo::needs_update(db).await?;
        if update.is_some() {
            tracing::info!(
                version = demo::DEMO_VERSION,
                "the database holds an older demo universe: updating it"
            );
        }
        update
    };
    if let Some(universe) = universe {
        let started = Instant::now();
        let summary = demo::load(db, universe, &mut |_, _| {}).await?;
        tracing::info!(
            assets = summary.assets,
            real = summary.real,
            synthetic = summary.synthetic,
            ingested = summary.ingested,
            added = summary.added,
            changed = summary.changed,
            kept = summary.kept,
            retired = summary.retired,
            seconds = started.elapsed().as_secs_f64(),
            "demo universe loaded"
        );
    }
    Ok(())
}

/// The matcher with the sentence-embedding model and the index membership
/// the configuration names, when present.
async fn matcher_service(
    config: &Config,
    db: &Arc<dyn Database>,
    plugins: &Arc<Plugins>,
    clock: &SharedClock,
) -> anyhow::Result<MatcherService> {
    let mut matcher = MatcherService::new(
        db.clone(),
        plugins.clone(),
        db.clone(),
        config.match_per_minute,
        clock.clone(),
    );
    if let Some(embedder) = load_model(&config.model).await? {
        matcher = matcher.with_embeddings(Arc::new(CatalogEmbeddings::new(embedder, db.clone())));
    }
    if let Some(membership) = load_membership(&config.reference)? {
        matcher = matcher.with_membership(membership);
    }
    Ok(matcher)
}

/// The alerts, observing assets through `verdicts`, their links pointing
/// at `origin`, on `clock`.
fn alert_service(
    config: &Config,
    db: &Arc<dyn Database>,
    verdicts: &VerdictService,
    origin: &str,
    clock: &SharedClock,
) -> AlertService {
    AlertService::new(
        db.clone(),
        db.clone(),
        db.clone(),
        db.clone(),
        db.clone(),
        verdicts.clone(),
        forecast_jobs::alerts::AlertSettings {
            origin: origin.to_string(),
            ..config.alerts.clone()
        },
        clock.clone(),
    )
}

/// What the HTTP layer reads of the configuration.
fn http_config(config: &Config) -> HttpConfig {
    HttpConfig {
        admin_token: config.admin_token.clone(),
        match_per_minute: config.match_per_minute,
        request_timeout: config.limits.request_timeout,
        body_timeout: config.limits.body_timeout,
        metrics_on_main: config.metrics_addr.is_none(),
        upgrade_url: config.upgrade_url.clone(),
        trusted_proxies: config.trusted_proxies.clone(),
    }
}

/// What bounds a backtest, from the configuration.
fn backtest_limits(config: &Config) -> BacktestLimits {
    BacktestLimits {
        timeout: config.backtest_timeout,
        signal_cache_bytes: config.signal_cache_bytes,
        per_user: config.backtests_per_user,
        queue_wait: config.backtest_queue_wait,
        research_timeout: config.research_timeout,
    }
}

/// The matcher's sentence-embedding model as `setting` says (see
/// [`ModelSetting`]): `None` when it is off, or absent from the default
/// folder (logged: the matcher answers lexically); an error when a folder
/// named by `FORECAST_MODEL_DIR` does not hold a loadable model.
pub async fn load_model(setting: &ModelSetting) -> anyhow::Result<Option<Arc<Embedder>>> {
    let (dir, required) = match setting {
        ModelSetting::Off => return Ok(None),
        ModelSetting::Default(dir) => (dir.clone(), false),
        ModelSetting::Required(dir) => (dir.clone(), true),
    };
    let started = Instant::now();
    let shown = dir.display().to_string();
    let loaded = tokio::task::spawn_blocking(move || Embedder::load(&dir))
        .await
        .context("loading the sentence-embedding model")?;
    match loaded {
        Ok(embedder) => {
            tracing::info!(
                model = embedder.id(),
                dir = shown,
                seconds = started.elapsed().as_secs_f64(),
                "sentence-embedding model loaded"
            );
            Ok(Some(Arc::new(embedder)))
        }
        Err(e) if required => Err(e.context("FORECAST_MODEL_DIR")),
        Err(e) => {
            tracing::warn!(
                error = %format!("{e:#}"),
                "no sentence-embedding model: the matcher answers lexically only (names, tickers, misspellings; no descriptions)"
            );
            Ok(None)
        }
    }
}

/// The matcher's index membership table as `setting` says (see
/// [`ModelSetting`]): `None` when off, or absent from the default folder
/// (logged: every asset counts as equally well-known); an error when a
/// folder named by `FORECAST_REFERENCE_DIR` does not hold a readable one.
pub fn load_membership(setting: &ModelSetting) -> anyhow::Result<Option<Arc<IndexMembership>>> {
    let (dir, required) = match setting {
        ModelSetting::Off => return Ok(None),
        ModelSetting::Default(dir) => (dir, false),
        ModelSetting::Required(dir) => (dir, true),
    };
    match IndexMembership::load(dir) {
        Ok(m) => {
            tracing::info!(
                memberships = m.len(),
                dir = %dir.display(),
                "index membership loaded: the matcher prefers well-known assets"
            );
            Ok(Some(Arc::new(m)))
        }
        Err(e) if required => Err(e.context("FORECAST_REFERENCE_DIR")),
        Err(e) => {
            tracing::warn!(
                error = %format!("{e:#}"),
                "no index membership table: the matcher treats every asset as equally well-known"
            );
            Ok(None)
        }
    }
}

/// Creates the demo Premium account and one key the first time a database
/// without any user is served; `None` otherwise (a key cannot be shown
/// again, and a database with accounts is someone's, not a demo). Dated
/// by `clock`.
pub async fn ensure_demo_account(
    db: &dyn Database,
    clock: &dyn Clock,
) -> anyhow::Result<Option<DemoAccount>> {
    const SETTING: &str = "demo_account_created";
    if db.setting(SETTING).await?.is_some() || !db.list_users().await?.is_empty() {
        return Ok(None);
    }
    let password = auth::random_password();
    let user = auth::create_user(db, DEMO_EMAIL, password.clone(), Tier::Premium, clock).await?;
    let key = auth::new_api_key();
    db.create_api_key(
        &user.id,
        "demo",
        &key.hash,
        &key.prefix,
        auth::MAX_ACTIVE_KEYS,
        clock.timestamp(),
    )
    .await?;
    db.set_setting(SETTING, "1").await?;
    Ok(Some(DemoAccount {
        email: user.email,
        password,
        key: key.key,
    }))
}

/// Computes the catalog vectors the store lacks (all on a fresh database,
/// none on a restart or on a replica after the first), logging progress
/// every quarter; the matcher answers lexically until they are there.
async fn prepare_embeddings(matcher: MatcherService) {
    let started = Instant::now();
    let mut logged = 0;
    let result = matcher
        .prepare_embeddings(move |done, total| {
            if done == total || done * 4 >= (logged + 1) * total {
                logged = done * 4 / total.max(1);
                tracing::info!(done, total, "embedding the catalog");
            }
        })
        .await;
    match result {
        Ok(stats) => tracing::info!(
            entries = stats.entries,
            reused = stats.reused,
            computed = stats.computed,
            seconds = started.elapsed().as_secs_f64(),
            "catalog embeddings ready: the matcher understands descriptions"
        ),
        Err(e) if e.to_string() == forecast_services::embeddings::STOPPED => tracing::info!(
            "catalog embedding stopped by shutdown; the next start computes the rest"
        ),
        Err(e) => {
            tracing::warn!(error = %e, "catalog embeddings failed; the matcher answers lexically")
        }
    }
}

/// How often expired sessions and old limiter counters are deleted.
const PURGE_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

/// Deletes expired sessions and limiter counters past their retention, at
/// start and then every [`PURGE_EVERY`], so neither table grows with
/// traffic.
async fn purge_expired(sessions: forecast_services::sessions::SessionService) {
    loop {
        match sessions.purge().await {
            Ok(p) if p.sessions + p.counters > 0 => {
                tracing::info!(
                    sessions = p.sessions,
                    counters = p.counters,
                    "purged expired rows"
                )
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not purge expired sessions and counters"),
        }
        tokio::time::sleep(PURGE_EVERY).await;
    }
}

/// Starts what runs beside the router: the registry follower (so this
/// server picks up activations, rollbacks and shadow runs), the purge of
/// expired sessions and counters, and, when
/// `config.grading` is on, the grading scheduler; when `config.alerts_follow`
/// is on, the alerts' evaluation and delivery. `serve` and the
/// in-process test harness share it so both run the same background work;
/// the handles let a harness stop the tasks when its app is dropped.
pub fn start_background(app: &App, config: &Config) -> Vec<tokio::task::JoinHandle<()>> {
    let (state, db) = (&app.state, &app.db);
    let mut tasks = vec![
        tokio::spawn(state.plugins.clone().follow(db.clone(), config.plugin_poll)),
        tokio::spawn(purge_expired(state.sessions.clone())),
        tokio::spawn(async {
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                forecast_http::metrics::upkeep();
            }
        }),
        tokio::spawn({
            let clients = state.clients.clone();
            async move {
                loop {
                    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                    clients.upkeep();
                }
            }
        }),
    ];
    let refresh = config.refresh.map(|r| {
        let provider: Arc<dyn forecast_ingest::providers::PriceProvider> =
            Arc::from(config.price_provider(r.provider));
        (r.at, provider)
    });
    if let Some((at, provider)) = &refresh {
        tracing::info!(at = %at, provider = provider.name(), "daily price refresh scheduled");
        tasks.push(tokio::spawn(forecast_ingest::refresh::schedule(
            db.clone(),
            provider.clone(),
            forecast_ingest::providers::FetchOptions {
                clock: state.clock.clone(),
                ..Default::default()
            },
            *at,
        )));
    }
    if state.matcher.has_model() {
        tasks.push(tokio::spawn(prepare_embeddings(state.matcher.clone())));
    }
    if config.alerts_follow {
        tasks.push(tokio::spawn(state.alerts.clone().follow()));
    }

    if config.grading {
        tasks.push(tokio::spawn(forecast_jobs::grading::schedule(
            db.clone(),
            state.plugins.clone(),
            config.grade_at,
            config.grading_lease,
            refresh.map(|(_, p)| forecast_ingest::refresh::job_kind(p.as_ref())),
            state.clock.clone(),
        )));
    }
    tasks
}

/// Serves `state` on `listener` (and `/metrics` alone on `metrics`, when
/// given) with the server's deadlines and connection cap
/// (`crate::server`) until `shutdown` resolves; then stops accepting on
/// both, lets in-flight requests finish for up to the grace period and
/// closes the rest.
pub async fn serve(
    state: AppState,
    listener: TcpListener,
    metrics: Option<TcpListener>,
    limits: crate::server::Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    let until_stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|stopped| *stopped).await;
    };
    let trusted = state.config.trusted_proxies.clone();
    let private = metrics.map(|listener| {
        let app = forecast_http::metrics::private_router(state.clone());
        tokio::spawn(crate::server::serve(
            listener,
            app,
            limits,
            trusted.clone(),
            until_stopped(stopped.clone()),
        ))
    });
    let app = forecast_http::router(state);
    crate::server::serve(listener, app, limits, trusted, until_stopped(stopped)).await;
    if let Some(private) = private {
        private.await.context("metrics listener")?;
    }
    Ok(())
}
