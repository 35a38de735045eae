//! The evidence behind a bucket's figures on the wire (issue 27;
//! docs/METHODOLOGY.md): the engine's `evidence` answer shaped into
//! `segments[].evidence`, `outcome_quantiles` and `current_state.evidence`,
//! and the rule that calls evidence thin.

use forecast_api::analysis::{
    CurrentStateBody, Quantiles, SegmentBody, SegmentEvidenceBody, StateEvidenceBody,
};
use forecast_domain::series::PriceSeries;
use forecast_plugins::segmentation::{
    AnalysisParams, EvidenceReport, EvidenceRequest, SegmentEvidence,
};

use crate::error::Error;

/// The engine's evidence of `segments` (empty: every bucket) of one
/// analysis, when it has an `evidence` interface (`None` otherwise: an
/// engine built before WIT 1.7.0 is served without it). Blocking.
pub(crate) fn bucket_evidence(
    session: &mut forecast_plugins::SegmentationSession,
    permit: &forecast_plugins::Permit,
    window: &PriceSeries,
    params: AnalysisParams,
    segments: Vec<u32>,
) -> Result<Option<EvidenceReport>, Error> {
    if !session.plugin().has_evidence() {
        return Ok(None);
    }
    let request = EvidenceRequest { params, segments };
    let answers = session.analyse_evidence(permit, window, &[request])?;
    only_answer(answers, "evidence").map(Some)
}

/// The one answer of an engine call made with one parameter set: an
/// internal error naming `what` when it failed or is missing.
pub(crate) fn only_answer<T, E: std::fmt::Debug>(
    mut answers: Vec<Result<T, E>>,
    what: &str,
) -> Result<T, Error> {
    match answers.pop() {
        Some(Ok(answer)) => Ok(answer),
        Some(Err(e)) => Err(Error::Internal(format!("engine {what} failed: {e:?}"))),
        None => Err(Error::Internal(format!("the engine answered no {what}"))),
    }
}

/// Fewer independent episodes than this in the current bucket is thin
/// evidence.
pub const MIN_EPISODES: u32 = 10;

/// `segments[].evidence` of one bucket.
fn segment_evidence_body(e: &SegmentEvidence) -> SegmentEvidenceBody {
    SegmentEvidenceBody {
        episodes: e.episodes,
        median_return_ci: e.median_return_ci.map(|(lo, hi)| [lo, hi]),
        fell_further: e.fell_further,
        recovery_days_median: e.recovery_days_median,
        recovered: e.recovered,
        unrecovered: e.unrecovered,
    }
}

/// The engine's five quantiles, when it sent five.
fn quantiles(q: &[f64]) -> Option<Quantiles> {
    match *q {
        [p10, p25, p50, p75, p90] => Some(Quantiles {
            p10,
            p25,
            p50,
            p75,
            p90,
        }),
        _ => None,
    }
}

/// Sets `evidence` (and `outcome_quantiles` where still empty) of every
/// segment the report covers.
pub(crate) fn fill_segments(segments: &mut [SegmentBody], report: &EvidenceReport) {
    for e in &report.segments {
        if let Some(body) = segments.get_mut(e.segment_idx as usize) {
            fill_segment(body, e);
        }
    }
}

/// Sets one segment's `evidence` and, where still empty, its quantiles.
pub(crate) fn fill_segment(body: &mut SegmentBody, e: &SegmentEvidence) {
    body.evidence = Some(segment_evidence_body(e));
    if body.outcome_quantiles.is_none() {
        body.outcome_quantiles = quantiles(&e.quantiles);
    }
}

/// `current_state.evidence` from the current bucket's evidence.
pub(crate) fn fill_state(
    state: &mut CurrentStateBody,
    report: &EvidenceReport,
    median: Option<f64>,
) {
    let Some(e) = report
        .segments
        .iter()
        .find(|e| e.segment_idx == state.segment)
    else {
        return;
    };
    state.evidence = Some(state_evidence(e, report.unconditional_median, median));
}

/// Whether the evidence of the current bucket `e` is thin, and why.
/// `median` is the bucket's median outcome (its `static_median_return`).
pub fn state_evidence(
    e: &SegmentEvidence,
    unconditional: Option<f64>,
    median: Option<f64>,
) -> StateEvidenceBody {
    let mut reasons = Vec::new();
    if e.episodes < MIN_EPISODES {
        reasons.push(format!(
            "only {} independent episode{} in this drawdown bucket (fewer than {MIN_EPISODES})",
            e.episodes,
            if e.episodes == 1 { "" } else { "s" }
        ));
    }
    if let (Some((lo, hi)), Some(u)) = (e.median_return_ci, unconditional) {
        if lo <= u && u <= hi {
            reasons.push(format!(
                "the 90 % interval of the bucket's median ({} to {}{}) contains the asset's \
                 median outcome from any drawdown ({})",
                pct(lo),
                pct(hi),
                median
                    .map(|m| format!(", median {}", pct(m)))
                    .unwrap_or_default(),
                pct(u)
            ));
        }
    }
    StateEvidenceBody {
        thin: !reasons.is_empty(),
        reasons,
        episodes: e.episodes,
        unconditional_median_return: unconditional,
    }
}

/// A fraction as a signed percentage with one decimal.
fn pct(x: f64) -> String {
    format!("{:+.1} %", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(episodes: u32, ci: Option<(f64, f64)>) -> SegmentEvidence {
        SegmentEvidence {
            segment_idx: 3,
            episodes,
            quantiles: vec![-0.1, 0.0, 0.05, 0.1, 0.2],
            median_return_ci: ci,
            fell_further: Some(0.25),
            recovery_days_median: Some(40.0),
            recovered: episodes,
            unrecovered: 0,
        }
    }

    #[test]
    fn thin_when_few_episodes_or_the_interval_holds_the_unconditional_median() {
        let strong = state_evidence(&evidence(12, Some((0.03, 0.08))), Some(0.01), Some(0.05));
        assert!(!strong.thin && strong.reasons.is_empty());
        let few = state_evidence(&evidence(9, Some((0.03, 0.08))), Some(0.01), Some(0.05));
        assert!(few.thin);
        assert_eq!(few.reasons.len(), 1);
        assert!(few.reasons[0].contains("only 9 independent episodes"));
        let wide = state_evidence(&evidence(40, Some((-0.02, 0.08))), Some(0.01), Some(0.05));
        assert!(wide.thin);
        assert!(
            wide.reasons[0].contains("-2.0 % to +8.0 %"),
            "{:?}",
            wide.reasons
        );
        let both = state_evidence(&evidence(1, None), Some(0.01), None);
        assert_eq!(both.reasons.len(), 1, "no interval: the count says it");
        assert!(both.reasons[0].contains("only 1 independent episode in"));
    }

    #[test]
    fn quantiles_are_taken_only_when_complete() {
        assert_eq!(quantiles(&[]), None);
        assert_eq!(quantiles(&[1.0, 2.0]), None);
        assert_eq!(quantiles(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap().p50, 3.0);
    }
}
