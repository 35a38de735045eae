//! PostgreSQL implementation of [`Database`] (for several server processes
//! sharing one database). Mirrors [`super::SqliteStore`] method by method;
//! where SQLite relies on its single writer (`BEGIN IMMEDIATE`), this
//! backend takes row locks (`SELECT ... FOR UPDATE`) inside a transaction,
//! so the guarantees hold across processes, not just within one.

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::{PgPoolOptions, PgRow};
use sqlx::{PgPool, Row};

use super::{
    window_start, CachedMetadata, CatalogEntry, Consumption, Database, GradeRow, GradingRun,
    RankedRow, StoreCounts, StoreError, StoreResult, Window, WindowUsage,
};
use forecast_domain::series::{from_days, PriceSeries};
use forecast_domain::{ApiKeyRecord, Asset, Category, DataSource, Tier, User};

/// The plugin registry's half of the backend.
#[path = "postgres_plugins.rs"]
mod plugins;

/// A PostgreSQL database reached through a connection pool.
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
}

const ASSET_COLUMNS: &str = "id, ticker, name, category, exchange, currency, country, sector, \
     industry, website, summary, isin, is_active, is_premium, data_source, data_version";

impl PgStore {
    /// Connects to `url` (the database must exist) and applies migrations.
    pub async fn open(url: &str) -> StoreResult<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await?;
        sqlx::migrate!("./migrations/postgres").run(&pool).await?;
        Ok(PgStore { pool })
    }
}

