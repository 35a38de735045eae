//! The embedded demo universe (DESIGN §3, "Data").
//!
//! The binary carries the whole default data set, so `forecast` serves a
//! complete catalog with no download and no network:
//!
//! - the catalog (`data/catalog.csv`, 2,606 assets in 17 categories);
//! - four real daily histories (`data/prices/`): `CL=F`, `^GSPC`, `^IXIC`,
//!   `^VIX`, stored with [`DataSource::Real`];
//! - for every other asset a deterministic synthetic history, stored with
//!   [`DataSource::Synthetic`] so it is never mistaken for market data.
//!
//! The synthetic generator is self-contained (a hand-rolled SplitMix64
//! generator seeded from a fixed constant and an FNV-1a hash of the ticker,
//! and only `+ − × ÷ √` in the price recursion), so the data comes out
//! bit for bit the same on every run and does not change when a crate is
//! upgraded. All histories end on [`LAST_DATE`], a constant rather than
//! today, for the same reason.
//!
//! A few assets are deliberately odd so that the API's error paths run on
//! real catalog entries: [`INACTIVE_TICKERS`] are inactive (served as 404)
//! and [`SHORT_HISTORY_TICKERS`] have fewer than 300 rows (analysis → 422).

use std::str::FromStr;

use chrono::NaiveDate;

use crate::ingest::{parse_csv_reader, IngestError};
use forecast_domain::series::PriceSeries;
use forecast_domain::{Category, DataSource};
use forecast_store::{CatalogEntry, Database, StoreError};

/// The version recorded under [`SETTING_KEY`] after a complete load. Bump it
/// when the generator or the embedded files change, so callers that check
/// [`is_loaded`] reload the new data.
pub const DEMO_VERSION: &str = "1";

/// The setting that records a completed load.
pub const SETTING_KEY: &str = "demo_universe";

/// The last date of every synthetic history (a Friday, so weekday and
/// every-day calendars end on the same date).
pub const LAST_DATE: &str = "2026-10-30";

/// [`LAST_DATE`] as days since 1970-01-01 (checked by a test).
const LAST_DAY: i32 = 20_756;

/// Fixed seed of the synthetic generator, mixed with each ticker's hash.
const SEED: u64 = 0x00F0_2ECA_5700_2026;

/// Assets per [`Database::store_series`] call: each call is one
/// transaction, and 100 keeps a transaction to a few MB of blobs while
/// making the progress callback tick ~26 times over the catalog.
const BATCH: usize = 100;

/// Assets stored inactive. They are real symbols that were delisted or
/// renamed (Fiserv moved to `FI`, Willis Towers Watson to `WTW`, FTX Token
/// and Celsius collapsed, Homex and Banco Indusval left their exchanges),
/// which makes "inactive" plausible. None is a real-data ticker.
pub const INACTIVE_TICKERS: &[&str] = &[
    "FISV",     // US Stocks
    "WLTW",     // US Stocks
    "FTT-USD",  // Crypto
    "CEL-USD",  // Crypto
    "HOMEX.MX", // BMV
    "IDVL4.SA", // Brazilian Stocks
];

/// Assets generated with 120..290 rows, fewer than the engine's minimum of
/// 300. They are recent listings or releases (Solventum 2024, Kenvue 2023,
/// Veralto 2023, the Gallery and Fever cases) plus one younger coin, so the
/// short history is plausible; both calendars (weekdays, every day) occur.
pub const SHORT_HISTORY_TICKERS: &[&str] = &[
    "SOLV",        // US Stocks
    "KVUE",        // US Stocks
    "VLTO",        // US Stocks
    "CAKE-USD",    // Crypto
    "CS2-GALLERY", // CS2 Cases
    "CS2-FEVER",   // CS2 Cases
];

/// The embedded catalog.
const CATALOG_CSV: &str = include_str!("../../../data/catalog.csv");

