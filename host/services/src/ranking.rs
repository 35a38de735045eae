//! The ranking (spec: `GET /api/ranking`, DESIGN §5): the active grading
//! snapshot for one period and metric, filtered by category, sorted (ties
//! by ticker) and cut.

use std::cmp::Ordering;
use std::sync::Arc;

use chrono::DateTime;
use forecast_api::assets::DataSources;
use forecast_api::ranking::{
    DateRange, RankedAsset, RankingMetadata, RankingQuery, RankingResponse, SortKey, SortOrder,
};
use forecast_store::{GradingStore, RankedRow};

use crate::error::Error;

/// Ranks the active grading snapshot.
#[derive(Clone)]
pub struct RankingService {
    db: Arc<dyn GradingStore>,
}

fn key(row: &RankedRow, sort_by: SortKey) -> f64 {
    let g = &row.grade;
    match sort_by {
        SortKey::MedianReturn => g.median_return,
        SortKey::ExpectedReturn => g.expected_return,
        SortKey::WinRate => g.win_rate,
        SortKey::PredictionError => g.prediction_error,
        SortKey::CurrentDrawdown => g.current_drawdown,
        SortKey::CurrentPrice => g.current_price,
    }
}

/// Sorts by the key in `order`, ties by ticker ascending.
fn sort_rows(rows: &mut [RankedRow], sort_by: SortKey, order: SortOrder) {
    rows.sort_by(|a, b| {
        let by_key = key(a, sort_by).total_cmp(&key(b, sort_by));
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
                .take(q.limit)
                .enumerate()
                .map(|(i, r)| RankedAsset {
                    rank: i + 1,
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
                })
                .collect(),
            metadata: RankingMetadata {
                total_assets,
                filtered_assets,
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
