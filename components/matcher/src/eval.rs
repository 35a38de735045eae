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
    /// Acceptable tickers (any of them counts as a hit).
    pub expected: Vec<String>,
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

/// Reads `eval/queries.csv`: header `query,expected`, expected tickers
/// separated by `|`.
pub fn load_queries(text: &str) -> Result<Vec<Query>, String> {
    let mut records = parse_csv(text).into_iter();
    let header = records.next().ok_or("empty query file")?;
    if header != ["query", "expected"] {
        return Err(format!(
            "query file header is {header:?}, not query,expected"
        ));
    }
    records
        .enumerate()
        .map(|(line, r)| match r.as_slice() {
            [q, e] if !q.trim().is_empty() && !e.trim().is_empty() => Ok(Query {
                text: q.clone(),
                expected: e.split('|').map(|t| t.trim().to_string()).collect(),
            }),
            _ => Err(format!("query record {} is malformed: {r:?}", line + 2)),
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
            writeln!(
                f,
                "  {} {:?}: expected {}, got [{}]",
                if m.in_top3 { "top-3" } else { "MISS " },
                m.query.text,
                m.query.expected.join("|"),
                got.join(", ")
            )?;
        }
        Ok(())
    }
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
        let ok = |t: &(String, f64)| q.expected.contains(&t.0);
        let first = tickers.first().is_some_and(ok);
        let top3 = tickers.iter().take(3).any(ok);
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
