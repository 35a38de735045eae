//! The glue behind [`export_strategy!`](crate::export_strategy): the
//! conversions between the generated WIT types and the plain contract
//! types, and the cell that keeps a run's strategy value between calls.
//! Public only so that the macro, expanded in the plugin crate, can reach
//! it; not part of the SDK's API.

use std::any::Any;
use std::cell::RefCell;

use crate::bindings::exports::forecast::plugins::allocation as wit;
use crate::bindings::exports::forecast::plugins::allocation_columns as cols;
use crate::Strategy;

pub use cols::{ColumnsContext, Guest as ColumnsGuest};
pub use wit::{Asset, Context, Guest, ParamError, RunParams, StrategyInfo, Target};

thread_local! {
    /// The strategy value of the current run. A component instance serves
    /// one run (and is single-threaded), so one cell per instance is enough;
    /// `Any` keeps the macro free of a static of its own.
    static STATE: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Sends a panic's message to the host's log before the plugin aborts (a
/// trap). Rust's default hook would read the environment and write to
/// stderr, which the sandbox does not provide, so the message would be lost.
fn install_panic_hook() {
    #[cfg(target_arch = "wasm32")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            std::panic::set_hook(Box::new(|info| {
                crate::log::error(&info.to_string().replace('\n', " "));
            }));
        });
    }
}

/// The `info` export.
pub fn info<S: Strategy>() -> StrategyInfo {
    install_panic_hook();
    StrategyInfo {
        name: S::NAME.to_string(),
        version: S::VERSION.to_string(),
        description: S::DESCRIPTION.to_string(),
    }
}

/// The `start` export: a new strategy value replaces any previous one.
pub fn start<S: Strategy>(universe: Vec<Asset>, params: RunParams) -> Result<(), ParamError> {
    install_panic_hook();
    let universe: Vec<crate::AssetMeta> = universe.into_iter().map(asset_meta_from_wit).collect();
    let params = run_params_from_wit(&params);
    let started = S::start(&universe, &params);
    STATE.with_borrow_mut(|state| match started {
        Ok(strategy) => {
            *state = Some(Box::new(strategy));
            Ok(())
        }
        Err(e) => {
            *state = None;
            Err(param_error_to_wit(e))
        }
    })
}

/// The `rebalance` export: an error before a successful `start`.
pub fn rebalance<S: Strategy>(ctx: Context) -> Result<Vec<Target>, String> {
    install_panic_hook();
    decide::<S>(&context_from_wit(ctx))
}

/// The `rebalance-columns` export: the same decision as [`rebalance`] over
/// the same context laid out as columns. The assets' buffer is kept for the
/// next call (a daily run makes thousands of them).
pub fn rebalance_columns<S: Strategy>(ctx: ColumnsContext) -> Result<Vec<Target>, String> {
    install_panic_hook();
    let assets = COLUMNS_BUFFER.take();
    let ctx = context_from_columns(ctx, assets)?;
    let decided = decide::<S>(&ctx);
    COLUMNS_BUFFER.set(ctx.assets);
    decided
}

thread_local! {
    /// The assets of the previous `rebalance-columns` call, for reuse.
    static COLUMNS_BUFFER: RefCell<Vec<crate::AssetState>> = const { RefCell::new(Vec::new()) };
}

/// The run's strategy decides at `ctx`: an error before a successful `start`.
fn decide<S: Strategy>(ctx: &crate::Context) -> Result<Vec<Target>, String> {
    STATE.with_borrow_mut(|state| {
        let strategy = state
            .as_mut()
            .and_then(|s| s.downcast_mut::<S>())
            .ok_or_else(|| format!("{}: rebalance called before start", S::NAME))?;
        let targets = strategy.rebalance(ctx)?;
        Ok(targets.into_iter().map(target_to_wit).collect())
    })
}

/// WIT `metric` to the engine's [`Metric`](crate::Metric).
pub fn metric_from_wit(m: wit::Metric) -> crate::Metric {
    match m {
        wit::Metric::TotalReturn => crate::Metric::Return,
        wit::Metric::Sharpe => crate::Metric::Sharpe,
        wit::Metric::Sortino => crate::Metric::Sortino,
    }
}

/// WIT `rebalance` schedule to [`Rebalance`](crate::Rebalance).
pub fn rebalance_from_wit(r: wit::Schedule) -> crate::Rebalance {
    match r {
        wit::Schedule::Daily => crate::Rebalance::Daily,
        wit::Schedule::Weekly => crate::Rebalance::Weekly,
        wit::Schedule::Monthly => crate::Rebalance::Monthly,
    }
}

