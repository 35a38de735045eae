//! PostgreSQL [`crate::JobStore`]: the shared implementation
//! (`crate::jobs`); runs started with `ON CONFLICT DO NOTHING`, items
//! claimed with `SKIP LOCKED` and closed under a lock on their run's row,
//! as grading's.

use super::{insert_pending, PgStore};

/// Locks a run's row.
const LOCK_RUN: &str = "SELECT id FROM job_runs WHERE id = $1 FOR UPDATE";

/// Closes a worker's claimed items, given as an array of ids.
const CLOSE_ITEMS: &str = "UPDATE job_items SET status = $1
     WHERE run_id = $2 AND item_id = ANY($3) AND status = 'claimed' AND claimed_by = $4";

crate::jobs::impl_job_store!(
    PgStore,
    lock_run: Some(LOCK_RUN),
    close_items: CLOSE_ITEMS,
    item_ids: std::convert::identity
);
