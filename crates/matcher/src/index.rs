//! The lexical index over the active catalog and its scoring.
//!
//! Built once per catalog ([`Index::new`]); every query then touches only
//! hash maps and posting lists, never the catalog's strings (a few
//! microseconds to a few hundred for a query over ~2,600 entries).
//!
//! Signals and the confidence each one yields (see also the crate docs):
//!
//! | signal | confidence |
//! |---|---|
//! | the ticker, any case (`aapl`, `7203.t`) | 0.99 |
//! | the ticker without punctuation (`brk.b` → `BRK-B`) | 0.97 |
//! | the ticker without exchange suffix or quote part (`7203`, `btc`, `eurusd`, `n225`) | 0.93 (0.90 when several share it) |
//! | the website domain (`apple.com`) | 0.95 |
//! | the name without corporate or category suffixes (`toyota`, `gold`, `chroma case`) | 0.95 |
//! | query words in the name | 0.70–0.92 by the share of the name covered |
//! | an alias (see [`crate::aliases`]), or a name after `Also known as:` in the summary | 0.90 |
//! | a ticker among several words (`Sony 6758`) | 0.90 |
//! | a website stem (`thewaltdisneycompany`) | 0.85 |
//! | a product word (`iphone`, `cybertruck`) | 0.85, less the more entries use the word |
//! | a sector, industry, category or place word | 0.50 at most, less the more entries share it |
//!
//! Word signals are then scaled by how much of the query they explain
//! (`tier × (0.2 + 0.8 × explained)`, IDF-weighted, so a rare word counts
//! more than a common one), capped at 0.40–0.75 when a misspelling had to
//! be corrected, and damped when many entries tie (a query that fits thirty
//! banks is not a confident answer). An entry's confidence is the best of
//! its signals; results under [`MIN_CONFIDENCE`] are dropped.

use crate::aliases::ALIASES;
use crate::classes::{CLASSES, CLASS_TIERS, NAMESAKE_DAMPING};

/// What the host marks an entry's other names with at the end of its
/// summary (`forecast_embed::ALSO_KNOWN_AS`): "… Also known as: TSMC."
pub const ALSO_KNOWN_AS: &str = "Also known as:";
use crate::hash::{map, Map};
use crate::text::{compact, fold, osa_distance, significant, significant_tokens, tokens, trigrams};

/// One active asset, as the catalog describes it (mirrors the WIT
/// `catalog-entry`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    /// Ticker, e.g. `AAPL`, `7203.T`, `BTC-USD`, `^N225`.
    pub ticker: String,
    /// Display name.
    pub name: String,
    /// Category, e.g. `US Stocks`.
    pub category: String,
    /// Exchange.
    pub exchange: String,
    /// Country or city.
    pub country: String,
    /// Sector.
    pub sector: String,
    /// Industry.
    pub industry: String,
    /// Website domain, e.g. `apple.com`.
    pub website: String,
    /// Free text, often with a list of products after `Products:`.
    pub summary: String,
}

/// What the host knows about one entry beyond its text (mirrors the WIT
/// `catalog-priors.prior`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prior {
    /// Position of the entry in the catalog.
    pub entry: u32,
    /// How well-known the asset is, in [0, 1] (major index membership).
    pub prominence: f32,
    /// Other identifiers people paste for it (ISIN).
    pub identifiers: Vec<String>,
}

/// An identifier typed whole (an ISIN).
const IDENTIFIER_EXACT: f64 = 0.99;

/// Results under this confidence are never returned: below it a match is
/// more likely noise (a stray common word, a two-letter edit) than what the
/// user meant, and gibberish must come back empty.
pub const MIN_CONFIDENCE: f64 = 0.35;

