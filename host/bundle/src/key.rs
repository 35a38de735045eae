//! Signing keys: generation, the key file, key ids.

use std::io::{self, Write as _};
use std::path::Path;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ed25519_dalek::{SigningKey, VerifyingKey, PUBLIC_KEY_LENGTH, SECRET_KEY_LENGTH};

use crate::BundleError;

/// The prefix of a key id.
const KEY_ID_PREFIX: &str = "ed25519:";
/// The prefix of the one line of a signing key file.
const SECRET_PREFIX: &str = "forecast-ed25519-secret:";
/// A key file is one short line; anything longer is not one.
const MAX_KEY_FILE: u64 = 1024;

/// `ed25519:` followed by the standard base64 of the 32 public-key bytes.
pub fn key_id(key: &VerifyingKey) -> String {
    format!("{KEY_ID_PREFIX}{}", STANDARD.encode(key.as_bytes()))
}

/// The public key a key id names, or why it names none.
pub fn parse_key_id(id: &str) -> Result<VerifyingKey, String> {
    let id = id.trim();
    let b64 = id.strip_prefix(KEY_ID_PREFIX).ok_or_else(|| {
        format!("key {id:?} does not start with \"{KEY_ID_PREFIX}\" (expected ed25519:<base64 of 32 bytes>)")
    })?;
    let bytes = STANDARD
        .decode(b64)
        .map_err(|e| format!("key {id:?} is not valid base64: {e}"))?;
    let bytes: [u8; PUBLIC_KEY_LENGTH] = bytes.as_slice().try_into().map_err(|_| {
        format!(
            "key {id:?} has {} bytes; an ed25519 public key has {PUBLIC_KEY_LENGTH}",
            bytes.len()
        )
    })?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| format!("key {id:?} is not a valid ed25519 point"))
}

/// A new signing key from the operating system's random source.
pub fn generate_key() -> SigningKey {
    use rand::RngCore as _;
    let mut secret = [0u8; SECRET_KEY_LENGTH];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    let key = SigningKey::from_bytes(&secret);
    secret.fill(0);
    key
}

/// Writes `key` to a new file at `path` (mode 0600 on Unix): one line,
/// `forecast-ed25519-secret:<base64 of the 32 secret bytes>`. An existing
/// file is never overwritten.
pub fn write_key(path: impl AsRef<Path>, key: &SigningKey) -> io::Result<()> {
    let path = path.as_ref();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(|e| {
        if e.kind() == io::ErrorKind::AlreadyExists {
            io::Error::new(
                e.kind(),
                format!(
                    "{} already exists; refusing to overwrite a key",
                    path.display()
                ),
            )
        } else {
            io::Error::new(e.kind(), format!("create {}: {e}", path.display()))
        }
    })?;
    let line = format!("{SECRET_PREFIX}{}\n", STANDARD.encode(key.to_bytes()));
    file.write_all(line.as_bytes())?;
    file.sync_all()
}

/// Reads a key file written by [`write_key`].
pub fn read_key(path: impl AsRef<Path>) -> Result<SigningKey, BundleError> {
    use std::io::Read as _;
    let path = path.as_ref();
    let fail = |reason: String| BundleError::KeyFile {
        path: path.display().to_string(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut text = String::new();
    file.take(MAX_KEY_FILE + 1)
        .read_to_string(&mut text)
        .map_err(|e| fail(format!("not a key file ({e})")))?;
    if text.len() as u64 > MAX_KEY_FILE {
        return Err(fail("not a key file (too long)".into()));
    }
    let b64 = text
        .trim()
        .strip_prefix(SECRET_PREFIX)
        .ok_or_else(|| fail(format!("not a key file (expected one line {SECRET_PREFIX}<base64>, as written by `forecast plugin keygen`)")))?;
    let bytes = STANDARD
        .decode(b64)
        .map_err(|e| fail(format!("invalid base64: {e}")))?;
    let secret: [u8; SECRET_KEY_LENGTH] = bytes.as_slice().try_into().map_err(|_| {
        fail(format!(
            "{} bytes; expected {SECRET_KEY_LENGTH}",
            bytes.len()
        ))
    })?;
    Ok(SigningKey::from_bytes(&secret))
}
