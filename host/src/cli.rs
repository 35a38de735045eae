//! The operator command line (`forecast`). Each subcommand is a thin
//! wrapper over the library. The doc comments of the commands and their
//! arguments are the `--help` texts: they speak to the operator.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};

use crate::config::{database_url_from_env, Config, Settings};
use forecast_domain::{GradingStatus, Tier, User};
use forecast_services::auth;
use forecast_store as store;

/// Forecast Engine: drawdown-segmented forecasts over HTTP.
///
/// Serve the API and the web app, load prices, grade assets, manage
/// accounts, API keys and plugins. Every command works on the database of
/// DATABASE_URL (default sqlite://data/forecast.db); `forecast config`
/// lists every setting and its environment variable.
#[derive(Debug, Parser)]
#[command(name = "forecast", version)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the API and the web app (an empty database gets the demo
    /// universe first).
    ///
    /// Listens on 127.0.0.1:8080 unless FORECAST_ADDR or --addr says
    /// otherwise. Every setting below is an environment variable or the
    /// flag beside it; the flag wins. `forecast config` lists them as a
    /// table.
    Serve {
        /// On PostgreSQL, create the demo Premium account if the database
        /// has no user yet (SQLite does so without the flag).
        #[arg(long)]
        demo: bool,
        #[command(flatten)]
        settings: Box<Settings>,
    },
    /// Every setting: its environment variable, default and meaning.
    Config {
        /// Print docs/CONFIG.md (Markdown) instead of the table.
        #[arg(long)]
        markdown: bool,
    },
    /// The embedded demo universe.
    Demo {
        #[command(subcommand)]
        command: DemoCommand,
    },
    /// Load real prices (CSV files or a live provider).
    Ingest {
        #[command(subcommand)]
        command: IngestCommand,
    },
    /// Grade every active asset now (today's run for the active engine and
    /// scorer; joins a run other replicas are working on), with progress.
    /// Each asset's month-end history is kept from the served run of the
    /// same versions where its earlier prices did not change.
    Grade {
        /// Rebuild every asset's month-end history from its prices.
        #[arg(long)]
        rebuild: bool,
        /// For measurement only: grade today's states and evidence without
        /// month-end histories or forecasts, what the daily grade's cost is
        /// measured against (docs/BENCHMARKS.md). The run is served with
        /// grades no forecast informed and no grade history.
        #[arg(long, hide = true, conflicts_with = "rebuild")]
        without_histories: bool,
    },
    /// Manage accounts.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manage API keys.
    Key {
        #[command(subcommand)]
        command: KeyCommand,
    },
    /// The plugin registry: list, add, activate, roll back, shadow.
    Plugin {
        #[command(subcommand)]
        command: crate::cli_plugin::PluginCommand,
    },
    /// The matcher's sentence-embedding model (catalog vectors).
    Matcher {
        #[command(subcommand)]
        command: crate::cli_matcher::MatcherCommand,
    },
    /// Alerts: evaluate them now and send what is due.
    Alerts {
        #[command(subcommand)]
        command: crate::cli_alerts::AlertsCommand,
    },
}

#[derive(Debug, Subcommand)]
enum UserCommand {
    /// Create an account. Without --password-stdin a random password is
    /// generated and printed once.
    Add {
        /// E-mail address (case-insensitive, unique).
        #[arg(long)]
        email: String,
        /// free, lite, pro or premium.
        #[arg(long)]
        tier: Tier,
        /// Read the password from standard input (first line).
        #[arg(long)]
        password_stdin: bool,
    },
    /// Set a new password (the account is signed out everywhere). Without
    /// --password-stdin a random password is generated and printed once.
    SetPassword {
        /// E-mail address.
        #[arg(long)]
        email: String,
        /// Read the password from standard input (first line).
        #[arg(long)]
        password_stdin: bool,
    },
    /// Change an account's tier; takes effect on the next request.
    SetTier {
        /// E-mail address.
        #[arg(long)]
        email: String,
        /// free, lite, pro or premium.
        #[arg(long)]
        tier: Tier,
    },
    /// Override an account's quotas (cost units); an omitted flag restores
    /// the default for that window.
    SetLimits {
        /// E-mail address.
        #[arg(long)]
        email: String,
        /// Units per UTC minute.
        #[arg(long)]
        per_minute: Option<u32>,
        /// Units per UTC day.
        #[arg(long)]
        per_day: Option<u32>,
    },
    /// List accounts.
    List,
}

