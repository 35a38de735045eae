//! The dip buyer over real price histories shipped in `data/`, through the
//! SDK's native harness: the accounting and signals the server uses.

use dip_buyer::{margin, DipBuyer};
use forecast_sdk::harness::{summary, Harness};
use forecast_sdk::prelude::*;
use forecast_sdk::{cost_bps, Side};

fn harness() -> Harness {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/data");
    Harness::new()
        .asset_csv("^GSPC", "Indices", format!("{data}/IDX_GSPC.csv"))
        .and_then(|h| h.asset_csv("^IXIC", "Indices", format!("{data}/IDX_IXIC.csv")))
        .and_then(|h| h.asset_csv("CL=F", "Commodities", format!("{data}/CL_F.csv")))
        .expect("the example's data loads")
}

/// The dip buyer, checking every answer against its own rule.
struct Checked(DipBuyer);

impl Strategy for Checked {
    const NAME: &'static str = "dip-buyer-checked";
    const VERSION: &'static str = "0.1.0";
    const DESCRIPTION: &'static str = "The dip buyer, checked.";

    fn start(universe: &[AssetMeta], params: &RunParams) -> Result<Self, ParamError> {
        DipBuyer::start(universe, params).map(Checked)
    }

    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        let targets = self.0.rebalance(ctx)?;
        for t in &targets {
            let state = ctx.assets.iter().find(|a| a.asset == t.asset).unwrap();
            assert!(
                margin(state).is_some(),
                "{} bought {state:?}, which is not a dip worth buying",
                format_date(ctx.date)
            );
        }
        Ok(targets)
    }
}

#[test]
fn buys_only_dips_and_keeps_a_sane_equity_curve() {
    let h = harness();
    let params = RunParams {
        top_n: 2,
        rebalance: Rebalance::Weekly,
        ..RunParams::default()
    };
    let report = h.run::<Checked>(&params).expect("the run completes");
    println!("{}", summary(&report));

    assert_eq!(report.equity[0], params.initial_capital);
    assert!(report.equity.iter().all(|e| e.is_finite() && *e > 0.0));
    assert!(report.metrics.final_equity.is_finite());
    assert!(!report.trades.is_empty(), "no dip was bought in 10 years");
    assert!(report.trades.iter().any(|t| t.side == Side::Buy));

    let universe = h.universe(&report);
    let tickers: Vec<&str> = universe.iter().map(|a| a.ticker.as_str()).collect();
    assert_eq!(tickers, ["^GSPC", "^IXIC", "CL=F"]);
    for t in &report.trades {
        let meta = universe[t.asset];
        assert!(t.qty > 0.0 && t.price > 0.0, "{t:?}");
        // Costs by category: 5 bps for both indices and commodities.
        assert!((t.cost - t.qty * t.price * cost_bps(&meta.category) / 10_000.0).abs() < 1e-9);
    }
}

#[test]
fn the_real_strategy_matches_the_checked_one() {
    let h = harness();
    let params = RunParams {
        top_n: 1,
        ..RunParams::default()
    };
    let plain = h.run::<DipBuyer>(&params).unwrap();
    let checked = h.run::<Checked>(&params).unwrap();
    assert_eq!(plain, checked);
}
