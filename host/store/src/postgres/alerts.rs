//! PostgreSQL [`crate::AlertStore`]: the shared implementation
//! (`crate::alerts`) with this backend's transactions: a user's writes lock
//! the user's row (serialised per user across every process), and the
//! outbox is claimed with `FOR UPDATE SKIP LOCKED` (rows another process
//! holds are skipped, not waited for).

use sqlx::Postgres;

use super::PgStore;

crate::alerts::impl_alert_store!(PgStore, Postgres, due_lock: " FOR UPDATE SKIP LOCKED");
