//! Daily prices from live providers (`forecast ingest fetch`, issue 16).
//!
//! A [`PriceProvider`] is the pure part of one source: which symbol it
//! knows an asset by ([`PriceProvider::symbol`]), the request for that
//! symbol ([`PriceProvider::request_url`]) and the parser of its answer
//! into validated `(days since epoch, close)` rows
//! ([`PriceProvider::parse`]). Two are built in, each in its real wire
//! format: [`yahoo::Yahoo`] (the chart API's JSON) and [`stooq::Stooq`]
//! (the daily CSV download). Each is built with its base URL (the
//! configuration's `FORECAST_YAHOO_URL` and `FORECAST_STOOQ_URL`), so tests
//! point them at a local fake server.
//!
//! The network part — concurrency, the polite rate limit, retries with
//! backoff honouring `Retry-After`, the time-out and the body cap — is
//! [`http`]; the run over a list of assets, merging each asset's rows into
//! its stored series all-or-nothing, is [`fetch::fetch_assets`], shared by
//! the CLI and (later) a scheduled refresh in `forecast serve`.

pub mod fetch;
pub mod http;
pub mod stooq;
pub mod yahoo;

use std::fmt;
use std::str::FromStr;

use chrono::NaiveDate;

use forecast_domain::series::to_days;
use forecast_domain::{Asset, Category};
use forecast_store::AssetStore;

pub use fetch::{fetch_assets, FetchOptions, FetchOutcome, FetchProgress, FetchReport};

/// What a provider's answer holds once parsed and validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// `(days since 1970-01-01, close)`, strictly increasing dates, every
    /// close finite and > 0.
    pub rows: Vec<(i32, f64)>,
    /// Rows skipped because their close was missing (`null`).
    pub skipped_null: usize,
    /// Rows dropped because a later row had the same date (the last wins).
    pub duplicates: usize,
    /// Splits found unadjusted in the answer and applied to earlier rows.
    pub splits_adjusted: usize,
}

/// Why an answer could not be used. Nothing of it is stored.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// The provider does not know the symbol (or has nothing in the range).
    #[error("{0}")]
    NoData(String),
    /// The provider refuses more requests today: the run stops asking.
    #[error("{0}")]
    QuotaExceeded(String),
    /// The answer is malformed, truncated or holds invalid values.
    #[error("{0}")]
    Invalid(String),
}

/// One source of daily prices: pure functions of their inputs.
pub trait PriceProvider: Send + Sync {
    /// `yahoo` or `stooq`.
    fn name(&self) -> &'static str;

    /// The provider's symbol for `asset`, or why it has none.
    fn symbol(&self, asset: &Asset) -> Result<String, String>;

    /// The request for the daily history of `symbol`: all of it, or from
    /// `since` up to `today` (the caller's UTC date) when given.
    fn request_url(&self, symbol: &str, since: Option<NaiveDate>, today: NaiveDate) -> String;

    /// Parses and validates a successful answer's body.
    fn parse(&self, body: &[u8]) -> Result<Parsed, ParseError>;

    /// The message for an answer with a non-success status that is not
    /// retried (e.g. 404): the provider's own error text when the body has
    /// one.
    fn describe_error(&self, status: u16, body: &[u8]) -> String {
        let _ = body;
        format!("HTTP {status}")
    }
}

/// The built-in providers, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// Yahoo Finance's chart API.
    Yahoo,
    /// Stooq's daily CSV download.
    Stooq,
}

impl ProviderKind {
    /// The name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Yahoo => "yahoo",
            ProviderKind::Stooq => "stooq",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "yahoo" => Ok(ProviderKind::Yahoo),
            "stooq" => Ok(ProviderKind::Stooq),
            _ => Err(format!("unknown provider '{s}'; expected yahoo or stooq")),
        }
    }
}

/// Which assets a fetch covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These tickers, in this order (active or not); every one must exist.
    Tickers(Vec<String>),
    /// The active assets of a category, by its wire name.
    Category(String),
    /// Every active asset.
    All,
}