#[derive(Debug, Subcommand)]
enum KeyCommand {
    /// Create an API key for an account; the key is printed alone on the
    /// last line of standard output, once.
    Create {
        /// E-mail address of the owner.
        #[arg(long)]
        email: String,
        /// A name to recognise the key by.
        #[arg(long)]
        name: String,
    },
}

#[derive(Debug, Subcommand)]
enum DemoCommand {
    /// Load the catalog and demo prices into an empty database, or update
    /// a filled one to this build's (adds new assets and real histories;
    /// keeps users, keys and ingested prices); idempotent.
    Load {
        /// Keep only about 55 assets active (each category's first three
        /// and the API document's examples), for tests and quick trials.
        #[arg(long)]
        small: bool,
    },
}

#[derive(Debug, Subcommand)]
enum IngestCommand {
    /// Upsert daily closes from CSV files (`date,close`, optional
    /// open/high/low/volume). Without --ticker each file's stem names the
    /// ticker (`BTC-USD.csv`); a directory ingests every `*.csv` in it.
    /// One transaction per asset; a bad row rejects its whole file. Only
    /// plausible prices: dates 1800-01-01 to tomorrow (UTC), closes 1e-6 to
    /// 1e9, no close over 10x or under 1/10 of the previous one, at most
    /// 60,000 rows per history.
    Csv {
        /// CSV files, or one directory.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Ticker every given file belongs to.
        #[arg(long)]
        ticker: Option<String>,
        /// Accept closes more than 10x (or less than 1/10 of) the previous
        /// one, e.g. an unadjusted split the operator has checked.
        #[arg(long)]
        allow_jumps: bool,
    },
    /// Fetch daily closes from a live provider (Yahoo Finance or Stooq;
    /// base URLs from FORECAST_YAHOO_URL / FORECAST_STOOQ_URL) and upsert
    /// them by date like `ingest csv`: one transaction per asset, a failed
    /// asset keeps its prices, an asset with nothing new is not written.
    /// Exits non-zero when any asset failed.
    Fetch(crate::cli_fetch::FetchArgs),
}

impl Cli {
    /// Parses the command line. The help of `serve` shows a setting's
    /// current value beside its variable only when the variable is set,
    /// and never for secrets.
    pub fn try_parse_args() -> Result<Cli, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let mut cmd = Cli::command().mut_subcommand("serve", |serve| {
            serve.mut_args(|a| {
                let unset = a
                    .get_env()
                    .is_some_and(|name| std::env::var_os(name).is_none());
                if unset {
                    a.hide_env_values(true)
                } else {
                    a
                }
            })
        });
        let matches = cmd.try_get_matches_from_mut(std::env::args_os())?;
        Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
    }

    /// Runs the chosen subcommand.
    pub async fn run(self) -> anyhow::Result<()> {
        match self.command {
            Command::Serve { demo, settings } => serve(*settings, demo).await,
            Command::Config { markdown } => {
                use std::io::Write;
                let text = if markdown {
                    crate::config::docs::markdown()
                } else {
                    crate::config::docs::table()
                };
                // A closed pipe (`forecast config | head`) is not an error.
                let _ = std::io::stdout().lock().write_all(text.as_bytes());
                Ok(())
            }
            Command::Demo {
                command: DemoCommand::Load { small },
            } => demo_load(small).await,
            Command::Ingest {
                command:
                    IngestCommand::Csv {
                        paths,
                        ticker,
                        allow_jumps,
                    },
            } => ingest_csv(paths, ticker, allow_jumps).await,
            Command::Ingest {
                command: IngestCommand::Fetch(args),
            } => crate::cli_fetch::run(args).await,
            Command::User { command } => user(command).await,
            Command::Grade {
                rebuild,
                without_histories,
            } => {
                grade(match (rebuild, without_histories) {
                    (true, _) => forecast_jobs::grading::Histories::Rebuild,
                    (_, true) => forecast_jobs::grading::Histories::Without,
                    _ => forecast_jobs::grading::Histories::Keep,
                })
                .await
            }
            Command::Key {
                command: KeyCommand::Create { email, name },
            } => key_create(&email, &name).await,
            Command::Plugin { command } => crate::cli_plugin::run(command).await,
            Command::Matcher { command } => crate::cli_matcher::run(command).await,
            Command::Alerts { command } => crate::cli_alerts::run(command).await,
        }
    }
}