/// Catalog columns, in file order (checked so a reordered file fails loudly
/// instead of shifting every field).
const CATALOG_COLUMNS: [&str; 11] = [
    "ticker", "name", "category", "exchange", "currency", "country", "sector", "industry",
    "website", "summary", "isin",
];

/// Real histories: ticker, file name (for messages), contents. The file
/// names avoid `^` and `=` for portability of the source tree.
const REAL_FILES: [(&str, &str, &str); 4] = [
    (
        "CL=F",
        "data/prices/CL_F.csv",
        include_str!("../../../data/prices/CL_F.csv"),
    ),
    (
        "^GSPC",
        "data/prices/IDX_GSPC.csv",
        include_str!("../../../data/prices/IDX_GSPC.csv"),
    ),
    (
        "^IXIC",
        "data/prices/IDX_IXIC.csv",
        include_str!("../../../data/prices/IDX_IXIC.csv"),
    ),
    (
        "^VIX",
        "data/prices/IDX_VIX.csv",
        include_str!("../../../data/prices/IDX_VIX.csv"),
    ),
];

/// Tickers with real embedded histories.
pub const REAL_TICKERS: [&str; 4] = ["CL=F", "^GSPC", "^IXIC", "^VIX"];

/// Why the demo universe could not be built or stored.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The embedded catalog is malformed (a build defect).
    #[error("embedded catalog line {line}: {message}")]
    Catalog {
        /// 1-based line of `data/catalog.csv` (the header is line 1).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// An embedded price file is malformed (a build defect).
    #[error("embedded price data: {0}")]
    RealData(#[from] IngestError),
}

/// What [`load`] stored.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DemoSummary {
    /// Catalog entries.
    pub assets: usize,
    /// Assets stored with real history.
    pub real: usize,
    /// Assets stored with synthetic history.
    pub synthetic: usize,
    /// Inactive assets.
    pub inactive: usize,
    /// Assets with fewer than 300 rows.
    pub short_history: usize,
    /// Price rows over all assets.
    pub price_rows: usize,
}

/// Parses the embedded catalog. Ids are the 1-based data row numbers (the
/// first asset is id 1), so they are stable as long as the file only grows
/// at the end. Every entry is non-premium; [`INACTIVE_TICKERS`] are inactive.
pub fn catalog() -> Result<Vec<CatalogEntry>, DemoError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(CATALOG_CSV.as_bytes());
    let mut entries = Vec::with_capacity(2_606);
    let mut tickers = std::collections::HashSet::new();
    for (index, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| DemoError::Catalog {
            line: e.position().map_or(0, |p| p.line() as usize),
            message: e.to_string(),
        })?;
        let line = rec.position().map_or(index + 1, |p| p.line() as usize);
        let err = |message: String| DemoError::Catalog { line, message };
        if index == 0 {
            let header: Vec<&str> = rec.iter().collect();
            if header != CATALOG_COLUMNS {
                return Err(err(format!("unexpected header {header:?}")));
            }
            continue;
        }
        if rec.len() != CATALOG_COLUMNS.len() {
            return Err(err(format!(
                "expected {} fields, found {}",
                CATALOG_COLUMNS.len(),
                rec.len()
            )));
        }
        let field = |i: usize| rec[i].trim().to_string();
        let ticker = field(0);
        if ticker.is_empty() {
            return Err(err("empty ticker".into()));
        }
        if !tickers.insert(ticker.clone()) {
            return Err(err(format!("duplicate ticker '{ticker}'")));
        }
        let category = Category::from_str(rec[2].trim()).map_err(|e| err(e.to_string()))?;
        entries.push(CatalogEntry {
            id: index as i64,
            is_active: !INACTIVE_TICKERS.contains(&ticker.as_str()),
            ticker,
            name: field(1),
            category,
            exchange: field(3),
            currency: field(4),
            country: field(5),
            sector: field(6),
            industry: field(7),
            website: field(8),
            summary: field(9),
            isin: field(10),
            is_premium: false,
        });
    }
    Ok(entries)
}

