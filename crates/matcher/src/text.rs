//! Text normalisation shared by the index and the queries: folding, tokens,
//! stemming, stop words and the compact form of tickers.
//!
//! Both sides go through the same functions, so whatever a rule does to a
//! catalog name it also does to the text a user types.

/// Words that never drive a match on their own: articles and connectors,
/// corporate suffixes, and the filler of a search ("stock", "price",
/// "maker", …). They are dropped from queries and from names (a query made
/// of stop words only falls back to its raw tokens, so "maker" still finds
/// the Maker coin). Listed in stemmed form ("shares" → "share"), since
/// [`tokens`] stems before the comparison.
const STOP_WORDS: &[&str] = &[
    // Articles, prepositions, connectors (English and the Romance/Germanic
    // ones found in catalog names).
    "a",
    "an",
    "the",
    "of",
    "and",
    "or",
    "for",
    "in",
    "on",
    "at",
    "to",
    "by",
    "with",
    "from",
    "de",
    "del",
    "da",
    "do",
    "des",
    "du",
    "la",
    "le",
    "el",
    "y",
    "et",
    "und",
    "vs",
    "versus",
    // Corporate forms and suffixes.
    "inc",
    "incorporated",
    "corp",
    "corporation",
    "co",
    "company",
    "companie",
    "ltd",
    "limited",
    "plc",
    "llc",
    "lp",
    "ag",
    "sa",
    "nv",
    "se",
    "sab",
    "cv",
    "spa",
    "asa",
    "ab",
    "oyj",
    "kgaa",
    "group",
    "holding",
    "class",
    "pref",
    "adr",
    "ordinary",
    // Search filler.
    "stock",
    "share",
    "equity",
    "ticker",
    "symbol",
    "price",
    "quote",
    "chart",
    "maker",
    "manufacturer",
    "producer",
    "firm",
    "business",
    "buy",
    "sell",
    "what",
    "who",
    "which",
    "is",
    "are",
    "make",
    "made",
    "that",
    "this",
    "about",
    "me",
    "my",
    "i",
    "please",
    "show",
    "find",
    "search",
    "info",
    "information",
    // Web address parts.
    "www",
    "com",
    "http",
    "https",
    "net",
    "org",
];

/// Whether `token` (already lower case, stemmed or not) is a stop word.
pub fn is_stop(token: &str) -> bool {
    STOP_WORDS.contains(&token)
}

/// Appends the lower-case ASCII folding of `c` to `out` (accents dropped,
/// ligatures spelt out); characters without a folding are kept lower-cased.
fn fold_into(c: char, out: &mut String) {
    let s = match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' | 'Ā' => {
            "a"
        }
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'È' | 'É' | 'Ê' | 'Ë' | 'Ē' => "e",
        'ì' | 'í' | 'î' | 'ï' | 'ī' | 'Ì' | 'Í' | 'Î' | 'Ï' | 'Ī' => "i",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' | 'Ø' | 'Ō' => {
            "o"
        }
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'Ù' | 'Ú' | 'Û' | 'Ü' | 'Ū' => "u",
        'ý' | 'ÿ' | 'Ý' => "y",
        'ñ' | 'Ñ' => "n",
        'ç' | 'Ç' | 'č' | 'Č' => "c",
        'š' | 'Š' => "s",
        'ž' | 'Ž' => "z",
        'ł' | 'Ł' => "l",
        'ß' => "ss",
        'æ' | 'Æ' => "ae",
        'œ' | 'Œ' => "oe",
        '’' | '‘' | '`' | '´' => "'",
        _ => {
            out.extend(c.to_lowercase());
            return;
        }
    };
    out.push_str(s);
}

/// Lower case with accents folded: `"Deutsche Börse"` → `"deutsche borse"`.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        fold_into(c, &mut out);
    }
    out
}

/// Only the letters and digits of `fold(text)`: `"BRK-B"` → `"brkb"`,
/// `"EUR/USD"` → `"eurusd"`. Tickers and names are compared in this form.
pub fn compact(text: &str) -> String {
    fold(text).chars().filter(|c| c.is_alphanumeric()).collect()
}

