//! CSV exports (issue 29): every table a data route answers, as CSV when
//! the client sends `Accept: text/csv` or `?format=csv`, one table per
//! response chosen by `?table=` (each route's first table by default).
//! The JSON stays the contract; a CSV is the same numbers, unrounded,
//! with a header row, as an attachment named after the route and table.

use axum::http::header::{ACCEPT, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use forecast_api::analysis::AnalysisResponse;
use forecast_api::backtest::{BacktestResponse, MetricsBody, MonteCarloResponse};
use forecast_api::ranking::RankingResponse;
use forecast_api::research::{SplitMetrics, SweepResponse, WalkForwardResponse};
use forecast_api::track_record::{TrackRecordResponse, UniverseTrackRecordResponse};
use serde::{Deserialize, Serialize};
use utoipa::IntoParams;

use super::error::ApiError;

/// `format` and `table` of an exportable route's query.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// `json` (default) or `csv` (as `Accept: text/csv`); `html` for a
    /// backtest's tear sheet.
    #[param(value_type = Option<String>, pattern = "^(json|csv|html)$")]
    pub format: Option<String>,
    /// With CSV, which of the response's tables (the route lists them; its
    /// first by default).
    #[param(value_type = Option<String>, max_length = 32)]
    pub table: Option<String>,
}

/// The exportable routes (their `/web` twins too), their tables (the
/// default first) and whether `format=html` answers a tear sheet: what the
/// OpenAPI document lists.
pub const EXPORTS: [(&str, &[&str], bool); 9] = [
    ("/api/backtest", BacktestResponse::TABLES, true),
    (
        "/api/backtest/monte-carlo",
        MonteCarloResponse::TABLES,
        false,
    ),
    ("/api/backtest/sweep", SweepResponse::TABLES, false),
    (
        "/api/backtest/walk-forward",
        WalkForwardResponse::TABLES,
        false,
    ),
    ("/api/ranking", RankingResponse::TABLES, false),
    ("/api/analysis/{ticker}", AnalysisResponse::TABLES, false),
    (
        "/api/track-record/{ticker}",
        TrackRecordResponse::TABLES,
        false,
    ),
    (
        "/api/track-record",
        UniverseTrackRecordResponse::TABLES,
        false,
    ),
    ("/watchlist", WatchlistTable::TABLES, false),
];

/// Whether the request asks for the HTML tear sheet (`format=html`, on
/// the routes that have one).
pub fn wants_html(q: &ExportQuery) -> bool {
    q.format.as_deref() == Some("html")
}

/// A backtest's tear sheet as an HTML attachment.
pub fn tear_sheet(r: &BacktestResponse) -> Response {
    let html = forecast_report::tearsheet::tear_sheet(r);
    let mut response = html.into_response();
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"backtest-tear-sheet.html\""),
    );
    response
}

/// A response with CSV tables.
pub trait Tables: Serialize {
    /// The route's name in file names.
    const NAME: &'static str;
    /// The table names, the default first.
    const TABLES: &'static [&'static str];
    /// Writes `table` (one of [`Tables::TABLES`]).
    fn write(&self, table: &str, w: &mut csv::Writer<Vec<u8>>) -> csv::Result<()>;
}

/// What the request asks for: JSON, or one table of `T` as CSV. Checked
/// before any work, so a bad `format` or `table` costs nothing to compute.
#[derive(Debug, Clone, Copy)]
pub struct Want {
    csv: bool,
    table: &'static str,
}