/// The first line of standard input, or a generated password (true).
fn password_from(stdin: bool) -> anyhow::Result<(String, bool)> {
    if !stdin {
        return Ok((auth::random_password(), true));
    }
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("read the password from stdin")?;
    Ok((line.trim_end_matches(['\r', '\n']).to_string(), false))
}

async fn serve(settings: Settings, demo: bool) -> anyhow::Result<()> {
    let mut config = settings.resolve()?;
    config.demo_account = demo;
    // One serving process per SQLite file (its quota counters live here).
    let _serving = store::ServeLock::acquire(&config.database_url)?;
    // Sockets must never take the descriptors the database needs: raise
    // the soft limit to the hard one and keep the cap below it.
    let open_files = crate::server::raise_open_file_limit();
    let requested = config.limits.max_connections;
    config.limits.max_connections = crate::server::connection_cap(requested, open_files);
    if config.limits.max_connections < requested {
        tracing::warn!(
            requested,
            cap = config.limits.max_connections,
            open_files,
            "FORECAST_MAX_CONNECTIONS lowered below the open-file limit"
        );
    }
    let listener = tokio::net::TcpListener::bind(&config.addr)
        .await
        .with_context(|| format!("bind {}", config.addr))?;
    let local = listener.local_addr()?;
    let metrics = match &config.metrics_addr {
        Some(addr) => Some(
            tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("bind FORECAST_METRICS_ADDR {addr}"))?,
        ),
        None => None,
    };
    let app = crate::app::build(&config, local).await?;
    let shutdown = {
        // The catalog embedding stops at its next step as soon as the
        // signal comes, not after the drain; the other background tasks
        // are aborted after the drain (below).
        let signal = shutdown_signal()?;
        let matcher = app.state.matcher.clone();
        async move {
            signal.await;
            matcher.stop_background();
        }
    };
    // Tests read this first line to learn the port. Write errors (a closed
    // pipe) must not take the server down, hence no println!.
    let banner = banner(&app, &config.database_url, local, metrics.as_ref()).await?;
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
    }
    // They run as long as the server does.
    let background = crate::app::start_background(&app, &config);
    let crate::app::App { state, db, .. } = app;
    let served = crate::app::serve(state, listener, metrics, config.limits, shutdown).await;
    // Background work ends at its next await (a step running on a
    // blocking thread finishes first, and the runtime waits for it): a
    // store write cut there is a transaction rolled back, and the grading,
    // the refresh and the embedding resume from what is stored on the
    // next start (their module headers).
    for task in &background {
        task.abort();
    }
    for task in background {
        let _ = task.await;
    }
    // Persist what is kept behind (quota counters) and checkpoint.
    db.close().await;
    served
}

