//! The plugin registry (issue 6): versions in the store, the checks a
//! version must pass before it is activated, activation and rollback, and
//! shadow runs. Shared by the operator CLI (`forecast plugin …`) and the
//! admin API (`/api/admin/…`), which both act on the store; running servers
//! pick changes up by polling the store's plugins generation
//! ([`crate::active::Plugins::sync`]).
//!
//! * [`kinds`]: which kinds exist, their slots, valid names and versions;
//! * [`loading`]: a component compiled as its kind's world ([`Loaded`]);
//! * [`self_test`]: the vectors a candidate of each kind must pass;
//! * [`lifecycle`]: add, activate, roll back, shadow, list;
//! * [`report`]: the shadow run's report and [`json_differences`];
//! * [`builtins`]: the components embedded in the binary;
//! * [`service`]: the admin API's [`RegistryService`].

pub mod builtins;
pub mod kinds;
pub mod lifecycle;
pub mod loading;
pub mod report;
pub mod self_test;
pub mod service;

#[cfg(test)]
mod tests;

pub use crate::error::Error;
pub use builtins::{builtins, ensure_builtins, BUILTIN};
pub use forecast_api::admin::{Latency, Listed, ShadowReport};
pub use kinds::{parse_kind, slot, valid_version, SHADOW_KINDS};
pub use lifecycle::{
    activate, add, list, rollback, start_shadow, stop_shadow, MAX_COMPONENT_BYTES,
};
pub use loading::{load, load_checked, Loaded};
pub use report::{json_differences, shadow_report};
pub use self_test::self_test;
pub use service::RegistryService;
