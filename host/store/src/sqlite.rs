//! SQLite implementation of [`Database`] (the embedded default).

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{Row, SqlitePool};

use super::{
    window_start, CachedMetadata, CatalogEntry, Consumption, Database, GradeRow, GradingRun,
    RankedRow, StoreCounts, StoreError, StoreResult, Window, WindowUsage,
};
use forecast_domain::series::{from_days, PriceSeries};
use forecast_domain::{ApiKeyRecord, Asset, Category, DataSource, Tier, User};

/// The plugin registry's half of the backend.
#[path = "sqlite_plugins.rs"]
mod plugins;

/// A SQLite database file (WAL mode, one writer at a time).
#[derive(Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    /// Serialises this process's write transactions before they reach
    /// SQLite, whose own lock waits by sleeping (long tails under load);
    /// other processes still meet SQLite's busy timeout.
    writer: std::sync::Arc<tokio::sync::Mutex<()>>,
    /// Quota and login counters, kept in this process and written behind.
    counters: std::sync::Arc<tokio::sync::Mutex<Counters>>,
}

/// The fixed-window counters of [`Database::consume`] for the embedded
/// backend. SQLite is the one-process deployment (DESIGN §10), so this
/// process's memory is the atomicity domain: admission is a map update
/// under one lock instead of a write transaction per request (the write
/// lock capped cached verdicts at ~1,900 req/s). Changed counters are
/// written to the `counters` table every `FLUSH_EVERY` and on close, so a
/// restart keeps them (a crash forgets at most that interval's counts).
/// Several server processes on one SQLite file would each count on their
/// own: use PostgreSQL for replicas.
#[derive(Default)]
struct Counters {
    values: std::collections::HashMap<(String, String), (i64, i64)>,
    dirty: std::collections::HashSet<(String, String)>,
}

const FLUSH_EVERY: Duration = Duration::from_millis(500);

const ASSET_COLUMNS: &str = "id, ticker, name, category, exchange, currency, country, sector, \
     industry, website, summary, isin, is_active, is_premium, data_source, data_version";

impl SqliteStore {
    /// Opens `url` (creating the file and its folder), applies migrations.
    pub async fn open(url: &str) -> StoreResult<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        if let Some(dir) = options.get_filename().parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|e| StoreError::Sqlx(sqlx::Error::Io(e)))?;
            }
        }
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&pool).await?;
        let store = SqliteStore {
            pool,
            writer: std::sync::Arc::new(tokio::sync::Mutex::new(())),
            counters: std::sync::Arc::new(tokio::sync::Mutex::new(Counters::default())),
        };
        let flusher = store.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(FLUSH_EVERY).await;
                if flusher.pool.is_closed() {
                    break;
                }
                if let Err(e) = flusher.flush_counters().await {
                    tracing::warn!(error = %e, "could not persist quota counters");
                }
            }
        });
        Ok(store)
    }
}

