//! Stooq's daily CSV download: `GET {base}/q/d/l/?s={symbol}&i=d`, with
//! `&d1=YYYYMMDD&d2=YYYYMMDD` for a date range.
//!
//! # Wire format
//!
//! `Date,Open,High,Low,Close,Volume` then one row per day, oldest first
//! (`Volume` is absent for indices and currencies on some symbols). An
//! unknown symbol, or a range without rows, answers 200 with the body
//! `No data`; over the daily quota the body is a sentence such as
//! `Exceeded the daily hits limit` — the run then stops asking.
//!
//! # What is stored
//!
//! `Close` of each row (Stooq's series are already adjusted for splits; it
//! publishes no split events, so nothing is adjusted here). Dates must be
//! `YYYY-MM-DD`, closes finite and > 0; a row with the wrong number of
//! fields (a cut answer) fails the whole answer; duplicated dates keep the
//! last row, rows are sorted.
//!
//! # Symbols
//!
//! The catalog's tickers are Yahoo's. Stooq names US stocks and ETFs
//! `aapl.us` (`BRK-B` → `brk-b.us`), other markets by a suffix of its own
//! (`.L` → `.uk`, `.T` → `.jp`, `.HK` → `.hk`, `.DE` → `.de`), currency
//! pairs `eurusd` (Yahoo `EURUSD=X`; `JPY=X`, dollars in yen, is `usdjpy`),
//! futures `cl.f` (`CL=F`), crypto `btcusd` (`BTC-USD`) and the main
//! indices by a table (`^GSPC` → `^spx`). Anything else has no Stooq
//! symbol and fails with the reason.

use chrono::NaiveDate;

use forecast_domain::series::to_days;
use forecast_domain::{Asset, Category};

use super::{encode_component, snippet, sort_keep_last, ParseError, Parsed, PriceProvider};

/// The public base URL.
pub const DEFAULT_BASE_URL: &str = "https://stooq.com";

/// Yahoo index symbols and Stooq's names for them.
const INDICES: &[(&str, &str)] = &[
    ("^GSPC", "^spx"),
    ("^DJI", "^dji"),
    ("^IXIC", "^ndq"),
    ("^NDX", "^ndx"),
    ("^N225", "^nkx"),
    ("^FTSE", "^ukx"),
    ("^GDAXI", "^dax"),
    ("^FCHI", "^cac"),
    ("^HSI", "^hsi"),
];

/// Yahoo suffixes and Stooq's.
const SUFFIXES: &[(&str, &str)] = &[(".L", ".uk"), (".T", ".jp"), (".HK", ".hk"), (".DE", ".de")];

/// Stooq's daily CSV download under a base URL.
#[derive(Debug, Clone)]
pub struct Stooq {
    base: String,
}

impl Stooq {
    /// The provider at `base` (everything before `/q/d/l/`).
    pub fn new(base: &str) -> Stooq {
        Stooq {
            base: base.trim_end_matches('/').to_string(),
        }
    }
}

/// Stooq's symbol for a catalog ticker of `category` (see the module docs).
pub fn stooq_symbol(ticker: &str, category: Category) -> Option<String> {
    let plain =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if let Some(&(_, s)) = INDICES.iter().find(|(y, _)| *y == ticker) {
        return Some(s.to_string());
    }
    match category {
        Category::UsStocks | Category::Etfs if plain(ticker) => {
            return Some(format!("{}.us", ticker.to_ascii_lowercase()))
        }
        Category::Forex => {
            let pair = ticker.strip_suffix("=X")?;
            return match pair.len() {
                6 if pair.bytes().all(|b| b.is_ascii_alphabetic()) => {
                    Some(pair.to_ascii_lowercase())
                }
                // Yahoo's `JPY=X` is the dollar's price in yen.
                3 if pair.bytes().all(|b| b.is_ascii_alphabetic()) => {
                    Some(format!("usd{}", pair.to_ascii_lowercase()))
                }
                _ => None,
            };
        }
        Category::Crypto => {
            let (coin, quote) = ticker.split_once('-')?;
            return (plain(coin) && quote == "USD")
                .then(|| format!("{}usd", coin.to_ascii_lowercase()));
        }
        Category::Commodities => {
            let root = ticker.strip_suffix("=F")?;
            return plain(root).then(|| format!("{}.f", root.to_ascii_lowercase()));
        }
        _ => {}
    }
    SUFFIXES.iter().find_map(|(y, s)| {
        let stem = ticker.strip_suffix(y)?;
        plain(stem).then(|| format!("{}{s}", stem.to_ascii_lowercase()))
    })
}

