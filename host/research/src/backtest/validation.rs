//! The checks of a request against what the server holds (its strategy,
//! its window), and why an asset could not take part in a run.

use std::sync::Arc;

use chrono::{Months, NaiveDate};
use forecast_api::backtest::{ValidRequest, DEFAULT_YEARS};
use forecast_backtest as bt;
use forecast_domain::series::{from_days, PriceSeries};
use forecast_domain::Asset;
use forecast_plugins::StrategyPlugin;

use forecast_services::active::Plugins;
use forecast_services::error::Error;

/// The loaded strategy `name`, else a 400 listing the loaded ones.
pub(super) fn strategy(plugins: &Plugins, name: &str) -> Result<Arc<StrategyPlugin>, Error> {
    plugins.strategy(name).ok_or_else(|| {
        Error::Invalid(format!(
            "strategy: unknown strategy '{}'; loaded strategies: {}",
            forecast_api::quote(name),
            plugins.strategy_names().join(", ")
        ))
    })
}

/// The run's window: the request's dates, else up to the universe's latest
/// price and [`DEFAULT_YEARS`] back from the end; a 400 when the universe
/// has no prices or the window is empty.
pub(super) fn window(
    req: &ValidRequest,
    universe: &[(Asset, Arc<PriceSeries>)],
) -> Result<(NaiveDate, NaiveDate), Error> {
    let latest = universe
        .iter()
        .filter_map(|(_, s)| s.dates.last().copied())
        .max();
    let Some(latest) = latest else {
        return Err(Error::Invalid("the universe has no price data".into()));
    };
    let end = req.end_date.unwrap_or_else(|| from_days(latest));
    let start = req.start_date.unwrap_or_else(|| {
        end.checked_sub_months(Months::new(12 * DEFAULT_YEARS))
            .unwrap_or(end)
    });
    if start > end {
        return Err(Error::Invalid(format!(
            "start_date {start} is after the end of the window {end}"
        )));
    }
    Ok((start, end))
}

/// Why an asset left out of a run's universe was left out (the rule of
/// [`bt::Report::universe`]: a price inside the window and
/// [`bt::MIN_HISTORY`] rows by its end).
pub(super) fn unusable_reason(series: &PriceSeries, window: bt::Window) -> String {
    let (Some(&first), Some(&last)) = (series.dates.first(), series.dates.last()) else {
        return "no prices stored".to_string();
    };
    let (start, end) = (from_days(window.start), from_days(window.end));
    if last < window.start {
        return format!(
            "its last price ({}) is before the window starts ({start})",
            from_days(last)
        );
    }
    if first > window.end {
        return format!(
            "its first price ({}) is after the window ends ({end})",
            from_days(first)
        );
    }
    let by_end = series.dates.partition_point(|&d| d <= window.end);
    let in_window = by_end - series.dates.partition_point(|&d| d < window.start);
    if in_window == 0 {
        return format!("no price between {start} and {end}");
    }
    format!(
        "only {by_end} price rows by {end}; {} are needed for signals",
        bt::MIN_HISTORY
    )
}
