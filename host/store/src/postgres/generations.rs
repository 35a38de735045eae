//! PostgreSQL [`crate::GenerationStore`]: the shared statement.

use super::PgStore;

crate::generations::impl_generation_store!(PgStore);