/// WIT `run-params` to [`RunParams`](crate::RunParams).
pub fn run_params_from_wit(p: &RunParams) -> crate::RunParams {
    crate::RunParams {
        top_n: p.top_n,
        rebalance: rebalance_from_wit(p.rebalance),
        return_period: p.return_period,
        num_segments: p.num_segments,
        decay_factor: p.decay_factor,
        metric: metric_from_wit(p.metric),
        initial_capital: p.initial_capital,
        include_costs: p.include_costs,
        zscore_lookback: p.zscore_lookback,
        zscore_entry: p.zscore_entry,
        zscore_exit: p.zscore_exit,
    }
}

/// WIT `asset` to [`AssetMeta`](crate::AssetMeta).
pub fn asset_meta_from_wit(a: Asset) -> crate::AssetMeta {
    crate::AssetMeta {
        ticker: a.ticker,
        name: a.name,
        category: a.category,
    }
}

/// WIT `asset-state` to [`AssetState`](crate::AssetState).
pub fn asset_state_from_wit(a: &wit::AssetState) -> crate::AssetState {
    crate::AssetState {
        asset: a.asset,
        price: a.price,
        drawdown: a.drawdown,
        segment: a.segment,
        expected_return: a.expected_return,
        median_return: a.median_return,
        prediction_error: a.prediction_error,
        median_error: a.median_error,
        zscore: a.zscore,
        weight: a.weight,
    }
}

/// WIT `context` to [`Context`](crate::Context).
pub fn context_from_wit(c: Context) -> crate::Context {
    crate::Context {
        date: c.date,
        equity: c.equity,
        cash: c.cash,
        assets: c.assets.iter().map(asset_state_from_wit).collect(),
    }
}

/// WIT `columns-context` to [`Context`](crate::Context), its assets written
/// into `assets` (cleared first). NaN in an optional column is none; columns
/// of different lengths are an error (a host that breaks the interface).
pub fn context_from_columns(
    c: ColumnsContext,
    mut assets: Vec<crate::AssetState>,
) -> Result<crate::Context, String> {
    let a = &c.assets;
    let n = a.asset.len();
    let lengths = [
        a.price.len(),
        a.drawdown.len(),
        a.segment.len(),
        a.expected_return.len(),
        a.median_return.len(),
        a.prediction_error.len(),
        a.median_error.len(),
        a.zscore.len(),
        a.weight.len(),
    ];
    if lengths.iter().any(|&len| len != n) {
        return Err(format!(
            "rebalance-columns: columns of different lengths ({n} assets, then {lengths:?})"
        ));
    }
    let opt = |x: f64| (!x.is_nan()).then_some(x);
    assets.clear();
    assets.extend((0..n).map(|i| crate::AssetState {
        asset: a.asset[i],
        price: a.price[i],
        drawdown: a.drawdown[i],
        segment: a.segment[i],
        expected_return: a.expected_return[i],
        median_return: a.median_return[i],
        prediction_error: opt(a.prediction_error[i]),
        median_error: opt(a.median_error[i]),
        zscore: opt(a.zscore[i]),
        weight: a.weight[i],
    }));
    Ok(crate::Context {
        date: c.date,
        equity: c.equity,
        cash: c.cash,
        assets,
    })
}

/// [`Target`](crate::Target) to WIT `target`.
pub fn target_to_wit(t: crate::Target) -> Target {
    Target {
        asset: t.asset,
        weight: t.weight,
    }
}

/// [`ParamError`](crate::ParamError) to WIT `param-error`.
pub fn param_error_to_wit(e: crate::ParamError) -> ParamError {
    ParamError {
        field: e.field,
        message: e.message,
    }
}

/// True for a valid strategy name: 1 to 64 lower-case ASCII letters,
/// digits, `-` or `_` (what the host accepts).
pub const fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    if b.is_empty() || b.len() > 64 {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-' || c == b'_') {
            return false;
        }
        i += 1;
    }
    true
}

