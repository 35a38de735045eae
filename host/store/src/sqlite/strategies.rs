//! SQLite [`crate::StrategyStore`]: the shared implementation
//! (`crate::strategies`) with this backend's transactions: every write runs
//! under the writer lock in a `BEGIN IMMEDIATE` transaction, like the rest
//! of the backend's read-check-write steps, so an `add_upload`'s limit
//! counts and immutability check see no other writer before it commits.
//! An owner's writes take the owner's user transaction
//! ([`SqliteStore::user_tx`]): SQLite has one writer, so that serialises
//! every owner's writes. The reads are single statements (one snapshot
//! each).

use sqlx::Sqlite;

use super::SqliteStore;

crate::strategies::impl_strategy_store!(SqliteStore, Sqlite, owner_tx: user_tx);