/// Exact ticker, any case.
const TICKER_EXACT: f64 = 0.99;
/// Ticker with punctuation ignored.
const TICKER_COMPACT: f64 = 0.97;
/// Ticker without its exchange suffix, quote part or `^`, one entry.
const TICKER_BASE: f64 = 0.93;
/// The same, shared by several entries (`IAG` is listed four times).
const TICKER_BASE_SHARED: f64 = 0.90;
/// Lost from a ticker match when the query had filler words ("AAPL stock").
const FILLER_PENALTY: f64 = 0.02;
/// One adjacent transposition away from a ticker (`mfst`).
const TICKER_TRANSPOSED: f64 = 0.45;
/// The query is the entry's website domain.
const DOMAIN_EXACT: f64 = 0.95;
/// The query is the entry's name without corporate or category suffixes.
const NAME_EXACT: f64 = 0.95;
/// Name tier: every query word found, none of the name covered …
const NAME_TIER_BASE: f64 = 0.70;
/// … plus this much times the (IDF-weighted) share of the name covered.
const NAME_TIER_SPAN: f64 = 0.22;
/// An alias word.
pub const ALIAS_TIER: f64 = 0.90;
/// A ticker among other words.
const WORD_TICKER_TIER: f64 = 0.90;
/// A website stem.
const WEBSITE_TIER: f64 = 0.85;
/// A product word found in one entry only; lower the more entries have
/// the word in any field (0.75 for two, 0.54 for eight).
const PRODUCT_TIER: f64 = 0.85;
/// A sector, industry, category or place word found in one entry only.
const WEAK_TIER: f64 = 0.50;
/// Share of a word-signal confidence that holds even when the matched
/// words explain little of the query; the rest scales with the explained
/// share.
const EXPLAINED_FLOOR: f64 = 0.20;
/// Misspelling caps: a match through a corrected word scores at most 0.40
/// at 60 % similarity, rising to 0.75 at 95 % and above, scaled down
/// further when the rest of the match is weak ([`FUZZY_FULL`]).
const FUZZY_CAP_LOW: f64 = 0.40;
const FUZZY_CAP_HIGH: f64 = 0.75;
/// The word confidence that earns a corrected match its full cap (a whole
/// name, every query word explained).
const FUZZY_FULL: f64 = NAME_TIER_BASE + NAME_TIER_SPAN;
/// Ambiguity damping: word confidences are multiplied by
/// `max(FLOOR, 1 - SLOPE * log2(n))`, where `n` counts the entries whose
/// word confidence is within `BAND` of the best (one: 1; two: 0.92; eight:
/// 0.76; 32 and more: 0.60).
const AMBIGUITY_BAND: f64 = 0.9;
const AMBIGUITY_SLOPE: f64 = 0.08;
const AMBIGUITY_FLOOR: f64 = 0.60;
/// Query tokens considered (longer queries are truncated).
const MAX_QUERY_TOKENS: usize = 16;
/// Query characters considered.
const MAX_QUERY_CHARS: usize = 200;
/// Name tokens tracked for coverage.
const MAX_CORE: usize = 32;
/// Prefix expansions per query token.
const MAX_PREFIX: usize = 30;
/// Misspelling candidates kept per query token.
const MAX_FUZZY: usize = 8;

/// Where a token was found in an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// The name (a token or two adjacent tokens joined).
    Name,
    /// A built-in alias.
    Alias,
    /// A label of the website domain.
    Website,
    /// The product list of the summary.
    Product,
    /// Sector, industry, category, country, the rest of the summary, or a
    /// part of the ticker.
    Weak,
}

impl Field {
    /// How much of a query word a match in this field explains.
    fn explains(self) -> f64 {
        match self {
            Field::Name | Field::Alias => 1.0,
            Field::Website => 0.95,
            Field::Product => 0.9,
            Field::Weak => 0.6,
        }
    }
}

/// One occurrence of a token.
#[derive(Debug, Clone, Copy)]
struct Posting {
    entry: u32,
    field: Field,
    /// For [`Field::Name`]: the core-name positions the token covers (two
    /// for a joined pair; none for a category suffix such as "case").
    mask: u32,
}

/// Per-entry data the scoring needs.
#[derive(Debug, Clone, Default)]
struct EntryInfo {
    /// IDF of each core-name token, by position.
    core_idf: Vec<f64>,
    /// Their sum.
    core_total: f64,
}

/// The matcher's index over one catalog.
#[derive(Debug, Clone, Default)]
pub struct Index {
    entries: Vec<Entry>,
    info: Vec<EntryInfo>,
    /// Token → id.
    vocab: Map<String, u32>,
    /// Id → token.
    words: Vec<String>,
    postings: Vec<Vec<Posting>>,
    /// ln(1 + N / df) over all fields.
    idf: Vec<f64>,
    /// Entries that have the token in any field: a product word the
    /// catalog also uses elsewhere ("case", "gold") is weak evidence.
    df: Vec<u32>,
    /// Entries whose weak fields have the token.
    weak_df: Vec<u32>,
    /// Tokens worth correcting to or completing to (name, alias, website
    /// and product tokens of four characters or more), sorted, for prefix
    /// search.
    sorted: Vec<(String, u32)>,
    /// Trigram → ids of those tokens.
    trigram_index: Map<u64, Vec<u32>>,
    /// Lower-case ticker → entries.
    tickers_exact: Map<String, Vec<u32>>,
    /// Compact ticker → entries.
    tickers_compact: Map<String, Vec<u32>>,
    /// Compact ticker without suffix → entries.
    tickers_base: Map<String, Vec<u32>>,
    /// Compact core name → entries.
    names_exact: Map<String, Vec<u32>>,
    /// Website domain → entries.
    domains: Map<String, Vec<u32>>,
    /// IDF of a token no entry has.
    max_idf: f64,
    /// Class phrase (tokens joined) → its targets in this catalog, in
    /// order ([`crate::classes`]).
    classes: Map<String, Vec<u32>>,
    /// Prominence of each entry, in [0, 1] ([`Index::set_priors`]).
    prominence: Vec<f32>,
    /// Compact identifier (ISIN) → entries.
    identifiers: Map<String, Vec<u32>>,
}

/// Generic domain labels that say nothing about the company.
const GENERIC_LABELS: &[&str] = &[
    "www",
    "global",
    "corporate",
    "about",
    "investor",
    "investors",
    "ir",
    "en",
    "co",
    "com",
    "net",
    "org",
    "group",
    "corp",
    "inc",
    "ltd",
    "info",
    "asia",
    "biz",
    "official",
    "website",
    // Country codes used as subdomains (`us.pg.com`).
    "us",
    "uk",
    "de",
    "jp",
    "fr",
    "it",
    "es",
    "ca",
    "au",
    "cn",
    "hk",
    "kr",
    "in",
    "br",
    "mx",
    "ch",
    "nl",
    "se",
    "eu",
];

