//! SQLite [`crate::CacheStore`] and [`crate::SettingsStore`]: the shared
//! implementation (see `crate::caches`).

use super::SqliteStore;

crate::caches::impl_cache_stores!(SqliteStore);
