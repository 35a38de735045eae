//! SQLite [`crate::QuotaStore`]: counters in this process's memory,
//! made durable by group commit before a request is admitted.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use async_trait::async_trait;

use super::SqliteStore;
use crate::quotas::admit;
use crate::rows::Cols;
use crate::{
    Consumption, GenerationStore, Generations, QuotaStore, StoreError, StoreResult, Window,
};

/// The fixed-window counters of [`QuotaStore::consume`] for the embedded
/// backend. SQLite is the one-process deployment (DESIGN §10; `serve`
/// takes an exclusive lock on the file, see [`crate::ServeLock`]), so this
/// process's memory is the atomicity domain: admission is a map update
/// under one lock instead of a write transaction per request.
///
/// Durability is group commit: an admitted consumption waits until the
/// flusher task has committed a batch that includes it, so a request is
/// never answered before its count is in the database (a `kill -9` right
/// after a burst forgives nothing). While one batch commits, the next one
/// gathers every request that arrives, so the cost is one commit per batch,
/// not per request (measured in docs/BENCHMARKS.md).
#[derive(Default)]
pub(super) struct Counters {
    /// (subject, window kind) → (window start, used); ordered, so one
    /// subject's counters are one range.
    values: BTreeMap<(String, String), (i64, i64)>,
    dirty: HashSet<(String, String)>,
    /// (subject, kind prefix) pairs whose every counter in the table is
    /// held in `values` ([`QuotaStore::counters_of`] read them once): this
    /// process is the only writer, so from then on memory is the answer.
    complete: HashSet<(String, String)>,
    /// Bumped by every change; the flusher publishes the generation it
    /// has committed.
    generation: u64,
}

/// A counter's key (subject, window kind) and value (window start, used).
type CounterRow = ((String, String), (i64, i64));

/// The committed generation, the generation counters read after it was
/// committed, and a wake-up for the flusher.
pub(super) struct Durability {
    committed: tokio::sync::watch::Sender<(u64, Option<Generations>)>,
    wake: tokio::sync::Notify,
}

impl Default for Durability {
    fn default() -> Self {
        Durability {
            committed: tokio::sync::watch::Sender::new((0, None)),
            wake: tokio::sync::Notify::new(),
        }
    }
}

/// How long a request waits for its count to be committed before it is
/// refused (the quota store is then unavailable: fail closed).
const COMMIT_DEADLINE: Duration = Duration::from_secs(5);

/// Pause before retrying a failed batch.
const RETRY_AFTER_FAILURE: Duration = Duration::from_millis(100);

const LOAD_COUNTER: &str =
    "SELECT window_start, used FROM counters WHERE subject = $1 AND kind = $2";

/// Rows per upsert statement (4 parameters each, far below SQLite's limit).
const SAVE_CHUNK: usize = 256;

/// The generation counters as of the statement that writes a batch, so
/// one round trip to the connection's worker both commits the batch and
/// reads them (`QuotaStore::consume_checked` needs them read after each
/// count it covers; the write starts after every count of its batch).
const RETURNING_GENERATIONS: &str = "
         RETURNING (SELECT value FROM generations WHERE name = 'auth') AS auth,
                   (SELECT value FROM generations WHERE name = 'grading') AS grading,
                   (SELECT value FROM generations WHERE name = 'assets') AS assets,
                   (SELECT value FROM generations WHERE name = 'alerts') AS alerts,
                   (SELECT value FROM generations WHERE name = 'strategies') AS strategies";

/// The upsert of `rows` rows as one statement.
fn save_sql(rows: usize) -> String {
    let mut sql = String::from("INSERT INTO counters (subject, kind, window_start, used) VALUES ");
    for i in 0..rows {
        if i > 0 {
            sql.push_str(", ");
        }
        let n = 4 * i;
        sql.push_str(&format!("(${}, ${}, ${}, ${})", n + 1, n + 2, n + 3, n + 4));
    }
    sql.push_str(
        " ON CONFLICT (subject, kind) DO UPDATE
         SET window_start = excluded.window_start, used = excluded.used",
    );
    sql
}

/// `sql` (from [`save_sql`]) bound to `rows`.
fn save_counters<'q>(
    sql: &'q str,
    rows: &'q [CounterRow],
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>> {
    let mut query = sqlx::query(sql);
    for ((subject, kind), (start, used)) in rows {
        query = query.bind(subject).bind(kind).bind(start).bind(used);
    }
    query
}

