//! Strategies uploaded by their authors (issue 26): what an upload
//! answers and what an owner may change.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A stored version of an uploaded strategy (`POST /api/strategies`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UploadedStrategy {
    /// What `strategy` names in a backtest request: `@handle/name`
    /// (add `@version` to pin a version).
    #[schema(example = "@u3f2a91c0d4/dip-buyer")]
    pub strategy: String,
    /// The version this upload stored (what the component reports).
    #[schema(example = "0.1.0")]
    pub version: String,
    /// Hex SHA-256 of the component; (owner, name, version) keeps it forever.
    pub sha256: String,
    /// Size of the component in bytes.
    pub size: i64,
    /// What it does, in its author's words.
    pub description: String,
    /// Every import of the component: the `strategy` world's, and WASI
    /// interfaces of a Rust standard library, which are linked as traps.
    pub imports: Vec<String>,
    /// Key id of the bundle's signer (`ed25519:…`); null when unsigned.
    pub signer: Option<String>,
    /// The version that runs when a request names none.
    pub current_version: String,
    /// Runnable by every Premium user (false: by its owner only).
    pub shared: bool,
    /// False when this exact version was already stored (the same bytes).
    pub created: bool,
}

/// `PATCH /api/strategies/{handle}/{name}`: what to change (at least one).
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StrategyChange {
    /// Share with every Premium user (true) or keep it to yourself (false).
    pub shared: Option<bool>,
    /// The stored version that runs when a request names none.
    #[schema(example = "0.1.0")]
    pub current_version: Option<String>,
}

/// An uploaded strategy after a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StrategyState {
    /// `@handle/name`.
    pub strategy: String,
    /// The version that runs when a request names none.
    pub current_version: String,
    /// Runnable by every Premium user.
    pub shared: bool,
    /// Every stored version, newest first.
    pub versions: Vec<String>,
}