/// Per-entry accumulator of one query's word matches.
#[derive(Clone)]
struct Acc {
    /// Best explained strength per query token.
    best: [f64; MAX_QUERY_TOKENS],
    /// Best strength per core-name position.
    core_hit: [f64; MAX_CORE],
    name: bool,
    alias: f64,
    website: f64,
    ticker: f64,
    /// Strength and smallest df (any field) of the product words matched.
    product: f64,
    product_df: u32,
    /// The same for weak words.
    weak: f64,
    weak_df: u32,
    /// Weakest similarity of a corrected word used (1 when none).
    fuzzy_min: f64,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            best: [0.0; MAX_QUERY_TOKENS],
            core_hit: [0.0; MAX_CORE],
            name: false,
            alias: 0.0,
            website: 0.0,
            ticker: 0.0,
            product: 0.0,
            product_df: u32::MAX,
            weak: 0.0,
            weak_df: u32::MAX,
            fuzzy_min: 1.0,
        }
    }
}

/// How a query token (or pair) reached a vocabulary token.
#[derive(Debug, Clone, Copy)]
struct Hit {
    token: u32,
    strength: f64,
    fuzzy: bool,
}

/// The ticker keys of one entry: lower case, compact, and the suffix-less
/// bases.
fn ticker_keys(ticker: &str, name: &str) -> (String, String, Vec<String>) {
    let lower = fold(ticker.trim());
    let full = compact(&lower);
    let mut bases = Vec::new();
    let mut s = lower.trim_start_matches('^').to_string();
    if let Some(p) = s.find('=') {
        s.truncate(p);
    } else if let Some(stripped) = s.strip_suffix("-usd") {
        s = stripped.to_string();
    } else if let Some(p) = s.rfind('.') {
        if p > 0 {
            s.truncate(p);
        }
    }
    bases.push(compact(&s));
    // Share classes: `BRK-B` → `brk`, `SHB-A.ST` → `shb`.
    if let Some(p) = s.rfind('-') {
        let tail = &s[p + 1..];
        if p > 0 && (1..=2).contains(&tail.len()) && tail.chars().all(|c| c.is_alphabetic()) {
            bases.push(compact(&s[..p]));
        }
    }
    // Leading zeros of numeric codes: `005930` → `5930`.
    let b0 = bases[0].clone();
    if b0.chars().all(|c| c.is_ascii_digit()) {
        let trimmed = b0.trim_start_matches('0');
        if trimmed.len() >= 3 && trimmed.len() < b0.len() {
            bases.push(trimmed.to_string());
        }
    }
    // Forex pairs as written in the name: `USD/JPY - …` → `usdjpy`.
    if lower.ends_with("=x") {
        if let Some((pair, _)) = name.split_once(" - ") {
            let c = compact(pair);
            if c.len() == 6 {
                bases.push(c);
            }
        }
    }
    bases.retain(|b| !b.is_empty() && *b != full);
    bases.sort();
    bases.dedup();
    (lower, full, bases)
}

/// The domains written in a website field (`"mcdonalds.com
/// corporate.mcdonalds.com"` has two), without scheme, `www.` or path.
fn domains_of(website: &str) -> Vec<String> {
    let folded = fold(website);
    let mut out = Vec::new();
    for piece in folded.split_whitespace() {
        let p = piece
            .trim_start_matches("http://")
            .trim_start_matches("https://");
        let p = p.trim_start_matches("www.");
        let p = p.split('/').next().unwrap_or("").trim_matches('.');
        let Some((_, tld)) = p.rsplit_once('.') else {
            continue;
        };
        if !tld.is_empty() && tld.chars().all(|c| c.is_alphabetic()) {
            out.push(p.to_string());
        }
    }
    out
}

/// The distinctive labels of a domain: `about.netflix.com` → `netflix`,
/// `global.toyota` → `toyota` (a brand top-level domain).
fn domain_labels(domain: &str) -> Vec<String> {
    let labels: Vec<&str> = domain.split('.').collect();
    let mut out = Vec::new();
    for (i, label) in labels.iter().enumerate() {
        let last = i + 1 == labels.len();
        if last && label.len() <= 3 {
            continue;
        }
        let c = compact(label);
        if c.len() >= 2 && !GENERIC_LABELS.contains(&c.as_str()) {
            out.push(c);
        }
    }
    out
}

/// Whether a word typed among others looks like a ticker: upper case
/// (`AAPL`, `BRK.B`), a number code (`6758`), or an index (`^N225`).
fn looks_like_ticker(word: &str) -> bool {
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    let digits = word.chars().filter(|c| c.is_ascii_digit()).count();
    if word.starts_with('^') && letters + digits >= 2 {
        return true;
    }
    if digits >= 3 && letters <= 2 {
        return true;
    }
    letters >= 2
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "-.=".contains(c))
}

/// The confidence cap of a corrected word of similarity `s`.
fn fuzzy_cap(s: f64) -> f64 {
    let t = ((s - 0.6) / 0.35).clamp(0.0, 1.0);
    FUZZY_CAP_LOW + (FUZZY_CAP_HIGH - FUZZY_CAP_LOW) * t
}

