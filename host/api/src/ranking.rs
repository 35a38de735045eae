//! `GET /api/ranking`: the query (validated into a [`RankingQuery`]) and the
//! response.

use crate::Invalid;
use chrono::{DateTime, NaiveDate, Utc};
use forecast_domain::{defaults, Category, DataSource, Metric};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::assets::{parse_category, DataSources};

/// Default number of ranked assets returned.
pub const DEFAULT_LIMIT: usize = 50;
/// Most ranked assets one response holds.
pub const MAX_LIMIT: usize = 500;
/// The largest `offset`.
pub const MAX_OFFSET: usize = 100_000;
/// The longest text filter `q`, in characters.
pub const MAX_QUERY_CHARS: usize = 100;

/// What a ranking is sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    /// The rolling median forward return (the default).
    MedianReturn,
    /// The EMA prediction.
    ExpectedReturn,
    /// The active segment's win rate.
    WinRate,
    /// The EMA's error.
    PredictionError,
    /// The drawdown at the last row.
    CurrentDrawdown,
    /// The last close.
    CurrentPrice,
    /// The scorer's score (0 to 100; the grade letter follows it).
    Score,
    /// The ticker, case-insensitively.
    Ticker,
    /// The name, case-insensitively.
    Name,
    /// The category's name, case-insensitively.
    Category,
    /// The date of the last price graded.
    LastPriceDate,
}

impl SortKey {
    /// Every key, in the order they are documented.
    pub const ALL: [SortKey; 11] = [
        SortKey::MedianReturn,
        SortKey::ExpectedReturn,
        SortKey::WinRate,
        SortKey::PredictionError,
        SortKey::CurrentDrawdown,
        SortKey::CurrentPrice,
        SortKey::Score,
        SortKey::Ticker,
        SortKey::Name,
        SortKey::Category,
        SortKey::LastPriceDate,
    ];

    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SortKey::MedianReturn => "median_return",
            SortKey::ExpectedReturn => "expected_return",
            SortKey::WinRate => "win_rate",
            SortKey::PredictionError => "prediction_error",
            SortKey::CurrentDrawdown => "current_drawdown",
            SortKey::CurrentPrice => "current_price",
            SortKey::Score => "score",
            SortKey::Ticker => "ticker",
            SortKey::Name => "name",
            SortKey::Category => "category",
            SortKey::LastPriceDate => "last_price_date",
        }
    }
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortOrder {
    /// Smallest first.
    Asc,
    /// Largest first (the default).
    Desc,
}

/// The query, as strings so every problem is named.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RawRankingQuery {
    /// Only this category.
    #[param(value_type = Option<Category>)]
    pub category: Option<String>,
    /// Comma-separated categories (`Crypto,Indices`); takes priority over
    /// `category`.
    #[param(value_type = Option<Vec<Category>>, style = Form, explode = false)]
    pub categories: Option<String>,
    /// The sort key: a number of the grade (`median_return`, `score`, …),
    /// `last_price_date`, or a text (`ticker`, `name`, `category`, compared
    /// case-insensitively). Ties are broken by ticker, ascending.
    #[param(value_type = Option<SortKey>, default = "median_return")]
    pub sort_by: Option<String>,
    /// The direction.
    #[param(value_type = Option<SortOrder>, default = "desc")]
    pub sort: Option<String>,
    /// How many ranked assets to return.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 500, default = 50)]
    pub limit: Option<String>,
    /// How many ranked assets to skip, after filtering and sorting: with
    /// `limit`, pages through the whole ranking (`rank` stays the position
    /// in the whole filtered, sorted list).
    #[param(value_type = Option<i64>, minimum = 0, maximum = 100000, default = 0)]
    pub offset: Option<String>,
    /// Keep only assets whose ticker or name contains this text,
    /// case-insensitively (surrounding blanks ignored; empty: no filter).
    #[param(value_type = Option<String>, max_length = 100)]
    pub q: Option<String>,
    /// One of the graded horizons.
    #[param(schema_with = graded_period)]
    pub return_period: Option<String>,
    /// The graded metric.
    #[param(value_type = Option<Metric>, default = "return")]
    pub metric: Option<String>,
    /// Leave out assets whose last price is more than this many days
    /// before today (UTC): real histories end on different days.
    #[param(value_type = Option<i64>, minimum = 0, maximum = 36500)]
    pub max_age_days: Option<String>,
}

