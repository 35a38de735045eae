//! The catalog as the API serves it: the active assets, and an asset's
//! metadata — a fresh copy cached in the store (7 days by default), else
//! one fetched from the provider (and stored), else a stale copy when the
//! provider fails.
//!
//! Both are kept in memory while the store's `assets` generation has not
//! moved ([`crate::freshness`]): the catalog as the JSON body it is served
//! as, per category filter; an asset's metadata until its copy in the
//! store would be stale (issue 41).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use forecast_api::assets::{AssetItem, AssetListResponse};
use forecast_domain::metadata::{AssetMetadata, MetadataProvider};
use forecast_domain::{Asset, Category, SharedClock};
use forecast_store::{AssetStore, Generations};

use crate::error::Error;
use crate::freshness::Freshness;
use crate::served::Body;

/// The active assets and their metadata, cached for `ttl`.
pub struct AssetService {
    assets: Arc<dyn AssetStore>,
    provider: Arc<dyn MetadataProvider>,
    ttl: Duration,
    freshness: Freshness,
    memory: Mutex<Memory>,
    /// When a fetched copy of an asset's metadata goes stale.
    clock: SharedClock,
}

/// What the service keeps, under one `assets` generation.
#[derive(Default)]
struct Memory {
    generation: i64,
    /// Catalog bodies by category filter (`None`: every category).
    lists: HashMap<Option<Category>, Arc<Body>>,
    /// Assets with fresh metadata by ticker, and when the copy in the
    /// store turns stale (Unix seconds).
    infos: HashMap<String, (Arc<(Asset, Lookup)>, i64)>,
}

/// Tickers whose metadata is kept at most; past it, the map starts over.
const INFO_ENTRIES: usize = 16_384;

impl AssetService {
    /// Serves what `provider` answers, cached in `assets` for `ttl`; what
    /// it keeps in memory is checked with `freshness`; `clock` says when
    /// the cached copy is stale.
    pub fn new(
        assets: Arc<dyn AssetStore>,
        provider: Arc<dyn MetadataProvider>,
        ttl: Duration,
        freshness: Freshness,
        clock: SharedClock,
    ) -> Self {
        Self {
            assets,
            provider,
            ttl,
            freshness,
            memory: Mutex::default(),
            clock,
        }
    }

    /// The active assets, of `category` when given.
    pub async fn list(&self, category: Option<Category>) -> Result<Vec<Asset>, Error> {
        Ok(self.assets.list_active_assets(category).await?)
    }

    /// The JSON body of `GET /api/assets` for `category`: from memory
    /// while the `assets` generation (read after the request arrived:
    /// `generations`, else read here) has not moved.
    pub async fn list_body(
        &self,
        category: Option<Category>,
        generations: Option<Generations>,
    ) -> Result<Arc<Body>, Error> {
        let generation = self.generation(generations).await;
        if let Some(g) = generation {
            if let Some(body) = self.memory_at(g).lists.get(&category) {
                crate::cache_lookup("catalog", true);
                return Ok(body.clone());
            }
        }
        crate::cache_lookup("catalog", false);
        let assets: Vec<AssetItem> = self
            .list(category)
            .await?
            .into_iter()
            .map(|a| AssetItem {
                id: a.id,
                ticker: a.ticker,
                name: a.name,
                category: a.category,
                is_active: a.is_active,
                is_premium: a.is_premium,
                data_source: a.data_source,
                last_price_date: a.last_price_date,
            })
            .collect();
        let body = AssetListResponse {
            total: assets.len(),
            assets,
        };
        let body = Arc::new(Body::new(Bytes::from(
            serde_json::to_vec(&body).map_err(|e| Error::Internal(e.to_string()))?,
        )));
        if let Some(g) = generation {
            self.memory_at(g).lists.insert(category, body.clone());
        }
        Ok(body)
    }

    /// The active asset `ticker` with its metadata; `NotFound` for an
    /// unknown or inactive ticker. From memory while the `assets`
    /// generation has not moved and the stored copy is fresh.
    pub async fn metadata(
        &self,
        ticker: &str,
        generations: Option<Generations>,
    ) -> Result<Arc<(Asset, Lookup)>, Error> {
        let generation = self.generation(generations).await;
        let now = self.clock.timestamp();
        if let Some(g) = generation {
            if let Some((found, until)) = self.memory_at(g).infos.get(ticker) {
                if now < *until {
                    crate::cache_lookup("asset_info", true);
                    return Ok(found.clone());
                }
            }
        }
        crate::cache_lookup("asset_info", false);
        let asset = crate::analysis::active_asset(self.assets.as_ref(), ticker).await?;
        let found = lookup(
            self.assets.as_ref(),
            self.provider.as_ref(),
            &asset,
            self.ttl,
            now,
        )
        .await?;
        let fetched = !found.from_cache;
        let found = Arc::new((asset, found));
        // A copy just fetched is in the store now: served again, it comes
        // from there. A stale copy served because the provider failed is
        // not kept, so the next request tries the provider again.
        let kept = match (fetched, found.1.fetched_at) {
            (true, _) => Some((
                Arc::new((
                    found.0.clone(),
                    Lookup {
                        from_cache: true,
                        ..found.1.clone()
                    },
                )),
                now,
            )),
            (false, Some(at)) if now - at < self.ttl.as_secs() as i64 => Some((found.clone(), at)),
            _ => None,
        };
        if let (Some(g), Some((kept, at))) = (generation, kept) {
            let mut memory = self.memory_at(g);
            if memory.infos.len() >= INFO_ENTRIES {
                memory.infos.clear();
            }
            let until = at + self.ttl.as_secs() as i64;
            memory.infos.insert(ticker.to_string(), (kept, until));
        }
        Ok(found)
    }

    /// The `assets` generation read after the request arrived, if any.
    async fn generation(&self, generations: Option<Generations>) -> Option<i64> {
        match generations {
            Some(g) => Some(g.assets),
            None => self.freshness.current().await.map(|g| g.assets),
        }
    }

    /// The memory of generation `g` (emptied when `g` is another).
    fn memory_at(&self, g: i64) -> std::sync::MutexGuard<'_, Memory> {
        let mut memory = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        if memory.generation != g {
            *memory = Memory {
                generation: g,
                ..Memory::default()
            };
        }
        memory
    }
}

/// Metadata with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Lookup {
    /// The metadata.
    pub metadata: AssetMetadata,
    /// Served from the store rather than fetched now.
    pub from_cache: bool,
    /// When the copy in the store was fetched (Unix seconds; `None`: it
    /// was fetched now).
    pub fetched_at: Option<i64>,
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
                fetched_at: Some(*fetched_at),
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
                fetched_at: None,
            })
        }
        Err(e) => match parsed {
            Some((metadata, fetched_at)) => {
                tracing::warn!(error = %e, ticker = %asset.ticker, "serving stale metadata");
                Ok(Lookup {
                    metadata,
                    from_cache: true,
                    fetched_at: Some(fetched_at),
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