/// What the server prints when it starts listening: where, how to sign in
/// (the demo login, the file it was written to, or how to make an
/// account), and curl lines to try.
async fn banner(
    app: &crate::app::App,
    database_url: &str,
    local: std::net::SocketAddr,
    metrics: Option<&tokio::net::TcpListener>,
) -> anyhow::Result<String> {
    // The demo login is a credential: printed only to a terminal (a
    // newcomer's `make run`); with stdout piped or redirected (a service,
    // a log collector) it goes to a file only its owner can read.
    let shown = match &app.demo {
        Some(d) if std::io::stdout().is_terminal() => DemoShown::Printed(d),
        Some(d) => DemoShown::Written(write_demo_login(d, database_url)),
        None => DemoShown::Before,
    };
    let key_hint = match &shown {
        DemoShown::Printed(d) => {
            format!(
                "\nDemo account (shown once; the key cannot be recovered):\n  \
                 login:   {} / {}\n  API key: {}\n",
                d.email, d.password, d.key
            )
        }
        DemoShown::Written(Ok(path)) => format!(
            "\nDemo account: its login and API key are in {} (readable by this user only; \
             stdout is not a terminal, so they are not printed).\n",
            path.display()
        ),
        DemoShown::Written(Err(e)) => format!(
            "\nDemo account {0} created, but its login could not be written ({e:#}); \
             stdout is not a terminal, so it is not printed. New ones:\n  \
             ./target/release/forecast user set-password --email {0}   # prints a new password\n  \
             ./target/release/forecast key create --email {0} --name mine   # then: export FORECAST_KEY=svc_…\n",
            crate::app::DEMO_EMAIL
        ),
        DemoShown::Before if app.db.list_users().await?.is_empty() => (
            "\nNo account yet (on PostgreSQL the demo account needs `serve --demo`). Make one:\n  \
             printf '%s\\n' 'a long password' | ./target/release/forecast user add --email you@example.com --tier premium --password-stdin\n  \
             ./target/release/forecast key create --email you@example.com --name mine   # then: export FORECAST_KEY=svc_…\n"
        )
        .to_string(),
        // Only where the demo account exists: a database with other
        // accounts is someone's, and was never shown a demo login.
        DemoShown::Before if has_demo_user(app.db.as_ref()).await? => format!(
            "\nThe demo login and key were shown on the first start (API keys are shown once). New ones:\n  \
             ./target/release/forecast user set-password --email {0}   # prints a new password\n  \
             ./target/release/forecast key create --email {0} --name mine   # then: export FORECAST_KEY=svc_…\n",
            crate::app::DEMO_EMAIL
        ),
        DemoShown::Before => String::new(),
    };
    let key = match &shown {
        DemoShown::Printed(d) => d.key.as_str(),
        _ => "$FORECAST_KEY",
    };
    let sign_in = match &shown {
        DemoShown::Before if key_hint.is_empty() => "with your account",
        _ => "with the demo login",
    };
    let metrics_hint = match metrics {
        Some(m) => format!("Metrics: http://{}/metrics\n", m.local_addr()?),
        None => String::new(),
    };
    Ok(format!(
        "Forecast Engine listening on http://{local}\n{key_hint}\
         Web app: open http://{local}/ in a browser and sign in {sign_in}.\n\
         Try:\n  curl http://{local}/api/health\n  \
         curl -H \"Authorization: Bearer {key}\" 'http://{local}/api/assets?category=Indices'\n  \
         curl -H \"Authorization: Bearer {key}\" 'http://{local}/api/analysis/%5EGSPC?return_period=90'\n  \
         curl -H \"Authorization: Bearer {key}\" -H 'Content-Type: application/json' \\\n    \
         -d '{{\"strategy\":\"topn\",\"category\":\"Crypto\",\"top_n\":5}}' http://{local}/api/backtest\n  \
         curl http://{local}/api/openapi.json\n{metrics_hint}"
    ))
}

/// How the demo account of this start, if any, reaches its operator.
enum DemoShown<'a> {
    /// In the banner (stdout is a terminal).
    Printed(&'a crate::app::DemoAccount),
    /// In a file, whose path the banner gives (or why it could not be).
    Written(anyhow::Result<std::path::PathBuf>),
    /// No demo account was created by this start.
    Before,
}

