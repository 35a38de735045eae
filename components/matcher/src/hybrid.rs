//! Hybrid ranking (issue 15): the lexical index and the host's
//! sentence-embedding search (the WIT `semantic` import, a closure here)
//! combined into one confidence, and whole sentences naming several assets
//! ("I own apple, tesla and some bitcoin") split into mentions, one answer
//! per mention.
//!
//! - A query is first read as mentions ([`mentions`]): lead-in words ("I
//!   own", "my portfolio:") dropped, then split on commas, semicolons,
//!   colons, "and", "&", "+" and line breaks, or — for a plain list of
//!   tickers such as "msft nvda amzn" — on spaces. When every mention names
//!   an asset lexically ([`LIST_PART_LEXICAL`]) and at least two different
//!   assets are found, the answer is each mention's best asset, best first;
//!   otherwise the text is one query ("ketchup and mac and cheese" is one
//!   company described, not three).
//! - One query: the lexical candidates and the semantic neighbours meet in
//!   one list. A neighbour's cosine similarity becomes a confidence by
//!   [`semantic_confidence`]; an entry found both ways gets the stronger of
//!   the two raised towards 1 by the weaker ([`combine`]). An exact ticker
//!   or name (lexical ≥ [`LEXICAL_SURE`]) skips the model.
//! - Gibberish stays empty: a neighbour alone needs a cosine of at least
//!   [`SEMANTIC_FLOOR`] and a lead over the rest of the catalog.

use crate::index::{Index, MIN_CONFIDENCE};
use crate::text::fold;

/// Lexical confidence at which the model is not asked (exact tickers,
/// names, domains).
pub const LEXICAL_SURE: f64 = 0.95;
/// Neighbours asked per text.
pub const NEIGHBOURS: u32 = 10;
/// Cosine under which a neighbour says nothing.
pub const SEMANTIC_FLOOR: f64 = 0.40;
/// Cosine at which a neighbour reaches [`SEMANTIC_MAX`]. The host scores
/// an entry by the closest of its views (its whole text and short facets,
/// `forecast_embed::catalog_views`), so good neighbours reach 0.7–0.85:
/// a lower cap would give many of them the same confidence and let the
/// catalog's order, not the model, rank them.
pub const SEMANTIC_FULL: f64 = 0.80;
/// The most confidence similarity alone gives.
pub const SEMANTIC_MAX: f64 = 0.88;
/// The closest neighbour's lead over the second, times this, is added to
/// its confidence (at most [`LEAD_BONUS_MAX`]): a clear first choice of
/// the model counts more than one of many near-ties.
pub const LEAD_BONUS: f64 = 2.0;
/// Cap of the lead bonus.
pub const LEAD_BONUS_MAX: f64 = 0.2;
/// Most mentions read in one text (the host asks for at most 3 answers).
pub const MAX_MENTIONS: usize = 6;
/// Lexical confidence every part of a list must reach for the text to be
/// read as several assets: a name, alias, ticker or product (a misspelt
/// name reaches it too). "ketchup and mac and cheese" or "theme parks and
/// animated films" name no asset part by part, so they are one
/// description for the model.
pub const LIST_PART_LEXICAL: f64 = 0.70;

/// The semantic search: for each text, (entry, cosine) closest first.
pub trait Near: FnMut(&[String], u32) -> Vec<Vec<(u32, f32)>> {}
impl<F: FnMut(&[String], u32) -> Vec<Vec<(u32, f32)>>> Near for F {}

/// The confidence a cosine similarity gives on its own: 0 under
/// [`SEMANTIC_FLOOR`], rising linearly to [`SEMANTIC_MAX`] at
/// [`SEMANTIC_FULL`].
pub fn semantic_confidence(cosine: f64) -> f64 {
    if cosine < SEMANTIC_FLOOR {
        return 0.0;
    }
    let t = ((cosine - SEMANTIC_FLOOR) / (SEMANTIC_FULL - SEMANTIC_FLOOR)).clamp(0.0, 1.0);
    MIN_CONFIDENCE + t * (SEMANTIC_MAX - MIN_CONFIDENCE)
}

/// Two confidences of one entry: the stronger, raised towards 1 by half
/// the weaker's share of what is left. Stays in [0, 1].
pub fn combine(lexical: f64, semantic: f64) -> f64 {
    let (hi, lo) = if lexical >= semantic {
        (lexical, semantic)
    } else {
        (semantic, lexical)
    };
    (hi + 0.5 * lo * (1.0 - hi)).clamp(0.0, 1.0)
}