/// The four real histories, parsed with the same validation as
/// `forecast ingest` (close column, dates, closes > 0).
///
/// # Panics
///
/// Only if an embedded file is malformed, which is a build defect caught by
/// this module's tests; [`load`] uses the non-panicking path.
pub fn real_series() -> Vec<(&'static str, PriceSeries)> {
    try_real_series().expect("embedded price files are valid (checked by tests)")
}

fn try_real_series() -> Result<Vec<(&'static str, PriceSeries)>, DemoError> {
    REAL_FILES
        .iter()
        .map(|&(ticker, file, text)| {
            // parse_csv_reader returns rows sorted by date with unique dates.
            let rows = parse_csv_reader(file, text.as_bytes())?;
            let (dates, closes) = rows.into_iter().unzip();
            Ok((ticker, PriceSeries { dates, closes }))
        })
        .collect()
}

/// Generation parameters of a category.
struct Profile {
    /// Expected annual log growth outside stress regimes.
    drift: f64,
    /// Annual volatility of the diffusion part.
    vol: f64,
    /// Inclusive range of the history length in rows.
    rows: (usize, usize),
    /// Range of the first price.
    start: (f64, f64),
    /// Expected price jumps per year (news, earnings, game updates).
    jumps_per_year: f64,
    /// Expected bear regimes (sustained drawdowns) per year.
    bears_per_year: f64,
}

fn profile(category: Category) -> Profile {
    use Category::*;
    // (drift, vol) per category; emerging markets are more volatile.
    let (drift, vol) = match category {
        UsStocks | EuropeanStocks => (0.07, 0.25),
        UkStocks => (0.06, 0.24),
        JapaneseStocks => (0.05, 0.26),
        CanadianStocks | AustralianStocks => (0.06, 0.26),
        Bmv => (0.08, 0.30),
        BrazilianStocks => (0.10, 0.38),
        HkChinaStocks => (0.06, 0.34),
        IndianStocks => (0.11, 0.32),
        KoreanStocks => (0.07, 0.35),
        Etfs => (0.06, 0.16),
        Indices => (0.06, 0.18),
        Commodities => (0.03, 0.30),
        Forex => (0.0, 0.08),
        Crypto => (0.30, 0.80),
        Cs2Cases => (0.10, 0.60),
    };
    let rows = match category {
        Crypto => (1_200, 3_500),
        Cs2Cases => (600, 2_500),
        Etfs => (2_000, 5_500),
        Forex | Indices | Commodities => (3_000, 6_000),
        _ => (2_500, 6_000),
    };
    let start = match category {
        Forex => (0.5, 2.0),
        Indices => (500.0, 10_000.0),
        _ => (10.0, 500.0),
    };
    let (jumps_per_year, bears_per_year) = match category {
        Forex | Indices | Etfs => (1.0, 0.2),
        Crypto | Cs2Cases => (4.0, 0.35),
        _ => (2.0, 0.25),
    };
    Profile {
        drift,
        vol,
        rows,
        start,
        jumps_per_year,
        bears_per_year,
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): tiny, fast, statistically fine
/// for test data, and fully specified here so it can never change under us.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform integer in `lo..=hi`.
    fn int(&mut self, lo: usize, hi: usize) -> usize {
        lo + ((self.uniform() * (hi - lo + 1) as f64) as usize).min(hi - lo)
    }

    /// Approximately standard normal: the Irwin–Hall sum of 12 uniforms
    /// minus 6. It needs no `ln`/`cos` (whose last bits may differ between
    /// math libraries); its thin tails are fattened by the GARCH variance,
    /// the jumps and the regimes of the generator.
    fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.uniform()).sum::<f64>() - 6.0
    }
}

