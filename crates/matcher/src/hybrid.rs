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

use crate::classes::{vehicle_word, Vehicle, VEHICLE_DAMPING, VEHICLE_LIFT};
use crate::index::{Index, MIN_CONFIDENCE};
use crate::text::{compact, fold, tokens};

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
/// Most mentions read in one text (the WIT's `find-mentions` promises at
/// most 12).
pub const MAX_MENTIONS: usize = 12;
/// Texts sent to the semantic search in one call (the host reads at most
/// 8).
pub const SEMANTIC_BATCH: usize = 8;
/// Lexical confidence every group of a list written without separators
/// ("bitcoin ethereum solana", "AAPL MSFT NVDA") must reach: a ticker,
/// exact name, alias or class, not a guess.
pub const SEGMENT_SURE: f64 = 0.90;
/// Lexical confidence one group of a list of three or more written
/// without separators may have instead of [`SEGMENT_SURE`] (a partial
/// name: "exxon", "chipotle").
pub const SEGMENT_LIKELY: f64 = 0.75;
/// Lexical confidence from which the whole text, naming an asset none of
/// the groups names, is read as that one asset instead.
pub const SEGMENT_WHOLE: f64 = 0.6;
/// Words a group of such a list may have ("coca cola", "bank of america").
pub const SEGMENT_WORDS: usize = 3;
/// Words of a text tried as such a list at most.
pub const SEGMENT_MAX_WORDS: usize = 24;
/// How much a candidate's prominence (major index membership, in [0, 1])
/// raises its confidence towards 1: among near-equal candidates the
/// better-known comes first ("electric utility" → NextEra before a
/// regional one). Tuned on `eval/classes.csv`, never on `unseen`.
pub const PROMINENCE_WEIGHT: f64 = 0.25;
/// Lexical confidence every part of a list must reach for the text to be
/// read as several assets: a name, alias, ticker or product (a misspelt
/// name reaches it too). "ketchup and mac and cheese" or "theme parks and
/// animated films" name no asset part by part, so they are one
/// description for the model.
pub const LIST_PART_LEXICAL: f64 = 0.70;
/// Lexical confidence from which a text with list separators that names
/// an asset as a whole, one none of its parts names, is that one asset
/// ("Church & Dwight Co", "Procter & Gamble").
pub const LIST_WHOLE: f64 = 0.8;
/// Lexical confidence a part of a list may have instead when most parts
/// reach [`LIST_PART_LEXICAL`]: a misspelt or partial name among names
/// ("mircosoft and amazon", "teslla, nio, byd") is still one of the list,
/// answered with the model's help.
pub const LIST_PART_WEAK: f64 = 0.45;

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
    "i've",
    "ive",
    "got",
    "that's",
    "thats",
    "that",
    "it",
    "just",
    "only",
    "for",
    "now",
    "etc",
    "bag",
    "bags",
    "stack",
    "bunch",
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
    // A word in capitals is a ticker, never filler ("IT", "ALL").
    if word.chars().filter(|c| c.is_alphabetic()).count() >= 2
        && word.chars().all(|c| !c.is_alphabetic() || c.is_uppercase())
    {
        return false;
    }
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
/// groups of words when it is a list written without separators. One
/// element (the whole text, filler trimmed) when it does not read as a
/// list.
pub fn mentions(index: &Index, text: &str) -> Vec<String> {
    let parts = split_list(text);
    if parts.len() >= 2 {
        // Each part may itself be a list without separators ("nvidia amd
        // broadcom and micron").
        let mut out = Vec::new();
        for part in parts {
            match segment(index, &part) {
                Some(groups) => out.extend(groups),
                None => out.push(part),
            }
        }
        out.truncate(MAX_MENTIONS);
        return out;
    }
    let one = parts.into_iter().next().unwrap_or_default();
    if let Some(groups) = segment(index, &one) {
        return groups;
    }
    if one.is_empty() {
        vec![text.trim().to_string()]
    } else {
        vec![one]
    }
}

/// `text` as a list written with spaces only ("bitcoin ethereum solana",
/// "AAPL MSFT NVDA", "coca cola pepsi"): the fewest groups of at most
/// [`SEGMENT_WORDS`] words each naming a different asset at
/// [`SEGMENT_SURE`] or more. `None` when there is no such split, or the
/// whole text names one asset surely and the split does not contain it
/// ("bank of america", "tesla model 3").
fn segment(index: &Index, text: &str) -> Option<Vec<String>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let n = words.len();
    if !(2..=SEGMENT_MAX_WORDS).contains(&n) {
        return None;
    }
    // Every group sure; or, in a list of three or more, one group merely
    // likely ("corn wheat soybeans coffee sugar", "exxon" among others).
    let path = groups(index, &words, SEGMENT_SURE)
        .filter(|p| p.len() >= 2)
        .or_else(|| {
            groups(index, &words, SEGMENT_LIKELY)
                .filter(|p| p.len() >= 3 && p.iter().filter(|g| g.2 < SEGMENT_SURE).count() <= 1)
        })?;
    if path.len() > MAX_MENTIONS {
        return None;
    }
    // The whole text naming something else well ("cash app" is an alias,
    // "euro pound" a currency pair), or one of the groups about as well
    // as the groups name theirs ("J M Smucker"), is one asset, not a list.
    if let Some(whole) = index.find(text, 1).first() {
        let named = path.iter().any(|g| g.1 == whole.0);
        if whole.1 >= SEGMENT_WHOLE && (!named || whole.1 >= SEGMENT_SURE) {
            return None;
        }
    }
    let mut out = Vec::with_capacity(path.len());
    let mut start = 0;
    for (end, _, _) in path {
        out.push(words[start..end].join(" "));
        start = end;
    }
    Some(out)
}

