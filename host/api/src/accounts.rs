//! The web session (`/auth/*`) and API key management (`/api/keys`).

use crate::Invalid;
use chrono::{DateTime, Utc};
use forecast_domain::Tier;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Longest key name accepted.
pub const MAX_KEY_NAME_CHARS: usize = 100;

/// Longest e-mail address accepted (RFC 5321's path limit).
pub const MAX_EMAIL_CHARS: usize = 254;
/// Longest password accepted, in bytes.
pub const MAX_PASSWORD_BYTES: usize = 1_024;

/// `POST /auth/login`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    /// The account's e-mail (case-insensitive): at most 254 characters,
    /// `local@domain.tld`, without white space or control characters.
    #[schema(
        example = "demo@forecast.local",
        max_length = 254,
        min_length = 3,
        pattern = r"^[^@\s\x00-\x1f\x7f-\x9f]+@[^@.\s\x00-\x1f\x7f-\x9f][^@\s\x00-\x1f\x7f-\x9f]*\.[^@\s\x00-\x1f\x7f-\x9f]*[^@.\s\x00-\x1f\x7f-\x9f]$"
    )]
    pub email: String,
    /// The password: at most 1,024 bytes (JSON Schema counts characters,
    /// so the documented bound is 256, which always fits; longer ASCII
    /// passwords up to 1,024 bytes are accepted too).
    #[schema(max_length = 256, min_length = 1)]
    pub password: String,
}

impl LoginRequest {
    /// The trimmed, lower-cased e-mail, or why the request is refused
    /// (before any limiter or password hash sees it).
    pub fn validate(&self) -> Result<String, Invalid> {
        let email = normalize_email(&self.email)?;
        if self.password.is_empty() || self.password.len() > MAX_PASSWORD_BYTES {
            return Err(Invalid::from(format!(
                "password must be 1 to {MAX_PASSWORD_BYTES} bytes long"
            )));
        }
        Ok(email)
    }
}

/// Trims and lower-cases an e-mail address; refuses one longer than
/// [`MAX_EMAIL_CHARS`] or not of the form `local@domain.tld` (no white
/// space, no control characters). The message quotes at most a short
/// prefix of what was sent.
pub fn normalize_email(raw: &str) -> Result<String, Invalid> {
    let email = raw.trim().to_lowercase();
    if email.chars().count() > MAX_EMAIL_CHARS {
        return Err(Invalid::from(format!(
            "email must be at most {MAX_EMAIL_CHARS} characters"
        )));
    }
    let valid = email.split_once('@').is_some_and(|(local, domain)| {
        !local.is_empty()
            && !domain.contains('@')
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
    }) && !email.chars().any(|c| c.is_whitespace() || c.is_control());
    if valid {
        Ok(email)
    } else {
        Err(Invalid::from(format!(
            "email '{}' is not an e-mail address",
            crate::quote(raw.trim())
        )))
    }
}

/// The signed-in user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Me {
    /// E-mail, lower-cased.
    pub email: String,
    /// Subscription tier.
    pub tier: Tier,
    /// Where a Free user upgrades to Premium: an absolute http(s) URL set
    /// by the operator (`FORECAST_UPGRADE_URL`), or null when none is.
    #[serde(default)]
    #[schema(required = true)]
    pub upgrade_url: Option<String>,
}

/// `{ok: true}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OkResponse {
    /// Always true.
    pub ok: bool,
}

impl OkResponse {
    /// `{ok: true}`.
    pub const OK: OkResponse = OkResponse { ok: true };
}

/// One API key as listed (never the key itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct KeyRecord {
    /// Key id.
    #[schema(format = Uuid)]
    pub id: String,
    /// The first characters of the key, to recognise it.
    #[schema(example = "svc_1a2b")]
    pub key_prefix: String,
    /// The name given at creation.
    pub name: String,
    /// Last authenticated request (minute precision).
    pub last_used_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// `POST /api/keys`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct CreateKeyRequest {
    /// A name to recognise the key by: 1 to 100 characters, not only
    /// white space (surrounding white space is dropped).
    #[schema(min_length = 1, max_length = 100, pattern = r"\S", example = "laptop")]
    pub name: String,
}

impl CreateKeyRequest {
    /// The trimmed name, or why it is refused.
    pub fn validate(&self) -> Result<&str, Invalid> {
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > MAX_KEY_NAME_CHARS {
            return Err(Invalid::from(format!(
                "name must be 1 to {MAX_KEY_NAME_CHARS} characters"
            )));
        }
        Ok(name)
    }
}

/// A new key: the only time the key itself is shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CreatedKey {
    /// `svc_` + 64 hex digits; shown once, stored only as SHA-256.
    pub key: String,
    /// The first characters of the key.
    pub key_prefix: String,
    /// The name given.
    pub name: String,
    /// Key id (to revoke it).
    #[schema(format = Uuid)]
    pub id: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// `DELETE /api/keys`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct RevokeKeyRequest {
    /// Id of one of the user's active keys.
    #[schema(format = Uuid)]
    pub id: String,
}

/// Most assets a watchlist holds.
pub const MAX_WATCHLIST: usize = 50;

/// One asset of a watchlist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WatchlistItem {
    /// Ticker.
    #[schema(example = "AAPL")]
    pub ticker: String,
    /// Display name.
    pub name: String,
    /// Category.
    pub category: forecast_domain::Category,
    /// Where its prices come from.
    pub data_source: forecast_domain::DataSource,
    /// The currency of its prices, from the asset catalog: ISO 4217 such
    /// as `USD` (may be empty when the catalog has none).
    pub currency: String,
}

/// `GET /web/watchlist`: the signed-in user's watchlist, in the order chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Watchlist {
    /// The assets (active ones only), in the order chosen.
    pub tickers: Vec<WatchlistItem>,
}

/// `PUT /web/watchlist`: the whole new watchlist.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetWatchlistRequest {
    /// Active tickers, at most 50; a repeated ticker is kept once, where it
    /// first appears.
    #[schema(max_items = 50, example = json!(["AAPL", "BTC-USD"]))]
    pub tickers: Vec<String>,
}

impl SetWatchlistRequest {
    /// The trimmed tickers without repeats, or why they are refused.
    pub fn validate(&self) -> Result<Vec<&str>, Invalid> {
        if self.tickers.len() > MAX_WATCHLIST {
            return Err(Invalid::from(format!(
                "tickers: at most {MAX_WATCHLIST} per watchlist ({} sent)",
                self.tickers.len()
            )));
        }
        let mut out: Vec<&str> = Vec::with_capacity(self.tickers.len());
        for t in &self.tickers {
            let t = t.trim();
            if t.is_empty() {
                return Err(Invalid::from("tickers: an empty ticker"));
            }
            if !out.contains(&t) {
                out.push(t);
            }
        }
        Ok(out)
    }
}
