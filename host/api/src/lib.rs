//! The wire contract of the Forecast API (spec: `docs/forecast-api-v1.md`).
//!
//! Every body a client sends or receives and every query it passes is
//! defined here once, with its OpenAPI schema (utoipa `ToSchema` /
//! `IntoParams`, bounds included) and with the validation that turns what
//! arrived into typed service inputs. The HTTP layer generates
//! `/api/openapi.json` from these types and its handlers, so the document
//! cannot drift from what the server enforces.
//!
//! This crate knows no I/O and no HTTP (no status codes, no routes): the
//! services build its response bodies (they are also what the caches
//! store verbatim), the HTTP layer extracts its requests.

pub mod accounts;
pub mod admin;
pub mod alerts;
pub mod analysis;
pub mod assets;
pub mod authored;
pub mod backtest;
pub mod health;
pub mod matcher;
pub mod models;
pub mod ranking;
pub mod research;
pub mod track_record;
pub mod usage;

use serde::Serialize;
use utoipa::ToSchema;

/// A request the contract refuses: the message names the parameter or
/// field and what it accepts (the HTTP layer answers 400 with it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl From<String> for Invalid {
    fn from(message: String) -> Self {
        Invalid(message)
    }
}

impl From<&str> for Invalid {
    fn from(message: &str) -> Self {
        Invalid(message.to_string())
    }
}

/// Longest piece of a client's input an error message quotes.
pub const QUOTED_CHARS: usize = 40;

/// `input` as an error message may quote it: at most [`QUOTED_CHARS`]
/// characters, then `…`. A message names what was wrong without echoing
/// a megabyte back (or into the logs).
pub fn quote(input: &str) -> String {
    let mut chars = input.chars();
    let head: String = chars.by_ref().take(QUOTED_CHARS).collect();
    if chars.next().is_some() {
        head + "…"
    } else {
        head
    }
}

/// Every error body: a human-readable `detail` naming the problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong, naming the parameter or resource concerned.
    pub detail: String,
}

/// An integer as clients write it: `5`, or `5.0` (JSON Schema counts a
/// number with a zero fraction as an integer, and so do we).
pub fn integer(raw: &str) -> Option<i64> {
    if let Ok(v) = raw.parse::<i64>() {
        return Some(v);
    }
    let v: f64 = raw.parse().ok()?;
    // Within ±2^53 every integer is exact in an f64.
    (v.is_finite() && v.fract() == 0.0 && v.abs() <= 9_007_199_254_740_992.0).then_some(v as i64)
}

/// Deserializes an optional integer that may be written `5` or `5.0`;
/// `2.5` is refused as an invalid type.
pub fn optional_integer<'de, D>(d: D) -> Result<Option<i64>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::de::{Error, Unexpected};
    let Some(n) = <Option<serde_json::Number> as serde::Deserialize>::deserialize(d)? else {
        return Ok(None);
    };
    if let Some(v) = n.as_i64() {
        return Ok(Some(v));
    }
    match n.as_f64() {
        Some(v) if v.fract() == 0.0 && v.abs() <= 9_007_199_254_740_992.0 => Ok(Some(v as i64)),
        Some(v) => Err(D::Error::invalid_type(Unexpected::Float(v), &"an integer")),
        None => Err(D::Error::invalid_type(
            Unexpected::Other("a number"),
            &"an integer",
        )),
    }
}

/// The schema of an integer that must be one of `values`.
pub(crate) fn integer_enum(values: &[i64], default: i64) -> utoipa::openapi::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .enum_values(Some(values.iter().copied()))
        .default(Some(default.into()))
        .build()
}