/// Words that only introduce or pad a mention ("I own", "some", "shares
/// of"), dropped at its edges.
const FILLER: &[&str] = &[
    "i",
    "im",
    "i'm",
    "we",
    "own",
    "owns",
    "have",
    "hold",
    "holding",
    "holdings",
    "bought",
    "buy",
    "my",
    "our",
    "portfolio",
    "is",
    "are",
    "has",
    "some",
    "a",
    "an",
    "few",
    "bit",
    "little",
    "lot",
    "lots",
    "of",
    "shares",
    "share",
    "stock",
    "stocks",
    "coins",
    "coin",
    "also",
    "plus",
    "and",
    "the",
    "in",
    "invested",
    "into",
    "am",
    "me",
    "too",
    "as",
    "well",
    "with",
    "etf",
    "position",
    "positions",
    "currently",
    "mostly",
    "mainly",
    "like",
    "want",
    "to",
    "track",
    "follow",
    "watch",
];

fn is_filler(word: &str) -> bool {
    let w: String = fold(word)
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '\'')
        .collect();
    w.is_empty() || FILLER.contains(&w.as_str())
}

/// `part` without filler words at its start and end.
fn trim_filler(part: &str) -> String {
    let words: Vec<&str> = part.split_whitespace().collect();
    let start = words.iter().position(|w| !is_filler(w));
    let end = words.iter().rposition(|w| !is_filler(w));
    match (start, end) {
        (Some(s), Some(e)) => words[s..=e].join(" "),
        _ => String::new(),
    }
}

/// The parts of `text` split at list separators: `,` `;` `:` `+` `/`
/// between words, line breaks, and the words "and", "&", "plus".
fn split_list(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let lower = word.to_lowercase();
        if matches!(lower.as_str(), "and" | "&" | "plus" | "+" | "/") {
            parts.push(std::mem::take(&mut cur));
            continue;
        }
        let mut piece = String::new();
        for c in word.chars() {
            if matches!(c, ',' | ';' | ':' | '\n') {
                piece.push(' ');
                cur.push_str(&piece);
                piece.clear();
                parts.push(std::mem::take(&mut cur));
            } else {
                piece.push(c);
            }
        }
        cur.push_str(&piece);
        cur.push(' ');
    }
    parts.push(cur);
    parts
        .iter()
        .map(|p| trim_filler(p))
        .filter(|p| !p.is_empty())
        .collect()
}

/// The mentions of assets in `text`, in order: its list parts, or its
/// words when it is a plain list of tickers. One element (the whole text,
/// filler trimmed) when it does not read as a list.
pub fn mentions(index: &Index, text: &str) -> Vec<String> {
    let parts = split_list(text);
    if parts.len() >= 2 {
        return parts.into_iter().take(MAX_MENTIONS).collect();
    }
    let one = parts.into_iter().next().unwrap_or_default();
    let words: Vec<&str> = one.split_whitespace().collect();
    // "msft nvda amzn": every word a ticker, and the whole names nothing
    // else ("cash app" is one asset's alias, not CASH and APP).
    if words.len() >= 2 && words.len() <= MAX_MENTIONS {
        let tickers: Option<Vec<u32>> = words
            .iter()
            .map(|w| {
                let best = index.find(w, 1).first().copied()?;
                (w.chars().count() >= 2 && best.1 >= 0.97).then_some(best.0)
            })
            .collect();
        if let Some(tickers) = tickers {
            let whole = index.find(&one, 1).first().copied();
            if whole.is_none_or(|c| tickers.contains(&c.0) || c.1 < 0.6) {
                return words.iter().map(|w| w.to_string()).collect();
            }
        }
    }
    if one.is_empty() {
        vec![text.trim().to_string()]
    } else {
        vec![one]
    }
}

/// Whether `text` reads as words a model can mean something by: every
/// word of four letters or more has a vowel (or `y`), no run of five
/// consonants and no letter three times in a row. Keyboard mashes
/// ("zxcvbnm", "kjhgfdsa", "zzqqxx") are not, and a model would still
/// place them near some entry; they are left to the lexical index.
pub fn wordlike(text: &str) -> bool {
    let folded = fold(text);
    folded
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 4)
        .all(|w| {
            let chars: Vec<char> = w.chars().collect();
            let vowel = |c: char| "aeiouy".contains(c);
            let mut run = 0;
            let mut longest = 0;
            for &c in &chars {
                run = if vowel(c) { 0 } else { run + 1 };
                longest = longest.max(run);
            }
            let tripled = chars.windows(3).any(|w| w[0] == w[1] && w[1] == w[2]);
            chars.iter().any(|&c| vowel(c)) && longest < 5 && !tripled
        })
}

