//! PostgreSQL [`crate::StrategyStore`]: the shared implementation
//! (`crate::strategies`) with this backend's transactions. Every write is one transaction that
//! first takes a transaction-scoped advisory lock keyed by the owner
//! (`pg_advisory_xact_lock(<class "FSTR">, hashtext(owner_id))`), so
//! concurrent writes of one owner — from any replica — run one after the
//! other: the limit counts and the immutability check an `add_upload`
//! makes are not invalidated before it commits. A row lock would not do:
//! an owner's first strategy has no row to lock yet. The two-key form keeps
//! these locks apart from the single-key ones elsewhere; a hash collision
//! between owners only serialises them. Under READ COMMITTED every
//! statement after the lock sees what the previous holder committed. The
//! reads are single statements (one snapshot each).

use sqlx::{Postgres, Transaction};

use super::PgStore;
use crate::StoreResult;

/// Takes the advisory lock of an owner ($1) until the transaction ends;
/// 1179866194 (0x4653_5452, "FSTR") is the class key of these locks.
const LOCK_OWNER: &str = "SELECT pg_advisory_xact_lock(1179866194, hashtext($1))";

impl PgStore {
    /// Begins a write of `owner_id`'s strategies, holding its lock until
    /// the transaction ends (no guard of the process's own).
    async fn strategy_owner_tx(
        &self,
        owner_id: &str,
    ) -> StoreResult<((), Transaction<'static, Postgres>)> {
        self.locked_tx(LOCK_OWNER, owner_id).await
    }
}

crate::strategies::impl_strategy_store!(PgStore, Postgres, owner_tx: strategy_owner_tx);
