//! One server-wide budget for heavy work (issue 25): live analyses and
//! verdicts, backtests and plugin compilation each take a [`Ticket`]
//! before they start, and give it back when their work has stopped.
//!
//! The budget has a concurrency bound (`slots`) and a memory bound
//! (`bytes`, against each job's estimate of what it will hold). A job
//! that fits runs at once; one that does not waits in a bounded queue for
//! at most `wait`; a full queue, a client past its share of the queue or a
//! passed wait is refused with [`Error::Busy`] (503 + `Retry-After`)
//! before any work, and the HTTP guard gives the request's quota charge
//! back. Fairness: when a ticket is returned, the next one goes to the
//! waiting job whose client has the fewest jobs running (first come among
//! equals), so one client's burst cannot keep another's job waiting behind
//! it; and a client may hold at most `per_client_queue` waiting jobs.
//!
//! A job estimated above the whole memory budget still runs, alone: it
//! waits until nothing else holds any of the budget.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::error::Error;

/// The CPU priority (nice value) of heavy work's threads: below the async
/// workers that answer every other request, so a server busy with heavy
/// work still answers health checks, sign-ins and cached reads promptly.
/// Threads a heavy job starts (a backtest's signal workers) inherit it.
pub const HEAVY_NICE: i32 = 10;

/// Why heavy work's thread gave no answer.
#[derive(Debug)]
pub struct HeavyFailed(String);

impl std::fmt::Display for HeavyFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Runs `f` on a thread of its own at [`HEAVY_NICE`] (the budget bounds how
/// many run), as `tokio::task::spawn_blocking` would on a shared one.
pub fn spawn_heavy<F, R>(f: F) -> impl std::future::Future<Output = Result<R, HeavyFailed>>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let (tx, rx) = oneshot::channel();
    let started = std::thread::Builder::new()
        .name("heavy-work".into())
        .spawn(move || {
            lower_priority();
            let _ = tx.send(f());
        });
    async move {
        started.map_err(|e| HeavyFailed(format!("could not start a thread: {e}")))?;
        rx.await
            .map_err(|_| HeavyFailed("the work panicked".into()))
    }
}

/// Lowers the calling thread's CPU priority to [`HEAVY_NICE`] (Linux: nice
/// values are per thread). Best effort: where it cannot, the work runs at
/// the normal priority.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority takes plain integers and touches no memory of ours;
    // on Linux, PRIO_PROCESS with 0 names the calling thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, HEAVY_NICE);
    }
}

/// What a live analysis or verdict of `rows` price rows is estimated to
/// hold: the engine instance's linear memory (its walk-forward state and
/// the answer it builds) and the host's copy of the answer and its JSON.
/// Calibrated in docs/BENCHMARKS.md ("Heavy-work estimates").
pub fn analysis_bytes(rows: usize) -> u64 {
    ANALYSIS_BASE + rows as u64 * ANALYSIS_PER_ROW
}

/// What aggregating the stored grade histories of `assets` assets is
/// estimated to hold: each history's bytes (about 3 KB in the demo
/// universe), its decoded rows and their points, with room to spare.
pub fn track_record_bytes(assets: usize) -> u64 {
    (16 << 20) + assets as u64 * (32 << 10)
}

/// What a backtest over `assets` assets is estimated to hold: the
/// histories and signals it reads (cached ones included, as they are held
/// twice while the cache may evict them), two engine instances and the
/// accounting. Calibrated in docs/BENCHMARKS.md ("Heavy-work estimates").
pub fn backtest_bytes(assets: usize) -> u64 {
    BACKTEST_BASE + assets as u64 * BACKTEST_PER_ASSET
}

/// What compiling and self-testing a component of `wasm_bytes` is
/// estimated to hold (the compiler's working set grows with the code).
pub fn compile_bytes(wasm_bytes: usize) -> u64 {
    COMPILE_BASE + wasm_bytes as u64 * COMPILE_PER_BYTE
}

const ANALYSIS_BASE: u64 = 8 << 20;
const ANALYSIS_PER_ROW: u64 = 1_024;
const BACKTEST_BASE: u64 = 64 << 20;
const BACKTEST_PER_ASSET: u64 = 256 << 10;
const COMPILE_BASE: u64 = 64 << 20;
const COMPILE_PER_BYTE: u64 = 32;

