//! The work lists of runs — grading tasks and refresh job items — share one
//! mechanism: one row per item of a run, `pending` → `claimed` (by a
//! worker, with a lease that another claimer may take over once expired) →
//! `done` or `failed`. A [`WorkList`] names a list's table and item column;
//! both backends build their insert and claim statements from it.

/// One table of run items.
pub(crate) struct WorkList {
    /// The table (`run_id`, the item column, `status`, `claimed_by`,
    /// `claimed_at`).
    pub table: &'static str,
    /// The item's id column.
    pub item: &'static str,
}

/// The daily grading's assets.
pub(crate) const GRADING_TASKS: WorkList = WorkList {
    table: "grading_tasks",
    item: "asset_id",
};

/// A job's items (the scheduled refresh's assets).
pub(crate) const JOB_ITEMS: WorkList = WorkList {
    table: "job_items",
    item: "item_id",
};

/// Which rows may be claimed now: pending, or claimed with an expired
/// lease (`claimed_at <= {lease_expired}`), lowest ids first.
const CLAIMABLE_WHERE: &str =
    "run_id = $1 AND (status = 'pending' OR (status = 'claimed' AND claimed_at <= {lease_expired}))";

impl WorkList {
    /// The start of a multi-row insert of pending items
    /// (`push_values` adds `(run_id, item, 'pending')` rows).
    pub fn insert_head(&self) -> String {
        format!(
            "INSERT INTO {} (run_id, {}, status) ",
            self.table, self.item
        )
    }

    /// PostgreSQL: pending items from an array ($1 run, $2 ids).
    pub fn pg_insert(&self) -> String {
        format!(
            "INSERT INTO {table} (run_id, {item}, status)
             SELECT $1::TEXT, {item}, 'pending' FROM UNNEST($2::BIGINT[]) AS t ({item})",
            table = self.table,
            item = self.item,
        )
    }

    /// One statement claiming up to $5 items ($1 run, $2 worker, $3 now,
    /// $4 lease expiry) and returning their ids. The subquery picks the
    /// claimable rows, `lock` its backend's row-locking clause: on
    /// PostgreSQL `FOR UPDATE SKIP LOCKED` skips rows another claimer holds,
    /// and a row claimed and committed by another since our snapshot fails
    /// the re-check of the WHERE clause on the locked row version and is
    /// left out; SQLite's claimer holds the writer lock instead.
    pub fn claim(&self, lock: &str) -> String {
        format!(
            "UPDATE {table} SET status = 'claimed', claimed_by = $2, claimed_at = $3
             WHERE run_id = $1 AND {item} IN (
                 SELECT {item} FROM {table}
                 WHERE {cond}
                 ORDER BY {item}
                 LIMIT $5{lock})
             RETURNING {item}",
            table = self.table,
            item = self.item,
            cond = CLAIMABLE_WHERE.replace("{lease_expired}", "$4"),
        )
    }
}

/// `claim_work` for a backend's store type (`$store`, with a `pool` field
/// and `write_lock()`, the process's own writer lock if it has one):
/// claims up to `limit` items of a run's `list` for `worker` — pending
/// ones, or claimed ones whose lease (`lease_seconds`) expired — in one
/// statement ([`WorkList::claim`] with `$lock`), lowest ids first.
macro_rules! impl_claim_work {
    ($store:ty, lock: $lock:expr) => {
        impl $store {
            async fn claim_work(
                &self,
                list: &$crate::work_list::WorkList,
                run_id: &str,
                worker: &str,
                limit: u32,
                now: i64,
                lease_seconds: i64,
            ) -> $crate::StoreResult<Vec<i64>> {
                let _writer = self.write_lock().await;
                let mut ids: Vec<i64> = sqlx::query(&list.claim($lock))
                    .bind(run_id)
                    .bind(worker)
                    .bind(now)
                    .bind(now - lease_seconds)
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(|r| $crate::rows::Cols::int(r, list.item))
                    .collect::<$crate::StoreResult<_>>()?;
                ids.sort_unstable();
                Ok(ids)
            }
        }
    };
}
pub(crate) use impl_claim_work;