/// Product tier for a word found in `df` entries.
fn product_tier(df: u32) -> f64 {
    (PRODUCT_TIER * (1.0 - 0.12 * f64::from(df.max(1)).log2())).max(0.0)
}

/// Weak tier for a word found in `df` entries.
fn weak_tier(df: u32) -> f64 {
    (WEAK_TIER * (1.0 - 0.1 * f64::from(df.max(1)).log2())).max(0.0)
}

/// Records `conf` for `entry` if it beats what is there.
fn raise(scores: &mut Map<u32, f64>, entry: u32, conf: f64) {
    let slot = scores.entry(entry).or_insert(0.0);
    if conf > *slot {
        *slot = conf;
    }
}

/// Category suffixes: a last name word shared by 80 % of a category's
/// names ("Futures", "Case") says nothing. Category → its suffix.
fn category_suffixes(entries: &[Entry]) -> Map<String, String> {
    let mut last_words: Map<&str, (usize, Map<String, usize>)> = map();
    for e in entries {
        let slot = last_words.entry(e.category.as_str()).or_default();
        slot.0 += 1;
        if let Some(last) = significant_tokens(&e.name).pop() {
            *slot.1.entry(last).or_default() += 1;
        }
    }
    last_words
        .iter()
        .filter_map(|(cat, (total, counts))| {
            let (word, count) = counts
                .iter()
                .max_by_key(|(w, c)| (**c, std::cmp::Reverse(*w)))?;
            (*total >= 5 && *count * 5 >= *total * 4).then(|| (cat.to_string(), word.clone()))
        })
        .collect()
}

/// Entry `id`'s summary: other names after `Also known as:` (the host adds
/// them from its descriptions, e.g. "TSMC"), aliases; products after
/// `Products:`; the rest (place), with the country, sector, industry and
/// category, weak (unless a name token, `sig`).
fn summary_postings(id: u32, e: &Entry, sig: &[String], postings: &mut Vec<(String, Posting)>) {
    let (summary, known_as) = match e.summary.split_once(ALSO_KNOWN_AS) {
        Some((a, b)) => (a, b),
        None => (e.summary.as_str(), ""),
    };
    for name in known_as.split(',') {
        let token = tokens(name).concat();
        if token.len() >= 2 {
            postings.push((
                token,
                Posting {
                    entry: id,
                    field: Field::Alias,
                    mask: 0,
                },
            ));
        }
    }
    let (place, products) = match summary.split_once("Products:") {
        Some((a, b)) => (a, b),
        None => (e.summary.as_str(), ""),
    };
    for t in tokens(products).into_iter().filter(|t| significant(t)) {
        postings.push((
            t,
            Posting {
                entry: id,
                field: Field::Product,
                mask: 0,
            },
        ));
    }
    let weak_text = [place, &e.country, &e.sector, &e.industry, &e.category].join(" ");
    for t in tokens(&weak_text).into_iter().filter(|t| significant(t)) {
        if !sig.contains(&t) {
            postings.push((
                t,
                Posting {
                    entry: id,
                    field: Field::Weak,
                    mask: 0,
                },
            ));
        }
    }
}

/// The significant tokens of a query, at most [`MAX_QUERY_TOKENS`]:
/// repeated words add nothing ("us us us" is "us").
fn query_tokens(text: &str) -> Vec<String> {
    let mut t: Vec<String> = Vec::new();
    for token in significant_tokens(text) {
        if !t.contains(&token) && t.len() < MAX_QUERY_TOKENS {
            t.push(token);
        }
    }
    t
}

impl Index {
    /// Builds the index over `entries` (their order is the catalog order:
    /// results refer to entries by position and ties go to the earlier).
    pub fn new(entries: Vec<Entry>) -> Index {
        let n = entries.len();
        let suffixes = category_suffixes(&entries);
        let mut ix = Index::default();
        let mut postings: Vec<(String, Posting)> = Vec::new();
        let mut cores: Vec<Vec<String>> = Vec::with_capacity(n);
        for (i, e) in entries.iter().enumerate() {
            let id = i as u32;
            let (sig, core_len) = ix.name_postings(id, e, &suffixes, &mut postings);
            cores.push(sig[..core_len].to_vec());
            ix.ticker_postings(id, e, &mut postings);
            ix.website_postings(id, e, &mut postings);
            summary_postings(id, e, &sig, &mut postings);
        }
        ix.entries = entries;
        ix.alias_postings(&mut postings);

        // Classes, for the targets this catalog has.
        for (phrase, targets) in CLASSES {
            let ids: Vec<u32> = targets
                .iter()
                .filter_map(|t| ix.tickers_exact.get(&fold(t)))
                .flat_map(|ids| ids.iter().copied())
                .collect();
            if !ids.is_empty() {
                ix.classes.insert(compact(phrase), ids);
            }
        }
        ix.prominence = vec![0.0; n];

        // Vocabulary and posting lists, one posting per (entry, field, mask).
        for (token, p) in postings {
            let next = ix.words.len() as u32;
            let tid = *ix.vocab.entry(token.clone()).or_insert(next);
            if tid == next {
                ix.words.push(token);
                ix.postings.push(Vec::new());
            }
            let list = &mut ix.postings[tid as usize];
            if !list
                .iter()
                .any(|q| q.entry == p.entry && q.field == p.field && q.mask == p.mask)
            {
                list.push(p);
            }
        }
        ix.document_frequencies(n, &cores);

        // Correction and completion targets.
        for (tid, word) in ix.words.iter().enumerate() {
            let strong = ix.postings[tid].iter().any(|p| p.field != Field::Weak);
            if strong && word.chars().count() >= 4 {
                ix.sorted.push((word.clone(), tid as u32));
                for g in trigrams(word) {
                    ix.trigram_index.entry(g).or_default().push(tid as u32);
                }
            }
        }
        ix.sorted.sort();
        ix
    }