/// The budget's bounds (`FORECAST_HEAVY_SLOTS`, `FORECAST_HEAVY_MEMORY_MB`,
/// `FORECAST_HEAVY_QUEUE`, `FORECAST_HEAVY_QUEUE_PER_ACCOUNT`, `FORECAST_HEAVY_WAIT_MS`).
#[derive(Debug, Clone, Copy)]
pub struct BudgetLimits {
    /// Heavy jobs running at once.
    pub slots: usize,
    /// Bytes the running jobs may hold together, by their estimates.
    pub bytes: u64,
    /// Jobs waiting at once (more are refused at once).
    pub queue: usize,
    /// Jobs one client may have waiting at once.
    pub per_client_queue: usize,
    /// How long a job waits for its turn (then refused).
    pub wait: Duration,
}

/// What kind of heavy work a ticket is for (metrics and messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// An analysis computed live by the segmentation engine.
    Analysis,
    /// A verdict computed live by the engine and the scorer.
    Verdict,
    /// A backtest: histories, signals and the run.
    Backtest,
    /// A plugin component compiled and self-tested.
    Compile,
    /// A grade history computed live, or the universe record aggregated.
    TrackRecord,
}

impl Work {
    fn as_str(self) -> &'static str {
        match self {
            Work::Analysis => "analysis",
            Work::Verdict => "verdict",
            Work::Backtest => "backtest",
            Work::Compile => "compile",
            Work::TrackRecord => "track_record",
        }
    }
}

/// What the budget holds right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Jobs running.
    pub running: usize,
    /// Bytes the running jobs hold, by their estimates.
    pub bytes: u64,
    /// Jobs waiting.
    pub waiting: usize,
}

struct Waiter {
    id: u64,
    client: Arc<str>,
    bytes: u64,
    grant: oneshot::Sender<()>,
}

#[derive(Default)]
struct State {
    running: usize,
    bytes: u64,
    per_client: HashMap<Arc<str>, usize>,
    waiting: VecDeque<Waiter>,
    next_id: u64,
    /// Smoothed seconds a job holds its ticket, for `Retry-After`.
    typical_seconds: f64,
}

struct Inner {
    limits: BudgetLimits,
    state: Mutex<State>,
}

/// The server's budget for heavy work; cheap to clone.
#[derive(Clone)]
pub struct WorkBudget(Arc<Inner>);

/// A job's share of the budget, returned when dropped.
pub struct Ticket {
    budget: Arc<Inner>,
    client: Arc<str>,
    bytes: u64,
    since: Instant,
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ticket")
            .field("client", &self.client)
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self.budget.state.lock().expect("budget poisoned");
        state.running -= 1;
        state.bytes -= self.bytes;
        if let Some(n) = state.per_client.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                state.per_client.remove(&self.client);
            }
        }
        let held = self.since.elapsed().as_secs_f64();
        state.typical_seconds = if state.typical_seconds == 0.0 {
            held
        } else {
            0.8 * state.typical_seconds + 0.2 * held
        };
        self.budget.dispatch(&mut state);
        self.budget.publish(&state);
    }
}

impl Inner {
    /// Whether a job of `bytes` fits beside what runs now.
    fn fits(&self, state: &State, bytes: u64) -> bool {
        state.running < self.limits.slots
            && (state.bytes + bytes <= self.limits.bytes || state.running == 0)
    }

    /// Books a ticket's share (the caller builds the [`Ticket`]).
    fn book(&self, state: &mut State, client: &Arc<str>, bytes: u64) {
        state.running += 1;
        state.bytes += bytes;
        *state.per_client.entry(client.clone()).or_default() += 1;
    }

    /// Hands free shares to waiting jobs: each time to the one whose client
    /// runs the fewest jobs (the earliest among equals) that fits.
    fn dispatch(&self, state: &mut State) {
        loop {
            let pick = state
                .waiting
                .iter()
                .enumerate()
                .filter(|(_, w)| self.fits(state, w.bytes))
                .min_by_key(|(i, w)| (state.per_client.get(&w.client).copied().unwrap_or(0), *i))
                .map(|(i, _)| i);
            let Some(i) = pick else { return };
            let w = state.waiting.remove(i).expect("picked");
            // A receiver that is gone has stopped waiting: its share is not
            // booked and the loop goes on.
            if w.grant.send(()).is_ok() {
                self.book(state, &w.client, w.bytes);
            }
        }
    }

