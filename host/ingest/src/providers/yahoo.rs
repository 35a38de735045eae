//! Yahoo Finance's chart API: `GET {base}/v8/finance/chart/{symbol}`.
//!
//! # Wire format
//!
//! `{"chart":{"result":[{…}],"error":null}}` where the result holds
//! `meta` (`gmtoffset` in seconds, `exchangeTimezoneName`…), `timestamp`
//! (Unix seconds of each daily bar, the session's open in the exchange's
//! time zone), `indicators.quote[0]` (`open`, `high`, `low`, `close`,
//! `volume` arrays aligned with `timestamp`, `null` where Yahoo has no
//! value), `indicators.adjclose[0].adjclose` (closes adjusted for splits
//! and dividends) and `events.splits` / `events.dividends` (objects keyed by
//! timestamp). A failure is `{"chart":{"result":null,"error":{"code":…,
//! "description":…}}}` (with 404 for an unknown symbol).
//!
//! # What is stored
//!
//! The adjusted close when the answer has `adjclose`, else `close`; a row
//! whose chosen close is `null` is skipped and counted. The date of a bar is
//! `timestamp + gmtoffset` in days. A date that appears twice keeps the
//! last bar (Yahoo repeats the live bar). Every close must be finite and
//! > 0, arrays must be as long as `timestamp` (a cut answer fails).
//!
//! # Splits
//!
//! Yahoo's `close` is already split-adjusted and `adjclose` is split- and
//! dividend-adjusted, so a split normally leaves no step in the series.
//! Some answers (and other sources replaying the format) carry raw closes:
//! then the price falls by the split ratio on the split date, which the
//! engine would read as a crash. For each split of `events.splits` the
//! parser compares the step between the last row before the split date and
//! the first row on or after it with the ratio: when the step is closer to
//! the ratio than to no change (in log terms, `|ln step − ln ratio| <
//! |ln step|`), the data is unadjusted there and every earlier close is
//! divided by the ratio. Already-adjusted data is left alone.

use chrono::NaiveDate;
use serde::Deserialize;

use forecast_domain::series::from_days;
use forecast_domain::{Asset, Category};

use super::{encode_component, snippet, sort_keep_last, ParseError, Parsed, PriceProvider};

/// The public base URL.
pub const DEFAULT_BASE_URL: &str = "https://query1.finance.yahoo.com";

/// Yahoo Finance's chart API under a base URL.
#[derive(Debug, Clone)]
pub struct Yahoo {
    base: String,
}

impl Yahoo {
    /// The provider at `base` (everything before `/v8/…`).
    pub fn new(base: &str) -> Yahoo {
        Yahoo {
            base: base.trim_end_matches('/').to_string(),
        }
    }
}

impl PriceProvider for Yahoo {
    fn name(&self) -> &'static str {
        "yahoo"
    }

    /// The catalog's tickers are Yahoo symbols, except the CS2 cases
    /// (Steam market items), which no price provider lists.
    fn symbol(&self, asset: &Asset) -> Result<String, String> {
        yahoo_symbol(&asset.ticker, asset.category).ok_or_else(|| {
            format!(
                "yahoo has no symbol for {} (CS2 cases have no price provider)",
                asset.ticker
            )
        })
    }

    fn request_url(&self, symbol: &str, since: Option<NaiveDate>, today: NaiveDate) -> String {
        let range = match since {
            None => "range=max".to_string(),
            Some(since) => format!(
                "period1={}&period2={}",
                unix_seconds(since),
                unix_seconds(today.succ_opt().unwrap_or(today))
            ),
        };
        format!(
            "{}/v8/finance/chart/{}?interval=1d&includeAdjustedClose=true&events=div%7Csplit&{range}",
            self.base,
            encode_component(symbol)
        )
    }

    fn parse(&self, body: &[u8]) -> Result<Parsed, ParseError> {
        parse(body)
    }

    fn describe_error(&self, status: u16, body: &[u8]) -> String {
        match serde_json::from_slice::<Envelope>(body) {
            Ok(Envelope {
                chart: Chart { error: Some(e), .. },
            }) => format!("HTTP {status}: {}", e.message()),
            _ if body.is_empty() => format!("HTTP {status}"),
            _ => format!("HTTP {status}: {}", snippet(body, 120)),
        }
    }
}

