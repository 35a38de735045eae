//! The sentence-embedding model, run in process: all-MiniLM-L6-v2 (BERT,
//! 6 layers, 384 dimensions) on candle's CPU backend with the model's own
//! `tokenizer.json`, mean pooling over the tokens and L2 normalisation, so
//! a dot product of two vectors is their cosine similarity.
//!
//! Everything here is pure Rust (no BLAS, no C tokenizer regex engine), and
//! nothing touches the network: the weights are read from a folder the
//! Makefile fills from the package registry (`data/models/`, see
//! `data/models/PROVENANCE.md`).
//!
//! [`VectorIndex`] holds the catalog's vectors and answers the nearest
//! entries of a query vector by brute force (3,232 × 384 floats is 5 MB and
//! one pass over it takes well under a millisecond).

pub mod prominence;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use anyhow::{anyhow, Context};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Dimensions of a vector.
pub const DIMS: usize = 384;

/// Tokens a text is cut to. The model was trained on at most 256; catalog
/// texts and queries are far shorter, and the cost grows with the longest
/// text of a batch.
pub const MAX_TOKENS: usize = 128;

/// Texts embedded in one forward pass (texts are sorted by length first so
/// a batch pads little).
pub const BATCH: usize = 32;

/// The folder the model is read from when `FORECAST_MODEL_DIR` is unset,
/// relative to the working directory (the repository root for `make run`).
pub const DEFAULT_DIR: &str = "data/models/all-minilm-l6-v2";

/// The files a model folder must hold.
pub const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// A loaded sentence-embedding model.
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    id: String,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder").field("id", &self.id).finish()
    }
}