impl SqliteStore {
    /// Writes the changed counters in one transaction.
    async fn flush_counters(&self) -> StoreResult<()> {
        let rows: Vec<((String, String), (i64, i64))> = {
            let mut c = self.counters.lock().await;
            let dirty: Vec<_> = c.dirty.drain().collect();
            dirty
                .into_iter()
                .filter_map(|k| c.values.get(&k).map(|v| (k, *v)))
                .collect()
        };
        if rows.is_empty() {
            return Ok(());
        }
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin().await?;
        for ((subject, kind), (start, used)) in &rows {
            sqlx::query(
                "INSERT INTO counters (subject, kind, window_start, used) VALUES (?, ?, ?, ?)
                 ON CONFLICT (subject, kind) DO UPDATE SET window_start = excluded.window_start, used = excluded.used",
            )
            .bind(subject)
            .bind(kind)
            .bind(start)
            .bind(used)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

fn asset_from_row(row: &SqliteRow) -> StoreResult<Asset> {
    let category: String = row.try_get("category")?;
    let source: String = row.try_get("data_source")?;
    Ok(Asset {
        id: row.try_get("id")?,
        ticker: row.try_get("ticker")?,
        name: row.try_get("name")?,
        category: Category::from_str(&category).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        exchange: row.try_get("exchange")?,
        currency: row.try_get("currency")?,
        country: row.try_get("country")?,
        sector: row.try_get("sector")?,
        industry: row.try_get("industry")?,
        website: row.try_get("website")?,
        summary: row.try_get("summary")?,
        isin: row.try_get("isin")?,
        is_active: row.try_get("is_active")?,
        is_premium: row.try_get("is_premium")?,
        data_source: DataSource::parse(&source)
            .ok_or_else(|| StoreError::Corrupt(format!("data_source '{source}'")))?,
        data_version: row.try_get("data_version")?,
    })
}

const USER_COLUMNS: &str = "u.id, u.email, u.tier, u.per_minute, u.per_day, u.created_at";
const KEY_COLUMNS: &str = "k.id, k.user_id, k.name, k.key_prefix, k.created_at, k.last_used_at";

fn user_from_row(row: &SqliteRow) -> StoreResult<User> {
    user_from_row_with_id(row, row.try_get("id")?)
}

/// A user from a row whose `id` column may belong to another table (joins).
fn user_from_row_with_id(row: &SqliteRow, id: String) -> StoreResult<User> {
    let tier: String = row.try_get("tier")?;
    let limit = |name: &str| -> StoreResult<Option<u32>> {
        Ok(row
            .try_get::<Option<i64>, _>(name)?
            .map(|v| v.clamp(0, u32::MAX.into()) as u32))
    };
    Ok(User {
        id,
        email: row.try_get("email")?,
        tier: tier.parse().map_err(StoreError::Corrupt)?,
        per_minute: limit("per_minute")?,
        per_day: limit("per_day")?,
        created_at: row.try_get("created_at")?,
    })
}

fn key_from_row(row: &SqliteRow) -> StoreResult<ApiKeyRecord> {
    Ok(ApiKeyRecord {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        name: row.try_get("name")?,
        key_prefix: row.try_get("key_prefix")?,
        created_at: row.try_get("created_at")?,
        last_used_at: row.try_get("last_used_at")?,
    })
}

const RUN_COLUMNS: &str =
    "id, day, engine, scorer, status, started_at, finished_at, total, graded, failures";
const GRADE_COLUMNS: &str =
    "g.asset_id, g.return_period, g.metric, g.data_version, g.letter, g.score, \
     g.expected_return, g.prediction_error, g.median_return, g.median_error, g.current_drawdown, \
     g.current_price, g.win_rate, g.body";

fn run_from_row(r: &SqliteRow) -> StoreResult<GradingRun> {
    Ok(GradingRun {
        id: r.try_get("id")?,
        day: r.try_get("day")?,
        engine: r.try_get("engine")?,
        scorer: r.try_get("scorer")?,
        status: r.try_get("status")?,
        started_at: r.try_get("started_at")?,
        finished_at: r.try_get("finished_at")?,
        total: r.try_get("total")?,
        graded: r.try_get("graded")?,
        failures: r.try_get("failures")?,
    })
}

fn grade_from_row(r: &SqliteRow) -> StoreResult<GradeRow> {
    Ok(GradeRow {
        asset_id: r.try_get("asset_id")?,
        return_period: r.try_get::<i64, _>("return_period")? as u32,
        metric: r.try_get("metric")?,
        data_version: r.try_get("data_version")?,
        letter: r.try_get("letter")?,
        score: r.try_get("score")?,
        expected_return: r.try_get("expected_return")?,
        prediction_error: r.try_get("prediction_error")?,
        median_return: r.try_get("median_return")?,
        median_error: r.try_get("median_error")?,
        current_drawdown: r.try_get("current_drawdown")?,
        current_price: r.try_get("current_price")?,
        win_rate: r.try_get("win_rate")?,
        body: r.try_get("body")?,
    })
}

fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

#[async_trait]
impl Database for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn close(&self) {
        if let Err(e) = self.flush_counters().await {
            tracing::warn!(error = %e, "could not persist quota counters");
        }
        // Fold the WAL into the main file first, so a file copied right
        // after a CLI command exits holds everything it wrote.
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&self.pool)
            .await
        {
            tracing::warn!(error = %e, "WAL checkpoint on close failed");
        }
        self.pool.close().await;
    }

    async fn counts(&self) -> StoreResult<StoreCounts> {
        let row = sqlx::query(
            "SELECT (SELECT COUNT(*) FROM assets) AS assets,
                    (SELECT COUNT(*) FROM assets WHERE is_active = 1) AS active_assets,
                    (SELECT COUNT(*) FROM daily_prices) AS assets_with_prices,
                    (SELECT COALESCE(SUM(row_count), 0) FROM daily_prices) AS price_rows,
                    (SELECT COUNT(*) FROM analysis_cache) AS cached_analyses,
                    (SELECT COUNT(*) FROM asset_metadata) AS cached_metadata",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(StoreCounts {
            assets: row.try_get("assets")?,
            active_assets: row.try_get("active_assets")?,
            assets_with_prices: row.try_get("assets_with_prices")?,
            price_rows: row.try_get("price_rows")?,
            cached_analyses: row.try_get("cached_analyses")?,
            cached_metadata: row.try_get("cached_metadata")?,
        })
    }

