//! The services: what a request asks of the host. [`error::Error`] is the
//! one error type they answer with. Each is built from the narrow handles
//! it uses (a store trait object, the active plugin set, limits) and knows
//! nothing of HTTP: no status codes, no routers.
//!
//! [`active`] is the set of active plugin versions every service answers
//! with, following the registry ([`registry`]) in the store.

pub mod active;
pub mod analysis;
pub mod assets;
pub mod auth;
pub mod budget;
pub mod embeddings;
pub mod error;
pub mod evidence;
pub mod forecast;
pub mod freshness;
pub mod gate;
pub mod health;
pub mod keys;
pub mod matcher;
pub mod models;
pub mod quota;
pub mod ranking;
pub mod registry;
pub mod served;
pub mod sessions;
pub mod track_record;
pub mod verdict;
pub mod watchlist;

/// Counts a lookup of one of the result caches (`analysis`, `verdict`) in
/// `forecast_cache_lookups_total`.
pub fn cache_lookup(cache: &'static str, hit: bool) {
    let result = if hit { "hit" } else { "miss" };
    metrics::counter!("forecast_cache_lookups_total", "cache" => cache, "result" => result)
        .increment(1);
}

/// Counts a request refused by a limiter (429) in
/// `forecast_quota_rejections_total` by reason.
pub fn rejected(reason: &'static str) {
    metrics::counter!("forecast_quota_rejections_total", "reason" => reason).increment(1);
}
