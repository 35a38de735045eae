//! Admission against a user's quota windows, and the throttle of wrong
//! admin tokens: the policy the request guards apply, over the store's
//! atomic counters (DESIGN §8).
//!
//! A charge is one atomic `consume` over the user's minute and day
//! windows; a look (cost 0) reads them for the rate headers without
//! counting; a refund takes back a charge made for a request that was then
//! refused (a key found stale after the charge).

use std::sync::Arc;

use forecast_api::usage::{RouteUsage, UsageResponse, UsageWindow};
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

    /// Records that `route` cost `user` `cost` units at `now` (what the
    /// request was finally charged, after any units given back), for
    /// [`QuotaService::usage`]. Bookkeeping: it never refuses.
    pub async fn tally(&self, user: &User, route: &str, cost: u32, now: i64) -> Result<(), Error> {
        if cost == 0 {
            return Ok(());
        }
        let windows = route_windows(route);
        Ok(self.store.tally(&user.id, &windows, cost, now).await?)
    }

    /// What `user` has spent this minute and today at `now`, in all and
    /// by route.
    pub async fn usage(&self, user: &User, now: i64) -> Result<UsageResponse, Error> {
        let windows = self.look(user, now).await?;
        let window = |i: usize| {
            let w: &WindowUsage = &windows[i];
            UsageWindow {
                limit: w.limit,
                used: w.used,
                remaining: w.remaining(),
                reset: w.reset,
            }
        };
        let counters = self.store.counters_of(&user.id, ROUTE_PREFIX).await?;
        let mut routes: std::collections::BTreeMap<String, RouteUsage> = Default::default();
        for (kind, start, used) in counters {
            let Some((seconds, route)) = parse_route_kind(&kind) else {
                continue;
            };
            if start != now - now.rem_euclid(seconds) || used <= 0 {
                continue;
            }
            let used = u32::try_from(used).unwrap_or(u32::MAX);
            let entry = routes.entry(route.to_string()).or_insert(RouteUsage {
                route: route.to_string(),
                minute: 0,
                day: 0,
            });
            match seconds {
                60 => entry.minute = used,
                _ => entry.day = used,
            }
        }
        let mut routes: Vec<RouteUsage> = routes.into_values().filter(|r| r.day > 0).collect();
        routes.sort_by(|a, b| b.day.cmp(&a.day).then_with(|| a.route.cmp(&b.route)));
        Ok(UsageResponse {
            minute: window(0),
            day: window(1),
            routes,
        })
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

/// The prefix of the by-route counters' kinds.
const ROUTE_PREFIX: &str = "route-";

/// Distinct routes whose counters this process names (the routes are the
/// service's own, a few dozen); past it, the rest share one name.
const MAX_ROUTES: usize = 1_024;

/// The minute and day counters of `route` (`GET /api/ranking`): unlimited
/// windows, so a tally never refuses.
fn route_windows(route: &str) -> [Window; 2] {
    [
        Window {
            kind: intern(format!("{ROUTE_PREFIX}minute {route}")).unwrap_or("route-minute (other)"),
            seconds: 60,
            limit: u32::MAX,
        },
        Window {
            kind: intern(format!("{ROUTE_PREFIX}day {route}")).unwrap_or("route-day (other)"),
            seconds: 86_400,
            limit: u32::MAX,
        },
    ]
}

/// A counter kind of [`route_windows`] back to its window length and route.
fn parse_route_kind(kind: &str) -> Option<(i64, &str)> {
    let rest = kind.strip_prefix(ROUTE_PREFIX)?;
    if let Some(route) = rest.strip_prefix("minute ") {
        Some((60, route))
    } else {
        rest.strip_prefix("day ").map(|route| (86_400, route))
    }
}

/// `name` as a `&'static str` (counter kinds are), each distinct name
/// leaked once; `None` past [`MAX_ROUTES`] of them.
fn intern(name: String) -> Option<&'static str> {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .expect("route names poisoned");
    if let Some(known) = names.get(name.as_str()) {
        return Some(known);
    }
    if names.len() >= MAX_ROUTES {
        return None;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.insert(leaked);
    Some(leaked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_kinds_round_trip() {
        let [minute, day] = route_windows("GET /api/ranking");
        assert_eq!(minute.kind, "route-minute GET /api/ranking");
        assert_eq!(
            parse_route_kind(minute.kind),
            Some((60, "GET /api/ranking"))
        );
        assert_eq!(
            parse_route_kind(day.kind),
            Some((86_400, "GET /api/ranking"))
        );
        assert_eq!(parse_route_kind("minute"), None);
        // Interned once: the same name is the same pointer.
        let again = route_windows("GET /api/ranking")[0].kind;
        assert!(std::ptr::eq(minute.kind, again));
    }
}
