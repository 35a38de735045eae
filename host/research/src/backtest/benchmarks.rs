//! Benchmarks chosen by ticker: any active asset of the catalog, bought
//! with the initial capital at its last close on or before the window's
//! first day and held without costs, beside the two equal-weight baskets
//! the accounting draws itself. Without `benchmarks` the run gets
//! [`DEFAULT_BENCHMARK`] when its prices cover the window.

use std::sync::Arc;

use forecast_api::backtest::{
    BacktestResponse, BenchmarkBody, RelativeMetrics, ValidRequest, DEFAULT_BENCHMARK,
};
use forecast_backtest as bt;
use forecast_domain::series::PriceSeries;
use forecast_domain::Asset;
use forecast_store::AssetStore;

use super::cache::SignalCache;
use forecast_services::error::Error;

/// The benchmark assets of `req`, in its order: an unknown or inactive
/// ticker the request named is a 400 (before any wait); the default one is
/// simply left out when the catalog lacks it.
pub(super) async fn resolve(db: &dyn AssetStore, req: &ValidRequest) -> Result<Vec<Asset>, Error> {
    let Some(named) = &req.benchmarks else {
        return Ok(match db.asset_by_ticker(DEFAULT_BENCHMARK).await? {
            Some(a) if a.is_active => vec![a],
            _ => Vec::new(),
        });
    };
    let mut out = Vec::with_capacity(named.len());
    for t in named {
        match db.asset_by_ticker(t).await? {
            Some(a) if a.is_active => out.push(a),
            _ => {
                return Err(Error::Invalid(format!(
                    "benchmarks: unknown or inactive ticker '{}'",
                    forecast_api::quote(t)
                )))
            }
        }
    }
    Ok(out)
}

/// The histories of `assets` as the universe's are read
/// ([`super::universe::history`]), as `(ticker, series)`.
pub(super) async fn load(
    db: &dyn AssetStore,
    cache: &SignalCache,
    assets: Vec<Asset>,
) -> Result<Vec<(String, Arc<PriceSeries>)>, Error> {
    let mut out = Vec::with_capacity(assets.len());
    for a in assets {
        let (series, _) = super::universe::history(db, cache, &a).await?;
        out.push((a.ticker, series));
    }
    Ok(out)
}

/// The curves and figures of the benchmarks over a run's calendar.
#[derive(Default)]
pub(super) struct Curves {
    /// `(ticker, equity, figures against the run)`, in request order.
    held: Vec<(String, Vec<f64>, bt::risk::Relative)>,
    /// Tickers whose prices start after the window's first day.
    left_out: Vec<String>,
}

/// Each benchmark's equity on `dates` (days since 1970-01-01, the run's
/// calendar): `capital` times its last close on or before each date over
/// its last close on or before the first one; left out without the latter
/// or without a close after the first date inside the window.
pub(super) fn curves(
    benchmarks: &[(String, Arc<PriceSeries>)],
    dates: &[i32],
    equity: &[f64],
    capital: f64,
    periods_per_year: u32,
) -> Curves {
    let mut out = Curves::default();
    for (ticker, s) in benchmarks {
        let close_on = |d: i32| match s.dates.partition_point(|&x| x <= d) {
            0 => None,
            i => Some(s.closes[i - 1]),
        };
        let first = dates
            .first()
            .and_then(|&d| close_on(d))
            .filter(|p| *p > 0.0);
        // A price after the first day inside the window: else the curve
        // would be a flat line of a history that ended before it.
        let moves = match (dates.first(), dates.last()) {
            (Some(&a), Some(&b)) => s.dates.iter().any(|&d| d > a && d <= b),
            _ => false,
        };
        let (Some(first), true) = (first, moves) else {
            out.left_out.push(ticker.clone());
            continue;
        };
        let curve: Vec<f64> = dates
            .iter()
            .map(|&d| capital * close_on(d).unwrap_or(first) / first)
            .collect();
        let relative = bt::risk::relative(equity, &curve, periods_per_year);
        out.held.push((ticker.clone(), curve, relative));
    }
    out
}

/// Adds the benchmarks' curves, figures and the ones left out to `body`.
pub(super) fn attach(body: &mut BacktestResponse, curves: Curves) {
    let dates: Vec<_> = body.equity_curve.iter().map(|p| p.date).collect();
    for (ticker, equity, rel) in curves.held {
        body.metrics.relative.insert(
            ticker.clone(),
            RelativeMetrics {
                beta: rel.beta,
                alpha: rel.alpha,
                tracking_error: rel.tracking_error,
                information_ratio: rel.information_ratio,
            },
        );
        body.benchmarks.insert(
            ticker,
            BenchmarkBody {
                dates: dates.clone(),
                equity,
            },
        );
    }
    body.metadata.benchmarks_left_out = curves.left_out;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_benchmark_is_held_from_its_last_close_on_or_before_the_first_day() {
        let s = Arc::new(PriceSeries {
            dates: vec![10, 12, 15],
            closes: vec![50.0, 100.0, 75.0],
        });
        let late = Arc::new(PriceSeries {
            dates: vec![12, 13],
            closes: vec![1.0, 2.0],
        });
        let ended = Arc::new(PriceSeries {
            dates: vec![1, 2],
            closes: vec![1.0, 2.0],
        });
        let list = vec![
            ("X".to_string(), s),
            ("LATE".to_string(), late),
            ("ENDED".to_string(), ended),
        ];
        let equity = [1000.0, 1100.0, 1000.0, 900.0];
        let c = curves(&list, &[11, 12, 14, 15], &equity, 1000.0, 252);
        assert_eq!(c.left_out, ["LATE", "ENDED"]);
        assert_eq!(c.held.len(), 1);
        let (ticker, curve, _) = &c.held[0];
        assert_eq!(ticker, "X");
        // 50 on day 11 (day 10's close), 100 on 12 and 14, 75 on 15.
        assert_eq!(curve, &[1000.0, 2000.0, 2000.0, 1500.0]);
    }
}
