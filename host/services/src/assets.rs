//! The catalog as the API serves it: the active assets, and an asset's
//! metadata — a fresh copy cached in the store (7 days by default), else
//! one fetched from the provider (and stored), else a stale copy when the
//! provider fails.

use std::sync::Arc;
use std::time::Duration;

use forecast_domain::metadata::{AssetMetadata, MetadataProvider};
use forecast_domain::{Asset, Category};
use forecast_store::AssetStore;

use crate::error::Error;

/// The active assets and their metadata, cached for `ttl`.
pub struct AssetService {
    assets: Arc<dyn AssetStore>,
    provider: Arc<dyn MetadataProvider>,
    ttl: Duration,
}

impl AssetService {
    /// Serves what `provider` answers, cached in `assets` for `ttl`.
    pub fn new(
        assets: Arc<dyn AssetStore>,
        provider: Arc<dyn MetadataProvider>,
        ttl: Duration,
    ) -> Self {
        Self {
            assets,
            provider,
            ttl,
        }
    }

    /// The active assets, of `category` when given.
    pub async fn list(&self, category: Option<Category>) -> Result<Vec<Asset>, Error> {
        Ok(self.assets.list_active_assets(category).await?)
    }

    /// The active asset `ticker` with its metadata; `NotFound` for an
    /// unknown or inactive ticker.
    pub async fn metadata(&self, ticker: &str) -> Result<(Asset, Lookup), Error> {
        let asset = crate::analysis::active_asset(self.assets.as_ref(), ticker).await?;
        let found = lookup(
            self.assets.as_ref(),
            self.provider.as_ref(),
            &asset,
            self.ttl,
            chrono::Utc::now().timestamp(),
        )
        .await?;
        Ok((asset, found))
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
    use async_trait::async_trait;
    use forecast_domain::metadata::ProviderError;
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
            Ok(AssetMetadata {
                long_name: asset.name.clone(),
                sector: String::new(),
                industry: String::new(),
                summary: String::new(),
                logo_url: String::new(),
                market_cap: n as i64,
                exchange: asset.exchange.clone(),
                currency: asset.currency.clone(),
                website: String::new(),
            })
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
}
