//! Time and identity helpers of the background jobs (grading, the price
//! refresh) that several replicas share through the store.

use chrono::{DateTime, NaiveTime, Utc};

/// A name for this process's workers in task claims.
pub fn worker_prefix() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    )
}

/// Seconds from `now` until the next `at` (UTC).
pub fn seconds_until(now: DateTime<Utc>, at: NaiveTime) -> u64 {
    let today = now.date_naive().and_time(at).and_utc();
    let next = if today > now {
        today
    } else {
        today + chrono::Duration::days(1)
    };
    (next - now).num_seconds().max(1) as u64
}
