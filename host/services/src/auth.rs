//! Accounts and credentials (DESIGN §7, §8): argon2id passwords, show-once
//! API keys stored as SHA-256, session tokens stored as SHA-256, and the
//! quota windows of a user.
//!
//! Nothing here stores or logs a secret: callers get the secret once and
//! persist only its hash.

use crate::error::Error;
use std::sync::OnceLock;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand::rngs::OsRng;
use rand::RngCore;
use sha2::{Digest, Sha256};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::freshness::Freshness;
use forecast_domain::{ApiKeyRecord, Tier, User};
use forecast_store::{AccountStore, Database, Generations, Window};

/// Every API key starts with this.
pub const KEY_PREFIX: &str = "svc_";
/// Hex digits after the prefix (32 random bytes).
pub const KEY_HEX_LEN: usize = 64;
/// Active keys a user may hold (spec: 5).
pub const MAX_ACTIVE_KEYS: u32 = 5;
/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "fe_session";
/// How long a session lasts at most, however much it is used.
pub const SESSION_SECONDS: i64 = 7 * 24 * 3600;
/// How long an unused session lasts (each use slides it, up to
/// [`SESSION_SECONDS`] after sign-in).
pub const SESSION_IDLE_SECONDS: i64 = 12 * 3600;
/// A session's expiry is written at most once per this many seconds.
pub const SESSION_SLIDE_STEP: i64 = 300;
/// Failed sign-ins allowed per account *from one client address* per
/// window: the owner signing in from elsewhere is never locked out by
/// someone guessing their password.
pub const LOGIN_ATTEMPTS: Window = Window {
    kind: "login",
    seconds: 300,
    limit: 10,
};
/// Failed sign-ins allowed per client address per window, whatever the
/// accounts (slows down spraying one password over many accounts).
pub const LOGIN_ADDRESS_ATTEMPTS: Window = Window {
    kind: "login-addr",
    seconds: 300,
    limit: 30,
};
/// Longest accepted password (argon2 work is bounded by it).
pub const MAX_PASSWORD_LEN: usize = 1_024;

/// Hex SHA-256 of a secret: what the store keeps of keys and tokens.
pub fn sha256_hex(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    OsRng.fill_bytes(&mut buf);
    hex::encode(buf)
}

/// A freshly generated API key; `key` is shown once and never stored.
#[derive(Debug)]
pub struct NewKey {
    /// `svc_` + 64 hex digits.
    pub key: String,
    /// SHA-256 of `key`.
    pub hash: String,
    /// `svc_` + the first 4 hex digits.
    pub prefix: String,
}

/// Generates an API key from the OS CSPRNG.
pub fn new_api_key() -> NewKey {
    let key = format!("{KEY_PREFIX}{}", random_hex(KEY_HEX_LEN / 2));
    NewKey {
        hash: sha256_hex(&key),
        prefix: key[..KEY_PREFIX.len() + 4].to_string(),
        key,
    }
}

/// A session token and its hash.
pub fn new_session_token() -> (String, String) {
    let token = random_hex(32);
    let hash = sha256_hex(&token);
    (token, hash)
}

/// The key of an `Authorization: Bearer svc_<64 hex>` header value, or
/// `None` when the header is malformed (wrong scheme, prefix, length or
/// alphabet).
pub fn parse_bearer(header: &str) -> Option<&str> {
    let key = header.strip_prefix("Bearer ")?.trim();
    let hex = key.strip_prefix(KEY_PREFIX)?;
    (hex.len() == KEY_HEX_LEN && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(key)
}

/// Trims and lower-cases an e-mail address; rejects garbage (the wire
/// contract's rule: [`forecast_api::accounts::normalize_email`]).
pub fn normalize_email(raw: &str) -> Result<String, Error> {
    Ok(forecast_api::accounts::normalize_email(raw)?)
}

/// argon2id (the crate's default parameters: 19 MiB, 2 passes) with a
/// random salt, as a PHC string. CPU-heavy: call from `spawn_blocking`.
pub fn hash_password(password: &str) -> Result<String, Error> {
    if password.len() < 8 || password.len() > MAX_PASSWORD_LEN {
        return Err(Error::Invalid(format!(
            "passwords must be 8 to {MAX_PASSWORD_LEN} characters long"
        )));
    }
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| Error::Internal(e.to_string()))
}

