//! `/api/admin/*`: the plugin registry's request bodies (the operator API;
//! guarded by the admin token).

use std::collections::BTreeMap;

use forecast_domain::PluginKind;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// A plugin version: the query of `POST /api/admin/plugins` and the body of
/// `POST /api/admin/plugins/activate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PluginVersion {
    /// The plugin's kind (its WIT world).
    #[schema(value_type = PluginKind)]
    #[param(value_type = PluginKind)]
    pub kind: String,
    /// Name within the kind (`default` for the built-in engine, scorer and
    /// matcher; a strategy's own name).
    pub name: String,
    /// Semantic version the component reports.
    #[schema(example = "1.1.0")]
    pub version: String,
}

/// A slot: the body of `POST /api/admin/plugins/rollback`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PluginSlot {
    /// The plugin's kind.
    #[schema(value_type = PluginKind)]
    pub kind: String,
    /// The active version's name.
    pub name: String,
}

/// The body of `POST /api/admin/shadow`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShadowRequest {
    /// The candidate's kind (only `segmentation` can be shadowed).
    #[schema(value_type = PluginKind)]
    pub kind: String,
    /// Candidate name.
    pub name: String,
    /// Candidate version.
    pub version: String,
    /// Share of live requests recomputed by the candidate, in (0, 1].
    #[schema(exclusive_minimum = 0.0, maximum = 1.0, example = 0.1)]
    pub sample: f64,
}

/// A stored version, as `POST /api/admin/plugins` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AddedPlugin {
    /// Kind.
    #[schema(value_type = PluginKind)]
    pub kind: String,
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Hex SHA-256 of the component.
    pub sha256: String,
    /// Size in bytes.
    pub size: i64,
}

/// `{active}`: what a slot serves after an activation or a rollback.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ActiveResponse {
    /// The version now active.
    pub active: ActiveVersion,
}

/// A version (kind, name, version).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ActiveVersion {
    /// Kind.
    #[schema(value_type = PluginKind)]
    pub kind: String,
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
}

/// `{shadow}`: the shadow run started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ShadowStarted {
    /// The run.
    pub shadow: ShadowRequest,
}

/// One row of `plugin list`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Listed {
    /// Kind.
    pub kind: PluginKind,
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Hex SHA-256.
    pub sha256: String,
    /// Bytes.
    pub size: i64,
    /// Whether it is the active version of its slot.
    pub active: bool,
    /// Whether it is being shadowed.
    pub shadow: bool,
    /// Registered from the binary.
    pub builtin: bool,
    /// Who added it.
    pub added_by: String,
    /// When (RFC 3339).
    pub added_at: String,
    /// Who activated the active version (with `(forced: <reason>)` when
    /// the evidence gate was overridden); absent for other versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activated_by: Option<String>,
}

/// `{plugins}`: every registered version, by kind, name, then when it was added.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PluginList {
    /// The versions.
    pub plugins: Vec<Listed>,
}

/// Latency summary of one side of a shadow run, milliseconds.
#[derive(Debug, Clone, Serialize, PartialEq, Deserialize, ToSchema)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

/// What an operator reads before promoting a candidate.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ShadowReport {
    /// The kind shadowed.
    pub kind: PluginKind,
    /// Candidate label, `kind/name@version`.
    pub candidate: String,
    /// Share of requests sampled.
    pub sample: f64,
    /// Comparisons made.
    pub samples: usize,
    /// Comparisons whose answers were identical.
    pub identical: usize,
    /// `identical / samples` (none before the first sample).
    pub identical_share: Option<f64>,
    /// Largest absolute difference seen per field (fields that differed).
    pub max_differences: BTreeMap<String, f64>,
    /// Latency of the active version on the sampled requests.
    pub active_latency_ms: Option<Latency>,
    /// Latency of the candidate on the same requests.
    pub candidate_latency_ms: Option<Latency>,
    /// Candidate failures.
    pub errors: usize,
    /// Up to five of their messages.
    pub error_examples: Vec<String>,
    /// Active versions it was compared with.
    pub compared_with: Vec<String>,
}
