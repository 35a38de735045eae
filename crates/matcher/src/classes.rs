//! Asset classes and vehicles: words that name a market rather than a
//! company ("gold", "oil", "natural gas", "bitcoin"), and words that name
//! the kind of instrument wanted ("ETF", "index", "futures", "crypto").
//!
//! A class phrase typed on its own answers the class's instrument and its
//! best-known vehicles, in the order listed, ahead of any namesake (S-Oil
//! for "oil", a miner called "Gold…"), whose confidence is damped
//! ([`NAMESAKE_DAMPING`]). A vehicle word moves the candidates of its
//! category ahead of the rest: "S&P 500 ETF" answers SPY, IVV and VOO
//! before the index itself, "gold etf" GLD and IAU before the future.
//! Targets missing from the loaded catalog are skipped, so the table never
//! invents an asset.

/// Class phrase → its instrument first, then its best-known vehicles.
pub const CLASSES: &[(&str, &[&str])] = &[
    ("gold", &["GC=F", "GLD", "IAU"]),
    ("silver", &["SI=F", "SLV"]),
    ("oil", &["CL=F", "BZ=F", "USO"]),
    ("crude", &["CL=F", "BZ=F", "USO"]),
    ("crude oil", &["CL=F", "BZ=F", "USO"]),
    ("wti", &["CL=F", "USO"]),
    ("brent", &["BZ=F"]),
    ("natural gas", &["NG=F", "UNG"]),
    ("gas", &["NG=F", "UNG"]),
    ("copper", &["HG=F"]),
    ("platinum", &["PL=F"]),
    ("palladium", &["PA=F"]),
    ("wheat", &["ZW=F"]),
    ("corn", &["ZC=F"]),
    ("bitcoin", &["BTC-USD", "IBIT", "GBTC"]),
    ("btc", &["BTC-USD"]),
    ("ethereum", &["ETH-USD", "ETHA"]),
    ("eth", &["ETH-USD"]),
    ("solana", &["SOL-USD"]),
    ("sol", &["SOL-USD"]),
    ("dogecoin", &["DOGE-USD"]),
    ("doge", &["DOGE-USD"]),
    ("cardano", &["ADA-USD"]),
    ("xrp", &["XRP-USD"]),
    ("litecoin", &["LTC-USD"]),
];

/// Confidence of a class's targets, in their order (later targets reuse
/// the last value).
pub const CLASS_TIERS: &[f64] = &[0.96, 0.94, 0.93];

/// What a namesake keeps of its confidence when the text is a class
/// phrase.
pub const NAMESAKE_DAMPING: f64 = 0.8;

/// A kind of instrument a query can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vehicle {
    /// "ETF", "fund", "tracker": the catalog's `ETFs`.
    Fund,
    /// "index": `Indices`.
    Index,
    /// "futures", "future", "contract": `Commodities`.
    Future,
    /// "crypto", "token": `Crypto`.
    Coin,
}

impl Vehicle {
    /// The catalog category of this kind.
    pub fn category(self) -> &'static str {
        match self {
            Vehicle::Fund => "ETFs",
            Vehicle::Index => "Indices",
            Vehicle::Future => "Commodities",
            Vehicle::Coin => "Crypto",
        }
    }
}

/// The vehicle a folded word names, if any.
pub fn vehicle_word(word: &str) -> Option<Vehicle> {
    Some(match word {
        "etf" | "etfs" | "fund" | "funds" | "tracker" | "trackers" => Vehicle::Fund,
        "index" | "indices" | "indexes" => Vehicle::Index,
        "futures" | "future" | "contract" | "contracts" => Vehicle::Future,
        // Not "coin": gold coins are gold.
        "crypto" | "token" | "tokens" | "cryptocurrency" | "cryptocurrencies" => Vehicle::Coin,
        _ => return None,
    })
}

/// How far the candidates of the wanted category are lifted: towards 1 by
/// this share of what is left …
pub const VEHICLE_LIFT: f64 = 0.3;
/// … and what the others keep.
pub const VEHICLE_DAMPING: f64 = 0.8;
