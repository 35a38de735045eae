//! Progress of a long run (a backtest, its Monte Carlo, a sweep, a
//! walk-forward), for the client that started it: the request names an id
//! (`Progress-Id`), the run reports its phase and how far it is through it
//! here, and `GET /api/progress/{id}` reads it while the run lasts. The
//! run finds its [`Progress`] through a task-local set around the service
//! call ([`Board::watch`]), so no service signature carries it; work on a
//! blocking thread is handed the `Arc` before it leaves the task.
//!
//! Cancelling needs nothing here: a client that closes its request stops
//! the run and frees its slots (the services' drop guards).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use forecast_api::research::ProgressBody;

/// Runs tracked at once per account (a guard against a client that
/// reuses the board as storage; the per-account backtest cap is lower).
pub const PER_ACCOUNT: usize = 8;
/// Runs tracked at once on the server.
pub const TOTAL: usize = 10_000;
/// Longest id a client may name.
pub const MAX_ID: usize = 64;

/// What a run is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Waiting for the heavy-work budget or plugin slots.
    Waiting = 0,
    /// Loading histories (signals are computed beside them).
    Loading = 1,
    /// Running the strategy over the calendar (`done` of `total` rows).
    Running = 2,
    /// Running combinations (`done` of `total`).
    Combinations = 3,
    /// Simulating paths of a Monte Carlo.
    Simulating = 4,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Waiting => "waiting",
            Phase::Loading => "loading",
            Phase::Running => "running",
            Phase::Combinations => "combinations",
            Phase::Simulating => "simulating",
        }
    }

    fn of(v: u8) -> Phase {
        match v {
            1 => Phase::Loading,
            2 => Phase::Running,
            3 => Phase::Combinations,
            4 => Phase::Simulating,
            _ => Phase::Waiting,
        }
    }
}

/// One run's progress: lock-free, written by the run, read by polls.
#[derive(Debug)]
pub struct Progress {
    phase: AtomicU8,
    done: AtomicU64,
    total: AtomicU64,
    started: Instant,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            phase: AtomicU8::new(Phase::Waiting as u8),
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
            started: Instant::now(),
        }
    }
}

impl Progress {
    /// Enters `phase`, `total` steps long (0: not counted).
    pub fn enter(&self, phase: Phase, total: u64) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    /// One more step, if the run is in `phase`.
    pub fn step_in(&self, phase: Phase) {
        if self.phase.load(Ordering::Relaxed) == phase as u8 {
            self.step();
        }
    }

    /// One more step done (never past `total` when it is counted).
    pub fn step(&self) {
        let total = self.total.load(Ordering::Relaxed);
        let _ = self
            .done
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |d| {
                (total == 0 || d < total).then_some(d + 1)
            });
    }

    /// What a poll answers.
    pub fn body(&self) -> ProgressBody {
        let done = self.done.load(Ordering::Relaxed);
        let total = self.total.load(Ordering::Relaxed);
        ProgressBody {
            phase: Phase::of(self.phase.load(Ordering::Relaxed))
                .name()
                .to_string(),
            done,
            total,
            fraction: (total > 0).then(|| done as f64 / total as f64),
            elapsed_ms: self.started.elapsed().as_millis() as u64,
        }
    }
}

tokio::task_local! {
    static CURRENT: Arc<Progress>;
}

/// The progress of the run this task serves, if its client asked for it.
pub fn current() -> Option<Arc<Progress>> {
    CURRENT.try_with(Arc::clone).ok()
}

/// Enters `phase` on the current run's progress, if any.
pub fn enter(phase: Phase, total: u64) {
    if let Some(p) = current() {
        p.enter(phase, total);
    }
}

/// One more step on the current run's progress, if any, when it is in
/// `phase`.
pub fn step_in(phase: Phase) {
    let _ = CURRENT.try_with(|p| p.step_in(phase));
}

/// Whether `id` is one a client may name: 1 to [`MAX_ID`] ASCII letters,
/// digits, `-` and `_`.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

type Key = (String, String);

/// The runs being tracked, by account and id.
#[derive(Default)]
pub struct Board(Mutex<HashMap<Key, Arc<Progress>>>);

impl Board {
    /// Runs `work` with a progress under `(account, id)`, readable by
    /// [`Board::get`] until it ends (or is dropped). Untracked when the
    /// account or the server holds its most, or the id is in use.
    pub async fn watch<T>(
        &self,
        account: &str,
        id: Option<String>,
        work: impl Future<Output = T>,
    ) -> T {
        let Some(id) = id else { return work.await };
        let key = (account.to_string(), id);
        let progress = Arc::new(Progress::default());
        let tracked = {
            let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
            let mine = map.keys().filter(|(a, _)| a == account).count();
            let free = mine < PER_ACCOUNT && map.len() < TOTAL && !map.contains_key(&key);
            if free {
                map.insert(key.clone(), progress.clone());
            }
            free
        };
        let _remove = tracked.then(|| Remove(self, key));
        CURRENT.scope(progress, work).await
    }

    /// The progress of `account`'s run named `id`, while it lasts.
    pub fn get(&self, account: &str, id: &str) -> Option<ProgressBody> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get(&(account.to_string(), id.to_string()))
            .map(|p| p.body())
    }
}

/// Takes a run's entry off the board when the run ends or is dropped.
struct Remove<'a>(&'a Board, Key);

impl Drop for Remove<'_> {
    fn drop(&mut self) {
        let mut map = self.0 .0.lock().unwrap_or_else(|e| e.into_inner());
        map.remove(&self.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_run_is_readable_while_it_lasts_and_gone_after() {
        let board = Board::default();
        let seen = board
            .watch("u1", Some("abc".into()), async {
                enter(Phase::Running, 4);
                step_in(Phase::Running);
                step_in(Phase::Running);
                step_in(Phase::Loading);
                (board.get("u1", "abc"), board.get("u2", "abc"))
            })
            .await;
        let (mine, theirs) = seen;
        let mine = mine.expect("tracked while running");
        assert_eq!(
            (mine.phase.as_str(), mine.done, mine.total),
            ("running", 2, 4)
        );
        assert_eq!(mine.fraction, Some(0.5));
        assert!(theirs.is_none(), "another account cannot read it");
        assert!(board.get("u1", "abc").is_none(), "gone when the run ends");
    }

    #[test]
    fn steps_stop_at_the_total_and_ids_are_bounded() {
        let p = Progress::default();
        p.enter(Phase::Loading, 2);
        for _ in 0..5 {
            p.step();
        }
        assert_eq!(p.body().done, 2);
        assert!(valid_id("run-1_a"));
        assert!(!valid_id(""));
        assert!(!valid_id("a b"));
        assert!(!valid_id(&"x".repeat(MAX_ID + 1)));
    }

    #[tokio::test]
    async fn an_account_holds_at_most_its_share() {
        let board = Board::default();
        let ids: Vec<String> = (0..PER_ACCOUNT + 1).map(|i| format!("r{i}")).collect();
        // Nested runs of one account: the last one is past its share.
        fn nest<'a>(
            board: &'a Board,
            ids: &'a [String],
        ) -> std::pin::Pin<Box<dyn Future<Output = usize> + 'a>> {
            Box::pin(async move {
                match ids.split_first() {
                    None => (0..PER_ACCOUNT + 1)
                        .filter(|i| board.get("u", &format!("r{i}")).is_some())
                        .count(),
                    Some((id, rest)) => board.watch("u", Some(id.clone()), nest(board, rest)).await,
                }
            })
        }
        assert_eq!(nest(&board, &ids).await, PER_ACCOUNT);
    }
}
