//! What the integration tests (`tests/it`) and the benchmarks share, dev-only:
//! [`client`], the HTTP client of both harnesses (a socket to `forecast
//! serve`, or the router in process), and [`api`], the typed client over the
//! `forecast-api` types on top of it. The server harnesses themselves stay
//! in `tests/common/`: they start the `forecast` binary crate, which this
//! crate must not depend on (it is the crate the tests belong to).

pub mod api;
pub mod api_alerts;
mod api_assets;
pub mod api_health;
mod api_refused;
mod api_strategies;
pub mod api_wire;
pub mod client;

pub use api::{login, units_left, Api, Auth, Refusal};
pub use api_refused::Refused;
pub use api_strategies::{BUNDLE, WASM};
pub use api_wire::exactly;
