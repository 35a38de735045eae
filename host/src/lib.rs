//! Forecast Engine host, layer 5: the composition root. `main.rs` only
//! parses the command line; [`cli`] runs the commands, [`app`] wires the
//! layers below into a service and [`server`] serves it (deadlines,
//! connection cap, graceful shutdown):
//!
//! ```text
//! forecast-domain → forecast-store, forecast-plugins → forecast-services
//!                 → forecast-http → forecast-host (this crate)
//! ```
//!
//! The layer crates are re-exported so tests and benchmarks reach every
//! layer through one name.

pub mod app;
pub mod cli;
mod cli_fetch;
mod cli_matcher;
mod cli_plugin;
pub mod config;
pub mod server;

pub use forecast_domain as domain;
pub use forecast_domain::series;
pub use forecast_http as http;
pub use forecast_plugins as plugins;
pub use forecast_services::{
    active, analysis, auth, backtest, demo, grading, ingest, matcher, metadata, registry, verdict,
};
pub use forecast_store as store;
