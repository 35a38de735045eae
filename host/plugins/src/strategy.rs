//! The `strategy` world: backtest strategies as sandboxed components.
//!
//! One instance serves one backtest run (`start`, then one `rebalance` per
//! rebalance date), so a strategy may keep state between its calls. Every
//! call gets what is left of the run's time, capped at the runtime's call
//! timeout; a trap ends the run and the instance is dropped with it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use forecast_backtest as bt;
use forecast_domain::PluginKind;
use wasmtime::component::{HasSelf, InstancePre, Linker};
use wasmtime::Store;

use crate::plugin::{Identity, Instance, Plugin, World};
use crate::runtime::{CallState, Permit};
use crate::PluginError;

// The shared interfaces are the segmentation world's types, so `CallState`
// implements `host-log` once (in `segmentation.rs`).
wasmtime::component::bindgen!({
    path: "../../wit",
    world: "weighted-strategy",
    with: {
        "forecast:plugins/host-log": crate::segmentation::forecast::plugins::host_log,
        "forecast:plugins/types": crate::segmentation::forecast::plugins::types,
    },
});

use self::exports::forecast::plugins::allocation as wit;
use self::exports::forecast::plugins::allocation_columns as cols;
use self::exports::forecast::plugins::allocation_weights as wts;
use self::forecast::plugins::types::Metric;

/// True for a name `BacktestRequest.strategy` can select: 1 to 64 lower-case
/// letters, digits, `-` or `_`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// Fuel every metered strategy call may use, whatever its input.
pub const FUEL_PER_CALL: u64 = 50_000_000;
/// Fuel a metered strategy call may use for each asset of its input.
pub const FUEL_PER_ASSET: u64 = 1_000_000;
/// Fuel all the calls of one metered run may use together (issue 40,
/// finding 6: per-call budgets alone let one daily backtest burn 166 G
/// units, 29 s of guest CPU). About 3–5 s of guest CPU on this project's
/// machines; the built-in strategies' runs use well under 1 G.
pub const FUEL_PER_RUN: u64 = 20_000_000_000;

/// The fuel budget of one metered strategy call over `assets` assets
/// ([`FUEL_PER_CALL`] + [`FUEL_PER_ASSET`] × `assets`): the same request
/// stops at the same point on every replica and every rerun.
pub fn fuel_budget(assets: usize) -> u64 {
    FUEL_PER_CALL + FUEL_PER_ASSET * assets as u64
}

/// What one run's calls of a strategy used.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunUsage {
    /// Calls made (`start` and every rebalance).
    pub calls: u64,
    /// Fuel used by all of them (metered runtimes only).
    pub fuel: Option<u64>,
    /// Time spent in the guest.
    pub guest: Duration,
    /// The most linear memory the instance held after a call, in bytes.
    pub peak_memory: usize,
    /// `host-log` lines dropped over the run's log budget.
    pub log_lines_dropped: u64,
}

/// The name to load a strategy under when only the component knows it
/// (built-ins, `FORECAST_PLUGIN_DIR`): it labels load errors only.
pub const UNNAMED: &str = "unnamed";

/// The `strategy` world.
pub struct StrategyWorld;

/// A pre-linked strategy: `allocation` always, `allocation-columns` when the
/// component exports it (built against WIT 1.6.0 or later),
/// `allocation-weights` when it is of the `weighted-strategy` world (1.11.0).
/// Not the bindgen'd world type, which would refuse components of earlier
/// minors and of the plain `strategy` world.
pub struct LinkedStrategy {
    pre: InstancePre<CallState>,
    records: wit::GuestIndices,
    columns: Option<cols::GuestIndices>,
    weights: Option<wts::GuestIndices>,
}

/// The exports of one strategy instance.
pub struct StrategyExports {
    records: wit::Guest,
    columns: Option<cols::Guest>,
    weights: Option<wts::Guest>,
}

impl World for StrategyWorld {
    const KIND: PluginKind = PluginKind::Strategy;
    type Bindings = StrategyExports;
    type Pre = LinkedStrategy;
    type Ext = ();

    fn link(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
        WeightedStrategy::add_to_linker::<_, HasSelf<_>>(linker, |s| s)
    }

