//! Assets and prices: the catalog, each asset's price series and its
//! cached provider metadata.

use async_trait::async_trait;

use forecast_domain::series::PriceSeries;
use forecast_domain::{Asset, Category, DataSource};

use crate::StoreResult;

/// A catalog row to insert or update (everything but the id-derived and
/// price-derived columns).
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    /// Stable id (catalog row number).
    pub id: i64,
    /// Ticker symbol.
    pub ticker: String,
    /// Display name.
    pub name: String,
    /// Category.
    pub category: Category,
    /// Exchange.
    pub exchange: String,
    /// Currency.
    pub currency: String,
    /// Country.
    pub country: String,
    /// Sector.
    pub sector: String,
    /// Industry.
    pub industry: String,
    /// Web site.
    pub website: String,
    /// Summary.
    pub summary: String,
    /// ISIN.
    pub isin: String,
    /// Active flag.
    pub is_active: bool,
    /// Premium flag.
    pub is_premium: bool,
}

impl CatalogEntry {
    /// A row with only what identifies it (the name is `"{ticker} Inc"`,
    /// NYSE, USD; everything else empty): for tests and tools.
    pub fn minimal(id: i64, ticker: &str, category: Category, active: bool) -> CatalogEntry {
        CatalogEntry {
            id,
            ticker: ticker.into(),
            name: format!("{ticker} Inc"),
            category,
            exchange: "NYSE".into(),
            currency: "USD".into(),
            country: String::new(),
            sector: String::new(),
            industry: String::new(),
            website: String::new(),
            summary: String::new(),
            isin: String::new(),
            is_active: active,
            is_premium: false,
        }
    }
}

/// A cached metadata document and when it was fetched (Unix seconds).
#[derive(Debug, Clone, PartialEq)]
pub struct CachedMetadata {
    /// JSON of the provider's answer.
    pub body: String,
    /// Unix seconds of the fetch.
    pub fetched_at: i64,
}

/// The catalog, price series and metadata cache.
#[async_trait]
pub trait AssetStore: Send + Sync {
    /// Inserts or updates catalog rows by id in one transaction. Existing
    /// rows keep their prices, data source and data version.
    async fn upsert_catalog(&self, entries: &[CatalogEntry]) -> StoreResult<()>;

    /// Active assets ordered by id, optionally of one category.
    async fn list_active_assets(&self, category: Option<Category>) -> StoreResult<Vec<Asset>>;

    /// The asset with this ticker (exact match), active or not.
    async fn asset_by_ticker(&self, ticker: &str) -> StoreResult<Option<Asset>>;

    /// Active assets with at least `min_rows` price rows, by id.
    async fn gradable_assets(&self, min_rows: i64) -> StoreResult<Vec<i64>>;

    /// The asset's whole stored series, if any.
    async fn load_series(&self, asset_id: i64) -> StoreResult<Option<PriceSeries>>;

    /// Replaces the stored series of each asset, sets its data source, bumps
    /// its data version and drops its cached analyses and grades: all in
    /// one transaction, so a failure writes nothing.
    async fn store_series(&self, items: &[(i64, &PriceSeries, DataSource)]) -> StoreResult<()>;

    /// Cached metadata of an asset.
    async fn cached_metadata(&self, asset_id: i64) -> StoreResult<Option<CachedMetadata>>;

    /// Stores (replaces) an asset's metadata.
    async fn put_metadata(&self, asset_id: i64, body: &str, fetched_at: i64) -> StoreResult<()>;
}

