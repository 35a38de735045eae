//! Signed plugin bundles: a Wasm component, its manifest and an ed25519
//! signature over both, in one file (`.febundle`).
//!
//! # Byte format (version 1)
//!
//! ```text
//! offset        size  content
//! 0             10    magic b"FEBUNDLE1\n"
//! 10            4     M: length of the manifest JSON, u32 little-endian, 2..=16384
//! 14            M     the manifest: UTF-8 JSON object (see [`Manifest`])
//! 14+M          64    ed25519 signature (R ‖ S)
//! 78+M          32    the signer's ed25519 public key
//! 110+M         rest  the Wasm component (starts with b"\0asm")
//! ```
//!
//! The signature covers the message
//!
//! ```text
//! b"forecast-plugin-bundle-v1\0" ‖ M (u32 LE) ‖ manifest JSON bytes ‖ sha256(component) (32 bytes)
//! ```
//!
//! so neither the manifest nor the component can be swapped for another
//! without the signature failing, and no signature made for another
//! purpose verifies as a bundle's. The manifest also names the component's
//! sha256 in hex, which [`open`] checks against the component.
//! Verification is `verify_strict` (no malleable or small-order keys).
//!
//! A bare component starts with `\0asm`; a bundle with the magic, so
//! [`is_bundle`] tells them apart.
//!
//! # Key ids
//!
//! A public key is named `ed25519:` followed by the standard base64 (with
//! padding) of its 32 bytes ([`key_id`]): the form the operator lists in
//! `FORECAST_PLUGIN_TRUST` and listings show as the signer.
//!
//! # Trust policy
//!
//! [`TrustPolicy`]: which signers are accepted (an empty list: any valid
//! signature) and whether unsigned bare components are (`FORECAST_PLUGIN_UNSIGNED`).
//! See `docs/PLUGIN_BUNDLES.md`.
//!
//! # Features
//!
//! `publish`: uploads to a server's `POST /api/strategies` (http and https).
//! `cli`: the bundle tools (`cli`: keygen, sign, verify, publish) and the
//! `forecast-plugin` binary, which `forecast plugin …` also runs.

#[cfg(feature = "cli")]
pub mod cli;
mod error;
mod format;
mod key;
mod manifest;
#[cfg(feature = "publish")]
pub mod publish;
mod trust;

pub use ed25519_dalek::{SigningKey, VerifyingKey};
pub use error::BundleError;
pub use format::{
    is_bundle, open, sha256_hex, sign, Opened, MAGIC, MAX_MANIFEST_BYTES, SIGNED_PREFIX,
};
pub use key::{generate_key, key_id, parse_key_id, read_key, write_key};
pub use manifest::{
    Manifest, MAX_AUTHOR, MAX_DESCRIPTION, MAX_LICENCE, MAX_NAME, MAX_VERSION, WORLD_STRATEGY,
};
pub use trust::TrustPolicy;

/// The media type of a bundle in HTTP (`POST /api/strategies`).
pub const BUNDLE_CONTENT_TYPE: &str = "application/vnd.forecast.bundle";
/// The media type of a bare Wasm component.
pub const WASM_CONTENT_TYPE: &str = "application/wasm";

#[cfg(test)]
mod tests;
