//! `POST /api/match-tickers`: free text to at most three active assets. The
//! host hands the active catalog to the matcher component and validates,
//! limits and shapes; the matching itself (and whether to ask the language
//! model) is the component's. With the sentence-embedding model loaded,
//! each catalog snapshot carries the semantic search the component's
//! `semantic` import answers from (`crate::embeddings`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::active::Plugins;
use crate::embeddings::{CatalogEmbeddings, SemanticSearch};
use crate::error::Error;
pub use forecast_api::matcher::{
    MatchResponse, MentionMatches, TickerMatch, MAX_MATCHES, MAX_MENTIONS, MAX_TEXT_CHARS,
    SURE_CONFIDENCE,
};
use forecast_domain::{Asset, SharedClock, User};
use forecast_embed::prominence::IndexMembership;
use forecast_plugins::matcher::{Catalog, CatalogEntry, Prior};
use forecast_store::StoreError;
use forecast_store::{AssetStore, QuotaStore, Window};

/// How long the in-memory catalog is reused before it is re-read.
const CATALOG_TTL: Duration = Duration::from_secs(30);

/// Entries without a vector that a request embeds itself (a few assets
/// added since the last computation); more are left to
/// [`MatcherService::prepare_embeddings`], and the request is answered
/// lexically meanwhile.
const INLINE_EMBED_MAX: usize = 64;

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
        embeddings: Option<&CatalogEmbeddings>,
        membership: Option<&IndexMembership>,
    ) -> Result<(Arc<Catalog>, Arc<Vec<Asset>>), StoreError> {
        let previous = self.inner.lock().expect("poisoned").clone();
        if let Some((at, catalog, assets)) = previous.as_ref() {
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
                // With the other names the asset's description gives it
                // ("TSMC"), which the matcher indexes as aliases.
                summary: forecast_embed::matcher_summary(&a.ticker, &a.summary),
            })
            .collect();
        // What the catalog's text does not say: how well-known each asset
        // is (index membership) and its ISINs.
        let priors: Vec<Prior> = assets
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let prominence = membership.map_or(0.0, |m| m.prominence(&a.ticker));
                // The catalog's ISIN and those the index table gives the
                // company (the catalog's are sometimes superseded ones).
                let mut identifiers: Vec<String> = Vec::new();
                let isin = a.isin.trim();
                if !isin.is_empty() {
                    identifiers.push(isin.to_string());
                }
                for other in membership.map_or(&[][..], |m| m.isins(&a.ticker)) {
                    if !identifiers.contains(other) {
                        identifiers.push(other.clone());
                    }
                }
                (prominence > 0.0 || !identifiers.is_empty()).then_some(Prior {
                    entry: i as u32,
                    prominence,
                    identifiers,
                })
            })
            .collect();
        let mut hash = Sha256::new();
        for p in &priors {
            hash.update(p.entry.to_le_bytes());
            hash.update(p.prominence.to_le_bytes());
            for id in &p.identifiers {
                hash.update(id.as_bytes());
                hash.update([0]);
            }
        }
        for e in &entries {
            for field in [
                &e.ticker,
                &e.name,
                &e.category,
                &e.website,
                &e.summary,
                &e.industry,
                &e.sector,
                &e.country,
            ] {
                hash.update(field.as_bytes());
                hash.update([0]);
            }
        }
        let digest = hash.finalize();
        let version = u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"));
        // The same catalog keeps its semantic search.
        let semantic = match (previous, embeddings) {
            (_, None) => None,
            (Some((_, old, _)), Some(_)) if old.version == version && old.semantic.is_some() => {
                old.semantic.clone()
            }
            (_, Some(embeddings)) => semantic_search(embeddings, &assets).await,
        };
        let catalog = Arc::new(Catalog {
            version,
            entries,
            priors,
            semantic,
        });
        let assets = Arc::new(assets);
        *self.inner.lock().expect("poisoned") =
            Some((Instant::now(), catalog.clone(), assets.clone()));
        Ok((catalog, assets))
    }

    /// Forgets the snapshot: the next request re-reads the catalog.
    fn invalidate(&self) {
        *self.inner.lock().expect("poisoned") = None;
    }
}

/// The semantic search over `assets`, when their vectors exist or only a
/// few are missing (embedded now); `None` (lexical answers) otherwise or
/// on a failure, which is logged.
async fn semantic_search(
    embeddings: &CatalogEmbeddings,
    assets: &[Asset],
) -> Option<Arc<dyn forecast_plugins::matcher::Semantic>> {
    let missing = match embeddings.missing(assets).await {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "catalog embeddings unreadable; lexical matching only");
            return None;
        }
    };
    if missing > INLINE_EMBED_MAX {
        tracing::info!(
            missing,
            "catalog embeddings not computed yet; lexical matching until they are"
        );
        return None;
    }
    match embeddings.index(assets, |_, _| {}).await {
        Ok((index, _)) => Some(Arc::new(SemanticSearch::new(
            embeddings.embedder().clone(),
            index,
        ))),
        Err(e) => {
            tracing::warn!(error = %e, "catalog embeddings failed; lexical matching only");
            None
        }
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
    /// The catalog's sentence embeddings, when the model is loaded.
    embeddings: Option<Arc<CatalogEmbeddings>>,
    /// Major index membership, for the catalog's priors.
    membership: Option<Arc<IndexMembership>>,
    /// The per-minute windows of the limit.
    clock: SharedClock,
}

