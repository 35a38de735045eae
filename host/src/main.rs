//! `forecast`: parses the command line, sets up logging, runs the library.

use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() -> std::process::ExitCode {
    limit_malloc_arenas();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the tokio runtime")
        .block_on(run())
}

/// glibc gives threads up to 8 malloc arenas per core and keeps what they
/// free; a backtest's signal threads each fill one with hundreds of MB of
/// small vectors, so the process held the peak of every past run (4.6 GB
/// after the issue 14 abuse). Two arenas: peak 1.25 GB instead of 1.7 GB
/// under that pattern (docs/DECISIONS.md, "Bounded backtests"). Called
/// before any other thread exists; `MALLOC_ARENA_MAX`, when set, wins.
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets an allocator parameter; no other
        // thread is running yet.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

async fn run() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match forecast::cli::Cli::parse().run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