impl PriceProvider for Stooq {
    fn name(&self) -> &'static str {
        "stooq"
    }

    fn symbol(&self, asset: &Asset) -> Result<String, String> {
        stooq_symbol(&asset.ticker, asset.category).ok_or_else(|| {
            format!(
                "stooq has no symbol for {} ({})",
                asset.ticker, asset.category
            )
        })
    }

    fn request_url(&self, symbol: &str, since: Option<NaiveDate>, today: NaiveDate) -> String {
        let mut url = format!("{}/q/d/l/?s={}&i=d", self.base, encode_component(symbol));
        if let Some(since) = since {
            url.push_str(&format!(
                "&d1={}&d2={}",
                since.format("%Y%m%d"),
                today.format("%Y%m%d")
            ));
        }
        url
    }

    fn parse(&self, body: &[u8]) -> Result<Parsed, ParseError> {
        parse(body)
    }
}

/// Parses a daily CSV answer (see the module docs).
pub fn parse(body: &[u8]) -> Result<Parsed, ParseError> {
    let invalid = ParseError::Invalid;
    let text = std::str::from_utf8(body)
        .map_err(|_| invalid("stooq answer is not UTF-8 text".to_string()))?
        .trim_start_matches('\u{feff}');
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(invalid("stooq answered an empty body".to_string()));
    }
    if trimmed.eq_ignore_ascii_case("no data") {
        return Err(ParseError::NoData(
            "stooq has no data for this symbol (unknown symbol, or no rows in the requested dates)"
                .to_string(),
        ));
    }
    let lower = trimmed.to_ascii_lowercase();
    if lower.contains("exceeded the daily hits limit") || lower.contains("limit exceeded") {
        return Err(ParseError::QuotaExceeded(format!(
            "stooq refuses more requests today: {}",
            snippet(body, 80)
        )));
    }
    // LF line ends, so that the csv crate reports the lines as they are
    // numbered in the text (with CRLF its positions lag by one).
    let text = text.replace("\r\n", "\n");
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut records = reader.records();
    let header = match records.next() {
        Some(Ok(h)) => h,
        _ => return Err(invalid("stooq answer has no header line".to_string())),
    };
    let column = |name: &str| header.iter().position(|h| h.eq_ignore_ascii_case(name));
    let (Some(date_col), Some(close_col)) = (column("Date"), column("Close")) else {
        return Err(invalid(format!(
            "stooq answer is not a price CSV (first line: '{}')",
            snippet(body, 80)
        )));
    };
    let mut rows = Vec::new();
    for rec in records {
        let rec = rec.map_err(|e| invalid(format!("stooq CSV: {e}")))?;
        let line = rec.position().map_or(0, |p| p.line());
        if rec.len() == 1 && rec[0].is_empty() {
            continue;
        }
        if rec.len() != header.len() {
            return Err(invalid(format!(
                "stooq CSV line {line}: expected {} fields as in the header, found {} (answer cut off?)",
                header.len(),
                rec.len()
            )));
        }
        let date = parse_date(&rec[date_col]).ok_or_else(|| {
            invalid(format!(
                "stooq CSV line {line}: date '{}' is not a YYYY-MM-DD date",
                &rec[date_col]
            ))
        })?;
        let close = rec[close_col]
            .parse::<f64>()
            .ok()
            .filter(|c| c.is_finite() && *c > 0.0)
            .ok_or_else(|| {
                invalid(format!(
                    "stooq CSV line {line}: close '{}' is not a price > 0",
                    &rec[close_col]
                ))
            })?;
        rows.push((to_days(date), close));
    }
    if rows.is_empty() {
        return Err(invalid(
            "stooq answer has no rows after the header".to_string(),
        ));
    }
    let duplicates = sort_keep_last(&mut rows);
    Ok(Parsed {
        rows,
        skipped_null: 0,
        duplicates,
        splits_adjusted: 0,
    })
}