/// [`AssetStore`] for a backend's store type (`$store`, with `pool` and
/// `clock` fields): written once here, over the shared statements, but for
/// the catalog's batch upsert (`$own`, which each dialect does its own
/// way). `store_series` writes each series with `$upsert_prices`, then runs
/// each of `$purges` (statements of the asset id) — the purges of the
/// asset's cached analyses and of the grades of its old prices, which a
/// backend may fold into `$upsert_prices` instead.
macro_rules! impl_asset_store {
    ($store:ty, upsert_prices: $upsert_prices:expr, purges: $purges:expr, { $($own:tt)* }) => {
        #[async_trait::async_trait]
        impl $crate::AssetStore for $store {
            async fn list_active_assets(
                &self,
                category: Option<::forecast_domain::Category>,
            ) -> $crate::StoreResult<Vec<::forecast_domain::Asset>> {
                let rows = sqlx::query($crate::sql::LIST_ACTIVE_ASSETS)
                    .bind(category.map(::forecast_domain::Category::as_str))
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map($crate::rows::asset).collect()
            }

            async fn asset_by_ticker(
                &self,
                ticker: &str,
            ) -> $crate::StoreResult<Option<::forecast_domain::Asset>> {
                let row = sqlx::query($crate::sql::ASSET_BY_TICKER)
                    .bind(ticker)
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref().map($crate::rows::asset).transpose()
            }

            async fn gradable_assets(&self, min_rows: i64) -> $crate::StoreResult<Vec<i64>> {
                let rows = sqlx::query($crate::sql::GRADABLE_ASSETS)
                    .bind(min_rows)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter()
                    .map(|r| $crate::rows::Cols::int(r, "id"))
                    .collect()
            }

            #[::tracing::instrument(name = "load_series", skip(self), fields(rows = ::tracing::field::Empty))]
            async fn load_series(
                &self,
                asset_id: i64,
            ) -> $crate::StoreResult<Option<::forecast_domain::series::PriceSeries>> {
                let row = sqlx::query($crate::sql::LOAD_SERIES)
                    .bind(asset_id)
                    .fetch_optional(&self.pool)
                    .await?;
                let series = row.map(|r| $crate::rows::series(&r)).transpose()?;
                if let Some(s) = &series {
                    ::tracing::Span::current().record("rows", s.len() as i64);
                }
                Ok(series)
            }

            async fn cached_metadata(
                &self,
                asset_id: i64,
            ) -> $crate::StoreResult<Option<$crate::CachedMetadata>> {
                let row = sqlx::query($crate::sql::CACHED_METADATA)
                    .bind(asset_id)
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref().map($crate::rows::metadata).transpose()
            }

            async fn put_metadata(
                &self,
                asset_id: i64,
                body: &str,
                fetched_at: i64,
            ) -> $crate::StoreResult<()> {
                sqlx::query($crate::sql::PUT_METADATA)
                    .bind(asset_id)
                    .bind(body)
                    .bind(fetched_at)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            #[::tracing::instrument(name = "store_series", skip_all, fields(assets = items.len()))]
            async fn store_series(
                &self,
                items: &[(
                    i64,
                    &::forecast_domain::series::PriceSeries,
                    ::forecast_domain::DataSource,
                )],
            ) -> $crate::StoreResult<()> {
                // Dropping `tx` on an early return rolls the whole batch back.
                let mut tx = self.pool.begin().await?;
                let at = ::forecast_domain::Clock::timestamp(self.clock.as_ref());
                for (asset_id, series, source) in items {
                    let updated = sqlx::query($crate::sql::BUMP_DATA_VERSION)
                        .bind(source.as_str())
                        .bind(asset_id)
                        .execute(&mut *tx)
                        .await?;
                    if updated.rows_affected() == 0 {
                        return Err($crate::StoreError::UnknownAsset(*asset_id));
                    }
                    let (first, last) = $crate::rows::series_bounds(series);
                    sqlx::query($upsert_prices)
                        .bind(asset_id)
                        .bind($crate::rows::len(series.len())?)
                        .bind(first)
                        .bind(last)
                        .bind(series.has_weekends())
                        .bind(series.encode())
                        .bind(at)
                        .execute(&mut *tx)
                        .await?;
                    for statement in $purges {
                        sqlx::query(statement)
                            .bind(asset_id)
                            .execute(&mut *tx)
                            .await?;
                    }
                }
                tx.commit().await?;
                Ok(())
            }

            $($own)*
        }
    };
}
pub(crate) use impl_asset_store;
