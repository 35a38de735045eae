//! Domain types shared by the store, the HTTP layer and the CLI.

use std::fmt;
use std::str::FromStr;

pub mod clock;
pub mod defaults;
pub mod evaluation;
pub mod metadata;
pub mod schedule;
pub mod series;

use serde::{Deserialize, Serialize};

pub use clock::{Clock, ManualClock, SharedClock, SystemClock};

/// The 17 asset categories of the API (spec: Category enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
pub enum Category {
    #[serde(rename = "US Stocks")]
    UsStocks,
    #[serde(rename = "ETFs")]
    Etfs,
    #[serde(rename = "BMV")]
    Bmv,
    #[serde(rename = "Crypto")]
    Crypto,
    #[serde(rename = "Commodities")]
    Commodities,
    #[serde(rename = "Forex")]
    Forex,
    #[serde(rename = "Indices")]
    Indices,
    #[serde(rename = "UK Stocks")]
    UkStocks,
    #[serde(rename = "European Stocks")]
    EuropeanStocks,
    #[serde(rename = "Japanese Stocks")]
    JapaneseStocks,
    #[serde(rename = "Canadian Stocks")]
    CanadianStocks,
    #[serde(rename = "Brazilian Stocks")]
    BrazilianStocks,
    #[serde(rename = "HK/China Stocks")]
    HkChinaStocks,
    #[serde(rename = "Indian Stocks")]
    IndianStocks,
    #[serde(rename = "Australian Stocks")]
    AustralianStocks,
    #[serde(rename = "Korean Stocks")]
    KoreanStocks,
    #[serde(rename = "CS2 Cases")]
    Cs2Cases,
}

impl Category {
    /// Every category, in the spec's order.
    pub const ALL: [Category; 17] = [
        Category::UsStocks,
        Category::Etfs,
        Category::Bmv,
        Category::Crypto,
        Category::Commodities,
        Category::Forex,
        Category::Indices,
        Category::UkStocks,
        Category::EuropeanStocks,
        Category::JapaneseStocks,
        Category::CanadianStocks,
        Category::BrazilianStocks,
        Category::HkChinaStocks,
        Category::IndianStocks,
        Category::AustralianStocks,
        Category::KoreanStocks,
        Category::Cs2Cases,
    ];

    /// The wire name, e.g. `US Stocks`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::UsStocks => "US Stocks",
            Category::Etfs => "ETFs",
            Category::Bmv => "BMV",
            Category::Crypto => "Crypto",
            Category::Commodities => "Commodities",
            Category::Forex => "Forex",
            Category::Indices => "Indices",
            Category::UkStocks => "UK Stocks",
            Category::EuropeanStocks => "European Stocks",
            Category::JapaneseStocks => "Japanese Stocks",
            Category::CanadianStocks => "Canadian Stocks",
            Category::BrazilianStocks => "Brazilian Stocks",
            Category::HkChinaStocks => "HK/China Stocks",
            Category::IndianStocks => "Indian Stocks",
            Category::AustralianStocks => "Australian Stocks",
            Category::KoreanStocks => "Korean Stocks",
            Category::Cs2Cases => "CS2 Cases",
        }
    }

    /// Markets that trade every calendar day (weekends included).
    pub fn trades_every_day(self) -> bool {
        matches!(self, Category::Crypto | Category::Cs2Cases)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text is not one of the 17 category names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown category '{0}'")]
pub struct UnknownCategory(pub String);

impl FromStr for Category {
    type Err = UnknownCategory;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Category::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCategory(s.to_string()))
    }
}

/// Where an asset's price history came from. Served wherever prices are,
/// so synthetic data is never mistaken for market data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DataSource {
    /// Real history shipped in `data/prices/`.
    Real,
    /// Deterministic synthetic history of the demo universe.
    Synthetic,
    /// Loaded by `forecast ingest`.
    Ingested,
}

impl DataSource {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DataSource::Real => "real",
            DataSource::Synthetic => "synthetic",
            DataSource::Ingested => "ingested",
        }
    }

    /// Parses the stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "real" => Some(DataSource::Real),
            "synthetic" => Some(DataSource::Synthetic),
            "ingested" => Some(DataSource::Ingested),
            _ => None,
        }
    }
}

