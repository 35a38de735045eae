//! PostgreSQL [`crate::PluginRegistry`]: the shared implementation
//! (`crate::registry`). Every change that bumps the generation bumps it
//! first: the upsert locks the generation's `settings` row until commit,
//! which serialises registry changes across processes, so activation ids
//! follow commit order and a rollback's reads (new statements under READ
//! COMMITTED) see every activation committed before it. A concurrent adder
//! of the same plugin waits on the primary key until the first commits,
//! then does nothing and reads the committed row (a new statement, a new
//! snapshot): up to three attempts, in case a first adder rolled back.

use sqlx::Postgres;

use super::PgStore;

/// The slot's live activations, locked in id order: a concurrent rollback
/// waiting on them finds, when it resumes, that the row this one marked
/// fails its re-check, and undoes the next one.
const LOCK_LIVE: &str = concat!(crate::sql::live_activations!(), " ORDER BY id FOR UPDATE");

crate::registry::impl_plugin_registry!(
    PgStore,
    Postgres,
    add_attempts: 3,
    last_live: LOCK_LIVE
);
