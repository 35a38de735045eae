//! The default ticker matcher behind the `matcher` WIT world: free text — a
//! ticker, part of a name, a misspelling, a brand or product, "bitcoin",
//! "euro dollar", "gold", "nikkei", a CS2 case — to at most a few assets of
//! the active catalog, each with a calibrated confidence.
//!
//! The algorithm is plain Rust with no dependency ([`Index`], unit-tested
//! natively); the component `matcher` (in `components/`) wraps it behind the
//! WIT world, and the host's evaluation runs it natively with the real
//! sentence-embedding model. It lives in `crates/` because both sides
//! compile it (decision 0095).
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
//! Raw score scale: 0.99 exact ticker or ISIN; 0.97 ticker without
//! punctuation; 0.90–0.93 ticker without suffix; 0.96–0.93 an asset class
//! ("oil": the future, then its ETFs; namesakes damped); 0.95 exact name
//! or website domain; 0.90 alias; 0.70–0.92 query words in a name (less
//! when other query words stay unexplained or many entries fit); about
//! 0.78 a product word found in one entry only, less when more entries use
//! it; 0.40–0.75 a corrected misspelling (0.5–0.7 for one typo in a name);
//! at most 0.50 an industry or place word; nothing under
//! [`MIN_CONFIDENCE`] (0.35) is returned. A language model's first choice
//! gets at least 0.90. Then a vehicle word ("ETF", "index") lifts its
//! category, prominence raises the better-known ([`hybrid::adjust`]), and
//! the reported confidence is the raw score calibrated on held-out data
//! ([`calibration`]): of answers reported at 0.9 or more, at least 90 %
//! were right.
//!
//! A text naming several assets ("I own apple, tesla and some bitcoin",
//! "bitcoin ethereum solana", a pasted column) is read as mentions
//! ([`hybrid::mentions`]); [`find_mentions_with_model`] answers each.

pub mod aliases;
pub mod calibration;
pub mod classes;
pub mod eval;
mod hash;
pub mod hybrid;
pub mod index;
pub mod rerank;
pub mod text;

pub use hybrid::Mention;
pub use index::{Entry, Index, Prior, MIN_CONFIDENCE};

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
    near: impl hybrid::Near,
) -> Vec<(u32, f64)> {
    let (found, several) = find_inner(index, text, limit, ask, near);
    if several {
        // Each is its mention's first candidate.
        found
            .into_iter()
            .map(|(id, raw)| (id, calibration::calibrate(raw, 0)))
            .collect()
    } else {
        calibrated(found)
    }
}

/// [`find_with_model`] with the raw scores, before calibration (for
/// fitting [`calibration::FIRST`] and [`calibration::OTHERS`]).
pub fn find_raw(
    index: &Index,
    text: &str,
    limit: u32,
    ask: impl FnOnce(&str) -> Option<String>,
    near: impl hybrid::Near,
) -> Vec<(u32, f64)> {
    find_inner(index, text, limit, ask, near).0
}

/// [`find_raw`], and whether the text named several assets (one answer
/// per mention).
fn find_inner(
    index: &Index,
    text: &str,
    limit: u32,
    ask: impl FnOnce(&str) -> Option<String>,
    mut near: impl hybrid::Near,
) -> (Vec<(u32, f64)>, bool) {
    let limit = limit.min(MAX_LIMIT) as usize;
    if limit == 0 {
        return (Vec::new(), false);
    }
    let pool = limit.max(RERANK_POOL);
    let (found, several) = hybrid::find(index, text, pool, pool, &mut near);
    let mut out = if several {
        found
    } else {
        index.rerank(text, found, ask)
    };
    out.truncate(limit);
    (out, several)
}

/// What the component's `find-mentions` does: [`hybrid::find_mentions`],
/// a single mention reordered by `ask` when unsure (as in
/// [`find_with_model`]), each mention's candidates cut to `limit` (at most
/// [`MAX_LIMIT`]), confidences calibrated.
pub fn find_mentions_with_model(
    index: &Index,
    text: &str,
    limit: u32,
    ask: impl FnOnce(&str) -> Option<String>,
    near: impl hybrid::Near,
) -> Vec<Mention> {
    let mut found = find_mentions_raw(index, text, limit, ask, near);
    for m in &mut found {
        m.candidates = calibrated(std::mem::take(&mut m.candidates));
    }
    found
}

/// [`find_mentions_with_model`] with the raw scores.
pub fn find_mentions_raw(
    index: &Index,
    text: &str,
    limit: u32,
    ask: impl FnOnce(&str) -> Option<String>,
    mut near: impl hybrid::Near,
) -> Vec<Mention> {
    let limit = limit.min(MAX_LIMIT) as usize;
    if limit == 0 {
        return Vec::new();
    }
    let pool = limit.max(RERANK_POOL);
    let mut found = hybrid::find_mentions(index, text, pool, pool, &mut near);
    if let [one] = found.as_mut_slice() {
        one.candidates = index.rerank(text, std::mem::take(&mut one.candidates), ask);
    }
    for m in &mut found {
        m.candidates.truncate(limit);
    }
    found
}

/// `found` (best first) with each confidence calibrated
/// ([`calibration::calibrate`], by rank); the order is kept.
pub fn calibrated(found: Vec<(u32, f64)>) -> Vec<(u32, f64)> {
    let mut out: Vec<(u32, f64)> = Vec::with_capacity(found.len());
    for (rank, (id, raw)) in found.into_iter().enumerate() {
        let mut c = calibration::calibrate(raw, rank);
        // Never above the one before: the list stays sorted.
        if let Some(&(_, before)) = out.last() {
            c = c.min(before);
        }
        out.push((id, c));
    }
    out
}
