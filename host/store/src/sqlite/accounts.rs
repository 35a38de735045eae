//! SQLite [`crate::AccountStore`]: the shared implementation
//! (`crate::accounts`); key creation runs under the writer lock.

use super::SqliteStore;

crate::accounts::impl_account_store!(SqliteStore);