    fn publish(&self, state: &State) {
        metrics::gauge!("forecast_heavy_work_running").set(state.running as f64);
        metrics::gauge!("forecast_heavy_work_bytes").set(state.bytes as f64);
        metrics::gauge!("forecast_heavy_work_waiting").set(state.waiting.len() as f64);
    }

    /// The refusal: what is busy, that nothing was charged, when to retry.
    fn busy(&self, state: &State, work: Work, why: &str) -> Error {
        metrics::counter!("forecast_heavy_work_refused_total", "work" => work.as_str())
            .increment(1);
        // Roughly when a share frees up for the jobs ahead: the typical
        // hold times the queue's depth per slot, 1 s to 2 minutes.
        let depth = (state.waiting.len() / self.limits.slots.max(1) + 1) as f64;
        let typical = if state.typical_seconds > 0.0 {
            state.typical_seconds
        } else {
            1.0
        };
        let retry_after = (typical * depth).ceil().clamp(1.0, 120.0) as u64;
        Error::Busy {
            detail: format!(
                "the server is busy with heavy work ({why}; {} of {} jobs running, {} MiB of its \
                 {} MiB work budget in use, {} waiting); this {} was not started and nothing \
                 was charged: retry in {retry_after} s",
                state.running,
                self.limits.slots,
                state.bytes >> 20,
                self.limits.bytes >> 20,
                state.waiting.len(),
                work.as_str(),
            ),
            retry_after,
        }
    }
}

impl WorkBudget {
    /// A budget within `limits` (a bound of 0 is taken as 1).
    pub fn new(limits: BudgetLimits) -> Self {
        let limits = BudgetLimits {
            slots: limits.slots.max(1),
            bytes: limits.bytes.max(1),
            queue: limits.queue,
            per_client_queue: limits.per_client_queue.max(1),
            wait: limits.wait,
        };
        WorkBudget(Arc::new(Inner {
            limits,
            state: Mutex::new(State::default()),
        }))
    }

    /// The bounds in force.
    pub fn limits(&self) -> BudgetLimits {
        self.0.limits
    }

    /// What the budget holds now.
    pub fn usage(&self) -> Usage {
        let state = self.0.state.lock().expect("budget poisoned");
        Usage {
            running: state.running,
            bytes: state.bytes,
            waiting: state.waiting.len(),
        }
    }

    /// A ticket for `work` of `client` estimated at `bytes`: at once when it
    /// fits and nobody waits, else after waiting its turn for at most the
    /// budget's `wait`; or [`Error::Busy`] before any work.
    pub async fn admit(&self, client: &str, work: Work, bytes: u64) -> Result<Ticket, Error> {
        let inner = &self.0;
        let client: Arc<str> = Arc::from(client);
        let (id, granted) = {
            let mut state = inner.state.lock().expect("budget poisoned");
            if state.waiting.is_empty() && inner.fits(&state, bytes) {
                inner.book(&mut state, &client, bytes);
                inner.publish(&state);
                return Ok(self.ticket(client, bytes));
            }
            if state.waiting.len() >= inner.limits.queue {
                return Err(inner.busy(&state, work, "its queue is full"));
            }
            let mine = state.waiting.iter().filter(|w| w.client == client).count();
            if mine >= inner.limits.per_client_queue {
                return Err(inner.busy(
                    &state,
                    work,
                    &format!(
                        "this account already has {mine} jobs waiting, the most one account may"
                    ),
                ));
            }
            let (grant, granted) = oneshot::channel();
            let id = state.next_id;
            state.next_id += 1;
            state.waiting.push_back(Waiter {
                id,
                client: client.clone(),
                bytes,
                grant,
            });
            // A job that fits may run ahead of one that does not.
            inner.dispatch(&mut state);
            inner.publish(&state);
            (id, granted)
        };
        // Dropped while waiting (the client went away): the guard below
        // takes the job out of the queue, or gives back a share granted
        // meanwhile.
        let mut waiting = Waiting {
            budget: self,
            id,
            client: client.clone(),
            bytes,
            granted,
            done: false,
        };
        match tokio::time::timeout(inner.limits.wait, &mut waiting.granted).await {
            Ok(Ok(())) => {
                waiting.done = true;
                Ok(self.ticket(client, bytes))
            }
            Ok(Err(_)) => {
                // The sender went without a grant: only a removal does that,
                // and only this job removes itself.
                waiting.done = true;
                Err(Error::Internal("a heavy-work grant was lost".into()))
            }
            Err(_) => {
                // Timed out; granted in the meantime after all?
                let mut state = inner.state.lock().expect("budget poisoned");
                if let Some(i) = state.waiting.iter().position(|w| w.id == id) {
                    state.waiting.remove(i);
                    waiting.done = true;
                    inner.publish(&state);
                    let why = format!(
                        "it waited {} ms for its turn",
                        inner.limits.wait.as_millis()
                    );
                    return Err(inner.busy(&state, work, &why));
                }
                drop(state);
                waiting.done = true;
                Ok(self.ticket(client, bytes))
            }
        }
    }