impl Want {
    /// The request's choice among `T`'s tables, or a 400 naming the bad
    /// parameter.
    pub fn of<T: Tables>(headers: &HeaderMap, q: &ExportQuery) -> Result<Want, ApiError> {
        let csv = match q.format.as_deref() {
            Some("csv") => true,
            Some("json") => false,
            Some(other) => {
                return Err(ApiError::BadRequest(format!(
                    "format must be json or csv (got '{}')",
                    forecast_api::quote(other)
                )))
            }
            None => headers
                .get_all(ACCEPT)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .any(|v| v.split(',').any(|m| m.trim().starts_with("text/csv"))),
        };
        let table = match q.table.as_deref() {
            None => T::TABLES[0],
            Some(t) => T::TABLES
                .iter()
                .copied()
                .find(|&known| known == t)
                .ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "table must be one of {} (got '{}')",
                        T::TABLES.join(", "),
                        forecast_api::quote(t)
                    ))
                })?,
        };
        Ok(Want { csv, table })
    }

    /// Whether the answer is a CSV table (else JSON).
    pub fn is_csv(&self) -> bool {
        self.csv
    }

    /// `value` as JSON, or its table as a CSV attachment.
    pub fn respond<T: Tables>(self, value: T) -> Result<Response, ApiError> {
        if !self.csv {
            return Ok(Json(value).into_response());
        }
        let failed =
            |e: &dyn std::fmt::Display| ApiError::Internal(format!("writing the CSV failed: {e}"));
        let mut w = csv::Writer::from_writer(Vec::new());
        value.write(self.table, &mut w).map_err(|e| failed(&e))?;
        let body = w.into_inner().map_err(|e| failed(&e))?;
        let mut response = body.into_response();
        let headers = response.headers_mut();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/csv; charset=utf-8"),
        );
        let file = format!("attachment; filename=\"{}-{}.csv\"", T::NAME, self.table);
        if let Ok(v) = HeaderValue::from_str(&file) {
            headers.insert(CONTENT_DISPOSITION, v);
        }
        Ok(response)
    }
}

fn num(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// Every scalar metric by name, then each benchmark's relative figures as
/// `relative.<benchmark>.<figure>`.
fn metric_rows(m: &MetricsBody) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(m) {
        for (k, v) in map {
            match v {
                serde_json::Value::Object(benchmarks) => {
                    for (b, figures) in benchmarks {
                        if let serde_json::Value::Object(figures) = figures {
                            for (f, x) in figures {
                                rows.push((format!("{k}.{b}.{f}"), scalar(&x)));
                            }
                        }
                    }
                }
                v => rows.push((k, scalar(&v))),
            }
        }
    }
    rows
}

fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn write_metrics(m: &MetricsBody, w: &mut csv::Writer<Vec<u8>>) -> csv::Result<()> {
    w.write_record(["metric", "value"])?;
    for (k, v) in metric_rows(m) {
        w.write_record([k, v])?;
    }
    Ok(())
}

impl Tables for BacktestResponse {
    const NAME: &'static str = "backtest";
    const TABLES: &'static [&'static str] = &["equity", "trades", "metrics"];
    fn write(&self, table: &str, w: &mut csv::Writer<Vec<u8>>) -> csv::Result<()> {
        match table {
            "equity" => {
                // The two baskets first, then the benchmarks chosen by ticker.
                let mut names: Vec<&String> = self.benchmarks.keys().collect();
                names.sort_by_key(|n| !n.starts_with("equal_weight_"));
                let mut header = vec!["date".to_string(), "equity".to_string()];
                header.extend(names.iter().map(|n| n.to_string()));
                w.write_record(&header)?;
                for (i, p) in self.equity_curve.iter().enumerate() {
                    let mut row = vec![p.date.to_string(), p.equity.to_string()];
                    for n in &names {
                        row.push(num(self.benchmarks[*n].equity.get(i).copied()));
                    }
                    w.write_record(&row)?;
                }
                Ok(())
            }
            "trades" => {
                w.write_record([
                    "date",
                    "ticker",
                    "side",
                    "qty",
                    "price",
                    "cost",
                    "realised_pnl",
                ])?;
                for t in &self.trades {
                    w.write_record([
                        t.date.to_string(),
                        t.ticker.clone(),
                        t.side.clone(),
                        t.qty.to_string(),
                        t.price.to_string(),
                        t.cost.to_string(),
                        num(t.realised_pnl),
                    ])?;
                }
                Ok(())
            }
            _ => write_metrics(&self.metrics, w),
        }
    }
}

impl Tables for MonteCarloResponse {
    const NAME: &'static str = "monte-carlo";
    const TABLES: &'static [&'static str] = &["fan", "metrics"];
    fn write(&self, table: &str, w: &mut csv::Writer<Vec<u8>>) -> csv::Result<()> {
        match table {
            "fan" => {
                w.write_record(["date", "p5", "p25", "p50", "p75", "p95"])?;
                for p in &self.fan {
                    w.write_record([
                        p.date.to_string(),
                        p.p5.to_string(),
                        p.p25.to_string(),
                        p.p50.to_string(),
                        p.p75.to_string(),
                        p.p95.to_string(),
                    ])?;
                }
                Ok(())
            }
            _ => write_metrics(&self.metrics, w),
        }
    }
}

