//! The default `segmentation` component: converts between the WIT types and
//! the plain-Rust engine in `forecast-engine`, nothing else.

wit_bindgen::generate!({
    path: "../../wit",
    world: "segmentation",
});

use exports::forecast::plugins::engine::{
    Analysis, AnalysisParams, CurrentState, Distribution, EngineError, Guest, Method, ScatterPoint,
    SegmentPaths, SegmentStats, StateSummary, TimeSeries, WalkForwardSeries,
};
use exports::forecast::plugins::episodes::Guest as EpisodesGuest;
use exports::forecast::plugins::evidence::{
    EvidenceReport, EvidenceRequest, Guest as EvidenceGuest, SegmentEvidence, StateAt,
};
use exports::forecast::plugins::forecast_inputs::{Guest as InputsGuest, Inputs};
use forecast::plugins::types::{Metric, PriceSeries};
use forecast_engine as core;

struct Component;

impl EpisodesGuest for Component {
    fn episodes_at(
        series: PriceSeries,
        params: Vec<AnalysisParams>,
        ends: Vec<u32>,
    ) -> Vec<Result<Vec<u32>, EngineError>> {
        let params: Vec<core::Params> = params.iter().map(to_core).collect();
        core::episodes_at_many(&series.dates, &series.closes, &params, &ends)
            .into_iter()
            .map(|r| r.map_err(error_to_wit))
            .collect()
    }
}

impl InputsGuest for Component {
    fn inputs_at(
        series: PriceSeries,
        params: AnalysisParams,
        ends: Vec<u32>,
    ) -> Result<Inputs, EngineError> {
        core::forecast_inputs(&series.dates, &series.closes, &to_core(&params), &ends)
            .map(|i| Inputs {
                medians: i.medians,
                episodes: i.episodes,
                state: state_to_wit(i.state),
            })
            .map_err(error_to_wit)
    }
}

impl EvidenceGuest for Component {
    fn analyse_evidence(
        series: PriceSeries,
        requests: Vec<EvidenceRequest>,
    ) -> Vec<Result<EvidenceReport, EngineError>> {
        let requests: Vec<core::EvidenceRequest> = requests
            .into_iter()
            .map(|r| core::EvidenceRequest {
                params: to_core(&r.params),
                segments: r.segments,
            })
            .collect();
        core::evidence(&series.dates, &series.closes, &requests)
            .into_iter()
            .map(|r| r.map(evidence_to_wit).map_err(error_to_wit))
            .collect()
    }

    fn states_at(
        series: PriceSeries,
        params: Vec<AnalysisParams>,
        ends: Vec<u32>,
    ) -> Vec<Result<Vec<StateAt>, EngineError>> {
        let params: Vec<core::Params> = params.iter().map(to_core).collect();
        core::analyse_states_at_many(&series.dates, &series.closes, &params, &ends)
            .into_iter()
            .map(|r| {
                r.map(|states| states.into_iter().map(state_at_to_wit).collect())
                    .map_err(error_to_wit)
            })
            .collect()
    }
}

fn state_at_to_wit(s: core::StateAt) -> StateAt {
    StateAt {
        periods_per_year: s.periods_per_year,
        current: current_to_wit(s.current),
        active_segment: segment_to_wit(s.active_segment),
        typical_max_drawdown: s.typical_max_drawdown,
    }
}

fn evidence_to_wit(e: core::Evidence) -> EvidenceReport {
    EvidenceReport {
        segments: e
            .segments
            .into_iter()
            .map(|s| SegmentEvidence {
                segment_idx: s.segment_idx,
                episodes: s.episodes,
                quantiles: s.quantiles.map(Vec::from).unwrap_or_default(),
                median_return_ci: s.median_return_ci,
                fell_further: s.fell_further,
                recovery_days_median: s.recovery_days_median,
                recovered: s.recovered,
                unrecovered: s.unrecovered,
            })
            .collect(),
        unconditional_median: e.unconditional_median,
    }
}

impl Guest for Component {
    fn engine_version() -> String {
        if cfg!(feature = "altered") {
            format!("{}-altered", core::ENGINE_VERSION)
        } else {
            core::ENGINE_VERSION.to_string()
        }
    }

    fn analyse(series: PriceSeries, params: AnalysisParams) -> Result<Analysis, EngineError> {
        core::analyse(&series.dates, &series.closes, &to_core(&params))
            .map(into_wit)
            .map_err(error_to_wit)
    }

