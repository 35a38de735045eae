//! The evaluation harness: loaders for the catalog CSV and the evaluation
//! set (`eval/queries.csv`, `eval/gibberish.txt`), and the top-1 / top-3 /
//! latency report. Plain Rust, so the native tests and the host's
//! benchmark (which may run the component instead) share it.

use std::time::{Duration, Instant};

use crate::index::Entry;

/// One evaluation query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The text typed.
    pub text: String,
    /// Acceptable tickers (any of them counts as a hit), of every mention.
    pub expected: Vec<String>,
    /// The assets the text names, each as its acceptable tickers: one
    /// element for a query about one asset (`TSLA|RIVN` in the file), one
    /// per mention for a sentence naming several (`AAPL+TSLA+BTC-USD`).
    pub mentions: Vec<Vec<String>>,
    /// Its group (`names`, `descriptions`, `multi`, `knowledge`), for the
    /// per-group report.
    pub group: String,
}

impl Query {
    /// Whether `got` (tickers, best first) answers this query within its
    /// first `n`: every mention has an acceptable ticker there.
    pub fn answered_within(&self, got: &[String], n: usize) -> bool {
        let first = &got[..got.len().min(n)];
        self.mentions
            .iter()
            .all(|alternatives| first.iter().any(|t| alternatives.contains(t)))
    }

    /// The "top-1" test: the first answer is right (for a sentence naming
    /// k assets, the first k answers are its assets).
    pub fn top1(&self, got: &[String]) -> bool {
        self.answered_within(got, self.mentions.len())
    }

    /// The "top-3" test: every asset named is among the first three.
    pub fn top3(&self, got: &[String]) -> bool {
        self.answered_within(got, 3)
    }
}

/// Splits CSV text into records of fields (RFC 4180: quoted fields may hold
/// commas, doubled quotes and line breaks; CRLF or LF line ends).
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut dirty = false;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' => {
                quoted = true;
                dirty = true;
            }
            ',' => {
                record.push(std::mem::take(&mut field));
                dirty = true;
            }
            '\r' => {}
            '\n' => {
                if dirty || !field.is_empty() {
                    record.push(std::mem::take(&mut field));
                    records.push(std::mem::take(&mut record));
                }
                dirty = false;
            }
            _ => {
                field.push(c);
                dirty = true;
            }
        }
    }
    if dirty || !field.is_empty() {
        record.push(field);
        records.push(record);
    }
    records
}

/// Reads `data/catalog.csv` (columns found by header name) into entries,
/// in file order.
pub fn load_catalog_csv(text: &str) -> Result<Vec<Entry>, String> {
    let mut records = parse_csv(text).into_iter();
    let header = records.next().ok_or("empty catalog")?;
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h.trim() == name)
            .ok_or_else(|| format!("catalog has no `{name}` column"))
    };
    let cols = [
        col("ticker")?,
        col("name")?,
        col("category")?,
        col("exchange")?,
        col("country")?,
        col("sector")?,
        col("industry")?,
        col("website")?,
        col("summary")?,
    ];
    let mut out = Vec::new();
    for (line, r) in records.enumerate() {
        if r.len() != header.len() {
            return Err(format!(
                "catalog record {} has {} fields, not {}",
                line + 2,
                r.len(),
                header.len()
            ));
        }
        let f = |k: usize| r[cols[k]].trim().to_string();
        out.push(Entry {
            ticker: f(0),
            name: f(1),
            category: f(2),
            exchange: f(3),
            country: f(4),
            sector: f(5),
            industry: f(6),
            website: f(7),
            summary: f(8),
        });
    }
    Ok(out)
}

/// `entries` without the tickers in `inactive` (the host never passes
/// inactive assets to the matcher).
pub fn drop_inactive(entries: Vec<Entry>, inactive: &[&str]) -> Vec<Entry> {
    entries
        .into_iter()
        .filter(|e| !inactive.contains(&e.ticker.as_str()))
        .collect()
}