    /// Entry `id`'s name: its significant tokens (at most [`MAX_CORE`])
    /// and each pair of neighbours joined, as name postings whose masks
    /// mark the core words (the name without its category's suffix); its
    /// compact core and whole name as exact names. The tokens and how
    /// many of them are the core.
    fn name_postings(
        &mut self,
        id: u32,
        e: &Entry,
        suffixes: &Map<String, String>,
        postings: &mut Vec<(String, Posting)>,
    ) -> (Vec<String>, usize) {
        let mut sig = significant_tokens(&e.name);
        sig.truncate(MAX_CORE);
        let mut core_len = sig.len();
        if sig.len() > 1 && suffixes.get(&e.category) == sig.last() {
            core_len -= 1;
        }
        let bit = |k: usize| if k < core_len { 1u32 << k } else { 0 };
        for (k, t) in sig.iter().enumerate() {
            postings.push((
                t.clone(),
                Posting {
                    entry: id,
                    field: Field::Name,
                    mask: bit(k),
                },
            ));
        }
        for k in 1..sig.len() {
            let joined = format!("{}{}", sig[k - 1], sig[k]);
            let mask = bit(k - 1) | bit(k);
            postings.push((
                joined,
                Posting {
                    entry: id,
                    field: Field::Name,
                    mask,
                },
            ));
        }
        for key in [sig[..core_len].concat(), sig.concat()] {
            if !key.is_empty() {
                self.names_exact.entry(compact(&key)).or_default().push(id);
            }
        }
        (sig, core_len)
    }

    /// Entry `id`'s ticker: its exact, compact and base keys, and its
    /// alphabetic parts as weak postings.
    fn ticker_postings(&mut self, id: u32, e: &Entry, postings: &mut Vec<(String, Posting)>) {
        let (lower, full, bases) = ticker_keys(&e.ticker, &e.name);
        self.tickers_exact.entry(lower).or_default().push(id);
        self.tickers_compact.entry(full).or_default().push(id);
        for b in bases {
            self.tickers_base.entry(b).or_default().push(id);
        }
        for part in e.ticker.split(|c: char| !c.is_alphanumeric()) {
            let p = compact(part);
            if p.len() >= 2 && p.chars().any(|c| c.is_alphabetic()) {
                postings.push((
                    p,
                    Posting {
                        entry: id,
                        field: Field::Weak,
                        mask: 0,
                    },
                ));
            }
        }
    }

    /// Entry `id`'s website: its domains, and their distinctive labels as
    /// website postings.
    fn website_postings(&mut self, id: u32, e: &Entry, postings: &mut Vec<(String, Posting)>) {
        for d in domains_of(&e.website) {
            for label in domain_labels(&d) {
                postings.push((
                    label,
                    Posting {
                        entry: id,
                        field: Field::Website,
                        mask: 0,
                    },
                ));
            }
            self.domains.entry(d).or_default().push(id);
        }
    }

    /// Aliases, for the targets this catalog has: alias postings of each
    /// phrase for every entry of its tickers.
    fn alias_postings(&self, postings: &mut Vec<(String, Posting)>) {
        for (phrase, targets) in ALIASES {
            let token = tokens(phrase).concat();
            for t in *targets {
                if let Some(ids) = self.tickers_exact.get(&fold(t)) {
                    for &id in ids {
                        postings.push((
                            token.clone(),
                            Posting {
                                entry: id,
                                field: Field::Alias,
                                mask: 0,
                            },
                        ));
                    }
                }
            }
        }
    }

    /// Document frequencies of the `n` entries' tokens (over all fields
    /// and over the weak ones), and each entry's core IDFs (`cores`).
    fn document_frequencies(&mut self, n: usize, cores: &[Vec<String>]) {
        let nf = n.max(1) as f64;
        self.max_idf = (1.0 + nf).ln();
        for list in &self.postings {
            let mut all: Vec<u32> = list.iter().map(|p| p.entry).collect();
            all.sort_unstable();
            all.dedup();
            self.idf.push((1.0 + nf / all.len().max(1) as f64).ln());
            self.df.push(all.len() as u32);
            let mut weak: Vec<u32> = list
                .iter()
                .filter(|p| p.field == Field::Weak)
                .map(|p| p.entry)
                .collect();
            weak.sort_unstable();
            weak.dedup();
            self.weak_df.push(weak.len() as u32);
        }
        for core in cores {
            let core_idf: Vec<f64> = core
                .iter()
                .map(|t| {
                    self.vocab
                        .get(t)
                        .map_or(self.max_idf, |&id| self.idf[id as usize])
                })
                .collect();
            let core_total = core_idf.iter().sum();
            self.info.push(EntryInfo {
                core_idf,
                core_total,
            });
        }
    }

