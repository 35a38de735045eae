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

/// What a ranking is sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
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
}

impl SortKey {
    /// Every key, in the order they are documented.
    pub const ALL: [SortKey; 6] = [
        SortKey::MedianReturn,
        SortKey::ExpectedReturn,
        SortKey::WinRate,
        SortKey::PredictionError,
        SortKey::CurrentDrawdown,
        SortKey::CurrentPrice,
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
        }
    }
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
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
    /// The sort key.
    #[param(value_type = Option<SortKey>, default = "median_return")]
    pub sort_by: Option<String>,
    /// The direction.
    #[param(value_type = Option<SortOrder>, default = "desc")]
    pub sort: Option<String>,
    /// How many ranked assets to return.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 500, default = 50)]
    pub limit: Option<String>,
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

/// The largest `max_age_days` (100 years).
pub const MAX_AGE_DAYS: u32 = 36_500;

/// A graded horizon in calendar days: 7, 30, 90, 180 or 365 (default 90).
fn graded_period() -> utoipa::openapi::Object {
    crate::integer_enum(&defaults::GRADED_RETURN_PERIODS.map(i64::from), 90)
}

/// A validated ranking query.
#[derive(Debug, Clone, PartialEq)]
pub struct RankingQuery {
    /// Keep only these categories (`None`: all).
    pub categories: Option<Vec<Category>>,
    /// Sort key.
    pub sort_by: SortKey,
    /// Direction.
    pub order: SortOrder,
    /// How many to return.
    pub limit: usize,
    /// Graded horizon.
    pub return_period: u32,
    /// Graded metric.
    pub metric: Metric,
    /// Keep only assets whose last price is at most this many days old.
    pub max_age_days: Option<u32>,
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
            Some(s) => SortKey::ALL
                .into_iter()
                .find(|k| k.as_str() == s)
                .ok_or_else(|| {
                    let names: Vec<&str> = SortKey::ALL.iter().map(|k| k.as_str()).collect();
                    format!(
                        "sort_by must be one of {} (got '{}')",
                        names.join(", "),
                        crate::quote(s)
                    )
                })?,
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
        let limit = match self.limit.as_deref() {
            None => DEFAULT_LIMIT,
            Some(raw) => match crate::integer(raw.trim()) {
                Some(n) if (1..=MAX_LIMIT as i64).contains(&n) => n as usize,
                _ => {
                    return Err(Invalid::from(format!(
                        "limit must be an integer between 1 and {MAX_LIMIT} inclusive (got '{}')",
                        crate::quote(raw)
                    )))
                }
            },
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
        let max_age_days = match self.max_age_days.as_deref() {
            None => None,
            Some(raw) => match crate::integer(raw.trim()) {
                Some(n) if (0..=i64::from(MAX_AGE_DAYS)).contains(&n) => Some(n as u32),
                _ => {
                    return Err(Invalid::from(format!(
                        "max_age_days must be an integer between 0 and {MAX_AGE_DAYS} inclusive (got '{}')",
                        crate::quote(raw)
                    )))
                }
            },
        };
        Ok(RankingQuery {
            categories,
            sort_by,
            order,
            limit,
            return_period,
            metric,
            max_age_days,
        })
    }
}

/// One ranked asset.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RankedAsset {
    /// 1-based position after filtering and sorting.
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
}

/// `metadata` of a ranking.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RankingMetadata {
    /// Graded assets of the snapshot for this period and metric.
    pub total_assets: usize,
    /// After the category and `max_age_days` filters, before `limit`.
    pub filtered_assets: usize,
    /// Provenance of the prices of the `filtered_assets`.
    pub data_sources: DataSources,
    /// Assets left out by `max_age_days` (0 without it).
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
    /// At most `limit`, best first.
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
                return_period: 90,
                metric: Metric::Return,
                max_age_days: None,
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
            ("sort_by", "score", "sort_by"),
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
    fn integers_may_be_written_with_a_zero_fraction() {
        let q = raw(&[("limit", "5.0"), ("return_period", "30.0")])
            .validate()
            .unwrap();
        assert_eq!((q.limit, q.return_period), (5, 30));
        assert!(raw(&[("limit", "2.5")]).validate().is_err());
    }
}
