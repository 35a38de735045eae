//! The `strategy` world: backtest strategies as sandboxed components.
//!
//! One instance serves one backtest run (`start`, then one `rebalance` per
//! rebalance date), so a strategy may keep state between its calls. Every
//! call gets what is left of the run's time, capped at the runtime's call
//! timeout; a trap ends the run and the instance is dropped with it.

use std::sync::Arc;
use std::time::Instant;

use forecast_backtest as bt;
use wasmtime::component::HasSelf;

use super::{load_error, prelink, sha256_hex, CallState, PluginError, PluginInfo, PluginRuntime};

// The shared interfaces are the segmentation world's types, so `CallState`
// implements `host-log` once (in `segmentation.rs`).
wasmtime::component::bindgen!({
    path: "../../wit",
    world: "strategy",
    with: {
        "forecast:plugins/host-log": super::segmentation::forecast::plugins::host_log,
        "forecast:plugins/types": super::segmentation::forecast::plugins::types,
    },
});

use self::exports::forecast::plugins::allocation as wit;
use self::forecast::plugins::types::Metric;

/// A loaded, pre-linked strategy version.
pub struct StrategyPlugin {
    info: PluginInfo,
    description: String,
    label: Arc<str>,
    pre: StrategyPre<CallState>,
    runtime: Arc<PluginRuntime>,
}

/// True for a name `BacktestRequest.strategy` can select: 1 to 64 lower-case
/// letters, digits, `-` or `_`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

impl StrategyPlugin {
    /// Compiles and links `bytes` against the `strategy` world; the name
    /// and version are the ones the component reports (`info`), which
    /// doubles as a smoke test of the instance.
    pub fn load(runtime: Arc<PluginRuntime>, bytes: &[u8]) -> Result<Self, PluginError> {
        let provisional = "strategy/unnamed";
        let pre = prelink(&runtime, provisional, bytes, |linker| {
            Strategy::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
        })?;
        let pre = StrategyPre::new(pre).map_err(load_error(provisional))?;
        let mut store = runtime.store(Arc::from(provisional));
        let bindings = pre
            .instantiate(&mut store)
            .map_err(|e| runtime.classify(&store, provisional, e))?;
        let info = bindings
            .forecast_plugins_allocation()
            .call_info(&mut store)
            .map_err(|e| runtime.classify(&store, provisional, e))?;
        if !valid_name(&info.name) {
            return Err(PluginError::Load {
                plugin: provisional.into(),
                message: format!(
                    "strategy name '{}' is not 1-64 lower-case letters, digits, '-' or '_'",
                    info.name.chars().take(80).collect::<String>()
                ),
            });
        }
        let info_record = PluginInfo {
            kind: "strategy".into(),
            name: info.name,
            version: info.version,
            sha256: sha256_hex(bytes),
        };
        Ok(StrategyPlugin {
            label: Arc::from(info_record.label().as_str()),
            info: info_record,
            description: info.description.chars().take(500).collect(),
            pre,
            runtime,
        })
    }

    /// Who this is.
    pub fn info(&self) -> &PluginInfo {
        &self.info
    }

    /// The strategy's one-sentence description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// A fresh instance for one run that must end by `deadline`.
    /// Blocking to use: drive it from `spawn_blocking`.
    pub fn instance(self: &Arc<Self>, deadline: Instant) -> Result<StrategyRun, PluginError> {
        let mut store = self.runtime.store(self.label.clone());
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| self.runtime.instantiate_failed(&store, &self.label, e))?;
        Ok(StrategyRun {
            plugin: self.clone(),
            store,
            bindings,
            deadline,
        })
    }
}

/// One run's instance of a strategy; drives the accounting of
/// `forecast-backtest` through [`bt::Strategy`].
pub struct StrategyRun {
    plugin: Arc<StrategyPlugin>,
    store: wasmtime::Store<CallState>,
    bindings: Strategy,
    deadline: Instant,
}

