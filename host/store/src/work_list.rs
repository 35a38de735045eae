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

    /// SQLite: the claimable ids ($1 run, $2 lease expiry, $3 limit); the
    /// caller holds the write lock, so no other claimer reads them too.
    pub fn sqlite_claimable(&self) -> String {
        format!(
            "SELECT {item} FROM {table} WHERE {cond} ORDER BY {item} LIMIT $3",
            item = self.item,
            table = self.table,
            cond = CLAIMABLE_WHERE.replace("{lease_expired}", "$2"),
        )
    }

    /// SQLite: claims one item ($1 worker, $2 now, $3 run, $4 item).
    pub fn sqlite_claim(&self) -> String {
        format!(
            "UPDATE {} SET status = 'claimed', claimed_by = $1, claimed_at = $2
             WHERE run_id = $3 AND {} = $4",
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

    /// PostgreSQL: one statement claims up to $5 items ($1 run, $2 worker,
    /// $3 now, $4 lease expiry). The subquery locks the claimable rows,
    /// skipping rows another claimer holds; a row claimed and committed by
    /// another since our snapshot fails the re-check of the WHERE clause on
    /// the locked row version and is left out.
    pub fn pg_claim(&self) -> String {
        format!(
            "UPDATE {table} SET status = 'claimed', claimed_by = $2, claimed_at = $3
             WHERE run_id = $1 AND {item} IN (
                 SELECT {item} FROM {table}
                 WHERE {cond}
                 ORDER BY {item}
                 LIMIT $5
                 FOR UPDATE SKIP LOCKED)
             RETURNING {item}",
            table = self.table,
            item = self.item,
            cond = CLAIMABLE_WHERE.replace("{lease_expired}", "$4"),
        )
    }
}
