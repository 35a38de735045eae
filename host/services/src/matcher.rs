//! `POST /api/match-tickers`: free text to at most three active assets. The
//! host hands the active catalog to the matcher component and validates,
//! limits and shapes; the matching itself (and whether to ask the language
//! model) is the component's.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::active::Plugins;
use crate::error::Error;
pub use forecast_api::matcher::{MatchResponse, TickerMatch, MAX_MATCHES, MAX_TEXT_CHARS};
use forecast_domain::{Asset, User};
use forecast_plugins::matcher::{Catalog, CatalogEntry};
use forecast_store::StoreError;
use forecast_store::{AssetStore, QuotaStore, Window};

/// How long the in-memory catalog is reused before it is re-read.
const CATALOG_TTL: Duration = Duration::from_secs(30);

/// A catalog as read at one moment: what the matcher sees and the assets
/// its answers index into.
type Snapshot = (Instant, Arc<Catalog>, Arc<Vec<Asset>>);

/// The active catalog, re-read at most every 30 s.
#[derive(Default)]
pub struct CatalogCache {
    inner: Mutex<Option<Snapshot>>,
}

impl CatalogCache {
    async fn get(
        &self,
        db: &dyn AssetStore,
    ) -> Result<(Arc<Catalog>, Arc<Vec<Asset>>), StoreError> {
        if let Some((at, catalog, assets)) = self.inner.lock().expect("poisoned").as_ref() {
            if at.elapsed() < CATALOG_TTL {
                return Ok((catalog.clone(), assets.clone()));
            }
        }
        let assets = db.list_active_assets(None).await?;
        let entries: Vec<CatalogEntry> = assets
            .iter()
            .map(|a| CatalogEntry {
                ticker: a.ticker.clone(),
                name: a.name.clone(),
                category: a.category.as_str().to_string(),
                exchange: a.exchange.clone(),
                country: a.country.clone(),
                sector: a.sector.clone(),
                industry: a.industry.clone(),
                website: a.website.clone(),
                summary: a.summary.clone(),
            })
            .collect();
        let mut hash = Sha256::new();
        for e in &entries {
            for field in [
                &e.ticker,
                &e.name,
                &e.category,
                &e.website,
                &e.summary,
                &e.industry,
            ] {
                hash.update(field.as_bytes());
                hash.update([0]);
            }
        }
        let digest = hash.finalize();
        let version = u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"));
        let catalog = Arc::new(Catalog { version, entries });
        let assets = Arc::new(assets);
        *self.inner.lock().expect("poisoned") =
            Some((Instant::now(), catalog.clone(), assets.clone()));
        Ok((catalog, assets))
    }
}

/// The matcher service: the active catalog (from the store, cached) and
/// the active matcher component.
#[derive(Clone)]
pub struct MatcherService {
    assets: Arc<dyn AssetStore>,
    plugins: Arc<Plugins>,
    catalog: Arc<CatalogCache>,
    /// Counts each user's requests.
    quotas: Arc<dyn QuotaStore>,
    /// Requests a user may make per minute.
    per_minute: u32,
}

impl MatcherService {
    /// A service over the catalog of `assets` answering with `plugins`'
    /// matcher, at most `per_minute` requests per user (counted in `quotas`).
    pub fn new(
        assets: Arc<dyn AssetStore>,
        plugins: Arc<Plugins>,
        quotas: Arc<dyn QuotaStore>,
        per_minute: u32,
    ) -> Self {
        MatcherService {
            assets,
            plugins,
            catalog: Arc::default(),
            quotas,
            per_minute,
        }
    }

    /// Matches `text` for `user` against the active catalog with the active
    /// matcher. Invalid text is refused before it counts against the user's
    /// limit; a limiter that cannot count refuses the request.
    pub async fn match_text(&self, user: &User, text: &str) -> Result<MatchResponse, Error> {
        let text = forecast_api::matcher::validate(text)?.to_string();
        let now = chrono::Utc::now().timestamp();
        let window = Window {
            kind: "match",
            seconds: 60,
            limit: self.per_minute,
        };
        let used = self
            .quotas
            .consume(&format!("match:{}", user.id), &[window], 1, now)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "matcher limiter unavailable");
                Error::Unavailable("the matcher is temporarily unavailable".into())
            })?;
        if !used.admitted {
            crate::rejected("match_limit");
            return Err(Error::TooManyAttempts {
                detail: format!(
                    "at most {} matcher requests per minute; try again shortly",
                    window.limit
                ),
                retry_after: (used.windows[0].reset - now).max(1) as u64,
            });
        }
        let matcher = self
            .plugins
            .matcher()
            .ok_or_else(|| Error::Internal("no matcher plugin is loaded".into()))?;
        let (catalog, assets) = self.catalog.get(self.assets.as_ref()).await?;
        let permit = self.plugins.runtime().acquire().await;
        let found = tokio::task::spawn_blocking(move || {
            matcher.find(&permit, &catalog, &text, MAX_MATCHES)
        })
        .await
        .map_err(|e| Error::Internal(format!("matcher task failed: {e}")))??;
        Ok(MatchResponse {
            matches: found
                .into_iter()
                .map(|c| {
                    let a = &assets[c.entry as usize];
                    TickerMatch {
                        ticker: a.ticker.clone(),
                        name: a.name.clone(),
                        category: a.category,
                        confidence: c.confidence,
                    }
                })
                .collect(),
        })
    }
}
