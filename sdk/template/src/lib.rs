//! `{{name}}`: a Forecast Engine backtest strategy plugin.
//!
//! A strategy only answers target weights at each rebalance date; the
//! server does the fills (next row's close), costs, cash, shorts and
//! metrics. This one starts as the classic top-N rotation: equal weight in
//! the `top_n` assets with the best positive median prediction. Change
//! `rebalance` (and `start`, if it needs parameters checked or state set
//! up) to make it yours.
//!
//! * `cargo test` runs it natively over the CSV files in `data/`;
//! * `cargo build --release --target wasm32-wasip2` builds the plugin,
//!   `target/wasm32-wasip2/release/{{crate_name}}.wasm`.
//!
//! See `sdk/README.md` in the repository for the whole cycle.

use forecast_sdk::prelude::*;

/// The strategy of one backtest run. The server creates it with `start`
/// and calls `rebalance` at each rebalance date, in date order; fields keep
/// whatever the strategy needs to remember between those calls.
#[derive(Debug)]
pub struct MyStrategy {
    /// Positions to hold, from the request's `top_n`.
    top_n: u32,
}

impl Strategy for MyStrategy {
    /// What `"strategy": "..."` in a backtest request selects: lower-case
    /// letters, digits, `-` and `_`. Unique among the server's strategies.
    const NAME: &'static str = "{{name}}";
    /// Semantic version, shown in listings and in the server's logs.
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    /// One sentence for listings.
    const DESCRIPTION: &'static str =
        "Equal weight in the top_n assets by positive median prediction.";

    /// Begins a run. `universe` lists the assets (`rebalance` refers to
    /// them by index); `params` are the request's, defaults filled in.
    /// Refuse what the strategy cannot work with: the client gets a 400
    /// naming the field.
    fn start(universe: &[AssetMeta], params: &RunParams) -> Result<Self, ParamError> {
        // The server has already checked the request's bounds (top_n between
        // 1 and the universe's size, ...); refuse what this strategy cannot use.
        if params.top_n > 20 {
            return Err(ParamError::new(
                "top_n",
                format!(
                    "{} holds at most 20 positions (got {})",
                    Self::NAME,
                    params.top_n
                ),
            ));
        }
        log::debug(&format!(
            "{} assets, top_n {}",
            universe.len(),
            params.top_n
        ));
        Ok(MyStrategy {
            top_n: params.top_n,
        })
    }

    /// The target portfolio at `ctx.date`, from data up to that date only.
    /// `ctx.assets` holds the tradeable assets with the engine's signals
    /// (drawdown, median and EMA predictions and their errors, the drawdown
    /// z-score) and their current weights. Answer weights for assets of
    /// `ctx.assets` only, each at most once, with absolute weights adding up
    /// to at most 1; assets not named are sold. An `Err` ends the run.
    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        let ranked = rank_by(&ctx.assets, |a| a.median_return);
        let positive = ranked.into_iter().filter(|a| a.median_return > 0.0);
        Ok(equal_weights(positive, self.top_n))
    }
}

// Exports `MyStrategy` as the plugin (checks NAME and VERSION at compile time).
forecast_sdk::export_strategy!(MyStrategy);

#[cfg(test)]
mod tests {
    use forecast_sdk::harness::{summary, Harness};
    use forecast_sdk::testing::{asset_state, context};

    use super::*;

    /// One decision on a hand-built context.
    #[test]
    fn holds_the_best_positive_predictions() {
        let params = RunParams {
            top_n: 2,
            ..RunParams::default()
        };
        let universe = vec![
            AssetMeta {
                ticker: "A".into(),
                name: "A".into(),
                category: "Crypto".into(),
            };
            3
        ];
        let mut s = MyStrategy::start(&universe, &params).unwrap();
        let ctx = context(vec![
            AssetState {
                median_return: 0.02,
                ..asset_state(0)
            },
            AssetState {
                median_return: -0.01,
                ..asset_state(1)
            },
            AssetState {
                median_return: 0.05,
                ..asset_state(2)
            },
        ]);
        let targets = s.rebalance(&ctx).unwrap();
        assert_eq!(
            targets,
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

    /// A whole backtest over `data/`, with the server's accounting.
    #[test]
    fn backtest_over_the_sample_data() {
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/data");
        let harness = Harness::from_csv_dir(data, "Indices").unwrap();
        let params = RunParams {
            top_n: 1,
            ..RunParams::default()
        };
        let report = harness.run::<MyStrategy>(&params).unwrap();
        println!("{}", summary(&report));
        assert_eq!(report.equity[0], params.initial_capital);
        assert!(report.equity.iter().all(|e| e.is_finite()));
        assert!(!report.trades.is_empty());
    }
}
