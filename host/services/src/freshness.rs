//! Whether what this replica keeps in memory is still current: the store's
//! generation counters ([`forecast_store::Generations`]), read at most once
//! at a time and shared by every request waiting for a read that started
//! after it arrived.
//!
//! A request is answered from memory only with counters read *after* it
//! arrived, so any write committed before it was sent (a key revoked on
//! another replica, a run activated by the CLI) is seen by it. Concurrent
//! requests share one read, as the SQLite quota counters share one commit:
//! under load the cost is one small read per batch, not per request.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once, Weak};
use std::time::Duration;

use forecast_store::{GenerationStore, Generations};
use tokio::sync::{watch, Notify};

/// A request waits at most this for a read before it does without the
/// copies in memory (and reads the store itself).
const READ_DEADLINE: Duration = Duration::from_secs(5);

/// Pause after a failed read before the next one.
const RETRY_AFTER_FAILURE: Duration = Duration::from_millis(50);

/// The shared reader of the generation counters.
#[derive(Clone)]
pub struct Freshness {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn GenerationStore>,
    /// Number of reads started; a read's number is its epoch.
    started: AtomicU64,
    /// The latest finished read: its epoch and result (`None`: it failed).
    published: watch::Sender<(u64, Option<Generations>)>,
    wake: Arc<Notify>,
    spawn: Once,
}

impl Freshness {
    /// A reader over `store`; its task starts with the first request.
    pub fn new(store: Arc<dyn GenerationStore>) -> Self {
        Freshness {
            inner: Arc::new(Inner {
                store,
                started: AtomicU64::new(0),
                published: watch::Sender::new((0, None)),
                wake: Arc::new(Notify::new()),
                spawn: Once::new(),
            }),
        }
    }

    /// Counters read after this call began, or `None` when the store could
    /// not be read in time (the caller then reads the store itself).
    pub async fn current(&self) -> Option<Generations> {
        let inner = &self.inner;
        inner.spawn.call_once(|| {
            tokio::spawn(read_loop(Arc::downgrade(inner), inner.wake.clone()));
        });
        let mut published = inner.published.subscribe();
        // A read numbered `want` or later starts after this line: the
        // loop numbers a read before it sends it.
        let want = inner.started.load(Ordering::SeqCst) + 1;
        inner.wake.notify_one();
        let read =
            tokio::time::timeout(READ_DEADLINE, published.wait_for(|(e, _)| *e >= want)).await;
        match read {
            Ok(Ok(r)) => r.1,
            _ => None,
        }
    }
}

/// One read at a time, whenever a request waits for one, until the reader
/// is dropped.
async fn read_loop(inner: Weak<Inner>, wake: Arc<Notify>) {
    loop {
        wake.notified().await;
        // Lets the requests that are ready to run reach their wait first,
        // so one read serves them all (it is numbered after this).
        tokio::task::yield_now().await;
        let Some(inner) = inner.upgrade() else { break };
        let epoch = inner.started.fetch_add(1, Ordering::SeqCst) + 1;
        let read = inner.store.generations().await;
        if let Err(e) = &read {
            tracing::warn!(error = %e, "could not read the generation counters");
        }
        let failed = read.is_err();
        inner.published.send_replace((epoch, read.ok()));
        drop(inner);
        if failed {
            tokio::time::sleep(RETRY_AFTER_FAILURE).await;
        }
    }
}
