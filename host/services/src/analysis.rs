//! The analysis service: validates parameters, loads the asset's window,
//! runs the active segmentation component off the async workers, shapes the
//! spec's AnalysisResponse, and caches default-parameter answers keyed by
//! everything that produced them.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use std::sync::Arc;

use crate::active::Plugins;
use forecast_domain::series::{from_days, PriceSeries};
use forecast_domain::{Asset, Category, DataSource, Metric};
use forecast_plugins::segmentation::{self as seg, AnalysisParams, EngineError};
use forecast_plugins::PluginError;
use forecast_store::Database;
use forecast_store::StoreError;

use forecast_domain::defaults;
pub use forecast_domain::defaults::{GRADED_RETURN_PERIODS as CACHED_RETURN_PERIODS, MIN_ROWS};

/// The engine's metric for a domain [`Metric`].
pub(crate) fn wit_metric(m: Metric) -> seg::Metric {
    match m {
        Metric::Return => seg::Metric::TotalReturn,
        Metric::Sharpe => seg::Metric::Sharpe,
        Metric::Sortino => seg::Metric::Sortino,
    }
}

/// Validated analysis parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnalysisQuery {
    /// Horizon in calendar days, 7..=365.
    pub return_period: u32,
    /// Buckets, 10..=50.
    pub num_segments: u32,
    /// EMA decay, 0.80..=0.99.
    pub decay_factor: f64,
    /// Outcome metric.
    pub metric: Metric,
    /// Inclusive lower date bound.
    pub start_date: Option<NaiveDate>,
    /// Inclusive upper date bound.
    pub end_date: Option<NaiveDate>,
}

impl AnalysisQuery {
    /// The engine's parameters for these query parameters; `periods_per_year`
    /// comes from the asset's whole history, so a narrower window never
    /// changes the annualisation.
    pub fn engine_params(&self, periods_per_year: u32) -> AnalysisParams {
        AnalysisParams {
            return_period: self.return_period,
            num_segments: self.num_segments,
            decay_factor: self.decay_factor,
            metric: wit_metric(self.metric),
            periods_per_year: Some(periods_per_year),
        }
    }
}

impl Default for AnalysisQuery {
    fn default() -> Self {
        AnalysisQuery {
            return_period: defaults::RETURN_PERIOD,
            num_segments: defaults::NUM_SEGMENTS,
            decay_factor: defaults::DECAY_FACTOR,
            metric: Metric::Return,
            start_date: None,
            end_date: None,
        }
    }
}

/// Raw query parameters as strings, so every problem gets a message that
/// names the parameter and its bounds.
#[derive(Debug, Default, Deserialize)]
pub struct RawAnalysisQuery {
    return_period: Option<String>,
    num_segments: Option<String>,
    decay_factor: Option<String>,
    metric: Option<String>,
    start_date: Option<String>,
    end_date: Option<String>,
}

fn parse_int(name: &str, raw: Option<&str>, default: u32, lo: u32, hi: u32) -> Result<u32, String> {
    let Some(raw) = raw else { return Ok(default) };
    let bound =
        || format!("{name} must be an integer between {lo} and {hi} inclusive (got '{raw}')");
    let v: i64 = raw.trim().parse().map_err(|_| bound())?;
    if v < i64::from(lo) || v > i64::from(hi) {
        return Err(bound());
    }
    Ok(v as u32)
}

fn parse_date(name: &str, raw: Option<&str>) -> Result<Option<NaiveDate>, String> {
    raw.map(|r| {
        NaiveDate::parse_from_str(r.trim(), "%Y-%m-%d")
            .map_err(|_| format!("{name} must be a date in YYYY-MM-DD format (got '{r}')"))
    })
    .transpose()
}