    /// The entries, in catalog order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Replaces the priors: each named entry's prominence (clamped to
    /// [0, 1]) and identifiers; entries not named get 0 and none. Priors
    /// naming entries outside the catalog are ignored.
    pub fn set_priors(&mut self, priors: &[Prior]) {
        let n = self.entries.len();
        self.prominence = vec![0.0; n];
        self.identifiers = map();
        for p in priors {
            let Some(slot) = self.prominence.get_mut(p.entry as usize) else {
                continue;
            };
            *slot = if p.prominence.is_finite() {
                p.prominence.clamp(0.0, 1.0)
            } else {
                0.0
            };
            for id in &p.identifiers {
                let key = compact(id);
                if key.len() >= 6 {
                    let list = self.identifiers.entry(key).or_default();
                    if !list.contains(&p.entry) {
                        list.push(p.entry);
                    }
                }
            }
        }
    }

    /// How well-known entry `id` is, in [0, 1] (0 without priors).
    pub fn prominence(&self, id: u32) -> f64 {
        self.prominence
            .get(id as usize)
            .map_or(0.0, |&p| f64::from(p))
    }

    /// The class phrase `text` is (filler aside), if any, as its targets
    /// in this catalog.
    pub fn class_of(&self, text: &str) -> Option<&[u32]> {
        // Stop words aside, every word counts, unstemmed: "s-oil" is not
        // "oil", nor "sols" "sol".
        let key: String = text
            .split_whitespace()
            .map(compact)
            .filter(|w| !crate::text::is_stop(w))
            .collect();
        self.classes.get(&key).map(Vec::as_slice)
    }

    /// Completions of `token` (it is a prefix of them).
    fn prefixes(&self, token: &str) -> Vec<Hit> {
        let start = self.sorted.partition_point(|(w, _)| w.as_str() < token);
        let lq = token.chars().count() as f64;
        self.sorted[start..]
            .iter()
            .take_while(|(w, _)| w.starts_with(token))
            .filter(|(w, _)| w.len() > token.len())
            .take(MAX_PREFIX)
            .map(|(w, id)| Hit {
                token: *id,
                strength: (0.75 + 0.2 * lq / w.chars().count() as f64).min(0.95),
                fuzzy: false,
            })
            .collect()
    }

    /// Corrections of `token`: vocabulary words within `max_d` edits (one
    /// for words of five characters or fewer), found through shared
    /// trigrams.
    fn corrections(&self, token: &str, max_d: usize) -> Vec<Hit> {
        let q: Vec<char> = token.chars().collect();
        if q.len() < 4 {
            return Vec::new();
        }
        let max_d = if q.len() <= 5 { max_d.min(1) } else { max_d };
        let grams = trigrams(token);
        let need = (grams.len() as f64 * 0.25).ceil().max(2.0) as u32;
        let mut shared: Map<u32, u32> = map();
        for g in &grams {
            if let Some(ids) = self.trigram_index.get(g) {
                for &id in ids {
                    *shared.entry(id).or_default() += 1;
                }
            }
        }
        let mut found: Vec<(usize, u32, u32)> = Vec::new();
        for (id, count) in shared {
            if count < need {
                continue;
            }
            let w: Vec<char> = self.words[id as usize].chars().collect();
            if let Some(d) = osa_distance(&q, &w, max_d) {
                if d > 0 {
                    found.push((d, u32::MAX - count, id));
                }
            }
        }
        found.sort_unstable();
        found.truncate(MAX_FUZZY);
        found
            .into_iter()
            .map(|(d, _, id)| {
                let lw = self.words[id as usize].chars().count();
                Hit {
                    token: id,
                    strength: 1.0 - d as f64 / q.len().max(lw) as f64,
                    fuzzy: true,
                }
            })
            .collect()
    }

    /// The ways `token` reaches the vocabulary: itself, else (unless
    /// `exact_only`) its completions and corrections.
    fn lookup(&self, token: &str, exact_only: bool) -> Vec<Hit> {
        if let Some(&id) = self.vocab.get(token) {
            return vec![Hit {
                token: id,
                strength: 1.0,
                fuzzy: false,
            }];
        }
        if exact_only || token.chars().count() < 4 {
            return Vec::new();
        }
        let mut hits = self.prefixes(token);
        // A word both completed and corrected to ("appl" → "apple") counts
        // as completed: typing a prefix is not a misspelling.
        let completed: Vec<u32> = hits.iter().map(|h| h.token).collect();
        hits.extend(
            self.corrections(token, 2)
                .into_iter()
                .filter(|c| !completed.contains(&c.token)),
        );
        hits
    }

    /// Entries of a ticker-like string, with the confidence of the best key.
    fn ticker_matches(&self, text: &str) -> Vec<(u32, f64)> {
        let mut out = Vec::new();
        let lower = fold(text.trim());
        if let Some(ids) = self.tickers_exact.get(&lower) {
            out.extend(ids.iter().map(|&i| (i, TICKER_EXACT)));
        }
        let c = compact(text);
        if c.is_empty() {
            return out;
        }
        if let Some(ids) = self.tickers_compact.get(&c) {
            out.extend(ids.iter().map(|&i| (i, TICKER_COMPACT)));
        }
        if let Some(ids) = self.tickers_base.get(&c) {
            let conf = if ids.len() == 1 {
                TICKER_BASE
            } else {
                TICKER_BASE_SHARED
            };
            out.extend(ids.iter().map(|&i| (i, conf)));
        }
        out
    }

