//! What the integration tests (`tests/it`) and the benchmarks share, dev-only:
//! [`client`], the HTTP client of both harnesses (a socket to `forecast
//! serve`, or the router in process), and [`api`], the typed client over the
//! `forecast-api` types on top of it. The server harnesses themselves stay
//! in `tests/common/`: they start the `forecast` binary crate, which this
//! crate must not depend on (it is the crate the tests belong to).

pub mod api;
pub mod client;

pub use api::{login, Api, Auth, Refusal};
