//! The response body of a run: the report's columns, the strategy and
//! engine that made it, and what of the universe it used.

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use forecast_api::assets::DataSources;
use forecast_api::backtest::{
    BacktestMetadata, BacktestResponse, BenchmarkBody, EquityPoint, MetricsBody, PluginUsage,
    RelativeMetrics, TradeBody, UnusableAsset, ValidRequest, MAX_UNUSABLE_LISTED,
};
use forecast_backtest as bt;
use forecast_domain::series::{from_days, PriceSeries};
use forecast_domain::Asset;
use forecast_plugins::strategy::RunUsage;
use forecast_plugins::StrategyPlugin;

use super::validation::unusable_reason;

/// How much of the requested universe a run used, and of what provenance.
pub(super) struct DataUse {
    sources: DataSources,
    unusable_count: usize,
    unusable: Vec<UnusableAsset>,
}

impl DataUse {
    /// What the run used of `universe` and what it could not: `kept` are
    /// the universe indexes given to the run, `used` the indexes of `kept`
    /// its report kept.
    pub(super) fn of(
        universe: &[(Asset, Arc<PriceSeries>)],
        kept: &[usize],
        used_of_kept: &[usize],
        window: bt::Window,
    ) -> DataUse {
        let mut used = vec![false; universe.len()];
        for &k in used_of_kept {
            used[kept[k]] = true;
        }
        DataUse {
            sources: DataSources::count(
                universe
                    .iter()
                    .zip(&used)
                    .filter(|(_, &u)| u)
                    .map(|((a, _), _)| a.data_source),
            ),
            unusable_count: used.iter().filter(|&&u| !u).count(),
            unusable: universe
                .iter()
                .zip(&used)
                .filter(|(_, &u)| !u)
                .take(MAX_UNUSABLE_LISTED)
                .map(|((a, s), _)| UnusableAsset {
                    ticker: a.ticker.clone(),
                    last_price_date: s.dates.last().map(|&d| from_days(d)),
                    reason: unusable_reason(s, window),
                })
                .collect(),
        }
    }
}

/// The body of a finished run.
#[allow(clippy::too_many_arguments)]
pub(super) fn shape(
    mut report: bt::Report,
    inputs: &[bt::AssetInput<'_>],
    strategy: &StrategyPlugin,
    engine_version: &str,
    req: &ValidRequest,
    signals_cached: usize,
    data: DataUse,
    usage: RunUsage,
    calculated_at: DateTime<Utc>,
) -> BacktestResponse {
    // The report's columns move into the body; only the dates are
    // converted, once, and shared by the curve and the two benchmarks.
    let dates: Vec<NaiveDate> = report.dates.iter().map(|&d| from_days(d)).collect();
    BacktestResponse {
        equity_curve: dates
            .iter()
            .zip(&report.equity)
            .map(|(&date, &equity)| EquityPoint { date, equity })
            .collect(),
        trades: trades(&report, inputs),
        metrics: metrics(&report),
        benchmarks: std::mem::take(&mut report.benchmarks)
            .into_iter()
            .map(|(name, curve)| {
                (
                    name.to_string(),
                    BenchmarkBody {
                        dates: dates.clone(),
                        equity: curve,
                    },
                )
            })
            .collect(),
        metadata: metadata(
            &report,
            inputs,
            &dates,
            strategy,
            engine_version,
            req,
            signals_cached,
            data,
            usage,
            calculated_at,
        ),
    }
}

/// The trades the body carries, tickers named.
fn trades(report: &bt::Report, inputs: &[bt::AssetInput<'_>]) -> Vec<TradeBody> {
    let ticker = |k: usize| inputs[report.universe[k]].meta.ticker.clone();
    // The kept trades are the first ones in date order, so the average
    // cost of each is known exactly even when later ones were left out.
    let (pnl, _) = bt::pnl::realised(&report.trades, report.universe.len());
    report
        .trades
        .iter()
        .zip(pnl)
        .map(|(t, realised_pnl)| TradeBody {
            date: from_days(t.date),
            ticker: ticker(t.asset),
            side: match t.side {
                bt::Side::Buy => "BUY",
                bt::Side::Sell => "SELL",
            }
            .to_string(),
            qty: t.qty,
            price: t.price,
            cost: t.cost,
            realised_pnl,
        })
        .collect()
}

pub(super) fn metrics(report: &bt::Report) -> MetricsBody {
    let (m, r) = (&report.metrics, &report.risk);
    MetricsBody {
        total_return: m.total_return,
        cagr: m.cagr,
        sharpe_ratio: m.sharpe_ratio,
        sortino_ratio: m.sortino_ratio,
        max_drawdown: m.max_drawdown,
        final_equity: m.final_equity,
        years: m.years,
        total_costs: m.total_costs,
        cost_drag_pct: m.cost_drag_pct,
        total_trades: m.total_trades,
        calmar_ratio: r.calmar_ratio,
        ulcer_index: r.ulcer_index,
        longest_drawdown_days: r.longest_drawdown_days,
        longest_drawdown_recovery_days: r.longest_drawdown_recovery_days,
        var_95: r.var_95,
        cvar_95: r.cvar_95,
        exposure: r.exposure,
        turnover: r.turnover,
        best_month: r.best_month,
        worst_month: r.worst_month,
        winning_months: r.winning_months,
        relative: report
            .relative
            .iter()
            .map(|(name, rel)| {
                (
                    name.to_string(),
                    RelativeMetrics {
                        beta: rel.beta,
                        alpha: rel.alpha,
                        tracking_error: rel.tracking_error,
                        information_ratio: rel.information_ratio,
                    },
                )
            })
            .collect(),
    }
}

#[allow(clippy::too_many_arguments)]
fn metadata(
    report: &bt::Report,
    inputs: &[bt::AssetInput<'_>],
    dates: &[NaiveDate],
    strategy: &StrategyPlugin,
    engine_version: &str,
    req: &ValidRequest,
    signals_cached: usize,
    data: DataUse,
    usage: RunUsage,
    calculated_at: DateTime<Utc>,
) -> BacktestMetadata {
    let cost_bps = report
        .universe
        .iter()
        .map(|&i| (inputs[i].meta.category.clone(), inputs[i].cost_bps))
        .collect();
    BacktestMetadata {
        assets_count: report.universe.len(),
        data_points: report.data_points,
        rebalance_dates: report.rebalance_dates,
        calculated_at,
        // An upload as the request named it, without a pinned version.
        strategy: match crate::authored::StrategyRef::parse(&req.strategy) {
            Some(r) => format!("@{}/{}", r.handle, r.name),
            None => strategy.info().name.clone(),
        },
        strategy_version: strategy.info().version.clone(),
        engine_version: engine_version.to_string(),
        start_date: dates.first().copied().unwrap_or_default(),
        end_date: dates.last().copied().unwrap_or_default(),
        periods_per_year: report.periods_per_year,
        include_costs: req.params.include_costs,
        cost_bps,
        signals_cached,
        decay_factor: Some(req.params.decay_factor),
        trades_total: Some(report.trades_total),
        trades_truncated: Some(report.trades_total > report.trades.len() as u64),
        data_sources: data.sources,
        unusable_assets_count: data.unusable_count,
        unusable_assets: data.unusable,
        plugin_usage: vec![PluginUsage {
            plugin: strategy.info().label(),
            calls: usage.calls,
            fuel: usage.fuel,
            guest_ms: usage.guest.as_secs_f64() * 1e3,
            peak_memory_bytes: usage.peak_memory as u64,
            log_lines_dropped: usage.log_lines_dropped,
        }],
        benchmarks_left_out: Vec::new(),
    }
}