impl RawAnalysisQuery {
    /// Checks every bound of the spec; the error names the parameter.
    pub fn validate(&self) -> Result<AnalysisQuery, String> {
        let return_period = parse_int(
            "return_period",
            self.return_period.as_deref(),
            defaults::RETURN_PERIOD,
            defaults::RETURN_PERIOD_MIN,
            defaults::RETURN_PERIOD_MAX,
        )?;
        let num_segments = parse_int(
            "num_segments",
            self.num_segments.as_deref(),
            defaults::NUM_SEGMENTS,
            defaults::NUM_SEGMENTS_MIN,
            defaults::NUM_SEGMENTS_MAX,
        )?;
        let decay_factor = match self.decay_factor.as_deref() {
            None => defaults::DECAY_FACTOR,
            Some(raw) => {
                let (lo, hi) = (defaults::DECAY_FACTOR_MIN, defaults::DECAY_FACTOR_MAX);
                let msg = || {
                    format!("decay_factor must be a number between {lo:.2} and {hi:.2} inclusive (got '{raw}')")
                };
                let v: f64 = raw.trim().parse().map_err(|_| msg())?;
                if !(lo..=hi).contains(&v) {
                    return Err(msg());
                }
                v
            }
        };
        let metric = match self.metric.as_deref() {
            None => Metric::Return,
            Some(m) => m.parse()?,
        };
        let start_date = parse_date("start_date", self.start_date.as_deref())?;
        let end_date = parse_date("end_date", self.end_date.as_deref())?;
        if let (Some(s), Some(e)) = (start_date, end_date) {
            if s > e {
                return Err(format!("start_date {s} is after end_date {e}"));
            }
        }
        Ok(AnalysisQuery {
            return_period,
            num_segments,
            decay_factor,
            metric,
            start_date,
            end_date,
        })
    }
}

impl AnalysisQuery {
    /// Default segments and decay over the whole history for one of the
    /// graded periods: answered from (and stored in) the analysis cache.
    pub fn is_cacheable(&self) -> bool {
        self.num_segments == defaults::NUM_SEGMENTS
            && self.decay_factor == defaults::DECAY_FACTOR
            && self.start_date.is_none()
            && self.end_date.is_none()
            && CACHED_RETURN_PERIODS.contains(&self.return_period)
    }
}

/// Why an analysis could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// Unknown or inactive ticker.
    #[error("{0}")]
    NotFound(String),
    /// Fewer than [`MIN_ROWS`] rows in the window.
    #[error("{0}")]
    InsufficientData(String),
    /// The engine refused the input.
    #[error("{0}")]
    Invalid(String),
    /// The plugin trapped, ran out of time or memory.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Anything else (a lost worker thread, a cache body that won't parse).
    #[error("{0}")]
    Internal(String),
}

/// `current_state` of the response.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurrentStateBody {
    pub price: f64,
    pub drawdown: f64,
    pub segment: u32,
    pub expected_return: f64,
    pub prediction_error: f64,
    pub median_return: f64,
    pub median_error: f64,
    pub best_method: String,
    pub best_error: f64,
    pub insufficient_data: bool,
    pub confirmed_count: u32,
}

/// `signals`: the six signal fields of the current state.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signals {
    pub expected_return: f64,
    pub prediction_error: f64,
    pub median_return: f64,
    pub median_error: f64,
    pub best_method: String,
    pub best_error: f64,
}

/// `time_series`: dense parallel arrays aligned by index.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeSeriesBody {
    pub dates: Vec<NaiveDate>,
    pub prices: Vec<f64>,
    pub drawdowns: Vec<f64>,
    pub expected_returns: Vec<f64>,
    pub prediction_errors: Vec<Option<f64>>,
    pub prediction_error_cumavg: Vec<Option<f64>>,
    pub actual_returns: Vec<Option<f64>>,
    pub median_returns: Vec<f64>,
    pub median_errors: Vec<Option<f64>>,
    pub median_error_cumavg: Vec<Option<f64>>,
    pub projected_prices: Vec<Option<f64>>,
}

/// One row of `segments`.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentBody {
    pub segment_idx: u32,
    pub lower_bound: f64,
    pub upper_bound: f64,
    pub count: u32,
    pub expected_return: Option<f64>,
    pub avg_return: Option<f64>,
    pub median_return: Option<f64>,
    pub static_median_return: Option<f64>,
    pub max_loss: Option<f64>,
    pub win_rate: Option<f64>,
}