/// The fewest groups of at most [`SEGMENT_WORDS`] words covering `words`,
/// each naming a different asset at `at` or more lexically, as (end,
/// entry, confidence); `None` when there are none.
fn groups(index: &Index, words: &[&str], at: f64) -> Option<Vec<(usize, u32, f64)>> {
    let n = words.len();
    let names = |from: usize, to: usize| -> Option<(u32, f64)> {
        let group = &words[from..to];
        // A vehicle or filler word alone is not an asset ("… ETF"), nor
        // a lone letter ("J M Smucker").
        if group
            .iter()
            .map(|w| compact(w).chars().count())
            .sum::<usize>()
            < 2
        {
            return None;
        }
        if group
            .iter()
            .all(|w| is_filler(w) || tokens(w).iter().all(|t| vehicle_word(t).is_some()))
        {
            return None;
        }
        let best = index.find(&group.join(" "), 1).first().copied()?;
        (best.1 >= at).then_some(best)
    };
    let mut best: Vec<Option<Vec<(usize, u32, f64)>>> = vec![None; n + 1];
    best[0] = Some(Vec::new());
    for end in 1..=n {
        for start in end.saturating_sub(SEGMENT_WORDS)..end {
            let Some(before) = best[start].clone() else {
                continue;
            };
            if best[end]
                .as_ref()
                .is_some_and(|b| b.len() <= before.len() + 1)
            {
                continue;
            }
            let Some((entry, conf)) = names(start, end) else {
                continue;
            };
            if before.iter().any(|g| g.1 == entry) {
                continue;
            }
            let mut path = before;
            path.push((end, entry, conf));
            best[end] = Some(path);
        }
    }
    best[n].take()
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

/// The kind of instrument `text` asks for ("S&P 500 ETF", "nikkei
/// index"), if any: a fund word wins over the others ("index fund").
pub fn vehicle_of(text: &str) -> Option<Vehicle> {
    let found: Vec<Vehicle> = tokens(text)
        .iter()
        .filter_map(|t| vehicle_word(t))
        .collect();
    if found.contains(&Vehicle::Fund) {
        return Some(Vehicle::Fund);
    }
    found.first().copied()
}

/// `text` without its vehicle words ("S&P 500 ETF" → "S&P 500"); empty
/// when nothing else is left.
fn without_vehicle(text: &str) -> String {
    text.split_whitespace()
        .filter(|w| {
            let t = tokens(w);
            t.is_empty() || !t.iter().all(|t| vehicle_word(t).is_some())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The last step of every answer: candidates of the category `query`'s
/// vehicle word asks for lifted and the others damped
/// ([`VEHICLE_LIFT`], [`VEHICLE_DAMPING`]); every candidate raised by its
/// prominence ([`PROMINENCE_WEIGHT`]); then sorted, best first (ties in
/// catalog order).
pub fn adjust(index: &Index, query: &str, list: &mut [(u32, f64)]) {
    let vehicle = vehicle_of(query);
    for c in list.iter_mut() {
        if let Some(v) = vehicle {
            if index.entries()[c.0 as usize].category == v.category() {
                c.1 += VEHICLE_LIFT * (1.0 - c.1);
            } else {
                c.1 *= VEHICLE_DAMPING;
            }
        }
        c.1 += PROMINENCE_WEIGHT * index.prominence(c.0) * (1.0 - c.1);
        c.1 = c.1.clamp(0.0, 1.0);
    }
    list.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
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

/// One asset a text names: the words that name it and its candidates,
/// best first.
#[derive(Debug, Clone, PartialEq)]
pub struct Mention {
    /// The part of the text, filler trimmed.
    pub text: String,
    /// (entry, confidence), best first.
    pub candidates: Vec<(u32, f64)>,
}

/// The semantic neighbours of each of `texts`, asked in batches of
/// [`SEMANTIC_BATCH`]; one (possibly empty) list per text.
fn nearest_all(near: &mut impl Near, texts: &[String]) -> Vec<Vec<(u32, f32)>> {
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(SEMANTIC_BATCH) {
        let mut answers = near(chunk, NEIGHBOURS);
        answers.resize(chunk.len(), Vec::new());
        out.extend(answers);
    }
    out
}

/// The mentions of `text` with their candidates (at most `limit` each;
/// the lexical pool is `pool` deep): one per list part when every part
/// names an asset by itself and at least two different assets are named,
/// else one for the whole text.
pub fn find_mentions(
    index: &Index,
    text: &str,
    limit: usize,
    pool: usize,
    near: &mut impl Near,
) -> Vec<Mention> {
    if limit == 0 {
        return Vec::new();
    }
    let parts = mentions(index, text);
    if parts.len() >= 2 {
        let lexical: Vec<Vec<(u32, f64)>> = parts
            .iter()
            .map(|m| lexical_of(index, m, m, pool))
            .collect();
        // Every part names an asset lexically, at most half of them
        // weakly (a misspelling, a partial name).
        let best: Vec<f64> = lexical
            .iter()
            .map(|l| l.first().map_or(0.0, |c| c.1))
            .collect();
        let strong = best.iter().filter(|&&b| b >= LIST_PART_LEXICAL).count();
        let names_each = best.iter().all(|&b| b >= LIST_PART_WEAK) && 2 * strong >= best.len();
        // A name with a separator in it ("Church & Dwight Co") names
        // one asset better as a whole than its parts do.
        let whole = lexical_of(index, text, text.trim(), pool);
        let firsts: Vec<u32> = lexical
            .iter()
            .filter_map(|l| l.first().map(|c| c.0))
            .collect();
        let one_name = whole
            .first()
            .is_some_and(|w| w.1 >= LIST_WHOLE && !firsts.contains(&w.0));
        if names_each && !one_name {
            let unsure = |m: &String, l: &Vec<(u32, f64)>| {
                l.first().is_none_or(|c| c.1 < LEXICAL_SURE) && wordlike(m)
            };
            let ask: Vec<String> = parts
                .iter()
                .zip(&lexical)
                .filter(|(m, l)| unsure(m, l))
                .map(|(m, _)| m.clone())
                .collect();
            let mut answers = nearest_all(near, &ask).into_iter();
            let mut out = Vec::with_capacity(parts.len());
            for (m, lex) in parts.iter().zip(lexical) {
                let neighbours = if unsure(m, &lex) {
                    answers.next().unwrap_or_default()
                } else {
                    Vec::new()
                };
                let mut ranked = rank(index, lex, &neighbours, pool);
                adjust(index, m, &mut ranked);
                ranked.truncate(limit);
                out.push(Mention {
                    text: m.clone(),
                    candidates: ranked,
                });
            }
            let mut firsts: Vec<u32> = out
                .iter()
                .filter_map(|m| m.candidates.first().map(|c| c.0))
                .collect();
            firsts.sort_unstable();
            firsts.dedup();
            if firsts.len() >= 2 {
                return out;
            }
        }
    }
    // One query (the whole text, filler trimmed when that leaves words).
    let query = if parts.len() == 1 {
        parts[0].clone()
    } else {
        text.trim().to_string()
    };
    let mut lexical = lexical_of(index, text, &query, pool);
    let candidates = if lexical.first().is_some_and(|c| c.1 >= LEXICAL_SURE) || !wordlike(&query) {
        lexical.retain(|c| c.1 >= MIN_CONFIDENCE);
        adjust(index, &query, &mut lexical);
        lexical.truncate(limit);
        lexical
    } else {
        let neighbours = nearest_all(near, std::slice::from_ref(&query))
            .into_iter()
            .next()
            .unwrap_or_default();
        let mut ranked = rank(index, lexical, &neighbours, pool);
        adjust(index, &query, &mut ranked);
        ranked.truncate(limit);
        ranked
    };
    vec![Mention {
        text: query,
        candidates,
    }]
}

/// The lexical candidates of `text` (as typed) and of `query` (filler
/// trimmed) and of `query` without its vehicle words, each entry at its
/// best, best first.
fn lexical_of(index: &Index, text: &str, query: &str, pool: usize) -> Vec<(u32, f64)> {
    let mut lexical = index.find(text, pool);
    let bare = without_vehicle(query);
    for other in [query, bare.as_str()] {
        if other.is_empty() || other == text.trim() {
            continue;
        }
        for (id, c) in index.find(other, pool) {
            match lexical.iter_mut().find(|l| l.0 == id) {
                Some(l) => l.1 = l.1.max(c),
                None => lexical.push((id, c)),
            }
        }
    }
    lexical.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    lexical
}

/// The answer for `text`: one asset per mention when it names several
/// (then `true`; each mention's best not already chosen, best first), else
/// the hybrid ranking of the whole, best first, at most `limit` (the
/// lexical pool is `pool` deep).
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
    let found = find_mentions(index, text, limit.max(3), pool, near);
    if found.len() >= 2 {
        let mut picked: Vec<(u32, f64)> = Vec::new();
        for m in &found {
            if let Some(best) = m
                .candidates
                .iter()
                .find(|c| !picked.iter().any(|p| p.0 == c.0))
            {
                picked.push(*best);
            }
        }
        picked.sort_by(|a, b| b.1.total_cmp(&a.1));
        picked.truncate(limit);
        return (picked, true);
    }
    let mut one = found
        .into_iter()
        .next()
        .map(|m| m.candidates)
        .unwrap_or_default();
    one.truncate(limit);
    (one, false)
}
