//! SQLite [`crate::GenerationStore`]: the shared statement.

use super::SqliteStore;

crate::generations::impl_generation_store!(SqliteStore);