impl Embedder {
    /// Loads the model in `dir` (`config.json`, `tokenizer.json`,
    /// `model.safetensors`). The error names the folder, the missing file
    /// and how to get it.
    pub fn load(dir: &Path) -> anyhow::Result<Self> {
        for f in FILES {
            let p = dir.join(f);
            if !p.is_file() {
                return Err(anyhow!(
                    "the sentence-embedding model is missing: {} does not exist \
                     (run `make model` from the repository root, or point FORECAST_MODEL_DIR \
                     at a folder holding {})",
                    p.display(),
                    FILES.join(", ")
                ));
            }
        }
        let config: Config = serde_json::from_str(
            &std::fs::read_to_string(dir.join("config.json")).context("reading config.json")?,
        )
        .context("parsing config.json")?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| anyhow!("reading tokenizer.json: {e}"))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| anyhow!("tokenizer truncation: {e}"))?;
        let weights = dir.join("model.safetensors");
        let bytes = std::fs::read(&weights).context("reading model.safetensors")?;
        // The id names the weights, so vectors of another model are never
        // mixed with these.
        let digest = hex::encode(Sha256::digest(&bytes));
        let id = format!("all-minilm-l6-v2@{}", &digest[..12]);
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device)
            .context("reading model.safetensors")?;
        let model = BertModel::load(vb, &config).context("building the BERT model")?;
        Ok(Embedder {
            model,
            tokenizer,
            device,
            id,
        })
    }

    /// Names the model and its weights, e.g. `all-minilm-l6-v2@53aa51172d14`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The unit vectors of `texts`, in order, in batches of [`BATCH`].
    pub fn embed<S: AsRef<str> + Sync>(&self, texts: &[S]) -> anyhow::Result<Vec<Vec<f32>>> {
        self.embed_with_progress(texts, |_| {})
    }

    /// [`Embedder::embed`], calling `progress(done)` after each batch.
    ///
    /// Several batches run side by side, one per core, each on its own
    /// one-thread pool: candle splits each matrix product over every core,
    /// which on small batches keeps two cores about 1.3× as fast as one;
    /// a batch per core keeps both busy (docs/BENCHMARKS.md, issue 15).
    /// A single batch (a query) keeps candle's own splitting.
    pub fn embed_with_progress<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        mut progress: impl FnMut(usize),
    ) -> anyhow::Result<Vec<Vec<f32>>> {
        // Sort by length so a batch pads to similar lengths.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].as_ref().len());
        let chunks: Vec<&[usize]> = order.chunks(BATCH).collect();
        let mut out = vec![Vec::new(); texts.len()];
        let mut done = 0;
        // A batch's vectors into their texts' places, and the progress.
        let mut place = |chunk: &[usize], vectors: Vec<Vec<f32>>| {
            for (&i, v) in chunk.iter().zip(vectors) {
                out[i] = v;
            }
            done += chunk.len();
            progress(done);
        };
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(chunks.len());
        if workers <= 1 {
            for chunk in &chunks {
                let batch: Vec<&str> = chunk.iter().map(|&i| texts[i].as_ref()).collect();
                place(chunk, self.embed_batch(&batch)?);
            }
            return Ok(out);
        }
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel::<(usize, anyhow::Result<Vec<Vec<f32>>>)>();
        std::thread::scope(|scope| -> anyhow::Result<()> {
            for _ in 0..workers {
                let tx = tx.clone();
                let (next, failed, chunks) = (&next, &failed, &chunks);
                scope.spawn(move || {
                    let pool = match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
                        Ok(pool) => pool,
                        Err(e) => {
                            let _ = tx.send((usize::MAX, Err(anyhow!("a worker thread: {e}"))));
                            return;
                        }
                    };
                    pool.install(|| {
                        while !failed.load(Ordering::Relaxed) {
                            let at = next.fetch_add(1, Ordering::Relaxed);
                            let Some(chunk) = chunks.get(at) else { break };
                            let batch: Vec<&str> =
                                chunk.iter().map(|&i| texts[i].as_ref()).collect();
                            if tx.send((at, self.embed_batch(&batch))).is_err() {
                                break;
                            }
                        }
                    });
                });
            }
            drop(tx);
            for (at, vectors) in rx {
                match vectors {
                    Ok(v) => place(chunks[at], v),
                    Err(e) => {
                        // Stop the other workers; the scope waits for them.
                        failed.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                }
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The vectors of several entries' views (`views[i]` the texts of
    /// entry `i`), each entry's concatenated in order ([`VectorIndex::new`]
    /// reads them so). Every text of every entry goes through one sorted
    /// pass of [`Embedder::embed_with_progress`], so short facets batch
    /// together; `progress(done, total)` counts texts.
    pub fn embed_views<S: AsRef<str>>(
        &self,
        views: &[Vec<S>],
        mut progress: impl FnMut(usize, usize),
    ) -> anyhow::Result<Vec<Vec<f32>>> {
        let texts: Vec<&str> = views.iter().flatten().map(AsRef::as_ref).collect();
        let total = texts.len();
        let vectors = self.embed_with_progress(&texts, |done| progress(done, total))?;
        let mut vectors = vectors.into_iter();
        Ok(views
            .iter()
            .map(|v| vectors.by_ref().take(v.len()).flatten().collect())
            .collect())
    }

    /// One forward pass over `texts`.
    fn embed_batch(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| anyhow!("tokenizing: {e}"))?;
        let len = encodings[0].get_ids().len();
        let n = encodings.len();
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for e in &encodings {
            ids.extend(e.get_ids().iter().map(|&t| t as i64));
            mask.extend(e.get_attention_mask().iter().map(|&m| m as i64));
        }
        let ids = Tensor::from_vec(ids, (n, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?; // (n, len, DIMS)
                                                                     // Mean over the real tokens, then unit length.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (n, len, 1)
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (n, DIMS)
        let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?; // (n, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        let unit = mean.broadcast_div(&norms)?;
        Ok(unit.to_vec2::<f32>()?)
    }
}

/// One-line descriptions of well-known assets (`data/asset_descriptions.csv`:
/// what the company does, its products, people and nicknames), added to
/// their catalog text: the catalog's own summaries are often empty, and a
/// small model cannot know what "Samsung Electronics Co Ltd" makes.
const DESCRIPTIONS: &str = include_str!("../../../data/asset_descriptions.csv");

/// The description of `ticker` in [`DESCRIPTIONS`], if any.
pub fn description(ticker: &str) -> Option<&'static str> {
    static MAP: std::sync::OnceLock<std::collections::HashMap<String, String>> =
        std::sync::OnceLock::new();
    MAP.get_or_init(|| {
        DESCRIPTIONS
            .lines()
            .skip(1)
            .filter_map(|line| {
                let (ticker, rest) = line.split_once(',')?;
                let text = rest
                    .strip_prefix('"')
                    .and_then(|r| r.strip_suffix('"'))
                    .map(|r| r.replace("\"\"", "\""))
                    .unwrap_or_else(|| rest.to_string());
                Some((ticker.trim().to_string(), text.trim().to_string()))
            })
            .collect()
    })
    .get(ticker.trim())
    .map(String::as_str)
}

/// What a catalog entry's summary is marked with before the other names its
/// [`description`] gives it (the matcher indexes them as aliases).
pub const ALSO_KNOWN_AS: &str = "Also known as:";

/// The other names the [`description`] of `ticker` gives it: each
/// parenthesised single word of 2 to 8 capitals and digits with at least
/// two capitals ("TSMC", "MUFG", "GEICO"), in order, each once. Lower-case
/// words ("GPUs"), phrases and models ("F-35") are descriptions, not names.
pub fn also_known_as(ticker: &str) -> Vec<&'static str> {
    let Some(d) = description(ticker) else {
        return Vec::new();
    };
    let mut out: Vec<&'static str> = Vec::new();
    for part in d.split('(').skip(1) {
        let Some((inside, _)) = part.split_once(')') else {
            continue;
        };
        let name = (2..=8).contains(&inside.len())
            && inside
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
            && inside.bytes().filter(u8::is_ascii_uppercase).count() >= 2;
        if name && !out.contains(&inside) {
            out.push(inside);
        }
    }
    out
}

/// The summary the matcher gets for an entry: the catalog's, then
/// [`ALSO_KNOWN_AS`] and the [`also_known_as`] names when there are any.
pub fn matcher_summary(ticker: &str, summary: &str) -> String {
    let names = also_known_as(ticker);
    if names.is_empty() {
        return summary.to_string();
    }
    format!(
        "{} {ALSO_KNOWN_AS} {}.",
        summary.trim_end(),
        names.join(", ")
    )
    .trim_start()
    .to_string()
}

/// The whole text of a catalog entry, the first of its [`catalog_views`]:
/// its name, ticker and [`description`] when it has one; else every field
/// that says what it is (not its exchange, currency or website).
fn catalog_text(
    name: &str,
    ticker: &str,
    category: &str,
    sector: &str,
    industry: &str,
    country: &str,
    summary: &str,
) -> String {
    // A description says it best, and a short text keeps its meaning
    // sharp (mean pooling dilutes a long one).
    if let Some(d) = description(ticker) {
        return format!("{} ({}): {d}", name.trim(), ticker.trim());
    }
    let mut text = format!("{} ({}). {}", name.trim(), ticker.trim(), category.trim());
    for field in [sector, industry, country] {
        let field = field.trim();
        if !field.is_empty() {
            text.push_str("; ");
            text.push_str(field);
        }
    }
    let summary = summary.trim();
    if !summary.is_empty() {
        text.push_str(". ");
        text.push_str(summary);
    }
    text
}

/// Most views one entry is embedded as (its whole text and its facets).
pub const MAX_VIEWS: usize = 6;

/// The texts a catalog entry is embedded as, its views: first the whole
/// [`catalog_text`], then its facets, each a short text about one side of
/// the entry, named ("Delta Air Lines: Transportation, Airlines"):
///
/// - with a [`description`], each of its clauses (split at `:`, `;` and
///   sentence ends; the clause that only names the entry is dropped);
/// - else what it does (sector and industry), where (country or place),
///   and the product list of its summary (`Products: …`).
///
/// A search scores an entry by its best view ([`VectorIndex::nearest`]):
/// mean pooling dilutes a long text, so a short query ("airline", "soft
/// drinks") is closer to the facet that says just that than to the whole.
/// An entry without facets has one view, its whole text.
pub fn catalog_views(
    name: &str,
    ticker: &str,
    category: &str,
    sector: &str,
    industry: &str,
    country: &str,
    summary: &str,
) -> Vec<String> {
    let whole = catalog_text(name, ticker, category, sector, industry, country, summary);
    let name = name.trim();
    let mut facets: Vec<String> = Vec::new();
    if let Some(d) = description(ticker) {
        facets.extend(clauses(d).into_iter().filter(|c| !names_only(c, name)));
    } else {
        let mut what: Vec<&str> = Vec::new();
        for field in [sector, industry] {
            let field = field.trim();
            if !field.is_empty() && !what.iter().any(|w| same_words(w, field)) {
                what.push(field);
            }
        }
        if !what.is_empty() {
            facets.push(what.join(", "));
        }
        if let Some((_, products)) = summary.split_once("Products:") {
            let products = products.split('|').next().unwrap_or_default();
            let products = products.split_whitespace().collect::<Vec<_>>().join(" ");
            if !products.is_empty() {
                facets.push(products);
            }
        }
    }
    let mut views = vec![whole];
    for facet in facets {
        let view = format!("{name}: {facet}");
        if views.len() < MAX_VIEWS && !views.contains(&view) {
            views.push(view);
        }
    }
    views
}

/// The clauses of a description: split at `:` and `;`, and at `.` ending
/// a sentence (then a space and a capital, or the end, after a word of at
/// least three letters, so "Inc. tools" or "U.S. Listed" do not split),
/// trimmed, empty ones dropped.
fn clauses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let end = match c {
            ':' | ';' => true,
            '.' => {
                let rest = chars[i + 1..].iter().skip_while(|n| n.is_whitespace());
                let blank = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
                let sentence = rest.clone().next().is_none_or(|n| n.is_uppercase());
                let word = cur
                    .rsplit(|w: char| !w.is_alphanumeric())
                    .next()
                    .unwrap_or("");
                blank && sentence && word.chars().count() >= 3
            }
            _ => false,
        };
        if end {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|c| c.trim().trim_end_matches('.').trim().to_string())
        .filter(|c| c.chars().any(char::is_alphanumeric))
        .collect()
}

/// The words of a text, lower case, without punctuation.
fn words(t: &str) -> Vec<String> {
    t.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether two texts have the same words, case and punctuation aside.
fn same_words(a: &str, b: &str) -> bool {
    words(a) == words(b)
}

/// Whether every word of `clause` is a word of `name` ("Walt Disney" of
/// "The Walt Disney Company"): it names the entry and says nothing else.
fn names_only(clause: &str, name: &str) -> bool {
    let name = words(name);
    words(clause).iter().all(|w| name.contains(w))
}

/// Unit vectors of a catalog, searched by brute force: entry `i` has one
/// or more rows (its [`catalog_views`]), and scores as its best row.
#[derive(Debug, Clone, Default)]
pub struct VectorIndex {
    data: Vec<f32>,
    /// The entry of each row.
    owner: Vec<u32>,
    entries: usize,
}

impl VectorIndex {
    /// An index over `vectors`, element `i` the vectors of entry `i`
    /// concatenated: one or more rows of [`DIMS`] floats each.
    pub fn new(vectors: &[Vec<f32>]) -> anyhow::Result<Self> {
        let mut data = Vec::with_capacity(vectors.len() * DIMS);
        let mut owner = Vec::with_capacity(vectors.len());
        for (i, v) in vectors.iter().enumerate() {
            if v.is_empty() || v.len() % DIMS != 0 {
                return Err(anyhow!(
                    "entry {i} has {} floats, not one or more vectors of {DIMS}",
                    v.len()
                ));
            }
            data.extend_from_slice(v);
            owner.extend(std::iter::repeat_n(i as u32, v.len() / DIMS));
        }
        Ok(VectorIndex {
            data,
            owner,
            entries: vectors.len(),
        })
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// Vectors held (an entry has one per view).
    pub fn rows(&self) -> usize {
        self.owner.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The `k` entries most similar to `query` (a unit vector), most
    /// similar first, each with the cosine similarity of its closest view.
    pub fn nearest(&self, query: &[f32], k: usize) -> Vec<(u32, f32)> {
        if query.len() != DIMS || k == 0 || self.entries == 0 {
            return Vec::new();
        }
        let mut best = vec![f32::NEG_INFINITY; self.entries];
        for (row, &entry) in self.data.chunks_exact(DIMS).zip(&self.owner) {
            let s = dot(row, query);
            let b = &mut best[entry as usize];
            if s > *b {
                *b = s;
            }
        }
        let mut scored: Vec<(u32, f32)> = best
            .into_iter()
            .enumerate()
            .map(|(i, s)| (i as u32, s))
            .collect();
        let k = k.min(scored.len());
        scored.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Vector bytes as stored: little-endian `f32`s.
pub fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The inverse of [`to_bytes`]: one or more vectors concatenated, so
/// `None` unless the length is a non-zero multiple of [`DIMS`] floats.
pub fn from_bytes(b: &[u8]) -> Option<Vec<f32>> {
    (!b.is_empty() && b.len().is_multiple_of(DIMS * 4)).then(|| {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(i: usize) -> Vec<f32> {
        let mut v = vec![0.0; DIMS];
        v[i] = 1.0;
        v
    }

    #[test]
    fn nearest_is_sorted_and_cut() {
        let mut mixed = vec![0.0; DIMS];
        mixed[0] = 0.6;
        mixed[1] = 0.8;
        let index = VectorIndex::new(&[unit(0), unit(1), mixed, unit(2)]).unwrap();
        assert_eq!(index.len(), 4);
        let got = index.nearest(&unit(1), 2);
        assert_eq!(got.iter().map(|c| c.0).collect::<Vec<_>>(), vec![1, 2]);
        assert!((got[1].1 - 0.8).abs() < 1e-6);
        assert!(index.nearest(&unit(1), 0).is_empty());
        assert!(index.nearest(&[1.0], 3).is_empty());
        assert_eq!(index.nearest(&unit(1), 10).len(), 4);
        assert!(VectorIndex::new(&[vec![1.0]]).is_err());
    }

    #[test]
    fn descriptions_are_read() {
        assert_eq!(also_known_as("TSM"), ["TSMC"]);
        assert_eq!(also_known_as("BRK-B"), ["GEICO", "BNSF"]);
        assert!(also_known_as("LMT").is_empty(), "(F-35)");
        // Descriptions and lower-case words are not names.
        assert!(also_known_as("NVDA").is_empty(), "(GPUs)");
        assert!(also_known_as("005930.KS").is_empty(), "(DRAM, NAND flash)");
        assert!(also_known_as("NOPE").is_empty());
        assert_eq!(
            matcher_summary("TSM", "Hsinchu. Products: chips"),
            "Hsinchu. Products: chips Also known as: TSMC."
        );
        assert_eq!(matcher_summary("TSM", ""), "Also known as: TSMC.");
        assert_eq!(matcher_summary("NVDA", "as is "), "as is ");
        assert!(description("TSLA").unwrap().contains("Elon Musk"));
        assert!(description("PG").unwrap().starts_with("Procter & Gamble"));
        assert_eq!(description("NOPE"), None);
        let text = catalog_text("Tesla", "TSLA", "US Stocks", "", "Autos", "", "");
        assert!(
            text.starts_with("Tesla (TSLA): Electric car maker"),
            "{text}"
        );
        let other = catalog_text("Acme", "ACME", "US Stocks", "", "Autos", "Ohio", "Cars.");
        assert_eq!(other, "Acme (ACME). US Stocks; Autos; Ohio. Cars.");
    }

    #[test]
    fn an_entry_scores_as_its_best_view() {
        let mut mixed = vec![0.0; DIMS];
        mixed[0] = 0.6;
        mixed[1] = 0.8;
        // Entry 0 has two views (unit 0 and unit 2), entry 1 one.
        let two: Vec<f32> = unit(0).into_iter().chain(unit(2)).collect();
        let index = VectorIndex::new(&[two, mixed.clone()]).unwrap();
        assert_eq!((index.len(), index.rows()), (2, 3));
        let got = index.nearest(&unit(2), 2);
        assert_eq!(got[0], (0, 1.0), "its second view");
        assert_eq!(got[1].0, 1);
        let got = index.nearest(&mixed, 2);
        assert_eq!(got[0].0, 1);
        assert!((got[1].1 - 0.6).abs() < 1e-6, "entry 0 by its first view");
        assert!(VectorIndex::new(&[Vec::new()]).is_err(), "no view");
        assert!(VectorIndex::new(&[vec![0.0; DIMS + 1]]).is_err());
    }

    #[test]
    fn views_are_the_whole_text_then_its_facets() {
        let views = catalog_views("Tesla, Inc.", "TSLA", "US Stocks", "", "Autos", "", "");
        assert_eq!(
            views[0],
            catalog_text("Tesla, Inc.", "TSLA", "US Stocks", "", "Autos", "", "")
        );
        // Each clause of the description, named.
        assert_eq!(views[1], "Tesla, Inc.: Electric car maker");
        assert!(views[2].starts_with("Tesla, Inc.: electric vehicles Model 3"));
        assert_eq!(views.last().unwrap(), "Tesla, Inc.: CEO Elon Musk");
        // A clause that only names the entry ("Walt Disney: …") is no facet.
        let dis = catalog_views(
            "The Walt Disney Company",
            "DIS",
            "US Stocks",
            "",
            "",
            "",
            "",
        );
        assert!(
            dis.iter()
                .all(|v| v != "The Walt Disney Company: Walt Disney"),
            "{dis:?}"
        );
        // Without a description: what it does and its products.
        let other = catalog_views(
            "Acme",
            "ACME",
            "US Stocks",
            "Industrials",
            "Water heaters",
            "Ohio",
            "Acme (Ohio). Products: Boilers , tanks | more",
        );
        assert_eq!(
            other[1..],
            ["Acme: Industrials, Water heaters", "Acme: Boilers , tanks"]
        );
        // Nothing but a name: one view.
        assert_eq!(
            catalog_views("Zed", "ZED", "Crypto", "", "", "", "").len(),
            1
        );
        for v in [views, dis, other] {
            assert!(v.len() <= MAX_VIEWS);
        }
    }

    #[test]
    fn clauses_split_at_sentence_ends_not_abbreviations() {
        assert_eq!(
            clauses("Maker: cars, trucks; U.S. listed. Founded 1903 by Henry Ford."),
            [
                "Maker",
                "cars, trucks",
                "U.S. listed",
                "Founded 1903 by Henry Ford"
            ]
        );
        assert_eq!(clauses("Acme Inc. tools"), ["Acme Inc. tools"]);
    }

    #[test]
    fn bytes_round_trip() {
        let v: Vec<f32> = (0..DIMS).map(|i| i as f32 / 7.0 - 3.0).collect();
        assert_eq!(from_bytes(&to_bytes(&v)), Some(v.clone()));
        assert_eq!(from_bytes(&[0; 5]), None);
        assert_eq!(from_bytes(&[]), None);
        // An entry's views, concatenated.
        let two: Vec<f32> = v.iter().chain(&v).copied().collect();
        assert_eq!(from_bytes(&to_bytes(&two)), Some(two));
    }

    #[test]
    fn a_missing_model_names_the_folder_and_the_fix() {
        let err = Embedder::load(Path::new("/nonexistent/model")).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("/nonexistent/model/config.json"), "{text}");
        assert!(text.contains("make model"), "{text}");
    }

    /// The model `make model` fetches, or `None` (saying the test is
    /// skipped) when it is absent.
    fn real_model() -> Option<Embedder> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../")
            .join(DEFAULT_DIR);
        let model = Embedder::load(&dir).ok();
        if model.is_none() {
            println!("SKIPPED: no model at {}", dir.display());
        }
        model
    }

    /// With the real model (fetched by `make model`): similar texts are
    /// closer than unrelated ones, and vectors are unit length. Skipped
    /// when the model is absent.
    #[test]
    fn the_real_model_embeds_meaning() {
        let Some(model) = real_model() else {
            return;
        };
        let v = model
            .embed(&[
                "electric car maker",
                "Tesla, Inc. electric vehicles",
                "a bank in Japan",
                "electric car maker",
            ])
            .unwrap();
        for x in &v {
            let n: f32 = x.iter().map(|a| a * a).sum();
            assert!((n - 1.0).abs() < 1e-4);
        }
        assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]));
        assert!((dot(&v[0], &v[3]) - 1.0).abs() < 1e-4, "deterministic");
        // Batched and single answers agree (padding does not leak).
        let single = model.embed(&["Tesla, Inc. electric vehicles"]).unwrap();
        assert!((dot(&single[0], &v[1]) - 1.0).abs() < 1e-4);
    }

    /// With the real model: many batches, embedded side by side on every
    /// core, come back each in its text's place, equal to the text embedded
    /// alone, with progress counted up to the whole. Skipped when the model
    /// is absent.
    #[test]
    fn batches_side_by_side_keep_each_text_in_its_place() {
        let Some(model) = real_model() else {
            return;
        };
        let texts: Vec<String> = (0..3 * BATCH + 5)
            .map(|i| format!("company number {i} makes {}", "widgets ".repeat(i % 7)))
            .collect();
        let mut seen = Vec::new();
        let all = model
            .embed_with_progress(&texts, |done| seen.push(done))
            .unwrap();
        assert_eq!(all.len(), texts.len());
        assert_eq!(seen.len(), 4, "one report per batch: {seen:?}");
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
        assert_eq!(seen.last(), Some(&texts.len()));
        for i in [0, BATCH, 2 * BATCH + 3, texts.len() - 1] {
            let alone = model.embed(&texts[i..=i]).unwrap();
            assert!((dot(&alone[0], &all[i]) - 1.0).abs() < 1e-4, "text {i}");
        }
    }

    /// With the real model: a short query is closer to the facet that says
    /// it than to the entry's whole text, the index scores the entry by
    /// that facet, and [`Embedder::embed_views`] keeps each entry's views
    /// together and in order. Skipped when the model is absent.
    #[test]
    fn an_entry_is_found_by_a_facet() {
        let Some(model) = real_model() else {
            return;
        };
        let args = |name, ticker, sector, industry, summary| {
            catalog_views(
                name,
                ticker,
                "US Stocks",
                sector,
                industry,
                "Texas",
                summary,
            )
        };
        let entries = [
            args("Acme Holdings", "ACMH", "Transportation", "Airlines", ""),
            args(
                "Bolt Corporation",
                "BOLT",
                "Industrials",
                "Machinery",
                "Bolt Corporation (Dallas, Texas). Products: Forklifts Cranes",
            ),
        ];
        let whole: Vec<&String> = entries.iter().map(|v| &v[0]).collect();
        let vectors = model.embed_views(&entries, |_, _| {}).unwrap();
        assert_eq!(vectors[0].len(), entries[0].len() * DIMS);
        let index = VectorIndex::new(&vectors).unwrap();
        let whole_only = VectorIndex::new(&model.embed(&whole).unwrap()).unwrap();
        for (query, entry) in [("airline", 0), ("forklift maker", 1)] {
            let q = &model.embed(&[query]).unwrap()[0];
            let views = index.nearest(q, 2);
            let single = whole_only.nearest(q, 2);
            assert_eq!(views[0].0, entry, "{query}: {views:?}");
            let of = |list: &[(u32, f32)]| list.iter().find(|c| c.0 == entry).unwrap().1;
            assert!(
                of(&views) > of(&single) + 0.05,
                "{query}: {views:?} {single:?}"
            );
        }
        // Each entry's views, in order, as if embedded one by one.
        let alone = model.embed(&entries[1]).unwrap();
        for (i, v) in alone.iter().enumerate() {
            assert!((dot(v, &vectors[1][i * DIMS..(i + 1) * DIMS]) - 1.0).abs() < 1e-4);
        }
    }
}