/// The screener's parameters, as strings so every problem is named. A
/// range's bounds are inclusive, either may be left out, and `min_x` above
/// `max_x` is refused.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RawScreen {
    /// Comma-separated sources of the prices (`real,ingested`: market
    /// prices only).
    #[param(value_type = Option<Vec<DataSource>>, style = Form, explode = false)]
    pub source: Option<String>,
    /// Comma-separated grade letters to keep (`A,B`): at most 10, each of
    /// one or two characters (letters, digits, `+`, `-`).
    #[param(value_type = Option<String>, example = "A,B")]
    pub grades: Option<String>,
    /// Lowest score kept (0 to 100).
    #[param(value_type = Option<f64>, minimum = 0, maximum = 100)]
    pub min_score: Option<String>,
    /// Highest score kept (0 to 100).
    #[param(value_type = Option<f64>, minimum = 0, maximum = 100)]
    pub max_score: Option<String>,
    /// Lowest drawdown at the last row kept, a fraction (−0.5 is 50 % below
    /// the peak).
    #[param(value_type = Option<f64>, minimum = -1, maximum = 0)]
    pub min_current_drawdown: Option<String>,
    /// Highest drawdown at the last row kept, a fraction.
    #[param(value_type = Option<f64>, minimum = -1, maximum = 0)]
    pub max_current_drawdown: Option<String>,
    /// Lowest rolling median forward return kept, a fraction.
    #[param(value_type = Option<f64>, minimum = -1, maximum = 1000000)]
    pub min_median_return: Option<String>,
    /// Highest rolling median forward return kept, a fraction.
    #[param(value_type = Option<f64>, minimum = -1, maximum = 1000000)]
    pub max_median_return: Option<String>,
    /// Lowest EMA prediction kept, a fraction.
    #[param(value_type = Option<f64>, minimum = -1, maximum = 1000000)]
    pub min_expected_return: Option<String>,
    /// Highest EMA prediction kept, a fraction.
    #[param(value_type = Option<f64>, minimum = -1, maximum = 1000000)]
    pub max_expected_return: Option<String>,
    /// Lowest win rate kept (0 to 1).
    #[param(value_type = Option<f64>, minimum = 0, maximum = 1)]
    pub min_win_rate: Option<String>,
    /// Highest win rate kept (0 to 1).
    #[param(value_type = Option<f64>, minimum = 0, maximum = 1)]
    pub max_win_rate: Option<String>,
    /// Fewest independent episodes in the current bucket kept (an asset
    /// whose engine reports none is left out by any value above 0).
    #[param(value_type = Option<i64>, minimum = 0, maximum = 100000)]
    pub min_episodes: Option<String>,
    /// Keep only prices in this currency (ISO 4217, `USD`; empty: all):
    /// sorting by `current_price` then compares like with like.
    #[param(value_type = Option<String>, pattern = "^([A-Za-z]{3})?$", example = "USD")]
    pub currency: Option<String>,
}

/// An inclusive range of a figure, either side open; kept as the bounds'
/// bits so a query stays a cache key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Between {
    min: Option<u64>,
    max: Option<u64>,
}

impl Between {
    /// The range [min, max].
    pub fn new(min: Option<f64>, max: Option<f64>) -> Self {
        Between {
            min: min.map(f64::to_bits),
            max: max.map(f64::to_bits),
        }
    }

    /// Whether `x` lies within the range.
    pub fn holds(&self, x: f64) -> bool {
        self.min.is_none_or(|m| x >= f64::from_bits(m))
            && self.max.is_none_or(|m| x <= f64::from_bits(m))
    }
}