/// FNV-1a, 64 bit: a stable hash of the ticker (std's hasher is randomly
/// keyed per process and would make the data differ between runs).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// True for Monday..Friday. Day 0 (1970-01-01) was a Thursday.
fn is_weekday(day: i32) -> bool {
    (day + 3).rem_euclid(7) < 5
}

/// The last `n` trading days up to [`LAST_DAY`], oldest first.
fn calendar(n: usize, every_day: bool) -> Vec<i32> {
    let mut dates = Vec::with_capacity(n);
    let mut day = LAST_DAY;
    while dates.len() < n {
        if every_day || is_weekday(day) {
            dates.push(day);
        }
        day -= 1;
    }
    dates.reverse();
    dates
}

/// GARCH(1,1) reaction to the last squared shock. With [`GARCH_BETA`] it
/// sums to 0.98: typical of daily equity data, so volatility clusters for
/// weeks, while the long-run variance stays the profile's σ²/A.
const GARCH_ALPHA: f64 = 0.08;

/// GARCH(1,1) persistence of the variance.
const GARCH_BETA: f64 = 0.90;

/// Market state of the generator.
enum Regime {
    Normal,
    /// A sustained decline over `len` days: extra daily drift
    /// `-depth / len` (about `1 − e^(−depth)` lost) and more volatility.
    Bear {
        left: usize,
        len: usize,
        depth: f64,
    },
    /// The partial rebound after a bear regime (extra daily drift > 0).
    Recovery {
        left: usize,
        drift: f64,
    },
}

/// A deterministic synthetic daily history for `ticker`.
///
/// The same ticker and category always give the same bits; different
/// tickers give unrelated paths. Model per day, with A = 365 for Crypto and
/// CS2 Cases, else 252 weekdays: the simple return is drift/A + σ²/2 plus
/// the regime's drift plus √(GARCH variance)·ε, and with small probability
/// a jump of ~4 daily standard deviations. GARCH(1,1) gives volatility
/// clustering and fat tails; bear regimes (about one every 3–5 years, lasting 0.1–0.8 years,
/// shedding roughly 1 − e^(−depth) with depth ∝ σ) followed by partial
/// recoveries fill the deep drawdown buckets of the engine. Prices are
/// floored at 1/1000 of the start price, so they stay > 0 and finite.
pub fn synthetic_series(ticker: &str, category: Category) -> PriceSeries {
    let mut rng = SplitMix64(SEED ^ fnv1a(ticker.as_bytes()));
    let p = profile(category);
    let n = if SHORT_HISTORY_TICKERS.contains(&ticker) {
        rng.int(120, 290)
    } else {
        rng.int(p.rows.0, p.rows.1)
    };
    let every_day = category.trades_every_day();
    let dates = calendar(n, every_day);
    let periods = if every_day { 365.0 } else { 252.0 };

    // Per-asset parameters around the category's.
    let vol = p.vol * rng.range(0.75, 1.25);
    let drift = p.drift + p.vol * rng.range(-0.2, 0.2);
    let u = rng.uniform();
    // Skewed towards the low end, like real price levels.
    let start = p.start.0 + (p.start.1 - p.start.0) * u * u;
    let floor = start * 1e-3;

    let base_var = vol * vol / periods;
    let omega = (1.0 - GARCH_ALPHA - GARCH_BETA) * base_var;
    let jump_prob = p.jumps_per_year / periods;
    let jump_sd = 4.0 * base_var.sqrt();
    let bear_prob = p.bears_per_year / periods;

    let mut closes = Vec::with_capacity(n);
    let mut price = start;
    let mut var = base_var;
    let mut regime = Regime::Normal;
    for i in 0..n {
        if i > 0 {
            regime = match regime {
                Regime::Normal if rng.uniform() < bear_prob => {
                    let len = rng.int((0.1 * periods) as usize, (0.8 * periods) as usize);
                    let depth = (vol * rng.range(0.5, 1.5)).min(1.6);
                    Regime::Bear {
                        left: len,
                        len,
                        depth,
                    }
                }
                Regime::Normal => Regime::Normal,
                Regime::Bear {
                    left: 0,
                    len,
                    depth,
                } => {
                    let left = ((len as f64 * rng.range(1.0, 3.0)) as usize).max(1);
                    Regime::Recovery {
                        left,
                        drift: depth * rng.range(0.6, 1.0) / left as f64,
                    }
                }
                Regime::Bear { left, len, depth } => Regime::Bear {
                    left: left - 1,
                    len,
                    depth,
                },
                Regime::Recovery { left: 0, .. } => Regime::Normal,
                Regime::Recovery { left, drift } => Regime::Recovery {
                    left: left - 1,
                    drift,
                },
            };
            let (extra, vol_mult) = match regime {
                Regime::Normal => (0.0, 1.0),
                Regime::Bear { len, depth, .. } => (-depth / len as f64, 1.6),
                Regime::Recovery { drift, .. } => (drift, 1.2),
            };
            let z = rng.normal();
            let mut r = drift / periods + 0.5 * var + extra + vol_mult * var.sqrt() * z;
            if rng.uniform() < jump_prob {
                // Slightly more down-jumps than up-jumps, as in markets.
                r += jump_sd * (rng.normal() - 0.1);
            }
            let r = r.clamp(-0.9, 2.0);
            // GARCH(1,1) driven by the standardised diffusion shock only:
            // feeding it the regime-scaled move or the jumps would make the
            // recursion explosive (α·1.6² + β > 1) during bear regimes.
            var = omega + (GARCH_ALPHA * z * z + GARCH_BETA) * var;
            price = (price * (1.0 + r)).max(floor);
        }
        closes.push(price);
    }
    PriceSeries { dates, closes }
}