/// Checks a password against a PHC hash; any malformed hash is a mismatch.
/// CPU-heavy: call from `spawn_blocking`.
pub fn verify_password(password: &str, hash: &str) -> bool {
    if password.len() > MAX_PASSWORD_LEN {
        return false;
    }
    PasswordHash::new(hash)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

/// A hash of a random password, verified against when the e-mail is
/// unknown so that a wrong e-mail costs the same time as a wrong password.
pub fn decoy_hash() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| hash_password(&random_hex(16)).expect("hash a random password"))
}

/// A random password for generated accounts (demo user, `user add`
/// without --password-stdin).
pub fn random_password() -> String {
    random_hex(12)
}

/// Default quotas in cost units (spec: 60 a minute, 1,000 a day).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaConfig {
    /// Units per UTC minute.
    pub per_minute: u32,
    /// Units per UTC day.
    pub per_day: u32,
}

impl Default for QuotaConfig {
    fn default() -> Self {
        QuotaConfig {
            per_minute: 60,
            per_day: 1_000,
        }
    }
}

/// The user's minute and day windows, with their overrides applied.
pub fn quota_windows(user: &User, defaults: QuotaConfig) -> [Window; 2] {
    [
        Window {
            kind: "minute",
            seconds: 60,
            limit: user.per_minute.unwrap_or(defaults.per_minute),
        },
        Window {
            kind: "day",
            seconds: 86_400,
            limit: user.per_day.unwrap_or(defaults.per_day),
        },
    ]
}

/// Creates a user with a hashed password (`spawn_blocking` for argon2),
/// created at `clock`'s now.
pub async fn create_user(
    db: &dyn Database,
    email: &str,
    password: String,
    tier: Tier,
    clock: &dyn forecast_domain::Clock,
) -> Result<User, Error> {
    let email = normalize_email(email)?;
    let hash = tokio::task::spawn_blocking(move || hash_password(&password))
        .await
        .map_err(|e| Error::Internal(e.to_string()))??;
    Ok(db
        .create_user(&email, &hash, tier, clock.timestamp())
        .await?)
}

/// Sets a new password for the user with this e-mail (signing them out
/// everywhere); `NotFound` when there is none.
pub async fn set_password(db: &dyn Database, email: &str, password: String) -> Result<(), Error> {
    let email = normalize_email(email)?;
    let hash = tokio::task::spawn_blocking(move || hash_password(&password))
        .await
        .map_err(|e| Error::Internal(e.to_string()))??;
    if db.set_user_password(&email, &hash).await? {
        Ok(())
    } else {
        Err(Error::NotFound(format!("no user {email}")))
    }
}

/// How many keys [`KeyCache`] holds at most; past it, it starts over.
const KEY_CACHE_ENTRIES: usize = 65_536;

/// One remembered key: its record and owner, read when the `auth`
/// generation was `generation`.
struct CachedKey {
    generation: i64,
    found: Arc<(ApiKeyRecord, User)>,
}

/// Active API keys and their owners kept in memory, so a Bearer request
/// is authenticated without reading the key (issue 17). An entry is used
/// only while the store's `auth` generation — bumped by a trigger on every
/// revocation, key deletion and change of a user's tier, limits, e-mail or
/// existence, whoever writes it — is the one it was read under, checked
/// with counters read after the request arrived ([`Freshness`]). So a key
/// revoked on any replica or by the CLI is refused on the very next
/// request everywhere, as when every request read the store. Unknown keys
/// are not remembered: each one is looked up (and counted against the
/// client's address by the HTTP layer).
pub struct KeyCache {
    accounts: Arc<dyn AccountStore>,
    freshness: Freshness,
    entries: Mutex<HashMap<String, CachedKey>>,
}