/// The validated screener: every filter given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Screen {
    /// Keep only these sources (`None`: all).
    pub sources: Option<Vec<DataSource>>,
    /// Keep only these letters (`None`: all).
    pub grades: Option<Vec<String>>,
    /// The score's range.
    pub score: Between,
    /// The drawdown's range.
    pub current_drawdown: Between,
    /// The median return's range.
    pub median_return: Between,
    /// The EMA prediction's range.
    pub expected_return: Between,
    /// The win rate's range.
    pub win_rate: Between,
    /// Fewest episodes (`None`: no filter).
    pub min_episodes: Option<u32>,
    /// Keep only this currency, upper-cased (`None`: all).
    pub currency: Option<String>,
}

/// Most letters `grades` may list.
const MAX_GRADES: usize = 10;

impl RawScreen {
    /// Checks every parameter; the error names it.
    pub fn validate(&self) -> Result<Screen, Invalid> {
        let sources = match self.source.as_deref() {
            None => None,
            Some(list) => Some(
                list.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        DataSource::parse(s).ok_or_else(|| {
                            Invalid::from(format!(
                                "source must list real, ingested or synthetic (got '{}')",
                                crate::quote(s)
                            ))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            )
            .filter(|v: &Vec<DataSource>| !v.is_empty()),
        };
        let grades = match self.grades.as_deref() {
            None => None,
            Some(list) => {
                let letters: Vec<String> = list
                    .split(',')
                    .map(str::trim)
                    .filter(|g| !g.is_empty())
                    .map(str::to_uppercase)
                    .collect();
                if letters.len() > MAX_GRADES
                    || letters.iter().any(|g| {
                        g.chars().count() > 2
                            || !g
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-')
                    })
                {
                    return Err(Invalid::from(format!(
                        "grades must list at most {MAX_GRADES} letters such as A,B (got '{}')",
                        crate::quote(list)
                    )));
                }
                Some(letters).filter(|v| !v.is_empty())
            }
        };
        let min_episodes =
            bounded("min_episodes", self.min_episodes.as_deref(), 0, 100_000)?.map(|n| n as u32);
        let currency = match self.currency.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(c) if c.len() == 3 && c.chars().all(|ch| ch.is_ascii_alphabetic()) => {
                Some(c.to_ascii_uppercase())
            }
            Some(c) => {
                return Err(Invalid::from(format!(
                    "currency must be a three-letter code such as USD (got '{}')",
                    crate::quote(c)
                )))
            }
        };
        Ok(Screen {
            sources,
            grades,
            score: range("score", &self.min_score, &self.max_score, (0.0, 100.0))?,
            current_drawdown: range(
                "current_drawdown",
                &self.min_current_drawdown,
                &self.max_current_drawdown,
                (-1.0, 0.0),
            )?,
            median_return: range(
                "median_return",
                &self.min_median_return,
                &self.max_median_return,
                (-1.0, 1e6),
            )?,
            expected_return: range(
                "expected_return",
                &self.min_expected_return,
                &self.max_expected_return,
                (-1.0, 1e6),
            )?,
            win_rate: range(
                "win_rate",
                &self.min_win_rate,
                &self.max_win_rate,
                (0.0, 1.0),
            )?,
            min_episodes,
            currency,
        })
    }
}

/// The range of `min_{name}` and `max_{name}` within `lo..=hi`, or the 400
/// naming the parameter.
fn range(
    name: &str,
    min: &Option<String>,
    max: &Option<String>,
    (lo, hi): (f64, f64),
) -> Result<Between, Invalid> {
    let parse = |side: &str, raw: &Option<String>| -> Result<Option<f64>, Invalid> {
        let Some(raw) = raw.as_deref() else {
            return Ok(None);
        };
        match raw.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && (lo..=hi).contains(&x) => Ok(Some(x)),
            _ => Err(Invalid::from(format!(
                "{side}_{name} must be a number between {lo} and {hi} (got '{}')",
                crate::quote(raw)
            ))),
        }
    };
    let (a, b) = (parse("min", min)?, parse("max", max)?);
    if let (Some(a), Some(b)) = (a, b) {
        if a > b {
            return Err(Invalid::from(format!(
                "min_{name} ({a}) is above max_{name} ({b})"
            )));
        }
    }
    Ok(Between::new(a, b))
}

