//! SQLite implementation of [`Database`] (the embedded default).

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{Row, SqlitePool};

use super::{CachedMetadata, CatalogEntry, Database, StoreCounts, StoreError, StoreResult};
use crate::domain::{Asset, Category, DataSource};
use crate::series::{from_days, PriceSeries};

/// A SQLite database file (WAL mode, one writer at a time).
#[derive(Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

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
        Ok(SqliteStore { pool })
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
}
