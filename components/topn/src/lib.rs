//! The built-in `topn` strategy (DESIGN.md §6), Top-N Rotation: at each
//! rebalance date, equal weight `1 / top_n` in the `top_n` assets with the
//! highest median prediction, provided it is positive; the rest of the
//! equity stays in cash. Ties go to the lower asset index.

use forecast_sdk::prelude::*;

/// The strategy of one run.
#[derive(Debug)]
pub struct TopN {
    top_n: u32,
}

impl Strategy for TopN {
    const NAME: &'static str = "topn";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str =
        "Top-N Rotation: equal weight in the top_n assets by median prediction when it is positive, the rest in cash.";

    fn start(_universe: &[AssetMeta], params: &RunParams) -> Result<Self, ParamError> {
        Ok(TopN {
            top_n: params.top_n,
        })
    }

    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        // The best `top_n` (ranked assets with a positive median come
        // first, so keeping the positive among them equals taking the
        // first `top_n` positive ones).
        let top = top_by(&ctx.assets, |a| a.median_return, self.top_n as usize);
        let positive = top.into_iter().filter(|a| a.median_return > 0.0);
        Ok(equal_weights(positive, self.top_n))
    }
}

forecast_sdk::export_strategy!(TopN);

#[cfg(test)]
mod tests {
    use forecast_sdk::testing::{asset_state, context};

    use super::*;

    fn with_signal(asset: u32, median_return: f64) -> AssetState {
        AssetState {
            median_return,
            ..asset_state(asset)
        }
    }

    fn run(top_n: u32, assets: Vec<AssetState>) -> Vec<Target> {
        let params = RunParams {
            top_n,
            ..RunParams::default()
        };
        let mut s = TopN::start(&[], &params).unwrap();
        s.rebalance(&context(assets)).unwrap()
    }

    #[test]
    fn holds_the_best_positive_signals_at_equal_weight() {
        let targets = run(
            2,
            vec![
                with_signal(0, 0.01),
                with_signal(1, 0.05),
                with_signal(2, 0.03),
                with_signal(3, -0.10),
            ],
        );
        assert_eq!(
            targets,
            vec![
                Target {
                    asset: 1,
                    weight: 0.5
                },
                Target {
                    asset: 2,
                    weight: 0.5
                },
            ]
        );
    }

    #[test]
    fn non_positive_signals_leave_cash() {
        let targets = run(
            3,
            vec![
                with_signal(0, 0.02),
                with_signal(1, 0.0),
                with_signal(2, -0.01),
            ],
        );
        assert_eq!(targets.len(), 1);
        assert_eq!(targets[0].asset, 0);
        assert!(
            (targets[0].weight - 1.0 / 3.0).abs() < 1e-15,
            "1/top_n, not 1/held"
        );
        assert!(run(2, vec![with_signal(0, -0.02), with_signal(1, 0.0)]).is_empty());
        assert!(run(2, vec![]).is_empty());
    }

    #[test]
    fn ties_go_to_the_lower_index() {
        let targets = run(
            1,
            vec![
                with_signal(4, 0.02),
                with_signal(2, 0.02),
                with_signal(3, 0.01),
            ],
        );
        assert_eq!(
            targets,
            vec![Target {
                asset: 2,
                weight: 1.0
            }]
        );
    }
}
