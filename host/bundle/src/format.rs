//! The byte format: writing ([`sign`]) and reading ([`open`]) a bundle.

use ed25519_dalek::{
    Signature, Signer as _, SigningKey, VerifyingKey, PUBLIC_KEY_LENGTH, SIGNATURE_LENGTH,
};
use sha2::{Digest as _, Sha256};

use crate::key::key_id;
use crate::{BundleError, Manifest};

/// The first bytes of every bundle.
pub const MAGIC: &[u8] = b"FEBUNDLE1\n";
/// The domain-separation prefix of the signed message.
pub const SIGNED_PREFIX: &[u8] = b"forecast-plugin-bundle-v1\0";
/// The largest manifest JSON a bundle may carry, in bytes.
pub const MAX_MANIFEST_BYTES: usize = 16 * 1024;
/// What a WebAssembly binary (module or component) starts with.
const WASM_MAGIC: &[u8] = b"\0asm";

/// A verified bundle.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The Wasm component.
    pub component: Vec<u8>,
    /// Its manifest (validated).
    pub manifest: Manifest,
    /// The signer's key id (`ed25519:…`); the signature verified for it.
    /// Whether the signer is trusted is the [`crate::TrustPolicy`]'s call.
    pub signer: String,
}

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Whether `bytes` are a bundle (by the magic; a bare component starts
/// with `\0asm`).
pub fn is_bundle(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The message the signature covers.
fn signed_message(manifest_json: &[u8], component_sha256: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(SIGNED_PREFIX.len() + 4 + manifest_json.len() + 32);
    m.extend_from_slice(SIGNED_PREFIX);
    m.extend_from_slice(&(manifest_json.len() as u32).to_le_bytes());
    m.extend_from_slice(manifest_json);
    m.extend_from_slice(component_sha256);
    m
}

/// Bundles `component` with `manifest`, signed by `key`. The manifest must
/// be valid and name the component's sha256.
pub fn sign(
    component: &[u8],
    manifest: &Manifest,
    key: &SigningKey,
) -> Result<Vec<u8>, BundleError> {
    manifest.validate()?;
    if !component.starts_with(WASM_MAGIC) {
        return Err(BundleError::NotWasm);
    }
    let digest = Sha256::digest(component);
    let actual = hex::encode(digest);
    if manifest.sha256 != actual {
        return Err(BundleError::Sha256Mismatch {
            manifest: manifest.sha256.clone(),
            actual,
        });
    }
    let json =
        serde_json::to_vec(manifest).map_err(|e| BundleError::ManifestJson(e.to_string()))?;
    if json.len() > MAX_MANIFEST_BYTES {
        return Err(BundleError::ManifestLength(json.len()));
    }
    let signature = key.sign(&signed_message(&json, &digest));
    let mut out = Vec::with_capacity(
        MAGIC.len() + 4 + json.len() + SIGNATURE_LENGTH + PUBLIC_KEY_LENGTH + component.len(),
    );
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&signature.to_bytes());
    out.extend_from_slice(key.verifying_key().as_bytes());
    out.extend_from_slice(component);
    Ok(out)
}

/// A cursor over the input that never reads past its end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], BundleError> {
        if self.0.len() < n {
            return Err(BundleError::Truncated(what));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
}

/// Parses and verifies a bundle: the format, the manifest's fields, the
/// signature over manifest and component, and the manifest's sha256
/// against the component. Allocates no more than the input's size.
pub fn open(bytes: &[u8]) -> Result<Opened, BundleError> {
    if !is_bundle(bytes) {
        return Err(if MAGIC.starts_with(bytes) && !bytes.is_empty() {
            BundleError::Truncated("magic")
        } else {
            BundleError::BadMagic
        });
    }
    let mut r = Reader(&bytes[MAGIC.len()..]);
    let len = r.take(4, "manifest length")?;
    let len = u32::from_le_bytes(len.try_into().expect("four bytes")) as usize;
    if !(2..=MAX_MANIFEST_BYTES).contains(&len) {
        return Err(BundleError::ManifestLength(len));
    }
    let json = r.take(len, "manifest")?;
    let signature = r.take(SIGNATURE_LENGTH, "signature")?;
    let public = r.take(PUBLIC_KEY_LENGTH, "signer key")?;
    let component = r.0;
    if component.len() < WASM_MAGIC.len() && WASM_MAGIC.starts_with(component) {
        return Err(BundleError::Truncated("component"));
    }
    if !component.starts_with(WASM_MAGIC) {
        return Err(BundleError::NotWasm);
    }

    let public: [u8; PUBLIC_KEY_LENGTH] = public.try_into().expect("32 bytes");
    let key = VerifyingKey::from_bytes(&public).map_err(|_| BundleError::BadPublicKey)?;
    let signer = key_id(&key);
    let signature = Signature::from_slice(signature).map_err(|_| BundleError::Signature {
        signer: signer.clone(),
    })?;
    let digest = Sha256::digest(component);
    key.verify_strict(&signed_message(json, &digest), &signature)
        .map_err(|_| BundleError::Signature {
            signer: signer.clone(),
        })?;

    // Signed, so the manifest is the signer's; still checked, as the
    // signer may be anyone until the trust policy says otherwise.
    let manifest: Manifest =
        serde_json::from_slice(json).map_err(|e| BundleError::ManifestJson(e.to_string()))?;
    manifest.validate()?;
    let actual = hex::encode(digest);
    if manifest.sha256 != actual {
        return Err(BundleError::Sha256Mismatch {
            manifest: manifest.sha256,
            actual,
        });
    }
    Ok(Opened {
        component: component.to_vec(),
        manifest,
        signer,
    })
}
