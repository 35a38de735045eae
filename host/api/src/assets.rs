//! `GET /api/assets` and `GET /api/asset-info/{ticker}`.

use crate::Invalid;
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
}
