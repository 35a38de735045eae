//! SQLite [`crate::PluginRegistry`]: the shared implementation
//! (`crate::registry`); changes that bump the generation run under the
//! writer lock in `BEGIN IMMEDIATE` transactions, like the rest of the
//! backend's read-check-write steps.

use sqlx::Sqlite;

use super::SqliteStore;

/// The slot's two newest live activations, oldest first (the writer lock
/// holds every other writer off, so nothing needs locking).
const LAST_TWO_LIVE: &str = concat!(
    "SELECT * FROM (",
    crate::sql::live_activations!(),
    " ORDER BY id DESC LIMIT 2) ORDER BY id"
);

crate::registry::impl_plugin_registry!(
    SqliteStore,
    Sqlite,
    add_attempts: 1,
    last_live: LAST_TWO_LIVE
);
