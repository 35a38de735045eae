//! Admission against a user's quota windows, and the throttle of wrong
//! admin tokens: the policy the request guards apply, over the store's
//! atomic counters (DESIGN §8).
//!
//! A charge is one atomic `consume` over the user's minute and day
//! windows; a look (cost 0) reads them for the rate headers without
//! counting; a refund takes back a charge made for a request that was then
//! refused (a key found stale after the charge).

use std::sync::Arc;

use forecast_domain::User;
use forecast_store::{QuotaStore, Window};

/// The windows' state and the store's counters, as the guards read them.
pub use forecast_store::{Generations, WindowUsage};

use crate::auth::{quota_windows, QuotaConfig};
use crate::error::Error;

/// Wrong admin tokens allowed per client address per minute.
const ADMIN_FAILURES: Window = Window {
    kind: "login-admin",
    seconds: 60,
    limit: 10,
};

/// The outcome of a charge.
#[derive(Debug, Clone)]
pub struct Admission {
    /// Whether the cost fit in every window and was counted.
    pub admitted: bool,
    /// One entry per window (minute, day), after the charge.
    pub windows: Vec<WindowUsage>,
    /// The store's generation counters when it read them after committing
    /// the charge (SQLite's group commit does), else `None`.
    pub generations: Option<Generations>,
}

/// Quota admission for users and the admin-token throttle for addresses.
pub struct QuotaService {
    store: Arc<dyn QuotaStore>,
    defaults: QuotaConfig,
}

impl QuotaService {
    /// Counts in `store`; users without quotas of their own get `defaults`.
    pub fn new(store: Arc<dyn QuotaStore>, defaults: QuotaConfig) -> Self {
        QuotaService { store, defaults }
    }

    /// Charges `cost` units to `user` at `now`, only if it fits in every
    /// window.
    pub async fn charge(&self, user: &User, cost: u32, now: i64) -> Result<Admission, Error> {
        let windows = quota_windows(user, self.defaults);
        let (consumed, generations) = self
            .store
            .consume_checked(&user.id, &windows, cost, now)
            .await?;
        Ok(Admission {
            admitted: consumed.admitted,
            windows: consumed.windows,
            generations,
        })
    }

    /// The user's windows at `now`, counting nothing.
    pub async fn look(&self, user: &User, now: i64) -> Result<Vec<WindowUsage>, Error> {
        let windows = quota_windows(user, self.defaults);
        Ok(self
            .store
            .consume(&user.id, &windows, 0, now)
            .await?
            .windows)
    }

    /// Takes back `cost` units charged to `user` at `now`.
    pub async fn refund(&self, user: &User, cost: u32, now: i64) -> Result<(), Error> {
        let windows = quota_windows(user, self.defaults);
        Ok(self.store.refund(&user.id, &windows, cost, now).await?)
    }

    /// Seconds until the client at `address` may try an admin token again
    /// when it has used up its wrong guesses of this minute, else `None`.
    pub async fn admin_lockout(&self, address: &str, now: i64) -> Result<Option<u64>, Error> {
        let seen = self
            .store
            .consume(&admin_subject(address), &[ADMIN_FAILURES], 0, now)
            .await?;
        Ok(seen
            .windows
            .first()
            .filter(|w| w.used >= w.limit)
            .map(|w| (w.reset - now).max(1) as u64))
    }

    /// Counts a wrong admin token from `address`.
    pub async fn admin_failure(&self, address: &str, now: i64) -> Result<(), Error> {
        self.store
            .consume(&admin_subject(address), &[ADMIN_FAILURES], 1, now)
            .await?;
        Ok(())
    }
}

/// The counter of wrong admin tokens from `address` (beside the sign-in
/// counters, so the same retention applies).
fn admin_subject(address: &str) -> String {
    format!("login-admin:{address}")
}