const SPLIT_FIGURES: [&str; 6] = [
    "total_return",
    "cagr",
    "sharpe_ratio",
    "sortino_ratio",
    "max_drawdown",
    "calmar_ratio",
];

fn figures(m: &SplitMetrics) -> [Option<f64>; 6] {
    [
        m.total_return,
        m.cagr,
        m.sharpe_ratio,
        m.sortino_ratio,
        m.max_drawdown,
        m.calmar_ratio,
    ]
}

impl Tables for SweepResponse {
    const NAME: &'static str = "sweep";
    const TABLES: &'static [&'static str] = &["rows"];
    fn write(&self, _table: &str, w: &mut csv::Writer<Vec<u8>>) -> csv::Result<()> {
        let metric_names: Vec<String> = self
            .rows
            .first()
            .map(|r| {
                metric_rows(&r.metrics)
                    .into_iter()
                    .map(|(k, _)| k)
                    .collect()
            })
            .unwrap_or_default();
        let mut header: Vec<String> = self.axes.iter().map(|a| a.name.clone()).collect();
        header.extend(["score".to_string(), "rank".to_string()]);
        header.extend(metric_names.iter().cloned());
        w.write_record(&header)?;
        for r in &self.rows {
            let mut row: Vec<String> = self
                .axes
                .iter()
                .map(|a| r.params.get(&a.name).map(scalar).unwrap_or_default())
                .collect();
            row.push(num(r.score));
            row.push(r.rank.map(|x| x.to_string()).unwrap_or_default());
            row.extend(metric_rows(&r.metrics).into_iter().map(|(_, v)| v));
            w.write_record(&row)?;
        }
        Ok(())
    }
}

impl Tables for WalkForwardResponse {
    const NAME: &'static str = "walk-forward";
    const TABLES: &'static [&'static str] = &["splits", "equity"];
    fn write(&self, table: &str, w: &mut csv::Writer<Vec<u8>>) -> csv::Result<()> {
        match table {
            "equity" => {
                w.write_record(["date", "equity"])?;
                for p in &self.equity_curve {
                    w.write_record([p.date.to_string(), p.equity.to_string()])?;
                }
                Ok(())
            }
            _ => {
                let mut header: Vec<String> =
                    ["train_start", "train_end", "test_start", "test_end"]
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                header.extend(self.axes.iter().map(|a| format!("chosen.{}", a.name)));
                header.extend(SPLIT_FIGURES.iter().map(|f| format!("in_sample.{f}")));
                header.extend(SPLIT_FIGURES.iter().map(|f| format!("out_of_sample.{f}")));
                w.write_record(&header)?;
                for s in &self.splits {
                    let mut row = vec![
                        s.train_start.to_string(),
                        s.train_end.to_string(),
                        s.test_start.to_string(),
                        s.test_end.to_string(),
                    ];
                    row.extend(
                        self.axes
                            .iter()
                            .map(|a| s.chosen.get(&a.name).map(scalar).unwrap_or_default()),
                    );
                    row.extend(figures(&s.in_sample).map(num));
                    row.extend(figures(&s.out_of_sample).map(num));
                    w.write_record(&row)?;
                }
                Ok(())
            }
        }
    }
}

/// A ranked asset as one CSV row: its fields, the forecast's flattened
/// into `forecast_*` columns (empty where there is none).
#[derive(Serialize)]
struct RankingCsvRow<'a> {
    rank: usize,
    ticker: &'a str,
    name: &'a str,
    category: forecast_domain::Category,
    expected_return: f64,
    prediction_error: f64,
    current_drawdown: f64,
    current_price: f64,
    win_rate: f64,
    median_return: f64,
    median_error: f64,
    score: f64,
    grade: &'a str,
    data_source: forecast_domain::DataSource,
    last_price_date: chrono::NaiveDate,
    currency: &'a str,
    forecast_central: Option<f64>,
    forecast_p10: Option<f64>,
    forecast_p90: Option<f64>,
    forecast_method: Option<&'a str>,
    forecast_thin: Option<bool>,
    episodes: Option<u32>,
}

