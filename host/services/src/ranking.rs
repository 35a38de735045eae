//! The ranking (spec: `GET /api/ranking`, DESIGN §5): the active grading
//! snapshot for one period and metric, filtered (category, text, age),
//! sorted (ties by ticker) and cut to one page (`offset`, `limit`).

use std::cmp::Ordering;
use std::sync::Arc;

use chrono::DateTime;
use forecast_api::assets::DataSources;
use forecast_api::ranking::{
    DateRange, RankedAsset, RankingMetadata, RankingQuery, RankingResponse, SortKey, SortOrder,
};
use forecast_store::{GradeRow, GradingStore, RankedRow};

use crate::error::Error;

/// Ranks the active grading snapshot.
#[derive(Clone)]
pub struct RankingService {
    db: Arc<dyn GradingStore>,
}

/// Compares two texts case-insensitively (by their lower-case characters),
/// without allocating.
fn caseless(a: &str, b: &str) -> Ordering {
    a.chars()
        .flat_map(char::to_lowercase)
        .cmp(b.chars().flat_map(char::to_lowercase))
}

/// `a` against `b` by `sort_by`, ascending.
fn by_key(a: &RankedRow, b: &RankedRow, sort_by: SortKey) -> Ordering {
    let number = |f: fn(&GradeRow) -> f64| f(&a.grade).total_cmp(&f(&b.grade));
    match sort_by {
        SortKey::MedianReturn => number(|g| g.median_return),
        SortKey::ExpectedReturn => number(|g| g.expected_return),
        SortKey::WinRate => number(|g| g.win_rate),
        SortKey::PredictionError => number(|g| g.prediction_error),
        SortKey::CurrentDrawdown => number(|g| g.current_drawdown),
        SortKey::CurrentPrice => number(|g| g.current_price),
        SortKey::Score => number(|g| g.score),
        SortKey::Ticker => caseless(&a.ticker, &b.ticker),
        SortKey::Name => caseless(&a.name, &b.name),
        SortKey::Category => caseless(a.category.as_str(), b.category.as_str()),
        SortKey::LastPriceDate => a.last_price_date.cmp(&b.last_price_date),
    }
}

/// Whether the row's ticker or name contains `text` (lower-cased).
/// The `forecast` of a stored verdict body (read for the rows of a page
/// only; any other field is skipped unparsed).
pub(crate) fn forecast_of(body: &str) -> Option<forecast_api::analysis::ForecastBody> {
    #[derive(serde::Deserialize)]
    struct Only {
        forecast: Option<forecast_api::analysis::ForecastBody>,
    }
    serde_json::from_str::<Only>(body).ok()?.forecast
}

fn matches(row: &RankedRow, text: &str) -> bool {
    row.ticker.to_lowercase().contains(text) || row.name.to_lowercase().contains(text)
}

/// Sorts by the key in `order`, ties by ticker ascending (byte order).
fn sort_rows(rows: &mut [RankedRow], sort_by: SortKey, order: SortOrder) {
    rows.sort_by(|a, b| {
        let by_key = by_key(a, b, sort_by);
        let by_key = match order {
            SortOrder::Desc => by_key.reverse(),
            SortOrder::Asc => by_key,
        };
        match by_key {
            Ordering::Equal => a.ticker.cmp(&b.ticker),
            other => other,
        }
    });
}

impl RankingService {
    /// A service over `db`'s grading snapshot.
    pub fn new(db: Arc<dyn GradingStore>) -> Self {
        RankingService { db }
    }

