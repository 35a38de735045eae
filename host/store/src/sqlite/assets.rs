//! SQLite [`crate::AssetStore`]: catalog rows and price series written row
//! by row in one transaction; the reads are the shared implementation
//! (`crate::assets`).

use forecast_domain::series::PriceSeries;
use forecast_domain::DataSource;

use super::SqliteStore;
use crate::rows;
use crate::{sql, CatalogEntry, StoreError, StoreResult};

crate::assets::impl_asset_store!(SqliteStore {
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
    #[tracing::instrument(name = "store_series", skip_all, fields(assets = items.len()))]
    async fn store_series(&self, items: &[(i64, &PriceSeries, DataSource)]) -> StoreResult<()> {
        // Dropping `tx` on an early return rolls the whole batch back.
        let mut tx = self.pool.begin().await?;
        let at = forecast_domain::Clock::timestamp(self.clock.as_ref());
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
});
