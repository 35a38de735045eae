//! Forecast Engine host library: everything `forecast` does lives here so
//! that it is testable; `main.rs` only parses the command line.
//!
//! Map: [`http`] (routes, errors, Bearer guard and quotas, sessions,
//! OpenAPI) → services ([`analysis`], [`metadata`], [`auth`]) → [`store`]
//! (SQLite or PostgreSQL) and [`plugins`] (the wasmtime sandbox running the
//! Wasm components). [`demo`] and [`ingest`] fill the store; [`cli`] and
//! [`app`] wire it all together.

pub mod analysis;
pub mod app;
pub mod auth;
pub mod backtest;
pub mod cli;
mod cli_plugin;
pub mod config;
pub mod demo;
pub mod domain;
pub mod grading;
pub mod http;
pub mod ingest;
pub mod llm;
pub mod matcher;
pub mod metadata;
pub mod plugins;
pub mod registry;
pub mod series;
pub mod store;
pub mod verdict;
