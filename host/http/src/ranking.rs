//! `GET /api/ranking`: the active grading snapshot, filtered, sorted and
//! cut, per spec and DESIGN §5.

use std::cmp::Ordering;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::assets::parse_category;
use super::error::ApiError;
use super::extract::Query;
use crate::AppState;
use forecast_domain::Metric;
use forecast_domain::{Category, DataSource};
use forecast_services::analysis::CACHED_RETURN_PERIODS;
use forecast_store::RankedRow;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/ranking", get(ranking))
}

#[derive(Debug, Deserialize)]
struct RawRankingQuery {
    category: Option<String>,
    categories: Option<String>,
    sort_by: Option<String>,
    sort: Option<String>,
    limit: Option<String>,
    return_period: Option<String>,
    metric: Option<String>,
}

const SORT_KEYS: [&str; 6] = [
    "median_return",
    "expected_return",
    "win_rate",
    "prediction_error",
    "current_drawdown",
    "current_price",
];

#[derive(Debug, PartialEq)]
struct RankingQuery {
    categories: Option<Vec<Category>>,
    sort_by: &'static str,
    descending: bool,
    limit: usize,
    return_period: u32,
    metric: Metric,
}

impl RawRankingQuery {
    fn validate(&self) -> Result<RankingQuery, ApiError> {
        let bad = |m: String| ApiError::BadRequest(m);
        // `categories` takes priority over `category`.
        let categories = match (&self.categories, &self.category) {
            (Some(list), _) => Some(
                list.split(',')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(parse_category)
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            (None, Some(one)) => Some(vec![parse_category(one)?]),
            (None, None) => None,
        };
        let sort_by = match self.sort_by.as_deref() {
            None => "median_return",
            Some(s) => SORT_KEYS.into_iter().find(|k| *k == s).ok_or_else(|| {
                bad(format!(
                    "sort_by must be one of {} (got '{s}')",
                    SORT_KEYS.join(", ")
                ))
            })?,
        };
        let descending = match self.sort.as_deref() {
            None | Some("desc") => true,
            Some("asc") => false,
            Some(other) => return Err(bad(format!("sort must be asc or desc (got '{other}')"))),
        };
        let limit = match self.limit.as_deref() {
            None => 50,
            Some(raw) => match raw.trim().parse::<i64>() {
                Ok(n) if (1..=500).contains(&n) => n as usize,
                _ => {
                    return Err(bad(format!(
                        "limit must be an integer between 1 and 500 inclusive (got '{raw}')"
                    )))
                }
            },
        };
        let return_period = match self.return_period.as_deref() {
            None => 90,
            Some(raw) => match raw.trim().parse::<u32>() {
                Ok(p) if CACHED_RETURN_PERIODS.contains(&p) => p,
                _ => {
                    return Err(bad(format!(
                        "return_period must be one of 7, 30, 90, 180, 365 (got '{raw}')"
                    )))
                }
            },
        };
        let metric = match self.metric.as_deref() {
            None => Metric::Return,
            Some(m) => m.parse().map_err(bad)?,
        };
        Ok(RankingQuery {
            categories,
            sort_by,
            descending,
            limit,
            return_period,
            metric,
        })
    }
}

#[derive(Debug, Serialize)]
struct RankedAsset {
    rank: usize,
    ticker: String,
    name: String,
    category: Category,
    expected_return: f64,
    prediction_error: f64,
    current_drawdown: f64,
    current_price: f64,
    win_rate: f64,
    median_return: f64,
    median_error: f64,
    score: f64,
    grade: String,
    data_source: DataSource,
}

#[derive(Debug, Serialize)]
struct RankingMetadata {
    total_assets: usize,
    filtered_assets: usize,
    calculated_at: DateTime<Utc>,
    return_period: u32,
    metric: Metric,
    sort_by: &'static str,
    sort: &'static str,
    engine_version: String,
    scorer_version: String,
}

#[derive(Debug, Serialize)]
struct RankingResponse {
    ranked_assets: Vec<RankedAsset>,
    metadata: RankingMetadata,
}

fn key(row: &RankedRow, sort_by: &str) -> f64 {
    let g = &row.grade;
    match sort_by {
        "expected_return" => g.expected_return,
        "win_rate" => g.win_rate,
        "prediction_error" => g.prediction_error,
        "current_drawdown" => g.current_drawdown,
        "current_price" => g.current_price,
        _ => g.median_return,
    }
}

/// Sorts by the key (desc or asc), ties by ticker ascending.
fn sort_rows(rows: &mut [RankedRow], sort_by: &str, descending: bool) {
    rows.sort_by(|a, b| {
        let order = key(a, sort_by).total_cmp(&key(b, sort_by));
        let order = if descending { order.reverse() } else { order };
        match order {
            Ordering::Equal => a.ticker.cmp(&b.ticker),
            other => other,
        }
    });
}

async fn ranking(
    State(state): State<AppState>,
    Query(raw): Query<RawRankingQuery>,
) -> Result<Json<RankingResponse>, ApiError> {
    let q = raw.validate()?;
    let run = state.db.active_grading_run().await?.ok_or_else(|| {
        ApiError::Unavailable(
            "no ranking yet: the first daily grading run has not completed".into(),
        )
    })?;
    let mut rows = state
        .db
        .ranking_rows(&run.id, q.return_period, q.metric)
        .await?;
    let total_assets = rows.len();
    if let Some(cats) = &q.categories {
        rows.retain(|r| cats.contains(&r.category));
    }
    let filtered_assets = rows.len();
    sort_rows(&mut rows, q.sort_by, q.descending);
    let label_version = |label: &str| label.rsplit('@').next().unwrap_or(label).to_string();
    Ok(Json(RankingResponse {
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
            })
            .collect(),
        metadata: RankingMetadata {
            total_assets,
            filtered_assets,
            calculated_at: DateTime::from_timestamp(run.finished_at.unwrap_or(run.started_at), 0)
                .unwrap_or_default(),
            return_period: q.return_period,
            metric: q.metric,
            sort_by: q.sort_by,
            sort: if q.descending { "desc" } else { "asc" },
            engine_version: label_version(&run.engine),
            scorer_version: label_version(&run.scorer),
        },
    }))
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
        let uri: axum::http::Uri = format!("/x?{q}").parse().unwrap();
        axum::extract::Query::<RawRankingQuery>::try_from_uri(&uri)
            .unwrap()
            .0
    }

    #[test]
    fn defaults_and_every_bound() {
        let q = raw(&[]).validate().unwrap();
        assert_eq!(
            q,
            RankingQuery {
                categories: None,
                sort_by: "median_return",
                descending: true,
                limit: 50,
                return_period: 90,
                metric: Metric::Return,
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
        ] {
            let e = raw(&[(k, v)]).validate().unwrap_err().to_string();
            assert!(e.contains(needle), "{k}={v}: {e}");
        }
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
    }
}