/// `return_distribution`.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DistributionBody {
    pub bins: Vec<f64>,
    pub counts: Vec<u32>,
}

/// One `scatter_data` point.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScatterBody {
    pub drawdown: f64,
    pub future_return: f64,
    pub segment: u32,
}

/// One value of `segment_paths`.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentPathsBody {
    pub paths: Vec<Vec<f64>>,
    pub p10: Vec<f64>,
    pub p25: Vec<f64>,
    pub p50: Vec<f64>,
    pub p75: Vec<f64>,
    pub p90: Vec<f64>,
    pub num_paths_total: u32,
}

/// `metadata`: the spec's fields plus metric, engine_version, data_source,
/// periods_per_year (DESIGN §4) and the window actually analysed.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalysisMetadata {
    pub return_period: u32,
    pub num_segments: u32,
    pub decay_factor: f64,
    pub calculated_at: DateTime<Utc>,
    pub from_cache: bool,
    pub data_points: u32,
    pub asset_id: i64,
    pub metric: Metric,
    pub engine_version: String,
    pub data_source: DataSource,
    pub periods_per_year: u32,
    pub start_date: NaiveDate,
    pub end_date: NaiveDate,
}

/// The spec's AnalysisResponse.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalysisResponse {
    pub ticker: String,
    pub name: String,
    pub category: Category,
    pub current_state: CurrentStateBody,
    pub signals: Signals,
    pub time_series: TimeSeriesBody,
    pub segments: Vec<SegmentBody>,
    pub return_distribution: DistributionBody,
    pub scatter_data: Vec<ScatterBody>,
    pub segment_paths: BTreeMap<String, SegmentPathsBody>,
    pub metadata: AnalysisMetadata,
    /// The engine's typical yearly drawdown; consumed by the verdict.
    #[serde(skip)]
    pub typical_max_drawdown: Option<f64>,
}

fn method_name(m: seg::Method) -> String {
    match m {
        seg::Method::Ema => "ema".into(),
        seg::Method::Median => "median".into(),
    }
}

impl From<&seg::CurrentState> for CurrentStateBody {
    fn from(c: &seg::CurrentState) -> Self {
        CurrentStateBody {
            price: c.price,
            drawdown: c.drawdown,
            segment: c.segment,
            expected_return: c.expected_return,
            prediction_error: c.prediction_error,
            median_return: c.median_return,
            median_error: c.median_error,
            best_method: method_name(c.best_method),
            best_error: c.best_error,
            insufficient_data: c.insufficient_data,
            confirmed_count: c.confirmed_count,
        }
    }
}

impl From<&seg::CurrentState> for Signals {
    fn from(c: &seg::CurrentState) -> Self {
        Signals {
            expected_return: c.expected_return,
            prediction_error: c.prediction_error,
            median_return: c.median_return,
            median_error: c.median_error,
            best_method: method_name(c.best_method),
            best_error: c.best_error,
        }
    }
}

impl From<&seg::SegmentStats> for SegmentBody {
    fn from(g: &seg::SegmentStats) -> Self {
        SegmentBody {
            segment_idx: g.segment_idx,
            lower_bound: g.lower_bound,
            upper_bound: g.upper_bound,
            count: g.count,
            expected_return: g.expected_return,
            avg_return: g.avg_return,
            median_return: g.median_return,
            static_median_return: g.static_median_return,
            max_loss: g.max_loss,
            win_rate: g.win_rate,
        }
    }
}

