//! Quotas: fixed, UTC-aligned counting windows per subject (API quotas,
//! login attempts). The admission rule is written here once; the backends
//! differ only in where the counters live and how they are locked.

use async_trait::async_trait;

use crate::{Generations, StoreResult};

/// One fixed, UTC-aligned counting window (e.g. a quota minute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Name of the window (`minute`, `day`, `login`), part of the row key.
    pub kind: &'static str,
    /// Length in seconds; windows start at multiples of it since the epoch.
    pub seconds: i64,
    /// Units allowed per window.
    pub limit: u32,
}

/// A window's state after a [`QuotaStore::consume`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowUsage {
    /// Which window.
    pub kind: &'static str,
    /// Units allowed.
    pub limit: u32,
    /// Units used, including this request when admitted.
    pub used: u32,
    /// Unix seconds when the window ends.
    pub reset: i64,
}

impl WindowUsage {
    /// Units left in the window.
    pub fn remaining(&self) -> u32 {
        self.limit.saturating_sub(self.used)
    }
}

/// The answer of [`QuotaStore::consume`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consumption {
    /// True when `cost` fit in every window and was counted.
    pub admitted: bool,
    /// One entry per requested window, in order.
    pub windows: Vec<WindowUsage>,
}

/// Counting windows.
#[async_trait]
pub trait QuotaStore: Send + Sync {
    /// Counts `cost` units for `subject` in every window, only if it fits in
    /// all of them — one atomic step, across processes sharing the store.
    /// Rejected attempts count nothing.
    async fn consume(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<Consumption>;

    /// [`QuotaStore::consume`], and the store's generation counters when
    /// the backend read them *after* this count was made durable, in the
    /// same step (SQLite's group commit reads them with every batch);
    /// `None` otherwise, or for a rejection or a look (nothing committed).
    async fn consume_checked(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<(Consumption, Option<Generations>)> {
        Ok((self.consume(subject, windows, cost, now).await?, None))
    }

    /// Takes back `cost` units an admitted [`QuotaStore::consume`] counted
    /// at `now` in every window still holding `now` (never below zero): a
    /// request charged before its key was found stale is answered as if it
    /// had not been counted.
    async fn refund(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<()>;

    /// Adds `cost` units to `subject`'s counters of `windows`, ignoring
    /// their limits (bookkeeping, such as the units spent by route): a
    /// counter of an earlier window starts again from `cost`. A backend may
    /// make it durable with its next write.
    async fn tally(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<()>;

    /// `subject`'s counters whose kind starts with `prefix`, as (kind,
    /// window start, used), in kind order; a counter of an ended window is
    /// listed as stored (the caller compares its start).
    async fn counters_of(
        &self,
        subject: &str,
        prefix: &str,
    ) -> StoreResult<Vec<(String, i64, i64)>>;

    /// Forgets every counter of `subject` (a successful sign-in resets its
    /// failure counts).
    async fn reset(&self, subject: &str) -> StoreResult<()>;

    /// Deletes counters whose window has ended at `now` (login counters
    /// after [`LOGIN_RETENTION`], the others after [`RETENTION`]), so
    /// attempts under ever new names cannot grow the table for ever; how
    /// many were deleted.
    async fn purge_counters(&self, now: i64) -> StoreResult<u64>;
}

/// How long a login counter is kept after its window started: longer than
/// any login window.
pub const LOGIN_RETENTION: i64 = 3_600;
/// How long any other counter is kept after its window started: longer
/// than the longest window (a day).
pub const RETENTION: i64 = 2 * 86_400;

/// Whether a counter of `kind` whose window started at `start` is past
/// its retention at `now` (the rule of [`QuotaStore::purge_counters`]).
pub(crate) fn expired(kind: &str, start: i64, now: i64) -> bool {
    if kind.starts_with("login") {
        start < now - LOGIN_RETENTION
    } else {
        start < now - RETENTION
    }
}

/// Start (Unix seconds) of the window of length `seconds` holding `now`.
pub(crate) fn window_start(now: i64, seconds: i64) -> i64 {
    now - now.rem_euclid(seconds)
}

/// The admission step both backends share, given each window's stored
/// counter `(window_start, used)` (`None` when the subject has none yet):
/// the usage of every window at `now`, with `cost` added to all of them
/// when it fits in all of them. A stored counter of an earlier window
/// counts as zero; a stored count outside `u32` saturates (it can only
/// come from a hand-edited row, and saturating keeps the subject limited).
pub(crate) fn admit(
    windows: &[Window],
    stored: impl Fn(&Window) -> Option<(i64, i64)>,
    cost: u32,
    now: i64,
) -> Consumption {
    let mut usage: Vec<WindowUsage> = windows
        .iter()
        .map(|w| {
            let start = window_start(now, w.seconds);
            let used = match stored(w) {
                Some((s, used)) if s == start => saturating_u32(used),
                _ => 0,
            };
            WindowUsage {
                kind: w.kind,
                limit: w.limit,
                used,
                reset: start + w.seconds,
            }
        })
        .collect();
    let admitted = usage
        .iter()
        .all(|u| u64::from(u.used) + u64::from(cost) <= u64::from(u.limit));
    if admitted {
        for u in &mut usage {
            // Cannot overflow: `used + cost <= limit <= u32::MAX` above.
            u.used += cost;
        }
    }
    Consumption {
        admitted,
        windows: usage,
    }
}

/// `v` clamped into `u32`.
fn saturating_u32(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}