impl MatcherService {
    /// A service over the catalog of `assets` answering with `plugins`'
    /// matcher, at most `per_minute` requests per user (counted in `quotas`
    /// in windows of `clock`'s minutes).
    pub fn new(
        assets: Arc<dyn AssetStore>,
        plugins: Arc<Plugins>,
        quotas: Arc<dyn QuotaStore>,
        per_minute: u32,
        clock: SharedClock,
    ) -> Self {
        MatcherService {
            assets,
            plugins,
            catalog: Arc::default(),
            quotas,
            per_minute,
            embeddings: None,
            membership: None,
            clock,
        }
    }

    /// Tells the matcher how well-known each asset is, from `membership`
    /// (major index membership; `forecast_embed::prominence`).
    pub fn with_membership(mut self, membership: Arc<IndexMembership>) -> Self {
        self.membership = Some(membership);
        self
    }

    /// Answers with the help of the sentence-embedding model: each catalog
    /// snapshot carries a semantic search over `embeddings`.
    pub fn with_embeddings(mut self, embeddings: Arc<CatalogEmbeddings>) -> Self {
        self.embeddings = Some(embeddings);
        self
    }

    /// Whether the sentence-embedding model is loaded.
    pub fn has_model(&self) -> bool {
        self.embeddings.is_some()
    }

    /// Shutdown: a catalog embedding under way stops at its next step
    /// ([`CatalogEmbeddings::stop`]); the next start resumes it.
    pub fn stop_background(&self) {
        if let Some(embeddings) = &self.embeddings {
            embeddings.stop();
        }
    }

    /// Computes and stores the vectors the active catalog lacks (all of
    /// them on a fresh database, none on a restart), calling
    /// `progress(done, to_compute)`; then the next request uses them.
    /// Without the model, nothing.
    pub async fn prepare_embeddings(
        &self,
        progress: impl FnMut(usize, usize) + Send + 'static,
    ) -> Result<crate::embeddings::EmbedStats, Error> {
        let Some(embeddings) = &self.embeddings else {
            return Ok(Default::default());
        };
        let assets = self.assets.list_active_assets(None).await?;
        let (_, stats) = embeddings.index(&assets, progress).await?;
        self.catalog.invalidate();
        Ok(stats)
    }

    /// Matches `text` for `user` against the active catalog with the active
    /// matcher. Invalid text is refused before it counts against the user's
    /// limit; a limiter that cannot count refuses the request.
    #[tracing::instrument(name = "match_tickers", skip_all, fields(user_id = %user.id))]
    pub async fn match_text(&self, user: &User, text: &str) -> Result<MatchResponse, Error> {
        let text = forecast_api::matcher::validate(text)?.to_string();
        let now = self.clock.timestamp();
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
        let (catalog, assets) = self
            .catalog
            .get(
                self.assets.as_ref(),
                self.embeddings.as_deref(),
                self.membership.as_deref(),
            )
            .await?;
        let permit = self.plugins.runtime().acquire().await;
        let span = tracing::Span::current();
        let found = tokio::task::spawn_blocking(move || {
            span.in_scope(|| matcher.find_mentions(&permit, &catalog, &text, MAX_MATCHES))
        })
        .await
        .map_err(|e| Error::Internal(format!("matcher task failed: {e}")))??;
        let shape = |c: &forecast_plugins::matcher::Candidate| {
            let a = &assets[c.entry as usize];
            TickerMatch {
                ticker: a.ticker.clone(),
                name: a.name.clone(),
                category: a.category,
                confidence: c.confidence,
            }
        };
        let mentions: Vec<MentionMatches> = found
            .iter()
            .take(MAX_MENTIONS)
            .map(|m| {
                let matches: Vec<TickerMatch> = m.candidates.iter().map(shape).collect();
                MentionMatches {
                    text: m.text.clone(),
                    sure: matches
                        .first()
                        .is_some_and(|t| t.confidence >= SURE_CONFIDENCE),
                    matches,
                }
            })
            .collect();
        Ok(MatchResponse {
            matches: top_matches(&mentions),
            mentions,
        })
    }
}

/// The spec's `matches`: a single mention's matches; for several, each
/// mention's best match not already taken, most confident first, at most
/// [`MAX_MATCHES`].
fn top_matches(mentions: &[MentionMatches]) -> Vec<TickerMatch> {
    if let [one] = mentions {
        return one.matches.clone();
    }
    let mut picked: Vec<TickerMatch> = Vec::new();
    for m in mentions {
        if let Some(best) = m
            .matches
            .iter()
            .find(|t| !picked.iter().any(|p| p.ticker == t.ticker))
        {
            picked.push(best.clone());
        }
    }
    picked.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    picked.truncate(MAX_MATCHES as usize);
    picked
}