/// Whether the store holds the demo account.
async fn has_demo_user(db: &dyn store::Database) -> anyhow::Result<bool> {
    Ok(db
        .list_users()
        .await?
        .iter()
        .any(|u| u.email == crate::app::DEMO_EMAIL))
}

/// Where the demo login is written when stdout is not a terminal: beside
/// a SQLite database (`data/forecast.db` → `data/forecast.db.demo-login.txt`),
/// else `demo-login.txt` in the working directory.
pub fn demo_login_path(database_url: &str) -> std::path::PathBuf {
    let file = database_url
        .strip_prefix("sqlite://")
        .or_else(|| database_url.strip_prefix("sqlite:"))
        .map(|rest| rest.split('?').next().unwrap_or(rest))
        .filter(|path| !path.is_empty() && !path.starts_with(':'));
    match file {
        Some(path) => std::path::PathBuf::from(format!("{path}.demo-login.txt")),
        None => std::path::PathBuf::from("demo-login.txt"),
    }
}

/// Writes the demo login and key to [`demo_login_path`], created anew with
/// mode 0600 (an older file there is replaced, never reused with its
/// permissions); its path.
fn write_demo_login(
    demo: &crate::app::DemoAccount,
    database_url: &str,
) -> anyhow::Result<std::path::PathBuf> {
    use std::io::Write;
    let path = demo_login_path(database_url);
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("remove {}", path.display())),
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(&path)
        .with_context(|| format!("create {}", path.display()))?;
    write!(
        file,
        "Forecast Engine demo account (the key cannot be recovered)\n\
         login:   {} / {}\nAPI key: {}\n",
        demo.email, demo.password, demo.key
    )
    .and_then(|()| file.sync_all())
    .with_context(|| format!("write {}", path.display()))?;
    Ok(path)
}

/// Installs the SIGINT and SIGTERM handlers now and returns the future that
/// resolves on the first of them. `serve` calls it before printing the
/// banner: a signal sent as soon as the server is announced then drains the
/// server instead of killing the process.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    #[cfg(unix)]
    let signals = {
        use tokio::signal::unix::{signal, SignalKind};
        let mut terminate = signal(SignalKind::terminate()).context("install SIGTERM handler")?;
        let mut interrupt = signal(SignalKind::interrupt()).context("install SIGINT handler")?;
        async move {
            tokio::select! {
                _ = terminate.recv() => {},
                _ = interrupt.recv() => {},
            }
        }
    };
    #[cfg(not(unix))]
    let signals = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    Ok(async move {
        signals.await;
        tracing::info!("shutting down: draining in-flight requests");
    })
}

async fn demo_load(small: bool) -> anyhow::Result<()> {
    let url = database_url_from_env();
    let db = store::connect(&url).await?;
    let started = Instant::now();
    let universe = if small {
        forecast_ingest::demo::Universe::Small
    } else {
        forecast_ingest::demo::Universe::Full
    };
    // One bar on stderr; indicatif draws nothing when stderr is not a
    // terminal, and the summary line below is printed either way.
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "loading demo universe {bar:30} {pos}/{len} assets, {elapsed}",
        )
        .expect("valid template"),
    );
    let summary = forecast_ingest::demo::load(db.as_ref(), universe, &mut |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })
    .await?;
    bar.finish_and_clear();
    let what = if summary.update {
        format!(
            "demo universe updated in {} in {:.1}s ({} added, {} changed, {} kept, {} old tickers retired)",
            store::redact(&url),
            started.elapsed().as_secs_f64(),
            summary.added,
            summary.changed,
            summary.kept,
            summary.retired
        )
    } else {
        format!(
            "demo universe loaded into {} in {:.1}s",
            store::redact(&url),
            started.elapsed().as_secs_f64()
        )
    };
    println!(
        "{what}: {} assets ({} real, {} synthetic, {} ingested; {} inactive, {} with under 300 rows), {} price rows",
        summary.assets,
        summary.real,
        summary.synthetic,
        summary.ingested,
        summary.inactive,
        summary.short_history,
        summary.price_rows
    );
    db.close().await;
    Ok(())
}

