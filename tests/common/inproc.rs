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
//! A test that lets time pass gives the app a [`ManualClock`]
//! ([`Server::app_with_clock`]) and advances it instead of sleeping.
//!
//! The configuration is built as a value from the same `FORECAST_*` pairs
//! the end-to-end harness passes to the child process, by the parser of
//! `forecast serve` ([`Config::from_pairs`]): tests run in parallel threads
//! of one process, so mutating the environment would leak between them.

use std::path::PathBuf;
use std::sync::Arc;

use forecast::config::Config;
use forecast::domain::{ManualClock, SharedClock};

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

    /// An instant just after a day boundary, hence the start of a minute,
    /// a 5-minute and a day window (windows are aligned on the epoch): a
    /// server whose clock stands here (`FORECAST_TEST_CLOCK`) counts a
    /// burst in one window, however long the burst takes.
    pub const WINDOW_START: &'static str = "2026-01-05T00:00:01Z";

    /// The router in process over `db`, configured by `FORECAST_*` pairs
    /// as [`Server::start_with`] is by environment variables.
    pub async fn app_with(db: PathBuf, env: &[(&str, &str)]) -> Server {
        let config = config(sqlite_url(&db), env);
        let clock = config.clock();
        Server::app_on(db, config, clock).await
    }

    /// [`Server::app_with`] on a manual clock, standing at
    /// [`Server::WINDOW_START`], that the test moves.
    pub async fn app_with_clock(db: PathBuf, env: &[(&str, &str)]) -> (Server, Arc<ManualClock>) {
        let at = chrono::DateTime::parse_from_rfc3339(Server::WINDOW_START).expect("an instant");
        let clock = ManualClock::at(at.to_utc());
        let config = config(sqlite_url(&db), env);
        (Server::app_on(db, config, clock.clone()).await, clock)
    }

    async fn app_on(db: PathBuf, config: Config, clock: SharedClock) -> Server {
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
                let app = forecast::app::build_with_clock(&config, bound, clock)
                    .await
                    .expect("build the app");
                // Detached: they stop with the runtime.
                drop(forecast::app::start_background(&app, &config));
                forecast::http::router(app.state)
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

/// The configuration `forecast serve` would build from the harness's
/// variables ([`super::SERVER_ENV`]), then those of the in-process harness,
/// then `env`, each pair as the variable of that name, through the same
/// parser ([`Config::from_pairs`]): the same defaults, rules and errors. An
/// unknown name fails loudly rather than being ignored.
fn config(url: String, env: &[(&str, &str)]) -> Config {
    let mut pairs: Vec<(&str, &str)> =
        vec![("FORECAST_ADDR", "127.0.0.1:0"), ("DATABASE_URL", &url)];
    pairs.extend_from_slice(super::SERVER_ENV);
    pairs.extend_from_slice(&[
        // Many servers share the test process.
        ("FORECAST_SIGNAL_CACHE_MB", "512"),
        ("FORECAST_LOGIN_CONCURRENCY", "2"),
    ]);
    // The matcher's reference data when `make reference` has put it in the
    // repository (the tests run from `host/`, where the default misses it).
    let reference = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/reference");
    if std::path::Path::new(reference)
        .join("index-membership.csv")
        .exists()
    {
        pairs.push(("FORECAST_REFERENCE_DIR", reference));
    }
    pairs.extend_from_slice(env);
    Config::from_pairs(&pairs).unwrap_or_else(|e| panic!("the in-process configuration: {e}"))
}
