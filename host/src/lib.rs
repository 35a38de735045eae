//! The `forecast` binary: `main.rs` parses the command line; [`cli`] runs
//! the commands, [`app`] wires the crates below into a service and
//! [`server`] serves it (deadlines, connection cap, graceful shutdown):
//!
//! ```text
//! forecast-domain → forecast-api, forecast-store, forecast-plugins, forecast-embed
//!                 → forecast-services, forecast-ingest → forecast-http → forecast-host
//! ```
//!
//! The crates are re-exported so tests and benchmarks reach every one
//! through one name.

pub mod app;
pub mod cli;
mod cli_alerts;
mod cli_fetch;
mod cli_matcher;
mod cli_plugin;
pub mod config;
pub mod server;
pub mod telemetry;

pub use forecast_domain as domain;
pub use forecast_domain::series;
pub use forecast_http as http;
pub use forecast_ingest::{self as ingest, demo};
pub use forecast_jobs::grading;
pub use forecast_plugins as plugins;
pub use forecast_research::backtest;
pub use forecast_services::{active, analysis, auth, matcher, registry, verdict};
pub use forecast_store as store;