async fn ingest_csv(
    paths: Vec<PathBuf>,
    ticker: Option<String>,
    allow_jumps: bool,
) -> anyhow::Result<()> {
    let files = match (paths.as_slice(), ticker) {
        ([dir], None) if dir.is_dir() => forecast_ingest::files::files_in_dir(dir)?,
        (_, Some(_)) if paths.iter().any(|p| p.is_dir()) => {
            bail!("--ticker takes files, not a directory")
        }
        (_, Some(t)) => paths.into_iter().map(|p| (p, t.clone())).collect(),
        (_, None) => paths
            .into_iter()
            .map(|p| {
                let t = p
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .map(str::to_string)
                    .with_context(|| format!("cannot take a ticker from {}", p.display()))?;
                Ok((p, t))
            })
            .collect::<anyhow::Result<_>>()?,
    };
    let url = database_url_from_env();
    let db = store::connect(&url).await?;
    let rules = forecast_ingest::plausible::Rules {
        allow_jumps,
        ..Default::default()
    };
    let reports = forecast_ingest::files::ingest_files(db.as_ref(), &files, &rules).await?;
    db.close().await;
    let mut failed = 0;
    for r in &reports {
        match &r.outcome {
            Ok(()) => println!(
                "ok      {} <- {}: {} rows read, {} rows stored",
                r.ticker, r.file, r.rows_in_file, r.rows_after
            ),
            Err(message) => {
                failed += 1;
                println!("REJECTED {} <- {}: {message}", r.ticker, r.file);
            }
        }
    }
    if failed > 0 {
        bail!(
            "{failed} of {} files rejected; nothing of them was written",
            reports.len()
        );
    }
    Ok(())
}

fn describe(u: &User) -> String {
    let limit = |v: Option<u32>| v.map_or("default".to_string(), |n| n.to_string());
    format!(
        "{}  tier={}  per_minute={}  per_day={}",
        u.email,
        u.tier.as_str(),
        limit(u.per_minute),
        limit(u.per_day)
    )
}

async fn user(command: UserCommand) -> anyhow::Result<()> {
    let db = store::connect(&database_url_from_env()).await?;
    let result = async {
        match command {
            UserCommand::Add {
                email,
                tier,
                password_stdin,
            } => {
                let (password, generated) = password_from(password_stdin)?;
                let user = auth::create_user(
                    db.as_ref(),
                    &email,
                    password.clone(),
                    tier,
                    &forecast_domain::SystemClock,
                )
                .await?;
                println!("created {}", describe(&user));
                if generated {
                    println!("password (shown once): {password}");
                }
            }
            UserCommand::SetPassword {
                email,
                password_stdin,
            } => {
                let (password, generated) = password_from(password_stdin)?;
                auth::set_password(db.as_ref(), &email, password.clone()).await?;
                println!("password changed; every session of {email} is signed out");
                if generated {
                    println!("password (shown once): {password}");
                }
            }
            UserCommand::SetTier { email, tier } => {
                let email = auth::normalize_email(&email)?;
                let user = db
                    .set_user_tier(&email, tier)
                    .await?
                    .with_context(|| format!("no user {email}"))?;
                println!("updated {}", describe(&user));
            }
            UserCommand::SetLimits {
                email,
                per_minute,
                per_day,
            } => {
                let email = auth::normalize_email(&email)?;
                let user = db
                    .set_user_limits(&email, per_minute, per_day)
                    .await?
                    .with_context(|| format!("no user {email}"))?;
                println!("updated {}", describe(&user));
            }
            UserCommand::List => {
                for u in db.list_users().await? {
                    println!("{}", describe(&u));
                }
            }
        }
        anyhow::Ok(())
    }
    .await;
    db.close().await;
    result
}

