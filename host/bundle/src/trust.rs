//! The operator's trust policy: which signers, and whether unsigned
//! components, are accepted.

use crate::key::{key_id, parse_key_id};

/// `FORECAST_PLUGIN_TRUST` and `FORECAST_PLUGIN_UNSIGNED`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustPolicy {
    /// Normalised key ids; empty: any valid signature is accepted.
    keys: Vec<String>,
    unsigned_allowed: bool,
}

impl Default for TrustPolicy {
    /// The defaults of the settings: no key list (any valid signature),
    /// unsigned components allowed.
    fn default() -> Self {
        TrustPolicy {
            keys: Vec::new(),
            unsigned_allowed: true,
        }
    }
}

impl TrustPolicy {
    /// `keys`: comma-separated `ed25519:<base64>` key ids (spaces around
    /// them ignored); an empty string means no list, so any valid
    /// signature is accepted. `unsigned_allowed`: whether a bare component
    /// (no bundle) may be added.
    pub fn parse(keys: &str, unsigned_allowed: bool) -> Result<TrustPolicy, String> {
        let mut list = Vec::new();
        for entry in keys.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let key = parse_key_id(entry).map_err(|e| format!("FORECAST_PLUGIN_TRUST: {e}"))?;
            let id = key_id(&key);
            if !list.contains(&id) {
                list.push(id);
            }
        }
        Ok(TrustPolicy {
            keys: list,
            unsigned_allowed,
        })
    }

    /// The trusted key ids (empty: any valid signature).
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// Whether unsigned components are accepted.
    pub fn unsigned_allowed(&self) -> bool {
        self.unsigned_allowed
    }

    /// Accepts a bundle whose (already verified) signature is by
    /// `signer_key_id`, or says why not.
    pub fn check_signed(&self, signer_key_id: &str) -> Result<(), String> {
        if self.keys.is_empty() {
            return Ok(());
        }
        // Compare normalised forms, so an equivalent spelling still matches.
        let signer = parse_key_id(signer_key_id)
            .map(|k| key_id(&k))
            .unwrap_or_else(|_| signer_key_id.to_string());
        if self.keys.contains(&signer) {
            Ok(())
        } else {
            Err(format!(
                "the bundle is signed by {signer}, which is not a trusted key (FORECAST_PLUGIN_TRUST lists {})",
                self.keys.join(", ")
            ))
        }
    }

    /// Accepts an unsigned component, or says why not.
    pub fn check_unsigned(&self) -> Result<(), String> {
        if self.unsigned_allowed {
            Ok(())
        } else {
            Err(
                "unsigned components are refused (FORECAST_PLUGIN_UNSIGNED=refuse): \
                 add a bundle signed with `forecast plugin sign` by a key in FORECAST_PLUGIN_TRUST"
                    .to_string(),
            )
        }
    }
}
