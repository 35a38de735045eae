//! Who may start a backtest: a user's concurrent-backtest slots (429), the
//! wait for plugin slots (503), and the log of a request dropped before
//! its work started.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use forecast_plugins::{Permits, PluginRuntime};

use super::BacktestLimits;
use forecast_services::error::Error;

/// The backtests each user has running on this server.
#[derive(Default)]
pub(super) struct SlotTable {
    running: Mutex<HashMap<String, Vec<Instant>>>,
}

/// One of a user's concurrent-backtest slots ([`BacktestService::admit`]).
/// Free again when dropped: [`BacktestService::run`] moves it into the
/// blocking work, so it outlives a dropped request until that work stops.
///
/// [`BacktestService::admit`]: super::BacktestService::admit
/// [`BacktestService::run`]: super::BacktestService::run
pub struct UserSlot {
    table: Arc<SlotTable>,
    user: String,
    since: Instant,
}

impl std::fmt::Debug for UserSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserSlot")
            .field("user", &self.user)
            .finish()
    }
}

impl UserSlot {
    /// Whose slot it is.
    pub fn user(&self) -> &str {
        &self.user
    }
}

impl Drop for UserSlot {
    fn drop(&mut self) {
        let mut running = self.table.running.lock().expect("slot table poisoned");
        if let Some(list) = running.get_mut(&self.user) {
            if let Some(i) = list.iter().position(|t| *t == self.since) {
                list.swap_remove(i);
            }
            if list.is_empty() {
                running.remove(&self.user);
            }
        }
    }
}

/// One of `user`'s concurrent-backtest slots in `table`, or
/// [`Error::TooManyAttempts`] (429) when `per_user` are running; its
/// `retry_after` is when the oldest of them ends at the latest (its wait
/// for slots and its time limit).
pub(super) fn admit(
    table: &Arc<SlotTable>,
    limits: &BacktestLimits,
    user: &str,
) -> Result<UserSlot, Error> {
    let now = Instant::now();
    let mut running = table.running.lock().expect("slot table poisoned");
    let list = running.entry(user.to_string()).or_default();
    if list.len() >= limits.per_user {
        let longest = limits.queue_wait + limits.timeout.max(limits.research_timeout);
        let oldest = list.iter().min().copied().unwrap_or(now);
        let left = (oldest + longest).saturating_duration_since(now);
        return Err(too_many(limits.per_user, left));
    }
    list.push(now);
    Ok(UserSlot {
        table: table.clone(),
        user: user.to_string(),
        since: now,
    })
}

fn too_many(n: usize, left: Duration) -> Error {
    Error::TooManyAttempts {
        detail: format!(
            "{n} backtest{} of this account {} already running; at most {n} at once \
             (nothing was charged): retry when one has finished",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" }
        ),
        retry_after: left.as_secs_f64().ceil().max(1.0) as u64,
    }
}

/// Logs a drop before the work starts: while the run resolves its
/// universe or waits for its plugin slots (nothing has started yet; the
/// user's slot is freed with the request).
pub(super) struct WaitingForSlots {
    pub(super) since: Instant,
    pub(super) armed: bool,
    /// What the run was doing, for the log.
    pub(super) phase: &'static str,
}

impl Drop for WaitingForSlots {
    fn drop(&mut self) {
        if self.armed {
            tracing::info!(
                seconds = self.since.elapsed().as_secs_f64(),
                phase = self.phase,
                "backtest stopped: the request was dropped (before it started)"
            );
        }
    }
}

/// One plugin slot per signal worker (the run's parallelism, at most the
/// machine's), waited for at most `queue_wait` (then [`Error::Busy`], 503).
/// A drop while waiting is logged from `queued`.
pub(super) async fn plugin_slots(
    runtime: &PluginRuntime,
    queue_wait: Duration,
    queued: Instant,
) -> Result<Permits, Error> {
    let workers = runtime
        .config()
        .max_concurrency
        .min(std::thread::available_parallelism().map_or(2, |n| n.get()));
    let mut waiting = WaitingForSlots {
        since: queued,
        armed: true,
        phase: "waiting for plugin slots",
    };
    let permits = tokio::time::timeout(queue_wait, runtime.acquire_many(workers as u32))
        .await
        .map_err(|_| server_busy(queue_wait.as_secs().max(1)));
    waiting.armed = false;
    permits
}

fn server_busy(retry_after: u64) -> Error {
    Error::Busy {
        detail: format!(
            "the server is running as many backtests as it can; nothing was computed, \
             retry in {retry_after} s"
        ),
        retry_after,
    }
}
