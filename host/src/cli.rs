//! The operator command line (`forecast`). Each subcommand is a thin
//! wrapper over the library.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};

use crate::config::{database_url_from_env, Config};
use crate::store;

/// Forecast Engine: drawdown-segmented forecasts over HTTP.
#[derive(Debug, Parser)]
#[command(name = "forecast", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the API (FORECAST_ADDR, default 127.0.0.1:8080; DATABASE_URL,
    /// default sqlite://data/forecast.db). An empty database gets the demo
    /// universe first.
    Serve {
        /// Listen address (overrides FORECAST_ADDR); port 0 picks a free port.
        #[arg(long)]
        addr: Option<String>,
    },
    /// The embedded demo universe.
    Demo {
        #[command(subcommand)]
        command: DemoCommand,
    },
    /// Load real prices.
    Ingest {
        #[command(subcommand)]
        command: IngestCommand,
    },
}

#[derive(Debug, Subcommand)]
enum DemoCommand {
    /// Load (or reload) the catalog and demo prices; idempotent.
    Load,
}

#[derive(Debug, Subcommand)]
enum IngestCommand {
    /// Upsert daily closes from CSV files (`date,close`, optional
    /// open/high/low/volume). Without --ticker each file's stem names the
    /// ticker (`BTC-USD.csv`); a directory ingests every `*.csv` in it.
    /// One transaction per asset; a bad row rejects its whole file.
    Csv {
        /// CSV files, or one directory.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Ticker every given file belongs to.
        #[arg(long)]
        ticker: Option<String>,
    },
}

impl Cli {
    /// Runs the chosen subcommand.
    pub async fn run(self) -> anyhow::Result<()> {
        match self.command {
            Command::Serve { addr } => serve(addr).await,
            Command::Demo {
                command: DemoCommand::Load,
            } => demo_load().await,
            Command::Ingest {
                command: IngestCommand::Csv { paths, ticker },
            } => ingest_csv(paths, ticker).await,
        }
    }
}

async fn serve(addr: Option<String>) -> anyhow::Result<()> {
    let mut config = Config::from_env()?;
    if let Some(addr) = addr {
        config.addr = addr;
    }
    let listener = tokio::net::TcpListener::bind(&config.addr)
        .await
        .with_context(|| format!("bind {}", config.addr))?;
    let state = crate::app::AppState::build(config).await?;
    let local = listener.local_addr()?;
    // Tests read this first line to learn the port. Write errors (a closed
    // pipe) must not take the server down, hence no println!.
    let banner = format!(
        "Forecast Engine listening on http://{local}\n\
         Try:\n  curl http://{local}/api/health?debug=1\n  \
         curl 'http://{local}/api/assets?category=Indices'\n  \
         curl 'http://{local}/api/analysis/%5EGSPC?return_period=90'\n  \
         curl http://{local}/api/openapi.json\n"
    );
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
    }
    crate::app::serve(state, listener, shutdown_signal()).await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down: draining in-flight requests");
}

async fn demo_load() -> anyhow::Result<()> {
    let url = database_url_from_env();
    let db = store::connect(&url).await?;
    let started = Instant::now();
    let summary = crate::demo::load(db.as_ref(), &mut |done, total| {
        eprint!("\rloading demo universe: {done}/{total} assets");
    })
    .await?;
    eprintln!();
    println!(
        "demo universe loaded into {} in {:.1}s: {} assets ({} real, {} synthetic, {} inactive, {} with under 300 rows), {} price rows",
        store::redact(&url),
        started.elapsed().as_secs_f64(),
        summary.assets,
        summary.real,
        summary.synthetic,
        summary.inactive,
        summary.short_history,
        summary.price_rows
    );
    db.close().await;
    Ok(())
}

async fn ingest_csv(paths: Vec<PathBuf>, ticker: Option<String>) -> anyhow::Result<()> {
    let files = match (paths.as_slice(), ticker) {
        ([dir], None) if dir.is_dir() => crate::ingest::files_in_dir(dir)?,
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
    let reports = crate::ingest::ingest_files(db.as_ref(), &files).await?;
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