/// Stores the whole demo universe: upserts the catalog, then replaces every
/// asset's series (real ones as [`DataSource::Real`], the rest as
/// [`DataSource::Synthetic`]) in batches of [`BATCH`] assets, one
/// transaction each, calling `progress(done, total)` after each batch.
/// Finally records [`SETTING_KEY`] = [`DEMO_VERSION`].
///
/// Idempotent: loading again stores the same data (data versions are
/// bumped, which only invalidates caches). It also replaces any ingested
/// series of catalog assets — it is a reset to the demo state.
pub async fn load(
    db: &dyn Database,
    universe: Universe,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<DemoSummary, DemoError> {
    let mut entries = catalog()?;
    if universe == Universe::Small {
        shrink(&mut entries);
    }
    let real = try_real_series()?;
    db.upsert_catalog(&entries).await?;

    let total = entries.len();
    let mut summary = DemoSummary {
        assets: total,
        real: 0,
        synthetic: 0,
        inactive: entries.iter().filter(|e| !e.is_active).count(),
        short_history: 0,
        price_rows: 0,
    };
    let mut done = 0;
    // A small universe stores no prices for the assets it deactivated.
    let keep_prices = |e: &&CatalogEntry| {
        universe == Universe::Full || e.is_active || INACTIVE_TICKERS.contains(&e.ticker.as_str())
    };
    let entries: Vec<&CatalogEntry> = entries.iter().filter(keep_prices).collect();
    let total = entries.len();
    for chunk in entries.chunks(BATCH) {
        let batch: Vec<(i64, PriceSeries, DataSource)> = chunk
            .iter()
            .map(|e| match real.iter().find(|(t, _)| *t == e.ticker) {
                Some((_, s)) => (e.id, s.clone(), DataSource::Real),
                None => (
                    e.id,
                    synthetic_series(&e.ticker, e.category),
                    DataSource::Synthetic,
                ),
            })
            .collect();
        for (_, s, source) in &batch {
            match source {
                DataSource::Real => summary.real += 1,
                _ => summary.synthetic += 1,
            }
            if s.len() < 300 {
                summary.short_history += 1;
            }
            summary.price_rows += s.len();
        }
        let items: Vec<(i64, &PriceSeries, DataSource)> =
            batch.iter().map(|(id, s, src)| (*id, s, *src)).collect();
        db.store_series(&items).await?;
        done += chunk.len();
        progress(done, total);
    }
    db.set_setting(SETTING_KEY, DEMO_VERSION).await?;
    tracing::info!(?summary, "demo universe loaded");
    Ok(summary)
}

/// Which demo universe [`load`] stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Universe {
    /// The whole catalog: about 2,600 active assets.
    Full,
    /// About 55 active assets, for tests and quick trials (grading and
    /// whole-universe backtests take seconds, not minutes): each
    /// category's first [`SMALL_PER_CATEGORY`] active assets, plus
    /// [`SMALL_EXTRA_TICKERS`]. Every other catalog asset is stored
    /// inactive, without prices.
    Small,
}