/// One query: lexical and semantic candidates combined, best first, at
/// most `limit`. `neighbours` are the semantic search's answer for this
/// query (asked by the caller, so several mentions share one call).
pub fn rank(
    index: &Index,
    lexical: Vec<(u32, f64)>,
    neighbours: &[(u32, f32)],
    limit: usize,
) -> Vec<(u32, f64)> {
    let mut out: Vec<(u32, f64)> = lexical;
    // A neighbour alone must stand out from the catalog: the best cosine
    // well above the tenth.
    let top = neighbours.first().map_or(0.0, |n| n.1 as f64);
    let tail = neighbours.last().map_or(0.0, |n| n.1 as f64);
    let standout = top - tail >= 0.05;
    let second = neighbours.get(1).map_or(0.0, |n| n.1 as f64);
    for (rank, &(entry, cosine)) in neighbours.iter().enumerate() {
        let mut s = semantic_confidence(cosine as f64);
        if rank == 0 && s > 0.0 {
            s = (s + (LEAD_BONUS * (top - second)).min(LEAD_BONUS_MAX)).min(SEMANTIC_MAX);
        }
        if s <= 0.0 {
            continue;
        }
        match out.iter_mut().find(|c| c.0 == entry) {
            Some(c) => c.1 = combine(c.1, s),
            None if standout => out.push((entry, s)),
            None => {}
        }
    }
    let _ = index;
    out.retain(|c| c.1 >= MIN_CONFIDENCE);
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(limit);
    out
}

/// The answer for `text`: per mention when it names several assets (then
/// `true`), else the hybrid ranking of the whole, best first, at most
/// `limit` (the lexical pool is `pool` deep).
pub fn find(
    index: &Index,
    text: &str,
    limit: usize,
    pool: usize,
    near: &mut impl Near,
) -> (Vec<(u32, f64)>, bool) {
    if limit == 0 {
        return (Vec::new(), false);
    }
    let parts = mentions(index, text);
    let lexical: Vec<Vec<(u32, f64)>> = if parts.len() >= 2 {
        parts.iter().map(|m| index.find(m, pool)).collect()
    } else {
        Vec::new()
    };
    let names_each = lexical
        .iter()
        .all(|l| l.first().is_some_and(|c| c.1 >= LIST_PART_LEXICAL));
    if parts.len() >= 2 && names_each {
        let ask: Vec<String> = parts
            .iter()
            .zip(&lexical)
            .filter(|(m, l)| l.first().is_none_or(|c| c.1 < LEXICAL_SURE) && wordlike(m))
            .map(|(m, _)| m.clone())
            .collect();
        let mut answers = if ask.is_empty() {
            Vec::new()
        } else {
            near(&ask, NEIGHBOURS)
        };
        answers.resize(ask.len(), Vec::new());
        let mut asked = ask.iter().zip(answers);
        let mut picked: Vec<(u32, f64)> = Vec::new();
        for (m, lex) in parts.iter().zip(lexical) {
            let neighbours = if lex.first().is_none_or(|c| c.1 < LEXICAL_SURE) && wordlike(m) {
                asked
                    .next()
                    .filter(|(q, _)| *q == m)
                    .map(|(_, n)| n)
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            let ranked = rank(index, lex, &neighbours, 3);
            if let Some(best) = ranked
                .into_iter()
                .find(|c| !picked.iter().any(|p| p.0 == c.0))
            {
                picked.push(best);
            }
        }
        if picked.len() >= 2 {
            picked.sort_by(|a, b| b.1.total_cmp(&a.1));
            picked.truncate(limit);
            return (picked, true);
        }
    }
    // One query (the whole text, filler trimmed when that leaves words).
    let query = if parts.len() == 1 {
        parts[0].clone()
    } else {
        text.trim().to_string()
    };
    let mut lexical = index.find(text, pool);
    if query != text.trim() {
        for (id, c) in index.find(&query, pool) {
            match lexical.iter_mut().find(|l| l.0 == id) {
                Some(l) => l.1 = l.1.max(c),
                None => lexical.push((id, c)),
            }
        }
        lexical.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    }
    if lexical.first().is_some_and(|c| c.1 >= LEXICAL_SURE) || !wordlike(&query) {
        lexical.retain(|c| c.1 >= MIN_CONFIDENCE);
        lexical.truncate(limit);
        return (lexical, false);
    }
    let neighbours = near(std::slice::from_ref(&query), NEIGHBOURS)
        .into_iter()
        .next()
        .unwrap_or_default();
    (rank(index, lexical, &neighbours, limit), false)
}
