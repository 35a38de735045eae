//! Every integration test, in one test binary so the host is linked once
//! (it was eight binaries, one per file, each linking wasmtime, sqlx and
//! axum). A module per former file. Two harnesses in [`common`]:
//!
//! - [`common::App`], in process: the real router over a private copy of
//!   the demo database, called without a socket. For tests whose subject
//!   is handler behaviour (status codes, bodies, headers, validation, auth,
//!   quotas, sessions, keys, OpenAPI, matcher, backtests, grading).
//! - [`common::Server`], end to end: the real `forecast serve` on port 0.
//!   For what needs a process or a socket: the CLI, PostgreSQL replicas,
//!   the banner and graceful shutdown, raw HTTP, hot swap under load,
//!   server logs, and a smoke test of each main route ([`smoke`]).

#[path = "../common/mod.rs"]
mod common;
/// A fake Yahoo / Stooq server (`fetch`, `replicas`).
#[path = "../common/fake_provider.rs"]
mod fake_provider;

mod alerts;
mod api;
mod auth;
mod backtest;
mod bundles;
mod cli;
mod evidence_oracle;
mod exports;
mod fetch;
mod forecasts;
mod grading;
mod guest_strategies;
mod hardening_backtest;
mod hardening_clients;
mod hardening_defaults;
mod hardening_http;
mod hardening_login;
mod hardening_quota;
mod hardening_small;
mod heavy_budget;
mod incremental_grading;
mod matcher;
mod monte_carlo;
mod plausible_prices;
mod plugins;
mod portfolio;
mod progress;
mod python_strategies;
mod replicas;
mod request_path;
mod research;
mod shutdown;
mod smoke;
mod strategy_templates;
mod strategy_uploads;
mod telemetry;
mod track_record;
mod ts_strategies;
mod upload_abuse;
mod usage;
mod web;