/// Active assets per category in [`Universe::Small`].
pub const SMALL_PER_CATEGORY: usize = 3;

/// Assets [`Universe::Small`] keeps besides each category's first ones:
/// the examples of the API document, the real-data tickers and two short
/// histories (under 300 rows, which the engine refuses).
pub const SMALL_EXTRA_TICKERS: &[&str] = &[
    "AAPL",
    "MSFT",
    "^GSPC",
    "^IXIC",
    "^VIX",
    "CL=F",
    "BTC-USD",
    "EURUSD=X",
    "GC=F",
    "KVUE",
    "CS2-FEVER",
];

/// Deactivates every entry [`Universe::Small`] leaves out.
fn shrink(entries: &mut [CatalogEntry]) {
    let mut per_category: std::collections::HashMap<Category, usize> = Default::default();
    for e in entries.iter_mut().filter(|e| e.is_active) {
        let seen = per_category.entry(e.category).or_default();
        let first = *seen < SMALL_PER_CATEGORY;
        *seen += 1;
        e.is_active = first || SMALL_EXTRA_TICKERS.contains(&e.ticker.as_str());
    }
}

/// True when a complete load of the current [`DEMO_VERSION`] is recorded.
/// An older version reads as not loaded, so the caller reloads.
pub async fn is_loaded(db: &dyn Database) -> Result<bool, DemoError> {
    Ok(db.setting(SETTING_KEY).await?.as_deref() == Some(DEMO_VERSION))
}

