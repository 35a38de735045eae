//! PostgreSQL [`crate::AssetStore`]: the catalog upserted in chunks through
//! `UNNEST`, each series written with its purges in one statement; the
//! reads are the shared implementation (`crate::assets`).

use super::PgStore;
use crate::{CatalogEntry, StoreResult};

/// Catalog rows per `INSERT` statement (14 arrays of this length each).
const CATALOG_CHUNK: usize = 1_000;

const UPSERT_CATALOG: &str = concat!(
    "INSERT INTO assets (id, ticker, name, category, exchange, currency, country, sector,
                         industry, website, summary, isin, is_active, is_premium)
     SELECT * FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
                          $6::TEXT[], $7::TEXT[], $8::TEXT[], $9::TEXT[], $10::TEXT[],
                          $11::TEXT[], $12::TEXT[], $13::BOOLEAN[], $14::BOOLEAN[]) ",
    crate::sql::upsert_asset_conflict!()
);

/// The shared price upsert with the purges of the asset's cached analyses
/// and of the grades of its old prices (served live until re-graded): a
/// data-modifying CTE always runs to completion, so one round trip does
/// all three.
const UPSERT_PRICES: &str = concat!(
    "WITH purged AS (DELETE FROM analysis_cache WHERE asset_id = $1),
          ungraded AS (DELETE FROM grades WHERE asset_id = $1) ",
    crate::sql::upsert_prices!()
);

crate::assets::impl_asset_store!(PgStore,
    upsert_prices: UPSERT_PRICES,
    // In `UPSERT_PRICES`: the upsert and the purges in one round trip.
    purges: [],
{
    async fn upsert_catalog(&self, entries: &[CatalogEntry]) -> StoreResult<()> {
        // One transaction, one statement per chunk: the rows travel as 14
        // parallel arrays expanded by UNNEST.
        let entries = crate::grading::last_of(entries, |e| e.id);
        let mut tx = self.pool.begin().await?;
        for chunk in entries.chunks(CATALOG_CHUNK) {
            let col = |f: fn(&CatalogEntry) -> &str| -> Vec<&str> {
                chunk.iter().map(|e| f(e)).collect()
            };
            sqlx::query(UPSERT_CATALOG)
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
});