/// Shapes the component's answer into the wire response.
fn shape(
    asset: &Asset,
    window: &PriceSeries,
    q: &AnalysisQuery,
    a: seg::Analysis,
    engine_version: &str,
) -> AnalysisResponse {
    let s = a.series;
    AnalysisResponse {
        ticker: asset.ticker.clone(),
        name: asset.name.clone(),
        category: asset.category,
        signals: Signals::from(&a.current),
        current_state: CurrentStateBody::from(&a.current),
        time_series: TimeSeriesBody {
            dates: window.dates.iter().map(|&d| from_days(d)).collect(),
            prices: window.closes.clone(),
            drawdowns: s.drawdowns,
            expected_returns: s.expected_returns,
            prediction_errors: s.prediction_errors,
            prediction_error_cumavg: s.prediction_error_cumavg,
            actual_returns: s.actual_returns,
            median_returns: s.median_returns,
            median_errors: s.median_errors,
            median_error_cumavg: s.median_error_cumavg,
            projected_prices: s.projected_prices,
        },
        segments: a.segments.iter().map(SegmentBody::from).collect(),
        return_distribution: DistributionBody {
            bins: a.distribution.bins,
            counts: a.distribution.counts,
        },
        scatter_data: a
            .scatter
            .into_iter()
            .map(|p| ScatterBody {
                drawdown: p.drawdown,
                future_return: p.future_return,
                segment: p.segment,
            })
            .collect(),
        segment_paths: a
            .paths
            .into_iter()
            .map(|p| {
                (
                    p.segment.to_string(),
                    SegmentPathsBody {
                        paths: p.paths,
                        p10: p.p10,
                        p25: p.p25,
                        p50: p.p50,
                        p75: p.p75,
                        p90: p.p90,
                        num_paths_total: p.num_paths_total,
                    },
                )
            })
            .collect(),
        metadata: AnalysisMetadata {
            return_period: q.return_period,
            num_segments: q.num_segments,
            decay_factor: q.decay_factor,
            calculated_at: Utc::now(),
            from_cache: false,
            data_points: window.len() as u32,
            asset_id: asset.id,
            metric: q.metric,
            engine_version: engine_version.to_string(),
            data_source: asset.data_source,
            periods_per_year: a.periods_per_year,
            start_date: from_days(window.dates[0]),
            end_date: from_days(*window.dates.last().expect("non-empty window")),
        },
        typical_max_drawdown: a.typical_max_drawdown,
    }
}

/// Cache key: asset, its data version, the engine that answers, parameters.
pub fn cache_key(asset: &Asset, engine: &str, q: &AnalysisQuery) -> String {
    format!(
        "analysis/v1/{}/{}/{}/{}/{}/{}/{}",
        asset.id,
        asset.data_version,
        engine,
        q.metric.as_str(),
        q.return_period,
        q.num_segments,
        q.decay_factor
    )
}

/// Looks up an active asset by ticker (inactive ones are unknown).
pub async fn active_asset(db: &dyn Database, ticker: &str) -> Result<Asset, AnalysisError> {
    match db.asset_by_ticker(ticker).await? {
        Some(a) if a.is_active => Ok(a),
        _ => Err(AnalysisError::NotFound(format!(
            "unknown ticker '{ticker}'"
        ))),
    }
}

/// The analysis service: reads assets and series from the store, caches
/// answers there, and runs the active segmentation engine.
#[derive(Clone)]
pub struct AnalysisService {
    db: Arc<dyn Database>,
    plugins: Arc<Plugins>,
}

impl AnalysisService {
    /// A service over `db` answering with the active plugins of `plugins`.
    pub fn new(db: Arc<dyn Database>, plugins: Arc<Plugins>) -> Self {
        AnalysisService { db, plugins }
    }

