//! The catalog's sentence embeddings (issue 15): one vector per active
//! asset, computed from its name, ticker, category, sector, industry,
//! country and summary by the in-process model (`forecast-embed`), stored
//! by (model, asset) with the hash of that text, so restarts and replicas
//! reuse them and a catalog change re-embeds only the entries whose text
//! changed. [`SemanticSearch`] answers the matcher's `semantic` import over
//! one catalog snapshot.

use std::collections::HashMap;
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

/// The text an asset is embedded from ([`forecast_embed::catalog_text`]).
pub fn asset_text(a: &Asset) -> String {
    forecast_embed::catalog_text(
        &a.name,
        &a.ticker,
        a.category.as_str(),
        &a.sector,
        &a.industry,
        &a.country,
        &a.summary,
    )
}

/// The hash a stored vector is checked against.
pub fn content_hash(text: &str) -> String {
    hex::encode(&Sha256::digest(text.as_bytes())[..16])
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
}

impl CatalogEmbeddings {
    /// Vectors of `embedder`'s model, stored in `store`.
    pub fn new(embedder: Arc<Embedder>, store: Arc<dyn EmbeddingStore>) -> Self {
        CatalogEmbeddings {
            embedder,
            store,
            known: Mutex::default(),
            computing: tokio::sync::Mutex::new(()),
        }
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
                        .is_none_or(|(h, _)| *h != content_hash(&asset_text(a)))
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

    /// The vectors of `assets`, row `i` for `assets[i]`: those known are
    /// reused, the rest computed in batches on a blocking thread (calling
    /// `progress(done, to_compute)`) and stored.
    pub async fn index(
        &self,
        assets: &[Asset],
        progress: impl FnMut(usize, usize) + Send + 'static,
    ) -> Result<(VectorIndex, EmbedStats), Error> {
        let _one = self.computing.lock().await;
        let texts: Vec<String> = assets.iter().map(asset_text).collect();
        let hashes: Vec<String> = texts.iter().map(|t| content_hash(t)).collect();
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
            let embedder = self.embedder.clone();
            let batch: Vec<String> = todo.iter().map(|&i| texts[i].clone()).collect();
            let total = batch.len();
            let mut progress = progress;
            let vectors = tokio::task::spawn_blocking(move || {
                embedder.embed_with_progress(&batch, |done| progress(done, total))
            })
            .await
            .map_err(|e| Error::Internal(format!("embedding task failed: {e}")))?
            .map_err(|e| Error::Internal(format!("embedding the catalog failed: {e:#}")))?;
            let rows: Vec<StoredEmbedding> = todo
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
            for (&i, v) in todo.iter().zip(vectors) {
                known.insert(assets[i].id, (hashes[i].clone(), v.into()));
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
        let text = asset_text(&a);
        assert!(
            text.starts_with("Tesla, Inc. (TSLA): Electric car maker"),
            "{text}"
        );
        let h = content_hash(&text);
        a.exchange = "NYSE".into();
        assert_eq!(
            content_hash(&asset_text(&a)),
            h,
            "the exchange is not embedded"
        );
        a.name = "Tesla".into();
        assert_ne!(content_hash(&asset_text(&a)), h);
    }
}
