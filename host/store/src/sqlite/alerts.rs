//! SQLite [`crate::AlertStore`]: the shared implementation (`crate::alerts`)
//! with this backend's transactions: a user's writes and the outbox's
//! claims take the process's writer lock, then `BEGIN IMMEDIATE`, so their
//! reads and writes see no other writer in between (no row locks: the
//! writer lock holds every other claimant off).

use sqlx::Sqlite;

use super::SqliteStore;

crate::alerts::impl_alert_store!(SqliteStore, Sqlite, due_lock: "");