    fn pre(pre: InstancePre<CallState>) -> wasmtime::Result<Self::Pre> {
        Ok(LinkedStrategy {
            records: wit::GuestIndices::new(&pre)?,
            columns: cols::GuestIndices::new(&pre).ok(),
            weights: wts::GuestIndices::new(&pre).ok(),
            pre,
        })
    }

    fn instantiate(
        pre: &Self::Pre,
        store: &mut Store<CallState>,
    ) -> wasmtime::Result<StrategyExports> {
        let instance = pre.pre.instantiate(&mut *store)?;
        Ok(StrategyExports {
            records: pre.records.load(&mut *store, &instance)?,
            columns: match &pre.columns {
                Some(columns) => Some(columns.load(&mut *store, &instance)?),
                None => None,
            },
            weights: match &pre.weights {
                Some(weights) => Some(weights.load(&mut *store, &instance)?),
                None => None,
            },
        })
    }

    /// A strategy names itself (`info`): the name `BacktestRequest.strategy`
    /// selects it by, so it must be a valid one.
    fn identify(
        store: &mut Store<CallState>,
        bindings: &StrategyExports,
    ) -> wasmtime::Result<Result<Identity, String>> {
        let info = bindings.records.call_info(store)?;
        if !valid_name(&info.name) {
            return Ok(Err(format!(
                "strategy name '{}' is not 1-64 lower-case letters, digits, '-' or '_'",
                info.name.chars().take(80).collect::<String>()
            )));
        }
        Ok(Ok(Identity {
            name: Some(info.name),
            version: info.version,
            description: bounded(&info.description, 500),
        }))
    }
}

/// A loaded, pre-linked strategy version.
pub type StrategyPlugin = Plugin<StrategyWorld>;

impl Plugin<StrategyWorld> {
    /// A fresh instance for one run that must end by `deadline`, under
    /// `permit` for all of its calls (it cannot outlive it). Blocking to
    /// use: drive it from `spawn_blocking`.
    pub fn instance<'p>(
        self: &Arc<Self>,
        permit: &'p Permit,
        deadline: Instant,
    ) -> Result<StrategyRun<'p>, PluginError> {
        let live = self.fresh_instance(permit)?;
        Ok(StrategyRun {
            columns: live.bindings.columns.is_some().then(empty_columns),
            usage: RunUsage {
                fuel: self.metered().then_some(0),
                ..RunUsage::default()
            },
            live,
            plugin: self.clone(),
            permit,
            deadline,
            weights: None,
        })
    }
}

/// One run's instance of a strategy; drives the accounting of
/// `forecast-backtest` through [`bt::Strategy`].
pub struct StrategyRun<'p> {
    plugin: Arc<StrategyPlugin>,
    permit: &'p Permit,
    live: Instance<StrategyWorld>,
    deadline: Instant,
    /// The context of the previous `rebalance-columns` call, whose lists are
    /// refilled for the next; `None` calls `allocation.rebalance`.
    columns: Option<cols::ColumnsContext>,
    /// What the calls so far used.
    usage: RunUsage,
    /// The request's weights by ticker, sent before `start`.
    weights: Option<Vec<(String, f64)>>,
}

fn empty_columns() -> cols::ColumnsContext {
    cols::ColumnsContext {
        date: 0,
        equity: 0.0,
        cash: 0.0,
        assets: cols::AssetColumns {
            asset: Vec::new(),
            price: Vec::new(),
            drawdown: Vec::new(),
            segment: Vec::new(),
            expected_return: Vec::new(),
            median_return: Vec::new(),
            prediction_error: Vec::new(),
            median_error: Vec::new(),
            zscore: Vec::new(),
            weight: Vec::new(),
        },
    }
}

