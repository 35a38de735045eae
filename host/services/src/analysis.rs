//! The analysis service: validates parameters, loads the asset's window,
//! runs the active segmentation component off the async workers, shapes the
//! spec's AnalysisResponse, and caches default-parameter answers keyed by
//! everything that produced them.

use chrono::{NaiveDate, Utc};

use std::sync::Arc;

use tracing::Instrument as _;

use crate::active::Plugins;
pub use crate::error::Error;
use forecast_domain::series::{from_days, PriceSeries};
use forecast_domain::{Asset, Metric};
use forecast_plugins::segmentation::{self as seg, AnalysisParams, EngineError};
use forecast_store::{AssetStore, CacheStore, PluginRegistry};

pub use forecast_api::analysis::{
    AnalysisMetadata, AnalysisQuery, AnalysisResponse, CurrentStateBody, DistributionBody,
    ScatterBody, SegmentBody, SegmentPathsBody, Signals, TimeSeriesBody,
};
pub use forecast_domain::defaults::{GRADED_RETURN_PERIODS as CACHED_RETURN_PERIODS, MIN_ROWS};

/// The engine's metric for a domain [`Metric`].
pub(crate) fn wit_metric(m: Metric) -> seg::Metric {
    match m {
        Metric::Return => seg::Metric::TotalReturn,
        Metric::Sharpe => seg::Metric::Sharpe,
        Metric::Sortino => seg::Metric::Sortino,
    }
}

/// The engine's parameters for query parameters `q`; `periods_per_year`
/// comes from the asset's whole history, so a narrower window never changes
/// the annualisation.
pub fn engine_params(q: &AnalysisQuery, periods_per_year: u32) -> AnalysisParams {
    AnalysisParams {
        return_period: q.return_period,
        num_segments: q.num_segments,
        decay_factor: q.decay_factor,
        metric: wit_metric(q.metric),
        periods_per_year: Some(periods_per_year),
    }
}

fn method_name(m: seg::Method) -> String {
    match m {
        seg::Method::Ema => "ema".into(),
        seg::Method::Median => "median".into(),
    }
}

