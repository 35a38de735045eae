//! The crate's one error type: each message names what was wrong.

/// Why a bundle, manifest or key was refused.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The input does not start with the bundle magic.
    #[error("not a plugin bundle: bad magic (expected a file starting with \"FEBUNDLE1\")")]
    BadMagic,
    /// The input ends before a part it announces.
    #[error("truncated bundle: it ends inside the {0}")]
    Truncated(&'static str),
    /// The announced manifest length is out of bounds.
    #[error("bundle manifest length {0} bytes is out of bounds (at most {max} bytes)", max = crate::MAX_MANIFEST_BYTES)]
    ManifestLength(usize),
    /// The manifest is not the expected JSON object.
    #[error("bundle manifest is not valid: {0}")]
    ManifestJson(String),
    /// A manifest field is missing, empty, too long or has a wrong value.
    #[error("manifest field `{field}`: {reason}")]
    ManifestField {
        /// The field's name.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The embedded public key is not a valid ed25519 key.
    #[error("bundle signer key is not a valid ed25519 public key")]
    BadPublicKey,
    /// The signature does not verify for the embedded key.
    #[error("signature does not verify: the manifest or the component was changed after signing, or the signature was not made by {signer}")]
    Signature {
        /// The embedded key's id.
        signer: String,
    },
    /// The manifest's sha256 is not the component's.
    #[error("sha256 mismatch: the manifest says {manifest}, the component's is {actual}")]
    Sha256Mismatch {
        /// What the manifest says.
        manifest: String,
        /// The component's.
        actual: String,
    },
    /// The payload is not a Wasm component (binary).
    #[error("bundle payload is not a WebAssembly binary (it does not start with \\0asm)")]
    NotWasm,
    /// A signing key file could not be read or parsed.
    #[error("signing key {path}: {reason}")]
    KeyFile {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}