fn asset_from_row(row: &PgRow) -> StoreResult<Asset> {
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

fn user_from_row(row: &PgRow) -> StoreResult<User> {
    user_from_row_with_id(row, row.try_get("id")?)
}

/// A user from a row whose `id` column may belong to another table (joins).
fn user_from_row_with_id(row: &PgRow, id: String) -> StoreResult<User> {
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

fn key_from_row(row: &PgRow) -> StoreResult<ApiKeyRecord> {
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

fn run_from_row(r: &PgRow) -> StoreResult<GradingRun> {
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

fn grade_from_row(r: &PgRow) -> StoreResult<GradeRow> {
    let period: i64 = r.try_get("return_period")?;
    Ok(GradeRow {
        asset_id: r.try_get("asset_id")?,
        return_period: u32::try_from(period)
            .map_err(|_| StoreError::Corrupt(format!("return_period {period}")))?,
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

/// The grades with one row per (asset, period, metric), the last occurrence
/// winning (as SQLite's row-by-row upsert does): a multi-row upsert may not
/// touch a row twice.
fn last_per_grade_key(grades: &[GradeRow]) -> Vec<&GradeRow> {
    let last: HashMap<(i64, u32, &str), usize> = grades
        .iter()
        .enumerate()
        .map(|(i, g)| ((g.asset_id, g.return_period, g.metric.as_str()), i))
        .collect();
    grades
        .iter()
        .enumerate()
        .filter(|(i, g)| last[&(g.asset_id, g.return_period, g.metric.as_str())] == *i)
        .map(|(_, g)| g)
        .collect()
}

/// Grade rows per upsert statement (15 arrays of this length each).
const GRADE_CHUNK: usize = 2_000;

/// Key of the transaction-scoped advisory lock that serialises run
/// completions across processes: each completion deletes the other runs'
/// grades and tasks, so two at once could deadlock on each other's rows.
const FINISH_LOCK: i64 = 0x4645_4752_4144; // "FEGRAD"

fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The entries with one row per id, the last occurrence winning (as
/// SQLite's row-by-row upsert does), in order of those last occurrences.
/// A single multi-row `INSERT ... ON CONFLICT DO UPDATE` may not touch a
/// row twice.
fn last_per_id(entries: &[CatalogEntry]) -> Vec<&CatalogEntry> {
    let last: HashMap<i64, usize> = entries.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
    entries
        .iter()
        .enumerate()
        .filter(|(i, e)| last[&e.id] == *i)
        .map(|(_, e)| e)
        .collect()
}

/// Catalog rows per `INSERT` statement (14 arrays of this length each).
const CATALOG_CHUNK: usize = 1_000;

#[async_trait]
impl Database for PgStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn close(&self) {
        self.pool.close().await;
    }

    async fn counts(&self) -> StoreResult<StoreCounts> {
        // SUM(BIGINT) is NUMERIC in PostgreSQL: cast back.
        let row = sqlx::query(
            "SELECT (SELECT COUNT(*) FROM assets) AS assets,
                    (SELECT COUNT(*) FROM assets WHERE is_active) AS active_assets,
                    (SELECT COUNT(*) FROM daily_prices) AS assets_with_prices,
                    (SELECT COALESCE(SUM(row_count), 0)::BIGINT FROM daily_prices) AS price_rows,
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
        // One transaction, one statement per chunk: the rows travel as 14
        // parallel arrays expanded by UNNEST.
        let entries = last_per_id(entries);
        let mut tx = self.pool.begin().await?;
        for chunk in entries.chunks(CATALOG_CHUNK) {
            let col = |f: fn(&CatalogEntry) -> &str| -> Vec<&str> {
                chunk.iter().map(|e| f(e)).collect()
            };
            sqlx::query(
                "INSERT INTO assets (id, ticker, name, category, exchange, currency, country, sector,
                                     industry, website, summary, isin, is_active, is_premium)
                 SELECT * FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
                                      $6::TEXT[], $7::TEXT[], $8::TEXT[], $9::TEXT[], $10::TEXT[],
                                      $11::TEXT[], $12::TEXT[], $13::BOOLEAN[], $14::BOOLEAN[])
                 ON CONFLICT (id) DO UPDATE SET
                    ticker = excluded.ticker, name = excluded.name, category = excluded.category,
                    exchange = excluded.exchange, currency = excluded.currency,
                    country = excluded.country, sector = excluded.sector,
                    industry = excluded.industry, website = excluded.website,
                    summary = excluded.summary, isin = excluded.isin,
                    is_active = excluded.is_active, is_premium = excluded.is_premium",
            )
            .bind(chunk.iter().map(|e| e.id).collect::<Vec<i64>>())
            .bind(col(|e| &e.ticker))
            .bind(col(|e| &e.name))
            .bind(col(|e| e.category.as_str()))
            .bind(col(|e| &e.exchange))
            .bind(col(|e| &e.currency))
            .bind(col(|e| &e.country))
            .bind(col(|e| &e.sector))
            .bind(col(|e| &e.industry))
            .bind(col(|e| &e.website))
            .bind(col(|e| &e.summary))
            .bind(col(|e| &e.isin))
            .bind(chunk.iter().map(|e| e.is_active).collect::<Vec<bool>>())
            .bind(chunk.iter().map(|e| e.is_premium).collect::<Vec<bool>>())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn list_active_assets(&self, category: Option<Category>) -> StoreResult<Vec<Asset>> {
        let sql = format!(
            "SELECT {ASSET_COLUMNS} FROM assets
             WHERE is_active AND ($1::TEXT IS NULL OR category = $1) ORDER BY id"
        );
        let rows = sqlx::query(&sql)
            .bind(category.map(Category::as_str))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(asset_from_row).collect()
    }

    async fn asset_by_ticker(&self, ticker: &str) -> StoreResult<Option<Asset>> {
        let sql = format!("SELECT {ASSET_COLUMNS} FROM assets WHERE ticker = $1");
        let row = sqlx::query(&sql)
            .bind(ticker)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(asset_from_row).transpose()
    }

    async fn load_series(&self, asset_id: i64) -> StoreResult<Option<PriceSeries>> {
        let row = sqlx::query("SELECT series FROM daily_prices WHERE asset_id = $1")
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
        // Dropping `tx` on an early return rolls the whole batch back.
        let mut tx = self.pool.begin().await?;
        let at = now();
        for (asset_id, series, source) in items {
            let updated = sqlx::query(
                "UPDATE assets SET data_source = $1, data_version = data_version + 1 WHERE id = $2",
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
            // The upsert and the purges in one round trip: the cached
            // analyses, and the grades of the old prices (served live until
            // re-graded). A data-modifying CTE always runs to completion.
            sqlx::query(
                "WITH purged AS (DELETE FROM analysis_cache WHERE asset_id = $1),
                      ungraded AS (DELETE FROM grades WHERE asset_id = $1)
                 INSERT INTO daily_prices (asset_id, row_count, first_date, last_date, has_weekends, series, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)
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
        }
        tx.commit().await?;
        Ok(())
    }

    async fn cached_metadata(&self, asset_id: i64) -> StoreResult<Option<CachedMetadata>> {
        let row = sqlx::query("SELECT body, fetched_at FROM asset_metadata WHERE asset_id = $1")
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
            "INSERT INTO asset_metadata (asset_id, body, fetched_at) VALUES ($1, $2, $3)
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
        let row = sqlx::query("SELECT body FROM analysis_cache WHERE cache_key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.try_get("body")).transpose()?)
    }

    async fn put_analysis(&self, key: &str, asset_id: i64, body: &str) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO analysis_cache (cache_key, asset_id, body, created_at) VALUES ($1, $2, $3, $4)
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
        let row = sqlx::query("SELECT value FROM settings WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.try_get("value")).transpose()?)
    }

    async fn set_setting(&self, key: &str, value: &str) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES ($1, $2)
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
            "INSERT INTO users (id, email, password_hash, tier, created_at) VALUES ($1, $2, $3, $4, $5)",
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
        let sql = format!("SELECT {USER_COLUMNS}, u.password_hash FROM users u WHERE u.email = $1");
        let row = sqlx::query(&sql)
            .bind(email)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| Ok((user_from_row(&r)?, r.try_get("password_hash")?)))
            .transpose()
    }

    async fn set_user_tier(&self, email: &str, tier: Tier) -> StoreResult<Option<User>> {
        sqlx::query("UPDATE users SET tier = $1 WHERE email = $2")
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
        sqlx::query("UPDATE users SET per_minute = $1, per_day = $2 WHERE email = $3")
            .bind(per_minute.map(i64::from))
            .bind(per_day.map(i64::from))
            .bind(email)
            .execute(&self.pool)
            .await?;
        Ok(self.user_by_email(email).await?.map(|(u, _)| u))
    }

    async fn list_users(&self) -> StoreResult<Vec<User>> {
        // COLLATE "C": byte order, as SQLite sorts, whatever the database's
        // locale.
        let sql = format!("SELECT {USER_COLUMNS} FROM users u ORDER BY u.email COLLATE \"C\"");
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
        sqlx::query(
            "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
        )
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
             WHERE s.token_hash = $1 AND s.expires_at > $2"
        );
        let row = sqlx::query(&sql)
            .bind(token_hash)
            .bind(now)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(user_from_row).transpose()
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        sqlx::query("DELETE FROM sessions WHERE token_hash = $1")
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
        // Locking the user row serialises key creation per user across all
        // processes; under READ COMMITTED the count below then sees every
        // key committed by the previous lock holder.
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT id FROM users WHERE id = $1 FOR UPDATE")
            .bind(user_id)
            .fetch_optional(&mut *tx)
            .await?;
        let active: i64 = sqlx::query(
            "SELECT COUNT(*) AS n FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL",
        )
        .bind(user_id)
        .fetch_one(&mut *tx)
        .await?
        .try_get("n")?;
        if active >= i64::from(max_active) {
            tx.rollback().await?;
            return Ok(None);
        }
        let id = uuid::Uuid::new_v4().to_string();
        sqlx::query(
            "INSERT INTO api_keys (id, user_id, name, key_hash, key_prefix, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
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
            "SELECT {KEY_COLUMNS} FROM api_keys k WHERE k.user_id = $1 AND k.revoked_at IS NULL
             ORDER BY k.created_at DESC, k.id COLLATE \"C\""
        );
        let rows = sqlx::query(&sql)
            .bind(user_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(key_from_row).collect()
    }

    async fn revoke_api_key(&self, user_id: &str, key_id: &str, now: i64) -> StoreResult<bool> {
        let done = sqlx::query(
            "UPDATE api_keys SET revoked_at = $1
             WHERE id = $2 AND user_id = $3 AND revoked_at IS NULL",
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
             WHERE k.key_hash = $1 AND k.revoked_at IS NULL",
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
        sqlx::query(
            "UPDATE api_keys SET last_used_at = $1
             WHERE id = $2 AND (last_used_at IS NULL OR last_used_at <= $3)",
        )
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
        // Make sure every row exists, then lock the subject's rows; the
        // read-check-write below is then one atomic step for every process
        // sharing the database. Rows are created and locked in one fixed
        // order (kind, byte-wise) so concurrent calls cannot deadlock. A
        // rejected call rolls back, leaving nothing behind (as in SQLite).
        let mut tx = self.pool.begin().await?;
        let mut kinds: Vec<&str> = windows.iter().map(|w| w.kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        for kind in &kinds {
            let w = windows
                .iter()
                .find(|w| w.kind == *kind)
                .expect("kind of a window");
            sqlx::query(
                "INSERT INTO counters (subject, kind, window_start, used) VALUES ($1, $2, $3, 0)
                 ON CONFLICT (subject, kind) DO NOTHING",
            )
            .bind(subject)
            .bind(kind)
            .bind(window_start(now, w.seconds))
            .execute(&mut *tx)
            .await?;
        }
        let rows = sqlx::query(
            "SELECT kind, window_start, used FROM counters
             WHERE subject = $1 AND kind = ANY($2)
             ORDER BY kind COLLATE \"C\" FOR UPDATE",
        )
        .bind(subject)
        .bind(&kinds)
        .fetch_all(&mut *tx)
        .await?;
        let mut stored: HashMap<String, (i64, i64)> = HashMap::with_capacity(rows.len());
        for r in &rows {
            stored.insert(
                r.try_get("kind")?,
                (r.try_get("window_start")?, r.try_get("used")?),
            );
        }
        let mut usage = Vec::with_capacity(windows.len());
        for w in windows {
            let start = window_start(now, w.seconds);
            let used = match stored.get(w.kind) {
                Some(&(s, used)) if s == start => used.clamp(0, u32::MAX.into()) as u32,
                _ => 0,
            };
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
                sqlx::query(
                    "UPDATE counters SET window_start = $3, used = $4 WHERE subject = $1 AND kind = $2",
                )
                .bind(subject)
                .bind(w.kind)
                .bind(u.reset - w.seconds)
                .bind(i64::from(u.used))
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
        } else {
            tx.rollback().await?;
        }
        Ok(Consumption {
            admitted,
            windows: usage,
        })
    }

    async fn gradable_assets(&self, min_rows: i64) -> StoreResult<Vec<i64>> {
        let rows = sqlx::query(
            "SELECT a.id FROM assets a JOIN daily_prices p ON p.asset_id = a.id
             WHERE a.is_active AND p.row_count >= $1 ORDER BY a.id",
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
        // The run and its tasks commit together. A concurrent inserter of
        // the same (day, engine, scorer) waits on the unique index until the
        // first transaction ends, then does nothing and (a new statement, so
        // a new snapshot under READ COMMITTED) reads the committed run —
        // never a run without its tasks. Runs are never deleted, so the
        // read finds it; the loop only guards against a first inserter that
        // rolled back between our insert and our read.
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM grading_runs WHERE day = $1 AND engine = $2 AND scorer = $3"
        );
        for _ in 0..3 {
            let mut tx = self.pool.begin().await?;
            let id = uuid::Uuid::new_v4().to_string();
            let inserted = sqlx::query(
                "INSERT INTO grading_runs (id, day, engine, scorer, status, started_at, total)
                 VALUES ($1, $2, $3, $4, 'running', $5, $6)
                 ON CONFLICT (day, engine, scorer) DO NOTHING
                 RETURNING id",
            )
            .bind(&id)
            .bind(day)
            .bind(engine)
            .bind(scorer)
            .bind(now)
            .bind(asset_ids.len() as i64)
            .fetch_optional(&mut *tx)
            .await?;
            if inserted.is_none() {
                tx.rollback().await?;
                let row = sqlx::query(&sql)
                    .bind(day)
                    .bind(engine)
                    .bind(scorer)
                    .fetch_optional(&self.pool)
                    .await?;
                match row {
                    Some(r) => return run_from_row(&r),
                    None => continue,
                }
            }
            sqlx::query(
                "INSERT INTO grading_tasks (run_id, asset_id, status)
                 SELECT $1::TEXT, asset_id, 'pending' FROM UNNEST($2::BIGINT[]) AS t (asset_id)",
            )
            .bind(&id)
            .bind(asset_ids)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            return Ok(GradingRun {
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
            });
        }
        Err(StoreError::Corrupt(format!(
            "grading run ({day}, {engine}, {scorer}) neither inserted nor found"
        )))
    }

    async fn claim_grading_tasks(
        &self,
        run_id: &str,
        worker: &str,
        limit: u32,
        now: i64,
        lease_seconds: i64,
    ) -> StoreResult<Vec<i64>> {
        // One statement: the subquery locks up to `limit` claimable rows,
        // skipping rows another claimer holds; a row claimed and committed
        // by another since our snapshot fails the re-check of the WHERE
        // clause on the locked row version and is left out.
        let rows = sqlx::query(
            "UPDATE grading_tasks SET status = 'claimed', claimed_by = $2, claimed_at = $3
             WHERE run_id = $1 AND asset_id IN (
                 SELECT asset_id FROM grading_tasks
                 WHERE run_id = $1
                   AND (status = 'pending' OR (status = 'claimed' AND claimed_at <= $4))
                 ORDER BY asset_id
                 LIMIT $5
                 FOR UPDATE SKIP LOCKED)
             RETURNING asset_id",
        )
        .bind(run_id)
        .bind(worker)
        .bind(now)
        .bind(now - lease_seconds)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        let mut ids: Vec<i64> = rows
            .iter()
            .map(|r| r.try_get("asset_id"))
            .collect::<Result<_, _>>()?;
        ids.sort_unstable();
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
        // One transaction; the grades travel as 15 parallel arrays expanded
        // by UNNEST, one statement per chunk.
        let grades = last_per_grade_key(grades);
        let mut tx = self.pool.begin().await?;
        for chunk in grades.chunks(GRADE_CHUNK) {
            let text =
                |f: fn(&GradeRow) -> &str| -> Vec<&str> { chunk.iter().map(|g| f(g)).collect() };
            let int =
                |f: fn(&GradeRow) -> i64| -> Vec<i64> { chunk.iter().map(|g| f(g)).collect() };
            let real =
                |f: fn(&GradeRow) -> f64| -> Vec<f64> { chunk.iter().map(|g| f(g)).collect() };
            sqlx::query(
                "INSERT INTO grades (run_id, asset_id, return_period, metric, data_version, letter, score,
                    expected_return, prediction_error, median_return, median_error, current_drawdown,
                    current_price, win_rate, body)
                 SELECT $1::TEXT, * FROM UNNEST($2::BIGINT[], $3::BIGINT[], $4::TEXT[], $5::BIGINT[],
                    $6::TEXT[], $7::DOUBLE PRECISION[], $8::DOUBLE PRECISION[],
                    $9::DOUBLE PRECISION[], $10::DOUBLE PRECISION[], $11::DOUBLE PRECISION[],
                    $12::DOUBLE PRECISION[], $13::DOUBLE PRECISION[], $14::DOUBLE PRECISION[],
                    $15::TEXT[])
                 ON CONFLICT (run_id, asset_id, return_period, metric) DO UPDATE SET
                    data_version = excluded.data_version, letter = excluded.letter, score = excluded.score,
                    expected_return = excluded.expected_return, prediction_error = excluded.prediction_error,
                    median_return = excluded.median_return, median_error = excluded.median_error,
                    current_drawdown = excluded.current_drawdown, current_price = excluded.current_price,
                    win_rate = excluded.win_rate, body = excluded.body",
            )
            .bind(run_id)
            .bind(int(|g| g.asset_id))
            .bind(int(|g| i64::from(g.return_period)))
            .bind(text(|g| &g.metric))
            .bind(int(|g| g.data_version))
            .bind(text(|g| &g.letter))
            .bind(real(|g| g.score))
            .bind(real(|g| g.expected_return))
            .bind(real(|g| g.prediction_error))
            .bind(real(|g| g.median_return))
            .bind(real(|g| g.median_error))
            .bind(real(|g| g.current_drawdown))
            .bind(real(|g| g.current_price))
            .bind(real(|g| g.win_rate))
            .bind(text(|g| &g.body))
            .execute(&mut *tx)
            .await?;
        }
        // Only tasks still claimed by `worker` close (and count); `done`
        // first, so an id in both lists counts once, as graded.
        let mut counts = [0i64; 2];
        for (slot, (ids, status)) in counts.iter_mut().zip([(done, "done"), (failed, "failed")]) {
            if ids.is_empty() {
                continue;
            }
            let r = sqlx::query(
                "UPDATE grading_tasks SET status = $1
                 WHERE run_id = $2 AND asset_id = ANY($3) AND status = 'claimed' AND claimed_by = $4",
            )
            .bind(status)
            .bind(run_id)
            .bind(ids)
            .bind(worker)
            .execute(&mut *tx)
            .await?;
            *slot = r.rows_affected() as i64;
        }
        if counts != [0, 0] {
            sqlx::query(
                "UPDATE grading_runs SET graded = graded + $1, failures = failures + $2 WHERE id = $3",
            )
            .bind(counts[0])
            .bind(counts[1])
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn finish_run_if_complete(&self, run_id: &str, now: i64) -> StoreResult<bool> {
        // Completions are serialised across processes (advisory lock), and
        // the run row is locked: a second caller waits, then reads `done`.
        // The open-task count is a fresh snapshot taken after the locks; a
        // task closed by a transaction still in flight counts as open, and
        // that transaction's worker calls this again after committing.
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(FINISH_LOCK)
            .execute(&mut *tx)
            .await?;
        let status: Option<String> =
            sqlx::query("SELECT status FROM grading_runs WHERE id = $1 FOR UPDATE")
                .bind(run_id)
                .fetch_optional(&mut *tx)
                .await?
                .map(|r| r.try_get("status"))
                .transpose()?;
        if status.as_deref() != Some("running") {
            tx.rollback().await?;
            return Ok(false);
        }
        let open: i64 = sqlx::query(
            "SELECT COUNT(*) AS n FROM grading_tasks
             WHERE run_id = $1 AND status IN ('pending', 'claimed')",
        )
        .bind(run_id)
        .fetch_one(&mut *tx)
        .await?
        .try_get("n")?;
        if open > 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        sqlx::query("UPDATE grading_runs SET status = 'done', finished_at = $1 WHERE id = $2")
            .bind(now)
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES ('active_grading_run', $1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(run_id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM grades WHERE run_id <> $1")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM grading_tasks WHERE run_id <> $1")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn active_grading_run(&self) -> StoreResult<Option<GradingRun>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM grading_runs
             WHERE id = (SELECT value FROM settings WHERE key = 'active_grading_run')"
        );
        let row = sqlx::query(&sql).fetch_optional(&self.pool).await?;
        row.as_ref().map(run_from_row).transpose()
    }

    async fn latest_grading_run(&self) -> StoreResult<Option<GradingRun>> {
        // COLLATE "C": the tie-break in byte order, as SQLite sorts.
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM grading_runs
             ORDER BY started_at DESC, id COLLATE \"C\" LIMIT 1"
        );
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
            "SELECT {GRADE_COLUMNS} FROM grades g
             WHERE g.run_id = $1 AND g.asset_id = $2 AND g.return_period = $3 AND g.metric = $4"
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
            "SELECT {GRADE_COLUMNS}, a.ticker, a.name, a.category, a.data_source
             FROM grades g JOIN assets a ON a.id = g.asset_id
             WHERE g.run_id = $1 AND g.return_period = $2 AND g.metric = $3 AND a.is_active
             ORDER BY g.asset_id"
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