/// A strict `YYYY-MM-DD` date from 1900 on.
fn parse_date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    let shape = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    let date = NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .filter(|_| shape)?;
    (to_days(date) >= super::earliest_day()).then_some(date)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/providers/stooq"
    );

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{FIXTURES}/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn day(s: &str) -> i32 {
        to_days(NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap())
    }

    #[test]
    fn good_file_parses_with_crlf() {
        let p = parse(&fixture("aapl.us.csv")).unwrap();
        assert_eq!(p.rows.len(), 10);
        assert_eq!(p.rows[0], (day("2024-02-05"), 186.37));
        assert_eq!(p.rows[9], (day("2024-02-16"), 182.31));
        assert_eq!((p.duplicates, p.skipped_null, p.splits_adjusted), (0, 0, 0));
        // Currencies come without a volume column.
        let p = parse(&fixture("eurusd.csv")).unwrap();
        assert_eq!(p.rows.len(), 5);
        assert_eq!(p.rows[4], (day("2024-06-07"), 1.08003));
    }

    #[test]
    fn duplicates_keep_the_last_and_rows_are_sorted() {
        let p = parse(&fixture("^spx.csv")).unwrap();
        assert_eq!(p.duplicates, 1);
        assert_eq!(
            p.rows,
            vec![
                (day("2024-06-03"), 5283.4),
                (day("2024-06-04"), 5291.34),
                (day("2024-06-05"), 5354.03),
                (day("2024-06-06"), 5352.96),
                (day("2024-06-07"), 5346.99),
            ]
        );
    }

    #[test]
    fn truncated_no_data_and_quota_answers_fail() {
        let e = parse(&fixture("truncated.csv")).unwrap_err();
        assert!(matches!(e, ParseError::Invalid(_)), "{e:?}");
        assert!(e.to_string().contains("line 11: expected 6 fields"), "{e}");
        let e = parse(&fixture("no-data.txt")).unwrap_err();
        assert!(matches!(e, ParseError::NoData(_)), "{e:?}");
        assert!(e.to_string().contains("unknown symbol"), "{e}");
        let e = parse(&fixture("limit.txt")).unwrap_err();
        assert!(matches!(e, ParseError::QuotaExceeded(_)), "{e:?}");
        assert!(
            e.to_string().contains("Exceeded the daily hits limit"),
            "{e}"
        );
        assert!(parse(b"<html><body>maintenance</body></html>")
            .unwrap_err()
            .to_string()
            .contains("not a price CSV"));
        assert!(parse(b"Date,Close\n")
            .unwrap_err()
            .to_string()
            .contains("no rows"));
        assert!(parse(b"").is_err());
    }

    #[test]
    fn bad_values_are_rejected() {
        let bad = |s: &str| parse(s.as_bytes()).unwrap_err().to_string();
        assert!(bad("Date,Close\n2024-06-03,0\n").contains("not a price"));
        assert!(bad("Date,Close\n2024-06-03,nan\n").contains("not a price"));
        assert!(bad("Date,Close\n2024-06-03,\n").contains("not a price"));
        assert!(bad("Date,Close\n2024-6-3,5\n").contains("YYYY-MM-DD"));
        assert!(bad("Date,Close\n1850-06-03,5\n").contains("YYYY-MM-DD"));
    }

    #[test]
    fn symbol_mapping() {
        let cases = [
            ("AAPL", Category::UsStocks, Some("aapl.us")),
            ("BRK-B", Category::UsStocks, Some("brk-b.us")),
            ("SPY", Category::Etfs, Some("spy.us")),
            ("III.L", Category::UkStocks, Some("iii.uk")),
            ("7203.T", Category::JapaneseStocks, Some("7203.jp")),
            ("0005.HK", Category::HkChinaStocks, Some("0005.hk")),
            ("ADS.DE", Category::EuropeanStocks, Some("ads.de")),
            ("EURUSD=X", Category::Forex, Some("eurusd")),
            ("JPY=X", Category::Forex, Some("usdjpy")),
            ("BTC-USD", Category::Crypto, Some("btcusd")),
            ("CL=F", Category::Commodities, Some("cl.f")),
            ("^GSPC", Category::Indices, Some("^spx")),
            ("^DJI", Category::Indices, Some("^dji")),
            ("^IXIC", Category::Indices, Some("^ndq")),
            ("^N225", Category::Indices, Some("^nkx")),
            ("^VIX", Category::Indices, None),
            ("000001.SS", Category::Indices, None),
            ("AIR.MC", Category::EuropeanStocks, None),
            ("RELIANCE.NS", Category::IndianStocks, None),
            ("CS2-CSGO", Category::Cs2Cases, None),
            ("DX-Y.NYB", Category::Indices, None),
        ];
        for (ticker, category, want) in cases {
            assert_eq!(stooq_symbol(ticker, category).as_deref(), want, "{ticker}");
        }
    }

    #[test]
    fn urls() {
        let s = Stooq::new("http://127.0.0.1:9/");
        let today = NaiveDate::from_ymd_opt(2024, 6, 14).unwrap();
        assert_eq!(
            s.request_url("aapl.us", None, today),
            "http://127.0.0.1:9/q/d/l/?s=aapl.us&i=d"
        );
        let since = NaiveDate::from_ymd_opt(2024, 6, 1).unwrap();
        assert_eq!(
            s.request_url("^spx", Some(since), today),
            "http://127.0.0.1:9/q/d/l/?s=%5Espx&i=d&d1=20240601&d2=20240614"
        );
    }
}
