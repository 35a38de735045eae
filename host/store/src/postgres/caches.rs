//! PostgreSQL [`crate::CacheStore`] and [`crate::SettingsStore`]: the shared
//! implementation (see `crate::caches`).

use super::PgStore;

crate::caches::impl_cache_stores!(PgStore);
