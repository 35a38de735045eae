//! Forecast Engine host library: everything `forecast` does lives here so
//! that it is testable; `main.rs` only parses the command line.

pub mod domain;
pub mod plugins;
pub mod series;
pub mod store;