async fn key_create(email: &str, name: &str) -> anyhow::Result<()> {
    let email = auth::normalize_email(email)?;
    let name = name.trim();
    if name.is_empty() {
        bail!("--name must not be empty");
    }
    let db = store::connect(&database_url_from_env()).await?;
    let result = async {
        let (user, _) = db
            .user_by_email(&email)
            .await?
            .with_context(|| format!("no user {email}"))?;
        let key = auth::new_api_key();
        let created = db
            .create_api_key(
                &user.id,
                name,
                &key.hash,
                &key.prefix,
                auth::MAX_ACTIVE_KEYS,
                forecast_domain::Clock::timestamp(&forecast_domain::SystemClock),
            )
            .await?;
        if created.is_none() {
            bail!(
                "{email} already has {} active keys; revoke one first",
                auth::MAX_ACTIVE_KEYS
            );
        }
        if user.tier != Tier::Premium {
            eprintln!(
                "note: {email} is on the {} tier; the key answers 402 until they are Premium",
                user.tier.as_str()
            );
        }
        println!("created key '{name}' for {email} (shown once):");
        println!("{}", key.key);
        anyhow::Ok(())
    }
    .await;
    db.close().await;
    result
}

async fn grade(histories: forecast_jobs::grading::Histories) -> anyhow::Result<()> {
    let config = Config::from_env()?;
    let clock = config.clock();
    let db = store::connect_with_clock(&config.database_url, clock.clone()).await?;
    let plugins = std::sync::Arc::new(
        forecast_services::active::Plugins::load(
            &config.plugins_config(),
            db.as_ref(),
            clock.as_ref(),
        )
        .await?,
    );
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let progress: std::sync::Arc<dyn Fn(forecast_jobs::grading::Progress) + Send + Sync> =
        std::sync::Arc::new(|p: forecast_jobs::grading::Progress| {
            let eta = p.eta().map_or("?".to_string(), |s| format!("{s:.0}s"));
            let pct = (p.done * 100).checked_div(p.total).unwrap_or(100);
            eprint!(
                "\rgrading: {}/{} assets ({pct}%), {:.1} assets/s, ETA {eta}   ",
                p.done,
                p.total,
                p.rate()
            );
        });
    let options = forecast_jobs::grading::Options {
        workers,
        lease: config.grading_lease,
        histories,
    };
    let result = forecast_jobs::grading::run(db.clone(), plugins, options, progress, clock).await;
    eprintln!();
    // A completed run is what alerts read: evaluate them now (a server
    // following the database would, within its interval, too; whoever
    // claims the evaluation first does it once).
    let alerts = match &result {
        Ok(s) if s.activated => Some(
            async {
                let service = crate::cli_alerts::service(&config, db.clone()).await?;
                let evaluation = service.evaluate().await?;
                service.deliver_due().await?;
                anyhow::Ok(evaluation)
            }
            .await,
        ),
        _ => None,
    };
    db.close().await;
    let s = result?;
    let d = s.data_sources;
    println!(
        "graded prices: {} real, {} ingested, {} synthetic (generated, not market data)",
        d.real, d.ingested, d.synthetic
    );
    println!(
        "run {} ({}): {} assets graded here and {} failed in {:.1}s ({} periods x {} metrics each; {} kept their month-end history); run total {} graded, {} failed of {}; {}",
        s.run.id,
        s.run.day,
        s.graded_here,
        s.failed_here,
        s.elapsed.as_secs_f64(),
        forecast_services::analysis::CACHED_RETURN_PERIODS.len(),
        forecast_jobs::grading::METRICS.len(),
        s.kept_here,
        s.run.graded,
        s.run.failures,
        s.run.total,
        if s.activated {
            "now active".to_string()
        } else if s.run.status == GradingStatus::Done {
            "already complete".to_string()
        } else {
            "other replicas are finishing it".to_string()
        }
    );
    match alerts {
        Some(Ok(evaluation)) => println!("alerts: {}", crate::cli_alerts::describe(&evaluation)),
        Some(Err(e)) => eprintln!("alerts: not evaluated: {e:#}"),
        None => {}
    }
    Ok(())
}