/// Yahoo's symbol for a catalog ticker of `category`: the ticker itself,
/// except for the CS2 cases (Steam market items), which it does not list.
pub fn yahoo_symbol(ticker: &str, category: Category) -> Option<String> {
    (category != Category::Cs2Cases).then(|| ticker.to_string())
}

fn unix_seconds(d: NaiveDate) -> i64 {
    d.and_hms_opt(0, 0, 0)
        .expect("midnight")
        .and_utc()
        .timestamp()
}

#[derive(Debug, Deserialize)]
struct Envelope {
    chart: Chart,
}

#[derive(Debug, Deserialize)]
struct Chart {
    result: Option<Vec<ChartResult>>,
    error: Option<ChartError>,
}

#[derive(Debug, Deserialize)]
struct ChartError {
    code: Option<String>,
    description: Option<String>,
}

impl ChartError {
    fn message(&self) -> String {
        match (&self.code, &self.description) {
            (Some(c), Some(d)) => format!("{c}: {d}"),
            (Some(c), None) => c.clone(),
            (None, Some(d)) => d.clone(),
            (None, None) => "error without a description".to_string(),
        }
    }
}

#[derive(Debug, Deserialize)]
struct ChartResult {
    #[serde(default)]
    meta: Meta,
    timestamp: Option<Vec<i64>>,
    #[serde(default)]
    events: Events,
    indicators: Option<Indicators>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    gmtoffset: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
struct Events {
    #[serde(default)]
    splits: std::collections::BTreeMap<String, Split>,
    // Dividends are read to accept the format; `adjclose` already
    // accounts for them.
    #[serde(default)]
    #[allow(dead_code)]
    dividends: std::collections::BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct Split {
    date: i64,
    numerator: f64,
    denominator: f64,
}

#[derive(Debug, Deserialize)]
struct Indicators {
    #[serde(default)]
    quote: Vec<Quote>,
    #[serde(default)]
    adjclose: Vec<AdjClose>,
}

#[derive(Debug, Deserialize)]
struct Quote {
    close: Option<Vec<Option<f64>>>,
}

#[derive(Debug, Deserialize)]
struct AdjClose {
    adjclose: Option<Vec<Option<f64>>>,
}

const DAY: i64 = 86_400;

/// Parses a chart answer (see the module docs).
pub fn parse(body: &[u8]) -> Result<Parsed, ParseError> {
    let invalid = ParseError::Invalid;
    let result = chart_result(body)?;
    let offset = result.meta.gmtoffset.unwrap_or(0);
    if offset.abs() > DAY {
        return Err(invalid(format!(
            "yahoo gmtoffset {offset} is not a time zone offset"
        )));
    }
    let timestamps = result.timestamp.unwrap_or_default();
    if timestamps.is_empty() {
        return Err(ParseError::NoData(
            "yahoo answered no price rows for the requested dates".to_string(),
        ));
    }
    let indicators = result
        .indicators
        .ok_or_else(|| invalid("yahoo answer has no indicators".to_string()))?;
    let (column, closes) = close_column(indicators)?;
    if closes.len() != timestamps.len() {
        return Err(invalid(format!(
            "yahoo {column} has {} values for {} timestamps",
            closes.len(),
            timestamps.len()
        )));
    }
    let mut parsed = Parsed::default();
    let mut rows = Vec::with_capacity(timestamps.len());
    for (&ts, close) in timestamps.iter().zip(closes) {
        let day = day_of(ts, offset)?;
        let Some(close) = close else {
            parsed.skipped_null += 1;
            continue;
        };
        if !close.is_finite() || close <= 0.0 {
            return Err(invalid(format!(
                "yahoo {column} {close} on {} is not a price > 0",
                from_days(day)
            )));
        }
        rows.push((day, close));
    }
    if rows.is_empty() {
        return Err(invalid(format!(
            "yahoo answer has no row with a {column} ({} null)",
            parsed.skipped_null
        )));
    }
    parsed.duplicates = sort_keep_last(&mut rows);
    for split in result.events.splits.values() {
        let ratio = split.numerator / split.denominator;
        if !ratio.is_finite() || ratio <= 0.0 {
            return Err(invalid(format!(
                "yahoo split {}:{} is not a ratio",
                split.numerator, split.denominator
            )));
        }
        if adjust_split(&mut rows, day_of(split.date, offset)?, ratio) {
            parsed.splits_adjusted += 1;
        }
    }
    parsed.rows = rows;
    Ok(parsed)
}

/// The first result of a chart answer: an error for JSON that is not a
/// chart, "no data" for Yahoo's "Not Found" or an empty result.
fn chart_result(body: &[u8]) -> Result<ChartResult, ParseError> {
    let invalid = ParseError::Invalid;
    let env: Envelope = serde_json::from_slice(body).map_err(|e| {
        invalid(format!(
            "yahoo answer is not valid chart JSON ({e}){}",
            if e.is_eof() {
                "; the answer was cut off"
            } else {
                ""
            }
        ))
    })?;
    if let Some(err) = env.chart.error {
        let msg = err.message();
        return Err(if err.code.as_deref() == Some("Not Found") {
            ParseError::NoData(format!("yahoo: {msg}"))
        } else {
            invalid(format!("yahoo: {msg}"))
        });
    }
    env.chart
        .result
        .and_then(|r| r.into_iter().next())
        .ok_or_else(|| ParseError::NoData("yahoo answered no result".to_string()))
}

/// The closes to keep and their column's name: the adjusted ones when
/// given, else the plain closes.
fn close_column(indicators: Indicators) -> Result<(&'static str, Vec<Option<f64>>), ParseError> {
    let adjusted = indicators
        .adjclose
        .into_iter()
        .next()
        .and_then(|a| a.adjclose);
    Ok(match adjusted {
        Some(a) => ("adjclose", a),
        None => (
            "close",
            indicators
                .quote
                .into_iter()
                .next()
                .and_then(|q| q.close)
                .ok_or_else(|| {
                    ParseError::Invalid("yahoo answer has neither adjclose nor close".to_string())
                })?,
        ),
    })
}

/// The calendar day of a bar at `ts` in a zone `offset` seconds from UTC.
fn day_of(ts: i64, offset: i64) -> Result<i32, ParseError> {
    let day = (ts + offset).div_euclid(DAY);
    let sane = i64::from(super::earliest_day())..=i64::from(i32::MAX);
    if !sane.contains(&day) {
        return Err(ParseError::Invalid(format!(
            "yahoo timestamp {ts} is not a plausible trading day"
        )));
    }
    Ok(day as i32)
}

/// Divides the closes before `day` by `ratio` when the series steps down
/// by about that ratio there (unadjusted data); true when it did.
pub(crate) fn adjust_split(rows: &mut [(i32, f64)], day: i32, ratio: f64) -> bool {
    let i = rows.partition_point(|&(d, _)| d < day);
    if i == 0 || i == rows.len() || (ratio - 1.0).abs() < 1e-12 {
        return false;
    }
    let step = (rows[i - 1].1 / rows[i].1).ln();
    if (step - ratio.ln()).abs() >= step.abs() {
        return false;
    }
    for row in &mut rows[..i] {
        row.1 /= ratio;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use forecast_domain::series::to_days;

    const FIXTURES: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/providers/yahoo"
    );

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{FIXTURES}/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn day(s: &str) -> i32 {
        to_days(NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap())
    }

    #[test]
    fn good_answer_prefers_adjclose_and_dates_in_exchange_time() {
        let p = parse(&fixture("AAPL.json")).unwrap();
        assert_eq!(p.rows.len(), 10);
        assert_eq!((p.skipped_null, p.duplicates, p.splits_adjusted), (0, 0, 0));
        // 2024-02-05 14:30 UTC is 09:30 in New York.
        assert_eq!(p.rows[0], (day("2024-02-05"), 186.37));
        assert_eq!(p.rows[9].0, day("2024-02-16"));
        // adjclose, not close (182.31 before the 2024-02-09 dividend).
        assert_eq!(p.rows[9].1, 182.31);
        assert_eq!(p.rows[3].1, 188.09, "the close-column value is 188.32");
        assert!(p.rows.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn gmtoffset_moves_the_date() {
        // 00:00 UTC on 2024-06-03 is 09:00 in Tokyo the same day, and
        // 20:00 the day before in New York.
        let body = |offset: i64| {
            format!(
                r#"{{"chart":{{"result":[{{"meta":{{"gmtoffset":{offset}}},"timestamp":[1717372800],
                "indicators":{{"quote":[{{"close":[5.0]}}]}}}}],"error":null}}}}"#
            )
        };
        assert_eq!(
            parse(body(32400).as_bytes()).unwrap().rows[0].0,
            day("2024-06-03")
        );
        assert_eq!(
            parse(body(-14400).as_bytes()).unwrap().rows[0].0,
            day("2024-06-02")
        );
    }

    #[test]
    fn null_closes_are_skipped_and_duplicates_keep_the_last() {
        let p = parse(&fixture("BTC-USD.json")).unwrap();
        assert_eq!(p.skipped_null, 2);
        assert_eq!(p.duplicates, 1);
        let dates: Vec<i32> = p.rows.iter().map(|r| r.0).collect();
        let want: Vec<i32> = [
            "2024-06-01",
            "2024-06-02",
            "2024-06-04",
            "2024-06-05",
            "2024-06-07",
            "2024-06-08",
        ]
        .iter()
        .map(|d| day(d))
        .collect();
        assert_eq!(
            dates, want,
            "sorted, nulls (06-03, 06-06) gone, one row per date"
        );
        // 2024-06-08 appears twice; the later bar (the live one) wins.
        assert_eq!(p.rows[5].1, 69_310.5);
    }

    #[test]
    fn an_unadjusted_split_is_adjusted_and_leaves_no_drawdown() {
        let p = parse(&fixture("NVDA-split-unadjusted.json")).unwrap();
        assert_eq!(p.splits_adjusted, 1);
        let split = p
            .rows
            .iter()
            .position(|r| r.0 == day("2024-06-10"))
            .unwrap();
        // Raw: 1208.88 on 06-07 then 121.79 on 06-10 (10:1).
        assert!((p.rows[split - 1].1 - 120.888).abs() < 1e-9, "{:?}", p.rows);
        assert_eq!(p.rows[split].1, 121.79);
        let worst = p
            .rows
            .windows(2)
            .map(|w| w[1].1 / w[0].1 - 1.0)
            .fold(0.0_f64, f64::min);
        assert!(
            worst > -0.05,
            "no fake crash at the split: worst day {worst}"
        );
        // Rows after the split are untouched.
        assert_eq!(p.rows.last().unwrap().1, 131.88);
    }

    #[test]
    fn an_adjusted_split_is_left_alone() {
        let p = parse(&fixture("NVDA-split-adjusted.json")).unwrap();
        assert_eq!(p.splits_adjusted, 0);
        let split = p
            .rows
            .iter()
            .position(|r| r.0 == day("2024-06-10"))
            .unwrap();
        assert_eq!(p.rows[split - 1].1, 120.888);
        assert_eq!(p.rows[0].1, 115.0);
    }

    #[test]
    fn split_heuristic_decides_by_the_step() {
        let mut rows = vec![(1, 400.0), (2, 100.5)];
        assert!(adjust_split(&mut rows, 2, 4.0));
        assert_eq!(rows[0].1, 100.0);
        // A normal day across the split date: already adjusted.
        let mut rows = vec![(1, 100.0), (2, 101.0)];
        assert!(!adjust_split(&mut rows, 2, 4.0));
        // A reverse split (1:10) raises the raw price tenfold.
        let mut rows = vec![(1, 1.0), (2, 10.2)];
        assert!(adjust_split(&mut rows, 2, 0.1));
        assert!((rows[0].1 - 10.0).abs() < 1e-9);
        // No row before or after the split date: nothing to compare.
        let mut rows = vec![(5, 400.0)];
        assert!(!adjust_split(&mut rows, 2, 4.0));
        assert!(!adjust_split(&mut rows, 9, 4.0));
    }

    #[test]
    fn truncated_answer_fails_whole() {
        let e = parse(&fixture("truncated.json")).unwrap_err();
        assert!(matches!(e, ParseError::Invalid(_)), "{e:?}");
        assert!(e.to_string().contains("cut off"), "{e}");
        // Arrays shorter than the timestamps (a cut that still parses).
        let short = br#"{"chart":{"result":[{"meta":{},"timestamp":[1717372800,1717459200],
            "indicators":{"quote":[{"close":[5.0]}]}}],"error":null}}"#;
        assert!(parse(short)
            .unwrap_err()
            .to_string()
            .contains("1 values for 2 timestamps"));
    }

    #[test]
    fn unknown_symbol_is_no_data_with_yahoo_s_message() {
        let e = parse(&fixture("not-found.json")).unwrap_err();
        assert_eq!(
            e,
            ParseError::NoData("yahoo: Not Found: No data found, symbol may be delisted".into())
        );
        let y = Yahoo::new("http://x");
        assert_eq!(
            y.describe_error(404, &fixture("not-found.json")),
            "HTTP 404: Not Found: No data found, symbol may be delisted"
        );
        assert_eq!(
            y.describe_error(403, b"<html>no</html>"),
            "HTTP 403: <html>no</html>"
        );
    }

    #[test]
    fn invalid_values_are_rejected() {
        let with_close = |c: &str| {
            format!(
                r#"{{"chart":{{"result":[{{"meta":{{"gmtoffset":0}},"timestamp":[1717372800],
                "indicators":{{"quote":[{{"close":[{c}]}}]}}}}],"error":null}}}}"#
            )
        };
        assert!(parse(with_close("0").as_bytes())
            .unwrap_err()
            .to_string()
            .contains("not a price"));
        assert!(parse(with_close("-2.5").as_bytes()).is_err());
        assert!(parse(with_close("null").as_bytes())
            .unwrap_err()
            .to_string()
            .contains("no row"));
        let old = br#"{"chart":{"result":[{"timestamp":[-3000000000],
            "indicators":{"quote":[{"close":[1.0]}]}}],"error":null}}"#;
        assert!(parse(old).unwrap_err().to_string().contains("plausible"));
        let empty =
            br#"{"chart":{"result":[{"meta":{},"indicators":{"quote":[{}]}}],"error":null}}"#;
        assert!(matches!(parse(empty), Err(ParseError::NoData(_))));
    }

    #[test]
    fn symbols_and_urls() {
        let y = Yahoo::new("http://127.0.0.1:9/");
        assert_eq!(
            yahoo_symbol("^GSPC", Category::Indices).as_deref(),
            Some("^GSPC")
        );
        assert_eq!(
            yahoo_symbol("7203.T", Category::JapaneseStocks).as_deref(),
            Some("7203.T")
        );
        assert_eq!(
            yahoo_symbol("EURUSD=X", Category::Forex).as_deref(),
            Some("EURUSD=X")
        );
        assert_eq!(yahoo_symbol("CS2-CSGO", Category::Cs2Cases), None);
        let today = NaiveDate::from_ymd_opt(2024, 6, 14).unwrap();
        assert_eq!(
            y.request_url("^GSPC", None, today),
            "http://127.0.0.1:9/v8/finance/chart/%5EGSPC?interval=1d&includeAdjustedClose=true&events=div%7Csplit&range=max"
        );
        let since = NaiveDate::from_ymd_opt(2024, 6, 1).unwrap();
        assert!(y
            .request_url("EURUSD=X", Some(since), today)
            .ends_with("/chart/EURUSD%3DX?interval=1d&includeAdjustedClose=true&events=div%7Csplit&period1=1717200000&period2=1718409600"));
    }
}
