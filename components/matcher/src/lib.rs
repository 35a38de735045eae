//! The default ticker matcher behind the `matcher` WIT world: free text — a
//! ticker, part of a name, a misspelling, a brand or product, "bitcoin",
//! "euro dollar", "gold", "nikkei", a CS2 case — to at most a few assets of
//! the active catalog, each with a calibrated confidence.
//!
//! The algorithm is plain Rust with no dependency ([`Index`], unit-tested
//! natively); the WIT glue below only exists on `wasm32`.
//!
//! - [`Index::new`] tokenises every catalog entry once (folded, stemmed,
//!   stop words dropped — [`text`]) into posting lists by field: name (and
//!   adjacent name words joined), website labels, the product list of the
//!   summary, weak fields (sector, industry, category, place), plus the
//!   built-in [`aliases`]; and into maps of tickers (as typed, compact,
//!   without exchange suffix or quote part) and exact core names (without
//!   corporate suffixes, or the suffix a whole category shares, such as
//!   "Futures" or "Case").
//! - [`Index::find`] takes the best of: whole-query ticker matches,
//!   website domain, exact core name, and a word score. The word score
//!   looks each query word up exactly, else by prefix and by trigram
//!   candidates verified with Damerau–Levenshtein; its confidence is the
//!   tier of the strongest field matched (see [`index`]) scaled by the
//!   IDF-weighted share of the query those matches explain, capped for
//!   corrected misspellings, and damped when many entries tie.
//! - [`Index::rerank`] lets a language model reorder an unsure answer.
//!
//! Confidence scale: 0.99 exact ticker; 0.97 ticker without punctuation;
//! 0.90–0.93 ticker without suffix; 0.95 exact name or website domain;
//! 0.90 alias; 0.70–0.92 query words in a name (less when other query
//! words stay unexplained or many entries fit); about 0.78 a product word
//! found in one entry only, less when more entries use it; 0.40–0.75 a
//! corrected misspelling (0.5–0.7 for one typo in a name); at most 0.50 an
//! industry or place word; nothing under [`MIN_CONFIDENCE`] (0.35) is
//! returned. A language model's first choice gets at least 0.90.

pub mod aliases;
pub mod eval;
mod hash;
pub mod hybrid;
pub mod index;
pub mod rerank;
pub mod text;

pub use index::{Entry, Index, MIN_CONFIDENCE};

#[cfg(test)]
mod tests;

/// Results the component returns at most, whatever the caller asks.
pub const MAX_LIMIT: u32 = 10;

/// Candidates the component computes before the model step, so a model can
/// promote one the caller's limit would have cut.
pub const RERANK_POOL: usize = rerank::MAX_SHOWN;

/// What the component's `find` does with a built index: the hybrid answer
/// for `text` ([`hybrid::find`]: lexical and semantic, one answer per
/// mention for a sentence naming several assets), a single query's answer
/// reordered by `ask` when unsure, cut to `limit` (at most [`MAX_LIMIT`]).
/// `near` is the host's semantic search (an empty answer without a model).
pub fn find_with_model(
    index: &Index,
    text: &str,
    limit: u32,
    ask: impl FnOnce(&str) -> Option<String>,
    mut near: impl hybrid::Near,
) -> Vec<(u32, f64)> {
    let limit = limit.min(MAX_LIMIT) as usize;
    if limit == 0 {
        return Vec::new();
    }
    let pool = limit.max(RERANK_POOL);
    let (found, several) = hybrid::find(index, text, pool, pool, &mut near);
    let mut out = if several {
        found
    } else {
        index.rerank(text, found, ask)
    };
    out.truncate(limit);
    out
}

#[cfg(target_arch = "wasm32")]
mod component {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "matcher",
    });

    use std::cell::RefCell;

    use exports::forecast::plugins::matching::{Candidate, CatalogEntry, Guest};
    use forecast::plugins::{llm, semantic};

    thread_local! {
        /// The instance's index; `None` until `load-catalog`.
        static INDEX: RefCell<Option<super::Index>> = const { RefCell::new(None) };
    }

    struct Component;

    impl Guest for Component {
        fn matcher_version() -> String {
            env!("CARGO_PKG_VERSION").to_string()
        }

        fn load_catalog(entries: Vec<CatalogEntry>) {
            let entries = entries
                .into_iter()
                .map(|e| super::Entry {
                    ticker: e.ticker,
                    name: e.name,
                    category: e.category,
                    exchange: e.exchange,
                    country: e.country,
                    sector: e.sector,
                    industry: e.industry,
                    website: e.website,
                    summary: e.summary,
                })
                .collect();
            let index = super::Index::new(entries);
            INDEX.with(|slot| *slot.borrow_mut() = Some(index));
        }

        fn find(text: String, limit: u32) -> Vec<Candidate> {
            INDEX.with(|slot| {
                let slot = slot.borrow();
                let Some(index) = slot.as_ref() else {
                    return Vec::new();
                };
                let near = |texts: &[String], k: u32| -> Vec<Vec<(u32, f32)>> {
                    semantic::nearest(texts, k)
                        .into_iter()
                        .map(|list| list.into_iter().map(|n| (n.entry, n.similarity)).collect())
                        .collect()
                };
                super::find_with_model(index, &text, limit, llm::complete, near)
                    .into_iter()
                    .map(|(entry, confidence)| Candidate { entry, confidence })
                    .collect()
            })
        }
    }

    export!(Component);
}
