//! SQLite [`crate::AssetStore`]: catalog rows written row by row in one
//! transaction, each series followed by its purges; the rest is the shared
//! implementation (`crate::assets`).

use super::SqliteStore;
use crate::{sql, CatalogEntry, StoreResult};

crate::assets::impl_asset_store!(SqliteStore,
    upsert_prices: sql::UPSERT_PRICES,
    // Cached verdicts of the old prices: served live until re-graded.
    purges: [sql::DELETE_ANALYSES_OF_ASSET, sql::DELETE_GRADES_OF_ASSET],
{
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
});
