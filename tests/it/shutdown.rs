//! Issue 25, item 5, end to end against the real `forecast serve`: SIGTERM
//! stops the background work at its next step, here the catalog embedding
//! of a fresh database (all of it to compute, minutes on 2 cores), and the
//! process exits 0 within the shutdown grace period; the vectors stored
//! before the signal (whole steps, each with its text's hash) are reused
//! by the next start, which sets out to compute only the rest. The bound
//! asserted is the grace period's own plus a margin, never a speed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{self, plain, Server};

/// The grace period the server is given.
const GRACE: Duration = Duration::from_secs(10);
/// Slack on top of the grace period before the test calls it missed.
const MARGIN: Duration = Duration::from_secs(5);

/// The model `make model` puts in `data/models` (`make test` fetches it);
/// tests run with `host/` as their working directory, where the server's
/// default path does not reach it.
fn model_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/models/all-minilm-l6-v2");
    assert!(
        dir.join("model.safetensors").exists(),
        "no model at {}: run `make model`",
        dir.display()
    );
    dir
}

/// Waits (up to `deadline`) for a line of `log` containing `needle`, and
/// returns it.
async fn wait_for_line(log: &Path, needle: &str, deadline: Duration) -> String {
    let started = Instant::now();
    loop {
        let text = plain(&std::fs::read_to_string(log).unwrap_or_default());
        if let Some(line) = text.lines().find(|l| l.contains(needle)) {
            return line.to_string();
        }
        assert!(
            started.elapsed() < deadline,
            "no {needle:?} in the log after {deadline:?}:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The number after `name=` in a log line.
fn field(line: &str, name: &str) -> usize {
    let key = format!("{name}=");
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key.as_str()))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_the_first_embedding_exits_within_the_grace_and_the_restart_resumes_it() {
    let model = model_dir();
    let model = model.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let grace = GRACE.as_millis().to_string();
    let env = [
        ("FORECAST_MODEL_DIR", model),
        ("FORECAST_SHUTDOWN_GRACE_MS", grace.as_str()),
    ];
    // A fresh database holds no vectors: the server computes them all.
    let first_log = dir.path().join("first.log");
    let mut s = Server::start_logging_with(common::fresh_db(), &env, &first_log);
    let started = wait_for_line(
        &first_log,
        "catalog embedding started",
        Duration::from_secs(300),
    )
    .await;
    let assets = field(&started, "assets");
    // The first quarter's progress line: the steps before it are stored.
    wait_for_line(
        &first_log,
        "embedding the catalog",
        Duration::from_secs(600),
    )
    .await;
    common::sigterm(s.process());
    let status = common::exit_within(s.process(), GRACE + MARGIN, || {
        format!(
            "still running {:?} after SIGTERM (grace {GRACE:?}):\n{}",
            GRACE + MARGIN,
            plain(&std::fs::read_to_string(&first_log).unwrap_or_default())
        )
    })
    .await;
    assert_eq!(status.code(), Some(0), "{status:?}");
    let text = plain(&std::fs::read_to_string(&first_log).unwrap());
    assert!(
        !text.contains("catalog embeddings ready"),
        "the embedding finished before the signal; nothing was stopped:\n{text}"
    );

    // The restart reuses what was stored and sets out to compute only the
    // rest: its start line counts the assets still missing (the rest of
    // the run is the first run's code again, so it is not waited for).
    let db = s.db.clone();
    drop(s);
    let second_log = dir.path().join("second.log");
    let _s = Server::start_logging_with(db, &env, &second_log);
    let restarted = wait_for_line(
        &second_log,
        "catalog embedding started",
        Duration::from_secs(300),
    )
    .await;
    let rest = field(&restarted, "assets");
    assert!(
        0 < rest && rest < assets,
        "the stored steps are reused ({assets} to embed at first, {rest} after the restart)"
    );
}