/// Why a strategy call failed.
#[derive(Debug)]
pub enum RunFailure {
    /// The sandbox stopped the call (trap, time, memory).
    Plugin(PluginError),
    /// The strategy answered an error of its own from `rebalance`.
    Refused {
        /// Label of the plugin.
        plugin: String,
        /// Its message.
        message: String,
    },
    /// The run's deadline passed during the call.
    RunTimedOut,
}

impl StrategyRun {
    fn arm(&mut self) -> Result<(), RunFailure> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(RunFailure::RunTimedOut);
        }
        self.plugin.runtime.set_deadline(&mut self.store, left);
        Ok(())
    }

    fn fail(&self, e: wasmtime::Error) -> RunFailure {
        let err = self
            .plugin
            .runtime
            .classify(&self.store, &self.plugin.label, e);
        if matches!(err, PluginError::Timeout { .. }) && Instant::now() >= self.deadline {
            RunFailure::RunTimedOut
        } else {
            RunFailure::Plugin(err)
        }
    }
}

fn metric_to_wit(m: bt::Metric) -> Metric {
    match m {
        bt::Metric::Return => Metric::TotalReturn,
        bt::Metric::Sharpe => Metric::Sharpe,
        bt::Metric::Sortino => Metric::Sortino,
    }
}

impl bt::Strategy for StrategyRun {
    type Error = RunFailure;

    fn start(
        &mut self,
        universe: &[bt::AssetMeta],
        params: &bt::RunParams,
    ) -> Result<Result<(), bt::ParamError>, RunFailure> {
        self.arm()?;
        let universe: Vec<wit::Asset> = universe
            .iter()
            .map(|a| wit::Asset {
                ticker: a.ticker.clone(),
                name: a.name.clone(),
                category: a.category.clone(),
            })
            .collect();
        let params = wit::RunParams {
            top_n: params.top_n,
            rebalance: match params.rebalance {
                bt::Rebalance::Daily => wit::Schedule::Daily,
                bt::Rebalance::Weekly => wit::Schedule::Weekly,
                bt::Rebalance::Monthly => wit::Schedule::Monthly,
            },
            return_period: params.return_period,
            num_segments: params.num_segments,
            decay_factor: params.decay_factor,
            metric: metric_to_wit(params.metric),
            initial_capital: params.initial_capital,
            include_costs: params.include_costs,
            zscore_lookback: params.zscore_lookback,
            zscore_entry: params.zscore_entry,
            zscore_exit: params.zscore_exit,
        };
        let answer = self.bindings.forecast_plugins_allocation().call_start(
            &mut self.store,
            &universe,
            params,
        );
        match answer {
            Ok(Ok(())) => Ok(Ok(())),
            Ok(Err(e)) => Ok(Err(bt::ParamError::new(
                bounded(&e.field, 64),
                bounded(&e.message, 500),
            ))),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn rebalance(&mut self, ctx: &bt::Context) -> Result<Vec<bt::Target>, RunFailure> {
        self.arm()?;
        let wit_ctx = wit::Context {
            date: ctx.date,
            equity: ctx.equity,
            cash: ctx.cash,
            assets: ctx
                .assets
                .iter()
                .map(|a| wit::AssetState {
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
                })
                .collect(),
        };
        let answer = self
            .bindings
            .forecast_plugins_allocation()
            .call_rebalance(&mut self.store, &wit_ctx);
        match answer {
            Ok(Ok(targets)) => Ok(targets
                .into_iter()
                .map(|t| bt::Target {
                    asset: t.asset,
                    weight: t.weight,
                })
                .collect()),
            Ok(Err(message)) => Err(RunFailure::Refused {
                plugin: self.plugin.label.to_string(),
                message: bounded(&message, 500),
            }),
            Err(e) => Err(self.fail(e)),
        }
    }
}

/// At most `n` characters of a guest-supplied string.
fn bounded(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}
