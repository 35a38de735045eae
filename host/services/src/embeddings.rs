//! The catalog's sentence embeddings (issue 15): the vectors of each
//! active asset's views (its whole text — name, ticker, category, sector,
//! industry, country, summary or description — and its facets, see
//! [`forecast_embed::catalog_views`]) computed by the in-process model
//! (`forecast-embed`), stored by (model, asset) as one value with the hash
//! of those texts, so restarts and replicas reuse them and a catalog change
//! re-embeds only the entries whose texts changed. A stored value whose
//! hash is not that of the current views (vectors of an earlier text, or
//! of the single whole-text vector stored before facets existed) is
//! recomputed, never mixed in. The computation goes by steps, each stored
//! as it ends, and stops between them on shutdown (issue 25): the next
//! start computes only the rest. [`SemanticSearch`] answers the matcher's `semantic` import over
//! one catalog snapshot.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use forecast_domain::Asset;
use forecast_embed::{Embedder, VectorIndex};
use forecast_plugins::matcher::Semantic;
use forecast_store::{EmbeddingStore, StoredEmbedding};
use sha2::{Digest, Sha256};

use crate::error::Error;

/// Vectors written to the store per transaction.
const WRITE_BATCH: usize = 256;

/// Assets computed (on a blocking thread) and stored per step; shutdown
/// ([`CatalogEmbeddings::stop`]) is checked between steps, so SIGTERM
/// waits for at most one step (a few seconds on 2 cores), and the steps
/// stored before it are reused by the next start.
const COMPUTE_STEP: usize = 64;

/// The message of a computation [`CatalogEmbeddings::stop`]ped.
pub const STOPPED: &str = "catalog embedding stopped: shutting down";

/// What one [`CatalogEmbeddings::index`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmbedStats {
    /// Entries of the catalog.
    pub entries: usize,
    /// Vectors found in memory or in the store.
    pub reused: usize,
    /// Vectors computed now (and stored).
    pub computed: usize,
}

/// The texts an asset is embedded as ([`forecast_embed::catalog_views`]):
/// its whole text first, then its facets.
pub fn asset_views(a: &Asset) -> Vec<String> {
    forecast_embed::catalog_views(
        &a.name,
        &a.ticker,
        a.category.as_str(),
        &a.sector,
        &a.industry,
        &a.country,
        &a.summary,
    )
}

/// The hash stored vectors are checked against: of the views, in order,
/// one per line. An asset with a single view has the hash of that text, as
/// when one text was embedded per asset (the same vector, so it is reused).
pub fn content_hash(views: &[String]) -> String {
    hex::encode(&Sha256::digest(views.join("\n").as_bytes())[..16])
}

/// A vector known to this process, with the hash of the text it came from.
type Known = (String, Arc<[f32]>);

/// The catalog's vectors for one model: in memory, in the store, or
/// computed.
pub struct CatalogEmbeddings {
    embedder: Arc<Embedder>,
    store: Arc<dyn EmbeddingStore>,
    /// Vectors known to this process by asset id, with their text's hash.
    known: Mutex<HashMap<i64, Known>>,
    /// One computation at a time (a second caller then finds the vectors).
    computing: tokio::sync::Mutex<()>,
    /// Set by [`CatalogEmbeddings::stop`]: no further step starts.
    stopped: AtomicBool,
}

impl CatalogEmbeddings {
    /// Vectors of `embedder`'s model, stored in `store`.
    pub fn new(embedder: Arc<Embedder>, store: Arc<dyn EmbeddingStore>) -> Self {
        CatalogEmbeddings {
            embedder,
            store,
            known: Mutex::default(),
            computing: tokio::sync::Mutex::new(()),
            stopped: AtomicBool::new(false),
        }
    }

    /// Stops the computation at its next step (shutdown): the step in
    /// flight finishes and is stored, [`CatalogEmbeddings::index`] then
    /// answers [`Error::Unavailable`] with [`STOPPED`]. What is stored is whole vectors with
    /// their text's hash, so the next start computes only the rest.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// Whether [`CatalogEmbeddings::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// The model.
    pub fn embedder(&self) -> &Arc<Embedder> {
        &self.embedder
    }

