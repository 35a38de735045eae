//! Dip buyer: an example strategy plugin written with `forecast-sdk`.
//!
//! At each rebalance date it buys the dips the engine believes in: assets
//! trading at least 10 % below their running peak (`drawdown <= -0.10`)
//! whose median prediction exceeds the median estimator's typical error
//! (`median_return > median_error`), i.e. a rebound larger than the
//! noise. It holds up to `top_n` of them at `1 / top_n` each, preferring
//! the largest margin `median_return - median_error`; the rest stays in
//! cash. A position is sold as soon as its asset no longer qualifies.
//!
//! Build: `cargo build --release --target wasm32-wasip2`, which writes
//! `dip_buyer.wasm` under `target/wasm32-wasip2/release/`.

use forecast_sdk::prelude::*;

/// How deep below its peak an asset must be to count as a dip.
pub const MIN_DRAWDOWN: f64 = -0.10;

/// The strategy of one run.
#[derive(Debug)]
pub struct DipBuyer {
    top_n: u32,
}

/// The margin by which `a`'s median prediction beats its error, when `a` is
/// a dip worth buying; `None` otherwise (no error measured yet included).
pub fn margin(a: &AssetState) -> Option<f64> {
    let error = a.median_error?;
    let margin = a.median_return - error;
    (a.drawdown <= MIN_DRAWDOWN && margin > 0.0).then_some(margin)
}

impl Strategy for DipBuyer {
    const NAME: &'static str = "dip-buyer";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str =
        "Buys up to top_n assets at least 10 % below their peak whose median prediction beats its error.";

    fn start(universe: &[AssetMeta], params: &RunParams) -> Result<Self, ParamError> {
        log::debug(&format!(
            "dip-buyer: {} assets, up to {} positions",
            universe.len(),
            params.top_n
        ));
        Ok(DipBuyer {
            top_n: params.top_n,
        })
    }

    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        let dips = rank_by(&ctx.assets, |a| margin(a).unwrap_or(f64::NAN));
        Ok(equal_weights(dips, self.top_n))
    }
}

forecast_sdk::export_strategy!(DipBuyer);

#[cfg(test)]
mod tests {
    use forecast_sdk::testing::{asset_state, context};

    use super::*;

    fn dip(asset: u32, drawdown: f64, median_return: f64, median_error: Option<f64>) -> AssetState {
        AssetState {
            drawdown,
            median_return,
            median_error,
            ..asset_state(asset)
        }
    }

    #[test]
    fn buys_deep_dips_whose_prediction_beats_the_error() {
        let params = RunParams {
            top_n: 2,
            ..RunParams::default()
        };
        let mut s = DipBuyer::start(&[], &params).unwrap();
        let t = s
            .rebalance(&context(vec![
                dip(0, -0.30, 0.08, Some(0.05)), // margin 0.03
                dip(1, -0.05, 0.20, Some(0.01)), // not deep enough
                dip(2, -0.12, 0.10, Some(0.02)), // margin 0.08
                dip(3, -0.40, 0.03, Some(0.05)), // prediction below the error
                dip(4, -0.20, 0.09, None),       // no error measured yet
                dip(5, -0.10, 0.04, Some(0.03)), // margin 0.01, third
            ]))
            .unwrap();
        assert_eq!(
            t,
            vec![
                Target {
                    asset: 2,
                    weight: 0.5
                },
                Target {
                    asset: 0,
                    weight: 0.5
                },
            ]
        );
    }
}
