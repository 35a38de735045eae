//! `POST /api/match-tickers`: the free text in, at most three matches out.

use crate::Invalid;
use forecast_domain::Category;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Most matches an answer holds (spec).
pub const MAX_MATCHES: u32 = 3;
/// Longest text accepted, in characters.
pub const MAX_TEXT_CHARS: usize = 500;
/// The request body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MatchRequest {
    /// What the user holds or follows, in their words: 1 to 500
    /// characters, not only white space.
    #[schema(
        min_length = 1,
        max_length = 500,
        pattern = r"\S",
        example = "apple and bitcoin"
    )]
    pub text: String,
}

/// One match, as the spec names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TickerMatch {
    /// Ticker.
    pub ticker: String,
    /// Name.
    pub name: String,
    /// Category.
    pub category: Category,
    /// Confidence in [0, 1].
    pub confidence: f64,
}

/// `{matches}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MatchResponse {
    /// At most three, best first.
    pub matches: Vec<TickerMatch>,
}

/// Validates `text`: 1 to 500 characters, not blank.
pub fn validate(text: &str) -> Result<&str, Invalid> {
    let chars = text.chars().count();
    if chars == 0 || chars > MAX_TEXT_CHARS {
        return Err(format!("text must be 1 to {MAX_TEXT_CHARS} characters (got {chars})").into());
    }
    if text.trim().is_empty() {
        return Err("text must not be blank".into());
    }
    Ok(text)
}
