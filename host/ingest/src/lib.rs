//! The data pipeline: how prices and asset facts reach the store. Nothing
//! here serves a request; the services read what this crate wrote.
//!
//! - [`demo`]: the demo universe (the catalog, the shipped real histories
//!   of `data/prices/`, synthetic prices for the rest) on a fresh database.
//! - [`files`]: `forecast ingest` of CSV files, validated whole-file.
//! - [`plausible`]: the rules every ingested price obeys (dates, price
//!   range, jumps, history length).
//! - [`providers`]: the live price providers (Yahoo, Stooq) and the fetch
//!   of a selection of assets from one of them.
//! - [`refresh`]: the scheduled daily refresh, shared by replicas.
//! - [`metadata`]: asset metadata from the catalog.
//!
//! It depends on the domain and the store only.

pub mod demo;
pub mod files;
pub mod metadata;
pub mod plausible;
pub mod providers;
pub mod refresh;