    /// The best matches for `text`, best first (ties in catalog order), at
    /// most `limit`, each with a confidence between [`MIN_CONFIDENCE`] and
    /// 1. Returns entry positions.
    pub fn find(&self, text: &str, limit: usize) -> Vec<(u32, f64)> {
        if limit == 0 || self.entries.is_empty() {
            return Vec::new();
        }
        let text: String = text.chars().take(MAX_QUERY_CHARS).collect();
        let text = text.trim();
        let words: Vec<&str> = text.split_whitespace().collect();
        let mut scores: Map<u32, f64> = map();
        self.whole_query(text, &words, &mut scores);
        for (id, conf) in self.word_scores(text, &words) {
            raise(&mut scores, id, conf);
        }
        // A class phrase ("oil", "natural gas"): its instrument and
        // vehicles first, namesakes damped (S-Oil is not what "oil" means).
        if let Some(targets) = self.class_of(text) {
            for (id, conf) in scores.iter_mut() {
                if !targets.contains(id) {
                    *conf *= NAMESAKE_DAMPING;
                }
            }
            for (k, &id) in targets.iter().enumerate() {
                let tier = CLASS_TIERS[k.min(CLASS_TIERS.len() - 1)];
                raise(&mut scores, id, tier);
            }
        }
        self.finish(scores, limit)
    }

    /// The signals of the query as a whole: ticker, website domain.
    fn whole_query(&self, text: &str, words: &[&str], scores: &mut Map<u32, f64>) {
        // Tickers, as typed and without filler words ("AAPL stock").
        for (id, conf) in self.ticker_matches(text) {
            raise(scores, id, conf);
        }
        let sig_words: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| tokens(w).iter().any(|t| significant(t)))
            .collect();
        if !sig_words.is_empty() && sig_words.len() < words.len() {
            for (id, conf) in self.ticker_matches(&sig_words.join(" ")) {
                raise(scores, id, conf - FILLER_PENALTY);
            }
        }
        // One transposition away from a ticker, when nothing else is.
        let c = compact(text);
        if scores.is_empty()
            && (4..=6).contains(&c.chars().count())
            && c.chars().all(char::is_alphabetic)
        {
            let chars: Vec<char> = c.chars().collect();
            for k in 1..chars.len() {
                let mut swapped = chars.clone();
                swapped.swap(k - 1, k);
                let s: String = swapped.into_iter().collect();
                if s == c {
                    continue;
                }
                for map in [&self.tickers_compact, &self.tickers_base] {
                    for &id in map.get(&s).into_iter().flatten() {
                        raise(scores, id, TICKER_TRANSPOSED);
                    }
                }
            }
        }

        // An identifier (ISIN) typed whole.
        let key = compact(text);
        if key.len() >= 6 {
            for &id in self.identifiers.get(&key).into_iter().flatten() {
                raise(scores, id, IDENTIFIER_EXACT);
            }
        }