impl SqliteStore {
    /// Writes the changed counters in one transaction and publishes the
    /// generation they cover. A failed write puts them back for the next
    /// batch.
    pub(super) async fn flush_counters(&self) -> StoreResult<()> {
        let (rows, generation): (Vec<CounterRow>, u64) = {
            let mut c = self.counters.lock().await;
            let dirty: Vec<_> = c.dirty.drain().collect();
            let rows = dirty
                .into_iter()
                .filter_map(|k| c.values.get(&k).map(|v| (k, *v)))
                .collect();
            (rows, c.generation)
        };
        let mut generations = None;
        if !rows.is_empty() {
            match self.write_counters(&rows).await {
                Ok(read) => generations = read,
                Err(e) => {
                    let mut c = self.counters.lock().await;
                    c.dirty.extend(rows.into_iter().map(|(k, _)| k));
                    return Err(e);
                }
            }
        }
        // Read with the batch, or else after it: for every count in it,
        // counters read after the count was made (see
        // `QuotaStore::consume_checked`).
        if generations.is_none() {
            generations = match self.generations().await {
                Ok(g) => Some(g),
                Err(e) => {
                    tracing::warn!(error = %e, "could not read the generation counters");
                    None
                }
            };
        }
        // Waiters of this generation or an earlier one may go.
        self.durability.committed.send_if_modified(|(g, read)| {
            let newer = generation > *g;
            if newer {
                *g = generation;
                *read = generations;
            }
            newer
        });
        Ok(())
    }

