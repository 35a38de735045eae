//! How well-known each asset is: its membership in major stock indices,
//! read from the reference table `make reference` derives from the pinned
//! `pytickersymbols` package (data/reference/PROVENANCE.md), as the
//! prominence the matcher's `catalog-priors` import takes.
//!
//! Prominence is a noisy-or of per-index weights,
//! `1 − Π (1 − weight)` over the indices listing the asset
//! ([`INDEX_WEIGHTS`]): a Dow Jones member is 1, a member of the S&P 500
//! alone 0.5, of the S&P 500 and the S&P 100 0.9, a DAX and EURO STOXX 50
//! member 0.94; an asset no index lists (ETFs, coins, futures, small
//! caps) is 0.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Where `make reference` puts the reference data, relative to the working
/// directory (the repository root under `make run`).
pub const DEFAULT_REFERENCE_DIR: &str = "data/reference";
/// The index membership table in that folder.
pub const MEMBERSHIP_FILE: &str = "index-membership.csv";

/// Index (as `pytickersymbols` names it) → how much membership says an
/// asset is well known. Flagship blue-chip indices weigh most; broad and
/// mid/small-cap ones little. Indices not listed weigh nothing.
pub const INDEX_WEIGHTS: &[(&str, f32)] = &[
    ("DOW JONES", 1.0),
    ("S&P 100", 0.8),
    ("EURO STOXX 50", 0.8),
    ("DAX", 0.7),
    ("CAC_40", 0.7),
    ("Switzerland 20", 0.7),
    ("NASDAQ 100", 0.6),
    ("FTSE 100", 0.6),
    ("AEX", 0.6),
    ("IBEX 35", 0.6),
    ("S&P 500", 0.5),
    ("NIKKEI 225", 0.5),
    ("OMX Stockholm 30", 0.5),
    ("OMX Helsinki 25", 0.5),
    ("BEL 20", 0.5),
    ("MDAX", 0.3),
    ("TecDAX", 0.3),
    ("CAC Mid 60", 0.2),
    ("SDAX", 0.1),
    ("S&P 600", 0.1),
];

/// The index membership of listed companies, by Yahoo symbol.
#[derive(Debug, Clone, Default)]
pub struct IndexMembership {
    /// Symbol → the indices listing it (deduplicated).
    by_symbol: HashMap<String, Vec<String>>,
    /// Symbol → the ISINs of its company (every listing of it).
    isins: HashMap<String, Vec<String>>,
    /// Rows read.
    rows: usize,
}

impl IndexMembership {
    /// Reads `dir/index-membership.csv`.
    pub fn load(dir: &Path) -> anyhow::Result<IndexMembership> {
        let path: PathBuf = dir.join(MEMBERSHIP_FILE);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {} (`make reference` writes it)", path.display()))?;
        IndexMembership::parse(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// Parses the table (CSV: `index,name,symbols,isins,country`, symbols
    /// `|`-separated).
    pub fn parse(text: &str) -> anyhow::Result<IndexMembership> {
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let headers = reader.headers()?.clone();
        let col = |name: &str| {
            headers
                .iter()
                .position(|h| h == name)
                .with_context(|| format!("no `{name}` column"))
        };
        let (index_col, symbols_col, isins_col) = (col("index")?, col("symbols")?, col("isins")?);
        let mut out = IndexMembership::default();
        for (line, record) in reader.records().enumerate() {
            let record = record.with_context(|| format!("record {}", line + 2))?;
            let index = record.get(index_col).unwrap_or("").to_string();
            let isins: Vec<&str> = record
                .get(isins_col)
                .unwrap_or("")
                .split('|')
                .map(str::trim)
                .filter(|i| i.len() == 12 && i.chars().all(|c| c.is_ascii_alphanumeric()))
                .collect();
            for symbol in record.get(symbols_col).unwrap_or("").split('|') {
                let symbol = symbol.trim();
                if symbol.is_empty() {
                    continue;
                }
                let list = out.by_symbol.entry(symbol.to_string()).or_default();
                if !list.contains(&index) {
                    list.push(index.clone());
                }
                let known = out.isins.entry(symbol.to_string()).or_default();
                for isin in &isins {
                    if !known.iter().any(|k| k == isin) {
                        known.push(isin.to_string());
                    }
                }
            }
            out.rows += 1;
        }
        Ok(out)
    }

    /// Memberships read.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The indices listing `ticker`.
    pub fn indices(&self, ticker: &str) -> &[String] {
        self.by_symbol.get(ticker).map_or(&[], Vec::as_slice)
    }

    /// The ISINs the table gives `ticker`'s company (its other share
    /// classes' and depositary receipts' included: all name the company).
    pub fn isins(&self, ticker: &str) -> &[String] {
        self.isins.get(ticker).map_or(&[], Vec::as_slice)
    }

    /// The prominence of `ticker`, in [0, 1] (see the module docs).
    pub fn prominence(&self, ticker: &str) -> f32 {
        let mut unknown = 1.0f32;
        for index in self.indices(ticker) {
            if let Some(&(_, w)) = INDEX_WEIGHTS.iter().find(|(name, _)| name == index) {
                unknown *= 1.0 - w;
            }
        }
        (1.0 - unknown).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "index,name,symbols,isins,country\n\
        DOW JONES,Apple,AAPL|APC.F,US0378331005,United States\n\
        S&P 500,Apple,AAPL,US0378331005,United States\n\
        S&P 500,\"Regional Power, Inc.\",RPWR,,United States\n\
        S&P 500,NextEra,NEE,,United States\n\
        S&P 100,NextEra,NEE,,United States\n\
        DAX,Adidas,ADS.DE|ADS.F,DE000A1EWWW0,Germany\n\
        Unknown Index,Tiny,TINY,,Nowhere\n";

    #[test]
    fn prominence_grows_with_the_indices_listing_an_asset() {
        let m = IndexMembership::parse(TABLE).unwrap();
        assert_eq!(m.len(), 7);
        assert_eq!(m.prominence("AAPL"), 1.0);
        assert!((m.prominence("RPWR") - 0.5).abs() < 1e-6);
        assert!((m.prominence("NEE") - 0.9).abs() < 1e-6);
        // Every listing of a member counts, an unknown index and an
        // unlisted symbol weigh nothing.
        assert!((m.prominence("ADS.F") - 0.7).abs() < 1e-6);
        assert_eq!(m.prominence("TINY"), 0.0);
        assert_eq!(m.prominence("SPY"), 0.0);
        assert!(m.prominence("NEE") > m.prominence("RPWR"));
        assert_eq!(m.isins("APC.F"), ["US0378331005"]);
        assert!(m.isins("NEE").is_empty());
    }

    #[test]
    fn a_table_without_its_columns_is_refused() {
        let e = IndexMembership::parse("name,isins\nApple,US0378331005\n").unwrap_err();
        assert!(format!("{e:#}").contains("`index`"), "{e:#}");
    }
}