/// The largest `max_age_days` (100 years).
pub const MAX_AGE_DAYS: u32 = 36_500;

/// A graded horizon in calendar days: 7, 30, 90, 180 or 365 (default 90).
pub(crate) fn graded_period() -> utoipa::openapi::Object {
    crate::integer_enum(&defaults::GRADED_RETURN_PERIODS.map(i64::from), 90)
}

/// A validated ranking query.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RankingQuery {
    /// Keep only these categories (`None`: all).
    pub categories: Option<Vec<Category>>,
    /// Sort key.
    pub sort_by: SortKey,
    /// Direction.
    pub order: SortOrder,
    /// How many to return.
    pub limit: usize,
    /// How many to skip after filtering and sorting.
    pub offset: usize,
    /// Keep only tickers or names containing this, lower-cased (`None`:
    /// all).
    pub text: Option<String>,
    /// Graded horizon.
    pub return_period: u32,
    /// Graded metric.
    pub metric: Metric,
    /// Keep only assets whose last price is at most this many days old.
    pub max_age_days: Option<u32>,
    /// The screener's filters ([`RawScreen`], its own query parameters).
    pub screen: Screen,
}

impl RawRankingQuery {
    /// Checks every parameter; the error names it.
    pub fn validate(&self) -> Result<RankingQuery, Invalid> {
        // `categories` takes priority over `category`, but an invalid
        // `category` is refused either way: a typo is never silently ignored.
        let single = self.category.as_deref().map(parse_category).transpose()?;
        let categories = match (&self.categories, single) {
            (Some(list), _) => Some(
                list.split(',')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(parse_category)
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            (None, Some(one)) => Some(vec![one]),
            (None, None) => None,
        };
        let sort_by = match self.sort_by.as_deref() {
            None => SortKey::MedianReturn,
            Some(s) => sort_key(s)?,
        };
        let order = match self.sort.as_deref() {
            None | Some("desc") => SortOrder::Desc,
            Some("asc") => SortOrder::Asc,
            Some(other) => {
                return Err(Invalid::from(format!(
                    "sort must be asc or desc (got '{}')",
                    crate::quote(other)
                )))
            }
        };
        let limit = bounded("limit", self.limit.as_deref(), 1, MAX_LIMIT as i64)?
            .map_or(DEFAULT_LIMIT, |n| n as usize);
        let offset = bounded("offset", self.offset.as_deref(), 0, MAX_OFFSET as i64)?
            .map_or(0, |n| n as usize);
        let text = match self.q.as_deref() {
            None => None,
            Some(raw) if raw.chars().count() > MAX_QUERY_CHARS => {
                return Err(Invalid::from(format!(
                    "q must be at most {MAX_QUERY_CHARS} characters (got {})",
                    raw.chars().count()
                )))
            }
            Some(raw) => Some(raw.trim().to_lowercase()).filter(|t| !t.is_empty()),
        };
        let return_period = match self.return_period.as_deref() {
            None => defaults::RETURN_PERIOD,
            Some(raw) => match crate::integer(raw.trim()).and_then(|p| u32::try_from(p).ok()) {
                Some(p) if defaults::GRADED_RETURN_PERIODS.contains(&p) => p,
                _ => {
                    return Err(Invalid::from(format!(
                        "return_period must be one of 7, 30, 90, 180, 365 (got '{}')",
                        crate::quote(raw)
                    )))
                }
            },
        };
        let metric = match self.metric.as_deref() {
            None => Metric::Return,
            Some(m) => m.parse()?,
        };
        let max_age_days = bounded(
            "max_age_days",
            self.max_age_days.as_deref(),
            0,
            i64::from(MAX_AGE_DAYS),
        )?
        .map(|n| n as u32);
        Ok(RankingQuery {
            categories,
            sort_by,
            order,
            limit,
            offset,
            text,
            return_period,
            metric,
            max_age_days,
            screen: Screen::default(),
        })
    }
}

/// The integer `raw` of the query parameter `name` within `lo..=hi`
/// (`None` when absent), or the 422 naming the parameter and its bounds.
fn bounded(name: &str, raw: Option<&str>, lo: i64, hi: i64) -> Result<Option<i64>, Invalid> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    match crate::integer(raw.trim()) {
        Some(n) if (lo..=hi).contains(&n) => Ok(Some(n)),
        _ => Err(Invalid::from(format!(
            "{name} must be an integer between {lo} and {hi} inclusive (got '{}')",
            crate::quote(raw)
        ))),
    }
}