/// True for a semantic version: `MAJOR.MINOR.PATCH` without leading zeros,
/// optionally followed by `-pre-release` and/or `+build` made of ASCII
/// letters, digits, `-` and `.`.
pub const fn valid_version(version: &str) -> bool {
    let b = version.as_bytes();
    let mut i = 0;
    let mut part = 0;
    while part < 3 {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let digits = i - start;
        if digits == 0 || (digits > 1 && b[start] == b'0') {
            return false;
        }
        part += 1;
        if part < 3 {
            if i >= b.len() || b[i] != b'.' {
                return false;
            }
            i += 1;
        }
    }
    if i == b.len() {
        return true;
    }
    if b[i] != b'-' && b[i] != b'+' {
        return false;
    }
    i += 1;
    if i == b.len() {
        return false;
    }
    while i < b.len() {
        let c = b[i];
        if !(c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || c == b'+') {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AssetMeta, Context as Ctx, ParamError as PErr, Target as T};

    struct Counter {
        calls: u32,
        universe: usize,
    }

    impl Strategy for Counter {
        const NAME: &'static str = "counter";
        const VERSION: &'static str = "1.2.3";
        const DESCRIPTION: &'static str = "Counts its calls.";

        fn start(universe: &[AssetMeta], params: &crate::RunParams) -> Result<Self, PErr> {
            if params.top_n > 5 {
                return Err(PErr::new("top_n", "at most 5"));
            }
            Ok(Counter {
                calls: 0,
                universe: universe.len(),
            })
        }

        fn rebalance(&mut self, ctx: &Ctx) -> Result<Vec<T>, String> {
            self.calls += 1;
            if self.calls == 3 {
                return Err("third call".into());
            }
            Ok(ctx
                .assets
                .iter()
                .map(|a| T {
                    asset: a.asset,
                    weight: f64::from(self.calls) / (10.0 * self.universe as f64),
                })
                .collect())
        }
    }

    fn wit_params(top_n: u32) -> RunParams {
        RunParams {
            top_n,
            rebalance: wit::Schedule::Weekly,
            return_period: 30,
            num_segments: 15,
            decay_factor: 0.9,
            metric: wit::Metric::Sortino,
            initial_capital: 5_000.0,
            include_costs: false,
            zscore_lookback: 100,
            zscore_entry: 1.5,
            zscore_exit: 0.5,
        }
    }

    fn wit_asset(ticker: &str) -> Asset {
        Asset {
            ticker: ticker.into(),
            name: format!("{ticker} name"),
            category: "Crypto".into(),
        }
    }

    fn wit_ctx() -> Context {
        Context {
            date: 19_000,
            equity: 1.0,
            cash: 0.5,
            assets: vec![wit::AssetState {
                asset: 1,
                price: 2.0,
                drawdown: -0.25,
                segment: 4,
                expected_return: 0.01,
                median_return: 0.02,
                prediction_error: Some(0.03),
                median_error: None,
                zscore: Some(-1.5),
                weight: 0.1,
            }],
        }
    }

    #[test]
    fn conversions_keep_every_field() {
        let p = run_params_from_wit(&wit_params(3));
        assert_eq!(
            p,
            crate::RunParams {
                top_n: 3,
                rebalance: crate::Rebalance::Weekly,
                return_period: 30,
                num_segments: 15,
                decay_factor: 0.9,
                metric: crate::Metric::Sortino,
                initial_capital: 5_000.0,
                include_costs: false,
                zscore_lookback: 100,
                zscore_entry: 1.5,
                zscore_exit: 0.5,
            }
        );
        assert_eq!(
            metric_from_wit(wit::Metric::TotalReturn),
            crate::Metric::Return
        );
        assert_eq!(metric_from_wit(wit::Metric::Sharpe), crate::Metric::Sharpe);
        assert_eq!(
            rebalance_from_wit(wit::Schedule::Daily),
            crate::Rebalance::Daily
        );
        assert_eq!(
            rebalance_from_wit(wit::Schedule::Monthly),
            crate::Rebalance::Monthly
        );
        let meta = asset_meta_from_wit(wit_asset("BTC"));
        assert_eq!(
            (
                meta.ticker.as_str(),
                meta.name.as_str(),
                meta.category.as_str()
            ),
            ("BTC", "BTC name", "Crypto")
        );
        let ctx = context_from_wit(wit_ctx());
        assert_eq!(
            ctx,
            Ctx {
                date: 19_000,
                equity: 1.0,
                cash: 0.5,
                assets: vec![crate::AssetState {
                    asset: 1,
                    price: 2.0,
                    drawdown: -0.25,
                    segment: 4,
                    expected_return: 0.01,
                    median_return: 0.02,
                    prediction_error: Some(0.03),
                    median_error: None,
                    zscore: Some(-1.5),
                    weight: 0.1,
                }],
            }
        );
        let t = target_to_wit(T {
            asset: 7,
            weight: -0.25,
        });
        assert_eq!((t.asset, t.weight), (7, -0.25));
        let e = param_error_to_wit(PErr::new("top_n", "too big"));
        assert_eq!((e.field.as_str(), e.message.as_str()), ("top_n", "too big"));
        let i = info::<Counter>();
        assert_eq!(
            (i.name.as_str(), i.version.as_str(), i.description.as_str()),
            ("counter", "1.2.3", "Counts its calls.")
        );
    }

    #[test]
    fn the_cell_keeps_the_run_between_calls() {
        // Each test runs on its own thread, so the thread-local cell starts empty.
        let err = rebalance::<Counter>(wit_ctx()).unwrap_err();
        assert!(err.contains("before start"), "{err}");

        start::<Counter>(vec![wit_asset("A"), wit_asset("B")], wit_params(2)).unwrap();
        let first = rebalance::<Counter>(wit_ctx()).unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].asset, 1);
        assert!((first[0].weight - 0.05).abs() < 1e-15);
        let second = rebalance::<Counter>(wit_ctx()).unwrap();
        assert!((second[0].weight - 0.1).abs() < 1e-15);
        assert_eq!(rebalance::<Counter>(wit_ctx()).unwrap_err(), "third call");

        // A new start begins a new run.
        start::<Counter>(vec![wit_asset("A")], wit_params(1)).unwrap();
        let again = rebalance::<Counter>(wit_ctx()).unwrap();
        assert!((again[0].weight - 0.1).abs() < 1e-15);

        // A refused start forgets the previous run.
        let refused = start::<Counter>(vec![wit_asset("A")], wit_params(9)).unwrap_err();
        assert_eq!(refused.field, "top_n");
        assert!(rebalance::<Counter>(wit_ctx()).is_err());
    }

    /// `wit_ctx` with a second asset, laid out as columns.
    fn two_assets() -> (Context, ColumnsContext) {
        let mut records = wit_ctx();
        records.assets.push(wit::AssetState {
            asset: 4,
            price: 7.5,
            drawdown: 0.0,
            segment: 0,
            expected_return: -0.02,
            median_return: -0.0,
            prediction_error: None,
            median_error: Some(0.0),
            zscore: None,
            weight: -0.3,
        });
        let column = |f: fn(&wit::AssetState) -> f64| records.assets.iter().map(f).collect();
        fn none_is_nan(x: Option<f64>) -> f64 {
            x.unwrap_or(f64::NAN)
        }
        let columns = ColumnsContext {
            date: records.date,
            equity: records.equity,
            cash: records.cash,
            assets: cols::AssetColumns {
                asset: records.assets.iter().map(|a| a.asset).collect(),
                price: column(|a| a.price),
                drawdown: column(|a| a.drawdown),
                segment: records.assets.iter().map(|a| a.segment).collect(),
                expected_return: column(|a| a.expected_return),
                median_return: column(|a| a.median_return),
                prediction_error: column(|a| none_is_nan(a.prediction_error)),
                median_error: column(|a| none_is_nan(a.median_error)),
                zscore: column(|a| none_is_nan(a.zscore)),
                weight: column(|a| a.weight),
            },
        };
        (records, columns)
    }

    #[test]
    fn columns_read_as_the_same_context_as_records() {
        let (records, columns) = two_assets();
        // A used buffer is cleared, not appended to.
        let stale = vec![context_from_wit(wit_ctx()).assets[0].clone(); 3];
        let from_columns = context_from_columns(columns.clone(), stale).unwrap();
        assert_eq!(from_columns, context_from_wit(records));
        assert_eq!(
            from_columns.assets[1].median_return.to_bits(),
            (-0.0f64).to_bits()
        );

        let mut short = columns;
        short.assets.zscore.pop();
        let err = context_from_columns(short, Vec::new()).unwrap_err();
        assert!(err.contains("different lengths"), "{err}");
    }

    #[test]
    fn both_rebalance_exports_answer_alike_over_one_run() {
        let (records, columns) = two_assets();
        assert!(rebalance_columns::<Counter>(columns.clone())
            .unwrap_err()
            .contains("before start"));
        start::<Counter>(vec![wit_asset("A"), wit_asset("B")], wit_params(2)).unwrap();
        // The two exports share the run: calls of either count.
        let first = rebalance_columns::<Counter>(columns.clone()).unwrap();
        let second = rebalance::<Counter>(records).unwrap();
        let pairs = |t: &[Target]| t.iter().map(|t| (t.asset, t.weight)).collect::<Vec<_>>();
        assert_eq!(pairs(&first), [(1, 0.05), (4, 0.05)]);
        assert_eq!(pairs(&second), [(1, 0.1), (4, 0.1)]);
        assert_eq!(
            rebalance_columns::<Counter>(columns).unwrap_err(),
            "third call"
        );
    }

    #[test]
    fn names_and_versions_are_checked() {
        for ok in ["topn", "dip-buyer", "a_b-9", "x"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "TopN", "top n", "top.n", "é", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
        for ok in [
            "1.0.0",
            "0.1.0",
            "10.20.30",
            "1.0.0-alpha.1",
            "1.0.0+build.5",
            "1.2.3-rc-1+x",
        ] {
            assert!(valid_version(ok), "{ok}");
        }
        for bad in [
            "",
            "1",
            "1.0",
            "1.0.0.0",
            "01.0.0",
            "1.00.0",
            "v1.0.0",
            "1.0.0-",
            "1.0.0 beta",
            "1..0",
        ] {
            assert!(!valid_version(bad), "{bad}");
        }
    }
}