/// A light English stemmer: a trailing `s` is dropped from words of four
/// letters or more unless they end in `ss`, `us` or `is` ("futures" →
/// "future", "cars" → "car", "swiss" and "status" unchanged). Crude, but
/// applied identically to names, summaries and queries.
pub fn stem(token: &str) -> String {
    let b = token.as_bytes();
    if b.len() >= 4
        && b[b.len() - 1] == b's'
        && !matches!(b[b.len() - 2], b's' | b'u' | b'i')
        && b[b.len() - 2].is_ascii_alphabetic()
    {
        token[..token.len() - 1].to_string()
    } else {
        token.to_string()
    }
}

/// Splits `text` into folded, stemmed tokens (stop words included).
///
/// Separators are anything but letters and digits, except that `&` and an
/// apostrophe between letters join ("S&P" → "sp", "AT&T" → "att",
/// "McDonald's" → "mcdonalds"), and dotted initials join ("U.S." → "us",
/// "S.A.B." → "sab").
pub fn tokens(text: &str) -> Vec<String> {
    let folded = fold(text);
    let chars: Vec<char> = folded.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    // Length of the current dot-separated segment, and whether every
    // segment so far had one letter (a run of initials).
    let mut seg_len = 0usize;
    let mut initials = true;
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        if !cur.is_empty() {
            out.push(stem(cur));
            cur.clear();
        }
    };
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let next_alnum = next.is_some_and(|n| n.is_alphanumeric());
        if c.is_alphanumeric() {
            cur.push(c);
            seg_len += 1;
            if seg_len > 1 {
                initials = false;
            }
            continue;
        }
        let joins = match c {
            '&' | '\'' => !cur.is_empty() && next_alnum,
            '.' => {
                let after = chars.get(i + 2).copied();
                !cur.is_empty()
                    && initials
                    && seg_len == 1
                    && next.is_some_and(|n| n.is_alphabetic())
                    && !after.is_some_and(|a| a.is_alphanumeric())
            }
            _ => false,
        };
        if joins {
            seg_len = 0;
            continue;
        }
        flush(&mut cur, &mut out);
        seg_len = 0;
        initials = true;
    }
    flush(&mut cur, &mut out);
    out
}

/// Whether a token may carry meaning in a query or a name: not a stop word
/// and not a lone
/// letter (digits are kept: "Model 3", "Chroma 2 Case").
pub fn significant(token: &str) -> bool {
    if is_stop(token) {
        return false;
    }
    let mut chars = token.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => c.is_ascii_digit(),
        (Some(_), Some(_)) => true,
        _ => false,
    }
}

/// The significant tokens of `text`, or all its tokens when none is
/// significant (so "maker" or "The Company" still mean something).
pub fn significant_tokens(text: &str) -> Vec<String> {
    let all = tokens(text);
    let sig: Vec<String> = all.iter().filter(|t| significant(t)).cloned().collect();
    if sig.is_empty() {
        all
    } else {
        sig
    }
}

/// Restricted Damerau–Levenshtein (optimal string alignment) distance, or
/// `None` when it exceeds `max`.
pub fn osa_distance(a: &[char], b: &[char], max: usize) -> Option<usize> {
    let (n, m) = (a.len(), b.len());
    if n.abs_diff(m) > max {
        return None;
    }
    // Three rolling rows: i-2, i-1, i.
    let mut prev2 = vec![0usize; m + 1];
    let mut prev: Vec<usize> = (0..=m).collect();
    let mut cur = vec![0usize; m + 1];
    for i in 1..=n {
        cur[0] = i;
        let mut row_min = cur[0];
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
            row_min = row_min.min(v);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[m];
    (d <= max).then_some(d)
}

/// The trigrams of `token` padded with one `$` on each side, packed into
/// integers (three 21-bit code points).
pub fn trigrams(token: &str) -> Vec<u64> {
    let mut chars = vec!['$'];
    chars.extend(token.chars());
    chars.push('$');
    let mut out: Vec<u64> = chars
        .windows(3)
        .map(|w| (u64::from(w[0]) << 42) | (u64::from(w[1]) << 21) | u64::from(w[2]))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}