/// `current_state` of an engine state.
pub(crate) fn current_state_body(c: &seg::CurrentState) -> CurrentStateBody {
    {
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

/// `signals` of an engine state.
pub(crate) fn signals_body(c: &seg::CurrentState) -> Signals {
    {
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

/// One row of `segments`.
pub(crate) fn segment_body(g: &seg::SegmentStats) -> SegmentBody {
    {
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
        signals: signals_body(&a.current),
        current_state: current_state_body(&a.current),
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
        segments: a.segments.iter().map(segment_body).collect(),
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
            last_price_date: last_price_date(asset, window),
        },
        typical_max_drawdown: a.typical_max_drawdown,
    }
}

/// The date of the asset's last stored price, read with the asset (and its
/// data version); the window's last date if the row had none.
pub(crate) fn last_price_date(asset: &Asset, window: &PriceSeries) -> NaiveDate {
    asset
        .last_price_date
        .unwrap_or_else(|| from_days(*window.dates.last().expect("non-empty window")))
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
pub async fn active_asset(db: &dyn AssetStore, ticker: &str) -> Result<Asset, Error> {
    match db.asset_by_ticker(ticker).await? {
        Some(a) if a.is_active => Ok(a),
        _ => Err(Error::NotFound(format!(
            "unknown ticker '{}'",
            forecast_api::quote(ticker)
        ))),
    }
}

/// The analysis service: reads assets and series from the store, caches
/// answers there, and runs the active segmentation engine.
#[derive(Clone)]
pub struct AnalysisService {
    assets: Arc<dyn AssetStore>,
    cache: Arc<dyn CacheStore>,
    /// Where shadow comparisons are recorded.
    registry: Arc<dyn PluginRegistry>,
    plugins: Arc<Plugins>,
}

impl AnalysisService {
    /// A service over the assets and series of `assets`, caching answers
    /// in `cache` and recording shadow samples in `registry`, answering with
    /// the active plugins of `plugins`.
    pub fn new(
        assets: Arc<dyn AssetStore>,
        cache: Arc<dyn CacheStore>,
        registry: Arc<dyn PluginRegistry>,
        plugins: Arc<Plugins>,
    ) -> Self {
        AnalysisService {
            assets,
            cache,
            registry,
            plugins,
        }
    }

    /// Answers an analysis: from the cache for default parameters when present,
    /// otherwise computed by the active segmentation component (and cached when
    /// the parameters are cacheable).
    #[tracing::instrument(name = "analysis", skip_all, fields(ticker = %ticker))]
    pub async fn analyse(
        &self,
        ticker: &str,
        q: &AnalysisQuery,
    ) -> Result<AnalysisResponse, Error> {
        let asset = active_asset(self.assets.as_ref(), ticker).await?;
        let plugin = self.plugins.segmentation();
        let engine_label = plugin.info().label();
        let key = q
            .is_cacheable()
            .then(|| cache_key(&asset, &engine_label, q));
        if let Some(key) = &key {
            if let Some(body) = self.cache.cached_analysis(key).await? {
                let mut cached: AnalysisResponse = serde_json::from_str(&body).map_err(|e| {
                    Error::Internal(format!("cached analysis {key} does not parse: {e}"))
                })?;
                cached.metadata.from_cache = true;
                if let Some(d) = asset.last_price_date {
                    cached.metadata.last_price_date = d;
                }
                crate::cache_lookup("analysis", true);
                return Ok(cached);
            }
            crate::cache_lookup("analysis", false);
        }

        let history = self.assets.load_series(asset.id).await?.unwrap_or_default();
        let window = history.window(q.start_date, q.end_date);
        if window.len() < MIN_ROWS {
            return Err(Error::InsufficientData(format!(
                "{} has {} price rows in the requested window; at least {MIN_ROWS} are needed",
                asset.ticker,
                window.len()
            )));
        }
        // The whole history's calendar, so narrowing the window never changes
        // the annualisation.
        let params = engine_params(q, history.periods_per_year());
        let permit = self.plugins.runtime().acquire().await;
        let query = *q;
        // The guest call's span nests under this one on the blocking thread.
        let span = tracing::Span::current();
        let (response, body) = tokio::task::spawn_blocking(move || {
            let _in = span.enter();
            let answer = plugin.analyse(&permit, &window, params)?;
            let analysis = answer.map_err(|e| match e {
                EngineError::InsufficientData(rows) => Error::InsufficientData(format!(
                "{} has {rows} price rows in the requested window; at least {MIN_ROWS} are needed",
                asset.ticker
            )),
                EngineError::InvalidInput(m) => Error::Invalid(m),
            })?;
            let response = shape(&asset, &window, &query, analysis, &plugin.info().version);
            let body = match query.is_cacheable() {
                true => Some(
                    serde_json::to_string(&response)
                        .map_err(|e| Error::Internal(format!("serialise analysis: {e}")))?,
                ),
                false => None,
            };
            Ok::<_, Error>((response, body))
        })
        .await
        .map_err(|e| Error::Internal(format!("analysis worker failed: {e}")))??;

        if let (Some(key), Some(body)) = (key, body) {
            self.cache
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
        let span = tracing::info_span!("shadow_compare", ticker = %ticker);
        tokio::spawn(
            async move {
                if let Err(e) = service.shadow_compare(&ticker, &q, candidate).await {
                    tracing::warn!(error = %e, ticker, "shadow comparison skipped");
                }
            }
            .instrument(span),
        );
    }

    async fn shadow_compare(
        &self,
        ticker: &str,
        q: &AnalysisQuery,
        candidate: std::sync::Arc<forecast_plugins::SegmentationPlugin>,
    ) -> Result<(), Error> {
        let asset = active_asset(self.assets.as_ref(), ticker).await?;
        let active = self.plugins.segmentation();
        let history = self.assets.load_series(asset.id).await?.unwrap_or_default();
        let window = history.window(q.start_date, q.end_date);
        if window.len() < MIN_ROWS {
            return Ok(());
        }
        let params = engine_params(q, history.periods_per_year());
        let permits = self.plugins.runtime().acquire_many(2).await;
        let query = *q;
        let (active_label, candidate_label) = (active.info().label(), candidate.info().label());
        let span = tracing::Span::current();
        let sample = tokio::task::spawn_blocking(move || {
            let _in = span.enter();
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
                kind: forecast_domain::PluginKind::Segmentation,
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
        .map_err(|e| Error::Internal(format!("shadow worker failed: {e}")))?;
        self.registry.record_shadow_sample(&sample).await?;
        Ok(())
    }
}