impl<'a> RankingCsvRow<'a> {
    fn of(a: &'a forecast_api::ranking::RankedAsset) -> Self {
        let f = a.forecast.as_ref();
        RankingCsvRow {
            rank: a.rank,
            ticker: &a.ticker,
            name: &a.name,
            category: a.category,
            expected_return: a.expected_return,
            prediction_error: a.prediction_error,
            current_drawdown: a.current_drawdown,
            current_price: a.current_price,
            win_rate: a.win_rate,
            median_return: a.median_return,
            median_error: a.median_error,
            score: a.score,
            grade: &a.grade,
            data_source: a.data_source,
            last_price_date: a.last_price_date,
            currency: &a.currency,
            forecast_central: f.map(|f| f.central),
            forecast_p10: f.map(|f| f.p10),
            forecast_p90: f.map(|f| f.p90),
            forecast_method: f.map(|f| f.method.as_str()),
            forecast_thin: f.map(|f| f.thin),
            episodes: a.episodes,
        }
    }
}

impl Tables for RankingResponse {
    const NAME: &'static str = "ranking";
    const TABLES: &'static [&'static str] = &["assets"];
    fn write(&self, _table: &str, w: &mut csv::Writer<Vec<u8>>) -> csv::Result<()> {
        for a in &self.ranked_assets {
            w.serialize(RankingCsvRow::of(a))?;
        }
        if self.ranked_assets.is_empty() {
            w.write_record([
                "rank",
                "ticker",
                "name",
                "category",
                "expected_return",
                "prediction_error",
                "current_drawdown",
                "current_price",
                "win_rate",
                "median_return",
                "median_error",
                "score",
                "grade",
                "data_source",
                "last_price_date",
                "currency",
                "forecast_central",
                "forecast_p10",
                "forecast_p90",
                "forecast_method",
                "forecast_thin",
                "episodes",
            ])?;
        }
        Ok(())
    }
}

/// The watchlist with each asset's graded row (the ranking's default
/// horizon and metric), `None` where there is none to show: not graded,
/// or an account without Premium (whose page shows no verdicts either).
#[derive(Serialize)]
pub struct WatchlistTable {
    /// The watchlist in the order chosen.
    pub items: Vec<forecast_api::accounts::WatchlistItem>,
    /// Each item's graded row, by position.
    pub graded: Vec<Option<forecast_api::ranking::RankedAsset>>,
}

impl Tables for WatchlistTable {
    const NAME: &'static str = "watchlist";
    const TABLES: &'static [&'static str] = &["assets"];
    fn write(&self, _table: &str, w: &mut csv::Writer<Vec<u8>>) -> csv::Result<()> {
        w.write_record([
            "ticker",
            "name",
            "category",
            "data_source",
            "currency",
            "grade",
            "score",
            "expected_return",
            "current_price",
            "last_price_date",
            "current_drawdown",
            "median_return",
            "win_rate",
            "episodes",
        ])?;
        for (i, item) in self.items.iter().enumerate() {
            let g = self.graded.get(i).and_then(Option::as_ref);
            let category = serde_json::to_value(item.category).map(|v| scalar(&v));
            let source = serde_json::to_value(item.data_source).map(|v| scalar(&v));
            w.write_record([
                item.ticker.clone(),
                item.name.clone(),
                category.unwrap_or_default(),
                source.unwrap_or_default(),
                item.currency.clone(),
                g.map(|g| g.grade.clone()).unwrap_or_default(),
                num(g.map(|g| g.score)),
                num(g.map(|g| g.expected_return)),
                num(g.map(|g| g.current_price)),
                g.map(|g| g.last_price_date.to_string()).unwrap_or_default(),
                num(g.map(|g| g.current_drawdown)),
                num(g.map(|g| g.median_return)),
                num(g.map(|g| g.win_rate)),
                g.and_then(|g| g.episodes)
                    .map(|e| e.to_string())
                    .unwrap_or_default(),
            ])?;
        }
        Ok(())
    }
}

/// One month-end of an asset's grade history as a CSV row.
#[derive(Serialize)]
struct TrackRecordCsvRow<'a> {
    date: chrono::NaiveDate,
    grade: &'a str,
    score: f64,
    predicted_median_return: f64,
    realised_return: Option<f64>,
    forecast_central: Option<f64>,
    forecast_p10: Option<f64>,
    forecast_p90: Option<f64>,
    climatology_mean: Option<f64>,
}

