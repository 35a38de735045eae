//! The built-in `longshort` strategy (DESIGN.md §6), Long/Short: at each
//! rebalance date, `+0.5 / top_n` in each of the `top_n` assets with the
//! highest median prediction and `-0.5 / top_n` in each of the `top_n`
//! with the lowest, so the book is market-neutral with a gross exposure
//! of 1. It needs `2 · top_n` assets: `start` refuses a smaller universe,
//! and at a date with fewer than `2 · top_n` tradeable assets it holds cash.

use forecast_sdk::prelude::*;

/// The strategy of one run.
#[derive(Debug)]
pub struct LongShort {
    top_n: u32,
}

impl Strategy for LongShort {
    const NAME: &'static str = "longshort";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str =
        "Long/Short: long the top_n and short the bottom top_n assets by median prediction, half the equity each side.";

    fn start(universe: &[AssetMeta], params: &RunParams) -> Result<Self, ParamError> {
        let needed = 2 * params.top_n as usize;
        if universe.len() < needed {
            return Err(ParamError::new(
                "top_n",
                format!(
                    "longshort needs 2·top_n = {needed} assets (top_n long and top_n short), \
                     the universe has {}",
                    universe.len()
                ),
            ));
        }
        Ok(LongShort {
            top_n: params.top_n,
        })
    }

    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        let n = self.top_n as usize;
        let ranked = rank_by(&ctx.assets, |a| a.median_return);
        if n == 0 || ranked.len() < 2 * n {
            return Ok(Vec::new());
        }
        let side = 0.5 / f64::from(self.top_n);
        let mut targets = weighted(ranked[..n].iter().copied(), side);
        targets.extend(weighted(ranked[ranked.len() - n..].iter().copied(), -side));
        Ok(targets)
    }
}

forecast_sdk::export_strategy!(LongShort);

#[cfg(test)]
mod tests {
    use forecast_sdk::testing::{asset_state, context};

    use super::*;

    fn universe(n: usize) -> Vec<AssetMeta> {
        (0..n)
            .map(|i| AssetMeta {
                ticker: format!("T{i}"),
                name: format!("Asset {i}"),
                category: "US Stocks".into(),
            })
            .collect()
    }

    fn params(top_n: u32) -> RunParams {
        RunParams {
            top_n,
            ..RunParams::default()
        }
    }

    fn with_signal(asset: u32, median_return: f64) -> AssetState {
        AssetState {
            median_return,
            ..asset_state(asset)
        }
    }

    #[test]
    fn long_the_top_short_the_bottom() {
        let mut s = LongShort::start(&universe(5), &params(2)).unwrap();
        let t = s
            .rebalance(&context(vec![
                with_signal(0, 0.03),
                with_signal(1, -0.02),
                with_signal(2, 0.10),
                with_signal(3, 0.01),
                with_signal(4, -0.05),
            ]))
            .unwrap();
        assert_eq!(
            t,
            vec![
                Target {
                    asset: 2,
                    weight: 0.25
                },
                Target {
                    asset: 0,
                    weight: 0.25
                },
                Target {
                    asset: 1,
                    weight: -0.25
                },
                Target {
                    asset: 4,
                    weight: -0.25
                },
            ]
        );
        let gross: f64 = t.iter().map(|t| t.weight.abs()).sum();
        assert!((gross - 1.0).abs() < 1e-12);
        let net: f64 = t.iter().map(|t| t.weight).sum();
        assert!(net.abs() < 1e-12);
    }

    #[test]
    fn the_sign_of_the_signal_does_not_matter() {
        let mut s = LongShort::start(&universe(2), &params(1)).unwrap();
        let t = s
            .rebalance(&context(vec![with_signal(0, 0.05), with_signal(1, 0.07)]))
            .unwrap();
        assert_eq!(
            t,
            vec![
                Target {
                    asset: 1,
                    weight: 0.5
                },
                Target {
                    asset: 0,
                    weight: -0.5
                },
            ]
        );
    }

    #[test]
    fn too_few_assets_refuse_or_hold_cash() {
        let e = LongShort::start(&universe(3), &params(2)).unwrap_err();
        assert_eq!(e.field, "top_n");
        assert!(e.message.contains("2·top_n = 4"), "{}", e.message);
        let mut s = LongShort::start(&universe(4), &params(2)).unwrap();
        let t = s
            .rebalance(&context(vec![
                with_signal(0, 0.01),
                with_signal(1, 0.02),
                with_signal(2, 0.03),
            ]))
            .unwrap();
        assert!(t.is_empty(), "3 tradeable assets < 2·top_n");
    }

    #[test]
    fn ties_go_to_the_lower_index_on_both_sides() {
        let mut s = LongShort::start(&universe(4), &params(1)).unwrap();
        let t = s
            .rebalance(&context(vec![
                with_signal(0, 0.0),
                with_signal(1, 0.0),
                with_signal(2, 0.0),
                with_signal(3, 0.0),
            ]))
            .unwrap();
        assert_eq!(
            t[0],
            Target {
                asset: 0,
                weight: 0.5
            }
        );
        assert_eq!(
            t[1],
            Target {
                asset: 3,
                weight: -0.5
            }
        );
    }
}
