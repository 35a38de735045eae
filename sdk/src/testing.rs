//! Building blocks for unit tests on hand-built contexts.
//!
//! ```
//! use forecast_sdk::testing::{asset_state, context};
//! use forecast_sdk::AssetState;
//!
//! let ctx = context(vec![
//!     AssetState { median_return: 0.04, ..asset_state(0) },
//!     AssetState { median_return: -0.01, zscore: Some(-2.5), ..asset_state(1) },
//! ]);
//! assert_eq!(ctx.assets[1].asset, 1);
//! ```

use crate::{AssetState, Context};

/// A neutral state of `asset`: price 1, no drawdown (segment 0), zero
/// predictions, no errors, no z-score, not held. Override fields with
/// struct update syntax.
pub fn asset_state(asset: u32) -> AssetState {
    AssetState {
        asset,
        price: 1.0,
        drawdown: 0.0,
        segment: 0,
        expected_return: 0.0,
        median_return: 0.0,
        prediction_error: None,
        median_error: None,
        zscore: None,
        weight: 0.0,
    }
}

/// A context on 2024-01-02 with `assets` tradeable, equity and cash 100,000.
pub fn context(assets: Vec<AssetState>) -> Context {
    Context {
        date: 19_724,
        equity: 100_000.0,
        cash: 100_000.0,
        assets,
    }
}