    fn analyse_state(
        series: PriceSeries,
        params: AnalysisParams,
    ) -> Result<StateSummary, EngineError> {
        core::analyse_state(&series.dates, &series.closes, &to_core(&params))
            .map(state_to_wit)
            .map_err(error_to_wit)
    }

    fn analyse_states(
        series: PriceSeries,
        params: Vec<AnalysisParams>,
    ) -> Vec<Result<StateSummary, EngineError>> {
        let params: Vec<core::Params> = params.iter().map(to_core).collect();
        core::analyse_states(&series.dates, &series.closes, &params)
            .into_iter()
            .map(|r| r.map(state_to_wit).map_err(error_to_wit))
            .collect()
    }

    fn walk_forward(
        series: PriceSeries,
        params: AnalysisParams,
    ) -> Result<WalkForwardSeries, EngineError> {
        core::walk_forward(&series.dates, &series.closes, &to_core(&params))
            .map(|w| WalkForwardSeries {
                periods_per_year: w.periods_per_year,
                drawdowns: w.drawdowns,
                segments: w.segments,
                expected_returns: w.expected_returns,
                median_returns: w.median_returns,
                prediction_error_cumavg: w.prediction_error_cumavg,
                median_error_cumavg: w.median_error_cumavg,
            })
            .map_err(error_to_wit)
    }
}

fn state_to_wit(s: core::StateSummary) -> StateSummary {
    StateSummary {
        periods_per_year: s.periods_per_year,
        current: current_to_wit(s.current),
        segments: s.segments.into_iter().map(segment_to_wit).collect(),
        typical_max_drawdown: s.typical_max_drawdown,
    }
}

fn to_core(params: &AnalysisParams) -> core::Params {
    core::Params {
        return_period: params.return_period,
        num_segments: params.num_segments,
        // The `altered` test fixture deliberately differs from the engine.
        decay_factor: if cfg!(feature = "altered") {
            (params.decay_factor - 0.01).max(0.80)
        } else {
            params.decay_factor
        },
        metric: match params.metric {
            Metric::TotalReturn => core::Metric::Return,
            Metric::Sharpe => core::Metric::Sharpe,
            Metric::Sortino => core::Metric::Sortino,
        },
        periods_per_year: params.periods_per_year,
    }
}

fn error_to_wit(e: core::EngineError) -> EngineError {
    match e {
        core::EngineError::InsufficientData { rows, .. } => EngineError::InsufficientData(rows),
        core::EngineError::InvalidInput(m) => EngineError::InvalidInput(m),
    }
}

fn current_to_wit(c: core::CurrentState) -> CurrentState {
    CurrentState {
        price: c.price,
        drawdown: c.drawdown,
        segment: c.segment,
        expected_return: c.expected_return,
        prediction_error: c.prediction_error,
        median_return: c.median_return,
        median_error: c.median_error,
        best_method: match c.best_method {
            core::Method::Ema => Method::Ema,
            core::Method::Median => Method::Median,
        },
        best_error: c.best_error,
        insufficient_data: c.insufficient_data,
        confirmed_count: c.confirmed_count,
    }
}

fn segment_to_wit(g: core::SegmentStats) -> SegmentStats {
    SegmentStats {
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

fn into_wit(a: core::Analysis) -> Analysis {
    let s = a.series;
    Analysis {
        periods_per_year: a.periods_per_year,
        current: current_to_wit(a.current),
        series: TimeSeries {
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
        segments: a.segments.into_iter().map(segment_to_wit).collect(),
        distribution: Distribution {
            bins: a.distribution.bins,
            counts: a.distribution.counts,
        },
        scatter: a
            .scatter
            .into_iter()
            .map(|p| ScatterPoint {
                drawdown: p.drawdown,
                future_return: p.future_return,
                segment: p.segment,
            })
            .collect(),
        paths: a
            .paths
            .into_iter()
            .map(|p| SegmentPaths {
                segment: p.segment,
                paths: p.paths,
                p10: p.p10,
                p25: p.p25,
                p50: p.p50,
                p75: p.p75,
                p90: p.p90,
                num_paths_total: p.num_paths_total,
            })
            .collect(),
        typical_max_drawdown: a.typical_max_drawdown,
    }
}

export!(Component);