impl Tables for UniverseTrackRecordResponse {
    const NAME: &'static str = "track-record";
    const TABLES: &'static [&'static str] = &["by_grade", "ic", "calibration"];
    fn write(&self, table: &str, w: &mut csv::Writer<Vec<u8>>) -> csv::Result<()> {
        match table {
            "by_grade" => {
                w.write_record([
                    "grade",
                    "count",
                    "mean_realised_return",
                    "mean_ci_low",
                    "mean_ci_high",
                    "median_realised_return",
                    "hit_rate",
                    "mean_excess_return",
                ])?;
                for g in &self.by_grade {
                    w.write_record([
                        g.grade.clone(),
                        g.count.to_string(),
                        num(g.mean_realised_return),
                        num(g.mean_ci.map(|c| c[0])),
                        num(g.mean_ci.map(|c| c[1])),
                        num(g.median_realised_return),
                        num(g.hit_rate),
                        num(g.mean_excess_return),
                    ])?;
                }
            }
            "ic" => {
                w.write_record(["date", "ic", "assets"])?;
                for p in &self.ic_series {
                    w.write_record([p.date.to_string(), p.ic.to_string(), p.assets.to_string()])?;
                }
            }
            _ => {
                w.write_record(["mean_predicted", "mean_realised", "count"])?;
                for b in &self.calibration {
                    w.write_record([
                        b.mean_predicted.to_string(),
                        b.mean_realised.to_string(),
                        b.count.to_string(),
                    ])?;
                }
            }
        }
        Ok(())
    }
}

impl Tables for TrackRecordResponse {
    const NAME: &'static str = "track-record";
    const TABLES: &'static [&'static str] = &["history"];
    fn write(&self, _table: &str, w: &mut csv::Writer<Vec<u8>>) -> csv::Result<()> {
        if self.history.is_empty() {
            return w.write_record([
                "date",
                "grade",
                "score",
                "predicted_median_return",
                "realised_return",
                "forecast_central",
                "forecast_p10",
                "forecast_p90",
                "climatology_mean",
            ]);
        }
        for r in &self.history {
            let f = r.forecast.as_ref();
            w.serialize(TrackRecordCsvRow {
                date: r.date,
                grade: &r.grade,
                score: r.score,
                predicted_median_return: r.predicted_median_return,
                realised_return: r.realised_return,
                forecast_central: f.map(|f| f.central),
                forecast_p10: f.map(|f| f.p10),
                forecast_p90: f.map(|f| f.p90),
                climatology_mean: f.map(|f| f.climatology_mean),
            })?;
        }
        Ok(())
    }
}

impl Tables for AnalysisResponse {
    const NAME: &'static str = "analysis";
    const TABLES: &'static [&'static str] = &["time_series", "segments"];
    fn write(&self, table: &str, w: &mut csv::Writer<Vec<u8>>) -> csv::Result<()> {
        match table {
            "segments" => {
                w.write_record([
                    "segment_idx",
                    "lower_bound",
                    "upper_bound",
                    "count",
                    "expected_return",
                    "avg_return",
                    "median_return",
                    "static_median_return",
                    "max_loss",
                    "win_rate",
                ])?;
                for s in &self.segments {
                    w.write_record([
                        s.segment_idx.to_string(),
                        s.lower_bound.to_string(),
                        s.upper_bound.to_string(),
                        s.count.to_string(),
                        num(s.expected_return),
                        num(s.avg_return),
                        num(s.median_return),
                        num(s.static_median_return),
                        num(s.max_loss),
                        num(s.win_rate),
                    ])?;
                }
                Ok(())
            }
            _ => {
                let t = &self.time_series;
                w.write_record([
                    "date",
                    "price",
                    "drawdown",
                    "expected_return",
                    "prediction_error",
                    "prediction_error_cumavg",
                    "actual_return",
                    "median_return",
                    "median_error",
                    "median_error_cumavg",
                    "projected_price",
                ])?;
                let at = |v: &[Option<f64>], i: usize| num(v.get(i).copied().flatten());
                let at_f = |v: &[f64], i: usize| num(v.get(i).copied());
                for (i, d) in t.dates.iter().enumerate() {
                    w.write_record([
                        d.to_string(),
                        at_f(&t.prices, i),
                        at_f(&t.drawdowns, i),
                        at_f(&t.expected_returns, i),
                        at(&t.prediction_errors, i),
                        at(&t.prediction_error_cumavg, i),
                        at(&t.actual_returns, i),
                        at_f(&t.median_returns, i),
                        at(&t.median_errors, i),
                        at(&t.median_error_cumavg, i),
                        at(&t.projected_prices, i),
                    ])?;
                }
                Ok(())
            }
        }
    }
}