/// The `sort_by` key named `s`, or the 422 listing every key.
fn sort_key(s: &str) -> Result<SortKey, Invalid> {
    SortKey::ALL
        .into_iter()
        .find(|k| k.as_str() == s)
        .ok_or_else(|| {
            let names: Vec<&str> = SortKey::ALL.iter().map(|k| k.as_str()).collect();
            Invalid::from(format!(
                "sort_by must be one of {} (got '{}')",
                names.join(", "),
                crate::quote(s)
            ))
        })
}

/// One ranked asset.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RankedAsset {
    /// 1-based position in the whole filtered, sorted list (`offset` +
    /// position in this page + 1).
    pub rank: usize,
    pub ticker: String,
    pub name: String,
    pub category: Category,
    pub expected_return: f64,
    pub prediction_error: f64,
    pub current_drawdown: f64,
    pub current_price: f64,
    pub win_rate: f64,
    pub median_return: f64,
    pub median_error: f64,
    pub score: f64,
    /// The scorer's letter (A to F for the default scorer).
    pub grade: String,
    pub data_source: DataSource,
    /// The date of the last price graded.
    pub last_price_date: NaiveDate,
    /// The currency of `current_price`, from the asset catalog (ISO 4217
    /// such as `USD`; may be empty when the catalog has none).
    pub currency: String,
    /// The calibrated forecast the grade comes from (the graded verdict's
    /// `forecast`; absent where the scorer makes none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<crate::analysis::ForecastBody>,
    /// Independent episodes of the current bucket (the graded verdict's
    /// `current_state.evidence.episodes`; absent where the engine reports
    /// no evidence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub episodes: Option<u32>,
}

/// `metadata` of a ranking.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RankingMetadata {
    /// Graded assets of the snapshot for this period and metric.
    pub total_assets: usize,
    /// After every filter (`category`/`categories`, `q`, `max_age_days`,
    /// the screener's),
    /// before `offset` and `limit`.
    pub filtered_assets: usize,
    /// Ranked assets skipped before the first returned (the `offset` asked
    /// for; 0 without it).
    pub offset: usize,
    /// Provenance of the prices of the `filtered_assets`.
    pub data_sources: DataSources,
    /// Assets left out by `max_age_days` (0 without it), among those the
    /// other filters kept.
    pub stale_excluded: usize,
    /// The oldest and newest last-price dates among the `filtered_assets`
    /// (null when none is left).
    pub last_price_dates: Option<DateRange>,
    /// When the snapshot's grading run finished.
    pub calculated_at: DateTime<Utc>,
    pub return_period: u32,
    pub metric: Metric,
    pub sort_by: SortKey,
    pub sort: SortOrder,
    pub engine_version: String,
    pub scorer_version: String,
}

/// The first and last of a set of dates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DateRange {
    /// The earliest.
    pub oldest: NaiveDate,
    /// The latest.
    pub newest: NaiveDate,
}