        // Website domain.
        if words.len() == 1 {
            for d in domains_of(text) {
                for &id in self.domains.get(&d).into_iter().flatten() {
                    raise(scores, id, DOMAIN_EXACT);
                }
            }
        }
    }

    /// The signals of the query's words: the exact name, and each entry's
    /// word confidence (tier × explained share, misspelling cap, ambiguity
    /// damping).
    fn word_scores(&self, text: &str, words: &[&str]) -> Vec<(u32, f64)> {
        let qtok = query_tokens(text);
        if qtok.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<(u32, f64)> = self
            .names_exact
            .get(&compact(&qtok.concat()))
            .into_iter()
            .flatten()
            .map(|&id| (id, NAME_EXACT))
            .collect();

        let weights: Vec<f64> = qtok
            .iter()
            .map(|t| {
                self.vocab
                    .get(t)
                    .map_or(self.max_idf, |&id| self.idf[id as usize])
            })
            .collect();
        let total_weight: f64 = weights.iter().sum();
        let acc = self.word_hits(&qtok, words);

        // Word confidences, then ambiguity damping.
        let mut word_scores: Vec<(u32, f64)> = acc
            .into_iter()
            .map(|(id, a)| (id, self.word_confidence(id, &a, &weights, total_weight)))
            .collect();
        let top = word_scores.iter().map(|s| s.1).fold(0.0, f64::max);
        let ties = word_scores
            .iter()
            .filter(|s| s.1 >= AMBIGUITY_BAND * top)
            .count()
            .max(1);
        let damping = (1.0 - AMBIGUITY_SLOPE * (ties as f64).log2()).max(AMBIGUITY_FLOOR);
        out.extend(word_scores.drain(..).map(|(id, conf)| (id, conf * damping)));
        out
    }

    /// What each entry explains of the query tokens `qtok` (of the typed
    /// `words`): each word looked up (corrected and completed unless the
    /// query is filler only), adjacent words joined, and tickers among
    /// several words.
    fn word_hits(&self, qtok: &[String], words: &[&str]) -> Map<u32, Acc> {
        let mut acc: Map<u32, Acc> = map();
        let exact: Vec<bool> = qtok.iter().map(|t| self.vocab.contains_key(t)).collect();
        // A query of filler words only ("stock", "company") is taken
        // literally: completing or correcting it would invent a match.
        let filler_only = !qtok.iter().any(|t| significant(t));
        for (q, t) in qtok.iter().enumerate() {
            for hit in self.lookup(t, filler_only) {
                self.apply(&mut acc, hit, &[q]);
            }
        }
        // Adjacent words joined ("exxon mobil" → "exxonmobil", "jp morgan").
        for q in 1..qtok.len() {
            let joined = format!("{}{}", qtok[q - 1], qtok[q]);
            if let Some(&id) = self.vocab.get(&joined) {
                self.apply(
                    &mut acc,
                    Hit {
                        token: id,
                        strength: 1.0,
                        fuzzy: false,
                    },
                    &[q - 1, q],
                );
            } else if !filler_only && (!exact[q - 1] || !exact[q]) && joined.chars().count() >= 6 {
                // One edit only: two words glued are long, and two edits
                // over them match too much.
                for hit in self.corrections(&joined, 1) {
                    self.apply(&mut acc, hit, &[q - 1, q]);
                }
            }
        }
        // Tickers among several words ("Sony 6758").
        if words.len() > 1 {
            for w in words {
                if !looks_like_ticker(w) {
                    continue;
                }
                let covers: Vec<usize> = tokens(w)
                    .iter()
                    .filter_map(|t| qtok.iter().position(|q| q == t))
                    .collect();
                if covers.is_empty() {
                    continue;
                }
                for (id, _) in self.ticker_matches(w) {
                    let a = acc.entry(id).or_default();
                    a.ticker = 1.0;
                    for &q in &covers {
                        a.best[q] = 1.0;
                    }
                }
            }
        }
        acc
    }

    /// Records `hit` for every entry with its token, as explaining the
    /// query tokens at `covers`.
    fn apply(&self, acc: &mut Map<u32, Acc>, hit: Hit, covers: &[usize]) {
        let tid = hit.token as usize;
        for p in &self.postings[tid] {
            let a = acc.entry(p.entry).or_default();
            let explained = hit.strength * p.field.explains();
            for &q in covers {
                a.best[q] = a.best[q].max(explained);
            }
            match p.field {
                Field::Name => {
                    a.name = true;
                    let mut m = p.mask;
                    while m != 0 {
                        let b = m.trailing_zeros() as usize;
                        a.core_hit[b] = a.core_hit[b].max(hit.strength);
                        m &= m - 1;
                    }
                }
                Field::Alias => a.alias = a.alias.max(hit.strength),
                Field::Website => a.website = a.website.max(hit.strength),
                Field::Product => {
                    a.product = a.product.max(hit.strength);
                    a.product_df = a.product_df.min(self.df[tid]);
                }
                Field::Weak => {
                    a.weak = a.weak.max(hit.strength);
                    a.weak_df = a.weak_df.min(self.weak_df[tid]);
                }
            }
            if hit.fuzzy {
                a.fuzzy_min = a.fuzzy_min.min(hit.strength);
            }
        }
    }

    /// Entry `id`'s word confidence from what it explains (`a`): its best
    /// field's tier, scaled by the share of the query's weight (`weights`,
    /// summing to `total_weight`) it explains, capped when corrected.
    fn word_confidence(&self, id: u32, a: &Acc, weights: &[f64], total_weight: f64) -> f64 {
        let explained: f64 = weights
            .iter()
            .zip(a.best.iter())
            .map(|(w, b)| w * b)
            .sum::<f64>()
            / total_weight;
        let mut tier: f64 = 0.0;
        if a.name {
            let info = &self.info[id as usize];
            let covered: f64 = info
                .core_idf
                .iter()
                .zip(a.core_hit.iter())
                .map(|(w, h)| w * h)
                .sum();
            let ncov = if info.core_total > 0.0 {
                covered / info.core_total
            } else {
                0.0
            };
            tier = tier.max(NAME_TIER_BASE + NAME_TIER_SPAN * ncov);
        }
        tier = tier
            .max(ALIAS_TIER * a.alias)
            .max(WORD_TICKER_TIER * a.ticker)
            .max(WEBSITE_TIER * a.website);
        if a.product > 0.0 {
            tier = tier.max(product_tier(a.product_df) * a.product);
        }
        if a.weak > 0.0 {
            tier = tier.max(weak_tier(a.weak_df) * a.weak);
        }
        let mut conf = tier * (EXPLAINED_FLOOR + (1.0 - EXPLAINED_FLOOR) * explained);
        if a.fuzzy_min < 1.0 {
            // Scaled rather than clipped, so that among corrected
            // matches the better name still comes first.
            conf = fuzzy_cap(a.fuzzy_min) * (conf / FUZZY_FULL).min(1.0);
        }
        conf
    }

    /// Drops weak results, sorts (confidence, then catalog order) and cuts.
    fn finish(&self, scores: Map<u32, f64>, limit: usize) -> Vec<(u32, f64)> {
        let mut out: Vec<(u32, f64)> = scores
            .into_iter()
            .filter(|(_, c)| *c >= MIN_CONFIDENCE)
            .map(|(id, c)| (id, c.clamp(0.0, 1.0)))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(limit);
        out
    }
}
