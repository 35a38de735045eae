//! `POST /api/match-tickers`: the free text in, at most three matches out,
//! and the assets the text names, each with its own matches.

use crate::Invalid;
use forecast_domain::Category;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Most matches an answer holds (spec), and a mention holds.
pub const MAX_MATCHES: u32 = 3;
/// Most mentions an answer holds.
pub const MAX_MENTIONS: usize = 12;
/// Confidence from which a match is sure: calibrated on held-out
/// evaluation data, so that of the answers reported at 0.9 or more at
/// least 90 % were right (docs/BENCHMARKS.md, reliability table). The web
/// application adds sure first matches to a watchlist without asking.
pub const SURE_CONFIDENCE: f64 = 0.9;
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

/// One asset the text names ("I own apple, tesla and some bitcoin" names
/// three; "bitcoin ethereum solana" too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MentionMatches {
    /// The words of the text that name it, as typed (filler such as "I
    /// own" or "some" left out).
    #[schema(example = "tesla")]
    pub text: String,
    /// Its best matches, at most three, best first; empty when the words
    /// name nothing in the catalog.
    pub matches: Vec<TickerMatch>,
    /// Whether the first match is sure: its confidence is at least 0.9
    /// (of the answers reported that confident, at least 90 % were right
    /// on held-out data).
    pub sure: bool,
}

/// `{matches, mentions}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MatchResponse {
    /// At most three, best first: for a text naming one asset its best
    /// matches; for a text naming several, the best match of each of the
    /// first ones, most confident first.
    pub matches: Vec<TickerMatch>,
    /// Every asset the text names, in the order named (at most 12), each
    /// with its own matches: a sentence naming six assets has six
    /// mentions. A text naming one asset has one mention, whose matches
    /// are `matches`.
    pub mentions: Vec<MentionMatches>,
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