    fn ticket(&self, client: Arc<str>, bytes: u64) -> Ticket {
        Ticket {
            budget: self.0.clone(),
            client,
            bytes,
            since: Instant::now(),
        }
    }
}

/// A job in the queue whose future may be dropped.
struct Waiting<'a> {
    budget: &'a WorkBudget,
    id: u64,
    client: Arc<str>,
    bytes: u64,
    granted: oneshot::Receiver<()>,
    done: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let inner = &self.budget.0;
        let mut state = inner.state.lock().expect("budget poisoned");
        if let Some(i) = state.waiting.iter().position(|w| w.id == self.id) {
            state.waiting.remove(i);
            inner.publish(&state);
            return;
        }
        drop(state);
        // Granted before the drop: the share was booked; give it back.
        drop(self.budget.ticket(self.client.clone(), self.bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(slots: usize, mib: u64, queue: usize, per_client: usize, wait_ms: u64) -> WorkBudget {
        WorkBudget::new(BudgetLimits {
            slots,
            bytes: mib << 20,
            queue,
            per_client_queue: per_client,
            wait: Duration::from_millis(wait_ms),
        })
    }

    fn busy_detail(e: Error) -> String {
        match e {
            Error::Busy {
                detail,
                retry_after,
            } => {
                assert!(retry_after >= 1);
                detail
            }
            other => panic!("not busy: {other:?}"),
        }
    }

    #[tokio::test]
    async fn heavy_work_runs_below_the_normal_priority_and_reports_a_panic() {
        let nice = spawn_heavy(|| {
            // SAFETY: getpriority reads the calling thread's nice value.
            unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
        })
        .await
        .unwrap();
        assert_eq!(nice, HEAVY_NICE);
        let failed = spawn_heavy(|| -> u8 { panic!("boom") }).await.unwrap_err();
        assert_eq!(failed.to_string(), "the work panicked");
    }

    #[tokio::test]
    async fn jobs_past_the_slots_wait_and_run_when_one_ends() {
        let b = budget(2, 1024, 8, 8, 5_000);
        let t1 = b.admit("a", Work::Analysis, 1).await.unwrap();
        let _t2 = b.admit("b", Work::Analysis, 1).await.unwrap();
        let b2 = b.clone();
        let third = tokio::spawn(async move { b2.admit("c", Work::Analysis, 1).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(b.usage().waiting, 1);
        assert!(!third.is_finished());
        drop(t1);
        let t3 = third.await.unwrap().unwrap();
        assert_eq!(
            b.usage(),
            Usage {
                running: 2,
                bytes: 2,
                waiting: 0
            }
        );
        drop(t3);
        assert_eq!(b.usage().running, 1);
    }

    #[tokio::test]
    async fn memory_bounds_what_runs_together_and_a_huge_job_runs_alone() {
        let b = budget(8, 100, 8, 8, 5_000);
        let big = b.admit("a", Work::Backtest, 80 << 20).await.unwrap();
        let b2 = b.clone();
        let second = tokio::spawn(async move { b2.admit("b", Work::Backtest, 30 << 20).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!second.is_finished(), "80 + 30 MiB is over 100 MiB");
        // A small job fits beside the big one and runs ahead of the waiting one.
        let small = b.admit("c", Work::Analysis, 10 << 20).await.unwrap();
        drop(big);
        let t = second.await.unwrap().unwrap();
        drop((t, small));
        let huge = b.admit("a", Work::Backtest, 500 << 20).await.unwrap();
        assert_eq!(b.usage().bytes, 500 << 20, "over the budget, alone");
        drop(huge);
        assert_eq!(
            b.usage(),
            Usage {
                running: 0,
                bytes: 0,
                waiting: 0
            }
        );
    }

    #[tokio::test]
    async fn a_full_queue_and_a_passed_wait_are_refused_with_the_reason() {
        let b = budget(1, 1024, 1, 1, 100);
        let _t = b.admit("a", Work::Backtest, 1).await.unwrap();
        let b2 = b.clone();
        let waiting = tokio::spawn(async move { b2.admit("b", Work::Backtest, 1).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let full = busy_detail(b.admit("c", Work::Analysis, 1).await.unwrap_err());
        assert!(full.contains("queue is full"), "{full}");
        assert!(full.contains("nothing was charged"), "{full}");
        let waited = busy_detail(waiting.await.unwrap().unwrap_err());
        assert!(waited.contains("waited 100 ms"), "{waited}");
        assert_eq!(b.usage().waiting, 0, "a refused job leaves the queue");
    }

    #[tokio::test]
    async fn one_client_may_hold_only_its_share_of_the_queue() {
        let b = budget(1, 1024, 16, 2, 5_000);
        let _t = b.admit("a", Work::Analysis, 1).await.unwrap();
        let mut queued = Vec::new();
        for _ in 0..2 {
            let b2 = b.clone();
            queued.push(tokio::spawn(async move {
                b2.admit("a", Work::Analysis, 1).await
            }));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        let third = busy_detail(b.admit("a", Work::Analysis, 1).await.unwrap_err());
        assert!(third.contains("2 jobs waiting"), "{third}");
        // Another client still gets a place in the queue.
        let b2 = b.clone();
        let other = tokio::spawn(async move { b2.admit("b", Work::Analysis, 1).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(b.usage().waiting, 3);
        drop(queued);
        drop(other);
    }

    #[tokio::test]
    async fn the_next_share_goes_to_the_client_running_the_fewest() {
        let b = budget(2, 1024, 16, 16, 5_000);
        let a1 = b.admit("a", Work::Analysis, 1).await.unwrap();
        let a2 = b.admit("a", Work::Analysis, 1).await.unwrap();
        // "a" queues first, "b" after; both wait for a slot.
        let b_a = b.clone();
        let a3 = tokio::spawn(async move { b_a.admit("a", Work::Analysis, 1).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let b_b = b.clone();
        let b1 = tokio::spawn(async move { b_b.admit("b", Work::Analysis, 1).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(a1);
        let b1 = b1.await.unwrap().unwrap();
        assert!(!a3.is_finished(), "b runs nothing, so b goes first");
        drop(a2);
        let a3 = a3.await.unwrap().unwrap();
        drop((a3, b1));
        assert_eq!(
            b.usage(),
            Usage {
                running: 0,
                bytes: 0,
                waiting: 0
            }
        );
    }

    #[tokio::test]
    async fn a_job_dropped_while_waiting_leaves_the_queue_and_holds_nothing() {
        let b = budget(1, 1024, 8, 8, 5_000);
        let t = b.admit("a", Work::Backtest, 1).await.unwrap();
        let b2 = b.clone();
        let waiting = tokio::spawn(async move { b2.admit("b", Work::Backtest, 7).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        waiting.abort();
        let _ = waiting.await;
        assert_eq!(b.usage().waiting, 0);
        drop(t);
        assert_eq!(
            b.usage(),
            Usage {
                running: 0,
                bytes: 0,
                waiting: 0
            }
        );
    }
}
