//! The analysis service: validates parameters, loads the asset's window,
//! runs the active segmentation component off the async workers, shapes the
//! spec's AnalysisResponse, and caches default-parameter answers keyed by
//! everything that produced them.

use chrono::{DateTime, NaiveDate, Utc};

use std::sync::Arc;

use tracing::Instrument as _;

use crate::active::Plugins;
use crate::budget::{analysis_bytes, Work, WorkBudget};
pub use crate::error::Error;
use forecast_domain::series::{from_days, PriceSeries};
use forecast_domain::{Asset, Metric, SharedClock};
use forecast_plugins::segmentation::{self as seg, AnalysisParams, EngineError};
use forecast_store::{AssetStore, CacheStore, PluginRegistry};

pub use forecast_api::analysis::{
    AnalysisMetadata, AnalysisQuery, AnalysisResponse, CurrentStateBody, DistributionBody, Drawing,
    DrawnWindow, Quantiles, ScatterBody, SegmentBody, SegmentPathsBody, Signals, TimeSeriesBody,
};
pub use forecast_domain::defaults::{GRADED_RETURN_PERIODS as CACHED_RETURN_PERIODS, MIN_ROWS};

/// The engine's metric for a domain [`Metric`].
pub fn wit_metric(m: Metric) -> seg::Metric {
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
            // Filled from the engine's `evidence` when it has one.
            evidence: None,
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
            // Filled from the whole series by `shape`, and for a verdict
            // from the engine's `evidence`.
            outcome_quantiles: None,
            evidence: None,
        }
    }
}

/// Shapes the component's answer into the wire response, calculated at
/// `calculated_at`.
fn shape(
    asset: &Asset,
    window: &PriceSeries,
    q: &AnalysisQuery,
    a: seg::Analysis,
    evidence: Option<&seg::EvidenceReport>,
    engine_version: &str,
    calculated_at: DateTime<Utc>,
) -> AnalysisResponse {
    let s = a.series;
    let mut segments: Vec<SegmentBody> = a.segments.iter().map(segment_body).collect();
    fill_outcome_quantiles(&mut segments, &s.drawdowns, &s.actual_returns);
    let mut current_state = current_state_body(&a.current);
    if let Some(report) = evidence {
        crate::evidence::fill_segments(&mut segments, report);
        let median = segments
            .get(a.current.segment as usize)
            .and_then(|g| g.static_median_return);
        crate::evidence::fill_state(&mut current_state, report, median);
    }
    AnalysisResponse {
        ticker: asset.ticker.clone(),
        name: asset.name.clone(),
        category: asset.category,
        signals: signals_body(&a.current),
        current_state,
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
        segments,
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
            calculated_at,
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
            time_series_rows: window.len() as u32,
            max_points: None,
            drawn: None,
        },
        forecast: None,
        typical_max_drawdown: a.typical_max_drawdown,
    }
}

/// The bucket of drawdown `d` on the grid of `segments` (the final grid
/// of the analysis): bucket `i` covers (−(i+1)·w, −i·w], deeper than the
/// last goes to the last. Mirrors `Grid::segment` of the engine
/// (crates/engine), with `w` recovered exactly from bucket 0's lower
/// bound, which the engine writes as `−(1·w)`.
fn bucket_of(d: f64, width: f64, k: usize) -> usize {
    let x = -d / width;
    if x >= 1.0 {
        (x as usize).min(k - 1)
    } else {
        0
    }
}