/// [`LAST_DATE`] as a date.
pub fn last_date() -> NaiveDate {
    NaiveDate::parse_from_str(LAST_DATE, "%Y-%m-%d").expect("LAST_DATE is a valid date")
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use forecast_domain::series::to_days;

    #[test]
    fn catalog_has_every_asset_and_category() {
        let c = catalog().unwrap();
        assert_eq!(c.len(), 2_606);
        let cats: HashSet<Category> = c.iter().map(|e| e.category).collect();
        assert_eq!(cats.len(), 17);
        assert_eq!(c[0].id, 1);
        assert_eq!(c[0].ticker, "MMM");
        assert_eq!(c.last().unwrap().id, 2_606);
        assert!(c.iter().all(|e| !e.is_premium));
        // Quoted fields with commas survive.
        assert_eq!(c[0].country, "Saint Paul, Minnesota");
        let inactive: Vec<&str> = c
            .iter()
            .filter(|e| !e.is_active)
            .map(|e| e.ticker.as_str())
            .collect();
        let expected: HashSet<&str> = INACTIVE_TICKERS.iter().copied().collect();
        assert_eq!(inactive.len(), expected.len());
        assert_eq!(inactive.into_iter().collect::<HashSet<_>>(), expected);
    }

    #[test]
    fn special_tickers_exist_and_are_synthetic() {
        let c = catalog().unwrap();
        let find = |t: &str| c.iter().find(|e| e.ticker == t);
        for t in INACTIVE_TICKERS.iter().chain(SHORT_HISTORY_TICKERS) {
            assert!(find(t).is_some(), "{t} is in the catalog");
            assert!(!REAL_TICKERS.contains(t), "{t} is not a real-data ticker");
        }
        for t in REAL_TICKERS {
            assert!(find(t).is_some(), "{t} is in the catalog");
        }
        assert!(INACTIVE_TICKERS
            .iter()
            .all(|t| !SHORT_HISTORY_TICKERS.contains(t)));
        assert!(INACTIVE_TICKERS
            .iter()
            .any(|t| find(t).unwrap().category == Category::UsStocks));
        assert!(SHORT_HISTORY_TICKERS
            .iter()
            .any(|t| find(t).unwrap().category.trades_every_day()));
        assert_eq!(LAST_DAY, to_days(last_date()));
    }

    #[test]
    fn real_series_parse() {
        let real = real_series();
        assert_eq!(
            real.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
            REAL_TICKERS
        );
        for (t, s) in &real {
            assert!(s.len() > 1_000, "{t}: {}", s.len());
            assert!(s.dates.windows(2).all(|w| w[0] < w[1]), "{t}");
            assert!(s.closes.iter().all(|c| c.is_finite() && *c > 0.0), "{t}");
        }
        let gspc = &real[1].1;
        assert_eq!(gspc.len(), 5_031);
        assert_eq!(gspc.closes[0], 1228.099976);
    }

    #[test]
    fn synthetic_is_deterministic_and_per_ticker() {
        let a = synthetic_series("AAPL", Category::UsStocks);
        let b = synthetic_series("AAPL", Category::UsStocks);
        assert_eq!(a.dates, b.dates);
        let bits = |s: &PriceSeries| s.closes.iter().map(|c| c.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b));
        let c = synthetic_series("MSFT", Category::UsStocks);
        assert_ne!(bits(&a), bits(&c));
        assert_eq!(*a.dates.last().unwrap(), LAST_DAY);
        // Pinned values: the generator uses only correctly rounded IEEE-754
        // operations (no libm), so these should hold across platforms and
        // toolchains. If a change breaks them, the served demo data changed:
        // bump DEMO_VERSION and update the pins.
        let pins = [
            ("AAPL", Category::UsStocks, 5_372, 0x40a7_67e7_9969_8410_u64),
            ("BTC-USD", Category::Crypto, 2_477, 0x40e4_2226_3d4f_c98c),
            ("CS2-FEVER", Category::Cs2Cases, 240, 0x4065_5228_c0b8_bd99),
        ];
        for (ticker, category, len, last_bits) in pins {
            let s = synthetic_series(ticker, category);
            assert_eq!(s.len(), len, "{ticker}");
            assert_eq!(s.closes.last().unwrap().to_bits(), last_bits, "{ticker}");
        }
    }

    #[test]
    fn every_series_is_well_formed() {
        let c = catalog().unwrap();
        for e in &c {
            if REAL_TICKERS.contains(&e.ticker.as_str()) {
                continue;
            }
            let s = synthetic_series(&e.ticker, e.category);
            let t = &e.ticker;
            assert!(
                s.dates.windows(2).all(|w| w[0] < w[1]),
                "{t} dates increase"
            );
            assert!(
                s.closes.iter().all(|c| c.is_finite() && *c > 0.0),
                "{t} closes > 0"
            );
            assert_eq!(s.dates.len(), s.closes.len());
            assert_eq!(*s.dates.last().unwrap(), LAST_DAY, "{t} ends on LAST_DATE");
            assert_eq!(
                s.has_weekends(),
                e.category.trades_every_day(),
                "{t} calendar"
            );
            if SHORT_HISTORY_TICKERS.contains(&t.as_str()) {
                assert!((120..300).contains(&s.len()), "{t} short: {}", s.len());
            } else {
                assert!(s.len() >= 300, "{t} long: {}", s.len());
            }
        }
    }

    #[tokio::test]
    async fn load_is_idempotent_and_flags_sources() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("demo.db").display());
        let db = forecast_store::connect(&url).await.unwrap();
        assert!(!is_loaded(db.as_ref()).await.unwrap());

        let mut calls = Vec::new();
        let started = std::time::Instant::now();
        let first = load(db.as_ref(), Universe::Full, &mut |done, total| {
            calls.push((done, total))
        })
        .await
        .unwrap();
        eprintln!("demo load: {:?}, {first:?}", started.elapsed());
        assert!(is_loaded(db.as_ref()).await.unwrap());
        assert_eq!(calls.len(), 27);
        assert_eq!(calls.last(), Some(&(2_606, 2_606)));
        assert_eq!(first.assets, 2_606);
        assert_eq!(first.real, 4);
        assert_eq!(first.synthetic, 2_602);
        assert_eq!(first.inactive, INACTIVE_TICKERS.len());
        assert_eq!(first.short_history, SHORT_HISTORY_TICKERS.len());
        let counts = db.counts().await.unwrap();
        assert_eq!(counts.assets, 2_606);
        assert_eq!(counts.active_assets, 2_606 - INACTIVE_TICKERS.len() as i64);
        assert_eq!(counts.assets_with_prices, 2_606);
        assert_eq!(counts.price_rows, first.price_rows as i64);

        let btc_before = db.asset_by_ticker("BTC-USD").await.unwrap().unwrap();
        let btc_series = db.load_series(btc_before.id).await.unwrap();
        let second = load(db.as_ref(), Universe::Full, &mut |_, _| {})
            .await
            .unwrap();
        assert_eq!(second.price_rows, first.price_rows);
        assert_eq!(db.counts().await.unwrap(), counts);
        assert_eq!(db.load_series(btc_before.id).await.unwrap(), btc_series);

        for t in REAL_TICKERS {
            let a = db.asset_by_ticker(t).await.unwrap().unwrap();
            assert_eq!(a.data_source, DataSource::Real, "{t}");
        }
        let gspc = db.asset_by_ticker("^GSPC").await.unwrap().unwrap();
        assert_eq!(db.load_series(gspc.id).await.unwrap().unwrap().len(), 5_031);
        assert_eq!(btc_before.data_source, DataSource::Synthetic);
        let fisv = db.asset_by_ticker("FISV").await.unwrap().unwrap();
        assert!(!fisv.is_active);
        assert_eq!(fisv.data_source, DataSource::Synthetic);
        let active = db.list_active_assets(None).await.unwrap();
        assert!(active
            .iter()
            .all(|a| (a.data_source == DataSource::Real)
                == REAL_TICKERS.contains(&a.ticker.as_str())));
    }

    #[tokio::test]
    async fn small_universe_keeps_every_category_and_the_examples() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("small.db").display());
        let db = forecast_store::connect(&url).await.unwrap();
        let summary = load(db.as_ref(), Universe::Small, &mut |_, _| {})
            .await
            .unwrap();
        assert!(is_loaded(db.as_ref()).await.unwrap());
        let active = db.list_active_assets(None).await.unwrap();
        assert!((40..80).contains(&active.len()), "{} active", active.len());
        assert_eq!(summary.assets, 2_606, "the whole catalog is stored");
        assert_eq!(summary.inactive, 2_606 - active.len());
        for category in Category::ALL {
            let n = active.iter().filter(|a| a.category == category).count();
            assert!(n >= SMALL_PER_CATEGORY, "{category:?}: {n}");
        }
        for t in SMALL_EXTRA_TICKERS {
            let a = db.asset_by_ticker(t).await.unwrap().unwrap();
            assert!(a.is_active, "{t}");
            assert!(
                db.load_series(a.id).await.unwrap().is_some(),
                "{t} has prices"
            );
        }
        let left_out = db.asset_by_ticker("NVDA").await.unwrap().unwrap();
        assert!(!left_out.is_active);
        assert!(db.load_series(left_out.id).await.unwrap().is_none());
    }
}
