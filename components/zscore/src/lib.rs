//! The built-in `zscore` strategy (DESIGN.md §6), Z-Score Timing: buys an
//! asset whose drawdown is unusually deep for it and holds it until the
//! drawdown is back to normal.
//!
//! The host computes `AssetState::zscore`, the z-score of the drawdown over
//! the last `zscore_lookback` rows. An asset is entered at
//! `z <= -zscore_entry` and exited at `z >= -zscore_exit`; while its z-score
//! is undefined a held asset stays held. Each position weighs `1 / top_n`
//! and at most `top_n` are held: exits free their slots first, then the
//! candidates with the lowest z-score take the free ones (ties to the
//! lower asset index).

use std::collections::BTreeSet;

use forecast_sdk::prelude::*;

/// The strategy of one run: its thresholds and the assets it holds.
#[derive(Debug)]
pub struct ZScore {
    top_n: u32,
    entry: f64,
    exit: f64,
    held: BTreeSet<u32>,
}

impl Strategy for ZScore {
    const NAME: &'static str = "zscore";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str =
        "Z-Score Timing: enters assets whose drawdown z-score falls to -zscore_entry and exits at -zscore_exit.";

    fn start(_universe: &[AssetMeta], params: &RunParams) -> Result<Self, ParamError> {
        let (entry, exit) = (params.zscore_entry, params.zscore_exit);
        if !(entry.is_finite() && entry > 0.0) {
            return Err(ParamError::new(
                "zscore_entry",
                format!("zscore_entry must be a number greater than 0 (got {entry})"),
            ));
        }
        if !(exit.is_finite() && exit < entry) {
            return Err(ParamError::new(
                "zscore_exit",
                format!(
                    "zscore_exit ({exit}) must be below zscore_entry ({entry}): \
                     positions are entered at z <= -{entry} and exited at z >= -zscore_exit"
                ),
            ));
        }
        Ok(ZScore {
            top_n: params.top_n,
            entry,
            exit,
            held: BTreeSet::new(),
        })
    }

    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        let state = |asset: u32| ctx.assets.iter().find(|a| a.asset == asset);
        // Exits: back to normal. An asset that is no longer tradeable cannot
        // be targeted, so it is dropped too (the host sells what is not named).
        let exit = self.exit;
        self.held.retain(|&asset| match state(asset) {
            Some(a) => !a.zscore.is_some_and(|z| z >= -exit),
            None => false,
        });
        // Entries: the deepest first, into the free slots.
        let entry = self.entry;
        let candidates = rank_by(&ctx.assets, |a| match a.zscore {
            Some(z) if z <= -entry => -z,
            _ => f64::NAN,
        });
        for a in candidates {
            if self.held.len() >= self.top_n as usize {
                break;
            }
            self.held.insert(a.asset);
        }
        let weight = 1.0 / f64::from(self.top_n.max(1));
        Ok(self
            .held
            .iter()
            .map(|&asset| Target { asset, weight })
            .collect())
    }
}

forecast_sdk::export_strategy!(ZScore);

#[cfg(test)]
mod tests {
    use forecast_sdk::testing::{asset_state, context};

    use super::*;

    fn z(asset: u32, z: Option<f64>) -> AssetState {
        AssetState {
            zscore: z,
            ..asset_state(asset)
        }
    }

    fn params(top_n: u32, entry: f64, exit: f64) -> RunParams {
        RunParams {
            top_n,
            zscore_entry: entry,
            zscore_exit: exit,
            ..RunParams::default()
        }
    }

    fn held(targets: &[Target]) -> Vec<u32> {
        targets.iter().map(|t| t.asset).collect()
    }

    #[test]
    fn enters_deep_drawdowns_lowest_z_first_and_exits_on_recovery() {
        let mut s = ZScore::start(&[], &params(2, 2.0, 0.0)).unwrap();
        // Three candidates for two slots: the two lowest z win.
        let t = s
            .rebalance(&context(vec![
                z(0, Some(-2.1)),
                z(1, Some(-3.0)),
                z(2, Some(-2.5)),
                z(3, Some(-1.9)),
            ]))
            .unwrap();
        assert_eq!(held(&t), [1, 2]);
        assert!(t.iter().all(|t| t.weight == 0.5));

        // Still below the exit threshold, or without a z-score: held. The
        // slots are full, so asset 0 cannot enter.
        let t = s
            .rebalance(&context(vec![
                z(0, Some(-2.2)),
                z(1, Some(-0.5)),
                z(2, None),
            ]))
            .unwrap();
        assert_eq!(held(&t), [1, 2]);

        // Asset 1 recovers (z >= -0): it leaves and frees a slot for 0.
        let t = s
            .rebalance(&context(vec![
                z(0, Some(-2.2)),
                z(1, Some(0.0)),
                z(2, Some(-1.0)),
            ]))
            .unwrap();
        assert_eq!(held(&t), [0, 2]);

        // Everything recovers: all cash.
        let t = s
            .rebalance(&context(vec![
                z(0, Some(0.1)),
                z(1, Some(0.5)),
                z(2, Some(2.0)),
            ]))
            .unwrap();
        assert!(t.is_empty());
    }

    #[test]
    fn thresholds_are_inclusive_and_partial_slots_weigh_one_over_top_n() {
        let mut s = ZScore::start(&[], &params(4, 1.5, 0.5)).unwrap();
        let t = s
            .rebalance(&context(vec![z(0, Some(-1.5)), z(1, Some(-1.49))]))
            .unwrap();
        assert_eq!(
            t,
            vec![Target {
                asset: 0,
                weight: 0.25
            }]
        );
        // Exit at z >= -0.5.
        let t = s.rebalance(&context(vec![z(0, Some(-0.51))])).unwrap();
        assert_eq!(held(&t), [0]);
        let t = s.rebalance(&context(vec![z(0, Some(-0.5))])).unwrap();
        assert!(t.is_empty());
    }

    #[test]
    fn ties_go_to_the_lower_index() {
        let mut s = ZScore::start(&[], &params(1, 2.0, 0.0)).unwrap();
        let t = s
            .rebalance(&context(vec![z(5, Some(-2.5)), z(3, Some(-2.5))]))
            .unwrap();
        assert_eq!(held(&t), [3]);
    }

    #[test]
    fn refuses_thresholds_it_cannot_use() {
        let e = ZScore::start(&[], &params(1, 1.0, 1.0)).unwrap_err();
        assert_eq!(e.field, "zscore_exit");
        assert!(
            e.message.contains("zscore_exit (1)") && e.message.contains("zscore_entry (1)"),
            "{}",
            e.message
        );
        let e = ZScore::start(&[], &params(1, 1.0, 2.0)).unwrap_err();
        assert_eq!(e.field, "zscore_exit");
        let e = ZScore::start(&[], &params(1, 0.0, -1.0)).unwrap_err();
        assert_eq!(e.field, "zscore_entry");
        let e = ZScore::start(&[], &params(1, -2.0, -3.0)).unwrap_err();
        assert_eq!(e.field, "zscore_entry");
        let e = ZScore::start(&[], &params(1, f64::NAN, 0.0)).unwrap_err();
        assert_eq!(e.field, "zscore_entry");
        // A negative exit threshold is fine (exit once z is back above +|exit|).
        assert!(ZScore::start(&[], &params(1, 2.0, -0.5)).is_ok());
    }
}