/// Why a selection of assets cannot be fetched.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// An unknown ticker or category, or no ticker at all, named.
    #[error("{0}")]
    Invalid(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] forecast_store::StoreError),
}

/// The assets of `selection`. An unknown ticker or category is
/// [`SelectError::Invalid`] naming it (the category error lists the valid
/// names), so nothing is fetched for a mistyped command.
pub async fn select_assets(
    store: &dyn AssetStore,
    selection: &Selection,
) -> Result<Vec<Asset>, SelectError> {
    match selection {
        Selection::All => Ok(store.list_active_assets(None).await?),
        Selection::Category(name) => {
            let category: Category = name.parse().map_err(|_| {
                let names: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
                SelectError::Invalid(format!(
                    "unknown category '{}'; expected one of: {}",
                    name.escape_debug(),
                    names.join(", ")
                ))
            })?;
            Ok(store.list_active_assets(Some(category)).await?)
        }
        Selection::Tickers(tickers) => {
            let mut assets: Vec<Asset> = Vec::with_capacity(tickers.len());
            let mut unknown = Vec::new();
            for t in tickers {
                let t = t.trim();
                if t.is_empty() || assets.iter().any(|a| a.ticker == t) {
                    continue;
                }
                match store.asset_by_ticker(t).await? {
                    Some(a) => assets.push(a),
                    None => unknown.push(t.to_string()),
                }
            }
            if !unknown.is_empty() {
                return Err(SelectError::Invalid(format!(
                    "unknown ticker{} {}: not in the catalog, nothing was fetched",
                    if unknown.len() == 1 { "" } else { "s" },
                    unknown.join(", ")
                )));
            }
            if assets.is_empty() {
                return Err(SelectError::Invalid(
                    "--tickers names no ticker".to_string(),
                ));
            }
            Ok(assets)
        }
    }
}

/// The earliest date a provider row may carry.
fn earliest_day() -> i32 {
    to_days(NaiveDate::from_ymd_opt(1900, 1, 1).expect("valid date"))
}

/// Sorts rows by date and drops all but the last occurrence of each date
/// (in input order); returns how many were dropped.
fn sort_keep_last(rows: &mut Vec<(i32, f64)>) -> usize {
    // A stable sort keeps input order among equal dates.
    rows.sort_by_key(|&(d, _)| d);
    let before = rows.len();
    let mut out: Vec<(i32, f64)> = Vec::with_capacity(rows.len());
    for &(d, c) in rows.iter() {
        match out.last_mut() {
            Some(last) if last.0 == d => last.1 = c,
            _ => out.push((d, c)),
        }
    }
    *rows = out;
    before - rows.len()
}

/// Percent-encodes everything but unreserved characters (RFC 3986), for a
/// symbol in a path segment or a query value (`^GSPC` → `%5EGSPC`).
fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The first `n` characters of a body, for error messages.
fn snippet(body: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(body);
    let t: String = text.trim().chars().take(n).collect();
    t.replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_last_sorts_and_dedups() {
        let mut rows = vec![(3, 3.0), (1, 1.0), (3, 3.5), (2, 2.0), (1, 1.5)];
        assert_eq!(sort_keep_last(&mut rows), 2);
        assert_eq!(rows, vec![(1, 1.5), (2, 2.0), (3, 3.5)]);
    }

    #[test]
    fn encodes_symbols() {
        assert_eq!(encode_component("^GSPC"), "%5EGSPC");
        assert_eq!(encode_component("EURUSD=X"), "EURUSD%3DX");
        assert_eq!(encode_component("BRK-B"), "BRK-B");
        assert_eq!(encode_component("7203.T"), "7203.T");
    }

    #[test]
    fn provider_names_parse() {
        assert_eq!("Yahoo".parse::<ProviderKind>(), Ok(ProviderKind::Yahoo));
        assert_eq!("stooq".parse::<ProviderKind>(), Ok(ProviderKind::Stooq));
        assert!("google"
            .parse::<ProviderKind>()
            .unwrap_err()
            .contains("yahoo or stooq"));
    }
}
