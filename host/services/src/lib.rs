//! Layer 2 of the host: the services. [`error::Error`] is the one error
//! type they answer with. Each is built from the narrow handles
//! it uses (a store trait object, the active plugin set, limits) and knows
//! nothing of HTTP: no status codes, no routers.
//!
//! [`active`] is the set of active plugin versions every service answers
//! with, following the registry ([`registry`]) in the store.

pub mod active;
pub mod analysis;
pub mod auth;
pub mod backtest;
pub mod demo;
pub mod error;
pub mod grading;
pub mod ingest;
pub mod keys;
pub mod matcher;
pub mod metadata;
pub mod ranking;
pub mod registry;
pub mod sessions;
pub mod verdict;
pub mod watchlist;
