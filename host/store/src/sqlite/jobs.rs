//! SQLite [`crate::JobStore`]: the shared implementation (`crate::jobs`),
//! every read-check-write under the writer lock in a `BEGIN IMMEDIATE`
//! transaction, as grading's.

use super::{insert_pending, SqliteStore};

/// Closes a worker's claimed items, given as a JSON array of ids (SQLite
/// has no array parameters).
const CLOSE_ITEMS: &str = "UPDATE job_items SET status = $1
     WHERE run_id = $2 AND item_id IN (SELECT value FROM json_each($3))
     AND status = 'claimed' AND claimed_by = $4";

/// `ids` as the JSON array [`CLOSE_ITEMS`] unpacks.
fn json_ids(ids: &[i64]) -> String {
    format!(
        "[{}]",
        ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
    )
}

crate::jobs::impl_job_store!(
    SqliteStore,
    lock_run: None::<&str>,
    close_items: CLOSE_ITEMS,
    item_ids: json_ids
);