impl KeyCache {
    /// A cache over the keys of `accounts`, checked with `freshness`.
    pub fn new(accounts: Arc<dyn AccountStore>, freshness: Freshness) -> Self {
        KeyCache {
            accounts,
            freshness,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The active key with this SHA-256 and its owner, and the generation
    /// counters read for this request (`None` when they could not be read:
    /// the key was then read from the store).
    pub async fn lookup(
        &self,
        key_hash: &str,
    ) -> Result<(Option<Arc<(ApiKeyRecord, User)>>, Option<Generations>), crate::error::Error> {
        let Some(generations) = self.freshness.current().await else {
            let found = self.accounts.api_key_user(key_hash).await?;
            return Ok((found.map(Arc::new), None));
        };
        {
            let entries = self.entries.lock().expect("key cache poisoned");
            if let Some(e) = entries.get(key_hash) {
                if e.generation == generations.auth {
                    return Ok((Some(e.found.clone()), Some(generations)));
                }
            }
        }
        // Read after the counters: a write the read misses moved them.
        let found = self.accounts.api_key_user(key_hash).await?.map(Arc::new);
        let mut entries = self.entries.lock().expect("key cache poisoned");
        match &found {
            Some(f) => {
                if entries.len() >= KEY_CACHE_ENTRIES {
                    entries.clear();
                }
                entries.insert(
                    key_hash.to_string(),
                    CachedKey {
                        generation: generations.auth,
                        found: f.clone(),
                    },
                );
            }
            None => {
                entries.remove(key_hash);
            }
        }
        Ok((found, Some(generations)))
    }

    /// The remembered key with this SHA-256 and the `auth` generation it
    /// was read under, without any check: the caller must confirm that
    /// generation with counters read after its request arrived.
    pub fn remembered(&self, key_hash: &str) -> Option<(Arc<(ApiKeyRecord, User)>, i64)> {
        let entries = self.entries.lock().expect("key cache poisoned");
        entries
            .get(key_hash)
            .map(|e| (e.found.clone(), e.generation))
    }

    /// The reader of the generation counters this cache checks with.
    pub fn freshness(&self) -> &Freshness {
        &self.freshness
    }

    /// Records that the key's `last_used_at` was written at `now`, so the
    /// remembered record does not ask for the write again within a minute.
    pub fn touched(&self, key_hash: &str, now: i64) {
        let mut entries = self.entries.lock().expect("key cache poisoned");
        if let Some(e) = entries.get_mut(key_hash) {
            let (mut record, user) = (*e.found).clone();
            record.last_used_at = Some(now);
            e.found = Arc::new((record, user));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_the_documented_shape_and_are_unique() {
        let a = new_api_key();
        let b = new_api_key();
        assert_ne!(a.key, b.key);
        assert!(a.key.starts_with("svc_") && a.key.len() == 4 + 64);
        assert_eq!(a.prefix, &a.key[..8]);
        assert_eq!(a.hash, sha256_hex(&a.key));
        assert_eq!(
            parse_bearer(&format!("Bearer {}", a.key)),
            Some(a.key.as_str())
        );
    }

    #[test]
    fn malformed_bearer_headers_are_refused() {
        let key = new_api_key().key;
        for bad in [
            key.clone(),
            format!("bearer {key}"),
            format!("Basic {key}"),
            format!("Bearer {}", &key[..20]),
            format!("Bearer {}x", key),
            format!("Bearer svc_{}", "g".repeat(64)),
            format!("Bearer key_{}", "a".repeat(64)),
            "Bearer ".to_string(),
        ] {
            assert_eq!(parse_bearer(&bad), None, "{bad}");
        }
    }

    #[test]
    fn passwords_hash_with_argon2id_and_verify() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("correct horsE", &h));
        assert!(!verify_password("x", "not a hash"));
        assert!(hash_password("short").is_err());
    }

    #[test]
    fn emails_are_normalised() {
        assert_eq!(
            normalize_email("  Ann@Example.COM ").unwrap(),
            "ann@example.com"
        );
        for bad in [
            "",
            "ann",
            "@example.com",
            "ann@localhost",
            "a nn@example.com",
            "ann@.com",
        ] {
            assert!(normalize_email(bad).is_err(), "{bad}");
        }
    }
}