    /// One multi-row upsert per chunk of rows (one statement is one
    /// transaction in SQLite, and one round trip to the connection's
    /// worker instead of one per row); chunks of a large batch commit in
    /// one transaction. A batch of one chunk also reads the generation
    /// counters ([`RETURNING_GENERATIONS`]); a larger one returns `None`.
    async fn write_counters(&self, rows: &[CounterRow]) -> StoreResult<Option<Generations>> {
        let _writer = self.writer.lock().await;
        if rows.len() <= SAVE_CHUNK {
            let sql = save_sql(rows.len()) + RETURNING_GENERATIONS;
            let read = save_counters(&sql, rows).fetch_all(&self.pool).await?;
            let Some(r) = read.first() else {
                return Ok(None);
            };
            // A missing counter reads 0, as `GenerationStore::generations`.
            return Ok(Some(Generations {
                auth: r.opt_int("auth")?.unwrap_or(0),
                grading: r.opt_int("grading")?.unwrap_or(0),
                assets: r.opt_int("assets")?.unwrap_or(0),
                alerts: r.opt_int("alerts")?.unwrap_or(0),
                strategies: r.opt_int("strategies")?.unwrap_or(0),
            }));
        }
        let mut tx = self.pool.begin().await?;
        for chunk in rows.chunks(SAVE_CHUNK) {
            let sql = save_sql(chunk.len());
            save_counters(&sql, chunk).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(None)
    }

    /// The flusher: commits a batch whenever a consumption waits for one,
    /// until the pool closes.
    pub(super) async fn flush_loop(self) {
        loop {
            self.durability.wake.notified().await;
            // Lets the requests that are ready to run count first, so one
            // commit covers them all.
            tokio::task::yield_now().await;
            if self.pool.is_closed() {
                break;
            }
            if let Err(e) = self.flush_counters().await {
                tracing::warn!(error = %e, "could not persist quota counters; retrying");
                tokio::time::sleep(RETRY_AFTER_FAILURE).await;
                self.durability.wake.notify_one();
            }
        }
    }

    /// Reads into `counters` those of `subject`'s `windows` it does not
    /// hold yet (once per counter and process).
    async fn load_missing(
        &self,
        counters: &mut Counters,
        subject: &str,
        windows: &[Window],
        now: i64,
    ) -> StoreResult<()> {
        for w in windows {
            let key = (subject.to_string(), w.kind.to_string());
            if let Entry::Vacant(slot) = counters.values.entry(key) {
                let row = sqlx::query(LOAD_COUNTER)
                    .bind(subject)
                    .bind(w.kind)
                    .fetch_optional(&self.pool)
                    .await?;
                slot.insert(match row {
                    Some(r) => (r.int("window_start")?, r.int("used")?),
                    None => (crate::quotas::window_start(now, w.seconds), 0),
                });
            }
        }
        Ok(())
    }

    /// Sets each of `subject`'s counters of `windows` to what `change`
    /// makes of it (the counter held, if any, and the start of its window
    /// at `now`; `None`: unchanged), under the `counters` lock taken by the
    /// caller. The changes are written with the next batch, not waited for.
    fn adjust(
        &self,
        mut counters: tokio::sync::MutexGuard<'_, Counters>,
        subject: &str,
        windows: &[Window],
        now: i64,
        change: impl Fn(Option<(i64, i64)>, i64) -> Option<(i64, i64)>,
    ) {
        for w in windows {
            let key = (subject.to_string(), w.kind.to_string());
            let start = crate::quotas::window_start(now, w.seconds);
            if let Some(value) = change(counters.values.get(&key).copied(), start) {
                counters.values.insert(key.clone(), value);
                counters.dirty.insert(key);
            }
        }
        counters.generation += 1;
        drop(counters);
        self.durability_wake();
    }

    /// Wakes the flusher (which ends once the pool is closed).
    pub(super) fn durability_wake(&self) {
        self.durability.wake.notify_one();
    }

    /// Waits until generation `generation` is committed; the generation
    /// counters read after it was.
    async fn durable(&self, generation: u64) -> StoreResult<Option<Generations>> {
        let mut committed = self.durability.committed.subscribe();
        self.durability.wake.notify_one();
        let done = tokio::time::timeout(
            COMMIT_DEADLINE,
            committed.wait_for(|(g, _)| *g >= generation),
        )
        .await;
        match done {
            Ok(Ok(r)) => Ok(r.1),
            _ => Err(StoreError::Sqlx(sqlx::Error::PoolTimedOut)),
        }
    }
}

#[async_trait]
impl QuotaStore for SqliteStore {
    async fn consume(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<Consumption> {
        Ok(self.consume_checked(subject, windows, cost, now).await?.0)
    }

    async fn consume_checked(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<(Consumption, Option<Generations>)> {
        // In-process counters (see `Counters`): one lock makes
        // check-and-count atomic; the table is read once per (subject,
        // window), and an admission returns once it is committed.
        let mut counters = self.counters.lock().await;
        self.load_missing(&mut counters, subject, windows, now)
            .await?;
        let consumption = admit(
            windows,
            |w| {
                counters
                    .values
                    .get(&(subject.to_string(), w.kind.to_string()))
                    .copied()
            },
            cost,
            now,
        );
        // A look (cost 0) changes nothing and writes nothing.
        if consumption.admitted && cost > 0 {
            for (w, u) in windows.iter().zip(&consumption.windows) {
                let key = (subject.to_string(), w.kind.to_string());
                counters
                    .values
                    .insert(key.clone(), (u.reset - w.seconds, i64::from(u.used)));
                counters.dirty.insert(key);
            }
            counters.generation += 1;
            let generation = counters.generation;
            drop(counters);
            let generations = self.durable(generation).await?;
            return Ok((consumption, generations));
        }
        Ok((consumption, None))
    }

    async fn refund(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<()> {
        // Only a counter held in this process and still in its window.
        // Not waited for: a refund lost to a crash only leaves the user
        // charged, never over the limit.
        let counters = self.counters.lock().await;
        self.adjust(counters, subject, windows, now, |held, start| match held {
            Some((s, used)) if s == start => Some((s, (used - i64::from(cost)).max(0))),
            _ => None,
        });
        Ok(())
    }

    async fn tally(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<()> {
        let mut counters = self.counters.lock().await;
        self.load_missing(&mut counters, subject, windows, now)
            .await?;
        // Not waited for (bookkeeping only).
        self.adjust(counters, subject, windows, now, |held, start| {
            Some(match held {
                Some((s, used)) if s == start => (s, used.saturating_add(i64::from(cost))),
                _ => (start, i64::from(cost)),
            })
        });
        Ok(())
    }

    async fn counters_of(
        &self,
        subject: &str,
        prefix: &str,
    ) -> StoreResult<Vec<(String, i64, i64)>> {
        let from = (subject.to_string(), prefix.to_string());
        if !self.counters.lock().await.complete.contains(&from) {
            // Once per (subject, prefix) and process: the table's counters
            // this process does not hold yet join those it holds (which
            // are newer: only this process writes the table).
            let rows = sqlx::query(crate::sql::COUNTERS_OF)
                .bind(subject)
                .bind(prefix)
                .fetch_all(&self.pool)
                .await?;
            let mut read = Vec::with_capacity(rows.len());
            for r in &rows {
                read.push((r.text("kind")?, (r.int("window_start")?, r.int("used")?)));
            }
            let mut counters = self.counters.lock().await;
            for (kind, value) in read {
                counters
                    .values
                    .entry((subject.to_string(), kind))
                    .or_insert(value);
            }
            counters.complete.insert(from.clone());
        }
        let counters = self.counters.lock().await;
        Ok(counters
            .values
            .range(from..)
            .take_while(|((s, kind), _)| s == subject && kind.starts_with(prefix))
            .map(|((_, kind), (start, used))| (kind.clone(), *start, *used))
            .collect())
    }

    async fn reset(&self, subject: &str) -> StoreResult<()> {
        let mut counters = self.counters.lock().await;
        counters.values.retain(|(s, _), _| s != subject);
        counters.dirty.retain(|(s, _)| s != subject);
        counters.complete.retain(|(s, _)| s != subject);
        let _writer = self.writer.lock().await;
        sqlx::query(crate::sql::RESET_COUNTERS)
            .bind(subject)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn purge_counters(&self, now: i64) -> StoreResult<u64> {
        // Written first, so the count covers counters not yet flushed.
        self.flush_counters().await?;
        {
            let mut counters = self.counters.lock().await;
            let Counters { values, dirty, .. } = &mut *counters;
            values.retain(|(_, kind), (start, _)| !crate::quotas::expired(kind, *start, now));
            dirty.retain(|k| values.contains_key(k));
        }
        let _writer = self.writer.lock().await;
        let done = sqlx::query(crate::sql::PURGE_COUNTERS)
            .bind(now - crate::quotas::LOGIN_RETENTION)
            .bind(now - crate::quotas::RETENTION)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }
}
