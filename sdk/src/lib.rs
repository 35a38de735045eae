//! Forecast Engine strategy SDK.
//!
//! This crate is a documented placeholder: the `strategy` WIT world, the typed
//! context, the export macro and the native test harness arrive with the
//! backtest work (issue 5). Until then the workspace reserves the name so that
//! strategy authors and the build layout do not change later.
#![deny(missing_docs)]

/// Version of the WIT package (`forecast:plugins`) this SDK targets.
pub const WIT_PACKAGE_VERSION: &str = "1.0.0";