    /// How many of `assets` have no vector for their current text yet, in
    /// this process or in the store (the store is read only when this
    /// process lacks some).
    pub async fn missing(&self, assets: &[Asset]) -> Result<usize, Error> {
        let count = || {
            let known = self.known.lock().expect("poisoned");
            assets
                .iter()
                .filter(|a| {
                    known
                        .get(&a.id)
                        .is_none_or(|(h, _)| *h != content_hash(&asset_views(a)))
                })
                .count()
        };
        if count() == 0 {
            return Ok(0);
        }
        self.load_stored().await?;
        Ok(count())
    }

    /// Reads the store's vectors of this model into memory (those not
    /// known yet).
    async fn load_stored(&self) -> Result<(), Error> {
        let stored = self.store.embeddings(self.embedder.id()).await?;
        let mut known = self.known.lock().expect("poisoned");
        for s in stored {
            if let Some(v) = forecast_embed::from_bytes(&s.vector) {
                known.insert(s.asset_id, (s.content_hash, v.into()));
            }
        }
        Ok(())
    }

    /// The vectors of `assets`, entry `i` for `assets[i]`: those known are
    /// reused, the rest computed on a blocking thread and stored, a step of
    /// [`COMPUTE_STEP`] assets at a time (calling `progress(done,
    /// to_compute)`, counting texts: an asset has one per view). After
    /// [`CatalogEmbeddings::stop`] no further step starts.
    pub async fn index(
        &self,
        assets: &[Asset],
        progress: impl FnMut(usize, usize) + Send + 'static,
    ) -> Result<(VectorIndex, EmbedStats), Error> {
        let _one = self.computing.lock().await;
        let views: Vec<Vec<String>> = assets.iter().map(asset_views).collect();
        let hashes: Vec<String> = views.iter().map(|v| content_hash(v)).collect();
        let missing = |known: &HashMap<i64, (String, Arc<[f32]>)>| -> Vec<usize> {
            (0..assets.len())
                .filter(|&i| {
                    known
                        .get(&assets[i].id)
                        .is_none_or(|(h, _)| *h != hashes[i])
                })
                .collect()
        };
        let mut todo = missing(&self.known.lock().expect("poisoned"));
        if !todo.is_empty() {
            self.load_stored().await?;
            todo = missing(&self.known.lock().expect("poisoned"));
        }
        let stats = EmbedStats {
            entries: assets.len(),
            reused: assets.len() - todo.len(),
            computed: todo.len(),
        };
        if !todo.is_empty() {
            let started = Instant::now();
            // Texts to compute in all (an asset has one per view), for
            // the progress over every step.
            let total: usize = todo.iter().map(|&i| views[i].len()).sum();
            tracing::info!(
                model = self.embedder.id(),
                assets = todo.len(),
                texts = total,
                "catalog embedding started"
            );
            let progress = Arc::new(Mutex::new(progress));
            let mut done = 0;
            for step in todo.chunks(COMPUTE_STEP) {
                if self.is_stopped() {
                    return Err(Error::Unavailable(STOPPED.into()));
                }
                let embedder = self.embedder.clone();
                let batch: Vec<Vec<String>> = step.iter().map(|&i| views[i].clone()).collect();
                let texts: usize = batch.iter().map(Vec::len).sum();
                let progress = progress.clone();
                let vectors = tokio::task::spawn_blocking(move || {
                    embedder.embed_views(&batch, |d, _| {
                        let mut progress = progress.lock().expect("poisoned");
                        (*progress)(done + d, total)
                    })
                })
                .await
                .map_err(|e| Error::Internal(format!("embedding task failed: {e}")))?
                .map_err(|e| Error::Internal(format!("embedding the catalog failed: {e:#}")))?;
                done += texts;
                let rows: Vec<StoredEmbedding> = step
                    .iter()
                    .zip(&vectors)
                    .map(|(&i, v)| StoredEmbedding {
                        asset_id: assets[i].id,
                        content_hash: hashes[i].clone(),
                        vector: forecast_embed::to_bytes(v),
                    })
                    .collect();
                for chunk in rows.chunks(WRITE_BATCH) {
                    self.store.put_embeddings(self.embedder.id(), chunk).await?;
                }
                let mut known = self.known.lock().expect("poisoned");
                for (&i, v) in step.iter().zip(vectors) {
                    known.insert(assets[i].id, (hashes[i].clone(), v.into()));
                }
            }
            tracing::info!(
                model = self.embedder.id(),
                computed = stats.computed,
                reused = stats.reused,
                seconds = started.elapsed().as_secs_f64(),
                "catalog embeddings computed and stored"
            );
        }
        let known = self.known.lock().expect("poisoned");
        let rows: Vec<Vec<f32>> = assets
            .iter()
            .map(|a| {
                known
                    .get(&a.id)
                    .map(|(_, v)| v.to_vec())
                    .unwrap_or_default()
            })
            .collect();
        let index = VectorIndex::new(&rows)
            .map_err(|e| Error::Internal(format!("catalog vectors: {e}")))?;
        Ok((index, stats))
    }
}