/// `{ranked_assets, metadata}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RankingResponse {
    /// At most `limit`, in the order asked for, from position `offset`.
    pub ranked_assets: Vec<RankedAsset>,
    /// What the ranking is of.
    pub metadata: RankingMetadata,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> RawRankingQuery {
        let q = pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&");
        serde_urlencoded::from_str(&q).unwrap()
    }

    #[test]
    fn defaults_and_every_bound() {
        let q = raw(&[]).validate().unwrap();
        assert_eq!(
            q,
            RankingQuery {
                categories: None,
                sort_by: SortKey::MedianReturn,
                order: SortOrder::Desc,
                limit: 50,
                offset: 0,
                text: None,
                return_period: 90,
                metric: Metric::Return,
                max_age_days: None,
                screen: Screen::default(),
            }
        );
        for (k, v, needle) in [
            ("limit", "0", "limit"),
            ("limit", "501", "limit"),
            ("limit", "ten", "limit"),
            ("return_period", "60", "return_period"),
            ("return_period", "366", "return_period"),
            ("metric", "beta", "metric"),
            ("sort", "up", "sort"),
            ("sort_by", "volume", "sort_by"),
            ("sort_by", "Score", "sort_by"),
            ("offset", "-1", "offset"),
            ("offset", "100001", "offset"),
            ("offset", "ten", "offset"),
            ("offset", "2.5", "offset"),
            ("category", "Stonks", "category"),
            ("categories", "Crypto,Stonks", "Stonks"),
            ("max_age_days", "-1", "max_age_days"),
            ("max_age_days", "36501", "max_age_days"),
            ("max_age_days", "a week", "max_age_days"),
        ] {
            let e = raw(&[(k, v)]).validate().unwrap_err().0;
            assert!(e.contains(needle), "{k}={v}: {e}");
        }
        assert_eq!(
            raw(&[("max_age_days", "30")])
                .validate()
                .unwrap()
                .max_age_days,
            Some(30)
        );
        for p in ["7", "30", "90", "180", "365"] {
            assert_eq!(
                raw(&[("return_period", p)])
                    .validate()
                    .unwrap()
                    .return_period,
                p.parse::<u32>().unwrap()
            );
        }
        let q = raw(&[("categories", "Crypto,%20Forex"), ("category", "ETFs")])
            .validate()
            .unwrap();
        assert_eq!(
            q.categories,
            Some(vec![Category::Crypto, Category::Forex]),
            "categories has priority"
        );
        let e = raw(&[("categories", "Crypto"), ("category", "Stonks")])
            .validate()
            .unwrap_err()
            .0;
        assert!(
            e.contains("Stonks"),
            "an invalid category is refused even beside categories: {e}"
        );
    }

    #[test]
    fn every_sort_key_is_accepted_by_its_wire_name() {
        for key in SortKey::ALL {
            let q = raw(&[("sort_by", key.as_str())]).validate().unwrap();
            assert_eq!(q.sort_by, key);
            assert_eq!(
                serde_json::to_value(key).unwrap(),
                serde_json::json!(key.as_str()),
                "the wire name is the serialised one"
            );
        }
        for (name, key) in [
            ("score", SortKey::Score),
            ("ticker", SortKey::Ticker),
            ("name", SortKey::Name),
            ("category", SortKey::Category),
            ("last_price_date", SortKey::LastPriceDate),
        ] {
            assert_eq!(raw(&[("sort_by", name)]).validate().unwrap().sort_by, key);
        }
    }

    #[test]
    fn offset_and_the_text_filter() {
        let q = raw(&[("offset", "100000"), ("q", "%20MicroSoft%20")])
            .validate()
            .unwrap();
        assert_eq!(q.offset, 100_000);
        assert_eq!(q.text.as_deref(), Some("microsoft"), "trimmed, lower-cased");
        assert_eq!(raw(&[("offset", "0")]).validate().unwrap().offset, 0);
        assert_eq!(raw(&[("offset", "7.0")]).validate().unwrap().offset, 7);
        assert_eq!(raw(&[("q", "")]).validate().unwrap().text, None);
        assert_eq!(raw(&[("q", "%20%20")]).validate().unwrap().text, None);
        let hundred = "é".repeat(100);
        assert_eq!(
            raw(&[("q", &hundred)]).validate().unwrap().text.as_deref(),
            Some(hundred.as_str()),
            "100 characters (not bytes) are allowed"
        );
        let e = raw(&[("q", &"a".repeat(101))]).validate().unwrap_err().0;
        assert!(e.starts_with("q must be at most 100 characters"), "{e}");
    }

    #[test]
    fn integers_may_be_written_with_a_zero_fraction() {
        let q = raw(&[("limit", "5.0"), ("return_period", "30.0")])
            .validate()
            .unwrap();
        assert_eq!((q.limit, q.return_period), (5, 30));
        assert!(raw(&[("limit", "2.5")]).validate().is_err());
    }
}