    /// Answers an analysis: from the cache for default parameters when present,
    /// otherwise computed by the active segmentation component (and cached when
    /// the parameters are cacheable).
    pub async fn analyse(
        &self,
        ticker: &str,
        q: &AnalysisQuery,
    ) -> Result<AnalysisResponse, AnalysisError> {
        let asset = active_asset(self.db.as_ref(), ticker).await?;
        let plugin = self.plugins.segmentation();
        let engine_label = plugin.info().label();
        let key = q
            .is_cacheable()
            .then(|| cache_key(&asset, &engine_label, q));
        if let Some(key) = &key {
            if let Some(body) = self.db.cached_analysis(key).await? {
                let mut cached: AnalysisResponse = serde_json::from_str(&body).map_err(|e| {
                    AnalysisError::Internal(format!("cached analysis {key} does not parse: {e}"))
                })?;
                cached.metadata.from_cache = true;
                return Ok(cached);
            }
        }

        let history = self.db.load_series(asset.id).await?.unwrap_or_default();
        let window = history.window(q.start_date, q.end_date);
        if window.len() < MIN_ROWS {
            return Err(AnalysisError::InsufficientData(format!(
                "{} has {} price rows in the requested window; at least {MIN_ROWS} are needed",
                asset.ticker,
                window.len()
            )));
        }
        // The whole history's calendar, so narrowing the window never changes
        // the annualisation.
        let params = q.engine_params(history.periods_per_year());
        let permit = self.plugins.runtime().acquire().await;
        let query = *q;
        let (response, body) = tokio::task::spawn_blocking(move || {
            let answer = plugin.analyse(&permit, &window, params)?;
            let analysis = answer.map_err(|e| match e {
                EngineError::InsufficientData(rows) => AnalysisError::InsufficientData(format!(
                "{} has {rows} price rows in the requested window; at least {MIN_ROWS} are needed",
                asset.ticker
            )),
                EngineError::InvalidInput(m) => AnalysisError::Invalid(m),
            })?;
            let response = shape(&asset, &window, &query, analysis, &plugin.info().version);
            let body = match query.is_cacheable() {
                true => Some(
                    serde_json::to_string(&response)
                        .map_err(|e| AnalysisError::Internal(format!("serialise analysis: {e}")))?,
                ),
                false => None,
            };
            Ok::<_, AnalysisError>((response, body))
        })
        .await
        .map_err(|e| AnalysisError::Internal(format!("analysis worker failed: {e}")))??;

        if let (Some(key), Some(body)) = (key, body) {
            self.db
                .put_analysis(&key, response.metadata.asset_id, &body)
                .await?;
        }
        Ok(response)
    }

    /// Shadow run (issue 6): with probability `sample`, computes the same
    /// analysis with the active engine and the candidate off the request path
    /// and records how they differ. The candidate's answer is never returned.
    pub fn maybe_shadow(&self, ticker: &str, q: &AnalysisQuery) {
        let Some((candidate, sample)) = self.plugins.shadow_segmentation() else {
            return;
        };
        if rand::random::<f64>() >= sample {
            return;
        }
        let (service, ticker, q) = (self.clone(), ticker.to_string(), *q);
        tokio::spawn(async move {
            if let Err(e) = service.shadow_compare(&ticker, &q, candidate).await {
                tracing::warn!(error = %e, ticker, "shadow comparison skipped");
            }
        });
    }

