//! The built-in `portfolio` strategy: the portfolio the request's `weights`
//! describe. At every rebalance date it answers those weights for the
//! weighted assets tradeable that day (300 rows of history); a weighted
//! asset not yet tradeable keeps its share in cash until a later date. With
//! the schedule `never` the host calls it once, so the weights are bought
//! at the window's start and held (buy and hold).
//!
//! The decision is plain Rust ([`Weights`]), unit-tested natively; the
//! wasm export only converts the `weighted-strategy` world's records.

/// Most a set of weights may add up to (rounding slack on 1).
const MAX_GROSS: f64 = 1.0 + 1e-9;

/// The run's weights by universe index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Weights(Vec<(u32, f64)>);

impl Weights {
    /// Checks `weights`: each in (0, 1], each asset once, at most 1 in all.
    pub fn new(weights: Vec<(u32, f64)>) -> Result<Weights, String> {
        let mut seen = std::collections::BTreeSet::new();
        for &(asset, w) in &weights {
            if !(w.is_finite() && w > 0.0 && w <= 1.0) {
                return Err(format!("weight {w} of asset {asset} is not in (0, 1]"));
            }
            if !seen.insert(asset) {
                return Err(format!("asset {asset} is weighted twice"));
            }
        }
        let gross: f64 = weights.iter().map(|(_, w)| w).sum();
        if gross > MAX_GROSS {
            return Err(format!("the weights add up to {gross}, more than 1"));
        }
        Ok(Weights(weights))
    }

    /// Whether no asset is weighted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The targets at a date when the assets `tradeable` (universe indices,
    /// ascending) may trade: the weighted ones among them, in index order.
    pub fn targets(&self, tradeable: &[u32]) -> Vec<(u32, f64)> {
        let mut out: Vec<(u32, f64)> = self
            .0
            .iter()
            .copied()
            .filter(|(a, _)| tradeable.binary_search(a).is_ok())
            .collect();
        out.sort_by_key(|&(a, _)| a);
        out
    }
}

/// What `start` answers for a run without weights.
pub const NEEDS_WEIGHTS: &str = "the portfolio strategy needs weights: a share of equity per \
     ticker, e.g. {\"SPY\": 0.6, \"TLT\": 0.4}";

#[cfg(target_arch = "wasm32")]
mod component {
    use std::cell::RefCell;

    use super::{Weights, NEEDS_WEIGHTS};

    wit_bindgen::generate!({
        path: "../../wit",
        world: "weighted-strategy",
    });

    use exports::forecast::plugins::allocation::{
        Asset, Context, Guest, ParamError, RunParams, StrategyInfo, Target,
    };
    use exports::forecast::plugins::allocation_columns::{ColumnsContext, Guest as ColumnsGuest};
    use exports::forecast::plugins::allocation_weights::{AssetWeight, Guest as WeightsGuest};

    thread_local! {
        /// The run's weights (one instance serves one run).
        static WEIGHTS: RefCell<Weights> = RefCell::new(Weights::default());
    }

    struct Component;

    fn answer(tradeable: &[u32]) -> Vec<Target> {
        let mut sorted = tradeable.to_vec();
        sorted.sort_unstable();
        WEIGHTS
            .with(|w| w.borrow().targets(&sorted))
            .into_iter()
            .map(|(asset, weight)| Target { asset, weight })
            .collect()
    }

    impl WeightsGuest for Component {
        fn set_weights(weights: Vec<AssetWeight>) -> Result<(), ParamError> {
            let checked = Weights::new(weights.iter().map(|w| (w.asset, w.weight)).collect())
                .map_err(|message| ParamError {
                    field: "weights".into(),
                    message,
                })?;
            WEIGHTS.with(|w| *w.borrow_mut() = checked);
            Ok(())
        }
    }

    impl Guest for Component {
        fn info() -> StrategyInfo {
            StrategyInfo {
                name: "portfolio".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                description: "Your portfolio: the request's weights, traded back to at every \
                     rebalance date (bought once and held with rebalance never)."
                    .into(),
            }
        }

        fn start(_universe: Vec<Asset>, _params: RunParams) -> Result<(), ParamError> {
            if WEIGHTS.with(|w| w.borrow().is_empty()) {
                return Err(ParamError {
                    field: "weights".into(),
                    message: NEEDS_WEIGHTS.into(),
                });
            }
            Ok(())
        }

        fn rebalance(ctx: Context) -> Result<Vec<Target>, String> {
            let tradeable: Vec<u32> = ctx.assets.iter().map(|a| a.asset).collect();
            Ok(answer(&tradeable))
        }
    }

    impl ColumnsGuest for Component {
        fn rebalance_columns(ctx: ColumnsContext) -> Result<Vec<Target>, String> {
            Ok(answer(&ctx.assets.asset))
        }
    }

    export!(Component);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_the_weights_of_the_tradeable_assets_and_leaves_the_rest_in_cash() {
        let w = Weights::new(vec![(4, 0.3), (1, 0.5)]).unwrap();
        assert_eq!(w.targets(&[0, 1, 2, 4]), vec![(1, 0.5), (4, 0.3)]);
        assert_eq!(
            w.targets(&[0, 4]),
            vec![(4, 0.3)],
            "asset 1 not yet tradeable"
        );
        assert!(w.targets(&[]).is_empty());
    }

    #[test]
    fn refuses_weights_outside_the_contract() {
        assert!(Weights::new(vec![(0, 0.0)]).is_err());
        assert!(Weights::new(vec![(0, -0.2)]).is_err());
        assert!(Weights::new(vec![(0, f64::NAN)]).is_err());
        assert!(Weights::new(vec![(0, 0.6), (1, 0.5)]).is_err());
        assert!(Weights::new(vec![(0, 0.5), (0, 0.2)]).is_err());
        assert!(Weights::new(vec![(0, 0.6), (1, 0.4)]).is_ok());
        assert!(Weights::new(Vec::new()).unwrap().is_empty());
    }
}