/// Reads `eval/queries.csv`: header `query,expected[,group]`; expected
/// tickers separated by `|` (alternatives) and `+` (several assets named);
/// the group defaults to `names`.
pub fn load_queries(text: &str) -> Result<Vec<Query>, String> {
    let mut records = parse_csv(text).into_iter();
    let header = records.next().ok_or("empty query file")?;
    if header != ["query", "expected"] && header != ["query", "expected", "group"] {
        return Err(format!(
            "query file header is {header:?}, not query,expected[,group]"
        ));
    }
    records
        .enumerate()
        .map(|(line, r)| {
            let (q, e, g) = match r.as_slice() {
                [q, e] => (q, e, "names"),
                [q, e, g] => (q, e, g.trim()),
                _ => return Err(format!("query record {} is malformed: {r:?}", line + 2)),
            };
            if q.trim().is_empty() || e.trim().is_empty() || g.is_empty() {
                return Err(format!("query record {} is malformed: {r:?}", line + 2));
            }
            let mentions: Vec<Vec<String>> = e
                .split('+')
                .map(|m| m.split('|').map(|t| t.trim().to_string()).collect())
                .collect();
            Ok(Query {
                text: q.clone(),
                expected: mentions.iter().flatten().cloned().collect(),
                mentions,
                group: g.to_string(),
            })
        })
        .collect()
}

/// Reads `eval/gibberish.txt`: one string per non-empty line.
pub fn load_gibberish(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// One query the matcher did not get first.
#[derive(Debug, Clone)]
pub struct Miss {
    /// The query.
    pub query: Query,
    /// The tickers returned, best first, with their confidences.
    pub got: Vec<(String, f64)>,
    /// Whether an expected ticker was in the top three.
    pub in_top3: bool,
}

/// Accuracy and latency over an evaluation set.
#[derive(Debug, Clone)]
pub struct Report {
    /// Queries run.
    pub queries: usize,
    /// Share with an expected ticker first.
    pub top1: f64,
    /// Share with an expected ticker among the first three.
    pub top3: f64,
    /// Queries not answered right first.
    pub misses: Vec<Miss>,
    /// Per-query latency percentiles.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// Slowest query.
    pub max: Duration,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} queries: top-1 {:.1} %, top-3 {:.1} %, latency p50 {:?}, p99 {:?}, max {:?}",
            self.queries,
            100.0 * self.top1,
            100.0 * self.top3,
            self.p50,
            self.p99,
            self.max
        )?;
        for m in &self.misses {
            let got: Vec<String> = m.got.iter().map(|(t, c)| format!("{t} {c:.2}")).collect();
            let expected: Vec<String> = m.query.mentions.iter().map(|a| a.join("|")).collect();
            writeln!(
                f,
                "  {} [{}] {:?}: expected {}, got [{}]",
                if m.in_top3 { "top-3" } else { "MISS " },
                m.query.group,
                m.query.text,
                expected.join(" + "),
                got.join(", ")
            )?;
        }
        Ok(())
    }
}

/// One report per group, in the order groups first appear in `queries`.
pub fn evaluate_groups(
    queries: &[Query],
    entries: &[Entry],
    mut find: impl FnMut(&str) -> Vec<(u32, f64)>,
) -> Vec<(String, Report)> {
    let mut groups: Vec<String> = Vec::new();
    for q in queries {
        if !groups.contains(&q.group) {
            groups.push(q.group.clone());
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let these: Vec<Query> = queries.iter().filter(|q| q.group == g).cloned().collect();
            let report = evaluate(&these, entries, &mut find);
            (g, report)
        })
        .collect()
}

/// Runs every query through `find` (text → entry positions with
/// confidences, best first, already cut to three) and scores the answers
/// against `entries`.
pub fn evaluate(
    queries: &[Query],
    entries: &[Entry],
    mut find: impl FnMut(&str) -> Vec<(u32, f64)>,
) -> Report {
    let mut hits1 = 0usize;
    let mut hits3 = 0usize;
    let mut misses = Vec::new();
    let mut times = Vec::with_capacity(queries.len());
    for q in queries {
        let start = Instant::now();
        let got = find(&q.text);
        times.push(start.elapsed());
        let tickers: Vec<(String, f64)> = got
            .iter()
            .map(|&(id, c)| (entries[id as usize].ticker.clone(), c))
            .collect();
        let names: Vec<String> = tickers.iter().map(|t| t.0.clone()).collect();
        let first = q.top1(&names);
        let top3 = q.top3(&names);
        hits1 += usize::from(first);
        hits3 += usize::from(top3);
        if !first {
            misses.push(Miss {
                query: q.clone(),
                got: tickers,
                in_top3: top3,
            });
        }
    }
    times.sort();
    let pct = |p: f64| {
        if times.is_empty() {
            Duration::ZERO
        } else {
            times[((times.len() - 1) as f64 * p).round() as usize]
        }
    };
    let n = queries.len().max(1) as f64;
    Report {
        queries: queries.len(),
        top1: hits1 as f64 / n,
        top3: hits3 as f64 / n,
        misses,
        p50: pct(0.5),
        p99: pct(0.99),
        max: times.last().copied().unwrap_or_default(),
    }
}