    async fn shadow_compare(
        &self,
        ticker: &str,
        q: &AnalysisQuery,
        candidate: std::sync::Arc<forecast_plugins::SegmentationPlugin>,
    ) -> Result<(), AnalysisError> {
        let asset = active_asset(self.db.as_ref(), ticker).await?;
        let active = self.plugins.segmentation();
        let history = self.db.load_series(asset.id).await?.unwrap_or_default();
        let window = history.window(q.start_date, q.end_date);
        if window.len() < MIN_ROWS {
            return Ok(());
        }
        let params = q.engine_params(history.periods_per_year());
        let permits = self.plugins.runtime().acquire_many(2).await;
        let query = *q;
        let (active_label, candidate_label) = (active.info().label(), candidate.info().label());
        let sample = tokio::task::spawn_blocking(move || {
            let timed = |p: &forecast_plugins::SegmentationPlugin, permit| {
                let started = std::time::Instant::now();
                let answer = p.analyse(permit, &window, params);
                (answer, started.elapsed().as_secs_f64() * 1_000.0)
            };
            // One permit each (a concurrency bound of 1 gives only one).
            let (a, active_ms) = timed(&active, &permits[0]);
            let (c, candidate_ms) = timed(&candidate, &permits[permits.len() - 1]);
            let shaped =
                |r: Result<Result<seg::Analysis, EngineError>, forecast_plugins::PluginError>| {
                    match r {
                        Ok(Ok(analysis)) => {
                            let mut v =
                                serde_json::to_value(shape(&asset, &window, &query, analysis, ""))
                                    .map_err(|e| e.to_string())?;
                            // Who answered and when differ by design.
                            v.as_object_mut().map(|o| o.remove("metadata"));
                            Ok(v)
                        }
                        Ok(Err(e)) => Err(format!("engine error: {e:?}")),
                        Err(e) => Err(e.to_string()),
                    }
                };
            let (a, c) = (shaped(a), shaped(c));
            let (identical, diffs, error) = match (&a, &c) {
                (Ok(a), Ok(c)) => {
                    let d = crate::registry::json_differences(a, c);
                    (d.is_empty(), d, None)
                }
                (Err(ea), Err(ec)) if ea == ec => (true, Default::default(), None),
                (_, Err(ec)) => (false, Default::default(), Some(ec.clone())),
                (Err(_), Ok(_)) => (false, Default::default(), None),
            };
            forecast_store::ShadowSample {
                kind: "segmentation".into(),
                active: active_label,
                candidate: candidate_label,
                identical,
                active_ms,
                candidate_ms,
                error,
                // JSON has no infinity: structural changes are recorded as 1e308.
                diffs: serde_json::to_string(
                    &diffs
                        .into_iter()
                        .map(|(k, v)| (k, if v.is_finite() { v } else { f64::MAX }))
                        .collect::<std::collections::BTreeMap<_, _>>(),
                )
                .unwrap_or_else(|_| "{}".into()),
                at: chrono::Utc::now().timestamp(),
            }
        })
        .await
        .map_err(|e| AnalysisError::Internal(format!("shadow worker failed: {e}")))?;
        self.db.record_shadow_sample(&sample).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> RawAnalysisQuery {
        let query = pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&");
        serde_urlencoded_from(&query)
    }

    fn serde_urlencoded_from(q: &str) -> RawAnalysisQuery {
        let uri: axum::http::Uri = format!("/x?{q}").parse().unwrap();
        axum::extract::Query::<RawAnalysisQuery>::try_from_uri(&uri)
            .unwrap()
            .0
    }

    #[test]
    fn defaults_are_the_spec_defaults_and_cacheable() {
        let q = raw(&[]).validate().unwrap();
        assert_eq!(q, AnalysisQuery::default());
        assert!(q.is_cacheable());
        let q = raw(&[("return_period", "30"), ("metric", "sortino")])
            .validate()
            .unwrap();
        assert!(q.is_cacheable());
        assert!(!raw(&[("return_period", "31")])
            .validate()
            .unwrap()
            .is_cacheable());
        assert!(!raw(&[("end_date", "2020-01-01")])
            .validate()
            .unwrap()
            .is_cacheable());
    }

    #[test]
    fn every_bound_is_enforced_and_named() {
        let cases = [
            ("return_period", "6", "between 7 and 365"),
            ("return_period", "366", "between 7 and 365"),
            ("return_period", "abc", "return_period"),
            ("num_segments", "9", "between 10 and 50"),
            ("num_segments", "51", "between 10 and 50"),
            ("decay_factor", "0.79", "between 0.80 and 0.99"),
            ("decay_factor", "0.995", "between 0.80 and 0.99"),
            ("decay_factor", "NaN", "decay_factor"),
            ("metric", "alpha", "metric must be one of"),
            ("start_date", "2020-13-01", "start_date"),
            ("end_date", "yesterday", "end_date"),
        ];
        for (k, v, needle) in cases {
            let err = raw(&[(k, v)]).validate().unwrap_err();
            assert!(
                err.contains(needle) && err.contains(k.split('_').next().unwrap()),
                "{k}={v}: {err}"
            );
        }
        for (k, v) in [
            ("return_period", "7"),
            ("return_period", "365"),
            ("num_segments", "10"),
            ("num_segments", "50"),
            ("decay_factor", "0.8"),
            ("decay_factor", "0.99"),
        ] {
            assert!(
                raw(&[(k, v)]).validate().is_ok(),
                "{k}={v} is inside the bounds"
            );
        }
        let err = raw(&[("start_date", "2020-02-01"), ("end_date", "2020-01-01")])
            .validate()
            .unwrap_err();
        assert!(err.contains("after end_date"));
    }
}