    /// The ranking for `q`.
    pub async fn rank(&self, q: &RankingQuery) -> Result<RankingResponse, Error> {
        let run = self.db.active_grading_run().await?.ok_or_else(|| {
            Error::Unavailable(
                "no ranking yet: the first daily grading run has not completed".into(),
            )
        })?;
        let mut rows = self
            .db
            .ranking_rows(&run.id, q.return_period, q.metric)
            .await?;
        let total_assets = rows.len();
        if let Some(cats) = &q.categories {
            rows.retain(|r| cats.contains(&r.category));
        }
        if let Some(text) = &q.text {
            rows.retain(|r| matches(r, text));
        }
        let before_age = rows.len();
        if let Some(days) = q.max_age_days {
            let oldest = chrono::Utc::now().date_naive() - chrono::Days::new(u64::from(days));
            rows.retain(|r| r.last_price_date >= oldest);
        }
        let stale_excluded = before_age - rows.len();
        let filtered_assets = rows.len();
        let data_sources = DataSources::count(rows.iter().map(|r| r.data_source));
        let last_price_dates = rows
            .iter()
            .map(|r| r.last_price_date)
            .min()
            .zip(rows.iter().map(|r| r.last_price_date).max())
            .map(|(oldest, newest)| DateRange { oldest, newest });
        sort_rows(&mut rows, q.sort_by, q.order);
        let label_version = |label: &str| label.rsplit('@').next().unwrap_or(label).to_string();
        Ok(RankingResponse {
            ranked_assets: rows
                .into_iter()
                .skip(q.offset)
                .take(q.limit)
                .enumerate()
                .map(|(i, r)| RankedAsset {
                    rank: q.offset + i + 1,
                    ticker: r.ticker,
                    name: r.name,
                    category: r.category,
                    expected_return: r.grade.expected_return,
                    prediction_error: r.grade.prediction_error,
                    current_drawdown: r.grade.current_drawdown,
                    current_price: r.grade.current_price,
                    win_rate: r.grade.win_rate,
                    median_return: r.grade.median_return,
                    median_error: r.grade.median_error,
                    score: r.grade.score,
                    grade: r.grade.letter,
                    data_source: r.data_source,
                    last_price_date: r.last_price_date,
                    currency: r.currency,
                    forecast: forecast_of(&r.grade.body),
                })
                .collect(),
            metadata: RankingMetadata {
                total_assets,
                filtered_assets,
                offset: q.offset,
                data_sources,
                stale_excluded,
                last_price_dates,
                calculated_at: DateTime::from_timestamp(
                    run.finished_at.unwrap_or(run.started_at),
                    0,
                )
                .unwrap_or_default(),
                return_period: q.return_period,
                metric: q.metric,
                sort_by: q.sort_by,
                sort: q.order,
                engine_version: label_version(&run.engine),
                scorer_version: label_version(&run.scorer),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;
    use forecast_domain::{Category, DataSource, Metric};

    fn row(ticker: &str, name: &str, category: Category, score: f64, day: u32) -> RankedRow {
        RankedRow {
            grade: GradeRow {
                asset_id: 1,
                return_period: 90,
                metric: Metric::Return,
                data_version: 1,
                letter: "C".into(),
                score,
                expected_return: 0.0,
                prediction_error: 0.0,
                median_return: 0.0,
                median_error: 0.0,
                current_drawdown: 0.0,
                current_price: 1.0,
                win_rate: 0.5,
                body: String::new(),
            },
            ticker: ticker.into(),
            name: name.into(),
            category,
            data_source: DataSource::Real,
            last_price_date: NaiveDate::from_ymd_opt(2020, 1, day).unwrap(),
            currency: "USD".into(),
        }
    }

    fn sample() -> Vec<RankedRow> {
        vec![
            row("msft", "Microsoft Corp", Category::UsStocks, 80.0, 3),
            row("AAPL", "apple Inc", Category::UsStocks, 99.0, 1),
            row("BTC-USD", "Bitcoin", Category::Crypto, 80.0, 2),
            row("^GSPC", "S&P 500", Category::Indices, 10.0, 2),
        ]
    }

    fn order(rows: &[RankedRow]) -> Vec<&str> {
        rows.iter().map(|r| r.ticker.as_str()).collect()
    }

    #[test]
    fn every_key_sorts_with_ties_by_ticker() {
        let mut rows = sample();
        sort_rows(&mut rows, SortKey::Score, SortOrder::Desc);
        assert_eq!(order(&rows), ["AAPL", "BTC-USD", "msft", "^GSPC"]);
        sort_rows(&mut rows, SortKey::Score, SortOrder::Asc);
        assert_eq!(
            order(&rows),
            ["^GSPC", "BTC-USD", "msft", "AAPL"],
            "ties stay ticker-ascending in either direction"
        );
        sort_rows(&mut rows, SortKey::Ticker, SortOrder::Asc);
        assert_eq!(
            order(&rows),
            ["^GSPC", "AAPL", "BTC-USD", "msft"],
            "case-insensitive: msft after BTC-USD"
        );
        sort_rows(&mut rows, SortKey::Name, SortOrder::Asc);
        assert_eq!(order(&rows), ["AAPL", "BTC-USD", "msft", "^GSPC"]);
        sort_rows(&mut rows, SortKey::Name, SortOrder::Desc);
        assert_eq!(order(&rows), ["^GSPC", "msft", "BTC-USD", "AAPL"]);
        sort_rows(&mut rows, SortKey::Category, SortOrder::Asc);
        assert_eq!(order(&rows), ["BTC-USD", "^GSPC", "AAPL", "msft"]);
        sort_rows(&mut rows, SortKey::LastPriceDate, SortOrder::Desc);
        assert_eq!(order(&rows), ["msft", "BTC-USD", "^GSPC", "AAPL"]);
    }

    #[test]
    fn the_text_filter_matches_ticker_or_name_in_any_case() {
        let rows = sample();
        let hits = |t: &str| {
            rows.iter()
                .filter(|r| matches(r, t))
                .map(|r| r.ticker.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(hits("microsoft"), ["msft"]);
        assert_eq!(hits("msft"), ["msft"]);
        assert_eq!(hits("inc"), ["AAPL"]);
        assert_eq!(hits("s&p"), ["^GSPC"]);
        assert_eq!(hits("-usd"), ["BTC-USD"]);
        assert!(hits("nothing").is_empty());
    }

    #[test]
    fn caseless_compares_lower_case_characters() {
        assert_eq!(caseless("abc", "ABD"), Ordering::Less);
        assert_eq!(caseless("ÄB", "äb"), Ordering::Equal);
        assert_eq!(caseless("b", "A"), Ordering::Greater);
    }
}
