//! `POST /api/match-tickers`: free text to at most three active assets. The
//! host hands the active catalog to the matcher component and validates,
//! limits and shapes; the matching itself (and whether to ask the language
//! model) is the component's.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::active::Plugins;
use forecast_domain::{Asset, Category};
use forecast_plugins::matcher::{Catalog, CatalogEntry};
use forecast_plugins::PluginError;
use forecast_store::Database;
use forecast_store::StoreError;

/// Most matches an answer holds (spec).
pub const MAX_MATCHES: u32 = 3;
/// Longest text accepted, in characters.
pub const MAX_TEXT_CHARS: usize = 500;
/// How long the in-memory catalog is reused before it is re-read.
const CATALOG_TTL: Duration = Duration::from_secs(30);

/// One match, as the spec names it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct TickerMatch {
    /// Ticker.
    pub ticker: String,
    /// Name.
    pub name: String,
    /// Category.
    pub category: Category,
    /// Confidence in [0, 1].
    pub confidence: f64,
}

/// `{matches}`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct MatchResponse {
    /// At most three, best first.
    pub matches: Vec<TickerMatch>,
}

/// Why there is no answer.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    /// 400.
    #[error("{0}")]
    Invalid(String),
    /// 500/504 naming the plugin.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// 500.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// 500.
    #[error("{0}")]
    Internal(String),
}

/// A catalog as read at one moment: what the matcher sees and the assets
/// its answers index into.
type Snapshot = (Instant, Arc<Catalog>, Arc<Vec<Asset>>);

/// The active catalog, re-read at most every 30 s.
#[derive(Default)]
pub struct CatalogCache {
    inner: Mutex<Option<Snapshot>>,
}

impl CatalogCache {
    async fn get(&self, db: &dyn Database) -> Result<(Arc<Catalog>, Arc<Vec<Asset>>), StoreError> {
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

/// Validates `text`: 1 to 500 characters, not blank.
pub fn validate(text: &str) -> Result<&str, MatchError> {
    let chars = text.chars().count();
    if chars == 0 || chars > MAX_TEXT_CHARS {
        return Err(MatchError::Invalid(format!(
            "text must be 1 to {MAX_TEXT_CHARS} characters (got {chars})"
        )));
    }
    if text.trim().is_empty() {
        return Err(MatchError::Invalid("text must not be blank".into()));
    }
    Ok(text)
}

/// The matcher service: the active catalog (from the store, cached) and
/// the active matcher component.
#[derive(Clone)]
pub struct MatcherService {
    db: Arc<dyn Database>,
    plugins: Arc<Plugins>,
    catalog: Arc<CatalogCache>,
}

impl MatcherService {
    /// A service over `db`'s catalog answering with `plugins`' matcher.
    pub fn new(db: Arc<dyn Database>, plugins: Arc<Plugins>) -> Self {
        MatcherService {
            db,
            plugins,
            catalog: Arc::default(),
        }
    }

    /// Matches `text` against the active catalog with the active matcher.
    pub async fn match_text(&self, text: &str) -> Result<MatchResponse, MatchError> {
        let text = validate(text)?.to_string();
        let matcher = self
            .plugins
            .matcher()
            .ok_or_else(|| MatchError::Internal("no matcher plugin is loaded".into()))?;
        let (catalog, assets) = self.catalog.get(self.db.as_ref()).await?;
        let permit = self.plugins.runtime().acquire().await;
        let found = tokio::task::spawn_blocking(move || {
            matcher.find(&permit, &catalog, &text, MAX_MATCHES)
        })
        .await
        .map_err(|e| MatchError::Internal(format!("matcher task failed: {e}")))??;
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
