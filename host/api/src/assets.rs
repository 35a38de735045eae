//! `GET /api/assets` and `GET /api/asset-info/{ticker}`.

use crate::Invalid;
use chrono::NaiveDate;
use forecast_domain::{Category, DataSource};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Query of `GET /api/assets`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AssetListQuery {
    /// Only the active assets of this category.
    #[param(value_type = Option<Category>)]
    pub category: Option<String>,
}

/// Parses a category name; the error names the valid ones.
pub fn parse_category(raw: &str) -> Result<Category, Invalid> {
    raw.parse().map_err(|_| {
        let names: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
        Invalid(format!(
            "unknown category '{}'; expected one of: {}",
            crate::quote(raw),
            names.join(", ")
        ))
    })
}

/// How many of the assets an aggregate used have prices of each
/// provenance: `real` (histories shipped with the service), `ingested`
/// (loaded by `forecast ingest` from files or a price provider) and
/// `synthetic` (generated demo prices, not market data).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DataSources {
    /// Shipped real histories.
    pub real: usize,
    /// Prices loaded by `forecast ingest`.
    pub ingested: usize,
    /// Generated prices.
    pub synthetic: usize,
}

impl DataSources {
    /// Counts `sources`.
    pub fn count(sources: impl IntoIterator<Item = DataSource>) -> Self {
        let mut n = DataSources::default();
        for s in sources {
            match s {
                DataSource::Real => n.real += 1,
                DataSource::Ingested => n.ingested += 1,
                DataSource::Synthetic => n.synthetic += 1,
            }
        }
        n
    }

    /// All assets counted.
    pub fn total(&self) -> usize {
        self.real + self.ingested + self.synthetic
    }
}

/// One asset of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AssetItem {
    /// Stable id.
    pub id: i64,
    /// Ticker symbol.
    pub ticker: String,
    /// Display name.
    pub name: String,
    /// Category.
    pub category: Category,
    /// Listed (always true here: only active assets are listed).
    pub is_active: bool,
    /// Premium-only asset.
    pub is_premium: bool,
    /// Provenance of its prices; `synthetic` prices are generated.
    pub data_source: DataSource,
    /// The date of its last price (null: no prices stored).
    pub last_price_date: Option<NaiveDate>,
}

/// `{assets, total}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AssetListResponse {
    /// By id.
    pub assets: Vec<AssetItem>,
    /// `assets.len()`.
    pub total: usize,
}

/// An asset's metadata (cached for 7 days).
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AssetInfo {
    pub ticker: String,
    pub name: String,
    pub category: Category,
    pub long_name: String,
    pub sector: String,
    pub industry: String,
    pub summary: String,
    pub logo_url: String,
    pub market_cap: i64,
    pub exchange: String,
    pub currency: String,
    pub website: String,
    /// Whether the metadata came from the 7-day cache.
    pub from_cache: bool,
    pub data_source: DataSource,
    /// The date of its last price (null: no prices stored).
    pub last_price_date: Option<NaiveDate>,
}