/// Lays `ctx` out into `into`'s lists (cleared first); none is NaN, which
/// no `Some` of the accounting is (it maps NaN to none).
fn fill_columns(into: &mut cols::ColumnsContext, ctx: &bt::Context) {
    into.date = ctx.date;
    into.equity = ctx.equity;
    into.cash = ctx.cash;
    let c = &mut into.assets;
    let columns = [
        &mut c.price,
        &mut c.drawdown,
        &mut c.expected_return,
        &mut c.median_return,
        &mut c.prediction_error,
        &mut c.median_error,
        &mut c.zscore,
        &mut c.weight,
    ];
    for column in columns {
        column.clear();
    }
    c.asset.clear();
    c.segment.clear();
    let none_is_nan = |x: Option<f64>| x.unwrap_or(f64::NAN);
    for a in &ctx.assets {
        c.asset.push(a.asset);
        c.price.push(a.price);
        c.drawdown.push(a.drawdown);
        c.segment.push(a.segment);
        c.expected_return.push(a.expected_return);
        c.median_return.push(a.median_return);
        c.prediction_error.push(none_is_nan(a.prediction_error));
        c.median_error.push(none_is_nan(a.median_error));
        c.zscore.push(none_is_nan(a.zscore));
        c.weight.push(a.weight);
    }
}

impl StrategyRun<'_> {
    /// Calls `allocation.rebalance` for the rest of the run even when the
    /// component has `allocation-columns`: the two paths are checked against
    /// each other, and a strategy's answers must not depend on the path.
    pub fn with_records(mut self) -> Self {
        self.columns = None;
        self
    }

    /// Gives the run the request's weights by ticker (`allocation-weights`):
    /// a strategy without that interface then refuses the run at `start`.
    pub fn with_weights(mut self, weights: Option<&[(String, f64)]>) -> Self {
        self.weights = weights.map(<[_]>::to_vec);
        self
    }

    /// Whether the strategy takes weights (`allocation-weights`).
    pub fn takes_weights(&self) -> bool {
        self.live.bindings.weights.is_some()
    }

    /// Sends the weights before `start`: a refusal when the strategy takes
    /// none or a weighted asset is not in the run's `universe`.
    fn send_weights(
        &mut self,
        universe: &[wit::Asset],
    ) -> Result<Result<(), bt::ParamError>, RunFailure> {
        if !self.takes_weights() {
            return Ok(match self.weights {
                Some(_) => Err(bt::ParamError::new(
                    "weights",
                    format!(
                        "strategy {} takes no weights; 'portfolio' does (or leave weights out)",
                        self.plugin.label()
                    ),
                )),
                None => Ok(()),
            });
        }
        let mut list = Vec::new();
        for (ticker, weight) in self.weights.iter().flatten() {
            let Some(k) = universe.iter().position(|a| &a.ticker == ticker) else {
                return Ok(Err(bt::ParamError::new(
                    "weights",
                    format!(
                        "'{ticker}' cannot trade in this window: it needs {} rows of history by \
                         end_date and a price inside the window",
                        bt::MIN_HISTORY
                    ),
                )));
            };
            list.push(wts::AssetWeight {
                asset: k as u32,
                weight: *weight,
            });
        }
        let _call = guest_span!("set-weights", self.plugin.label()).entered();
        let answer = self.call(universe.len(), |store, b| {
            b.weights
                .as_ref()
                .expect("checked by takes_weights")
                .call_set_weights(store, &list)
        })?;
        Ok(
            answer
                .map_err(|e| bt::ParamError::new(bounded(&e.field, 64), bounded(&e.message, 500))),
        )
    }

    /// Whether the run's contexts go as columns (`allocation-columns`).
    pub fn takes_columns(&self) -> bool {
        self.columns.is_some()
    }

    /// What the run's calls used so far.
    pub fn usage(&self) -> RunUsage {
        self.usage
    }
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
    /// The run's calls used up [`FUEL_PER_RUN`] together.
    RunOutOfFuel {
        /// Label of the plugin.
        plugin: String,
    },
}

