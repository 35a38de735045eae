//! Asset metadata (the spec's AssetInfo fields beyond the catalog row) and
//! the trait of where it comes from. The services cache and serve it
//! (`forecast_services::assets`); the data crate provides it
//! (`forecast_ingest::metadata`).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::Asset;

/// What a provider knows about an asset. Unknown text fields are empty;
/// an unknown market cap is 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssetMetadata {
    /// Full legal or display name.
    pub long_name: String,
    /// Sector.
    pub sector: String,
    /// Industry.
    pub industry: String,
    /// Description.
    pub summary: String,
    /// Logo image address (empty when unknown).
    pub logo_url: String,
    /// Market capitalisation in `currency`; 0 when unknown.
    pub market_cap: i64,
    /// Listing exchange.
    pub exchange: String,
    /// Trading currency.
    pub currency: String,
    /// Web site.
    pub website: String,
}

/// A provider could not answer.
#[derive(Debug, thiserror::Error)]
#[error("metadata provider {provider} failed: {message}")]
pub struct ProviderError {
    /// Provider name.
    pub provider: &'static str,
    /// Why.
    pub message: String,
}

/// A source of asset metadata.
#[async_trait]
pub trait MetadataProvider: Send + Sync + 'static {
    /// Short name for logs.
    fn name(&self) -> &'static str;
    /// Fetches the metadata of `asset`.
    async fn fetch(&self, asset: &Asset) -> Result<AssetMetadata, ProviderError>;
}
