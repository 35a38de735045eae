//! SQLite [`AssetStore`]: catalog rows and price series written row by row
//! in one transaction.

use async_trait::async_trait;

use forecast_domain::series::PriceSeries;
use forecast_domain::{Asset, Category, DataSource};

use super::SqliteStore;
use crate::rows::{self, Cols};
use crate::{sql, unix_now, AssetStore, CachedMetadata, CatalogEntry, StoreError, StoreResult};

#[async_trait]
impl AssetStore for SqliteStore {
    async fn upsert_catalog(&self, entries: &[CatalogEntry]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        for e in entries {
            sqlx::query(sql::UPSERT_ASSET)
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
        let rows = sqlx::query(sql::LIST_ACTIVE_ASSETS)
            .bind(category.map(Category::as_str))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(rows::asset).collect()
    }

    async fn asset_by_ticker(&self, ticker: &str) -> StoreResult<Option<Asset>> {
        let row = sqlx::query(sql::ASSET_BY_TICKER)
            .bind(ticker)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(rows::asset).transpose()
    }

    async fn gradable_assets(&self, min_rows: i64) -> StoreResult<Vec<i64>> {
        let rows = sqlx::query(sql::GRADABLE_ASSETS)
            .bind(min_rows)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| r.int("id")).collect()
    }

    async fn load_series(&self, asset_id: i64) -> StoreResult<Option<PriceSeries>> {
        let row = sqlx::query(sql::LOAD_SERIES)
            .bind(asset_id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| rows::series(&r)).transpose()
    }

    async fn store_series(&self, items: &[(i64, &PriceSeries, DataSource)]) -> StoreResult<()> {
        // Dropping `tx` on an early return rolls the whole batch back.
        let mut tx = self.pool.begin().await?;
        let at = unix_now();
        for (asset_id, series, source) in items {
            let updated = sqlx::query(sql::BUMP_DATA_VERSION)
                .bind(source.as_str())
                .bind(asset_id)
                .execute(&mut *tx)
                .await?;
            if updated.rows_affected() == 0 {
                return Err(StoreError::UnknownAsset(*asset_id));
            }
            let (first, last) = rows::series_bounds(series);
            sqlx::query(sql::UPSERT_PRICES)
                .bind(asset_id)
                .bind(rows::len(series.len())?)
                .bind(first)
                .bind(last)
                .bind(series.has_weekends())
                .bind(series.encode())
                .bind(at)
                .execute(&mut *tx)
                .await?;
            sqlx::query(sql::DELETE_ANALYSES_OF_ASSET)
                .bind(asset_id)
                .execute(&mut *tx)
                .await?;
            // Cached verdicts of the old prices: served live until re-graded.
            sqlx::query(sql::DELETE_GRADES_OF_ASSET)
                .bind(asset_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn cached_metadata(&self, asset_id: i64) -> StoreResult<Option<CachedMetadata>> {
        let row = sqlx::query(sql::CACHED_METADATA)
            .bind(asset_id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(rows::metadata).transpose()
    }

    async fn put_metadata(&self, asset_id: i64, body: &str, fetched_at: i64) -> StoreResult<()> {
        sqlx::query(sql::PUT_METADATA)
            .bind(asset_id)
            .bind(body)
            .bind(fetched_at)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
