//! `forecast`: parses the command line, sets up logging, runs the library.

use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() -> std::process::ExitCode {
    tune_malloc();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the tokio runtime")
        .block_on(run())
}

/// glibc's allocator, tuned before any other thread exists (an
/// environment variable of the same name, when set, wins):
/// - at most two arenas (`MALLOC_ARENA_MAX`): glibc gives threads up to 8
///   per core and keeps what they free; a backtest's signal threads each
///   filled one with hundreds of MB of small vectors, so the process held
///   the peak of every past run (4.6 GB after the issue 14 abuse). Two
///   arenas: peak 1.25 GB instead of 1.7 GB under that pattern
///   (docs/DECISIONS.md, "Bounded backtests");
/// - a fixed mmap threshold of 4 MiB (`MALLOC_MMAP_THRESHOLD_`): left to
///   itself glibc raises the threshold to the size of the first large
///   block freed (up to 32 MiB), after which argon2's 19 MiB blocks and a
///   backtest's large columns come from the heap and stay resident after
///   a burst (CI saw 52 → 166 MiB kept after 3 × 64 sign-ins). Blocks of
///   4 MiB and more are mapped on their own and given back when freed.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets an allocator parameter; no other
        // thread is running yet.
        if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
            unsafe {
                libc::mallopt(libc::M_ARENA_MAX, 2);
            }
        }
        if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
            }
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