/// The `semantic` import over one catalog snapshot: embeds the texts
/// asked (one batch) and searches the snapshot's vectors.
pub struct SemanticSearch {
    embedder: Arc<Embedder>,
    index: VectorIndex,
}

impl SemanticSearch {
    /// Search over `index` (aligned with the catalog's entries) with
    /// `embedder`'s model.
    pub fn new(embedder: Arc<Embedder>, index: VectorIndex) -> Self {
        SemanticSearch { embedder, index }
    }
}

impl Semantic for SemanticSearch {
    fn nearest(&self, texts: &[String], k: usize) -> Vec<Vec<(u32, f32)>> {
        if texts.is_empty() {
            return Vec::new();
        }
        match self.embedder.embed(texts) {
            Ok(vectors) => vectors.iter().map(|v| self.index.nearest(v, k)).collect(),
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), "embedding a query failed; lexical matching only");
                vec![Vec::new(); texts.len()]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forecast_domain::Category;

    #[test]
    fn the_text_says_what_the_asset_is_and_its_hash_follows_it() {
        let mut a = Asset {
            id: 1,
            ticker: "TSLA".into(),
            name: "Tesla, Inc.".into(),
            category: Category::UsStocks,
            exchange: "NASDAQ".into(),
            currency: "USD".into(),
            country: "Austin, Texas".into(),
            sector: "Consumer Cyclical".into(),
            industry: "Auto Manufacturers".into(),
            website: "tesla.com".into(),
            summary: "Electric vehicles".into(),
            isin: String::new(),
            is_active: true,
            is_premium: false,
            data_source: forecast_domain::DataSource::Synthetic,
            data_version: 0,
            last_price_date: None,
        };
        let views = asset_views(&a);
        assert!(
            views[0].starts_with("Tesla, Inc. (TSLA): Electric car maker"),
            "{views:?}"
        );
        assert!(views.len() > 1, "facets of the description: {views:?}");
        let h = content_hash(&views);
        a.exchange = "NYSE".into();
        assert_eq!(
            content_hash(&asset_views(&a)),
            h,
            "the exchange is not embedded"
        );
        a.name = "Tesla".into();
        assert_ne!(content_hash(&asset_views(&a)), h);
        // A facet is part of the hash: an entry without a description has
        // its sector and industry as a view of their own.
        a.ticker = "TSLQ".into();
        let before = content_hash(&asset_views(&a));
        a.industry = "Electric vehicles".into();
        assert_ne!(content_hash(&asset_views(&a)), before);
    }

    #[test]
    fn a_single_view_keeps_the_hash_of_its_text() {
        // What was stored when one text was embedded per asset is the
        // same vector: reused, not recomputed.
        let text = "Acme (ACME). US Stocks".to_string();
        assert_eq!(
            content_hash(std::slice::from_ref(&text)),
            hex::encode(&Sha256::digest(text.as_bytes())[..16])
        );
        assert_ne!(
            content_hash(&[text.clone(), "Acme: Autos".into()]),
            content_hash(&[text])
        );
    }
}