impl StrategyRun<'_> {
    /// One call of the run over `assets` assets on its instance, within
    /// what is left of the run (and its fuel budget when metered).
    fn call<R>(
        &mut self,
        assets: usize,
        f: impl FnOnce(&mut Store<CallState>, &StrategyExports) -> wasmtime::Result<R>,
    ) -> Result<R, RunFailure> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(RunFailure::RunTimedOut);
        }
        // A call gets its own budget, or what is left of the run's when
        // that is less.
        let run_left = FUEL_PER_RUN.saturating_sub(self.usage.fuel.unwrap_or(0));
        let run_bound = self.usage.fuel.is_some() && run_left < fuel_budget(assets);
        if run_bound && run_left == 0 {
            return Err(RunFailure::RunOutOfFuel {
                plugin: self.plugin.info().label(),
            });
        }
        let budget = fuel_budget(assets).min(run_left);
        if self.usage.fuel.is_some() {
            self.live
                .store
                .set_fuel(budget)
                .expect("fuel is enabled on a metered runtime");
            self.live.store.data_mut().fuel_budget = budget;
        }
        let started = Instant::now();
        let result = self
            .plugin
            .call_on(self.permit, &mut self.live, Some(left), f);
        self.usage.calls += 1;
        self.usage.guest += started.elapsed();
        if let Some(fuel) = self.usage.fuel.as_mut() {
            *fuel += budget - self.live.store.get_fuel().unwrap_or(0);
        }
        self.usage.peak_memory = self
            .usage
            .peak_memory
            .max(self.live.store.data().memory_in_use());
        self.usage.log_lines_dropped = self.live.store.data().log.dropped;
        result.map_err(|err| {
            if matches!(err, PluginError::Timeout { .. }) && Instant::now() >= self.deadline {
                RunFailure::RunTimedOut
            } else if matches!(err, PluginError::OutOfFuel { .. }) && run_bound {
                RunFailure::RunOutOfFuel {
                    plugin: self.plugin.info().label(),
                }
            } else {
                RunFailure::Plugin(err)
            }
        })
    }
}

fn metric_to_wit(m: bt::Metric) -> Metric {
    match m {
        bt::Metric::Return => Metric::TotalReturn,
        bt::Metric::Sharpe => Metric::Sharpe,
        bt::Metric::Sortino => Metric::Sortino,
    }
}

impl bt::Strategy for StrategyRun<'_> {
    type Error = RunFailure;

    fn start(
        &mut self,
        universe: &[bt::AssetMeta],
        params: &bt::RunParams,
    ) -> Result<Result<(), bt::ParamError>, RunFailure> {
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
                // WIT's schedule has no `never` (a strategy is called once):
                // a closed enum cannot grow within a major version.
                bt::Rebalance::Monthly | bt::Rebalance::Never => wit::Schedule::Monthly,
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
        if let Err(refused) = self.send_weights(&universe)? {
            return Ok(Err(refused));
        }
        let _call = guest_span!("start", self.plugin.label()).entered();
        let answer = self.call(universe.len(), |store, b| {
            b.records.call_start(store, &universe, params)
        })?;
        Ok(
            answer
                .map_err(|e| bt::ParamError::new(bounded(&e.field, 64), bounded(&e.message, 500))),
        )
    }

    fn rebalance(&mut self, ctx: &bt::Context) -> Result<Vec<bt::Target>, RunFailure> {
        let answer = match self.columns.take() {
            Some(mut columns) => {
                fill_columns(&mut columns, ctx);
                let _call = guest_span!(
                    tracing::Level::DEBUG,
                    "rebalance-columns",
                    self.plugin.label()
                )
                .entered();
                let answer = self.call(ctx.assets.len(), |store, b| {
                    b.columns
                        .as_ref()
                        .expect("columns are kept only for a component that has them")
                        .call_rebalance_columns(store, &columns)
                });
                self.columns = Some(columns);
                answer?
            }
            None => {
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
                let _call =
                    guest_span!(tracing::Level::DEBUG, "rebalance", self.plugin.label()).entered();
                self.call(ctx.assets.len(), |store, b| {
                    b.records.call_rebalance(store, &wit_ctx)
                })?
            }
        };
        match answer {
            Ok(targets) => Ok(targets
                .into_iter()
                .map(|t| bt::Target {
                    asset: t.asset,
                    weight: t.weight,
                })
                .collect()),
            Err(message) => Err(RunFailure::Refused {
                plugin: self.plugin.label().to_string(),
                message: bounded(&message, 500),
            }),
        }
    }
}

/// At most `n` characters of a guest-supplied string.
fn bounded(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}