/// A catalog entry as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Asset {
    /// Stable id (row number in the catalog).
    pub id: i64,
    /// Yahoo-style symbol, e.g. `AAPL`, `7203.T`, `BTC-USD`.
    pub ticker: String,
    /// Display name.
    pub name: String,
    /// One of the 17 categories.
    pub category: Category,
    /// Listing exchange (may be empty).
    pub exchange: String,
    /// Trading currency (may be empty).
    pub currency: String,
    /// Country of the issuer (may be empty).
    pub country: String,
    /// Sector (may be empty).
    pub sector: String,
    /// Industry (may be empty).
    pub industry: String,
    /// Web site without scheme (may be empty).
    pub website: String,
    /// Short description (may be empty).
    pub summary: String,
    /// ISIN (may be empty).
    pub isin: String,
    /// Inactive assets are treated as unknown (404).
    pub is_active: bool,
    /// Flag carried from the catalog.
    pub is_premium: bool,
    /// Provenance of the prices.
    pub data_source: DataSource,
    /// Bumped on every price write; part of cache keys.
    pub data_version: i64,
    /// The date of the last stored price (`None`: no prices stored).
    pub last_price_date: Option<chrono::NaiveDate>,
}

/// Subscription tier. Only `premium` has API access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// No API access.
    Free,
    /// No API access.
    Lite,
    /// No API access.
    Pro,
    /// API access with the spec's quotas.
    Premium,
}

impl Tier {
    /// Stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Free => "free",
            Tier::Lite => "lite",
            Tier::Pro => "pro",
            Tier::Premium => "premium",
        }
    }
}

impl FromStr for Tier {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "free" => Ok(Tier::Free),
            "lite" => Ok(Tier::Lite),
            "pro" => Ok(Tier::Pro),
            "premium" => Ok(Tier::Premium),
            _ => Err(format!(
                "unknown tier '{s}'; expected free, lite, pro or premium"
            )),
        }
    }
}

/// An account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    /// UUID.
    pub id: String,
    /// Lower-cased e-mail address (unique).
    pub email: String,
    /// Tier.
    pub tier: Tier,
    /// Quota override per minute (cost units); `None` = configured default.
    pub per_minute: Option<u32>,
    /// Quota override per day (cost units); `None` = configured default.
    pub per_day: Option<u32>,
    /// Unix seconds.
    pub created_at: i64,
}

/// An API key as listed (never the key or its hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyRecord {
    /// UUID.
    pub id: String,
    /// Owner.
    pub user_id: String,
    /// Name given at creation.
    pub name: String,
    /// `svc_` and the first 4 hex digits.
    pub key_prefix: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds, updated at most once a minute.
    pub last_used_at: Option<i64>,
}

/// The kinds of plugin: one WIT world each.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum PluginKind {
    /// The segmentation engine (world `segmentation`).
    Segmentation,
    /// The ranking scorer (world `scorer`).
    Scorer,
    /// A backtest strategy (world `strategy`).
    Strategy,
    /// The ticker matcher (world `matcher`).
    Matcher,
}

impl PluginKind {
    /// Every kind, in the order the registry lists them.
    pub const ALL: [PluginKind; 4] = [
        PluginKind::Segmentation,
        PluginKind::Scorer,
        PluginKind::Strategy,
        PluginKind::Matcher,
    ];

    /// The world's name, as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::Segmentation => "segmentation",
            PluginKind::Scorer => "scorer",
            PluginKind::Strategy => "strategy",
            PluginKind::Matcher => "matcher",
        }
    }
}

impl fmt::Display for PluginKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PluginKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PluginKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                format!("kind must be one of segmentation, scorer, strategy, matcher (got '{s}')")
            })
    }
}

/// The forward metric an analysis, a grade or a ranking is about.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Simple return.
    Return,
    /// Sharpe ratio.
    Sharpe,
    /// Sortino ratio.
    Sortino,
}

impl Metric {
    /// Every metric, in the order grades are computed.
    pub const ALL: [Metric; 3] = [Metric::Return, Metric::Sharpe, Metric::Sortino];

    /// Wire and storage name.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Return => "return",
            Metric::Sharpe => "sharpe",
            Metric::Sortino => "sortino",
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Metric {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Metric::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("metric must be one of return, sharpe, sortino (got '{s}')"))
    }
}

/// Where a grading run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum GradingStatus {
    /// Tasks are pending or claimed.
    Running,
    /// Every task is closed and the run is (or was) the active snapshot.
    Done,
}

impl GradingStatus {
    /// Storage name.
    pub fn as_str(self) -> &'static str {
        match self {
            GradingStatus::Running => "running",
            GradingStatus::Done => "done",
        }
    }
}

impl fmt::Display for GradingStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for GradingStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "running" => Ok(GradingStatus::Running),
            "done" => Ok(GradingStatus::Done),
            other => Err(format!("unknown grading status '{other}'")),
        }
    }
}
