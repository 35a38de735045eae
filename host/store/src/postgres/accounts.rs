//! PostgreSQL [`crate::AccountStore`]: the shared implementation
//! (`crate::accounts`); key creation runs under a lock on the user's row,
//! which serialises it per user across all processes (under READ
//! COMMITTED the count then sees every key committed by the previous lock
//! holder).

use super::PgStore;

crate::accounts::impl_account_store!(PgStore);