    async fn upsert_catalog(&self, entries: &[CatalogEntry]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        for e in entries {
            sqlx::query(
                "INSERT INTO assets (id, ticker, name, category, exchange, currency, country, sector,
                                     industry, website, summary, isin, is_active, is_premium)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                 ON CONFLICT (id) DO UPDATE SET
                    ticker = excluded.ticker, name = excluded.name, category = excluded.category,
                    exchange = excluded.exchange, currency = excluded.currency,
                    country = excluded.country, sector = excluded.sector,
                    industry = excluded.industry, website = excluded.website,
                    summary = excluded.summary, isin = excluded.isin,
                    is_active = excluded.is_active, is_premium = excluded.is_premium",
            )
            .bind(e.id)
            .bind(&e.ticker)
            .bind(&e.name)
            .bind(e.category.as_str())
            .bind(&e.exchange)
            .bind(&e.currency)
            .bind(&e.country)
            .bind(&e.sector)
            .bind(&e.industry)
            .bind(&e.website)
            .bind(&e.summary)
            .bind(&e.isin)
            .bind(e.is_active)
            .bind(e.is_premium)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn list_active_assets(&self, category: Option<Category>) -> StoreResult<Vec<Asset>> {
        let sql = format!(
            "SELECT {ASSET_COLUMNS} FROM assets WHERE is_active = 1 AND (? IS NULL OR category = ?) ORDER BY id"
        );
        let cat = category.map(Category::as_str);
        let rows = sqlx::query(&sql)
            .bind(cat)
            .bind(cat)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(asset_from_row).collect()
    }

    async fn asset_by_ticker(&self, ticker: &str) -> StoreResult<Option<Asset>> {
        let sql = format!("SELECT {ASSET_COLUMNS} FROM assets WHERE ticker = ?");
        let row = sqlx::query(&sql)
            .bind(ticker)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(asset_from_row).transpose()
    }

    async fn load_series(&self, asset_id: i64) -> StoreResult<Option<PriceSeries>> {
        let row = sqlx::query("SELECT series FROM daily_prices WHERE asset_id = ?")
            .bind(asset_id)
            .fetch_optional(&self.pool)
            .await?;
        match row {
            None => Ok(None),
            Some(r) => {
                let blob: Vec<u8> = r.try_get("series")?;
                PriceSeries::decode(&blob)
                    .map(Some)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))
            }
        }
    }

    async fn store_series(&self, items: &[(i64, &PriceSeries, DataSource)]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        let at = now();
        for (asset_id, series, source) in items {
            let updated = sqlx::query(
                "UPDATE assets SET data_source = ?, data_version = data_version + 1 WHERE id = ?",
            )
            .bind(source.as_str())
            .bind(asset_id)
            .execute(&mut *tx)
            .await?;
            if updated.rows_affected() == 0 {
                return Err(StoreError::UnknownAsset(*asset_id));
            }
            let (first, last) = match (series.dates.first(), series.dates.last()) {
                (Some(f), Some(l)) => (from_days(*f).to_string(), from_days(*l).to_string()),
                _ => (String::new(), String::new()),
            };
            sqlx::query(
                "INSERT INTO daily_prices (asset_id, row_count, first_date, last_date, has_weekends, series, updated_at)
                 VALUES (?, ?, ?, ?, ?, ?, ?)
                 ON CONFLICT (asset_id) DO UPDATE SET
                    row_count = excluded.row_count, first_date = excluded.first_date,
                    last_date = excluded.last_date, has_weekends = excluded.has_weekends,
                    series = excluded.series, updated_at = excluded.updated_at",
            )
            .bind(asset_id)
            .bind(series.len() as i64)
            .bind(first)
            .bind(last)
            .bind(series.has_weekends())
            .bind(series.encode())
            .bind(at)
            .execute(&mut *tx)
            .await?;
            sqlx::query("DELETE FROM analysis_cache WHERE asset_id = ?")
                .bind(asset_id)
                .execute(&mut *tx)
                .await?;
            // Cached verdicts of the old prices: served live until re-graded.
            sqlx::query("DELETE FROM grades WHERE asset_id = ?")
                .bind(asset_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn cached_metadata(&self, asset_id: i64) -> StoreResult<Option<CachedMetadata>> {
        let row = sqlx::query("SELECT body, fetched_at FROM asset_metadata WHERE asset_id = ?")
            .bind(asset_id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| {
            Ok(CachedMetadata {
                body: r.try_get("body")?,
                fetched_at: r.try_get("fetched_at")?,
            })
        })
        .transpose()
    }

    async fn put_metadata(&self, asset_id: i64, body: &str, fetched_at: i64) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO asset_metadata (asset_id, body, fetched_at) VALUES (?, ?, ?)
             ON CONFLICT (asset_id) DO UPDATE SET body = excluded.body, fetched_at = excluded.fetched_at",
        )
        .bind(asset_id)
        .bind(body)
        .bind(fetched_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn cached_analysis(&self, key: &str) -> StoreResult<Option<String>> {
        let row = sqlx::query("SELECT body FROM analysis_cache WHERE cache_key = ?")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.try_get("body")).transpose()?)
    }

    async fn put_analysis(&self, key: &str, asset_id: i64, body: &str) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO analysis_cache (cache_key, asset_id, body, created_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (cache_key) DO UPDATE SET body = excluded.body, created_at = excluded.created_at",
        )
        .bind(key)
        .bind(asset_id)
        .bind(body)
        .bind(now())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn setting(&self, key: &str) -> StoreResult<Option<String>> {
        let row = sqlx::query("SELECT value FROM settings WHERE key = ?")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.try_get("value")).transpose()?)
    }

    async fn set_setting(&self, key: &str, value: &str) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES (?, ?)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn create_user(
        &self,
        email: &str,
        password_hash: &str,
        tier: Tier,
        now: i64,
    ) -> StoreResult<User> {
        let id = uuid::Uuid::new_v4().to_string();
        let result = sqlx::query(
            "INSERT INTO users (id, email, password_hash, tier, created_at) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(email)
        .bind(password_hash)
        .bind(tier.as_str())
        .bind(now)
        .execute(&self.pool)
        .await;
        match result {
            Err(e) if is_unique_violation(&e) => Err(StoreError::Conflict(format!("user {email}"))),
            Err(e) => Err(e.into()),
            Ok(_) => Ok(User {
                id,
                email: email.to_string(),
                tier,
                per_minute: None,
                per_day: None,
                created_at: now,
            }),
        }
    }

    async fn user_by_email(&self, email: &str) -> StoreResult<Option<(User, String)>> {
        let sql = format!("SELECT {USER_COLUMNS}, u.password_hash FROM users u WHERE u.email = ?");
        let row = sqlx::query(&sql)
            .bind(email)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| Ok((user_from_row(&r)?, r.try_get("password_hash")?)))
            .transpose()
    }

    async fn set_user_tier(&self, email: &str, tier: Tier) -> StoreResult<Option<User>> {
        sqlx::query("UPDATE users SET tier = ? WHERE email = ?")
            .bind(tier.as_str())
            .bind(email)
            .execute(&self.pool)
            .await?;
        Ok(self.user_by_email(email).await?.map(|(u, _)| u))
    }

    async fn set_user_limits(
        &self,
        email: &str,
        per_minute: Option<u32>,
        per_day: Option<u32>,
    ) -> StoreResult<Option<User>> {
        sqlx::query("UPDATE users SET per_minute = ?, per_day = ? WHERE email = ?")
            .bind(per_minute.map(i64::from))
            .bind(per_day.map(i64::from))
            .bind(email)
            .execute(&self.pool)
            .await?;
        Ok(self.user_by_email(email).await?.map(|(u, _)| u))
    }

    async fn list_users(&self) -> StoreResult<Vec<User>> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users u ORDER BY u.email");
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.iter().map(user_from_row).collect()
    }

    async fn create_session(
        &self,
        token_hash: &str,
        user_id: &str,
        now: i64,
        expires_at: i64,
    ) -> StoreResult<()> {
        sqlx::query("INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)")
            .bind(token_hash)
            .bind(user_id)
            .bind(now)
            .bind(expires_at)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn session_user(&self, token_hash: &str, now: i64) -> StoreResult<Option<User>> {
        let sql = format!(
            "SELECT {USER_COLUMNS} FROM sessions s JOIN users u ON u.id = s.user_id
             WHERE s.token_hash = ? AND s.expires_at > ?"
        );
        let row = sqlx::query(&sql)
            .bind(token_hash)
            .bind(now)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(user_from_row).transpose()
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        sqlx::query("DELETE FROM sessions WHERE token_hash = ?")
            .bind(token_hash)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn create_api_key(
        &self,
        user_id: &str,
        name: &str,
        key_hash: &str,
        key_prefix: &str,
        max_active: u32,
        now: i64,
    ) -> StoreResult<Option<ApiKeyRecord>> {
        // BEGIN IMMEDIATE takes the write lock before the count, so two
        // creations can never both see "4 active".
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let active: i64 = sqlx::query(
            "SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ? AND revoked_at IS NULL",
        )
        .bind(user_id)
        .fetch_one(&mut *tx)
        .await?
        .try_get("n")?;
        if active >= i64::from(max_active) {
            return Ok(None);
        }
        let id = uuid::Uuid::new_v4().to_string();
        sqlx::query(
            "INSERT INTO api_keys (id, user_id, name, key_hash, key_prefix, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(user_id)
        .bind(name)
        .bind(key_hash)
        .bind(key_prefix)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(ApiKeyRecord {
            id,
            user_id: user_id.to_string(),
            name: name.to_string(),
            key_prefix: key_prefix.to_string(),
            created_at: now,
            last_used_at: None,
        }))
    }

    async fn list_api_keys(&self, user_id: &str) -> StoreResult<Vec<ApiKeyRecord>> {
        let sql = format!(
            "SELECT {KEY_COLUMNS} FROM api_keys k WHERE k.user_id = ? AND k.revoked_at IS NULL
             ORDER BY k.created_at DESC, k.id"
        );
        let rows = sqlx::query(&sql)
            .bind(user_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(key_from_row).collect()
    }

    async fn revoke_api_key(&self, user_id: &str, key_id: &str, now: i64) -> StoreResult<bool> {
        let done = sqlx::query(
            "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL",
        )
        .bind(now)
        .bind(key_id)
        .bind(user_id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn api_key_user(&self, key_hash: &str) -> StoreResult<Option<(ApiKeyRecord, User)>> {
        let row = sqlx::query(
            "SELECT k.id AS key_id, k.user_id, k.name, k.key_prefix, k.created_at AS key_created_at,
                    k.last_used_at, u.email, u.tier, u.per_minute, u.per_day, u.created_at
             FROM api_keys k JOIN users u ON u.id = k.user_id
             WHERE k.key_hash = ? AND k.revoked_at IS NULL",
        )
        .bind(key_hash)
        .fetch_optional(&self.pool)
        .await?;
        let Some(r) = row else { return Ok(None) };
        let key = ApiKeyRecord {
            id: r.try_get("key_id")?,
            user_id: r.try_get("user_id")?,
            name: r.try_get("name")?,
            key_prefix: r.try_get("key_prefix")?,
            created_at: r.try_get("key_created_at")?,
            last_used_at: r.try_get("last_used_at")?,
        };
        let user = user_from_row_with_id(&r, key.user_id.clone())?;
        Ok(Some((key, user)))
    }

    async fn touch_api_key(&self, key_id: &str, now: i64) -> StoreResult<()> {
        sqlx::query("UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)")
            .bind(now)
            .bind(key_id)
            .bind(now - 60)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn consume(
        &self,
        subject: &str,
        windows: &[Window],
        cost: u32,
        now: i64,
    ) -> StoreResult<Consumption> {
        // In-process counters (see `Counters`): one lock makes
        // check-and-count atomic; the table is read once per (subject,
        // window) and written behind.
        let mut counters = self.counters.lock().await;
        let mut usage = Vec::with_capacity(windows.len());
        for w in windows {
            let start = window_start(now, w.seconds);
            let key = (subject.to_string(), w.kind.to_string());
            if !counters.values.contains_key(&key) {
                let row = sqlx::query(
                    "SELECT window_start, used FROM counters WHERE subject = ? AND kind = ?",
                )
                .bind(subject)
                .bind(w.kind)
                .fetch_optional(&self.pool)
                .await?;
                let value = match row {
                    Some(r) => (
                        r.try_get::<i64, _>("window_start")?,
                        r.try_get::<i64, _>("used")?,
                    ),
                    None => (start, 0),
                };
                counters.values.insert(key.clone(), value);
            }
            let (ws, used) = counters.values[&key];
            let used = if ws == start { used.max(0) as u32 } else { 0 };
            usage.push(WindowUsage {
                kind: w.kind,
                limit: w.limit,
                used,
                reset: start + w.seconds,
            });
        }
        let admitted = usage
            .iter()
            .all(|u| u64::from(u.used) + u64::from(cost) <= u64::from(u.limit));
        if admitted {
            for (w, u) in windows.iter().zip(usage.iter_mut()) {
                u.used += cost;
                let key = (subject.to_string(), w.kind.to_string());
                counters
                    .values
                    .insert(key.clone(), (u.reset - w.seconds, i64::from(u.used)));
                counters.dirty.insert(key);
            }
        }
        Ok(Consumption {
            admitted,
            windows: usage,
        })
    }

    async fn gradable_assets(&self, min_rows: i64) -> StoreResult<Vec<i64>> {
        let rows = sqlx::query(
            "SELECT a.id FROM assets a JOIN daily_prices p ON p.asset_id = a.id
             WHERE a.is_active = 1 AND p.row_count >= ? ORDER BY a.id",
        )
        .bind(min_rows)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|r| Ok(r.try_get("id")?)).collect()
    }

    async fn start_or_join_run(
        &self,
        day: &str,
        engine: &str,
        scorer: &str,
        asset_ids: &[i64],
        now: i64,
    ) -> StoreResult<GradingRun> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM grading_runs WHERE day = ? AND engine = ? AND scorer = ?"
        );
        if let Some(r) = sqlx::query(&sql)
            .bind(day)
            .bind(engine)
            .bind(scorer)
            .fetch_optional(&mut *tx)
            .await?
        {
            return run_from_row(&r);
        }
        let id = uuid::Uuid::new_v4().to_string();
        sqlx::query(
            "INSERT INTO grading_runs (id, day, engine, scorer, status, started_at, total) VALUES (?, ?, ?, ?, 'running', ?, ?)",
        )
        .bind(&id)
        .bind(day)
        .bind(engine)
        .bind(scorer)
        .bind(now)
        .bind(asset_ids.len() as i64)
        .execute(&mut *tx)
        .await?;
        for chunk in asset_ids.chunks(500) {
            let mut q =
                sqlx::QueryBuilder::new("INSERT INTO grading_tasks (run_id, asset_id, status) ");
            q.push_values(chunk, |mut b, asset| {
                b.push_bind(&id).push_bind(asset).push_bind("pending");
            });
            q.build().execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(GradingRun {
            id,
            day: day.to_string(),
            engine: engine.to_string(),
            scorer: scorer.to_string(),
            status: "running".into(),
            started_at: now,
            finished_at: None,
            total: asset_ids.len() as i64,
            graded: 0,
            failures: 0,
        })
    }

    async fn claim_grading_tasks(
        &self,
        run_id: &str,
        worker: &str,
        limit: u32,
        now: i64,
        lease_seconds: i64,
    ) -> StoreResult<Vec<i64>> {
        // The write lock first, so two claimers never read the same tasks.
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let rows = sqlx::query(
            "SELECT asset_id FROM grading_tasks
             WHERE run_id = ? AND (status = 'pending' OR (status = 'claimed' AND claimed_at <= ?))
             ORDER BY asset_id LIMIT ?",
        )
        .bind(run_id)
        .bind(now - lease_seconds)
        .bind(i64::from(limit))
        .fetch_all(&mut *tx)
        .await?;
        let ids: Vec<i64> = rows
            .iter()
            .map(|r| r.try_get("asset_id"))
            .collect::<Result<_, _>>()?;
        for id in &ids {
            sqlx::query(
                "UPDATE grading_tasks SET status = 'claimed', claimed_by = ?, claimed_at = ? WHERE run_id = ? AND asset_id = ?",
            )
            .bind(worker)
            .bind(now)
            .bind(run_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(ids)
    }

    async fn record_grades(
        &self,
        run_id: &str,
        worker: &str,
        grades: &[GradeRow],
        done: &[i64],
        failed: &[i64],
    ) -> StoreResult<()> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        for g in grades {
            sqlx::query(
                "INSERT INTO grades (run_id, asset_id, return_period, metric, data_version, letter, score,
                    expected_return, prediction_error, median_return, median_error, current_drawdown,
                    current_price, win_rate, body)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                 ON CONFLICT (run_id, asset_id, return_period, metric) DO UPDATE SET
                    data_version = excluded.data_version, letter = excluded.letter, score = excluded.score,
                    expected_return = excluded.expected_return, prediction_error = excluded.prediction_error,
                    median_return = excluded.median_return, median_error = excluded.median_error,
                    current_drawdown = excluded.current_drawdown, current_price = excluded.current_price,
                    win_rate = excluded.win_rate, body = excluded.body",
            )
            .bind(run_id)
            .bind(g.asset_id)
            .bind(i64::from(g.return_period))
            .bind(&g.metric)
            .bind(g.data_version)
            .bind(&g.letter)
            .bind(g.score)
            .bind(g.expected_return)
            .bind(g.prediction_error)
            .bind(g.median_return)
            .bind(g.median_error)
            .bind(g.current_drawdown)
            .bind(g.current_price)
            .bind(g.win_rate)
            .bind(&g.body)
            .execute(&mut *tx)
            .await?;
        }
        let mut counts = [0i64; 2];
        for (slot, (ids, status)) in counts.iter_mut().zip([(done, "done"), (failed, "failed")]) {
            for id in ids {
                let r = sqlx::query(
                    "UPDATE grading_tasks SET status = ? WHERE run_id = ? AND asset_id = ? AND status = 'claimed' AND claimed_by = ?",
                )
                .bind(status)
                .bind(run_id)
                .bind(id)
                .bind(worker)
                .execute(&mut *tx)
                .await?;
                *slot += r.rows_affected() as i64;
            }
        }
        sqlx::query(
            "UPDATE grading_runs SET graded = graded + ?, failures = failures + ? WHERE id = ?",
        )
        .bind(counts[0])
        .bind(counts[1])
        .bind(run_id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn finish_run_if_complete(&self, run_id: &str, now: i64) -> StoreResult<bool> {
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let open: i64 = sqlx::query(
            "SELECT COUNT(*) AS n FROM grading_tasks WHERE run_id = ? AND status IN ('pending', 'claimed')",
        )
        .bind(run_id)
        .fetch_one(&mut *tx)
        .await?
        .try_get("n")?;
        let flipped = sqlx::query("UPDATE grading_runs SET status = 'done', finished_at = ? WHERE id = ? AND status = 'running'")
            .bind(now)
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        if open > 0 || flipped.rows_affected() == 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES ('active_grading_run', ?)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(run_id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM grades WHERE run_id <> ?")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM grading_tasks WHERE run_id <> ?")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn active_grading_run(&self) -> StoreResult<Option<GradingRun>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM grading_runs WHERE id = (SELECT value FROM settings WHERE key = 'active_grading_run')"
        );
        let row = sqlx::query(&sql).fetch_optional(&self.pool).await?;
        row.as_ref().map(run_from_row).transpose()
    }

    async fn latest_grading_run(&self) -> StoreResult<Option<GradingRun>> {
        let sql =
            format!("SELECT {RUN_COLUMNS} FROM grading_runs ORDER BY started_at DESC, id LIMIT 1");
        let row = sqlx::query(&sql).fetch_optional(&self.pool).await?;
        row.as_ref().map(run_from_row).transpose()
    }

    async fn grade(
        &self,
        run_id: &str,
        asset_id: i64,
        return_period: u32,
        metric: &str,
    ) -> StoreResult<Option<GradeRow>> {
        let sql = format!(
            "SELECT {GRADE_COLUMNS} FROM grades g WHERE g.run_id = ? AND g.asset_id = ? AND g.return_period = ? AND g.metric = ?"
        );
        let row = sqlx::query(&sql)
            .bind(run_id)
            .bind(asset_id)
            .bind(i64::from(return_period))
            .bind(metric)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(grade_from_row).transpose()
    }

    async fn ranking_rows(
        &self,
        run_id: &str,
        return_period: u32,
        metric: &str,
    ) -> StoreResult<Vec<RankedRow>> {
        let sql = format!(
            "SELECT {GRADE_COLUMNS}, a.ticker, a.name, a.category, a.data_source FROM grades g JOIN assets a ON a.id = g.asset_id
             WHERE g.run_id = ? AND g.return_period = ? AND g.metric = ? AND a.is_active = 1"
        );
        let rows = sqlx::query(&sql)
            .bind(run_id)
            .bind(i64::from(return_period))
            .bind(metric)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| {
                let category: String = r.try_get("category")?;
                Ok(RankedRow {
                    grade: grade_from_row(r)?,
                    ticker: r.try_get("ticker")?,
                    name: r.try_get("name")?,
                    category: Category::from_str(&category)
                        .map_err(|e| StoreError::Corrupt(e.to_string()))?,
                    data_source: {
                        let source: String = r.try_get("data_source")?;
                        DataSource::parse(&source)
                            .ok_or_else(|| StoreError::Corrupt(format!("data_source '{source}'")))?
                    },
                })
            })
            .collect()
    }
}
