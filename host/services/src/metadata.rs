//! Asset metadata (the spec's AssetInfo) behind a provider trait, cached in
//! the store for 7 days. When a refresh fails, the stale copy is served.
//!
//! The built-in provider answers from the catalog columns (name, exchange,
//! currency, sector, industry, website, summary). Network providers (Yahoo,
//! Stooq) implement the same trait.

use crate::error::Error;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use forecast_domain::Asset;
use forecast_store::AssetStore;

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

/// Answers from the catalog shipped with the project.
pub struct CatalogProvider;

#[async_trait]
impl MetadataProvider for CatalogProvider {
    fn name(&self) -> &'static str {
        "catalog"
    }

    async fn fetch(&self, asset: &Asset) -> Result<AssetMetadata, ProviderError> {
        let domain = asset
            .website
            .trim()
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .trim_end_matches('/');
        Ok(AssetMetadata {
            long_name: asset.name.clone(),
            sector: asset.sector.clone(),
            industry: asset.industry.clone(),
            summary: asset.summary.clone(),
            logo_url: if domain.is_empty() {
                String::new()
            } else {
                format!("https://{domain}/favicon.ico")
            },
            market_cap: 0,
            exchange: asset.exchange.clone(),
            currency: asset.currency.clone(),
            website: asset.website.clone(),
        })
    }
}

/// Metadata with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Lookup {
    /// The metadata.
    pub metadata: AssetMetadata,
    /// Served from the store rather than fetched now.
    pub from_cache: bool,
}

/// A fresh cached copy, else a fetch (stored), else a stale copy; an error
/// only when nothing is cached and the provider fails.
pub async fn lookup(
    db: &dyn AssetStore,
    provider: &dyn MetadataProvider,
    asset: &Asset,
    ttl: Duration,
    now: i64,
) -> Result<Lookup, Error> {
    let cached = db.cached_metadata(asset.id).await?;
    let parsed = cached.as_ref().and_then(|c| {
        serde_json::from_str::<AssetMetadata>(&c.body)
            .ok()
            .map(|m| (m, c.fetched_at))
    });
    if let Some((metadata, fetched_at)) = &parsed {
        if now - fetched_at < ttl.as_secs() as i64 {
            return Ok(Lookup {
                metadata: metadata.clone(),
                from_cache: true,
            });
        }
    }
    match provider.fetch(asset).await {
        Ok(metadata) => {
            let body = serde_json::to_string(&metadata).expect("metadata serialises");
            db.put_metadata(asset.id, &body, now).await?;
            Ok(Lookup {
                metadata,
                from_cache: false,
            })
        }
        Err(e) => match parsed {
            Some((metadata, _)) => {
                tracing::warn!(error = %e, ticker = %asset.ticker, "serving stale metadata");
                Ok(Lookup {
                    metadata,
                    from_cache: true,
                })
            }
            None => Err(Error::Internal(e.to_string())),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;
    use forecast_domain::Category;
    use forecast_store::CatalogEntry;

    fn entry(id: i64, ticker: &str, category: Category, active: bool) -> CatalogEntry {
        CatalogEntry::minimal(id, ticker, category, active)
    }

    struct Flaky {
        fail: AtomicBool,
        calls: AtomicUsize,
    }

    #[async_trait]
    impl MetadataProvider for Flaky {
        fn name(&self) -> &'static str {
            "flaky"
        }
        async fn fetch(&self, asset: &Asset) -> Result<AssetMetadata, ProviderError> {
            let n = self.calls.fetch_add(1, Ordering::SeqCst);
            if self.fail.load(Ordering::SeqCst) {
                return Err(ProviderError {
                    provider: "flaky",
                    message: "down".into(),
                });
            }
            let mut m = CatalogProvider.fetch(asset).await?;
            m.market_cap = n as i64;
            Ok(m)
        }
    }

    #[tokio::test]
    async fn cached_for_the_ttl_then_refreshed_and_stale_when_the_provider_fails() {
        let dir = tempfile::tempdir().unwrap();
        let db =
            forecast_store::connect(&format!("sqlite://{}", dir.path().join("m.db").display()))
                .await
                .unwrap();
        db.upsert_catalog(&[entry(1, "AAA", Category::UsStocks, true)])
            .await
            .unwrap();
        let asset = db.asset_by_ticker("AAA").await.unwrap().unwrap();
        let p = Flaky {
            fail: AtomicBool::new(true),
            calls: AtomicUsize::new(0),
        };
        let ttl = Duration::from_secs(100);
        // Nothing cached and the provider down: an error.
        assert!(matches!(
            lookup(db.as_ref(), &p, &asset, ttl, 1_000).await,
            Err(Error::Internal(_))
        ));
        p.fail.store(false, Ordering::SeqCst);
        let first = lookup(db.as_ref(), &p, &asset, ttl, 1_000).await.unwrap();
        assert!(!first.from_cache);
        let again = lookup(db.as_ref(), &p, &asset, ttl, 1_099).await.unwrap();
        assert!(again.from_cache);
        assert_eq!(again.metadata, first.metadata);
        assert_eq!(
            p.calls.load(Ordering::SeqCst),
            2,
            "a fresh copy is not refetched"
        );
        // Past the TTL: refetched.
        let refreshed = lookup(db.as_ref(), &p, &asset, ttl, 1_100).await.unwrap();
        assert!(!refreshed.from_cache);
        assert_ne!(refreshed.metadata.market_cap, first.metadata.market_cap);
        // Past the TTL with the provider down: the stale copy is served.
        p.fail.store(true, Ordering::SeqCst);
        let stale = lookup(db.as_ref(), &p, &asset, ttl, 5_000).await.unwrap();
        assert!(stale.from_cache);
        assert_eq!(stale.metadata, refreshed.metadata);
    }

    #[tokio::test]
    async fn catalog_provider_derives_the_logo_from_the_website() {
        let mut e = entry(1, "AAA", Category::UsStocks, true);
        e.website = "https://www.example.com/".into();
        let asset = Asset {
            id: 1,
            ticker: e.ticker,
            name: e.name,
            category: e.category,
            exchange: e.exchange,
            currency: e.currency,
            country: e.country,
            sector: e.sector,
            industry: e.industry,
            website: e.website,
            summary: e.summary,
            isin: e.isin,
            is_active: true,
            is_premium: false,
            data_source: forecast_domain::DataSource::Synthetic,
            data_version: 0,
            last_price_date: None,
        };
        let m = CatalogProvider.fetch(&asset).await.unwrap();
        assert_eq!(m.logo_url, "https://www.example.com/favicon.ico");
    }
}
