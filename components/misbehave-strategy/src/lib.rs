//! A deliberately misbehaving `strategy` component, used only by the
//! host's sandbox tests. `start` accepts anything; the run's `top_n`
//! selects what `rebalance` does:
//!
//! * 7 — loops forever (the host's deadline must stop it);
//! * 8 — allocates without bound (the host's memory cap must stop it);
//! * 9 — panics (a trap);
//! * 6 — answers weight 2 for the first tradeable asset (gross exposure 2,
//!   a contract violation);
//! * 5 — logs a warning through the host's log import, then answers the
//!   error "misbehave refuses";
//! * 11 — floods the host's log: 50 warnings of about 2 KB (each with a
//!   newline and an escape sequence) on every call, then behaves as 1;
//! * 12 — spins 3,000,000 rounds of arithmetic on every call (tens of
//!   millions of fuel units, under one call's budget), then behaves as 1:
//!   a long run stops at the run's fuel budget;
//! * 4 — answers the error `{:?}` of the assets it was given, so a test
//!   can compare what arrived by `allocation` and by `allocation-columns`;
//! * anything else — behaves: equal weight `1 / top_n` in the first
//!   `top_n` tradeable assets, so a test can tell a healthy run reached it.

use forecast_sdk::prelude::*;

/// The misbehaviour of one run.
#[derive(Debug)]
pub struct Misbehave {
    top_n: u32,
}

impl Strategy for Misbehave {
    const NAME: &'static str = "misbehave";
    const VERSION: &'static str = "0.0.1";
    const DESCRIPTION: &'static str = "Test fixture: misbehaves on demand (top_n selects how).";

    fn start(_universe: &[AssetMeta], params: &RunParams) -> Result<Self, ParamError> {
        Ok(Misbehave {
            top_n: params.top_n,
        })
    }

    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        match self.top_n {
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
            6 => Ok(weighted(ctx.assets.iter().take(1), 2.0)),
            5 => {
                log::warn("misbehave: about to refuse");
                Err("misbehave refuses".to_string())
            }
            11 => {
                let filler = "x".repeat(2_000);
                for i in 0..50 {
                    log::warn(&format!(
                        "misbehave: flood {i}\nforged line \u{1b}[31m{filler}"
                    ));
                }
                Ok(equal_weights(&ctx.assets, 1))
            }
            12 => {
                let mut x: u64 = 1;
                for _ in 0..3_000_000 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
                std::hint::black_box(x);
                Ok(equal_weights(&ctx.assets, 1))
            }
            4 => Err(format!("{:?}", ctx.assets)),
            n => Ok(equal_weights(&ctx.assets, n)),
        }
    }
}

forecast_sdk::export_strategy!(Misbehave);

#[cfg(test)]
mod tests {
    use forecast_sdk::testing::{asset_state, context};

    use super::*;

    fn rebalance(top_n: u32) -> Result<Vec<Target>, String> {
        let params = RunParams {
            top_n,
            ..RunParams::default()
        };
        let mut s = Misbehave::start(&[], &params).unwrap();
        s.rebalance(&context((0..4).map(asset_state).collect()))
    }

    #[test]
    fn the_harmless_modes() {
        assert_eq!(rebalance(5).unwrap_err(), "misbehave refuses");
        assert!(rebalance(4)
            .unwrap_err()
            .starts_with("[AssetState { asset: 0,"));
        assert_eq!(
            rebalance(6).unwrap(),
            vec![Target {
                asset: 0,
                weight: 2.0
            }]
        );
        let t = rebalance(2).unwrap();
        assert_eq!(
            t,
            vec![
                Target {
                    asset: 0,
                    weight: 0.5
                },
                Target {
                    asset: 1,
                    weight: 0.5
                },
            ]
        );
    }
}
