//! The manifest: what a bundle says about its component.

use serde::{Deserialize, Serialize};

use crate::BundleError;

/// The only world a bundle may target for now.
pub const WORLD_STRATEGY: &str = "strategy";
/// Longest `name`, in characters.
pub const MAX_NAME: usize = 64;
/// Longest `version`, in characters.
pub const MAX_VERSION: usize = 32;
/// Longest `description`, in characters.
pub const MAX_DESCRIPTION: usize = 1_000;
/// Longest `licence`, in characters.
pub const MAX_LICENCE: usize = 100;
/// Longest `author`, in characters.
pub const MAX_AUTHOR: usize = 200;

/// A bundle's manifest, stored as JSON in the bundle and covered by its
/// signature. Unknown fields are refused; `description`, `licence` and
/// `author` may be omitted (empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The strategy's name (1–64 characters).
    pub name: String,
    /// Its version (1–32 characters, no spaces).
    pub version: String,
    /// The WIT world the component implements: `strategy`.
    pub world: String,
    /// What it does (at most 1,000 characters).
    #[serde(default)]
    pub description: String,
    /// Its licence, e.g. an SPDX id (at most 100 characters).
    #[serde(default)]
    pub licence: String,
    /// Who wrote it (at most 200 characters).
    #[serde(default)]
    pub author: String,
    /// The component's sha256, 64 lowercase hex digits.
    pub sha256: String,
}

fn field(field: &'static str, reason: impl Into<String>) -> BundleError {
    BundleError::ManifestField {
        field,
        reason: reason.into(),
    }
}

fn bounded(
    name: &'static str,
    value: &str,
    max: usize,
    required: bool,
    newlines: bool,
) -> Result<(), BundleError> {
    let n = value.chars().count();
    if required && value.trim().is_empty() {
        return Err(field(name, "must not be empty"));
    }
    if n > max {
        return Err(field(
            name,
            format!("is {n} characters long; at most {max} are allowed"),
        ));
    }
    if value
        .chars()
        .any(|c| c.is_control() && !(newlines && c == '\n'))
    {
        return Err(field(name, "must not contain control characters"));
    }
    Ok(())
}

impl Manifest {
    /// Checks every field's bounds and form; the error names the field.
    pub fn validate(&self) -> Result<(), BundleError> {
        bounded("name", &self.name, MAX_NAME, true, false)?;
        bounded("version", &self.version, MAX_VERSION, true, false)?;
        if self.version.chars().any(char::is_whitespace) {
            return Err(field("version", "must not contain spaces"));
        }
        if self.world != WORLD_STRATEGY {
            return Err(field(
                "world",
                format!(
                    "is {:?}; only {WORLD_STRATEGY:?} bundles are supported",
                    truncate(&self.world, 40)
                ),
            ));
        }
        bounded(
            "description",
            &self.description,
            MAX_DESCRIPTION,
            false,
            true,
        )?;
        bounded("licence", &self.licence, MAX_LICENCE, false, false)?;
        bounded("author", &self.author, MAX_AUTHOR, false, false)?;
        if self.sha256.len() != 64
            || !self
                .sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(field("sha256", "must be 64 lowercase hex digits"));
        }
        Ok(())
    }
}

/// At most `n` characters of `s` (for messages quoting input).
fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
