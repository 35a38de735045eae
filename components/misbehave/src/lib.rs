//! A deliberately misbehaving `segmentation` component, used only by the
//! host's sandbox tests. `return_period` selects the misbehaviour:
//!
//! * 7 — loops forever (the host's epoch deadline must stop it);
//! * 8 — allocates without bound (the host's memory cap must stop it);
//! * 9 — panics (a trap);
//! * 10 — calls the host's log import, then answers an `invalid-input` error;
//! * 13 — floods the host's log (5,000 lines of 3,000 characters that try to
//!   forge lines and terminal sequences), then answers an `invalid-input` error;
//! * anything else — answers "insufficient data" with the row count, so a
//!   test can tell a healthy call reached this component.

// An engine that exports `engine` only, as one built before WIT 1.7.0
// added `evidence` does: the host must load it and report no evidence.
wit_bindgen::generate!({
    inline: "
        package fixture:misbehave;
        world engine-only {
            import forecast:plugins/host-log@1.11.0;
            export forecast:plugins/engine@1.11.0;
        }
    ",
    path: "../../wit",
    world: "fixture:misbehave/engine-only",
    generate_all,
});

use exports::forecast::plugins::engine::{
    Analysis, AnalysisParams, EngineError, Guest, StateSummary, WalkForwardSeries,
};
use forecast::plugins::host_log::{log, Level};
use forecast::plugins::types::PriceSeries;

struct Component;

impl Guest for Component {
    fn engine_version() -> String {
        "0.0.1-misbehave".to_string()
    }

    fn analyse(series: PriceSeries, params: AnalysisParams) -> Result<Analysis, EngineError> {
        misbehave(&series, &params)
    }

    fn analyse_state(
        series: PriceSeries,
        params: AnalysisParams,
    ) -> Result<StateSummary, EngineError> {
        misbehave(&series, &params)
    }

    fn analyse_states(
        series: PriceSeries,
        params: Vec<AnalysisParams>,
    ) -> Vec<Result<StateSummary, EngineError>> {
        params.iter().map(|p| misbehave(&series, p)).collect()
    }

    fn walk_forward(
        series: PriceSeries,
        params: AnalysisParams,
    ) -> Result<WalkForwardSeries, EngineError> {
        misbehave(&series, &params)
    }
}

/// The misbehaviour selected by `return_period`; never returns a value.
fn misbehave<T>(series: &PriceSeries, params: &AnalysisParams) -> Result<T, EngineError> {
    match params.return_period {
        7 => {
            let mut x: u64 = 1;
            loop {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        8 => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(vec![1u8; 16 << 20]);
                std::hint::black_box(&hoard);
            }
        }
        9 => panic!("misbehave: deliberate panic"),
        10 => {
            log(Level::Warn, "misbehave: about to refuse");
            Err(EngineError::InvalidInput("misbehave refuses".into()))
        }
        13 => {
            // A flood: 5,000 lines of 3,000 characters, each trying to
            // forge a log line of its own and a terminal sequence.
            let line = format!(
                "{}\n2026-01-01T00:00:00Z  INFO forged\u{1b}[31m{}",
                "x".repeat(100),
                "x".repeat(2_860)
            );
            for _ in 0..5_000 {
                log(Level::Error, &line);
            }
            Err(EngineError::InvalidInput("misbehave flooded".into()))
        }
        _ => Err(EngineError::InsufficientData(series.closes.len() as u32)),
    }
}

export!(Component);