/// The `q` quantile of sorted, non-empty `v` by linear interpolation
/// between order statistics (numpy's default), the median written as the
/// engine writes it (the mean of the two middle values for an even count),
/// so that `p50` is `static_median_return` to the bit.
fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    let n = v.len();
    if q == 0.5 {
        return if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
    }
    let pos = q * (n - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// The five quantiles of `ys` (`None` when empty); sorts it.
fn quantiles(ys: &mut [f64]) -> Option<Quantiles> {
    if ys.is_empty() {
        return None;
    }
    ys.sort_unstable_by(f64::total_cmp);
    let at = |q| quantile_sorted(ys, q);
    Some(Quantiles {
        p10: at(0.10),
        p25: at(0.25),
        p50: at(0.5),
        p75: at(0.75),
        p90: at(0.90),
    })
}

/// Sets each segment's `outcome_quantiles` from every confirmed outcome of
/// the series (`actual_returns[s] = Some(y)`), bucketed by the drawdown of
/// its start row `s` on the final grid.
fn fill_outcome_quantiles(
    segments: &mut [SegmentBody],
    drawdowns: &[f64],
    actual_returns: &[Option<f64>],
) {
    let k = segments.len();
    let Some(first) = segments.first() else {
        return;
    };
    let width = -first.lower_bound;
    if width.is_nan() || width <= 0.0 {
        return;
    }
    let mut ys: Vec<Vec<f64>> = vec![Vec::new(); k];
    for (&d, y) in drawdowns.iter().zip(actual_returns) {
        if let Some(y) = *y {
            ys[bucket_of(d, width, k)].push(y);
        }
    }
    for (segment, ys) in segments.iter_mut().zip(&mut ys) {
        segment.outcome_quantiles = quantiles(ys);
    }
}

/// The rows of an `n`-row series kept for drawing at most `max` of them
/// (`max` ≥ 5): every row when `n ≤ max`; else the first and last rows,
/// and from each of `(max − 2) / 3` equal buckets of the rows between,
/// those holding its lowest close, highest close and deepest drawdown
/// (the first of equals), ascending.
pub fn drawing_rows(closes: &[f64], drawdowns: &[f64], max: usize) -> Vec<usize> {
    let n = closes.len();
    if n <= max {
        return (0..n).collect();
    }
    let buckets = (max.max(5) - 2) / 3;
    let inner = n - 2;
    let mut rows = Vec::with_capacity(max);
    rows.push(0);
    for b in 0..buckets {
        let start = 1 + b * inner / buckets;
        let end = 1 + (b + 1) * inner / buckets;
        let depth = |i: usize| drawdowns.get(i).copied().unwrap_or(0.0);
        let (mut low, mut high, mut deep) = (start, start, start);
        for i in start..end {
            if closes[i] < closes[low] {
                low = i;
            }
            if closes[i] > closes[high] {
                high = i;
            }
            if depth(i) < depth(deep) {
                deep = i;
            }
        }
        let mut picked = [low, high, deep];
        picked.sort_unstable();
        for (j, &i) in picked.iter().enumerate() {
            if j == 0 || picked[j - 1] != i {
                rows.push(i);
            }
        }
    }
    rows.push(n - 1);
    rows
}

/// The elements of `v` at `rows`.
fn pick<T: Clone>(v: &[T], rows: &[usize]) -> Vec<T> {
    rows.iter().filter_map(|&i| v.get(i).cloned()).collect()
}

/// Readies an answer for drawing: keeps the rows of `time_series` inside
/// the drawing's date window (recorded in `metadata.drawn`), records
/// `max_points` in the metadata and, with it, thins every per-row array to
/// the same [`drawing_rows`]. Nothing else changes: every statistic was computed on
/// all rows, and `metadata.time_series_rows` keeps their count.
pub fn thin_for_drawing(response: &mut AnalysisResponse, drawing: Drawing) {
    response.metadata.max_points = drawing.max_points;
    let t = &mut response.time_series;
    if drawing.from.is_some() || drawing.to.is_some() {
        let lo = drawing
            .from
            .map_or(0, |f| t.dates.partition_point(|d| *d < f));
        let hi = drawing
            .to
            .map_or(t.dates.len(), |to| t.dates.partition_point(|d| *d <= to))
            .max(lo);
        let rows: Vec<usize> = (lo..hi).collect();
        select_rows(t, &rows);
        response.metadata.drawn = Some(DrawnWindow {
            from: drawing.from,
            to: drawing.to,
            rows: (hi - lo) as u32,
        });
    }
    let Some(max) = drawing.max_points else {
        return;
    };
    if t.dates.len() <= max as usize {
        return;
    }
    let rows = drawing_rows(&t.prices, &t.drawdowns, max as usize);
    select_rows(t, &rows);
}

/// Keeps `rows` (in order) of every per-row array of `t`.
fn select_rows(t: &mut TimeSeriesBody, rows: &[usize]) {
    t.dates = pick(&t.dates, rows);
    t.prices = pick(&t.prices, rows);
    t.drawdowns = pick(&t.drawdowns, rows);
    t.expected_returns = pick(&t.expected_returns, rows);
    t.prediction_errors = pick(&t.prediction_errors, rows);
    t.prediction_error_cumavg = pick(&t.prediction_error_cumavg, rows);
    t.actual_returns = pick(&t.actual_returns, rows);
    t.median_returns = pick(&t.median_returns, rows);
    t.median_errors = pick(&t.median_errors, rows);
    t.median_error_cumavg = pick(&t.median_error_cumavg, rows);
    t.projected_prices = pick(&t.projected_prices, rows);
}

/// The date of the asset's last stored price, read with the asset (and its
/// data version); the window's last date if the row had none.
pub(crate) fn last_price_date(asset: &Asset, window: &PriceSeries) -> NaiveDate {
    asset
        .last_price_date
        .unwrap_or_else(|| from_days(*window.dates.last().expect("non-empty window")))
}

/// Cache key: the body's format, asset, its data version, the engine that
/// answers, parameters. The format is bumped whenever the stored body
/// gains a field computed with it (v2: `segments[].outcome_quantiles` and
/// `metadata.time_series_rows`; v3: `segments[].evidence` and
/// `current_state.evidence`), so an older entry is never served.
pub fn cache_key(asset: &Asset, engine: &str, q: &AnalysisQuery) -> String {
    format!(
        "analysis/v3/{}/{}/{}/{}/{}/{}/{}",
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
    /// The server's budget for heavy work: every live analysis and shadow
    /// sample takes a ticket first.
    budget: WorkBudget,
    /// When an answer was calculated and a shadow sample taken.
    clock: SharedClock,
}

impl AnalysisService {
    /// A service over the assets and series of `assets`, caching answers
    /// in `cache` and recording shadow samples in `registry`, answering with
    /// the active plugins of `plugins` within `budget`, dating them by
    /// `clock`.
    pub fn new(
        assets: Arc<dyn AssetStore>,
        cache: Arc<dyn CacheStore>,
        registry: Arc<dyn PluginRegistry>,
        plugins: Arc<Plugins>,
        budget: WorkBudget,
        clock: SharedClock,
    ) -> Self {
        AnalysisService {
            assets,
            cache,
            registry,
            plugins,
            budget,
            clock,
        }
    }

    /// Answers an analysis: from the cache for default parameters when present,
    /// otherwise computed by the active segmentation component (and cached when
    /// the parameters are cacheable) once `client`'s job has a ticket of the
    /// heavy-work budget ([`Error::Busy`] otherwise, before any work).
    #[tracing::instrument(name = "analysis", skip_all, fields(ticker = %ticker))]
    pub async fn analyse(
        &self,
        ticker: &str,
        q: &AnalysisQuery,
        client: &str,
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
        // At most the last MAX_HISTORY_ROWS rows reach the engine, so no
        // stored history is too long to analyse (issue 25).
        let window = history
            .window(q.start_date, q.end_date)
            .last_rows(forecast_domain::defaults::MAX_HISTORY_ROWS);
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
        drop(history);
        let ticket = self
            .budget
            .admit(client, Work::Analysis, analysis_bytes(window.len()))
            .await?;
        let permit = self.plugins.runtime().acquire().await;
        let query = *q;
        // The guest call's span nests under this one on the blocking thread.
        let span = tracing::Span::current();
        let clock = self.clock.clone();
        let (response, body) = crate::budget::spawn_heavy(move || {
            let _in = span.enter();
            // Held until the work has stopped, even if the request is gone.
            let _ticket = ticket;
            let answer = plugin.analyse(&permit, &window, params)?;
            let analysis = answer.map_err(|e| match e {
                EngineError::InsufficientData(rows) => Error::InsufficientData(format!(
                "{} has {rows} price rows in the requested window; at least {MIN_ROWS} are needed",
                asset.ticker
            )),
                EngineError::InvalidInput(m) => Error::Invalid(m),
            })?;
            // Empty: every bucket.
            let evidence = crate::evidence::bucket_evidence(
                &mut plugin.session(),
                &permit,
                &window,
                params,
                Vec::new(),
            )?;
            let response = shape(
                &asset,
                &window,
                &query,
                analysis,
                evidence.as_ref(),
                &plugin.info().version,
                clock.now(),
            );
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
        // At most the last MAX_HISTORY_ROWS rows reach the engine, so no
        // stored history is too long to analyse (issue 25).
        let window = history
            .window(q.start_date, q.end_date)
            .last_rows(forecast_domain::defaults::MAX_HISTORY_ROWS);
        if window.len() < MIN_ROWS {
            return Ok(());
        }
        let params = engine_params(q, history.periods_per_year());
        // A sample is heavy work like any other: it waits its turn (off the
        // request path) and is skipped when the budget refuses it.
        let ticket = self
            .budget
            .admit("shadow", Work::Analysis, 2 * analysis_bytes(window.len()))
            .await?;
        let permits = self.plugins.runtime().acquire_many(2).await;
        let query = *q;
        let (active_label, candidate_label) = (active.info().label(), candidate.info().label());
        let span = tracing::Span::current();
        let clock = self.clock.clone();
        let sample = crate::budget::spawn_heavy(move || {
            let _in = span.enter();
            let _ticket = ticket;
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
                            let mut v = serde_json::to_value(shape(
                                &asset,
                                &window,
                                &query,
                                analysis,
                                None,
                                "",
                                clock.now(),
                            ))
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
                at: clock.timestamp(),
            }
        })
        .await
        .map_err(|e| Error::Internal(format!("shadow worker failed: {e}")))?;
        self.registry.record_shadow_sample(&sample).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_linearly_and_p50_is_the_median() {
        // numpy.percentile([1, 2, 3, 4], [10, 25, 50, 75, 90]).
        let q = quantiles(&mut [4.0, 1.0, 3.0, 2.0]).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(q.p10, 1.3) && close(q.p25, 1.75), "{q:?}");
        assert!(close(q.p75, 3.25) && close(q.p90, 3.7), "{q:?}");
        assert_eq!(q.p50, 2.5);
        let odd = quantiles(&mut [5.0, -1.0, 2.0]).unwrap();
        assert!(close(odd.p10, -0.4) && close(odd.p90, 4.4), "{odd:?}");
        assert_eq!(odd.p50, 2.0);
        assert_eq!(
            quantiles(&mut [0.25]).unwrap(),
            Quantiles {
                p10: 0.25,
                p25: 0.25,
                p50: 0.25,
                p75: 0.25,
                p90: 0.25
            }
        );
        assert_eq!(quantiles(&mut []), None);
        // The median as the engine writes it, (a + b) / 2, where
        // a + (b − a) / 2 rounds differently.
        let (a, b) = (0.1f64, 0.7f64);
        assert_ne!(a + (b - a) * 0.5, (a + b) / 2.0);
        assert_eq!(quantiles(&mut [b, a]).unwrap().p50, (a + b) / 2.0);
    }

    #[test]
    fn buckets_are_the_engines() {
        let w = 0.05;
        assert_eq!(bucket_of(0.0, w, 20), 0);
        assert_eq!(bucket_of(-0.05, w, 20), 1, "(−2w, −w] starts at −w");
        assert_eq!(bucket_of(-0.0499, w, 20), 0);
        assert_eq!(bucket_of(-0.12, w, 20), 2);
        assert_eq!(bucket_of(-5.0, w, 20), 19, "deeper than the last");
        assert_eq!(bucket_of(f64::NAN, w, 20), 0);
    }

    fn segment(i: u32, width: f64) -> SegmentBody {
        SegmentBody {
            segment_idx: i,
            lower_bound: -(f64::from(i + 1)) * width,
            upper_bound: -f64::from(i) * width,
            count: 0,
            expected_return: None,
            avg_return: None,
            median_return: None,
            static_median_return: None,
            max_loss: None,
            win_rate: None,
            outcome_quantiles: None,
            evidence: None,
        }
    }

    #[test]
    fn every_confirmed_outcome_counts_in_its_start_rows_bucket() {
        let mut segments: Vec<SegmentBody> = (0..3).map(|i| segment(i, 0.1)).collect();
        let drawdowns = [0.0, -0.05, -0.15, -0.5, -0.12, 0.0];
        let actual = [Some(0.1), Some(0.3), Some(-0.2), Some(0.4), None, None];
        fill_outcome_quantiles(&mut segments, &drawdowns, &actual);
        assert_eq!(segments[0].outcome_quantiles.unwrap().p50, 0.2);
        assert_eq!(segments[1].outcome_quantiles.unwrap().p90, -0.2);
        assert_eq!(segments[2].outcome_quantiles.unwrap().p10, 0.4);
        let mut empty: Vec<SegmentBody> = (0..3).map(|i| segment(i, 0.1)).collect();
        fill_outcome_quantiles(&mut empty, &drawdowns, &[None; 6]);
        assert!(empty.iter().all(|s| s.outcome_quantiles.is_none()));
    }

    #[test]
    fn drawing_rows_keep_the_ends_and_each_buckets_extremes() {
        let n = 10_000;
        // A wave with a spike, a dip and a crash in the middle.
        let mut closes: Vec<f64> = (0..n).map(|i| 100.0 + (i as f64 / 50.0).sin()).collect();
        closes[4_321] = 500.0;
        closes[7_777] = 1.0;
        let mut peak = f64::MIN;
        let drawdowns: Vec<f64> = closes
            .iter()
            .map(|&c| {
                peak = peak.max(c);
                c / peak - 1.0
            })
            .collect();
        for max in [100usize, 1_500, 9_999] {
            let rows = drawing_rows(&closes, &drawdowns, max);
            assert!(rows.len() <= max, "{} > {max}", rows.len());
            assert!(rows.len() >= max / 2, "{} rows for {max}", rows.len());
            assert_eq!((rows[0], *rows.last().unwrap()), (0, n - 1));
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "ascending, distinct");
            for extreme in [4_321, 7_777] {
                assert!(rows.contains(&extreme), "{extreme} kept for {max}");
            }
            let low = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
            let high = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let kept: Vec<f64> = rows.iter().map(|&i| closes[i]).collect();
            assert_eq!((low(&kept), high(&kept)), (low(&closes), high(&closes)));
            let deep: Vec<f64> = rows.iter().map(|&i| drawdowns[i]).collect();
            assert_eq!(low(&deep), low(&drawdowns));
        }
        assert_eq!(
            drawing_rows(&closes[..100], &drawdowns[..100], 100),
            (0..100).collect::<Vec<_>>()
        );
    }
}
