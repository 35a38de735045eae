//! `forecast`: parses the command line, sets up logging, runs the library.

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::EnvFilter;

/// mimalloc serves the Rust side of the process. Against glibc's malloc
/// (two arenas, see [`tune_malloc`]) it lifted the cached verdict from
/// 14.6k to 19.4–32k req/s and `/api/strategies` from 17.4k to 20.0–23.5k
/// at 32 connections, back to back on the 2-core machine: about a fifth of
/// a request's time had been allocation contending for two arenas
/// (docs/BENCHMARKS.md, "Allocator"). Those figures were measured with the
/// options of [`tune_mimalloc`].
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc v3's option numbers (`mi_option_t` in its `mimalloc.h`): the
/// -sys crate names only the options of older versions.
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Runs [`tune_mimalloc`] from the ELF initialiser list, before the Rust
/// runtime's first allocation: mimalloc reserves its first arena then, and
/// an arena's commit policy is fixed when it is reserved (the same options
/// set in `main` left that arena eager: a peak of 1,433 MiB, not 1,339).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[used]
#[link_section = ".init_array"]
static TUNE_MIMALLOC: extern "C" fn() = tune_mimalloc;

/// mimalloc's options; an environment variable of the same name, when
/// set, wins. Memory freed is given back to the system at once
/// (`MIMALLOC_PURGE_DELAY=0`, default 10 ms) and arenas are committed as
/// they are used (`MIMALLOC_ARENA_EAGER_COMMIT=0`). With mimalloc's
/// defaults the issue 14 abuse (a daily long-short of 1,000 positions
/// beside refused backtests) peaked at 1,535 MiB, over its 1,500 MiB bound;
/// with these at 1,339 MiB (glibc: 1,263 MiB), and a server holds 64 MiB
/// instead of 113 MiB around 3 × 64 sign-ins (tests/it/hardening_*.rs).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn tune_mimalloc() {
    // getenv, not the Rust environment API, which would allocate.
    let unset = |name: &std::ffi::CStr| {
        // SAFETY: `name` is NUL-terminated; no other thread exists yet.
        unsafe { libc::getenv(name.as_ptr()).is_null() }
    };
    // SAFETY: mi_option_set only sets an allocator parameter.
    unsafe {
        if unset(c"MIMALLOC_PURGE_DELAY") {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        }
        if unset(c"MIMALLOC_ARENA_EAGER_COMMIT") {
            libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
        }
    }
}

fn main() -> std::process::ExitCode {
    tune_malloc();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the tokio runtime")
        .block_on(run())
}

/// glibc's malloc, which C code such as SQLite still allocates from, tuned
/// before any other thread exists (an environment variable of the same
/// name, when set, wins):
/// - at most two arenas (`MALLOC_ARENA_MAX`): glibc gives threads up to 8
///   per core and keeps what they free (4.6 GB held after the issue 14
///   abuse when it served every allocation; docs/decisions/0048-allocators.md,
///   and docs/BENCHMARKS.md);
/// - a fixed mmap threshold of 4 MiB (`MALLOC_MMAP_THRESHOLD_`), so a large
///   block freed does not raise the threshold and stay resident.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let unset = |name: &str| std::env::var_os(name).is_none();
        // SAFETY: mallopt only sets an allocator parameter; no other
        // thread is running yet.
        if unset("MALLOC_ARENA_MAX") {
            unsafe {
                libc::mallopt(libc::M_ARENA_MAX, 2);
            }
        }
        if unset("MALLOC_MMAP_THRESHOLD_") {
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
            }
        }
    }
}

async fn run() -> std::process::ExitCode {
    // Spans to an OTLP collector too, with OTEL_EXPORTER_OTLP_ENDPOINT; the
    // guard flushes them when `run` returns.
    let (otlp, _telemetry) = forecast::telemetry::otlp();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn")),
        )
        .with_writer(std::io::stderr)
        // Colours only on a terminal: a log file or collector gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .finish()
        .with(otlp)
        .init();
    let cli = match forecast::cli::Cli::try_parse_args() {
        Ok(cli) => cli,
        // A setting's bad value, told in the terms of its variable.
        Err(e) => match forecast::config::ConfigError::from_clap(&e) {
            Some(bad) => {
                eprintln!("error: {bad}");
                return std::process::ExitCode::FAILURE;
            }
            None => e.exit(),
        },
    };
    match cli.run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
