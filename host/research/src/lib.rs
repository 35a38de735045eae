//! Research on the prices, above the services: backtests of the built-in
//! and uploaded strategies over a universe, sweeps, walk-forward and Monte
//! Carlo runs, their tear sheets and tables ([`backtest`]), and authors'
//! uploaded strategies ([`authored`]). Like the services, it knows nothing
//! of HTTP; it answers with [`forecast_services::error::Error`] and runs
//! its heavy work within the services' budget.

pub mod authored;
pub mod backtest;
pub mod progress;
